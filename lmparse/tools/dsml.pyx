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

from lmparse.tools.base cimport REJECTED_INDEX, ToolParser, tag_prefix_hold, seek_marker
from lmparse.tools.json_escape cimport json_quoted, json_string_body
from lmparse.tools.json_scanner cimport JsonValueScanner

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = ['DSML_TOKEN', 'DeepSeekV32ToolParser', 'DeepSeekV4ToolParser']

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

_PHASE_NAMES = ('invoke_start', 'invoke_header', 'parameter_or_invoke_end', 'parameter_header',
                'string_value', 'json_value', 'parameter_end')


cdef inline Py_ssize_t _skip_space(int kind, void *data, Py_ssize_t pos, Py_ssize_t size) noexcept:
    while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
        pos += 1
    return pos


cdef str _attribute(str header, str name):
    """Value of ``name="..."`` in a tag header ('' when absent; to the header end when unquoted)."""
    cdef Py_ssize_t size = PyUnicode_GET_LENGTH(header)
    cdef Py_ssize_t at = PyUnicode_Find(header, name + '="', 0, size, 1)
    cdef Py_ssize_t end
    if at < 0:
        return ''
    at += PyUnicode_GET_LENGTH(name) + 2
    end = PyUnicode_FindChar(header, u'"', at, size, 1)
    return PyUnicode_Substring(header, at, size if end < 0 else end)


