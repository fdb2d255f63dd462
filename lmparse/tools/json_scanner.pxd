cdef class JsonValueScanner:
    cdef public bint complete
    cdef public bint started
    cdef int _mode
    cdef Py_ssize_t _depth
    cdef bint _in_string
    cdef bint _escape_next

    cdef void reset_c(self)
    cdef Py_ssize_t feed_c(self, str text, Py_ssize_t pos, Py_ssize_t end, bint stop_after_string)
    cdef void finish_c(self)
