"""The recipient-channel family: messages whose header decides what their body is (Muse, Beam).

Output is a sequence of messages::

    [<|start|>ROLE][ to=RECIPIENT][<|channel|>CHANNEL[ <|constrain|>FMT]]<|message|>BODY END

The prompt ends inside the first header (``<|start|>assistant``), so the first
header has no ``<|start|>``. Only the header decides what a body is: reasoning,
content, dropped, or a tool channel, whose body holds the calls --
``<atem:invoke name="N">`` elements of parameters (Muse) or, the call named by
the recipient, the parameters themselves (Beam). Call markup anywhere else (an
``<atem:invoke>`` echoed in reasoning or in the answer) is text.

A body ends at a terminator (``END``, dropped), at ``<|start|>`` (the next
header), or at a header written inside it without ``<|start|>``
(``in_body_headers``: `` to=NAME<|message|>`` after unterminated Muse reasoning,
`` to=NAME<|channel|>...`` in Beam), so a model that skips a terminator does not
lose the call that follows. Text outside any message is ``unframed`` (content).

A string value (no schema or a string schema in Beam, a string-typed one in
Muse Spark) streams as it arrives; any other is held to its close tag and
converted once: the value's JSON text when all of it is JSON, else the raw text
as a string (Muse), or typed by the schema as ``xml_values`` types XML (Beam). Markers
are found by scanning for ``<`` and matching in place; the router's buffer keeps
only undecided tails (a partial marker, a header, a possible `` to=`` header
start); held values live in a ``HeldText``.
"""

from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring

from lmparse.protocol cimport new_delta_message
from lmparse.tools.attributes cimport _attribute
from lmparse.tools.base cimport ToolParser, marker_match
from lmparse.tools.held_text cimport held_append, held_free, held_take_with
from lmparse.tools.json_escape cimport json_quoted, json_string_body
from lmparse.tools.xml_values cimport held_value_json, is_json, schema_types_c, value_kind

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil

__all__ = ['KINDS', 'ChannelGrammar', 'ChannelToolParser']

# What a message body becomes (the names a grammar declares, in enum order).
KINDS = ('content', 'reasoning', 'drop', 'tool')

cdef enum:
    K_CONTENT = 0
    K_REASONING = 1
    K_DROP = 2
    K_TOOL = 3

cdef enum:
    S_BOUNDARY = 0   # between messages (or before the first)
    S_HEADER = 1     # at a header, up to its message marker
    S_BODY = 2

# Phases of a tool body.
cdef enum:
    C_SEEK = 0       # outside an invoke: everything up to the next one is dropped
    C_INVOKE = 1     # at an invoke tag, up to its '>'
    C_PARAMS = 2     # between parameters
    C_PARAM = 3      # at a parameter tag, up to its '>'
    C_VALUE = 4      # in a value: a string value streams, any other is held to its close
    C_SKIP = 5       # an invoke without a name: skipped to its close

# What starts at a '<' of a body.
cdef enum:
    M_NONE = 0
    M_PARTIAL = 1
    M_END = 2
    M_START = 3
    M_HEADER = 4

cdef enum:
    HEADER_MAX = 256   # a "header" without its message marker this long (or with a newline) is text
    TAG_MAX = 1024     # an invoke / parameter tag without its '>' this long is dropped

MAX_HEADER = HEADER_MAX  # for Python: the longest header the router holds undecided




cdef int _kind(object name, str what) except -1:
    if name not in KINDS:
        raise ValueError(f'{what}: {name!r} is not one of {KINDS}')
    return KINDS.index(name)