cdef class DeepSeekV32ToolParser(ToolParser):
    """DeepSeek V3.2 DSML: ``<｜DSML｜function_calls>`` blocks of ``invoke`` / ``parameter`` tags."""

    structural_tag_model = 'deepseek_v3_2'
    dsml_token = DSML_TOKEN
    tool_calls_block_name = 'function_calls'

    cdef int _phase
    cdef Py_ssize_t _param_count
    cdef Py_ssize_t _resume
    cdef int _hit
    cdef JsonValueScanner _value_scanner
    cdef tuple _markers
    cdef tuple _invoke_start_set
    cdef tuple _param_or_end_set
    cdef tuple _param_end_set
    cdef tuple _json_end_set

    def __cinit__(self, *args, **kwargs):
        cls = type(self)
        token = cls.dsml_token
        block = cls.tool_calls_block_name
        self._markers = (f'<{token}invoke', f'<{token}parameter', f'</{token}invoke>',
                         f'</{token}parameter>', f'</{token}{block}>')
        # Each set: the markers a phase reacts to (anything else before them is skipped).
        self._invoke_start_set = (K_INVOKE, K_BLOCK_CLOSE)
        self._param_or_end_set = (K_PARAM, K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_INVOKE)
        self._param_end_set = (K_PARAM_CLOSE, K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_PARAM, K_INVOKE)
        # Outside a JSON string a DSML tag cannot be data: any of them ends the value.
        self._json_end_set = (K_PARAM_CLOSE, K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_PARAM, K_INVOKE)
        self._value_scanner = JsonValueScanner()
        self._phase = D_INVOKE_START
        self._param_count = 0
        self._resume = 0

    @classmethod
    def get_tool_open_tag(cls):
        return f'\n\n<{cls.dsml_token}{cls.tool_calls_block_name}>'

    @classmethod
    def get_tool_close_tag(cls):
        return f'</{cls.dsml_token}{cls.tool_calls_block_name}>'

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
        self._resume = 0
        self._value_scanner.reset_c()
        return 0

    cdef Py_ssize_t seek(self, str text, Py_ssize_t pos, Py_ssize_t size, tuple wanted, bint final) except -2:
        """First wanted marker at or after ``pos`` (``_hit`` = its index, -1 for none); see ``seek_marker``."""
        return seek_marker(text, pos, size, u'<', self._markers, wanted, final, &self._hit)

    cdef int close_arguments(self, list deltas) except -1:
        self.emit_c(deltas, None, '}' if self._param_count else '{}')
        self._param_count = 0
        return 0

    cdef Py_ssize_t scan_json(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """Forward the stable prefix of a JSON parameter value; switch phase when it ends."""
        cdef JsonValueScanner scanner = self._value_scanner
        cdef Py_ssize_t start = pos, limit = -1
        while True:
            if scanner._in_string:
                # Tags inside a JSON string are data.
                pos = scanner.feed_c(text, pos, size, True)
                if scanner.complete:
                    self._phase = D_PARAM_END
                    break
                if pos >= size:
                    break
                continue
            if limit < pos:
                limit = self.seek(text, pos, size, self._json_end_set, final)
            pos = scanner.feed_c(text, pos, limit, False)
            if scanner.complete:
                self._phase = D_PARAM_END
                break
            if scanner._in_string:
                continue
            if self._hit >= 0 and pos == limit:
                # The DSML boundary also ends a scalar or a malformed value.
                scanner.finish_c()
                self._phase = D_PARAM_END
            break
        if pos > start:
            self.emit_c(deltas, None, PyUnicode_Substring(text, start, pos))
        return pos

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0, at, gt
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef int phase
        cdef tuple markers = self._markers
        cdef str close
        while pos < size and not self._payload_closed:
            phase = self._phase
            if phase == D_INVOKE_START or phase == D_PARAM_OR_END or phase == D_PARAM_END:
                pos = _skip_space(kind, data, pos, size)
                if pos == size:
                    break
                if phase == D_INVOKE_START:
                    at = self.seek(text, pos, size, self._invoke_start_set, final)
                elif phase == D_PARAM_OR_END:
                    at = self.seek(text, pos, size, self._param_or_end_set, final)
                else:
                    at = self.seek(text, pos, size, self._param_end_set, final)
                pos = at  # text before the marker is not DSML: skipped
                if self._hit < 0:
                    break
                if phase == D_INVOKE_START:
                    if self._hit == K_BLOCK_CLOSE:
                        self._payload_closed = True  # the base consumes the close tag
                    else:
                        pos += PyUnicode_GET_LENGTH(<str>markers[K_INVOKE])
                        self._phase = D_INVOKE_HEADER
                        self._resume = 0
                elif phase == D_PARAM_END:
                    if self._hit == K_PARAM_CLOSE:
                        pos += PyUnicode_GET_LENGTH(<str>markers[K_PARAM_CLOSE])
                    # A missing parameter close tag: the next tag decides.
                    self._phase = D_PARAM_OR_END
                elif self._hit == K_PARAM:
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_PARAM])
                    self._phase = D_PARAM_HEADER
                    self._resume = 0
                else:
                    self.close_arguments(deltas)
                    if self._hit == K_INVOKE_CLOSE:
                        pos += PyUnicode_GET_LENGTH(<str>markers[K_INVOKE_CLOSE])
                    # else a missing invoke close tag: the block close / next invoke is handled there
                    self._phase = D_INVOKE_START
            elif phase == D_INVOKE_HEADER or phase == D_PARAM_HEADER:
                gt = PyUnicode_FindChar(text, u'>', pos + self._resume, size, 1) if pos + self._resume < size else -1
                if gt < 0:
                    self._resume = size - pos
                    break
                self._resume = 0
                header = PyUnicode_Substring(text, pos, gt)
                pos = gt + 1
                if phase == D_INVOKE_HEADER:
                    name = _attribute(header, 'name')
                    self.start_call(None)
                    self._param_count = 0
                    if name:
                        self.emit_c(deltas, name, None)
                    else:
                        self._output_index = REJECTED_INDEX  # no name: never invent one
                    self._phase = D_PARAM_OR_END
                else:
                    is_string = _attribute(header, 'string') == 'true'
                    key = json_quoted(_attribute(header, 'name'))
                    prefix = '{' if self._param_count == 0 else ', '
                    self.emit_c(deltas, None, f'{prefix}{key}: "' if is_string else f'{prefix}{key}: ')
                    self._param_count += 1
                    self._value_scanner.reset_c()
                    self._phase = D_STRING if is_string else D_JSON
            elif phase == D_STRING:
                close = <str>markers[K_PARAM_CLOSE]
                at = PyUnicode_Find(text, close, pos, size, 1)
                if at >= 0:
                    self.emit_c(deltas, None, json_string_body(text, pos, at) + '"')
                    pos = at + PyUnicode_GET_LENGTH(close)
                    self._phase = D_PARAM_OR_END
                    continue
                at = size if final else tag_prefix_hold(text, pos, close)
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
        if phase == D_STRING:
            self.emit_c(deltas, None, '"')
        if phase != D_INVOKE_START and phase != D_INVOKE_HEADER:
            self.close_arguments(deltas)
        self._phase = D_INVOKE_START
        return 0


cdef class DeepSeekV4ToolParser(DeepSeekV32ToolParser):
    """DeepSeek V4 DSML: the same grammar in ``<｜DSML｜tool_calls>`` blocks."""

    structural_tag_model = 'deepseek_v4'
    tool_calls_block_name = 'tool_calls'
