"""The Harmony family: OpenAI Harmony response parsing (GPT-OSS; see ``lmparse.dialects.gpt_oss``).

Harmony output is a sequence of messages::

    [<|start|>assistant[ to=R]]<|channel|>C[ to=R][ <|constrain|>T]<|message|>BODY(<|end|>|<|call|>|<|return|>)

The prompt normally ends with ``<|start|>assistant``, so the first header has
no start token. No vocabulary is needed: in text mode (the engine detokenizes
with ``skip_special_tokens=False``) the special tokens are found as text; in
token-id mode they arrive only as ids in ``delta_token_ids`` (their ids are
fixed by the ``o200k_harmony`` encoding) while ``delta_text`` carries the rest.
"""
import logging

from cpython.unicode cimport PyUnicode_FindChar, PyUnicode_Substring

from lmparse.harmony_ids cimport (
    SpecialAligner, T_CALL, T_CHANNEL, T_CONSTRAIN, T_END, T_MESSAGE, T_NONE, T_PARTIAL, T_RETURN, T_START,
    first_special, segment_id_lists, tag_of_id,
)
from lmparse.harmony_ids cimport is_terminator as _is_terminator
from lmparse.protocol cimport DeltaMessage, new_delta_message
from lmparse.token_ids cimport TokenIds, ids_at, ids_close, ids_open
from lmparse.tools.base cimport ToolParser

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil

logger = logging.getLogger('lmparse')

__all__ = [
    'CALL_ID',
    'CHANNEL_ID',
    'CONSTRAIN_ID',
    'END_ID',
    'HarmonyResponseParser',
    'HARMONY_SPECIAL_TOKEN_IDS',
    'HarmonyParserCore',
    'HarmonyToolParser',
    'MESSAGE_ID',
    'RETURN_ID',
    'START_ID',
    'parse_header',
]

# Special-token ids of the o200k_harmony encoding, from the published Harmony
# format (openai/harmony, docs/format.md, "Special Tokens"); checked against
# openai_harmony 0.0.8 (load_harmony_encoding(HARMONY_GPT_OSS).encode(tag, allowed_special='all')).
RETURN_ID = 200002
CONSTRAIN_ID = 200003
CHANNEL_ID = 200005
START_ID = 200006
END_ID = 200007
MESSAGE_ID = 200008
CALL_ID = 200012

cdef tuple TAGS = ('', '<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|constrain|>',
                   '<|return|>', '<|call|>')

HARMONY_SPECIAL_TOKEN_IDS = {
    '<|start|>': START_ID,
    '<|end|>': END_ID,
    '<|message|>': MESSAGE_ID,
    '<|channel|>': CHANNEL_ID,
    '<|constrain|>': CONSTRAIN_ID,
    '<|return|>': RETURN_ID,
    '<|call|>': CALL_ID,
}

cdef enum:
    ST_HEADER = 0    # collecting a header up to <|message|>
    ST_CONTENT = 1   # inside a message body
    ST_BETWEEN = 2   # after a terminator, expecting <|start|>

# What a message body becomes.
cdef enum:
    K_DROP = 0
    K_CONTENT = 1
    K_REASONING = 2
    K_TOOL = 3

# Output channels of the delta being built.
cdef enum:
    OUT_NONE = 0
    OUT_CONTENT = 1
    OUT_REASONING = 2
    OUT_TOOL = 3

cdef enum:
    MODE_AUTO = 0
    MODE_TEXT = 1
    MODE_IDS = 2


cdef int _match_tag(str p, Py_ssize_t at, Py_ssize_t n, bint all_tags, bint final):
    """Tag code starting at ``at`` (p[at] == '<'); T_PARTIAL when p[at:] may still grow into one."""
    cdef int code
    cdef Py_ssize_t rest = n - at
    cdef str tag
    if rest >= 2 and PyUnicode_READ(PyUnicode_KIND(p), PyUnicode_DATA(p), at + 1) != u'|':
        return T_NONE
    for code in range(1, 8):
        if not all_tags and not _is_terminator(code):
            continue
        tag = <str>TAGS[code]
        if p.startswith(tag, at):
            return code
    if final:
        return T_NONE
    for code in range(1, 8):
        if not all_tags and not _is_terminator(code):
            continue
        tag = <str>TAGS[code]
        if rest < PyUnicode_GET_LENGTH(tag) and tag.startswith(PyUnicode_Substring(p, at, n)):
            return T_PARTIAL
    return T_NONE


