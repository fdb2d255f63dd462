"""Response routing: plain / reasoning / tool modes over one pending buffer.

``ResponseParserCore`` is the compiled state machine; ``BaseResponseParser``
(a Python class compiled in this module) adds the writable class-level
configuration LMDeploy's server and tests use. What construction derives per
class, and the request fast paths, live in ``lmparse.construction``.
"""
import logging

from cpython.buffer cimport PyObject_CheckBuffer
from cpython.unicode cimport PyUnicode_Substring

from lmparse.construction cimport (
    Plan, adjusted_request, block_headers, call_end_tag, calls_in_reasoning, content_forced, content_markers, eq,
    lead_framing, lead_strip, leading_tag, marker_anchor, new_reasoning_parser, own_choice, own_fields,
    own_template_kwargs, starts_in_reasoning, text_reasoning_tags, thinking_switch, plan_for,
    reasoning_token_ids, same_choice, same_tag, set_default_kwargs_func, str_keys, tag_anchor,
)
from lmparse.protocol cimport DeltaMessage, new_delta_message
from lmparse.recipient_channels cimport ChannelRouter, channel_router
from lmparse.tag_search cimport (
    _at_start, _find, _find_marker, _header_cut, _hold_back, _cut_marker_end, _may_hold_tag, _opens_header, _separator_end, _tag_floor)
from lmparse.token_ids cimport TagIds, count_between, new_tag_ids, token_ids_given
from lmparse.tools.base cimport HOOK_BEGIN_BLOCK, HOOK_FEED, ToolParser

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

# Pure Python, imports no compiled module: bound once instead of on every construction.
from lmparse.registry import ResponseParserManager, parser_classes, response_parser_for
from lmparse.request import as_request, chat_template_kwargs_from_request, tool_choice_kind
from lmparse.request import ChatCompletionRequest as _OwnRequest

logger = logging.getLogger('lmparse')

__all__ = ['ResponseParserCore', 'ResponseParser', 'BaseResponseParser', 'aggregate_deltas']

cdef enum:
    M_PLAIN = 0
    M_REASONING = 1
    M_TOOL = 2

_MODE_NAMES = ('plain', 'reasoning', 'tool')

cdef enum:
    # A longer block header (no end marker yet) is text.
    HEADER_MAX = 256

# The block-header limit for Python (bench/memory.py bounds the retained buffer with it).
MAX_BLOCK_HEADER = HEADER_MAX


def aggregate_deltas(list messages not None):
    """Join streamed ``(DeltaMessage, tool_emitted)`` pairs as a complete response does.

    Returns ``(content, reasoning, tool_deltas)``; the strings may be empty.
    """
    content_parts, reasoning_parts, tool_deltas = [], [], []
    cdef DeltaMessage message
    for item in messages:
        message = <DeltaMessage>item[0]
        if message.content:
            content_parts.append(message.content)
        if message.reasoning_content:
            reasoning_parts.append(message.reasoning_content)
        if message.tool_calls:
            tool_deltas.extend(message.tool_calls)
    return ''.join(content_parts), ''.join(reasoning_parts), tool_deltas