cdef class ChannelGrammar:
    """One recipient-channel dialect's syntax (see the module docstring); immutable once built.

    ``recipients`` maps a recipient to a kind (any other recipient is a tool
    channel); ``channels`` maps a channel name to a kind when the header has no
    recipient; ``no_recipient`` is the kind of a header with neither.
    ``invoke``/``invoke_close``: the call element (None: the recipient names the
    call and the body is its parameters). ``values``: ``'json_or_raw'`` or
    ``'schema'``; ``keep_string_parameters``: a parameter the schema types
    exactly ``"string"`` keeps its raw text (Muse Spark).
    """

    def __init__(self, *, tuple ends not None, dict recipients not None, str parameter not None,
                 str parameter_close not None, no_recipient='content', dict channels=None, channel=None,
                 str start='<|start|>', str message='<|message|>', tuple in_body_headers=(), unframed='content',
                 invoke=None, invoke_close=None, bint optional_parameter_close=False, bint value_newlines=False,
                 values='json_or_raw', bint keep_string_parameters=False):
        markers = ends + in_body_headers + (start, message) + ((channel,) if channel is not None else ())
        for m in markers:
            if not isinstance(m, str) or not (<str>m).startswith('<|') or len(m) < 3:
                raise ValueError(f'channel markers are strings starting with "<|": {m!r}')
        if not ends:
            raise ValueError('a grammar needs at least one message terminator')
        if (invoke is None) != (invoke_close is None):
            raise ValueError('invoke and invoke_close are declared together')
        for m in (invoke, invoke_close, parameter, parameter_close):
            if m is not None and (not isinstance(m, str) or not (<str>m).startswith('<')):
                raise ValueError(f'call markup starts with "<": {m!r}')
        if values not in ('json_or_raw', 'schema'):
            raise ValueError(f"values must be 'json_or_raw' or 'schema', not {values!r}")
        self.start, self.message, self.channel, self.ends = start, message, channel, ends
        self.in_body_headers = in_body_headers
        self.recipients = dict(recipients)
        self.channels = dict(channels or {})
        self.rk = {r: _kind(k, f'recipient {r!r}') for r, k in recipients.items()}
        self.ck = {c: _kind(k, f'channel {c!r}') for c, k in self.channels.items()}
        self.no_recipient, self.unframed = no_recipient, unframed
        self.k_no_recipient = _kind(no_recipient, 'no_recipient')
        self.k_unframed = _kind(unframed, 'unframed')
        if self.k_unframed == K_TOOL:
            raise ValueError('text outside any message cannot be a tool channel')
        self.invoke, self.invoke_close = invoke, invoke_close
        self.parameter, self.parameter_close = parameter, parameter_close
        self.optional_parameter_close, self.value_newlines = optional_parameter_close, value_newlines
        self.values = values
        self.schema_values = values == 'schema'
        self.keep_string_parameters = keep_string_parameters

    def __repr__(self):
        return f'ChannelGrammar(ends={self.ends!r}, recipients={self.recipients!r}, channels={self.channels!r})'


cdef class ChannelToolParser(ToolParser):
    """A recipient-channel dialect's tool half: call identity, filtering and emission.

    The response router reads the messages (``ChannelRouter``); this class is
    not a block parser on its own. A dialect declares ``channel_grammar``.
    """

    tool_open_tag = '<|message|>'
    tool_close_tag = None
    channel_grammar = None

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        raise TypeError(f'{type(self).__name__} reads recipient-channel messages: use it through a response '
                        f'parser (BaseResponseParser.with_parsers), not feed_tool_block')


cdef object channel_router(object reasoning_parser, object tool_parser, bint tool_active):
    """The router for a response whose parsers declare a ``channel_grammar`` (None: neither does)."""
    g_r = getattr(reasoning_parser, 'channel_grammar', None) if reasoning_parser is not None else None
    g_t = getattr(tool_parser, 'channel_grammar', None) if tool_parser is not None else None
    if g_r is None and g_t is None:
        return None
    if (reasoning_parser is not None and g_r is None) or (tool_parser is not None and g_t is None) or (
            g_r is not None and g_t is not None and g_r is not g_t):
        raise ValueError(f'{type(reasoning_parser).__name__} and {type(tool_parser).__name__}: a recipient-channel '
                         f'parser pairs only with the other half of the same grammar (or none)')
    g = g_t if g_t is not None else g_r
    if not isinstance(g, ChannelGrammar):
        raise TypeError(f'channel_grammar must be a ChannelGrammar, not {type(g).__name__}')
    if tool_parser is not None and not isinstance(tool_parser, ToolParser):
        raise TypeError(f'{type(tool_parser).__name__} must be a ToolParser')
    return ChannelRouter(g, tool_parser if tool_active else None)


