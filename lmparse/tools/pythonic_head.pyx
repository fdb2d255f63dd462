"""The head of a pythonic call list: ``[ NAME (`` with NAME an offered tool (see ``lmparse.tools.pythonic``)."""
from cpython.unicode cimport PyUnicode_Substring

from lmparse.tools.json_bare cimport _name_prefix, _skip_ws

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = []


cdef tuple pythonic_head(str text, Py_ssize_t size, bint final, object allowed, bint bracket):
    """The head of a call list at the start of ``text``: ``(verdict, pos, name)``.

    ``WS [ WS NAME WS (`` (without ``[`` when not ``bracket``) with NAME an offered tool: HEAD_CALL, ``pos`` after
    the ``(``. HEAD_REJECTED: ``text[:pos]`` is content (the first character
    that cannot continue the head, or the end of the output). Whitespace runs
    are bounded and NAME must stay an offered name's prefix, so an undecided
    head is short. ``allowed`` None (no name filter: the parser's allowed names
    were opened, as the replay server and vLLM's replace mode do) takes any
    identifier of at most MAX_OPEN_NAME characters.
    """
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t p = 0, s, e, best, longest = 0
    cdef bint over, whole
    cdef bint any_name = allowed is None
    if any_name:
        longest = MAX_OPEN_NAME
    else:
        for name in allowed:
            if type(name) is str and PyUnicode_GET_LENGTH(name) > longest:
                longest = PyUnicode_GET_LENGTH(name)
    p = _skip_ws(kind, data, p, size, &over)
    if over:
        return (HEAD_REJECTED, p, None)
    if p < size:
        if bracket:
            if PyUnicode_READ(kind, data, p) != u'[':
                return (HEAD_REJECTED, p, None)
            p = _skip_ws(kind, data, p + 1, size, &over)
            if over:
                return (HEAD_REJECTED, p, None)
        s = e = p
        while e < size and e - s <= longest and _name_char(PyUnicode_READ(kind, data, e)):
            e += 1
        if any_name:
            best = e - s if e - s <= longest else longest
            whole = 0 < best == e - s
        else:
            best = _name_prefix(kind, data, s, e, allowed, &whole)
        if best < e - s:
            return (HEAD_REJECTED, s + best, None)
        if e < size:
            if not whole:
                return (HEAD_REJECTED, e, None)
            p = _skip_ws(kind, data, e, size, &over)
            if over:
                return (HEAD_REJECTED, p, None)
            if p < size:
                if PyUnicode_READ(kind, data, p) != u'(':
                    return (HEAD_REJECTED, p, None)
                return (HEAD_CALL, p + 1, PyUnicode_Substring(text, s, e))
    if final:
        return (HEAD_REJECTED, size, None)
    return (HEAD_UNDECIDED, 0, None)
