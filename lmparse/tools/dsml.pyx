"""DeepSeek V3.2 / V4 DSML tool calls.

    \\n\\n<｜DSML｜function_calls>                       (V4: tool_calls)
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="P" string="true">raw text</｜DSML｜parameter>
    <｜DSML｜parameter name="Q" string="false">JSON</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

The invoke header carries the name, so identity goes out before any
parameter. Parameters become one JSON object: ``string="true"`` values are
raw text streamed JSON-escaped up to their close tag; other values are JSON
source forwarded as it stabilises, their end found by ``JsonValueScanner``.
Every marker starts with ``<``, so markers are found by scanning ``<`` once.
"""

from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring
from libc.string cimport memcmp

from lmparse.tools.base cimport REJECTED_INDEX, ToolParser, class_basis, immutable_type, marker_match, same_basis, seek_marker
from lmparse.tools.json_escape cimport json_string_body
from lmparse.tools.json_scanner cimport JsonValueScanner
from lmparse.tools.held_text cimport HeldText, held_append, held_free, held_take

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = ['DSML_TOKEN', 'DsmlToolParser']

# U+FF5C FULLWIDTH VERTICAL LINE on both sides, as both models' encodings write it.
DSML_TOKEN = '\uff5cDSML\uff5c'

cdef enum:
    D_INVOKE_START = 0
    D_INVOKE_HEADER = 1
    D_PARAM_OR_END = 2
    D_PARAM_HEADER = 3
    D_STRING = 4
    D_JSON = 5
    D_PARAM_END = 6

# Marker indices in ``_markers``.
cdef enum:
    K_INVOKE = 0
    K_PARAM = 1
    K_INVOKE_CLOSE = 2
    K_PARAM_CLOSE = 3
    K_BLOCK_CLOSE = 4
    K_COUNT = 5

# The markers each phase reacts to, in priority order, -1 ended (anything else
# before them is skipped). Outside a JSON string a DSML tag cannot be data, so
# any of them ends a JSON value.
cdef int[3] _INVOKE_START_SET = [K_INVOKE, K_BLOCK_CLOSE, -1]
cdef int[5] _PARAM_OR_END_SET = [K_PARAM, K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_INVOKE, -1]
cdef int[6] _PARAM_END_SET = [K_PARAM_CLOSE, K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_PARAM, K_INVOKE, -1]
# A raw string value ends only at its close tag.
cdef int[2] _STRING_END_SET = [K_PARAM_CLOSE, -1]
cdef enum:
    # Raw text up to this long is scanned '<' by '<'; longer text with one substring search.
    _SHORT_VALUE = 256

_PHASE_NAMES = ('invoke_start', 'invoke_header', 'parameter_or_invoke_end', 'parameter_header',
                'string_value', 'json_value', 'parameter_end')

# The declarations the markers are built from (a DSML dialect's whole syntax).
cdef tuple _DECLARED = ('dsml_token', 'tool_calls_block_name', 'invoke_element', 'parameter_element', 'block_lead')

# class -> (declared values, markers, open tag): joining the markers costs more
# than the rest of a parser's construction. A compiled class's entry is final;
# a Python class's declarations are compared by identity at each use (the
# base's class_basis), so a changed declaration rebuilds its entry. Threads
# racing on a miss only build the same entry twice.
cdef dict _marker_cache = {}


cdef tuple _class_entry(type cls):
    entry = _marker_cache.get(cls)
    if entry is not None and immutable_type(cls):
        return <tuple>entry
    declared = class_basis(cls, _DECLARED)
    if entry is not None and same_basis(<tuple>(<tuple>entry)[0], declared):
        return <tuple>entry
    for name, value in zip(_DECLARED, declared):
        if not isinstance(value, str):
            raise TypeError(f'{cls.__name__}.{name} must be str, got {type(value).__name__}')
    token, block, invoke, parameter, lead = declared
    markers = (f'<{token}{invoke}', f'<{token}{parameter}', f'</{token}{invoke}>',
               f'</{token}{parameter}>', f'</{token}{block}>')
    entry = (declared, markers, f'{lead}<{token}{block}>')
    if len(_marker_cache) >= 256:
        _marker_cache.clear()
    _marker_cache[cls] = entry
    return <tuple>entry


cdef inline Py_ssize_t _skip_space(int kind, void *data, Py_ssize_t pos, Py_ssize_t size) noexcept:
    while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
        pos += 1
    return pos


cdef Py_ssize_t _find_ascii(int kind, void *data, Py_ssize_t start, Py_ssize_t end, const char *pattern,
                            Py_ssize_t n) noexcept:
    """First offset of the ASCII ``pattern`` in ``text[start:end]``, -1 when absent."""
    cdef Py_ssize_t i = start, j
    cdef Py_UCS4 first = <unsigned char>pattern[0]
    while i <= end - n:
        if PyUnicode_READ(kind, data, i) == first:
            j = 1
            while j < n and PyUnicode_READ(kind, data, i + j) == <unsigned char>pattern[j]:
                j += 1
            if j == n:
                return i
        i += 1
    return -1