cdef class ResponseParserCore:
    """Streaming state machine shared by the default response parser.

    Owns the only buffer (``_pending``): the suffix whose meaning is not
    stable yet. In tool mode the tool parser consumes a prefix of it and
    returns how much it consumed.
    """

    def __cinit__(self):
        # No arguments: Cython then ignores the constructor's instead of packing them.
        self._pending = ''
        self._rt_open_id = -1
        self._rt_close_id = -1

    def __init__(self, request):
        cdef Plan plan = plan_for(type(self))
        if type(request) is not _OwnRequest:
            request = as_request(request)
        # None unless an own request with its slots set
        cdef tuple fields = own_fields(request)
        kwargs_hook = plan.kwargs_hook
        kwargs = own_template_kwargs(fields) if fields is not None and kwargs_hook is None else None
        if kwargs is None:
            kwargs = kwargs_hook(request) if kwargs_hook is not None else chat_template_kwargs_from_request(request)
        self._kwargs = kwargs
        enable_thinking = self.enable_thinking = thinking_switch(kwargs)
        self._thinking_off = enable_thinking is False

        rcls = plan.rcls
        if rcls is None:
            reasoning_parser = None
        elif plan.r_init_names is not None and type(kwargs) is dict and str_keys(kwargs):
            reasoning_parser = new_reasoning_parser(rcls, kwargs, plan.r_init_names)
        else:
            reasoning_parser = rcls(**kwargs)
        self.reasoning_parser = reasoning_parser
        # t_select: a dialect whose layout a chat-template switch picks (K2 Horizon's tool_call_format)
        tcls = plan.t_select(kwargs if type(kwargs) is dict else {}) if plan.t_select is not None else plan.tcls
        self.tool_parser = tcls() if tcls is not None else None
        cdef bint reasoning_enabled = reasoning_parser is not None and enable_thinking is not False and (
            starts_in_reasoning(plan, reasoning_parser, kwargs))
        self.reasoning_enabled = reasoning_enabled

        choice = own_choice(fields) if fields is not None else None
        if choice is None:
            choice = tool_choice_kind(request)
        adjusted = self.request = adjusted_request(self.tool_parser, request, fields, choice, reasoning_enabled)

        self._r_open = None
        self._r_close = None
        if reasoning_parser is not None:
            if plan.r_tags_known:
                self._r_open = plan.r_open
                self._r_close = plan.r_close
            else:
                self._r_open = reasoning_parser.get_reasoning_open_tag() or None
                self._r_close = reasoning_parser.get_reasoning_close_tag() or None
            if self._r_close is None:
                raise RuntimeError(
                    f'Reasoning parser {type(reasoning_parser).__name__} must provide a reasoning end tag')

        self._t_open = None
        self._bare_open = self._bare_mid = None
        self._tool = None
        self._tool_hooks = HOOK_FEED | HOOK_BEGIN_BLOCK
        cdef bint tool_active = self.tool_parser is not None and not eq(
            choice if same_choice(adjusted, request, fields) else tool_choice_kind(adjusted), 'none')
        if tool_active:
            if plan.t_tag_known and type(self.tool_parser) is plan.tcls:
                self._t_open = plan.t_open
            else:
                self._t_open = self.tool_parser.get_tool_open_tag() or None
            if self._t_open is None:
                raise RuntimeError(f'Tool parser {type(self.tool_parser).__name__} must provide a tool start tag')
            if isinstance(self.tool_parser, ToolParser):
                self._tool = <ToolParser>self.tool_parser
                self._tool_hooks = self._tool._hooks
                # bare calls only with offered tools (a rejected name is text again); a second open tag always
                if self._tool._bare_open is not None and (self._tool._allowed_tool_names or self._tool._bare_is_tag):
                    self._bare_open = self._tool._bare_open
                    self._bare_anchored = self._tool._bare_at_start
                    self._bare_mid = self._tool._bare_search  # searched once the anchored one is passed
                if getattr(type(self), 'keep_undeclared_tool_calls', False) is True:
                    self._tool.keep_undeclared_calls = True

        # the tool-open tag searched inside reasoning (None: the model never calls tools there), or call_end_tag's
        self._call_end = call_end_tag(type(self), reasoning_parser, self.tool_parser)
        self._t_reasoning = self._call_end if self._call_end is not None else (
            self._t_open if calls_in_reasoning(reasoning_parser, self.tool_parser) else None)
        self._passthrough = reasoning_parser is None and self.tool_parser is None
        # the plan's anchors hold for the tags it assumed
        # an anchored opener is checked apart, at the start of the plain channel
        bare_searched = self._bare_mid if self._bare_anchored else self._bare_open
        cdef int slot = 0 if not tool_active else (1 if bare_searched is None else 2)
        if self._call_end is None and plan.anchors_known and same_tag(self._r_open, plan.r_open) and same_tag(
                self._r_close, plan.r_close) and (not tool_active or same_tag(self._t_open, plan.t_open)) and (
                bare_searched is None or same_tag(bare_searched, plan.t_bare)):
            self._anchor_plain = plan.anchor_plain[slot]
            # slot 0's reasoning anchor assumed no tool tag (the one searched in reasoning)
            self._anchor_reasoning = plan.anchor_reasoning[slot if self._t_reasoning is not None else 0]
            self._reach_plain = plan.reach_plain[slot]
            self._reach_reasoning = plan.reach_reasoning[slot if self._t_reasoning is not None else 0]
        else:
            self._anchor_plain = tag_anchor(self._r_open, self._t_open, bare_searched, &self._reach_plain)
            self._anchor_reasoning = tag_anchor(self._r_close, self._t_reasoning, self._r_open,
                                                &self._reach_reasoning)
        self._markers = content_markers(reasoning_parser, self.tool_parser)
        self._pieces = content_markers(reasoning_parser, self.tool_parser, 'split_marker_pieces')
        if self._markers is not None:
            self._anchor_plain = marker_anchor(self._anchor_plain, &self._reach_plain, self._markers)
            self._anchor_reasoning = marker_anchor(self._anchor_reasoning, &self._reach_reasoning, self._markers)
        self._header_opens, self._header_ends, self._header_reach, self._in_header = block_headers(
            reasoning_parser, self.tool_parser, self._markers)
        self._mode = M_REASONING if reasoning_enabled else M_PLAIN
        # inline_reasoning keeps reasoning in content, tags included; text_reasoning_tags (construction)
        self._inline = reasoning_parser is not None and getattr(reasoning_parser, 'inline_reasoning', False) is True
        self._inline_open = self._inline and reasoning_enabled
        self._alt_tags = text_reasoning_tags(reasoning_parser) if not reasoning_enabled else None
        self._lead_close, self._lead_strip = lead_framing(reasoning_parser, reasoning_enabled, self._r_close)
        self._return_mode = self._mode
        self._pending = ''
        self._after_tool_block = False
        self._final = False
        self._count_on = False
        self._counting = self._mode == M_REASONING
        self._reasoning_count = 0
        tokenizer = plan.tokenizer
        if reasoning_parser is not None and tokenizer is not None:
            token_ids = plan.token_ids
            if token_ids is None:
                token_ids = reasoning_token_ids(
                    tokenizer, getattr(reasoning_parser, 'reasoning_open_token', None) or self._r_open, self._r_close)
            open_id, close_id = token_ids
            self._count_on = True
            self._rt_open_id = -1 if open_id is None else open_id
            self._rt_close_id = -1 if close_id is None else close_id
        self._channels = channel_router(reasoning_parser, self.tool_parser, tool_active)
        self._count_on = self._count_on and self._channels is None  # channels: no reasoning tag ids to count
        self._tag_ids = None
        if tokenizer is not None and self._channels is None and (reasoning_parser is not None or tool_active) and (
                getattr(type(self), 'confirm_tags_by_token_id', True) is not False):
            # a tag the tokenizer holds as one token is structure only when it arrives as that token
            # (an open tag written as several tokens, reasoning_open_token, is not checked)
            self._tag_ids = new_tag_ids(tokenizer, (
                None if getattr(reasoning_parser, 'reasoning_open_token', None) else self._r_open,
                self._r_close, self._t_open if self._call_end is None else self._call_end))

    # ---- public state ---------------------------------------------------------

    @property
    def reasoning_tokens(self):
        """Tokens inside the reasoning tags so far, or None without a tokenizer."""
        return self._reasoning_count if self._count_on else None

    @reasoning_tokens.setter
    def reasoning_tokens(self, value):
        if value is None:
            self._count_on = False
            self._reasoning_count = 0
        else:
            self._count_on = True
            self._reasoning_count = value

    @property
    def mode(self):
        return _MODE_NAMES[self._mode]

    # ---- streaming ------------------------------------------------------------

    def stream_chunk(self, delta_text, delta_token_ids=None, final=False, **kwargs):
        """Route one engine chunk; returns ``[(DeltaMessage, tool_calls_emitted), ...]``.

        ``final=True`` means no more text will follow: ambiguous suffixes are
        released and open tool blocks are closed (never completed by invention).
        """
        return self._stream(delta_text, delta_token_ids, final)

    cdef list _stream(self, object delta_text, object delta_token_ids, object final):
        if delta_text is None:
            delta_text = ''
        elif not isinstance(delta_text, str):
            raise TypeError(f'delta_text must be str, not {type(delta_text).__name__}')
        cdef bint have_ids = token_ids_given(delta_token_ids)
        if have_ids and self._tag_ids is not None and type(delta_token_ids) is not list and type(delta_token_ids) is not tuple and (
                not PyObject_CheckBuffer(delta_token_ids) and not isinstance(delta_token_ids, str)):
            delta_token_ids = list(delta_token_ids)  # read twice (counting, tag confirmation): an iterator once
        if self._count_on and not self._thinking_off and have_ids:
            self._count_reasoning_tokens(delta_token_ids)
        self._final = bool(final)
        cdef str text = <str>delta_text
        if self._tag_ids is not None:
            self._tag_ids.note(delta_token_ids, have_ids, PyUnicode_GET_LENGTH(text), PyUnicode_GET_LENGTH(self._pending))
        if self._passthrough:
            return [(new_delta_message(text, None, None), False)] if text else []
        if text:
            if self._pending:
                self._pending = self._pending + text
            else:
                self._pending = text
        cdef list out = []
        self._run(out)
        return out

    cdef int _count_reasoning_tokens(self, object token_ids) except -1:
        self._counting = count_between(token_ids, self._rt_open_id, self._rt_close_id, self._counting,
                                       &self._reasoning_count)
        return 0

    cdef bint _as_text(self, list out, str p, Py_ssize_t n, Py_ssize_t at, object tag, bint reasoning) except -1:
        """An unconfirmed tag at ``at``: it and the text before it go to the current channel."""
        cdef Py_ssize_t end = at + PyUnicode_GET_LENGTH(<str>tag)
        self._pending = PyUnicode_Substring(p, end, n)
        self._emit_text(out, PyUnicode_Substring(p, 0, end), reasoning)
        return True

    cdef int _run(self, list out) except -1:
        cdef bint progressed
        cdef Py_ssize_t consumed
        if self._channels is not None:
            consumed = self._channels.feed(self._pending, self._final, out)
            self._pending = PyUnicode_Substring(self._pending, consumed, PyUnicode_GET_LENGTH(self._pending))
            return 0
        while True:
            if self._after_tool_block and not self._resolve_separator():
                break
            progressed = False
            if self._in_header and self._mode != M_TOOL:
                progressed = self._consume_header()
            elif self._mode == M_PLAIN:
                progressed = self._consume_plain(out)
            elif self._mode == M_REASONING:
                progressed = self._consume_reasoning(out)
            if self._mode == M_TOOL:
                # Dispatch the payload now rather than waiting for the next chunk.
                progressed = self._consume_tool(out)
            if not progressed or not self._pending:
                break
        return 0

    cdef int _emit_text(self, list out, str text, bint reasoning) except -1:
        if self._inline:
            if reasoning and self._inline_open:
                # the open tag the template put in the prompt, once, before the first reasoning text
                self._inline_open = False
                text = <str>self._r_open + text
            out.append((new_delta_message(text, None, None), False))
            return 0
        if reasoning and not self._thinking_off:
            out.append((new_delta_message(None, text, None), False))
        else:
            out.append((new_delta_message(text, None, None), False))
        return 0

    cdef bint _release_or_hold(self, list out, bint reasoning, Py_ssize_t start,
                               object tag_a, object tag_b, object tag_c) except -1:
        """No tag in the buffer: emit all but a suffix that may still grow into a tag
        (``start``: no tag prefix can begin before this offset)."""
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t hold = n
        if n == 0:
            return False
        if not self._final and start < n:
            hold = _hold_back(p, start, tag_a, tag_b, tag_c, self._markers)
        elif self._pieces is not None and start < n:  # a marker the end of the output cut: dropped
            n = hold = _cut_marker_end(p, start, tag_a, tag_b, tag_c, self._markers, self._pieces)
            p = self._pending = PyUnicode_Substring(p, 0, n)
        if hold == 0:
            return False
        if hold == n:
            self._pending = ''
            self._emit_text(out, p, reasoning)
        else:
            self._pending = PyUnicode_Substring(p, hold, n)
            self._emit_text(out, PyUnicode_Substring(p, 0, hold), reasoning)
        return True

    cdef bint _consume_plain(self, list out) except -1:
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t at = -1, t, first = 0
        cdef int which = 0  # 0 none, 1 reasoning open, 2 tool open, 3 bare call opener (kept), 4 marker (dropped)
        cdef Py_ssize_t anchor_at, m = 0
        if self._stripping:
            p = self._pending = lead_strip(p, self._lead_strip, self._t_open, self._final, &self._stripping,
                                           &self._lead_stripped)
            n = PyUnicode_GET_LENGTH(p)
            if n == 0 or self._stripping:
                return False
        if self._lead_close is not None:
            at = leading_tag(p, n, <str>self._lead_close, self._final)
            if at == 0:
                return False
            self._lead_close = None
            if at == 1 and (self._tag_ids is None or self._tag_ids.confirmed(1, self._tag_ids.stream_len - n)):
                self._pending = PyUnicode_Substring(p, PyUnicode_GET_LENGTH(<str>self._r_close), n)
                return True
        if self._alt_tags is not None:
            at = self._anchored_text_tags(p, n)
            if at >= 0:
                return at == 1
        bare = self._bare_open
        if bare is not None and self._bare_anchored:
            at = self._anchored_bare(p, n)
            if at >= 0:
                return at == 1
            bare = self._bare_open  # the opener searched from here on (None: none)
        first = _tag_floor(p, n, self._anchor_plain, self._reach_plain, &anchor_at)
        if anchor_at < 0 or (self._anchor_plain and not _may_hold_tag(
                p, n, self._anchor_plain, anchor_at, self._r_open, self._t_open, bare, self._markers)):
            return self._release_or_hold(out, False, first, self._r_open, self._t_open, bare)
        if self._r_open is not None:
            at = _find(p, self._r_open, first, n)
            which = 1 if at >= 0 else 0
        if self._t_open is not None:
            t = _find(p, self._t_open, first, n if at < 0 else at)
            if t >= 0:
                at = t
                which = 2
        if bare is not None:
            t = _find(p, bare, first, n if at < 0 else at)
            if t >= 0:
                at = t
                which = 3
        if self._markers is not None:
            t = _find_marker(p, self._markers, first, n if at < 0 else at, &m, self._final)
            if t >= 0:
                at = t
                which = 4
        if at < 0:
            return self._release_or_hold(out, False, first, self._r_open, self._t_open, bare)
        if which == 3 and not self._final and self._t_open is not None:
            # a bare opener inside the open tag's own text ('\n\n<｜DSML｜...'): hold while the tag may complete
            m = _find(<str>self._t_open, bare, 0, PyUnicode_GET_LENGTH(<str>self._t_open))
            if 0 < m <= at and (<str>self._t_open).startswith(PyUnicode_Substring(p, at - m, n)):
                return self._release_or_hold(out, False, at - m, self._r_open, self._t_open, bare)
        if self._tag_ids is not None and (which == 1 or which == 2) and not self._tag_ids.confirmed(
                0 if which == 1 else 2, self._tag_ids.stream_len - n + at):
            return self._as_text(out, p, n, at, self._r_open if which == 1 else self._t_open, False)
        if at > 0:
            self._emit_text(out, PyUnicode_Substring(p, 0, at), False)
        if which == 1:
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._r_open), n)
            self._mode = M_REASONING
            if self._inline:
                self._emit_text(out, <str>self._r_open, False)
        elif which == 2:
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._t_open), n)
            self._enter_tool_mode(False)
        elif which == 4:
            self._pending = PyUnicode_Substring(p, at + m, n)
            self._in_header = _opens_header(p, at, self._header_opens)
        else:
            self._pending = PyUnicode_Substring(p, at, n)
            self._enter_tool_mode(True)
        return True

    cdef int _anchored_bare(self, str p, Py_ssize_t n) except -2:
        """An anchored bare opener at the start of ``p`` (see _at_start): 1 a bare block starts (the
        whitespace is the block's), 0 too short to tell (held), -1 not there (bare calls end)."""
        cdef Py_ssize_t k
        # the reasoning open tag comes first (Mistral's [THINK] beside a bare '['); content starts after it
        cdef int r = _at_start(p, n, self._r_open, self._final, &k)
        if r >= 0:
            return -r  # whole: the tag is read first, bare calls stay possible after it; part: held
        r = _at_start(p, n, self._bare_open, self._final, &k)
        if r == 1:
            self._enter_tool_mode(True)
        if r >= 0:
            return r
        self._bare_open, self._bare_anchored = self._bare_mid, False
        return -1

    cdef int _anchored_text_tags(self, str p, Py_ssize_t n) except -2:
        """The reasoning open tag written as text (``text_reasoning_tags``) at the start of the output:
        1 it opens reasoning, its close tag ends it (whitespace before it dropped); 0 held; -1 not there."""
        cdef Py_ssize_t k
        open_tag = (<tuple>self._alt_tags)[0]
        cdef int r = _at_start(p, n, open_tag, self._final, &k)
        if r == 0:
            return 0
        if r < 0:
            self._alt_tags = None
            return -1
        self._r_open = open_tag
        self._r_close = (<tuple>self._alt_tags)[1]
        self._alt_tags = None
        # the special-token checks and the anchors were for the other tags
        if self._tag_ids is not None:
            self._tag_ids.sid[0] = self._tag_ids.sid[1] = -1
        self._anchor_plain = self._anchor_reasoning = 0
        self._reach_plain = self._reach_reasoning = 0
        self._pending = PyUnicode_Substring(p, k + PyUnicode_GET_LENGTH(<str>open_tag), n)
        self._mode = M_REASONING
        return 1

    cdef bint _consume_reasoning(self, list out) except -1:
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t at, t, first = 0
        cdef int which = 0  # 0 close, 1 tool open, 2 reasoning open, 3 marker (both dropped)
        cdef Py_ssize_t anchor_at, m = 0
        first = _tag_floor(p, n, self._anchor_reasoning, self._reach_reasoning, &anchor_at)
        if anchor_at < 0 or (self._anchor_reasoning and not _may_hold_tag(
                p, n, self._anchor_reasoning, anchor_at, self._r_close, self._t_reasoning, self._r_open, self._markers)):
            return self._release_or_hold(out, True, first, self._r_close, self._t_reasoning, self._r_open)
        at = _find(p, self._r_close, first, n)
        if self._t_reasoning is not None:
            t = _find(p, self._t_reasoning, first, n if at < 0 else at)
            if t >= 0:
                at = t
                which = 1
        if self._r_open is not None:
            t = _find(p, self._r_open, first, n if at < 0 else at)
            if t >= 0:
                at = t
                which = 2
        if self._markers is not None:
            t = _find_marker(p, self._markers, first, n if at < 0 else at, &m, self._final)
            if t >= 0:
                at = t
                which = 3
        if at < 0:
            return self._release_or_hold(out, True, first, self._r_close, self._t_reasoning, self._r_open)
        if self._tag_ids is not None and which <= 2 and not self._tag_ids.confirmed(
                1 if which == 0 else (2 if which == 1 else 0), self._tag_ids.stream_len - n + at):
            return self._as_text(out, p, n, at, self._r_close if which == 0 else (
                self._t_reasoning if which == 1 else self._r_open), True)
        if at > 0:
            self._emit_text(out, PyUnicode_Substring(p, 0, at), True)
        if which == 0:
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._r_close), n)
            self._mode = M_PLAIN
            self._stripping = self._lead_strip is not None
            if self._inline:
                self._emit_text(out, <str>self._r_close, True)
        elif which == 1 and self._call_end is not None:  # the call and all after it: content as written
            self._pending, self._mode, self._passthrough, self._counting = '', M_PLAIN, True, False
            self._emit_text(out, PyUnicode_Substring(p, at, n), False)
        elif which == 1:
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._t_open), n)
            self._enter_tool_mode(False)
        elif which == 2:
            # An explicit open tag inside reasoning carries no text (inline: it is the prompt's tag, written).
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._r_open), n)
            if self._inline and self._inline_open:
                self._emit_text(out, '', True)
        else:
            self._pending = PyUnicode_Substring(p, at + m, n)
            self._in_header = _opens_header(p, at, self._header_opens)
        return True

    cdef bint _consume_header(self) except -1:
        """In a block header (construction.block_headers): dropped at its end marker, else ordinary text."""
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t cut = _header_cut(p, n, self._header_ends, self._header_reach, HEADER_MAX, self._final, self._r_open,
                                          self._t_reasoning if self._mode == M_REASONING else self._t_open,
                                          self._r_close if self._mode == M_REASONING else None, self._markers)
        if cut == -2:
            return False
        if cut > 0:
            self._pending = PyUnicode_Substring(p, cut, n)
        self._in_header = False
        return True

    cdef int _enter_tool_mode(self, bint bare) except -1:
        self._return_mode = self._mode
        self._mode = M_TOOL
        if bare:
            self._tool.begin_bare_block_c()
        elif self._tool_hooks & HOOK_BEGIN_BLOCK:
            self.tool_parser.begin_tool_block()
        else:
            self._tool.begin_block_c()
        return 0

    cdef bint _consume_tool(self, list out) except -1:
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t consumed
        cdef list calls
        cdef bint closed
        if self._tool_hooks == 0:
            # Built-in parser, no Python hooks: nothing can keep a reference to the list.
            calls = self._scratch
            if calls is None:
                calls = self._scratch = []
            elif calls:
                del calls[:]
            consumed = self._tool.feed_c(p, calls, self._final)
            closed = self._tool.block_closed
            if calls:
                self._scratch = []
        elif self._tool_hooks & HOOK_FEED:
            calls = []
            result = self.tool_parser.feed_tool_block(p, calls, final=self._final)
            if not isinstance(result, int) or not 0 <= result <= n:
                raise ValueError(f'feed_tool_block returned {result!r}; expected an int in [0, {n}]')
            consumed = result
            closed = self.tool_parser.block_closed
        else:
            calls = []
            consumed = self._tool.feed_c(p, calls, self._final)
            closed = self._tool.block_closed
        if consumed == n:
            self._pending = ''
        elif consumed:
            self._pending = PyUnicode_Substring(p, consumed, n)
        if closed:
            self._mode = self._return_mode
            self._after_tool_block = True
        if calls:
            out.append((new_delta_message(None, None, calls), True))
        if self._tool is not None and self._tool._handback is not None:
            # a rejected (bare) call: its text is content, and no tool block separates what follows
            if self._tool._handback:  # the block may still be open: the text is of the mode it left
                self._emit_text(out, <str>self._tool._handback, (self._mode if closed else self._return_mode) == M_REASONING)
            if self._bare_anchored:  # text was content: the response no longer starts with a call
                self._bare_open, self._bare_anchored = self._bare_mid, False
            self._tool._handback = None
            self._after_tool_block = False
            if self._tool._replay is not None:  # consumed past the rejection point: read it again
                self._pending = <str>self._tool._replay + self._pending
                self._tool._replay = None
        return consumed > 0 or closed

    cdef bint _resolve_separator(self) except -1:
        """Drop newlines between two tool blocks once the next open tag is confirmed (see tag_search._separator_end)."""
        cdef Py_ssize_t cut = _separator_end(self._pending, <str>self._t_open, self._final)
        if cut < 0:
            return False
        if cut:
            self._pending = PyUnicode_Substring(self._pending, cut, PyUnicode_GET_LENGTH(self._pending))
        self._after_tool_block = False
        return True

    # ---- complete responses -------------------------------------------------

    def parse_complete(self, str text not None, token_ids=None, **kwargs):
        """Parse a whole response: ``(content or None, [ToolCall] or None, reasoning or None)``."""
        if self._count_on:
            self._reasoning_count = 0
            self._counting = self.reasoning_enabled
        content, reasoning, tool_deltas = aggregate_deltas(self.stream_chunk(text, token_ids, final=True))
        tool_calls = self.tool_parser.build_tool_calls(tool_deltas) if self.tool_parser is not None else []
        if reasoning and not content and not tool_calls and not self._lead_stripped and content_forced(
                self.reasoning_parser, self._kwargs):
            content, reasoning = reasoning, None  # the model wrote nothing after its reasoning
        return (content or None), (tool_calls or None), (reasoning or None)


