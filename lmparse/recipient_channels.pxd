# The recipient-channel family (see recipient_channels.pyx): cimported by the response router.
from lmparse.tools.base cimport ToolParser
from lmparse.tools.held_text cimport HeldText


cdef class ChannelGrammar:
    cdef readonly str start, message
    cdef readonly object channel
    cdef readonly tuple ends, in_body_headers
    cdef readonly dict recipients, channels
    cdef readonly object no_recipient, unframed
    cdef readonly object invoke, invoke_close
    cdef readonly str parameter, parameter_close
    cdef readonly bint optional_parameter_close, value_newlines, keep_string_parameters
    cdef readonly object values
    cdef dict rk, ck
    cdef int k_no_recipient, k_unframed
    cdef bint schema_values


cdef class ChannelToolParser(ToolParser):
    pass


cdef class ChannelRouter:
    cdef ChannelGrammar g
    cdef ToolParser tool
    cdef int state, kind, phase
    cdef bint last_ws, in_call, framed
    # a string value streams (its opening quote is out); its leading newline is still to drop; a newline is held
    cdef bint streaming, lead, nl_held
    cdef str opening  # a streaming value's key and opening quote, sent with its first text (None: sent)
    cdef Py_ssize_t skip, params
    cdef HeldText value
    cdef object key, props
    cdef list calls

    cdef Py_ssize_t feed(self, str p, bint final, list out) except -1
    cdef int _flush(self, list out) except -1
    cdef int _opener(self, str p, int kind, void *data, Py_ssize_t at, Py_ssize_t n, bint final) except -1
    cdef Py_ssize_t _header_end(self, str p, Py_ssize_t at, Py_ssize_t n, bint final) except -5
    cdef Py_ssize_t _boundary(self, str p, Py_ssize_t pos, Py_ssize_t n, bint final) except -1
    cdef Py_ssize_t _header(self, str p, Py_ssize_t pos, Py_ssize_t n, bint final, list out) except -1
    cdef int _open_message(self, str p, Py_ssize_t a, Py_ssize_t b) except -1
    cdef int _begin(self, int k, object recipient) except -1
    cdef int _end_body(self) except -1
    cdef int _marker(self, int kind, void *data, Py_ssize_t at, Py_ssize_t n, bint final, Py_ssize_t *size) except -1
    cdef Py_ssize_t _word_start(self, int kind, void *data, Py_ssize_t a, Py_ssize_t b) noexcept
    cdef bint _after_space(self, int kind, void *data, Py_ssize_t a, Py_ssize_t at) noexcept
    cdef Py_ssize_t _tail(self, str p, int kind, void *data, Py_ssize_t a, Py_ssize_t stop) except -1
    cdef Py_ssize_t _body(self, str p, Py_ssize_t pos, Py_ssize_t n, bint final, list out) except -1
    cdef Py_ssize_t _text(self, str p, Py_ssize_t a, Py_ssize_t b, bint ended, list out) except -1
    cdef int _emit(self, list out, str text, int k) except -1
    cdef Py_ssize_t _seek(self, str p, int kind, void *data, Py_ssize_t pos, Py_ssize_t b, object m0, object m1,
                          bint ended, int *which) except -1
    cdef Py_ssize_t _calls(self, str p, Py_ssize_t a, Py_ssize_t b, bint ended) except -1
    cdef int _hold(self, str p, Py_ssize_t a, Py_ssize_t b) except -1
    cdef int _start_call(self, object name) except -1
    cdef int _close_call(self) except -1
    cdef int _finish_value(self, str p, Py_ssize_t a, Py_ssize_t b) except -1
    cdef int _open_value(self) except -1
    cdef bint _string_value(self, object key) except -1
    cdef int _stream_value(self, str p, Py_ssize_t a, Py_ssize_t b, bint done) except -1
    cdef str _value_json(self, str raw, Py_ssize_t a, Py_ssize_t b, object key)


cdef object channel_router(object reasoning_parser, object tool_parser, bint tool_active)
