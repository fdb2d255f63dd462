# What constructing a response parser needs beyond the routing state machine
# (lmparse.response): per-class plans, the reasoning fast path, own-request reads.

cdef enum:
    STARTS_CALL = 0       # call starts_in_reasoning_mode() on the instance
    STARTS_ALWAYS = 1     # a declared class without thinking switches: True
    STARTS_SWITCHES = 2   # a declared class: whether any switch is True

# Indices into own_fields()
cdef enum:
    F_CHOICE = 0
    F_CTK = 1
    F_THINK = 2
    F_EFFORT = 3
    N_OWN_FIELDS = 4


cdef class Plan:
    cdef object cls
    cdef object rcls
    cdef object tcls
    cdef object tokenizer
    cdef object kwargs_func
    # None: the built-in chat_template_kwargs_from_request
    cdef object kwargs_hook
    # what a declared reasoning class resolved its methods and declarations to (None: no fast path)
    cdef tuple r_basis
    # _R_GENERATION[0] when the plan was made, for a class every patch of which renews it; else None
    cdef object r_generation
    # attributes new_reasoning_parser sets (None: call rcls(**kwargs) instead)
    cdef tuple r_init_names
    cdef int r_starts
    cdef tuple r_starts_names
    cdef bint r_tags_known
    cdef object r_open
    cdef object r_close
    # t_open: the class's tag; exact when t_tag_known, else what the anchors assumed
    cdef bint t_tag_known
    cdef object t_open
    # the class's bare_call_open as declared (what the anchors of [2] assumed)
    cdef object t_bare
    # the class's for_template_kwargs (a per-request choice of its layout class), or None
    cdef object t_select
    # tag_anchor results for (r_open, r_close, t_open); [0]: tool tag inactive, [1]: active,
    # [2]: active with bare calls (t_bare, searched in plain text)
    cdef bint anchors_known
    cdef Py_UCS4 anchor_plain[3]
    cdef Py_UCS4 anchor_reasoning[3]
    cdef Py_ssize_t reach_plain[3]
    cdef Py_ssize_t reach_reasoning[3]
    cdef object token_ids

    cdef bint current(self, type cls) except -1


cdef Plan plan_for(type cls)
cdef int set_default_kwargs_func(object func) except -1
cdef object new_reasoning_parser(object rcls, dict kwargs, tuple names)
cdef bint str_keys(dict kwargs) noexcept
cdef tuple reasoning_token_ids(object tokenizer, object open_tag, object close_tag)
cdef Py_UCS4 tag_anchor(object a, object b, object c, Py_ssize_t *reach)
cdef tuple content_markers(object reasoning_parser, object tool_parser, str attribute=*)
cdef tuple block_headers(object reasoning_parser, object tool_parser, tuple markers)
cdef Py_UCS4 marker_anchor(Py_UCS4 anchor, Py_ssize_t *reach, tuple markers)
cdef bint same_tag(object a, object b) except -1

cdef bint eq(object value, str literal) except -1
cdef tuple own_fields(object request)
cdef object own_choice(tuple fields)
cdef object own_template_kwargs(tuple fields)
cdef bint same_choice(object adjusted, object request, tuple fields) except -1
cdef bint own_is_normal(object request) except -1
cdef object normal_request(object adjusted)
cdef object foreign_dump_tools(object request)
cdef object thinking_switch(object kwargs)
cdef bint starts_in_reasoning(Plan plan, object reasoning_parser, object kwargs) except -1
cdef bint calls_in_reasoning(object reasoning_parser, object tool_parser) except -1
cdef object call_end_tag(object cls, object reasoning_parser, object tool_parser)
cdef tuple text_reasoning_tags(object reasoning_parser)
cdef object adjusted_request(object tool_parser, object request, tuple fields, object choice, bint reasoning)
cdef tuple lead_framing(object reasoning_parser, bint reasoning_enabled, object close_tag)
cdef str lead_strip(str p, str chars, object tag, bint final, bint *hold, bint *stripped)
cdef int leading_tag(str p, Py_ssize_t n, str tag, bint final) except -2
cdef bint content_forced(object reasoning_parser, object kwargs) except -1