cdef Py_ssize_t _attribute(int kind, void *data, Py_ssize_t start, Py_ssize_t end, const char *pattern,
                           Py_ssize_t n, Py_ssize_t *value_end) noexcept:
    """Value span of ``pattern`` (``name="``) in the header ``text[start:end]``.

    Returns the value start (-1 when the attribute is absent); the value runs
    to the next quote, or to the header end when unquoted.
    """
    cdef Py_ssize_t at = _find_ascii(kind, data, start, end, pattern, n), q
    if at < 0:
        return -1
    at += n
    q = at
    while q < end and PyUnicode_READ(kind, data, q) != u'"':
        q += 1
    value_end[0] = q
    return at


cdef Py_ssize_t _param_end_limit(object owner, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                                 bint *at_marker) except -1:
    # Outside a JSON string any DSML tag ends the value (see JsonValueScanner.scan_to_marker).
    cdef Py_ssize_t at = (<DsmlToolParser>owner).seek(text, pos, size, _PARAM_END_SET, final)
    at_marker[0] = (<DsmlToolParser>owner)._hit >= 0
    return at


cdef class DsmlToolParser(ToolParser):
    """The DSML grammar: ``<TOKEN BLOCK>`` blocks of ``<TOKEN invoke>`` calls and ``<TOKEN parameter>`` values.

    A dialect declares ``tool_calls_block_name`` and, when they differ,
    ``dsml_token``, the element names and ``block_lead`` (the text before the
    block's open tag); the markers are built from them once per class.
    """

    dsml_token = DSML_TOKEN
    tool_calls_block_name = None
    invoke_element = 'invoke'
    parameter_element = 'parameter'
    block_lead = '\n\n'

    cdef int _phase
    cdef Py_ssize_t _param_count
    cdef int _hit
    cdef JsonValueScanner _value_scanner
    cdef tuple _markers
    # an invoke / parameter header not terminated by ``>`` yet: its text so far
    cdef HeldText _header

    def __cinit__(self, *args, **kwargs):
        self._header.kind = 1
        self._markers = <tuple>_class_entry(type(self))[1]
        self._value_scanner = JsonValueScanner()
        self._phase = D_INVOKE_START
        self._param_count = 0

    def __dealloc__(self):
        held_free(&self._header)

    @classmethod
    def get_tool_open_tag(cls):
        return _class_entry(cls)[2]

    @classmethod
    def get_tool_close_tag(cls):
        # Called at every block start: the cached marker, not a fresh join.
        return (<tuple>_class_entry(cls)[1])[K_BLOCK_CLOSE]

    @property
    def _phase_name(self):
        return _PHASE_NAMES[self._phase]

    @property
    def _emitted_param_count(self):
        return self._param_count

    cdef int begin_block_c(self) except -1:
        ToolParser.begin_block_c(self)
        self._phase = D_INVOKE_START
        self._param_count = 0
        if self._header.len:
            held_free(&self._header)  # a header the last block never finished
        self._value_scanner.reset_c()
        return 0

    cdef Py_ssize_t seek(self, str text, Py_ssize_t pos, Py_ssize_t size, const int *wanted, bint final) noexcept:
        """First ``wanted`` marker at or after ``pos`` (``_hit`` = its index, -1 for none); see ``seek_marker``."""
        return seek_marker(text, pos, size, u'<', self._markers, wanted, final, &self._hit)


    cdef int close_arguments(self, list deltas) except -1:
        self.emit_c(deltas, None, '}' if self._param_count else '{}')
        self._param_count = 0
        return 0

    cdef Py_ssize_t scan_json(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """Forward the stable prefix of a JSON parameter value; switch phase when it ends."""
        cdef Py_ssize_t start = pos
        cdef bint at_marker = False
        cdef JsonValueScanner scanner = self._value_scanner
        pos = scanner.scan_to_marker(text, pos, size, self, _param_end_limit, final, &at_marker)
        if scanner.complete or at_marker:
            # A DSML boundary also ends a scalar or a malformed value.
            self._phase = D_PARAM_END
        if pos > start:
            self.emit_c(deltas, None, PyUnicode_Substring(text, start, pos))
        return pos

    cdef Py_ssize_t header(self, str text, Py_ssize_t pos, Py_ssize_t gt, list deltas, int phase) except -1:
        """Apply the header ``text[pos:gt]`` (after what is held of it); returns the offset past its ``>``."""
        cdef str h = text
        cdef Py_ssize_t a = pos, b = gt, at, value_end = 0
        cdef bint is_string, self_closing
        if self._header.len:
            held_append(&self._header, text, pos, gt)
            h = held_take(&self._header, 0, self._header.len)
            a = 0
            b = PyUnicode_GET_LENGTH(h)
        cdef int kind = PyUnicode_KIND(h)
        cdef void *data = PyUnicode_DATA(h)
        # ``<TOKEN invoke name="..."/>``: a call without arguments.
        self_closing = b > a and PyUnicode_READ(kind, data, b - 1) == u'/'
        if self_closing:
            b -= 1
        # Attributes are read in place: a header seen whole is never copied.
        at = _attribute(kind, data, a, b, b'name="', 6, &value_end)
        if at < 0:
            at = value_end = a  # absent: the empty name
        if phase == D_INVOKE_HEADER:
            self.start_call(None)
            self._param_count = 0
            if value_end > at:
                self.emit_c(deltas, PyUnicode_Substring(h, at, value_end), None)
            else:
                self._output_index = REJECTED_INDEX  # no name: never invent one
            if self_closing:
                self.close_arguments(deltas)
                self._phase = D_INVOKE_START
            else:
                self._phase = D_PARAM_OR_END
            return gt + 1
        key = json_string_body(h, at, value_end)
        at = _attribute(kind, data, a, b, b'string="', 8, &value_end)
        is_string = (at >= 0 and value_end - at == 4 and marker_match(kind, data, at, value_end, 'true') == 2)
        prefix = '{' if self._param_count == 0 else ', '
        self.emit_c(deltas, None, f'{prefix}"{key}": "' if is_string else f'{prefix}"{key}": ')
        self._param_count += 1
        self._value_scanner.reset_c()
        self._phase = D_STRING if is_string else D_JSON
        return gt + 1

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0, at, gt
        cdef str close
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef int phase
        cdef tuple markers = self._markers
        while pos < size and not self._payload_closed:
            phase = self._phase
            if phase == D_INVOKE_START or phase == D_PARAM_OR_END or phase == D_PARAM_END:
                pos = _skip_space(kind, data, pos, size)
                if pos == size:
                    break
                if phase == D_INVOKE_START:
                    at = self.seek(text, pos, size, _INVOKE_START_SET, final)
                elif phase == D_PARAM_OR_END:
                    at = self.seek(text, pos, size, _PARAM_OR_END_SET, final)
                else:
                    at = self.seek(text, pos, size, _PARAM_END_SET, final)
                pos = at  # text before the marker is not DSML: skipped
                if self._hit < 0:
                    break
                if phase == D_INVOKE_START:
                    if self._hit == K_BLOCK_CLOSE:
                        self._payload_closed = True  # the base consumes the close tag
                    else:
                        pos += PyUnicode_GET_LENGTH(<str>markers[K_INVOKE])
                        self._phase = D_INVOKE_HEADER
                elif phase == D_PARAM_END:
                    if self._hit == K_PARAM_CLOSE:
                        pos += PyUnicode_GET_LENGTH(<str>markers[K_PARAM_CLOSE])
                    # A missing parameter close tag: the next tag decides.
                    self._phase = D_PARAM_OR_END
                elif self._hit == K_PARAM:
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_PARAM])
                    self._phase = D_PARAM_HEADER
                else:
                    self.close_arguments(deltas)
                    if self._hit == K_INVOKE_CLOSE:
                        pos += PyUnicode_GET_LENGTH(<str>markers[K_INVOKE_CLOSE])
                    # else a missing invoke close tag: the block close / next invoke is handled there
                    self._phase = D_INVOKE_START
            elif phase == D_INVOKE_HEADER or phase == D_PARAM_HEADER:
                gt = PyUnicode_FindChar(text, u'>', pos, size, 1)
                if gt < 0:
                    # Held in the parser (one copy, linear): the router's buffer stays empty.
                    held_append(&self._header, text, pos, size)
                    pos = size
                    break
                pos = self.header(text, pos, gt, deltas, phase)
            elif phase == D_STRING:
                close = <str>markers[K_PARAM_CLOSE]
                if size - pos <= _SHORT_VALUE:
                    at = self.seek(text, pos, size, _STRING_END_SET, final)
                else:
                    # Long raw text (source code) holds many '<': one substring search,
                    # then only the tail can hold a partial close tag.
                    at = PyUnicode_Find(text, close, pos, size, 1)
                    self._hit = K_PARAM_CLOSE
                    if at < 0:
                        at = size - PyUnicode_GET_LENGTH(close) + 1
                        at = self.seek(text, at if at > pos else pos, size, _STRING_END_SET, final)
                if self._hit >= 0:
                    self.emit_c(deltas, None, json_string_body(text, pos, at) + '"')
                    pos = at + PyUnicode_GET_LENGTH(close)
                    self._phase = D_PARAM_OR_END
                    continue
                # ``at`` is where a partial close tag starts (the text end when none)
                if at > pos:
                    self.emit_c(deltas, None, json_string_body(text, pos, at))
                    pos = at
                break
            else:  # D_JSON
                pos = self.scan_json(text, pos, size, deltas, final)
                if self._phase == D_JSON:
                    break
        if final and not self._payload_closed:
            self.finish_c(deltas)
        return pos

    cdef int finish_c(self, list deltas) except -1:
        # End of input inside a call: close the object lmparse opened (values stay as they are).
        cdef int phase = self._phase
        if self._header.len:
            held_free(&self._header)  # an unterminated header: nothing of it is emitted
        if phase == D_STRING:
            self.emit_c(deltas, None, '"')
        if phase != D_INVOKE_START and phase != D_INVOKE_HEADER:
            self.close_arguments(deltas)
        self._phase = D_INVOKE_START
        return 0
