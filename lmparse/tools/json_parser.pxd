from lmparse.tools.base cimport ToolParser
from lmparse.tools.json_scanner cimport JsonValueScanner


cdef class JsonToolParser(ToolParser):
    cdef int _phase
    cdef public object _json_key
    cdef public bint _arguments_seen
    cdef public JsonValueScanner _value_scanner
    cdef str _name_field
    cdef str _argument_field
    cdef Py_ssize_t _str_resume
    cdef bint _str_escape

    cdef Py_ssize_t string_end(self, str text, Py_ssize_t open_pos, Py_ssize_t size)
    cdef Py_ssize_t scan_value(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1
    cdef int finish_envelope(self, list deltas) except -1