cdef bint _has_tag_text(str s, int code, bint at_start):
    """Whether ``s`` holds the tag of ``code``, or ends inside it (text mode carries the specials).

    ``at_start``: the special is the first token of the response, so in text mode ``s`` starts with
    its tag or (the engine holding text back) with a part of it.
    """
    cdef str tag = <str>TAGS[code]
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), k
    if at_start and n:
        return s.startswith(tag) or tag.startswith(s)
    if s.find(tag) >= 0:
        return True
    for k in range(2, min(n, PyUnicode_GET_LENGTH(tag) - 1) + 1):
        if tag.startswith(PyUnicode_Substring(s, n - k, n)):
            return True
    return False


_NON_ASSISTANT_ROLES = frozenset(('user', 'system', 'developer'))


def parse_header(str header not None, bint explicit_start=False):
    """Classify one message header: ``(kind, tool_name)``.

    ``kind`` is 'tool', 'reasoning', 'content' or 'drop'. A ``functions.NAME``
    recipient on the commentary or analysis channel is a tool call; analysis
    is reasoning; final, commentary without a recipient, a header without a
    channel and unknown channels are content; other recipients (built-in
    tools such as ``python`` or ``browser.search``) and messages of
    non-assistant roles are dropped.
    """
    cdef int kind = _classify(header, explicit_start)
    return (('drop', 'content', 'reasoning', 'tool')[kind & 3], _tool_name(header) if kind == K_TOOL else None)


cdef str _recipient(str words_text):
    for word in words_text.split():
        if word.startswith('to='):
            return word[3:]
    return None


cdef object _tool_name(str header):
    words_text = header.replace('<|channel|>', ' ').replace('<|constrain|>', ' ')
    recipient = _recipient(words_text)
    if recipient is None:
        return None
    for stop in ('<', '|'):
        cut = recipient.find(stop)
        if cut >= 0:
            recipient = recipient[:cut]
    at = recipient.find('functions.')
    if at < 0:
        return None
    name = recipient[at + 10:]
    return name or None


cdef int _classify(str header, bint explicit_start):
    ch_at = header.find('<|channel|>')
    role_part = header if ch_at < 0 else header[:ch_at]
    channel = None
    if ch_at >= 0:
        rest = header[ch_at + 11:].replace('<|constrain|>', ' ').replace('<|channel|>', ' ').split()
        if rest and not rest[0].startswith('to='):
            channel = rest[0]
    if explicit_start:
        role_words = role_part.replace('<|constrain|>', ' ').split()
        if role_words and role_words[0] in _NON_ASSISTANT_ROLES:
            return K_DROP
    words_text = header.replace('<|channel|>', ' ').replace('<|constrain|>', ' ')
    recipient = _recipient(words_text)
    if (channel == 'commentary' or channel == 'analysis') and _tool_name(header) is not None:
        return K_TOOL
    if channel == 'analysis':
        return K_REASONING
    if channel == 'final':
        return K_CONTENT
    if recipient is not None:
        return K_DROP
    return K_CONTENT


cdef class HarmonyToolParser(ToolParser):
    """Call identity, filtering and delta building for Harmony tool messages.

    The Harmony grammar itself is parsed by the response parser; this class
    exists so ``tool_parser.build_tool_calls`` and the "tool emitted" logic
    of servers work as with every other dialect.
    """

    structural_tag_model = 'harmony'
    tool_close_prefixes = ()

    @classmethod
    def get_tool_open_tag(cls):
        return '<|channel|>'

    @classmethod
    def get_tool_close_tag(cls):
        return '<|call|>'

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        raise TypeError('HarmonyToolParser is driven by HarmonyResponseParser; it has no outer tool block')


