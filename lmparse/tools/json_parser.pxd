from lmparse.tools.base cimport ToolParser
from lmparse.tools.held_text cimport HeldText
from lmparse.tools.json_scanner cimport JsonValueScanner

# The family's parse phases, and the windows that bound what the router holds.
cdef enum:
    P_START = 0
    P_KEY = 1
    P_COLON = 2
    P_VALUE = 3
    P_ARGS = 4
    P_SKIP = 5
    P_AFTER = 6
    P_TAIL = 7
    P_BROKEN = 8
    # Whitespace allowed between ``;`` and the next envelope's ``{`` (no close tag):
    # bounds what the router holds while the separator is undecided.
    _SEPARATOR_WS = 64
    # Text after the envelope that the close tag follows within this many
    # characters is the block's (a markdown fence, a stray word); otherwise the
    # block ended with the envelope. Bounds what the router holds to decide.
    _TAIL_WINDOW = 64


cdef class JsonToolParser(ToolParser):
    cdef int _phase
    cdef public object _json_key
    cdef public bint _arguments_seen
    # an envelope of the current block ended at a syntax error (see break_envelope)
    cdef public bint _envelope_broken
    cdef public JsonValueScanner _value_scanner
    cdef str _name_field
    cdef str _argument_field
    cdef bint _str_escape
    cdef bint _str_open
    cdef HeldText _held_str
    cdef object _open_tag
    # envelope_array layout (Mistral pre-v11, Granite 3) and a bare opener to skip
    cdef bint _envelope_array
    cdef bint _name_as_key
    cdef bint _bare_array
    cdef bint _in_array
    cdef Py_ssize_t _skip_open
    # argument_field_aliases; a bare call's quoted name key and argument keys
    cdef tuple _argument_aliases
    cdef bint _bare_pending
    cdef str _bare_name_key
    cdef tuple _bare_keys
    # call_tags: the tags around each envelope inside the block (K2 Horizon's <ifm|tool_call> ... </ifm|tool_call>)
    cdef str _call_open
    cdef str _call_close

    cdef Py_ssize_t bare_start(self, str text, Py_ssize_t size, list deltas, bint final) except -1

    cdef int drop_held(self) except -1
    cdef Py_ssize_t string_end(self, str text, Py_ssize_t pos, Py_ssize_t size)
    cdef str read_string(self, str text, Py_ssize_t start, Py_ssize_t size, Py_ssize_t *pos)
    cdef int string_done(self, list deltas, str value) except -1
    cdef Py_ssize_t scan_value(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1
    cdef int finish_envelope(self, list deltas) except -1
    cdef int envelope_done(self, list deltas) except -1
    cdef int end_block_here(self, list deltas) except -1
    cdef int break_envelope(self, list deltas) except -1
    cdef Py_ssize_t envelope_start(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas,
                                   bint final) except -1
    cdef Py_ssize_t broken_text(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas,
                                bint final) except -1
    cdef bint is_arguments_key(self, object key)
    cdef int next_envelope(self, int phase) except -1
    cdef Py_ssize_t tail_text(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas) except -1
    cdef Py_ssize_t bare_opener(self, str text, Py_ssize_t size, list deltas, bint final) except -1
    cdef Py_ssize_t array_tail(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas) except -1
    cdef Py_ssize_t call_start(self, str text, Py_ssize_t size, bint final) except -1
    cdef Py_ssize_t no_call_block(self, str text, Py_ssize_t q) except -1
    cdef Py_ssize_t call_tag_at(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2
    cdef Py_ssize_t array_start(self, Py_UCS4 ch, Py_ssize_t pos, list deltas) except -1
    cdef Py_ssize_t separator_tail(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas,
                                   bint final) except -1
