cdef enum:
    PENDING_INDEX = -2
    REJECTED_INDEX = -1

# ChatCompletionRequest's slots, in lmparse.request order (checked at import).
cdef enum:
    S_MODEL = 0
    S_MESSAGES = 1
    S_TOOLS = 2
    S_TOOL_CHOICE = 3
    S_PARALLEL_TOOL_CALLS = 4
    S_MAX_COMPLETION_TOKENS = 5
    S_MAX_TOKENS = 6
    S_STOP = 7
    S_STREAM = 8
    S_STREAM_OPTIONS = 9
    S_REASONING_EFFORT = 10
    S_RESPONSE_FORMAT = 11
    S_SKIP_SPECIAL_TOKENS = 12
    S_SPACES_BETWEEN_SPECIAL_TOKENS = 13
    S_ENABLE_THINKING = 14
    S_CHAT_TEMPLATE_KWARGS = 15
    S_EXTRA = 16
    N_OWN_SLOTS = 17

# Hooks a Python subclass may override; built-in dialects skip Python dispatch otherwise.
cdef enum:
    HOOK_FEED = 1
    HOOK_PAYLOAD = 2
    HOOK_BEGIN_BLOCK = 4
    HOOK_BEGIN_CALL = 8


cdef bint is_own_request(object request) noexcept
cdef object own_slot(object request, Py_ssize_t i)
cdef bint immutable_type(type cls) noexcept
cdef tuple class_basis(type cls, tuple names)
cdef bint same_basis(tuple a, tuple b) noexcept
cdef tuple longest_first(object prefixes)
cdef int hook_overrides(type cls, tuple names) except -1
cdef Py_ssize_t tag_prefix_hold(str text, Py_ssize_t start, str tag)
cdef int marker_match(int kind, void *data, Py_ssize_t at, Py_ssize_t size, str marker) noexcept
cdef Py_ssize_t seek_marker(str text, Py_ssize_t pos, Py_ssize_t size, Py_UCS4 lead, tuple markers,
                            const int *wanted, bint final, int *hit) noexcept


cdef class ToolParser:
    cdef public object _close_tag
    cdef public object _active_tool_call_id
    cdef public bint _name_emitted
    cdef public object _allowed_tool_names
    cdef public object _tool_schemas
    cdef public Py_ssize_t _output_index
    cdef public Py_ssize_t _next_output_index
    cdef public list _pending_arguments
    cdef public bint _payload_closed
    cdef public bint block_closed
    cdef tuple _close_prefixes
    cdef bint _hold_all_close_prefixes
    cdef int _hooks
    # A family that takes bare calls (see bare_call_open) sets the opener it
    # recognises (the router searches plain text for it), and hands back the
    # raw text of a bare call it rejected (content for the router, then None).
    cdef object _bare_open
    # The opener counts only at the start of the plain channel, after whitespace
    # (the JSON and pythonic families), not anywhere in the text (the XML family).
    cdef bint _bare_at_start
    # The opener is a tag of its own (skipped, any name follows): a call without
    # offered tools too. Otherwise a bare call is confirmed by an offered name.
    cdef bint _bare_is_tag
    # Beside an anchored ``_bare_open``: an opener searched anywhere in plain text (the DSML
    # family's invoke written without its block); None: none.
    cdef object _bare_search
    # keep calls to tools the request does not declare (see keep_undeclared_calls)
    cdef public bint keep_undeclared_calls
    cdef object _handback
    # text skipped before the block's first call, while collected (see no_call.pxd); None otherwise
    cdef list _no_call_text
    cdef object _replay

    cdef int begin_block_c(self) except -1
    cdef int begin_bare_block_c(self) except -1
    cdef int reset_call_c(self, object call_id) except -1
    cdef int start_call(self, object call_id) except -1
    cdef Py_ssize_t feed_c(self, str text, list deltas, bint final) except -1
    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1
    cdef int emit_c(self, list deltas, object name, object arguments) except -1
    cdef Py_ssize_t close_hold_end(self, str text, Py_ssize_t start)
    cdef bint close_prefix_at(self, str text, Py_ssize_t pos)


cdef inline int start_block(ToolParser p) except -1:
    """A block's start as the router makes it: through a Python ``begin_tool_block`` override if there is one."""
    if p._hooks & HOOK_BEGIN_BLOCK:
        p.begin_tool_block()
    else:
        p.begin_block_c()
    return 0
