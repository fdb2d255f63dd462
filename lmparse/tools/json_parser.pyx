"""Incremental JSON tool-call envelopes: ``{"name": ..., "arguments": ...}``.

Phases: start -{-> key -> colon -> value -> (arguments | skip | name) ->
after -,-> key; ``}`` -> tail; the outer close tag ends the payload. The argument
value's source text is forwarded as soon as it is lexically stable.

Malformed outputs (docs/behaviour/malformed.md "JSON envelope"): in the tail
(after the envelope's ``}``) whitespace and stray ``}`` ``]`` ``,`` ``;`` are
dropped, a ``{`` starts the next call of the same block, and any other text
ends the block there unless the close tag follows within ``_TAIL_WINDOW``
characters (before any open tag): the router routes it. A dialect without a
close tag continues only with ``;`` + whitespace + ``{``.

The envelope is a ``{`` followed (after whitespace) by ``"`` or ``}``; text before
it is skipped only when that ``{`` is the first one and within ``_TAIL_WINDOW``
characters (a markdown fence), else the block holds no envelope. A syntax error in the envelope
ends it: after a complete call (name and arguments) the text is its tail; else
the envelope is broken (P_BROKEN): the call keeps its name and the argument text
already forwarded (no ``{}`` added), and the text from the error to the close tag
(or an open tag before it) is handed back as content; without a close tag the
block ends at the error.

A dialect declaring ``envelope_array`` writes its calls as one JSON array of
envelopes (``[{...}, {...}]``; Mistral before v11, Granite 3): ``,`` between
envelopes, and without a close tag the array's ``]`` ends the block (text
after it is content); an open tag ending in ``[`` (``functools[``) opens the
array itself. A payload that starts with anything but ``[`` or ``{``
is no call: the block ends before it and the text is content.
``name_as_key`` envelopes are ``{"NAME": {arguments}}`` (Apertus): the first
key is the name, its value the arguments. ``call_tags`` (an open and a close
tag) wrap each envelope inside a block that holds several (K2 Horizon's
``<ifm|tool_calls><ifm|tool_call>{...}</ifm|tool_call>...</ifm|tool_calls>``):
between envelopes they are skipped like whitespace (a cut one is held), so
the next ``{`` continues the block. Such a block's first envelope must follow
its open tags (whitespace aside): other text there is no call, and the
block's text is content as written (nothing is consumed while undecided). A dialect
declaring a ``bare_call_open`` tag (any but ``'{'``) has a second opener (Granite's ``<tool_call>``
beside ``<|tool_call|>``): the router leaves it in the text and the block
skips it.

A key or name string that does not end in the chunk is consumed and held in
the parser (``HeldText``), not left in the router's buffer: the scan resumes
on the next chunk's text with its escape state, and the string is joined and
decoded once, at its closing quote.

Bare calls (``bare_call_open = '{'``, Llama 3.x ``llama3_json``): an envelope
with no open tag at the start of the response, confirmed by ``json_bare``
before anything is emitted (``'['`` with ``envelope_array``: the array of
envelopes, xLAM); ``argument_field_aliases`` names other keys that
carry the arguments (``"arguments"`` beside ``"parameters"``).
"""
import json

from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.base cimport HOOK_PAYLOAD, ToolParser, start_block, tag_prefix_hold
from lmparse.tools.json_bare cimport BARE_CONFIRMED, BARE_REJECTED, json_bare_confirm, json_object_opens
from lmparse.tools.held_text cimport held_append, held_free, held_take_with
from lmparse.tools.json_scanner cimport JsonValueScanner
from lmparse.tools.json_declarations cimport declared_fields, declared_layout

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

_PHASE_NAMES = ('payload_start', 'key', 'colon', 'value_start', 'arguments', 'skip_value', 'after_value',
                'after_envelope', 'broken')

__all__ = ['JsonToolParser']


cdef inline bint _json_ws(Py_UCS4 ch) noexcept:
    return ch == u' ' or ch == u'\n' or ch == u'\r' or ch == u'\t'


