from cpython.unicode cimport PyUnicode_Substring


cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object)


cdef tuple coerce_one(str raw, object schema_type, bint quoted_numbers=*)
cdef tuple schema_types_c(object schema, int depth)
cdef int value_kind(tuple types) noexcept
cdef str held_value_json(str text, Py_ssize_t a, Py_ssize_t b, object types, bint quoted_numbers=*)
cdef bint is_json(str text) except -1


cdef inline str span(str text, Py_ssize_t a, Py_ssize_t b):
    """``text[a:b]``, the text itself when that is all of it."""
    if a == 0 and b == PyUnicode_GET_LENGTH(text):
        return text
    return PyUnicode_Substring(text, a, b)