class ResponseParser:
    """Interface of every response parser (one instance per response)."""

    supports_required_tool_choice = False

    @classmethod
    def set_parsers(cls, reasoning_parser_name=None, tool_parser_name=None, tokenizer=None):
        pass

    def __init__(self, request):
        self.request = request
        self.reasoning_tokens = None

    def stream_chunk(self, delta_text, delta_token_ids=None, final=False, **kwargs):
        raise NotImplementedError

    def parse_complete(self, text, token_ids=None, **kwargs):
        raise NotImplementedError


class BaseResponseParser(ResponseParserCore, ResponseParser):
    """Default response parser: content, reasoning and tool calls.

    Configure it with ``set_parsers`` (process-wide, like LMDeploy) or get an
    independent configured subclass with ``with_parsers``.
    """

    reasoning_parser_cls = None
    tool_parser_cls = None
    tokenizer = None
    supports_required_tool_choice = True
    # With a tokenizer and token ids: a reasoning or tool-open tag the tokenizer holds as one
    # token is structure only when it arrived as that token (False: the text alone decides).
    confirm_tags_by_token_id = True
    # True: calls to tools the request does not declare are kept (vLLM; False: dropped, LMDeploy).
    keep_undeclared_tool_calls = False
    # True: with no tool parser, the reasoning dialect's call_open_tag ends reasoning (vLLM replace mode).
    call_ends_reasoning = False
    MODE_PLAIN = 'plain'
    MODE_REASONING = 'reasoning'
    MODE_TOOL = 'tool'

    # No __init__ here: ResponseParserCore.__init__ comes first in the MRO, and
    # without a Python-level override the class calls it straight from C.

    @classmethod
    def set_parsers(cls, reasoning_parser_name=None, tool_parser_name=None, tokenizer=None):
        """Configure this class by registry name; unset names clear earlier settings."""
        cls.reasoning_parser_cls, cls.tool_parser_cls = parser_classes(
            reasoning_parser_name, tool_parser_name, tokenizer, cls.__name__)
        cls.tokenizer = tokenizer

    @classmethod
    def with_parsers(cls, reasoning_parser_name=None, tool_parser_name=None, tokenizer=None):
        """Return a new subclass configured independently of ``cls`` (one per served model).

        Engine names that stand for a whole response parser (``registry.RESPONSE_PARSER_NAMES``:
        vLLM's ``openai`` / ``openai_gptoss``, SGLang's ``gpt-oss``) return that parser's class.
        """
        target = response_parser_for(reasoning_parser_name, tool_parser_name)
        if target is not None:
            return ResponseParserManager.get(target).with_parsers(None, None, tokenizer)
        name = f'{cls.__name__}[{reasoning_parser_name or "-"},{tool_parser_name or "-"}]'
        configured = type(name, (cls,), {'__module__': cls.__module__, '__qualname__': name})
        configured.set_parsers(reasoning_parser_name, tool_parser_name, tokenizer)
        return configured

    @classmethod
    def chat_template_kwargs_from_request(cls, request):
        return chat_template_kwargs_from_request(request)


set_default_kwargs_func(BaseResponseParser.__dict__['chat_template_kwargs_from_request'].__func__)

ResponseParserManager.register_module('default', module=BaseResponseParser)