cdef class HarmonyParserCore:
    """Streaming Harmony state machine (one instance per response)."""

    cdef public str _pending
    cdef int _state
    cdef int _kind
    cdef int _mode
    cdef bint _explicit_start
    cdef list _header_parts
    cdef bint _header_has_tag
    cdef bint _any_message
    cdef bint _final
    cdef bint _received_any
    cdef bint _had_text
    cdef SpecialAligner _aligner
    cdef HarmonyToolParser _tool
    cdef public object request
    cdef public object tool_parser
    cdef object _tokenizer
    # current output: the delta being extended within one chunk
    cdef list _out
    cdef int _out_kind
    cdef DeltaMessage _out_msg
    cdef list _out_calls
    # Text of the open delta: the first part alone (the usual case), later ones listed.
    cdef str _out_first
    cdef list _out_parts
    # reasoning tokens: ordinary ids per message body (from ids) and message kinds (from the parser)
    cdef bint _ids_in_body
    cdef list _body_token_counts
    cdef list _message_kinds

    def __cinit__(self, *args, **kwargs):
        self._pending = ''
        self._header_parts = []
        self._body_token_counts = []
        self._message_kinds = []
        self._out_first = None
        self._out_parts = []

    def __init__(self, request):
        from lmparse.harmony_request import adjust_harmony_request
        cls = type(self)
        self._tool = HarmonyToolParser()
        self.tool_parser = self._tool
        self.request = adjust_harmony_request(request, self._tool)
        self._tokenizer = getattr(cls, 'tokenizer', None)
        mode = getattr(cls, 'input_mode', 'auto')
        if mode == 'auto':
            self._mode = MODE_AUTO
        elif mode == 'text':
            self._mode = MODE_TEXT
        elif mode == 'ids':
            self._mode = MODE_IDS
        else:
            raise ValueError(f"input_mode must be 'auto', 'text' or 'ids', got {mode!r}")
        self._state = ST_HEADER
        self._kind = K_DROP
        self._explicit_start = False
        self._header_has_tag = False
        self._any_message = False
        self._final = False
        self._received_any = False
        self._had_text = False
        self._aligner = None
        self._ids_in_body = False

    # ---- public state ---------------------------------------------------------

    @property
    def reasoning_tokens(self):
        """Tokens of analysis-channel bodies (tool calls aside), counted from ``delta_token_ids``."""
        cdef Py_ssize_t total = 0, i
        cdef Py_ssize_t n = min(len(self._body_token_counts), len(self._message_kinds))
        for i in range(n):
            if self._message_kinds[i] == K_REASONING:
                total += <Py_ssize_t>self._body_token_counts[i]
        return total

    @property
    def input_mode_in_use(self):
        """'text', 'ids' or 'auto' (not decided yet: no special-token id seen)."""
        return ('auto', 'text', 'ids')[self._mode]

    @property
    def state(self):
        return ('header', 'content', 'between')[self._state]

    # ---- streaming ------------------------------------------------------------

    def stream_chunk(self, delta_text, delta_token_ids=None, final=False, **kwargs):
        """Route one engine chunk; returns ``[(DeltaMessage, tool_calls_emitted), ...]``."""
        if delta_text is None:
            delta_text = ''
        elif not isinstance(delta_text, str):
            raise TypeError(f'delta_text must be str, not {type(delta_text).__name__}')
        cdef str text = <str>delta_text
        cdef TokenIds ids
        ids_open(&ids, delta_token_ids)  # a list as it is, an integer buffer in place
        try:
            return self._route(text, &ids, bool(final))
        finally:
            ids_close(&ids)

    cdef list _route(self, str text, TokenIds *ids, bint final):
        # An empty step yields no delta (not an empty content delta): a response of
        # tool calls only keeps content None. The runner/adapters own the first role chunk.
        self._received_any = True
        self._final = final
        cdef list out = []
        self._out = out
        self._out_kind = OUT_NONE
        self._out_msg = None
        self._out_first = None  # nothing left over from a chunk that raised
        if self._out_parts:
            self._out_parts = []
        cdef bint has_special = False
        cdef int code
        cdef Py_ssize_t at
        if ids.n:
            has_special = self._count_ids(ids)
        if self._mode == MODE_AUTO and has_special:
            code = first_special(ids, &at)
            if _has_tag_text(self._pending + text if self._pending else text, code, at == 0 and not self._had_text):
                self._mode = MODE_TEXT
            else:
                self._mode = MODE_IDS
                if self._pending:
                    held = self._pending
                    self._pending = ''
                    self._on_text(held)
        if self._mode == MODE_IDS:
            self._feed_ids(text, ids)
        else:
            if has_special and self._aligner is None:
                # Text mode with ids: from the first special id on, the ids decide which tag text is a tag.
                self._aligner = SpecialAligner(self._had_text)
            if text:
                self._pending = self._pending + text if self._pending else text
                self._had_text = True
            if self._aligner is not None:
                self._aligner.add_ids(ids)
                self._scan_aligned()
            else:
                self._scan_text()
        if self._final:
            self._finish()
        self._flush_out()
        self._out = None
        self._out_msg = None
        return out

    def parse_complete(self, str text not None, token_ids=None, **kwargs):
        """Parse a whole response: ``(content or None, [ToolCall] or None, reasoning or None)``."""
        content, reasoning, tool_deltas = aggregate_deltas(self.stream_chunk(text, token_ids, final=True))
        tool_calls = self._tool.build_tool_calls(tool_deltas)
        return (content or None), (tool_calls or None), (reasoning or None)

    # ---- token ids ------------------------------------------------------------

    cdef bint _count_ids(self, TokenIds *ids) except -1:
        """Count body tokens per message; return whether a Harmony special id occurs."""
        cdef bint in_body = self._ids_in_body
        cdef bint seen = False
        cdef int code
        cdef list counts = self._body_token_counts
        cdef Py_ssize_t pending = 0, i
        for i in range(ids.n):
            code = tag_of_id(ids_at(ids, i))
            if code != T_NONE:
                seen = True
            if in_body:
                if _is_terminator(code):
                    in_body = False
                    self._add_body_tokens(pending)
                    pending = 0
                else:
                    pending += 1
            elif code == T_MESSAGE:
                in_body = True
                counts.append(0)
        self._add_body_tokens(pending)
        self._ids_in_body = in_body
        return seen

    cdef int _add_body_tokens(self, Py_ssize_t n) except -1:
        cdef list counts = self._body_token_counts
        cdef Py_ssize_t last = len(counts) - 1
        if n and last >= 0:
            counts[last] = <Py_ssize_t>counts[last] + n
        return 0

    cdef int _feed_ids(self, str text, TokenIds *ids) except -1:
        cdef list codes = []
        cdef list counts = []
        cdef int code
        cdef Py_ssize_t i, run = 0, nonempty = 0, last = 0
        for i in range(ids.n):
            code = tag_of_id(ids_at(ids, i))
            if code == T_NONE:
                run += 1
            else:
                codes.append(code)
                counts.append(run)
                run = 0
        counts.append(run)
        if not codes:
            if text:
                self._on_text(text)
            return 0
        for i in range(len(counts)):
            if counts[i]:
                nonempty += 1
                last = i
        if not text:
            parts = None
        elif nonempty <= 1:
            parts = [''] * len(counts)
            parts[last if nonempty else 0] = text
        else:
            from lmparse.harmony_request import split_chunk_text
            seg_ids = segment_id_lists(ids) if self._tokenizer is not None else [()] * len(counts)
            parts = split_chunk_text(text, codes, counts, seg_ids, self._state, self._tokenizer)
        for i in range(len(codes) + 1):
            if parts is not None and parts[i]:
                self._on_text(<str>parts[i])
            if i < len(codes):
                self._on_tag(<int>codes[i])
        return 0

    # ---- text ---------------------------------------------------------------

    cdef int _scan_text(self) except -1:
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t pos = 0, at
        cdef int code
        while pos < n:
            at = pos
            code = T_NONE
            while True:
                at = PyUnicode_FindChar(p, u'<', at, n, 1)
                if at < 0:
                    break
                code = _match_tag(p, at, n, self._state != ST_CONTENT, self._final)
                if code != T_NONE:
                    break
                at += 1
            if at < 0:
                self._on_text(PyUnicode_Substring(p, pos, n) if pos else p)
                pos = n
                break
            if at > pos:
                self._on_text(PyUnicode_Substring(p, pos, at))
            if code == T_PARTIAL:
                pos = at
                break
            self._on_tag(code)
            pos = at + PyUnicode_GET_LENGTH(<str>TAGS[code])
        if pos >= n:
            self._pending = ''
        elif pos:
            self._pending = PyUnicode_Substring(p, pos, n)
        return 0

    cdef int _scan_aligned(self) except -1:
        cdef list events = []
        cdef str p = self._pending
        cdef Py_ssize_t used = self._aligner.scan(p, self._final, events)
        self._pending = PyUnicode_Substring(p, used, PyUnicode_GET_LENGTH(p)) if used else p
        for event in events:
            if type(event) is str:
                self._on_text(<str>event)
            else:
                self._on_tag(<int>event)
        return 0

    # ---- events ---------------------------------------------------------------

    cdef int _on_text(self, str s) except -1:
        if not s:
            return 0
        if self._state == ST_CONTENT:
            self._emit_body(s)
        elif self._state == ST_HEADER:
            self._header_parts.append(s)
        else:
            # Text outside any message (the model skipped <|start|>): keep it as content.
            self._emit(OUT_CONTENT, s)
        return 0

    cdef int _on_tag(self, int code) except -1:
        cdef int state = self._state
        if state == ST_CONTENT:
            if _is_terminator(code):
                self._state = ST_BETWEEN
                self._kind = K_DROP
            else:
                # Only terminators end a body; other specials are body text.
                self._emit_body(<str>TAGS[code])
            return 0
        if state == ST_BETWEEN:
            if code == T_START:
                self._begin_header(True)
            elif code == T_CHANNEL or code == T_CONSTRAIN:
                # Missing <|start|>: an assistant header begins here.
                self._begin_header(False)
                self._header_parts.append(<str>TAGS[code])
                self._header_has_tag = True
            elif code == T_MESSAGE:
                self._begin_header(False)
                self._open_body()
            return 0
        # ST_HEADER
        if code == T_MESSAGE:
            self._open_body()
        elif code == T_START:
            # A new header restarts: whatever came before was not a header.
            self._begin_header(True)
        elif code == T_CHANNEL or code == T_CONSTRAIN:
            self._header_parts.append(<str>TAGS[code])
            self._header_has_tag = True
        else:
            # A terminator before <|message|>: a message without a body.
            self._header_parts.clear()
            self._state = ST_BETWEEN
            self._any_message = True
        return 0

    cdef int _begin_header(self, bint explicit_start) except -1:
        self._state = ST_HEADER
        self._explicit_start = explicit_start
        self._header_has_tag = explicit_start
        self._header_parts.clear()
        return 0

    cdef int _open_body(self) except -1:
        cdef str header = ''.join(self._header_parts)
        self._header_parts.clear()
        self._kind = _classify(header, self._explicit_start)
        self._message_kinds.append(self._kind)
        self._state = ST_CONTENT
        self._any_message = True
        if self._kind == K_TOOL:
            self._tool.start_call(None)
            self._tool_emit(_tool_name(header), None)
        return 0

    cdef int _finish(self) except -1:
        """End of input: release what is held; close the open message."""
        cdef str header
        if self._pending:
            held = self._pending
            self._pending = ''
            self._on_text(held)
        if self._state == ST_HEADER:
            header = ''.join(self._header_parts)
            self._header_parts.clear()
            if header and not self._header_has_tag and not self._any_message:
                # No Harmony structure at all: the model wrote plain text.
                self._emit(OUT_CONTENT, header)
        self._state = ST_BETWEEN
        self._kind = K_DROP
        return 0

    # ---- output ---------------------------------------------------------------

    cdef int _emit_body(self, str s) except -1:
        cdef int kind = self._kind
        if kind == K_CONTENT:
            self._emit(OUT_CONTENT, s)
        elif kind == K_REASONING:
            self._emit(OUT_REASONING, s)
        elif kind == K_TOOL:
            self._tool_emit(None, s)
        return 0

    cdef int _tool_emit(self, object name, object arguments) except -1:
        cdef list calls
        if self._out_kind != OUT_TOOL:
            self._flush_out()
            self._out_kind = OUT_TOOL
            self._out_calls = []
        calls = self._out_calls
        self._tool.emit_c(calls, name, arguments)
        return 0

    cdef int _emit(self, int out_kind, str s) except -1:
        if self._out_kind != out_kind:
            self._flush_out()
            self._out_kind = out_kind
        if self._out_first is None:
            self._out_first = s
        else:
            self._out_parts.append(s)
        return 0

    cdef int _flush_out(self) except -1:
        cdef int kind = self._out_kind
        cdef str text
        if kind == OUT_TOOL:
            if self._out_calls:
                self._out.append((new_delta_message(None, None, self._out_calls), True))
            self._out_calls = None
        elif kind != OUT_NONE:
            text = self._out_first
            self._out_first = None
            if self._out_parts:
                self._out_parts.insert(0, text)
                text = ''.join(self._out_parts)
                self._out_parts = []
            if text:
                if kind == OUT_CONTENT:
                    self._out.append((new_delta_message(text, None, None), False))
                else:
                    self._out.append((new_delta_message(None, text, None), False))
        self._out_kind = OUT_NONE
        return 0