cdef class ChannelRouter:
    """Streams one response's messages; the response router hands it its whole buffer."""

    def __cinit__(self, ChannelGrammar g not None, ToolParser tool):
        self.g = g
        self.tool = tool
        self.state = S_BOUNDARY
        self.kind = K_CONTENT
        self.last_ws = True
        self.calls = []

    def __dealloc__(self):
        held_free(&self.value)

    cdef Py_ssize_t feed(self, str p, bint final, list out) except -1:
        """Consume a prefix of ``p``; returns its length (the rest stays in the caller's buffer)."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p), pos = 0, before
        cdef int st
        while True:
            st = self.state
            before = pos
            if st == S_BOUNDARY:
                pos = self._boundary(p, pos, n, final)
            elif st == S_HEADER:
                pos = self._header(p, pos, n, final, out)
            else:
                pos = self._body(p, pos, n, final, out)
            if pos == before and self.state == st:
                break
        if final:
            if self.state == S_BODY:
                self._end_body()
            # left: whitespace after the last message, or a header the output ended inside (framing)
            self.state = S_BOUNDARY
            pos = n
        self._flush(out)
        return pos

    cdef int _flush(self, list out) except -1:
        if self.calls:
            out.append((new_delta_message(None, None, self.calls), True))
            self.calls = []
        return 0

    # ---- framing ------------------------------------------------------------

    cdef int _opener(self, str p, int kind, void *data, Py_ssize_t at, Py_ssize_t n, bint final) except -1:
        """2: a header starts at ``at``; 1: it may (more text decides); 0: text starts there."""
        cdef ChannelGrammar g = self.g
        cdef Py_UCS4 ch = PyUnicode_READ(kind, data, at)
        cdef int r, partial = 0
        if ch == u'<':
            for m in ((g.start, g.message) if g.channel is None else (g.start, g.message, g.channel)):
                r = marker_match(kind, data, at, n, <str>m)
                if r == 2:
                    return 2
                partial |= r
            return 1 if partial and not final else 0
        if ch == u't':
            r = marker_match(kind, data, at, n, 'to=')
            return 2 if r == 2 else (1 if r and not final else 0)
        return 0

    cdef Py_ssize_t _header_end(self, str p, Py_ssize_t at, Py_ssize_t n, bint final) except -5:
        """Offset of the message marker ending the header at ``at``; -1 not a header (a newline, or
        HEADER_MAX characters first), -2 undecided, -4 the output ended inside it."""
        cdef str message = self.g.message
        cdef Py_ssize_t window = at + HEADER_MAX + PyUnicode_GET_LENGTH(message)
        cdef Py_ssize_t end = window if window < n else n
        cdef Py_ssize_t m = PyUnicode_Find(p, message, at, end, 1)
        if PyUnicode_FindChar(p, u'\n', at, m if m >= 0 else end, 1) >= 0:
            return -1
        if m >= 0:
            return m
        if n >= window:
            return -1  # the whole window arrived without the marker: decided the same for any chunking
        return -4 if final else -2

    cdef Py_ssize_t _boundary(self, str p, Py_ssize_t pos, Py_ssize_t n, bint final) except -1:
        cdef int kind = PyUnicode_KIND(p)
        cdef void *data = PyUnicode_DATA(p)
        cdef Py_ssize_t i = pos
        cdef int r
        while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        if i == n:
            return n if final else pos  # whitespace between messages: dropped before a header
        r = self._opener(p, kind, data, i, n, final)
        if r == 1:
            return pos
        if r == 2:
            self.state = S_HEADER
            return i
        self._begin(self.g.k_unframed, None)
        return pos

    cdef Py_ssize_t _header(self, str p, Py_ssize_t pos, Py_ssize_t n, bint final, list out) except -1:
        cdef Py_ssize_t e = self._header_end(p, pos, n, final)
        if e >= 0:
            e += PyUnicode_GET_LENGTH(self.g.message)
            self._open_message(p, pos, e - PyUnicode_GET_LENGTH(self.g.message))
            if self.framed:
                self._emit(out, PyUnicode_Substring(p, pos, e), K_CONTENT)
            return e
        if e == -2:
            return pos
        if e == -4 and PyUnicode_READ(PyUnicode_KIND(p), PyUnicode_DATA(p), pos) == u'<':
            return n  # the output ended inside a header: framing, no body
        # not a header: text outside any message (its first character is not a marker again)
        self._begin(self.g.k_unframed, None)
        self.skip = 1
        return pos

    cdef int _open_message(self, str p, Py_ssize_t a, Py_ssize_t b) except -1:
        """Start the message whose header is ``p[a:b]``."""
        cdef ChannelGrammar g = self.g
        cdef int kind = PyUnicode_KIND(p)
        cdef void *data = PyUnicode_DATA(p)
        cdef Py_ssize_t t = a, e
        cdef Py_UCS4 ch
        recipient = channel = None
        while True:
            t = PyUnicode_Find(p, 'to=', t, b, 1)
            if t < 0:
                break
            ch = PyUnicode_READ(kind, data, t - 1) if t > a else u' '
            if Py_UNICODE_ISSPACE(ch) or ch == u'>':
                e = t + 3
                while e < b and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, e)) and \
                        PyUnicode_READ(kind, data, e) != u'<':
                    e += 1
                if e > t + 3:
                    recipient = PyUnicode_Substring(p, t + 3, e)
                break
            t += 1
        if g.channel is not None:
            t = PyUnicode_Find(p, <str>g.channel, a, b, 1)
            if t >= 0:
                t += PyUnicode_GET_LENGTH(g.channel)
                e = t
                while e < b and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, e)) and \
                        PyUnicode_READ(kind, data, e) != u'<':
                    e += 1
                channel = PyUnicode_Substring(p, t, e)
        if recipient is not None:
            k = g.rk.get(recipient, K_TOOL)
        elif channel is not None and channel in g.ck:
            k = g.ck[channel]
        else:
            k = g.k_no_recipient
        self._begin(k, recipient)
        return 0

    cdef int _begin(self, int k, object recipient) except -1:
        self.state = S_BODY
        self.last_ws = True
        # no active tool parser (none configured, or tool_choice "none"): the whole tool message is text,
        # framing included, as a tag dialect's tool block stays text (and a downstream tool half can read it)
        self.framed = k == K_TOOL and self.tool is None
        if self.framed:
            k = K_CONTENT
        self.kind = k
        if k == K_TOOL:
            self.key = None
            self.in_call = False
            if self.g.invoke is None:
                if recipient is None:  # a tool channel without a recipient names no call
                    self.kind = K_DROP
                    return 0
                self._start_call(recipient)
                self.phase = C_PARAMS
            else:
                self.phase = C_SEEK
        return 0

    cdef int _end_body(self) except -1:
        self.framed = False
        if self.kind == K_TOOL:
            if self.phase == C_VALUE:
                if self.streaming:
                    self._stream_value(None, 0, 0, True)  # cut off: the value as written so far
                else:
                    self._finish_value(None, 0, 0)
            if self.in_call:
                self._close_call()
            self.phase = C_SEEK
        self.kind = K_CONTENT
        return 0

    # ---- bodies -------------------------------------------------------------

    cdef int _marker(self, int kind, void *data, Py_ssize_t at, Py_ssize_t n, bint final, Py_ssize_t *size) except -1:
        """What starts at the '<' at ``at``: M_END / M_START / M_HEADER (``size[0]``: its length), M_PARTIAL or M_NONE."""
        cdef ChannelGrammar g = self.g
        cdef int r, partial = 0
        if at + 1 < n and PyUnicode_READ(kind, data, at + 1) != u'|':
            return M_NONE
        for m in g.ends:
            r = marker_match(kind, data, at, n, <str>m)
            if r == 2:
                size[0] = PyUnicode_GET_LENGTH(m)
                return M_END
            partial |= r
        r = marker_match(kind, data, at, n, g.start)
        if r == 2:
            return M_START
        partial |= r
        for m in g.in_body_headers:
            r = marker_match(kind, data, at, n, <str>m)
            if r == 2:
                return M_HEADER
            partial |= r
        return M_PARTIAL if partial and not final else M_NONE

    cdef Py_ssize_t _word_start(self, int kind, void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
        while b > a and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)) and \
                PyUnicode_READ(kind, data, b - 1) != u'<':
            b -= 1
        return b

    cdef bint _after_space(self, int kind, void *data, Py_ssize_t a, Py_ssize_t at) noexcept:
        return Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, at - 1)) if at > a else self.last_ws

    cdef Py_ssize_t _tail(self, str p, int kind, void *data, Py_ssize_t a, Py_ssize_t stop) except -1:
        """Where a trailing ``t`` / ``to`` / ``to=NAME`` that may still become an in-body header starts (else ``stop``)."""
        if not self.g.in_body_headers:
            return stop
        cdef Py_ssize_t w = self._word_start(kind, data, a, stop)
        if w == stop or not self._after_space(kind, data, a, w):
            return stop
        if marker_match(kind, data, w, stop, 'to=') == 0:
            return stop
        return w

    cdef Py_ssize_t _body(self, str p, Py_ssize_t pos, Py_ssize_t n, bint final, list out) except -1:
        cdef int kind = PyUnicode_KIND(p)
        cdef void *data = PyUnicode_DATA(p)
        cdef Py_ssize_t at = pos + self.skip, lt, hs, e, size = 0
        cdef int code
        self.skip = 0
        while True:
            lt = PyUnicode_FindChar(p, u'<', at, n, 1) if at < n else -1
            if lt < 0:
                return self._text(p, pos, n if final else self._tail(p, kind, data, pos, n), final, out)
            code = self._marker(kind, data, lt, n, final, &size)
            if code == M_NONE:
                at = lt + 1
                continue
            if code == M_PARTIAL:
                return self._text(p, pos, self._tail(p, kind, data, pos, lt), False, out)
            if code == M_HEADER:
                hs = self._word_start(kind, data, pos, lt)
                if not (lt - hs > 3 and marker_match(kind, data, hs, lt, 'to=') == 2
                        and self._after_space(kind, data, pos, hs)):
                    hs = lt
                e = self._header_end(p, hs, n, final)
                if e == -2:
                    return self._text(p, pos, hs, False, out)
                if e < 0:
                    at = lt + 1  # no header after all: text
                    continue
                self._text(p, pos, hs, True, out)
                self._end_body()
                self.state = S_HEADER
                return hs
            self._text(p, pos, lt, True, out)
            if code == M_END and self.framed:
                self._emit(out, PyUnicode_Substring(p, lt, lt + size), K_CONTENT)
            self._end_body()
            if code == M_END:
                self.state = S_BOUNDARY
                return lt + size
            self.state = S_HEADER
            return lt

    cdef Py_ssize_t _text(self, str p, Py_ssize_t a, Py_ssize_t b, bint ended, list out) except -1:
        """Body text ``p[a:b]``; returns how far it was consumed (``b`` when ``ended``)."""
        cdef int k = self.kind
        if b <= a:
            return a
        if k == K_TOOL:
            b = self._calls(p, a, b, ended)
        elif k != K_DROP:
            self._emit(out, PyUnicode_Substring(p, a, b), k)
        if b > a:
            self.last_ws = Py_UNICODE_ISSPACE(PyUnicode_READ(PyUnicode_KIND(p), PyUnicode_DATA(p), b - 1))
        return b

    cdef int _emit(self, list out, str text, int k) except -1:
        self._flush(out)
        out.append((new_delta_message(text, None, None) if k == K_CONTENT else new_delta_message(None, text, None),
                    False))
        return 0

    # ---- calls --------------------------------------------------------------

    cdef Py_ssize_t _seek(self, str p, int kind, void *data, Py_ssize_t pos, Py_ssize_t b, object m0, object m1,
                          bint ended, int *which) except -1:
        """First ``m0`` (``which[0]`` 0) or ``m1`` (1) in ``p[pos:b]``; else ``which[0]`` -1 and where a
        partial one starts (``b`` when none, or when ``ended``)."""
        cdef Py_ssize_t at = pos
        cdef int r0, r1
        while True:
            at = PyUnicode_FindChar(p, u'<', at, b, 1) if at < b else -1
            if at < 0:
                which[0] = -1
                return b
            r0 = marker_match(kind, data, at, b, <str>m0)
            r1 = marker_match(kind, data, at, b, <str>m1) if m1 is not None else 0
            if r0 == 2 or r1 == 2:
                which[0] = 0 if r0 == 2 else 1
                return at
            if (r0 or r1) and not ended:
                which[0] = -1
                return at
            at += 1

    cdef Py_ssize_t _calls(self, str p, Py_ssize_t a, Py_ssize_t b, bint ended) except -1:
        """A tool body's text ``p[a:b]``: calls out, everything else dropped."""
        cdef ChannelGrammar g = self.g
        cdef int kind = PyUnicode_KIND(p)
        cdef void *data = PyUnicode_DATA(p)
        cdef Py_ssize_t pos = a, i, gt, vs, ve = 0, m
        cdef int which = -1, ph
        cdef str target
        while pos < b:
            ph = self.phase
            if ph == C_SEEK or ph == C_SKIP:
                target = <str>(g.invoke if ph == C_SEEK else g.invoke_close)
                i = self._seek(p, kind, data, pos, b, target, None, ended, &which)
                if which < 0:
                    return i
                if ph == C_SEEK:
                    self.phase = C_INVOKE
                    pos = i
                else:
                    self.phase = C_SEEK
                    pos = i + PyUnicode_GET_LENGTH(target)
            elif ph == C_INVOKE or ph == C_PARAM:
                m = PyUnicode_GET_LENGTH(g.invoke if ph == C_INVOKE else g.parameter)
                gt = PyUnicode_FindChar(p, u'>', pos + m, b, 1)
                if gt < 0:
                    if not ended and b - pos <= TAG_MAX:
                        return pos  # the tag is held whole
                    # an endless tag: the invoke is skipped, the parameter's value unnamed
                    self.phase = C_SEEK if ph == C_INVOKE else C_VALUE
                    self.key = None
                    pos += m
                    continue
                vs = _attribute(p, kind, data, pos + m, gt, 'name', &ve)
                name = PyUnicode_Substring(p, vs, ve) if vs >= 0 and ve > vs else None
                pos = gt + 1
                if ph == C_PARAM:
                    self.key = name
                    self.phase = C_VALUE
                    self._open_value()
                elif name is None:
                    self.phase = C_SKIP
                else:
                    self._start_call(name)
                    self.phase = C_PARAMS
            elif ph == C_PARAMS:
                i = self._seek(p, kind, data, pos, b, g.parameter, g.invoke_close, ended, &which)
                if which < 0:
                    return i
                if which == 0:
                    self.phase = C_PARAM
                    pos = i
                else:
                    self._close_call()
                    self.phase = C_SEEK
                    pos = i + PyUnicode_GET_LENGTH(g.invoke_close)
            else:
                i = self._seek(p, kind, data, pos, b, g.parameter_close,
                               g.parameter if g.optional_parameter_close else None, ended, &which)
                if self.streaming:
                    self._stream_value(p, pos, i, which >= 0)
                    if which < 0:
                        return i
                elif which < 0:
                    if i > pos:
                        self._hold(p, pos, i)
                    return i
                else:
                    self._finish_value(p, pos, i)
                if which == 0:
                    self.phase = C_PARAMS
                    pos = i + PyUnicode_GET_LENGTH(g.parameter_close)
                else:
                    self.phase = C_PARAM  # the next parameter ends one without its close tag
                    pos = i
        if self.opening is not None:  # a value tag ended the text: its key goes out now
            self._stream_value(None, 0, 0, False)
        return pos

    cdef int _hold(self, str p, Py_ssize_t a, Py_ssize_t b) except -1:
        held_append(&self.value, p, a, b)
        return 0

    cdef int _start_call(self, object name) except -1:
        cdef ToolParser tool = self.tool
        allowed = tool._allowed_tool_names
        if allowed is not None and name not in allowed:
            # the template's recipient for a bare tool name NAME is "NAME.*": the model writes NAME.NAME
            head, sep, tail = (<str>name).partition('.')
            if sep and head == tail and head in allowed:
                name = head
        tool.start_call(None)
        tool.emit_c(self.calls, name, None)
        self.in_call = True
        self.params = 0
        props = None
        schemas = tool._tool_schemas
        if schemas is not None:
            parameters = schemas.get(name)
            if isinstance(parameters, dict):
                props = (<dict>parameters).get('properties')
        self.props = props if isinstance(props, dict) else None
        return 0

    cdef int _close_call(self) except -1:
        self.tool.emit_c(self.calls, None, '}' if self.params else '{}')
        self.in_call = False
        return 0

    cdef int _finish_value(self, str p, Py_ssize_t a, Py_ssize_t b) except -1:
        """The held value followed by ``p[a:b]`` ends: emit ``"key": JSON``."""
        cdef str raw = held_take_with(&self.value, p if p is not None else '', a, b)
        cdef Py_ssize_t s = 0, e = PyUnicode_GET_LENGTH(raw)
        key = self.key
        self.key = None
        if key is None or not self.in_call:
            return 0
        if self.g.value_newlines:
            if e and raw[0] == '\n':
                s = 1
            if e > s and raw[e - 1] == '\n':
                e -= 1
        value = self._value_json(raw, s, e, key)
        self.tool.emit_c(self.calls, None, ('{' if self.params == 0 else ', ') + json_quoted(key) + ': ' + value)
        self.params += 1
        return 0

    cdef int _open_value(self) except -1:
        """A value starts: a string one streams from here (key and opening quote now), any other is held."""
        self.streaming = self.in_call and self.key is not None and self._string_value(self.key)
        if self.streaming:
            self.opening = ('{' if self.params == 0 else ', ') + json_quoted(self.key) + ': "'
            self.params += 1
            self.lead = self.g.value_newlines
            self.nl_held = False
        return 0

    cdef bint _string_value(self, object key) except -1:
        """Whether ``key``'s value is a JSON string of its raw text whatever it holds (see _value_json)."""
        props = self.props
        schema = (<dict>props).get(key) if props is not None else None
        if self.g.schema_values:
            types = schema_types_c(schema, 0) if isinstance(schema, dict) else None
            return not (types and value_kind(<tuple>types) != 0)
        return self.g.keep_string_parameters and isinstance(schema, dict) and (<dict>schema).get('type') == 'string'

    cdef int _stream_value(self, str p, Py_ssize_t a, Py_ssize_t b, bint done) except -1:
        """``p[a:b]`` of a streaming string value; ``done``: it ends there. With ``value_newlines`` the
        newlines after the tag and before the close are framing: the first dropped, a last one held."""
        cdef int kind
        cdef void *data
        cdef str frag = ''
        cdef bint nl = False
        if self.opening is not None:
            frag = self.opening
            self.opening = None
        if a < b:
            kind = PyUnicode_KIND(p)
            data = PyUnicode_DATA(p)
            if self.lead:
                if PyUnicode_READ(kind, data, a) == u'\n':
                    a += 1
                self.lead = False
            if self.g.value_newlines and b > a and PyUnicode_READ(kind, data, b - 1) == u'\n':
                b -= 1
                nl = True
            if b > a or nl:
                frag += ('\\n' if self.nl_held else '') + json_string_body(p, a, b)
                self.nl_held = nl
        if done:
            frag += '"'
            self.streaming = False
            self.nl_held = False
            self.key = None
        if frag:
            self.tool.emit_c(self.calls, None, frag)
        return 0

    cdef str _value_json(self, str raw, Py_ssize_t a, Py_ssize_t b, object key):
        cdef int kind = PyUnicode_KIND(raw)
        cdef void *data = PyUnicode_DATA(raw)
        cdef Py_ssize_t s = a, e = b
        cdef Py_UCS4 ch
        props = self.props
        schema = (<dict>props).get(key) if props is not None else None
        if self.g.schema_values:
            types = schema_types_c(schema, 0) if isinstance(schema, dict) else None
            if types and value_kind(<tuple>types) != 0:
                out = held_value_json(raw, a, b, types)
                if out is not None:
                    return <str>out
        elif not (self.g.keep_string_parameters and isinstance(schema, dict)
                  and (<dict>schema).get('type') == 'string'):
            # JSON when the whole value (around JSON whitespace) is JSON
            while s < e and PyUnicode_READ(kind, data, s) in u' \t\n\r':
                s += 1
            while e > s and PyUnicode_READ(kind, data, e - 1) in u' \t\n\r':
                e -= 1
            if s < e:
                ch = PyUnicode_READ(kind, data, s)
                if ch in u'{["-0123456789tfn':
                    text = PyUnicode_Substring(raw, s, e)
                    if is_json(text):  # NaN / Infinity / overflowing numbers stay raw text
                        return text
        return '"' + json_string_body(raw, a, b) + '"'
