# What ends an XML-family argument value (the rule in xml_parser's module docs), and the
# replace-mode rule that ends a value at the next argument's opener when its close tag is missing.
from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.xml_grammar cimport ValueEnds
from lmparse.tools.xml_text cimport _drifted_close, _end_at, _ends_with_prefix, _match_len

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

# What starts at a value end marker's first character inside a value (_value_end_at).
cdef enum:
    VE_MORE = -1   # the text ends before that is known: hold it back
    VE_TEXT = 0    # value text
    VE_CLOSE = 1   # the value's close tag, confirmed
    VE_END = 2     # a confirmed function_close or block close tag (the close tag is missing)

# A longer text after the opener is not a parameter name: the opener is value text.
cdef enum:
    _ARG_NAME_MAX = 128


cdef inline int _value_end_at(ValueEnds e, str text, Py_ssize_t at, Py_ssize_t size, bint final, bint hold_all,
                              tuple prefixes, Py_ssize_t *length) noexcept:
    """What starts at ``at`` inside a value (VE_*, the rule in the module docs); ``length``: the close tag's."""
    cdef bint partial = False
    cdef int r
    length[0] = PyUnicode_GET_LENGTH(e.close) if e.close is not None else 0
    if not e.confirm_close and _match_len(text, at, size, e.close) == PyUnicode_GET_LENGTH(e.close):
        return VE_CLOSE
    r = _end_at(text, at, size, final, e.close, e.block, e.close_follow, True, &partial)
    if r == 0 and e.drift:
        r = _drifted_close(text, at, size, final, e.close, e.function_close, e.block, e.close_follow, length)
    if r != 0:
        return VE_CLOSE if r > 0 else VE_MORE
    if partial and not hold_all:
        partial = _ends_with_prefix(text, at, size, prefixes)
    r = _end_at(text, at, size, final, e.function_close, e.block, e.fc_follow, False, &partial)
    if r == 0:
        r = _end_at(text, at, size, final, e.block, None, e.block_follow, False, &partial)
    if r != 0:
        return VE_END if r > 0 else VE_MORE
    return VE_MORE if partial and not final else VE_TEXT


cdef inline int _next_arg_at(str text, Py_ssize_t at, Py_ssize_t size, bint final, str arg_open, str name_end,
                             object props, list given) except -2:
    """Whether the opener at ``at`` (a line start of a value) is the next argument's, the value's close
    tag missing: ``arg_open`` NAME ``name_end`` and a newline, NAME a parameter the called tool declares
    (``props``) that the call has not given (``given``, the current one included). A value that quotes
    any other opener, or this one not on a line of its own, keeps it as text. 1 yes, -1 not known
    yet, 0 no (value text)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(arg_open), k = _match_len(text, at, size, arg_open)
    cdef Py_ssize_t a = at + n, limit, e, p
    cdef Py_UCS4 ch
    if k < n:
        return -1 if at + k == size and not final else 0
    limit = a + _ARG_NAME_MAX + PyUnicode_GET_LENGTH(name_end)
    e = PyUnicode_Find(text, name_end, a, size if size < limit else limit, 1)
    if e < 0:
        if final or size >= limit or PyUnicode_FindChar(text, u'\n', a, size, 1) >= 0:
            return 0
        return -1
    name = PyUnicode_Substring(text, a, e)
    if name not in props or name in given:
        return 0
    p = e + PyUnicode_GET_LENGTH(name_end)
    if p < size and PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), p) == u'\r':
        p += 1
    if p == size:
        return 0 if final else -1
    ch = PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), p)
    return 1 if ch == u'\n' else 0
