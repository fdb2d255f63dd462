# Inline scans for the characters a JSON string must escape (json_chars.h).

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2

cdef extern from "json_chars.h":
    # First index >= i of a control character, '"' or '\\' in s[:n] (n when none).
    Py_ssize_t lmp_next_special1(const Py_UCS1 *s, Py_ssize_t i, Py_ssize_t n) noexcept nogil
    Py_ssize_t lmp_next_special2(const Py_UCS2 *s, Py_ssize_t i, Py_ssize_t n) noexcept nogil
    Py_ssize_t lmp_next_special4(const Py_UCS4 *s, Py_ssize_t i, Py_ssize_t n) noexcept nogil
