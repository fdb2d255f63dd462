"""Special-token tool-call sections: a section of calls, each a header and one JSON value.

    {section_begin}
    {call_begin}HEADER{argument_begin}{json}{call_end}
    ...
    {section_end}

What the header holds is declared by ``header_layout``:

- ``'call_id'`` (the default): the model's own call id; the function name is
  the header's part after a ``functions.`` prefix and before a ``:IDX``
  counter (Kimi K2's ``functions.NAME:IDX``).
- ``'name'``: the function name itself; the call id is generated
  (DeepSeek V3.1's ``NAME<｜tool▁sep｜>{json}``).
- ``'type'``: the call type (``function``); the function name is the first
  line after ``argument_begin``, the call id is generated (DeepSeek V3's
  ``function<｜tool▁sep｜>NAME`` line break, a fenced ``json`` block).

``argument_fence`` (e.g. ``'```'``) declares that the JSON value may sit in
a Markdown code fence: the opening fence, its info string (``json``) and the
whitespace after it are dropped, the closing fence is skipped like any text
between the value and the call end. A value written without the fence is
read the same way. Arguments are one JSON value whose source is forwarded as
it stabilises (``JsonValueScanner`` finds its end). Every marker starts with
``<``, so markers are found by scanning ``<`` once. A dialect declares the
five markers and, where they differ, the layout and the fence (see
``lmparse.dialects.kimi`` and ``lmparse.dialects.deepseek``).

A dialect may declare ``bare_call_open`` (its ``call_begin``) when its model
writes a call without the section (SGLang's DeepSeek V3.1 detector reads
``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>`` alone). The
router then searches plain text for the call-begin marker; it is structure
only when the grammar confirms it: a header of at most ``_BARE_HEADER``
characters, holding no other marker, naming an offered tool (``'name'`` and
``'call_id'`` layouts), then ``argument_begin``. Held while undecided;
refuted, the marker is content and the text after it plain text again.
Such calls form a block that ends after the last call: another confirmed
call-begin continues it, the section end is consumed, anything else is plain
text again.

A header that does not end in the chunk is consumed and held here
(``HeldText``), leaving at most a partial marker in the router's buffer; so is
the whitespace before the arguments: a long header or run costs linear work.
"""
from cpython.unicode cimport PyUnicode_FindChar, PyUnicode_Substring
from libc.string cimport memcmp

from lmparse.tools.base cimport HOOK_PAYLOAD, REJECTED_INDEX, ToolParser, marker_match, seek_marker, start_block
from lmparse.tools.held_text cimport HeldText, held_append, held_free, held_take_with
from lmparse.tools.json_scanner cimport JsonValueScanner

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISDIGIT(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = ['SectionToolParser']

cdef enum:
    C_START = 0
    C_HEADER = 1
    C_ARGS = 2
    C_END = 3
    C_NAME = 4  # the name line after argument_begin ('type' layout)

# Header layouts (``header_layout``).
cdef enum:
    L_CALL_ID = 0
    L_NAME = 1
    L_TYPE = 2

# Where the argument value stands relative to a declared code fence.
cdef enum:
    F_NONE = 0  # no fence declared, or the value started without one
    F_BEFORE = 1  # an opening fence may still come
    F_INFO = 2  # inside the fence's info string (``json``)
    F_INSIDE = 3  # the fence is open: whitespace before the value is dropped

# Marker indices in ``_markers``.
cdef enum:
    K_SECTION_END = 0
    K_CALL_BEGIN = 1
    K_ARGUMENT_BEGIN = 2
    K_CALL_END = 3

# The markers each phase reacts to, in priority order, -1 ended (anything else
# before them is skipped).
cdef int[3] _START_SET = [K_CALL_BEGIN, K_SECTION_END, -1]
cdef int[5] _HEADER_SET = [K_ARGUMENT_BEGIN, K_CALL_END, K_SECTION_END, K_CALL_BEGIN, -1]
cdef int[4] _END_SET = [K_CALL_END, K_SECTION_END, K_CALL_BEGIN, -1]
cdef enum:
    # The longest header of a call written without its section (bare_call_open).
    _BARE_HEADER = 256

_PHASE_NAMES = ('call_start', 'call_header', 'arguments', 'call_end', 'call_name')
_LAYOUTS = ('call_id', 'name', 'type')


cdef inline Py_ssize_t _skip_space(int kind, void *data, Py_ssize_t pos, Py_ssize_t size) noexcept:
    while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
        pos += 1
    return pos


cdef str _name_of(str text, Py_ssize_t start, Py_ssize_t end):
    """``functions.NAME:IDX`` in ``text[start:end]`` -> ``NAME`` (a missing prefix or counter is tolerated)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t colon = end - 1, i
    while colon >= start and PyUnicode_READ(kind, data, colon) != u':':
        colon -= 1
    if colon >= start and colon + 1 < end:
        i = colon + 1
        while i < end and Py_UNICODE_ISDIGIT(PyUnicode_READ(kind, data, i)):
            i += 1
        if i == end:  # a non-empty all-digit counter (``str.isdigit``)
            end = colon
    if end - start >= 10 and marker_match(kind, data, start, end, 'functions.') == 2:
        start += 10
    return PyUnicode_Substring(text, start, end)


cdef inline bint _is_info_char(Py_UCS4 ch) noexcept:
    """A character of a code fence's info string (``json``, ``jsonc``, ``json5``, ``x-json``)."""
    return (u'a' <= ch <= u'z') or (u'A' <= ch <= u'Z') or (u'0' <= ch <= u'9') or ch == u'_' or ch == u'-' \
        or ch == u'+' or ch == u'.'


cdef str _stripped(str text, Py_ssize_t start, Py_ssize_t end):
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    start = _skip_space(kind, data, start, end)
    while end > start and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)):
        end -= 1
    return PyUnicode_Substring(text, start, end)


