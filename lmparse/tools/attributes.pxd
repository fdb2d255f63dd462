"""Header attributes and tag-end helpers shared by the tag families (``dsml``, ``ns_elements``)."""
from cpython.unicode cimport PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.base cimport marker_match


cdef extern from "Python.h":
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)


cdef inline Py_ssize_t _skip_space(int kind, void *data, Py_ssize_t pos, Py_ssize_t size) noexcept:
    while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
        pos += 1
    return pos


cdef inline Py_ssize_t _attribute(str h, int kind, void *data, Py_ssize_t a, Py_ssize_t b, str attr,
                           Py_ssize_t *value_end) noexcept:
    """Value span of the attribute ``attr`` in the header ``h[a:b]``, read pair by pair.

    Returns the value start (-1 when absent); ``value_end[0]`` its end. Values
    are ``"..."``, ``'...'`` (to the closing quote, or the header end) or bare
    (to the next space); a name without ``=`` has no value.
    """
    cdef Py_ssize_t pos = a, name_start, name_end, vs, ve, n = PyUnicode_GET_LENGTH(attr)
    cdef Py_UCS4 ch, quote
    while True:
        pos = _skip_space(kind, data, pos, b)
        if pos >= b:
            return -1
        name_start = pos
        while pos < b:
            ch = PyUnicode_READ(kind, data, pos)
            if ch == u'=' or Py_UNICODE_ISSPACE(ch):
                break
            pos += 1
        name_end = pos
        pos = _skip_space(kind, data, pos, b)
        vs = ve = -1
        if pos < b and PyUnicode_READ(kind, data, pos) == u'=':
            pos = _skip_space(kind, data, pos + 1, b)
            quote = PyUnicode_READ(kind, data, pos) if pos < b else 0
            if quote == u'"' or quote == u"'":
                vs = ve = pos + 1
                while ve < b and PyUnicode_READ(kind, data, ve) != quote:
                    ve += 1
                pos = ve + 1
            else:
                vs = ve = pos
                while ve < b and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, ve)):
                    ve += 1
                pos = ve
        if (vs >= 0 and name_end - name_start == n
                and marker_match(kind, data, name_start, name_end, attr) == 2):
            value_end[0] = ve
            return vs


cdef inline str _attribute_text(str h, Py_ssize_t a, Py_ssize_t b, tuple entities):
    """``h[a:b]`` with the declared character entities replaced, in declared order."""
    cdef str s = PyUnicode_Substring(h, a, b)
    if entities and PyUnicode_FindChar(s, u'&', 0, b - a, 1) >= 0:
        for entity, char in entities:
            s = s.replace(entity, char)
    return s


cdef inline Py_ssize_t _partial_end(str text, int kind, void *data, Py_ssize_t pos, Py_ssize_t size, str marker) noexcept:
    """Where a proper prefix of ``marker`` ending the text starts (``size`` when none)."""
    cdef Py_ssize_t at = size - PyUnicode_GET_LENGTH(marker) + 1
    if at < pos:
        at = pos
    while at < size:
        if marker_match(kind, data, at, size, marker) == 1:
            return at
        at += 1
    return size
