"""Text helpers of the XML-like family's driver: short scans in place over ``str`` spans."""
from cpython.unicode cimport PyUnicode_FindChar

from lmparse.tools.json_escape cimport json_string_body
from lmparse.tools.xml_values cimport span


cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil


cdef inline Py_ssize_t _after_newline(int kind, void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """``a`` past one leading ``\\r\\n`` or ``\\n`` of ``text[a:b]``."""
    if b - a >= 2 and PyUnicode_READ(kind, data, a) == u'\r' and PyUnicode_READ(kind, data, a + 1) == u'\n':
        return a + 2
    if b - a >= 1 and PyUnicode_READ(kind, data, a) == u'\n':
        return a + 1
    return a


cdef inline Py_ssize_t _before_newline(int kind, void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """``b`` before one trailing ``\\r\\n`` or ``\\n`` of ``text[a:b]``."""
    if b - a >= 2 and PyUnicode_READ(kind, data, b - 2) == u'\r' and PyUnicode_READ(kind, data, b - 1) == u'\n':
        return b - 2
    if b - a >= 1 and PyUnicode_READ(kind, data, b - 1) == u'\n':
        return b - 1
    return b
cdef inline Py_ssize_t _find_char(str text, Py_ssize_t pos, Py_ssize_t size, Py_UCS4 ch) except -2:
    """``text.find(ch, pos, size)``; short spans (a token or so) are scanned in place."""
    cdef int kind
    cdef void *data
    if size - pos > 16:
        return PyUnicode_FindChar(text, ch, pos, size, 1)
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    while pos < size:
        if PyUnicode_READ(kind, data, pos) == ch:
            return pos
        pos += 1
    return -1


cdef inline Py_ssize_t _match_len(str text, Py_ssize_t pos, Py_ssize_t size, str tag) noexcept:
    """How many leading characters of ``tag`` ``text[pos:size]`` matches."""
    cdef int kind = PyUnicode_KIND(text), tkind = PyUnicode_KIND(tag)
    cdef void *data = PyUnicode_DATA(text)
    cdef void *tdata = PyUnicode_DATA(tag)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(tag), i = 0
    if n > size - pos:
        n = size - pos
    while i < n and PyUnicode_READ(kind, data, pos + i) == PyUnicode_READ(tkind, tdata, i):
        i += 1
    return i


cdef inline int _one_of_at(str text, Py_ssize_t p, Py_ssize_t size, bint final, object tag_a, object tag_b) noexcept:
    """1 ``tag_a`` or ``tag_b`` (None: absent) starts at ``p``, -1 the text ends inside one, 0 neither."""
    cdef Py_ssize_t k
    for tag in (tag_a, tag_b):
        if tag is None:
            continue
        k = _match_len(text, p, size, <str>tag)
        if k == PyUnicode_GET_LENGTH(tag):
            return 1
        if p + k == size and not final:
            return -1
    return 0


cdef inline bint _ends_with_prefix(str text, Py_ssize_t at, Py_ssize_t size, tuple prefixes) noexcept:
    """``text[at:size]`` is one of the declared ``prefixes``."""
    for prefix in prefixes:
        if PyUnicode_GET_LENGTH(prefix) == size - at and _match_len(text, at, size, <str>prefix) == size - at:
            return True
    return False


# Whitespace allowed between a value's structural function_close and what follows it.
cdef enum:
    _FC_SPACE = 64


cdef inline str _json_body(str text, Py_ssize_t a, Py_ssize_t b):
    """``json_string_body``; a short span needing no escape (a streamed token) is checked in place."""
    cdef int kind
    cdef void *data
    cdef Py_ssize_t i
    cdef Py_UCS4 ch
    if b - a > 8:
        return json_string_body(text, a, b)
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    for i in range(a, b):
        ch = PyUnicode_READ(kind, data, i)
        if ch < 0x20 or ch == u'"' or ch == u'\\':
            return json_string_body(text, a, b)
    return span(text, a, b)


cdef inline bint _null_scan(str text, Py_ssize_t a, Py_ssize_t b, int *state_p, int *mask_p) noexcept:
    """Whether a value, with ``text[a:b]`` more of it, may still be the literal null / None
    (either case, whitespace around). ``state_p``: characters of the word seen (5: and
    whitespace after it); ``mask_p``: which words still fit (1 null, 2 none). Only the
    new text is scanned; on False the value is a string and the state is left behind."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef int state = state_p[0], mask = mask_p[0]
    cdef const char *null_word = b'null'
    cdef const char *none_word = b'none'
    cdef Py_UCS4 ch
    cdef Py_ssize_t i
    for i in range(a, b):
        ch = PyUnicode_READ(kind, data, i)
        if Py_UNICODE_ISSPACE(ch):
            if state == 4:
                state = 5  # trailing whitespace
            elif state != 0 and state != 5:
                return False
            continue
        if state >= 4:
            return False
        if u'A' <= ch <= u'Z':
            ch = <Py_UCS4>(<unsigned int>ch + 32)
        if ch != <Py_UCS4><unsigned char>null_word[state]:
            mask &= ~1
        if ch != <Py_UCS4><unsigned char>none_word[state]:
            mask &= ~2
        if not mask:
            return False
        state += 1
        state_p[0] = state
        mask_p[0] = mask
    state_p[0] = state
    mask_p[0] = mask
    return True


cdef inline int _value_end_at(str text, Py_ssize_t at, Py_ssize_t size, bint final, tuple end_tags, str fc,
                              object close_tag, str function_open) noexcept:
    """A value end tag at ``at``: one of ``end_tags``, or ``fc`` (function_close) followed,
    after at most _FC_SPACE whitespace characters, by ``close_tag``, ``function_open``
    or the end of the output. 1 yes, 0 no, -1 the text ends before that is known."""
    cdef Py_ssize_t k, p, limit
    cdef bint partial = False
    if end_tags is not None:
        for tag in end_tags:
            k = _match_len(text, at, size, <str>tag)
            if k == PyUnicode_GET_LENGTH(tag):
                return 1
            partial |= at + k == size
    if fc is not None:
        k = _match_len(text, at, size, fc)
        if k == PyUnicode_GET_LENGTH(fc):
            p = at + k
            limit = p + _FC_SPACE
            while p < size and p < limit and Py_UNICODE_ISSPACE(PyUnicode_READ(
                    PyUnicode_KIND(text), PyUnicode_DATA(text), p)):
                p += 1
            if p >= limit:
                return 0
            if p == size:
                return 1 if final else -1
            return _one_of_at(text, p, size, final, close_tag, function_open)
        partial |= at + k == size
    return -1 if partial and not final else 0
