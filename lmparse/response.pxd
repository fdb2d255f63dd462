# The response router's state (lmparse.response), declared here so compiled
# wrappers (lmparse.compat) can call its streaming entry point directly.
from lmparse.recipient_channels cimport ChannelRouter
from lmparse.token_ids cimport TagIds
from lmparse.tools.base cimport ToolParser


cdef class ResponseParserCore:
    cdef public str _pending
    cdef int _mode, _return_mode
    cdef bint _after_tool_block, _final, _passthrough, _thinking_off, _in_header
    # inline_reasoning: reasoning stays in content with its tags (_inline_open: the open tag,
    # in the prompt, not written yet)
    cdef bint _inline, _inline_open
    # text_reasoning_tags: (open, close) a model may write as text instead of the special tags,
    # recognised at the start of the output only (None: none, or no longer possible)
    cdef tuple _alt_tags
    # drop_leading_close_tag: the close tag, dropped when the output starts with it (None: not, or no longer)
    cdef object _lead_close
    # content_lead_strip: characters dropped from the start of the content after the close tag
    # (None: none declared); _stripping while they are still to drop
    cdef str _lead_strip
    cdef bint _stripping, _lead_stripped
    cdef object _r_open, _r_close, _t_open
    # the tool-open tag searched in reasoning: _t_open, or None when the model never calls tools there
    cdef object _t_reasoning
    # construction.call_end_tag: a call-open tag that ends reasoning (the rest is content as written); None: none
    cdef object _call_end
    # the tool parser's bare-call opener, searched in plain text (None: no bare calls)
    cdef object _bare_open
    # the opener counts only at the start of the plain channel (then cleared once text is content)
    cdef bint _bare_anchored
    # beside an anchored opener: one searched anywhere in plain text (ToolParser._bare_search)
    cdef object _bare_mid
    cdef ToolParser _tool
    cdef int _tool_hooks
    # see construction.tag_anchor
    cdef Py_UCS4 _anchor_plain, _anchor_reasoning
    cdef Py_ssize_t _reach_plain, _reach_reasoning
    # declared content-channel markers, dropped from text outside tool blocks (None: none)
    cdef tuple _markers
    # declared split_marker_pieces: a held marker prefix that starts with one is dropped at the end (None: none)
    cdef tuple _pieces
    # block headers (construction.block_headers): opening and ending markers, the longest end
    cdef tuple _header_opens, _header_ends
    cdef Py_ssize_t _header_reach
    # Reused delta list for built-in tool parsers (handed off only when filled; made on first use).
    cdef list _scratch
    # a recipient-channel grammar (lmparse.recipient_channels) reads the whole response instead of the tag modes
    cdef ChannelRouter _channels
    cdef public object request, reasoning_parser, tool_parser, enable_thinking
    cdef public bint reasoning_enabled
    cdef public dict _kwargs
    # reasoning-token accounting over the raw tag interval
    cdef bint _count_on, _counting
    cdef Py_ssize_t _reasoning_count
    cdef long long _rt_open_id, _rt_close_id
    # tags confirmed by their special token ids (None: no tokenizer, or it holds no tag as one token)
    cdef TagIds _tag_ids

    # stream_chunk's body: callers that know they hold a ResponseParserCore skip the Python call
    cdef list _stream(self, object delta_text, object delta_token_ids, object final)
    cdef int _count_reasoning_tokens(self, object token_ids) except -1
    cdef bint _as_text(self, list out, str p, Py_ssize_t n, Py_ssize_t at, object tag, bint reasoning) except -1
    cdef int _run(self, list out) except -1
    cdef int _emit_text(self, list out, str text, bint reasoning) except -1
    cdef bint _release_or_hold(self, list out, bint reasoning, Py_ssize_t start,
                               object tag_a, object tag_b, object tag_c) except -1
    cdef bint _consume_plain(self, list out) except -1
    cdef int _anchored_bare(self, str p, Py_ssize_t n) except -2
    cdef int _anchored_text_tags(self, str p, Py_ssize_t n) except -2
    cdef bint _consume_reasoning(self, list out) except -1
    cdef bint _consume_header(self) except -1
    cdef int _enter_tool_mode(self, bint bare) except -1
    cdef bint _consume_tool(self, list out) except -1
    cdef bint _resolve_separator(self) except -1
