cdef str json_string_body(str text, Py_ssize_t start, Py_ssize_t end)
cdef str json_quoted(str text)
