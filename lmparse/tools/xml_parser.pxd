from lmparse.tools.base cimport ToolParser
from lmparse.tools.xml_grammar cimport ValueEnds, XmlGrammar, XmlStep
from lmparse.tools.held_text cimport HeldText

# How the current value is taken (_mode).
cdef enum:
    M_UNDECIDED = 0
    M_BUFFERED = 1
    M_STREAMING = 2

# A streamed value's trailing newline, held until more text shows it is not the protocol's (_suffix).
cdef enum:
    SUF_NONE = 0
    SUF_LF = 1
    SUF_CR = 2
    SUF_CRLF = 3

# How an argument's value is taken, by its schema's types (_arg_kind; see xml_values).
cdef enum:
    AK_TEXT = 0       # streamed as a string (no schema, or only "string")
    AK_NULLABLE = 1   # streamed as a string once it cannot be the literal null / None
    AK_WHOLE = 2      # held whole and converted at its close tag


cdef class XmlToolParser(ToolParser):
    # parse state: owned by the driver only
    cdef int _phase
    cdef public object _func_name
    cdef public object _arg_name
    cdef object _call_props
    cdef object _arg_types
    cdef int _arg_kind
    # how much of the literal null / None a nullable string value may still be
    cdef int _null_state
    cdef int _null_mask
    cdef int _mode
    cdef int _suffix
    # the held (undecided or buffered) value
    cdef HeldText _held
    # output of the current feed: the first fragment, then the rest
    cdef str _out
    cdef list _frags
    cdef bint _json_open
    cdef bint _json_closed
    cdef Py_ssize_t _arg_count
    # replace mode: a declared, not yet given parameter's opener on its own line ends a value (xml_value_end)
    cdef public bint next_arg_ends_value
    # the argument names the current call has given (kept only with next_arg_ends_value)
    cdef list _given
    cdef Py_ssize_t _last_call_end
    # the dialect's compiled declarations, and what the hot path reads of them
    cdef XmlGrammar _grammar
    cdef str _value_close
    cdef tuple _value_prefixes
    cdef bint _hold_all_value_prefixes
    # what ends a value in the current block (see ValueEnds)
    cdef ValueEnds _ends
    cdef bint _strip_newlines
    cdef int _xml_hooks
    # the last grammar or hook step (results written by it, applied by the driver)
    cdef XmlStep _step
    cdef object _out_name
    # a name the text has not terminated yet (NAME_* state and its text so far)
    cdef int _name_state
    cdef HeldText _name_buf
    # a bare block (see xml_bare): the raw text of its current call before the
    # held name, and an offered name not yet confirmed
    # the dialect declares no_call_block_is_content (see no_call.pxd)
    cdef bint _no_call_content
    cdef bint _bare
    cdef str _bare_raw
    cdef object _bare_name

    cdef _reset_call_state(self)
    cdef object held_name(self, str text)
    cdef bint bare_step(self, str text, Py_ssize_t *cursor, Py_ssize_t size, bint final, list deltas) except -1
    cdef int fresh_step(self, str payload, Py_ssize_t pos) except -1
    cdef Py_ssize_t run_hook(self, int phase, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2
    cdef int put(self, str fragment) except -1
    cdef int flush(self, list deltas) except -1
    cdef int begin_function(self, list deltas, object name) except -1
    cdef int open_object(self) except -1
    cdef int close_object(self) except -1
    cdef int begin_arg(self, object name) except -1
    cdef int put_key(self, bint open_string) except -1
    cdef Py_ssize_t consume_value(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -1
    cdef bint may_be_null(self, str text, Py_ssize_t a, Py_ssize_t b) except -1
    cdef bint line_start(self, str text, Py_ssize_t pos, Py_ssize_t at) except -1
    cdef int value_part(self, str text, Py_ssize_t a, Py_ssize_t b) except -1
    cdef int stream_part(self, str text, Py_ssize_t a, Py_ssize_t b) except -1
    cdef int finish_whole(self, str text, Py_ssize_t a, Py_ssize_t b) except -1
    cdef int put_converted(self, str text, Py_ssize_t a, Py_ssize_t b) except -1
    cdef int finish_arg(self) except -1
    cdef int end_arg(self) except -1
