# The caller's outer-marker search for ``JsonValueScanner.scan_to_marker``:
# returns the offset of the first marker at or after ``pos`` with
# ``at_marker[0]`` set, or else (``at_marker[0]`` clear) where a partial
# marker that may still complete starts; ``size`` when none or when ``final``.
ctypedef Py_ssize_t (*marker_limit_fn)(object owner, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                                       bint *at_marker) except -1


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
    cdef Py_ssize_t scan_to_marker(self, str text, Py_ssize_t pos, Py_ssize_t size, object owner,
                                   marker_limit_fn limit_of, bint final, bint *at_marker) except -1
