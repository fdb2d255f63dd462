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
cdef inline int _check_pos(str payload, Py_ssize_t pos) except -1:
    if not 0 <= pos <= PyUnicode_GET_LENGTH(payload):
        raise ValueError(f'position {pos} is outside the payload (length {PyUnicode_GET_LENGTH(payload)})')
    return 0


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


# Whitespace a value end's lookahead reads before the marker that confirms it.
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


cdef inline int _follows(str text, Py_ssize_t p, Py_ssize_t size, bint final, object block, tuple follow,
                         bint space_confirms) noexcept:
    """Whether what starts at ``p`` confirms the value end just before it: at most
    _FC_SPACE whitespace characters, then ``block`` (None: none), one of ``follow``
    or the end of the output. 1 yes, 0 no, -1 the text ends before that is known.
    Whitespace up to the limit confirms when ``space_confirms``."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t limit = p + _FC_SPACE, k
    cdef bint partial = False
    while p < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, p)):
        if p == limit:  # more whitespace than the lookahead reads
            return 1 if space_confirms else 0
        p += 1
    if p == size:
        return 1 if final else -1
    for tag in follow:
        k = _match_len(text, p, size, <str>tag)
        if k == PyUnicode_GET_LENGTH(tag):
            return 1
        partial |= p + k == size
    if block is not None:
        k = _match_len(text, p, size, <str>block)
        if k == PyUnicode_GET_LENGTH(block):
            return 1
        partial |= p + k == size
    return -1 if partial and not final else 0


cdef inline int _end_at(str text, Py_ssize_t at, Py_ssize_t size, bint final, object tag, object block,
                        tuple follow, bint space_confirms, bint *partial) noexcept:
    """``tag`` (None: none) at ``at``, confirmed by what follows it (``_follows``): 1 yes,
    -1 not known yet, 0 no; ``partial`` is set when the text ends inside ``tag``."""
    if tag is None:
        return 0
    cdef Py_ssize_t k = _match_len(text, at, size, <str>tag)
    if k == PyUnicode_GET_LENGTH(tag):
        return _follows(text, at + k, size, final, block, follow, space_confirms)
    if at + k == size:
        partial[0] = True
    return 0


# Name characters a drifted close tag may carry after the close tag's stem.
cdef enum:
    _DRIFT_MAX = 32


cdef inline bint _drift_char(Py_UCS4 ch) noexcept:
    return u'a' <= ch <= u'z' or u'A' <= ch <= u'Z' or u'0' <= ch <= u'9' or ch == u'_' or ch == u'-'


cdef inline int _drifted_close(str text, Py_ssize_t at, Py_ssize_t size, bint final, str close,
                               object function_close, object block, tuple follow, Py_ssize_t *length) noexcept:
    """A close tag the model let drift at ``at`` ('</parameter1>', '</parameter_x>', a bare
    '</parameter'): the close tag without its '>', up to _DRIFT_MAX name characters, an
    optional '>', confirmed by ``block`` or one of ``follow`` as the close tag is (no whitespace run alone
    confirms it). 1 yes (``length`` set), -1 not known yet, 0 no. SGLang's qwen3_coder
    detector drops such a marker (test_qwen3_coder_detector.py, MalformedParameterEnd)."""
    cdef Py_ssize_t stem = PyUnicode_GET_LENGTH(close) - 1, k, p, names
    cdef int kind, r
    cdef void *data
    k = _match_len(text, at, size, close)
    if k != stem:  # not the stem (a partial one is held by the close tag's rule), or the exact close tag
        return 0
    for tag in (function_close, block):  # a marker that starts like the stem is that marker
        if tag is not None and _match_len(text, at, size, <str>tag) == PyUnicode_GET_LENGTH(tag):
            return 0
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    p = at + stem
    names = 0
    while p < size and _drift_char(PyUnicode_READ(kind, data, p)):
        if names == _DRIFT_MAX:
            return 0
        p += 1
        names += 1
    if p == size:
        if not final:
            return -1
        length[0] = p - at  # the end of the output confirms it
        return 1
    if PyUnicode_READ(kind, data, p) == u'>':
        p += 1
    r = _follows(text, p, size, final, block, follow, False)
    if r > 0:
        length[0] = p - at
    return r


cdef inline Py_ssize_t _find_any(str text, Py_ssize_t pos, Py_ssize_t size, str chars) noexcept:
    """The first offset from ``pos`` of any of ``chars``, or -1."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    while pos < size:
        if PyUnicode_FindChar(chars, PyUnicode_READ(kind, data, pos), 0, PyUnicode_GET_LENGTH(chars), 1) >= 0:
            return pos
        pos += 1
    return -1


cdef inline bint _held_lead(int kind, void *data, Py_ssize_t i, bint cdata) noexcept:
    """Whether a value whose first non-space character is at ``i`` is held whole: quoted, or maybe one CDATA section."""
    cdef Py_UCS4 ch = PyUnicode_READ(kind, data, i)
    return ch == u'"' or (cdata and ch == u'<')


cdef inline void _cdata_inner(str text, Py_ssize_t *a, Py_ssize_t *b, bint cdata) noexcept:
    """With ``cdata``, narrow ``text[a:b]`` to the inner text when it is one whole ``<![CDATA[...]]>`` section."""
    if (cdata and b[0] - a[0] >= 12 and _match_len(text, a[0], b[0], '<![CDATA[') == 9
            and _match_len(text, b[0] - 3, b[0], ']]>') == 3):
        a[0] += 9
        b[0] -= 3
