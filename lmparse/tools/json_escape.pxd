cdef str json_string_body(str text, Py_ssize_t start, Py_ssize_t end)
cdef str json_quoted(str text)
cdef Py_ssize_t next_escape1(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) noexcept nogil