from lmparse.response import ResponseParser as _ResponseParser, aggregate_deltas  # noqa: E402


class HarmonyResponseParser(HarmonyParserCore, _ResponseParser):
    """Harmony response parser: analysis -> reasoning, final -> content, functions -> tool calls.

    ``input_mode`` chooses how special tokens arrive: 'text' (in ``delta_text``,
    the engine detokenizes with ``skip_special_tokens=False``; ``adjust_request``
    asks for that), 'ids' (only in ``delta_token_ids``), or 'auto' (decided at
    the first chunk carrying a Harmony special-token id).
    """

    tool_parser_cls = HarmonyToolParser
    reasoning_parser_cls = None
    tokenizer = None
    input_mode = 'auto'
    supports_required_tool_choice = True

    def __init__(self, request):
        HarmonyParserCore.__init__(self, request)

    @classmethod
    def set_parsers(cls, reasoning_parser_name=None, tool_parser_name=None, tokenizer=None):
        """Harmony has its own channels and tool grammar: parser names are accepted and ignored.

        ``tokenizer`` (optional) lets token-id mode split a chunk that mixes
        several Harmony segments exactly; it is never required.
        """
        for label, value in (('reasoning_parser_name', reasoning_parser_name),
                             ('tool_parser_name', tool_parser_name)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f'{label} must be a str or None, got {type(value).__name__}')
        if reasoning_parser_name is not None or tool_parser_name is not None:
            logger.debug('gpt-oss: ignoring reasoning/tool parser names %r, %r (Harmony parses its own channels)',
                         reasoning_parser_name, tool_parser_name)
        cls.tokenizer = tokenizer

    @classmethod
    def with_parsers(cls, reasoning_parser_name=None, tool_parser_name=None, tokenizer=None, input_mode=None):
        """Return an independently configured subclass."""
        name = f'{cls.__name__}[{input_mode or cls.input_mode}]'
        attrs = {'__module__': cls.__module__, '__qualname__': name}
        if input_mode is not None:
            attrs['input_mode'] = input_mode
        configured = type(name, (cls,), attrs)
        configured.set_parsers(reasoning_parser_name, tool_parser_name, tokenizer)
        return configured