cdef str _decode_raw(str raw):
    # The body of a JSON string (between its quotes) decoded; undecodable escapes stay as written.
    if PyUnicode_FindChar(raw, u'\\', 0, PyUnicode_GET_LENGTH(raw), 1) < 0:
        return raw
    try:
        return json.loads('"' + raw + '"')
    except ValueError:
        return raw


cdef Py_ssize_t _close_tag_limit(object owner, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                                 bint *at_marker) except -1:
    # The outer close tag bounds a JSON value (see JsonValueScanner.scan_to_marker).
    # Attributes are read through the cast, not bound to locals: no reference
    # counting on this per-chunk path.
    cdef Py_ssize_t at
    if (<JsonToolParser>owner)._close_tag is not None:
        at = PyUnicode_Find(text, (<JsonToolParser>owner)._close_tag, pos, size, 1)
        if at >= 0:
            at_marker[0] = True
            return at
    at_marker[0] = False
    return size if final else (<JsonToolParser>owner).close_hold_end(text, pos)


cdef class JsonToolParser(ToolParser):
    """Tool parser for one JSON envelope per outer block.

    A dialect declares ``tool_open_tag`` / ``tool_close_tag`` (None: the block
    ends with the envelope) and, when they differ from the defaults,
    ``name_field`` / ``argument_field``.
    """

    tool_open_tag = None
    tool_close_tag = None
    name_field = 'name'
    argument_field = 'arguments'
    # True: the payload is a JSON array of envelopes (see the module docs).
    envelope_array = False
    # Other keys that carry the arguments (Llama 3.x writes either).
    argument_field_aliases = ()
    # True: an envelope is ``{"NAME": {arguments}}``, its first key the name (Apertus).
    name_as_key = False
    # (open, close): the tags around each envelope inside the block; None: none.
    call_tags = None

    def __cinit__(self, *args, **kwargs):
        cdef tuple fields = declared_fields(type(self))
        cdef tuple layout = declared_layout(type(self))
        self._envelope_array = bool(layout[0])
        self._name_as_key = bool(layout[2])
        self._call_open = self._call_close = None
        if layout[3] is not None:
            self._call_open, self._call_close = layout[3]
        # a second opener the router finds in plain text (not with a Python payload hook)
        self._bare_open = layout[1] if not (self._hooks & HOOK_PAYLOAD) else None
        self._in_array = False
        self._skip_open = 0
        self._name_field = <str>fields[0]
        self._argument_field = <str>fields[1]
        self._argument_aliases = <tuple>fields[2]
        if self._bare_open == '{' or self._bare_open == '[':
            # a bare JSON object (or, with envelope_array, array) is a call only at the start of the response
            self._bare_at_start = True
            self._bare_array = self._bare_open == '['
            self._bare_name_key = '"' + self._name_field + '"'
            self._bare_keys = tuple('"' + key + '"' for key in (self._argument_field,) + self._argument_aliases)
        elif self._bare_open is not None:
            # a second open tag (Granite's <tool_call>): skipped like the open tag, no name to confirm
            self._bare_is_tag = True
        self._value_scanner = JsonValueScanner()
        self._phase = P_START
        self._json_key = None
        self._arguments_seen = False
        self._str_escape = False
        self._str_open = False

    def __dealloc__(self):
        held_free(&self._held_str)

    @property
    def _phase_name(self):
        return _PHASE_NAMES[self._phase]

    cdef int begin_block_c(self) except -1:
        ToolParser.begin_block_c(self)
        open_tag = self.get_tool_open_tag()
        self._open_tag = open_tag if isinstance(open_tag, str) and open_tag else None
        # an open tag ending in '[' (Phi-4-mini's 'functools[') opens the envelope array itself
        self._in_array = self._envelope_array and self._open_tag is not None and self._open_tag.endswith('[')
        self._skip_open = 0
        self.next_envelope(P_START)
        self._bare_pending = False
        self._envelope_broken = False
        return 0

    cdef int begin_bare_block_c(self) except -1:
        """A block opened with ``bare_call_open``: a bare envelope to confirm (``{``) or an opener to skip."""
        start_block(self)
        if self._bare_name_key is not None:
            self._bare_pending = True
        else:
            self._skip_open = PyUnicode_GET_LENGTH(<str>self._bare_open)
        return 0

    cdef Py_ssize_t bare_start(self, str text, Py_ssize_t size, list deltas, bint final) except -1:
        """Confirm a bare envelope (see json_bare); consumes nothing while undecided."""
        allowed = self._allowed_tool_names
        cdef Py_ssize_t longest = 0
        for name in allowed:
            if type(name) is str and PyUnicode_GET_LENGTH(name) > longest:
                longest = PyUnicode_GET_LENGTH(name)
        verdict, pos, name, key = json_bare_confirm(text, size, final, self._bare_name_key, self._bare_keys,
                                                    allowed, longest, json.loads, self._bare_array)
        if verdict == BARE_CONFIRMED:
            self._bare_pending = False
            if self._bare_array:
                self._in_array = True
                self._close_tag = None  # a bare array has no close tag: its ']' ends the block
            self.emit_c(deltas, name, None)
            self._name_emitted = True
            self._json_key = key
            self._phase = P_VALUE
        elif verdict == BARE_REJECTED:
            # not a call: its text is content, the rest is plain text again (the router's)
            self._bare_pending = False
            self._handback = PyUnicode_Substring(text, 0, pos)
            self._payload_closed = True
            self._close_tag = None  # no close tag to look for: the block ends here
        return pos

    cdef int next_envelope(self, int phase) except -1:
        """A new call: its envelope starts (P_START) or its ``{`` was just read (P_KEY)."""
        self.start_call(None)
        self._phase = phase
        self._json_key = None
        self._arguments_seen = False
        self._value_scanner.reset_c()
        self.drop_held()
        return 0

    cdef int drop_held(self) except -1:
        self._str_escape = False
        self._str_open = False
        held_free(&self._held_str)
        return 0

    cdef int envelope_done(self, list deltas) except -1:
        """The envelope's own ``}``: the call is complete, the block continues in its tail."""
        if not self._arguments_seen:
            self._arguments_seen = True
            self.emit_c(deltas, None, '{}')
        self._phase = P_TAIL
        return 0

    cdef int finish_envelope(self, list deltas) except -1:
        """The payload ends (the feed then consumes the outer close tag, if any)."""
        self._envelope_broken |= self._phase == P_VALUE  # a key without its value
        if not self._arguments_seen:
            self._arguments_seen = True
            self.emit_c(deltas, None, '{}')
        self._payload_closed = True
        return 0

    cdef int end_block_here(self, list deltas) except -1:
        """The block ends before the text at the cursor, without its close tag; that text is the router's."""
        self.finish_envelope(deltas)
        self._close_tag = None  # the feed then closes the block at the cursor (begin_block_c restores it)
        return 0

    cdef int break_envelope(self, list deltas) except -1:
        """A syntax error at the cursor ends the envelope (see the module docs)."""
        self._envelope_broken = True
        if self._name_emitted and self._arguments_seen:
            self._phase = P_TAIL  # the call is complete: the text is its tail
            return 0
        self._arguments_seen = True  # what was forwarded stays as it is: never completed with '{}'
        self._phase = P_BROKEN
        if self._close_tag is None:
            self.end_block_here(deltas)
        return 0

    cdef Py_ssize_t envelope_start(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas,
                                   bint final) except -1:
        """Phase start at the non-space ``text[pos]``: the text before the first ``{`` is skipped when that
        brace is within the window, before the close tag, and opens an object; else the envelope is
        broken at ``pos``. Returns ``pos`` in phase start while undecided."""
        cdef Py_ssize_t end = pos + _TAIL_WINDOW if size - pos > _TAIL_WINDOW else size
        cdef Py_ssize_t b = PyUnicode_FindChar(text, u'{', pos, end, 1), at
        cdef int opens = 0
        if self._close_tag is not None:
            at = PyUnicode_Find(text, <str>self._close_tag, pos, end, 1)
            b = -1 if 0 <= at < b else b
            end = at if at >= 0 else end
        if b >= 0:
            opens = json_object_opens(PyUnicode_KIND(text), PyUnicode_DATA(text), b, size, final)
            if opens > 0:
                self._phase = P_KEY
                return b + 1
        if opens == 0 and (b >= 0 or end < size or final):
            self.break_envelope(deltas)
        return pos

    cdef Py_ssize_t broken_text(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas,
                                bint final) except -1:
        """A broken envelope's text, handed back as it is stable, up to the close tag (the block's) or an
        open tag before it (the block ends there). The feed that ends the block always hands back (maybe
        ''), so what follows never depends on chunking."""
        cdef Py_ssize_t end = PyUnicode_Find(text, <str>self._close_tag, pos, size, 1), at
        if self._open_tag is not None:
            at = PyUnicode_Find(text, <str>self._open_tag, pos, end if end >= 0 else size, 1)
            if at >= 0:
                self._handback = PyUnicode_Substring(text, pos, at)
                self.end_block_here(deltas)
                return at
        if end >= 0:
            self._handback = PyUnicode_Substring(text, pos, end)
            self.finish_envelope(deltas)
            return end
        end = self.close_hold_end(text, pos)  # at the end of the output a cut close tag is the block's
        if self._open_tag is not None and not final:
            at = tag_prefix_hold(text, pos, <str>self._open_tag)
            end = at if at < end else end
        if end > pos:
            self._handback = PyUnicode_Substring(text, pos, end)
        return size if final else end

    cdef Py_ssize_t tail_text(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas) except -1:
        """Other text after the envelope in a block with a close tag (``pos``: its first character).

        When the close tag starts within ``_TAIL_WINDOW`` characters, before
        any open tag, the text is the block's (dropped): returns the tag's
        offset. Otherwise the block ends at ``pos``. Returns ``pos`` with the
        payload still open while the text is too short to tell.
        """
        cdef str close_tag = <str>self._close_tag
        cdef Py_ssize_t window = _TAIL_WINDOW + PyUnicode_GET_LENGTH(close_tag)
        cdef Py_ssize_t end = pos + window if size - pos > window else size
        cdef Py_ssize_t at = PyUnicode_Find(text, close_tag, pos, end, 1)
        if self._open_tag is not None and PyUnicode_Find(text, self._open_tag, pos, at if at >= 0 else end, 1) >= 0:
            self.end_block_here(deltas)  # the next block starts first
            return pos
        if at >= 0:
            return at
        if end - pos == window:
            self.end_block_here(deltas)
        return pos

    cdef Py_ssize_t separator_tail(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas,
                                   bint final) except -1:
        """The tail of a dialect without a close tag: ``;`` + whitespace + ``{`` is the next call.

        Anything else ends the block at ``pos``. An undecided ``;`` run at the
        end of the text is held (nothing consumed, phase unchanged).
        """
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t q = pos + 1
        if PyUnicode_READ(kind, data, pos) == u';':
            while q < size and q - pos <= _SEPARATOR_WS and _json_ws(PyUnicode_READ(kind, data, q)):
                q += 1
            if q < size and PyUnicode_READ(kind, data, q) == u'{':
                self.next_envelope(P_KEY)
                return q + 1
            if q == size and q - pos <= _SEPARATOR_WS and not final:
                return pos
        self.end_block_here(deltas)
        return pos

    cdef Py_ssize_t array_tail(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas) except -1:
        """After an envelope inside ``[...]`` with no close tag: ``,`` and whitespace are skipped,
        ``{`` starts the next call, ``]`` ends the payload (consumed); other text ends the block
        before it (content). Returns ``size`` with the phase unchanged when the text runs out."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_UCS4 ch
        while pos < size:
            ch = PyUnicode_READ(kind, data, pos)
            if _json_ws(ch) or ch == u',':
                pos += 1
            elif ch == u'{':
                self.next_envelope(P_KEY)
                return pos + 1
            elif ch == u']':
                self._in_array = False
                self._payload_closed = True
                return pos + 1
            else:
                self.end_block_here(deltas)
                return pos
        return pos

    cdef Py_ssize_t call_start(self, str text, Py_ssize_t size, bint final) except -1:
        """A ``call_tags`` block's start: whitespace, the call's open tag, whitespace, then ``{`` (the
        envelope: consumed up to its brace, returned with the phase moved on). The block's close tag
        there: an empty block, dropped. Other text: no call, the open tag and the text before it are
        handed back as content and the rest is plain text again. Returns 0 while undecided."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t q = 0, n = PyUnicode_GET_LENGTH(self._call_open)
        cdef bint tagged = False
        while True:
            while q < size and q <= _TAIL_WINDOW and _json_ws(PyUnicode_READ(kind, data, q)):
                q += 1
            if q == size:
                if final:  # cut after the open tag: dropped, as every truncated block
                    self._payload_closed = True
                    return q
                return 0 if q <= _TAIL_WINDOW else self.no_call_block(text, q)
            if not tagged and PyUnicode_READ(kind, data, q) == PyUnicode_READ(
                    PyUnicode_KIND(self._call_open), PyUnicode_DATA(self._call_open), 0):
                if size - q >= n and text.startswith(self._call_open, q):
                    q += n
                    tagged = True
                    continue
                if size - q < n and self._call_open.startswith(PyUnicode_Substring(text, q, size)):
                    if final:  # a cut call tag: dropped
                        self._payload_closed = True
                        return size
                    return 0
            break
        if PyUnicode_READ(kind, data, q) == u'{':
            self._phase = P_KEY
            return q + 1
        if self._close_tag is not None and not tagged:
            if text.startswith(<str>self._close_tag, q):
                self._payload_closed = True  # an empty block
                return q
            if not final and self.close_prefix_at(text, q):
                return 0
        return self.no_call_block(text, q)

    cdef Py_ssize_t no_call_block(self, str text, Py_ssize_t q) except -1:
        """The block holds no call: its open tag and ``text[:q]`` are content, what follows plain text."""
        self._handback = (<str>self._open_tag if self._open_tag is not None else '') + PyUnicode_Substring(text, 0, q)
        self._close_tag = None
        self._payload_closed = True
        return q

    cdef Py_ssize_t call_tag_at(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2:
        """The length of a ``call_tags`` tag at ``pos`` (0: none), -1 while a cut one may still be one."""
        cdef str tag
        cdef Py_ssize_t n
        for tag in (self._call_close, self._call_open):
            n = PyUnicode_GET_LENGTH(tag)
            if size - pos >= n:
                if text.startswith(tag, pos):
                    return n
            elif not final and tag.startswith(PyUnicode_Substring(text, pos, size)):
                return -1
        return 0

    cdef Py_ssize_t array_start(self, Py_UCS4 ch, Py_ssize_t pos, list deltas) except -1:
        """Phase start of an ``envelope_array`` dialect at a non-space ``ch``: returns the new cursor."""
        if ch == u'{':
            self._phase = P_KEY
        elif ch == u'[' and not self._in_array:
            self._in_array = True
        elif ch == u']' and self._in_array:
            self._in_array = False  # ``[]``: no call
            self._payload_closed = True
        elif not (ch == u',' and self._in_array):
            self.end_block_here(deltas)  # not JSON: no call, the text is content
            return pos
        return pos + 1

    cdef Py_ssize_t bare_opener(self, str text, Py_ssize_t size, list deltas, bint final) except -1:
        """The bare opener at the start of the text (the router found it whole) is the block's only
        when ``[`` or ``{`` follows it (after whitespace); otherwise it is handed back as content.
        Returns 0 with ``_skip_open`` kept while the whitespace after it runs to the end."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t start = self._skip_open, q = self._skip_open
        cdef Py_UCS4 ch
        while q < size and q - start <= _TAIL_WINDOW and _json_ws(PyUnicode_READ(kind, data, q)):
            q += 1
        if q < size:
            ch = PyUnicode_READ(kind, data, q)
            if ch == u'[' or ch == u'{':
                self._skip_open = 0
                return start
        elif not final and q - start <= _TAIL_WINDOW:
            return 0
        self._skip_open = 0
        self._handback = PyUnicode_Substring(text, 0, q)
        self.end_block_here(deltas)
        return q

    cdef Py_ssize_t string_end(self, str text, Py_ssize_t pos, Py_ssize_t size):
        """Offset just after the closing quote of the string whose body (or held rest) starts at ``pos``.

        -1 when the string runs past ``size``: the escape state carries over
        to the next chunk, whose text is scanned from its start.
        """
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t quote, slash
        if self._str_escape:
            if pos >= size:
                return -1
            self._str_escape = False
            pos += 1
        while True:
            quote = PyUnicode_FindChar(text, u'"', pos, size, 1) if pos < size else -1
            if quote < 0:
                # Only an odd trailing backslash run escapes the next chunk's first character.
                slash = size
                while slash > pos and PyUnicode_READ(kind, data, slash - 1) == u'\\':
                    slash -= 1
                self._str_escape = (size - slash) & 1
                return -1
            slash = quote
            while slash > pos and PyUnicode_READ(kind, data, slash - 1) == u'\\':
                slash -= 1
            pos = quote + 1
            if not ((quote - slash) & 1):
                return pos

    cdef bint is_arguments_key(self, object key):
        return key == self._argument_field or (self._argument_aliases and key in self._argument_aliases)

    cdef str read_string(self, str text, Py_ssize_t start, Py_ssize_t size, Py_ssize_t *pos):
        """The decoded string whose body (or held rest) starts at ``start``; ``pos[0]`` is set after it.

        None when it runs past the chunk: the rest is held (``pos[0] = size``).
        """
        cdef Py_ssize_t end = self.string_end(text, start, size)
        if end < 0:
            held_append(&self._held_str, text, start, size)
            self._str_open = True
            pos[0] = size
            return None
        self._str_open = False
        pos[0] = end
        return _decode_raw(held_take_with(&self._held_str, text, start, end - 1))

    cdef int string_done(self, list deltas, str value) except -1:
        """A key (phase key) or the name (phase value) string ended."""
        if self._phase == P_KEY:
            if self._name_as_key and not self._name_emitted and not self._arguments_seen:
                # {"NAME": {...}}: the first key is the call's name, its value the arguments
                self.emit_c(deltas, value, None)
                self._name_emitted = True
                self._json_key = self._argument_field
            else:
                self._json_key = value
            self._phase = P_COLON
            return 0
        if not self._name_emitted:
            self.emit_c(deltas, value, None)
            self._name_emitted = True
        self._json_key = None
        self._phase = P_AFTER
        return 0

    cdef Py_ssize_t scan_value(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        cdef Py_ssize_t begin = pos
        cdef bint at_close = False
        cdef JsonValueScanner scanner = self._value_scanner
        pos = scanner.scan_to_marker(text, pos, size, self, _close_tag_limit, final, &at_close)
        # The scanned span is contiguous source text: forward it as one fragment.
        if self._phase == P_ARGS and pos > begin:
            self.emit_c(deltas, None, PyUnicode_Substring(text, begin, pos))
        if scanner.complete:
            self._json_key = None
            self._phase = P_AFTER
        elif at_close:
            # The outer block closed before the value did.
            self.finish_envelope(deltas)
        return pos

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_UCS4 ch, close_first = 0
        cdef int phase
        cdef Py_ssize_t at
        cdef str value
        if self._bare_pending:
            pos = self.bare_start(text, size, deltas, final)
            if self._bare_pending or self._payload_closed:
                return pos
        close_tag = self._close_tag  # read after bare_start, which may drop it
        if close_tag is not None and PyUnicode_GET_LENGTH(close_tag):
            close_first = PyUnicode_READ(PyUnicode_KIND(close_tag), PyUnicode_DATA(close_tag), 0)
        if self._skip_open:
            pos = self.bare_opener(text, size, deltas, final)
            if self._skip_open or self._payload_closed:
                return pos
        if self._phase == P_START and self._call_open is not None:
            pos = self.call_start(text, size, final)
            if self._phase == P_START or self._payload_closed:
                return pos
        while pos < size and not self._payload_closed:
            phase = self._phase
            if self._str_open:
                # A key or name string held from an earlier chunk continues.
                value = self.read_string(text, pos, size, &pos)
                if value is None:
                    break
                self.string_done(deltas, value)
                continue
            if phase == P_BROKEN:
                pos = self.broken_text(text, pos, size, deltas, final)
                break
            if phase == P_ARGS or phase == P_SKIP:
                pos = self.scan_value(text, pos, size, deltas, final)
                if self._phase == phase and not self._payload_closed:
                    break
                continue
            if phase == P_TAIL and close_tag is None:
                if self._in_array:
                    pos = self.array_tail(text, pos, size, deltas)
                else:
                    pos = self.separator_tail(text, pos, size, deltas, final)
                if self._phase == P_TAIL and not self._payload_closed:
                    break  # an undecided separator: held
                continue
            ch = PyUnicode_READ(kind, data, pos)
            while _json_ws(ch) or (phase == P_KEY and ch == u','):
                pos += 1
                if pos == size:
                    break
                ch = PyUnicode_READ(kind, data, pos)
            if pos == size:
                break
            if close_first and ch == close_first:
                if text.startswith(close_tag, pos):
                    self.finish_envelope(deltas)
                    break
                if self.close_prefix_at(text, pos):
                    if not final:
                        break
                    if phase != P_VALUE:
                        pos = size  # a cut close tag at the end of the output is the tag's
                        break
            if phase == P_TAIL:
                if self._call_close is not None:
                    at = self.call_tag_at(text, pos, size, final)
                    if at < 0:
                        break  # a cut call tag: held
                    if at > 0:
                        pos += at
                        continue
                if ch == u'{':
                    self.next_envelope(P_KEY)  # another envelope in the same block
                elif not (ch == u'}' or ch == u']' or ch == u',' or ch == u';'):
                    at = self.tail_text(text, pos, size, deltas)
                    if at == pos and not self._payload_closed:
                        if not final:
                            break  # too little text to tell: held
                        self.end_block_here(deltas)
                    pos = at
                    continue
                pos += 1  # stray closers and separators are dropped
                continue
            if phase == P_START:
                if self._envelope_array:
                    pos = self.array_start(ch, pos, deltas)
                    continue
                at = self.envelope_start(text, pos, size, deltas, final)
                if at == pos and self._phase == P_START:
                    break  # undecided: held
                pos = at
            elif phase == P_KEY:
                if ch == u'}':
                    pos += 1
                    self.envelope_done(deltas)
                elif ch == u'"':
                    value = self.read_string(text, pos + 1, size, &pos)
                    if value is None:
                        break
                    self.string_done(deltas, value)
                elif Py_UNICODE_ISSPACE(ch):
                    pos += 1
                else:
                    self.break_envelope(deltas)
            elif phase == P_COLON:
                if ch == u':':
                    self._phase = P_VALUE
                    if self.is_arguments_key(self._json_key):
                        self._arguments_seen = True  # a value, if any, follows: never '{}'
                elif not Py_UNICODE_ISSPACE(ch):
                    self.break_envelope(deltas)
                    continue
                pos += 1
            elif phase == P_VALUE:
                key = self._json_key
                if ch == u'"' and key == self._name_field:
                    value = self.read_string(text, pos + 1, size, &pos)
                    if value is None:
                        break
                    self.string_done(deltas, value)
                else:
                    self._value_scanner.reset_c()
                    if self.is_arguments_key(key):
                        self._arguments_seen = True
                        self._phase = P_ARGS
                    else:
                        self._phase = P_SKIP
            else:  # P_AFTER
                if ch == u',':
                    self._phase = P_KEY
                    pos += 1
                elif ch == u'}':
                    pos += 1
                    self.envelope_done(deltas)
                elif Py_UNICODE_ISSPACE(ch):
                    pos += 1
                else:
                    self.break_envelope(deltas)
        if final:
            if not self._payload_closed and (self._phase == P_ARGS or self._phase == P_SKIP):
                self._value_scanner.finish_c()
            if self._phase == P_TAIL:
                self._payload_closed = True
            self.drop_held()  # no more text: what is still held can never be emitted
        return pos
