"""Text a grammar holds across chunks until a terminator arrives.

One growable buffer of PEP 393 characters (the narrowest kind that fits): an
unterminated name, key or header, or a value held for conversion, stays out of
the router's buffer, so each chunk appends only its new text and the whole is
built once when taken. Every family uses it (JSON envelope, sections, XML, DSML).
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_Substring
from libc.string cimport memcpy


cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    void PyUnicode_WRITE(int kind, void *data, Py_ssize_t index, Py_UCS4 value) nogil
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)


# A buffer larger than this (bytes) is freed after its value, not kept for
# reuse: a parser keeps no copy of text it has already converted.
cdef Py_ssize_t _HELD_KEEP = 1 << 10


cdef int held_append(HeldText *h, str text, Py_ssize_t a, Py_ssize_t b) except -1:
    """Append ``text[a:b]``."""
    cdef Py_ssize_t n = b - a, need = h.len + n, cap, i
    cdef int kind = PyUnicode_KIND(text), hkind = h.kind
    cdef void *data = PyUnicode_DATA(text)
    cdef char *grown
    if n <= 0:
        return 0
    if h.len == 0 and kind < hkind:  # a new value: narrow the empty buffer again
        h.cap = h.cap * hkind // kind
        h.kind = hkind = kind
    if kind > hkind or need > h.cap:
        cap = h.cap if h.cap >= 64 else 64
        while cap < need:
            cap *= 2
        if kind > hkind:  # a wider character: convert what is held
            grown = <char *>PyMem_Malloc(cap * kind)
            if grown is NULL:
                raise MemoryError()
            for i in range(h.len):
                PyUnicode_WRITE(kind, grown, i, PyUnicode_READ(hkind, h.data, i))
            PyMem_Free(h.data)
            h.kind = hkind = kind
        else:
            grown = <char *>PyMem_Realloc(h.data, cap * hkind)
            if grown is NULL:
                raise MemoryError()
        h.data = grown
        h.cap = cap
    if kind == hkind:
        if n == 1:
            PyUnicode_WRITE(kind, h.data, h.len, PyUnicode_READ(kind, data, a))
        else:
            memcpy(h.data + h.len * kind, <char *>data + a * kind, n * kind)
    else:
        for i in range(n):
            PyUnicode_WRITE(hkind, h.data, h.len + i, PyUnicode_READ(kind, data, a + i))
    h.len = need
    return 0


cdef str held_take(HeldText *h, Py_ssize_t a, Py_ssize_t b):
    """``held[a:b]`` as a str; the buffer is emptied."""
    if b <= a:
        h.len = 0
        return ''
    cdef str out = PyUnicode_FromKindAndData(h.kind, h.data + a * h.kind, b - a)
    h.len = 0
    if h.cap * h.kind > _HELD_KEEP:
        PyMem_Free(h.data)
        h.data = NULL
        h.cap = 0
        h.kind = 1
    return out


cdef void held_free(HeldText *h) noexcept:
    PyMem_Free(h.data)
    h.data = NULL
    h.len = h.cap = 0
    h.kind = 1


cdef str held_take_with(HeldText *h, str text, Py_ssize_t a, Py_ssize_t b):
    """What is held followed by ``text[a:b]``, as one str; the buffer is emptied."""
    if h.len == 0:
        if a == 0 and b == PyUnicode_GET_LENGTH(text):
            return text
        return PyUnicode_Substring(text, a, b)
    held_append(h, text, a, b)
    return held_take(h, 0, h.len)