def _function_name(str raw_id not None) -> str:
    """``functions.NAME:IDX`` -> ``NAME`` (a missing prefix or counter is tolerated)."""
    return _name_of(raw_id, 0, PyUnicode_GET_LENGTH(raw_id))


cdef Py_ssize_t _call_end_limit(object owner, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                                bint *at_marker) except -1:
    # Outside a JSON string a call or section marker ends the arguments (see JsonValueScanner.scan_to_marker).
    cdef SectionToolParser parser = <SectionToolParser>owner
    cdef Py_ssize_t at, fence = -1
    if parser._fence is not None:
        # A fence character is never JSON outside a string: a value left open ends at the closing fence.
        # Markers are sought only before it (the search stays linear when strings hold many fences).
        fence = PyUnicode_FindChar(text, parser._fence_lead, pos, size, 1)
    if fence >= 0:
        at = parser.seek(text, pos, fence, _END_SET, True)  # no marker is partial before the fence
        if parser._hit < 0:
            at = fence
        at_marker[0] = True
        return at
    at = parser.seek(text, pos, size, _END_SET, final)
    at_marker[0] = parser._hit >= 0
    return at


cdef class SectionToolParser(ToolParser):
    """Special-token sections of calls (see the module docs); a dialect declares the five markers."""

    section_begin = None
    section_end = None
    call_begin = None
    argument_begin = None
    call_end = None
    # What the header between call_begin and argument_begin holds (module docs).
    header_layout = 'call_id'
    # A Markdown code fence the argument value may be wrapped in (None: no fence).
    argument_fence = None

    cdef int _phase
    cdef int _layout
    cdef int _fence_state
    cdef str _fence
    cdef Py_UCS4 _fence_lead
    cdef bint _arguments_emitted
    cdef int _hit
    cdef HeldText _header  # an unterminated call header
    cdef HeldText _lead  # whitespace before the argument value
    cdef JsonValueScanner _value_scanner
    cdef tuple _markers
    # a call written without the section (bare_call_open): the call-begin marker is not confirmed yet
    cdef bint _bare_pending
    # calls written without the section: the block ends after them
    cdef bint _bare_calls

    def __cinit__(self, *args, **kwargs):
        cls = type(self)
        self._markers = (cls.section_end, cls.call_begin, cls.argument_begin, cls.call_end)
        for marker in self._markers:
            # read in place by ``seek``, which finds candidates by their leading '<'
            if not isinstance(marker, str) or not (<str>marker).startswith('<'):
                raise TypeError(f'{cls.__name__} must declare its section markers as str starting with "<", '
                                f'got {marker!r}')
        layout = cls.header_layout
        if layout not in _LAYOUTS:
            raise TypeError(f'{cls.__name__}.header_layout must be one of {_LAYOUTS}, got {layout!r}')
        self._layout = _LAYOUTS.index(layout)
        fence = cls.argument_fence
        if fence is not None and (not isinstance(fence, str) or not fence):
            raise TypeError(f'{cls.__name__}.argument_fence must be a non-empty str or None, got {fence!r}')
        self._fence = fence
        self._fence_lead = (<str>fence)[0] if fence is not None else 0
        self._fence_state = F_NONE
        self._value_scanner = JsonValueScanner()
        self._phase = C_START
        self._arguments_emitted = False
        bare = cls.bare_call_open
        if bare is not None:
            if bare != cls.call_begin:
                raise TypeError(f'{cls.__name__}.bare_call_open must be None or call_begin {cls.call_begin!r}')
            if not (self._hooks & HOOK_PAYLOAD):
                self._bare_open = bare

    def __dealloc__(self):
        held_free(&self._header)
        held_free(&self._lead)

    @classmethod
    def get_tool_open_tag(cls):
        return cls.section_begin

    @classmethod
    def get_tool_close_tag(cls):
        return cls.section_end

    @staticmethod
    def _resolve_function_name(raw_id):
        return _function_name(raw_id)

    @property
    def _phase_name(self):
        return _PHASE_NAMES[self._phase]

    cdef int begin_block_c(self) except -1:
        ToolParser.begin_block_c(self)
        self._phase = C_START
        self._arguments_emitted = False
        held_free(&self._header)
        held_free(&self._lead)
        self._value_scanner.reset_c()
        self._bare_pending = False
        self._bare_calls = False
        return 0

    cdef int begin_bare_block_c(self) except -1:
        """A call the router found written without the section: its call-begin marker is still in the text."""
        start_block(self)
        self._bare_pending = True
        self._bare_calls = True
        return 0

    cdef int confirm_call(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2:
        """Whether the call-begin marker at ``pos``, written without the section, starts a call.

        1: a header of at most ``_BARE_HEADER`` characters without another
        marker in it, naming an offered tool, then ``argument_begin``; 0:
        anything else (the marker is text); -1: not decided yet.
        """
        cdef Py_ssize_t a = pos + PyUnicode_GET_LENGTH(<str>self._markers[K_CALL_BEGIN])
        cdef Py_ssize_t limit = size if size - a <= _BARE_HEADER else a + _BARE_HEADER
        cdef Py_ssize_t at = self.seek(text, a, limit, _HEADER_SET, final or limit < size)
        cdef int kind
        cdef void *data
        cdef Py_ssize_t start, end
        if self._hit < 0:
            return 0 if final or limit < size else -1
        if self._hit != K_ARGUMENT_BEGIN:
            return 0
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        start = _skip_space(kind, data, a, at)
        end = at
        while end > start and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)):
            end -= 1
        if end == start:
            return 0
        if self._layout == L_TYPE:
            return 1
        name = PyUnicode_Substring(text, start, end) if self._layout == L_NAME else _name_of(text, start, end)
        allowed = self._allowed_tool_names
        return 0 if allowed is not None and name not in allowed else 1

    cdef Py_ssize_t bare_next(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -1:
        """Between calls written without the section: a confirmed call-begin continues the block, the
        section end ends it (consumed by the base), anything else ends it before the whitespace."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t at = _skip_space(kind, data, pos, size)
        cdef int found, ended, verdict
        if at == size and not final:
            return pos
        if at < size and PyUnicode_READ(kind, data, at) == u'<':
            found = marker_match(kind, data, at, size, <str>self._markers[K_CALL_BEGIN])
            ended = marker_match(kind, data, at, size, <str>self._markers[K_SECTION_END])
            if found == 2:
                verdict = self.confirm_call(text, at, size, final)
                if verdict < 0:
                    return pos
                if verdict == 1:
                    self._phase = C_HEADER
                    return at + PyUnicode_GET_LENGTH(<str>self._markers[K_CALL_BEGIN])
            elif ended == 2:
                self._payload_closed = True
                return at
            elif (found == 1 or ended == 1) and not final:
                return pos
        self._payload_closed = True
        self._close_tag = None  # the feed ends the block here: what follows is plain text
        return pos

    cdef Py_ssize_t seek(self, str text, Py_ssize_t pos, Py_ssize_t size, const int *wanted, bint final) noexcept:
        """First ``wanted`` marker at or after ``pos`` (``_hit`` = its index, -1 for none); see ``seek_marker``."""
        return seek_marker(text, pos, size, u'<', self._markers, wanted, final, &self._hit)

    cdef int emit_arguments(self, list deltas, str arguments) except -1:
        if self._lead.len:
            arguments = held_take_with(&self._lead, arguments, 0, PyUnicode_GET_LENGTH(arguments))
        self.emit_c(deltas, None, arguments)
        self._arguments_emitted = True
        return 0

    cdef int end_call(self, list deltas) except -1:
        if not self._arguments_emitted:
            held_free(&self._lead)
            self.emit_c(deltas, None, '{}')
        self._phase = C_START
        return 0

    cdef Py_ssize_t skip_fence_info(self, int kind, void *data, Py_ssize_t pos, Py_ssize_t size) noexcept:
        """Skip the info string after an opening fence; F_INSIDE once it ends within the text."""
        while pos < size and _is_info_char(PyUnicode_READ(kind, data, pos)):
            pos += 1
        if pos < size:
            self._fence_state = F_INSIDE
        return pos

    cdef Py_ssize_t scan_arguments(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas,
                                   bint final) except -1:
        """Forward the stable prefix of the argument value; switch phase when it ends."""
        cdef JsonValueScanner scanner = self._value_scanner
        cdef Py_ssize_t start = pos, q
        cdef bint at_marker = False
        cdef int kind, found
        cdef void *data
        if not scanner.started:
            kind = PyUnicode_KIND(text)
            data = PyUnicode_DATA(text)
            if self._fence_state == F_INFO:
                start = pos = self.skip_fence_info(kind, data, pos, size)
                if pos == size:
                    return pos
            q = _skip_space(kind, data, pos, size)
            if self._fence_state == F_INSIDE:
                start = pos = q  # whitespace inside the fence is framing
            elif q > pos:
                # Held until the value starts: whitespace-only arguments mean no arguments.
                held_append(&self._lead, text, pos, q)
                start = pos = q
            if q == size:
                return pos
            if self._fence_state == F_BEFORE:
                found = marker_match(kind, data, q, size, self._fence)
                if found == 1:
                    # A partial fence: wait for more text (at the end of the output it is dropped).
                    return size if final else pos
                if found == 2:
                    held_free(&self._lead)
                    self._fence_state = F_INFO
                    pos = self.skip_fence_info(kind, data, q + PyUnicode_GET_LENGTH(self._fence), size)
                    if pos == size:
                        return pos
                    start = pos = _skip_space(kind, data, pos, size)
                    if pos == size:
                        return pos
                else:
                    self._fence_state = F_NONE
        pos = scanner.scan_to_marker(text, pos, size, self, _call_end_limit, final, &at_marker)
        if scanner.complete or at_marker:
            # The call boundary also ends a scalar or a malformed value.
            self._phase = C_END
        if pos > start:
            self.emit_arguments(deltas, PyUnicode_Substring(text, start, pos))
        return pos

    cdef int begin_named_call(self, list deltas, str call_id, str name) except -1:
        """Start a call; emit its name, or reject it when it has none (never invent one)."""
        self.start_call(call_id)
        self._arguments_emitted = False
        held_free(&self._lead)
        self._value_scanner.reset_c()
        self._fence_state = F_NONE if self._fence is None else F_BEFORE
        if name:
            self.emit_c(deltas, name, None)
        else:
            self._output_index = REJECTED_INDEX
        return 0

    cdef Py_ssize_t scan_name_line(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas,
                                   bint final) except -1:
        """The 'type' layout's name: the first line after argument_begin (a marker or the fence also ends it)."""
        cdef Py_ssize_t end = PyUnicode_FindChar(text, u'\n', pos, size, 1), fence
        cdef Py_ssize_t resume = end + 1
        cdef bint line_ended = end >= 0
        cdef str line
        if not line_ended:
            end = size
        if self._fence is not None:
            fence = PyUnicode_FindChar(text, self._fence_lead, pos, end, 1)
            if fence >= 0:
                end = resume = fence  # the fence is read as the arguments' start
                line_ended = True
        # Past the line's end no marker can be partial.
        cdef Py_ssize_t at = self.seek(text, pos, end, _END_SET, final or line_ended)
        if self._hit < 0 and not line_ended:
            held_append(&self._header, text, pos, at)  # the line goes on: hold it here
            return at
        if self._header.len:
            line = held_take_with(&self._header, text, pos, at)
        else:
            line = PyUnicode_Substring(text, pos, at)
        # The type before argument_begin is not an id: the call id is generated.
        self.begin_named_call(deltas, None, _stripped(line, 0, PyUnicode_GET_LENGTH(line)))
        if self._hit >= 0:
            self._phase = C_END  # a call without arguments, ended by the marker
            return at
        self._phase = C_ARGS
        return resume

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0, at, start, end
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef int phase, hkind
        cdef void *hdata
        cdef str header
        cdef tuple markers = self._markers
        cdef int verdict
        if self._bare_pending:
            verdict = self.confirm_call(text, 0, size, final)
            if verdict < 0:
                return 0
            self._bare_pending = False
            if verdict == 0:
                # not a call: the marker is content, what follows is plain text again
                pos = PyUnicode_GET_LENGTH(<str>markers[K_CALL_BEGIN])
                self._handback = PyUnicode_Substring(text, 0, pos)
                self._payload_closed = True
                self._close_tag = None
                return pos
        while pos < size and not self._payload_closed:
            phase = self._phase
            if phase == C_START and self._bare_calls:
                pos = self.bare_next(text, pos, size, final)
                if self._phase == C_START:
                    break
            elif phase == C_START or phase == C_END:
                pos = _skip_space(kind, data, pos, size)
                if pos == size:
                    break
                if phase == C_START:
                    at = self.seek(text, pos, size, _START_SET, final)
                else:
                    at = self.seek(text, pos, size, _END_SET, final)
                pos = at  # text before the marker is not protocol: skipped
                if self._hit < 0:
                    break
                if phase == C_END:
                    self.end_call(deltas)
                    if self._hit == K_CALL_END:
                        pos += PyUnicode_GET_LENGTH(<str>markers[K_CALL_END])
                    # else a missing call end: the section end / next call is handled there
                elif self._hit == K_SECTION_END:
                    self._payload_closed = True  # the base consumes the close tag
                else:
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_CALL_BEGIN])
                    self._phase = C_HEADER
            elif phase == C_HEADER:
                at = self.seek(text, pos, size, _HEADER_SET, final)
                if self._hit < 0:
                    # The header goes on: hold it here; only a partial marker stays in the buffer.
                    held_append(&self._header, text, pos, at)
                    pos = at
                    break
                if self._header.len:
                    header = held_take_with(&self._header, text, pos, at)
                    start, end = 0, PyUnicode_GET_LENGTH(header)
                else:
                    header = text
                    start, end = pos, at
                if self._layout == L_TYPE:
                    if self._hit == K_ARGUMENT_BEGIN:
                        # The header is the call type: the name line follows.
                        pos = at + PyUnicode_GET_LENGTH(<str>markers[K_ARGUMENT_BEGIN])
                        self._phase = C_NAME
                    else:
                        self.begin_named_call(deltas, None, None)  # no name line: no call
                        pos = at
                        self._phase = C_END
                    continue
                hkind = PyUnicode_KIND(header)
                hdata = PyUnicode_DATA(header)
                start = _skip_space(hkind, hdata, start, end)
                while end > start and Py_UNICODE_ISSPACE(PyUnicode_READ(hkind, hdata, end - 1)):
                    end -= 1
                if self._layout == L_NAME:
                    name = PyUnicode_Substring(header, start, end)
                    self.begin_named_call(deltas, None, name)
                else:
                    # The id is the header stripped; the name is read from the same span.
                    self.begin_named_call(deltas, PyUnicode_Substring(header, start, end),
                                          _name_of(header, start, end))
                pos = at
                if self._hit == K_ARGUMENT_BEGIN:
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_ARGUMENT_BEGIN])
                    self._phase = C_ARGS
                else:
                    # No argument marker: a call without arguments, ended by the next marker.
                    self._phase = C_END
            elif phase == C_NAME:
                pos = self.scan_name_line(text, pos, size, deltas, final)
                if self._phase == C_NAME:
                    break
            else:  # C_ARGS
                pos = self.scan_arguments(text, pos, size, deltas, final)
                if self._phase == C_ARGS:
                    break
        if final:
            # No more text: a held header or run can never be used.
            held_free(&self._header)
            held_free(&self._lead)
        return pos
