"""Sequential, function-first XML-like tool calls (Qwen3-Coder, InternS2, GLM-4.5/4.7).

``XmlToolParser`` is the shared driver. It alone owns the parse state::

    function -> arg_start -> arg_name -> arg_value -> arg_start ... -> call_end -> done
                                                                          |
                                                      (another call) -> function

Dialects recognise syntax through hooks that return semantic results (or
"need more text") and never touch the state. The driver streams argument
values, builds the OpenAI ``function.arguments`` JSON object incrementally and
converts held values by the request's JSON schema.
"""
import json

from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.base cimport ToolParser, hook_overrides, longest_first
from lmparse.tools.json_escape cimport json_string_body
from lmparse.tools.xml_values cimport (
    HeldText, coerce_one, held_append, held_free, held_take, held_value_json, schema_types_c, span,
)

from lmparse.request import ChatCompletionRequest as _OwnRequest
from lmparse.request import as_request, update_request

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    void PyUnicode_WRITE(int kind, void *data, Py_ssize_t index, Py_UCS4 value) nogil
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil

cdef enum:
    PH_FUNCTION = 0
    PH_ARG_START = 1
    PH_ARG_NAME = 2
    PH_ARG_VALUE = 3
    PH_CALL_END = 4
    PH_DONE = 5

cdef enum:
    M_UNDECIDED = 0
    M_BUFFERED = 1
    M_STREAMING = 2

# A streamed value's trailing newline, held until more text shows it is not the protocol's.
cdef enum:
    SUF_NONE = 0
    SUF_LF = 1
    SUF_CR = 2
    SUF_CRLF = 3

cdef tuple _SUFFIX_JSON = ('', '\\n', '\\r', '\\r\\n')

cdef enum:
    XH_FUNCTION = 1
    XH_ARG_START = 2
    XH_ARG_NAME = 4
    XH_CALL_END = 8

_set_spaces_between_special_tokens = _OwnRequest.spaces_between_special_tokens.__set__

_PHASE_NAMES = ('function', 'arg_start', 'arg_name', 'arg_value', 'call_end', 'done')
_XML_HOOK_NAMES = ('_consume_function', '_consume_arg_start', '_consume_arg_name', '_consume_call_end')

__all__ = ['XmlToolParser', 'Qwen3CoderToolParser', 'InternS2PreviewToolParser', 'Glm47ToolParser']

cdef inline Py_ssize_t _after_newline(int kind, void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """``a`` past one leading ``\\r\\n`` or ``\\n`` of ``text[a:b]``."""
    if b - a >= 2 and PyUnicode_READ(kind, data, a) == u'\r' and PyUnicode_READ(kind, data, a + 1) == u'\n':
        return a + 2
    if b - a >= 1 and PyUnicode_READ(kind, data, a) == u'\n':
        return a + 1
    return a


cdef inline Py_ssize_t _before_newline(int kind, void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """``b`` before one trailing ``\\r\\n`` or ``\\n`` of ``text[a:b]``."""
    if b - a >= 2 and PyUnicode_READ(kind, data, b - 2) == u'\r' and PyUnicode_READ(kind, data, b - 1) == u'\n':
        return b - 2
    if b - a >= 1 and PyUnicode_READ(kind, data, b - 1) == u'\n':
        return b - 1
    return b


cdef inline Py_ssize_t _find_char(str text, Py_ssize_t pos, Py_ssize_t size, Py_UCS4 ch) except -2:
    """``text.find(ch, pos, size)``; short spans (a token or so) are scanned in place."""
    cdef int kind
    cdef void *data
    if size - pos > 16:
        return PyUnicode_FindChar(text, ch, pos, size, 1)
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    while pos < size:
        if PyUnicode_READ(kind, data, pos) == ch:
            return pos
        pos += 1
    return -1


cdef inline Py_ssize_t _match_len(str text, Py_ssize_t pos, Py_ssize_t size, str tag) noexcept:
    """How many leading characters of ``tag`` ``text[pos:size]`` matches."""
    cdef int kind = PyUnicode_KIND(text), tkind = PyUnicode_KIND(tag)
    cdef void *data = PyUnicode_DATA(text)
    cdef void *tdata = PyUnicode_DATA(tag)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(tag), i = 0
    if n > size - pos:
        n = size - pos
    while i < n and PyUnicode_READ(kind, data, pos + i) == PyUnicode_READ(tkind, tdata, i):
        i += 1
    return i


cdef inline str _json_body(str text, Py_ssize_t a, Py_ssize_t b):
    """``json_string_body``; a short span needing no escape (a streamed token) is checked in place."""
    cdef int kind
    cdef void *data
    cdef Py_ssize_t i
    cdef Py_UCS4 ch
    if b - a > 8:
        return json_string_body(text, a, b)
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    for i in range(a, b):
        ch = PyUnicode_READ(kind, data, i)
        if ch < 0x20 or ch == u'"' or ch == u'\\':
            return json_string_body(text, a, b)
    return span(text, a, b)


cdef inline bint _prefix_at(str text, Py_ssize_t pos, Py_ssize_t size, str tag):
    """``text[pos:size]`` is a non-empty proper prefix of ``tag``."""
    cdef Py_ssize_t n = size - pos
    cdef Py_ssize_t i
    cdef int kind, tkind
    cdef void *data
    cdef void *tdata
    if n <= 0 or n >= PyUnicode_GET_LENGTH(tag):
        return False
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    tkind = PyUnicode_KIND(tag)
    tdata = PyUnicode_DATA(tag)
    for i in range(n):
        if PyUnicode_READ(kind, data, pos + i) != PyUnicode_READ(tkind, tdata, i):
            return False
    return True


cdef inline Py_ssize_t _skip_space(str text, Py_ssize_t pos, Py_ssize_t size):
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
        pos += 1
    return pos


cdef inline Py_ssize_t _find_lt(str text, Py_ssize_t pos, Py_ssize_t size):
    if pos >= size:
        return -1
    return PyUnicode_FindChar(text, u'<', pos, size, 1)


cdef inline str _stripped(str text, Py_ssize_t a, Py_ssize_t b):
    """``text[a:b].strip()``."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
        a += 1
    while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)):
        b -= 1
    return PyUnicode_Substring(text, a, b)


cdef int _phase_code(object name, tuple allowed, str hook) except -1:
    cdef int i
    for i in range(len(_PHASE_NAMES)):
        if _PHASE_NAMES[i] == name and name in allowed:
            return i
    raise ValueError(f'{hook} returned phase {name!r}; expected one of {allowed}')


cdef Py_ssize_t _hook_pos(object value, Py_ssize_t pos, Py_ssize_t size, str hook) except -1:
    if not isinstance(value, int) or isinstance(value, bool) or not pos <= value <= size:
        raise ValueError(f'{hook} returned position {value!r}; expected an int in [{pos}, {size}]')
    return value


cdef class XmlToolParser(ToolParser):
    """Shared driver for sequential, function-first, tag-delimited tool calls.

    Dialects set ``arg_value_close_tag`` (and optionally
    ``arg_value_close_prefixes`` / ``strip_value_newlines``) and implement the
    hooks ``_consume_function``, ``_consume_arg_start`` and
    ``_consume_arg_name`` (plus ``_consume_call_end`` when one block may hold
    several calls). A hook returns a tuple starting with the next cursor, or
    ``None`` when it needs more text; it never consumes the outer close tag.
    """

    # The marker that ends a raw argument value.
    arg_value_close_tag = None
    # None: hold back every proper prefix of the value close tag (right for any
    # chunking). A tuple: only these token-aligned prefixes.
    arg_value_close_prefixes = None
    # Remove one protocol newline after the value opener and before its closer.
    strip_value_newlines = False

    def __cinit__(self, *args, **kwargs):
        cls = type(self)
        close = cls.arg_value_close_tag
        self._value_close = close if isinstance(close, str) and close else None
        self._value_prefixes = longest_first(cls.arg_value_close_prefixes)
        self._hold_all_value_prefixes = self._value_prefixes is None
        if self._hold_all_value_prefixes:
            self._value_prefixes = ()
        self._strip_newlines = bool(cls.strip_value_newlines)
        self._xml_hooks = hook_overrides(cls, _XML_HOOK_NAMES)
        self._value_lead = self._value_close[0] if self._value_close is not None else 0
        self._held.kind = 1
        self._out = None
        self._frags = []
        self._reset_call_state()

    def __dealloc__(self):
        held_free(&self._held)

    cdef _reset_call_state(self):
        self._phase = PH_FUNCTION
        self._func_name = None
        self._arg_name = None
        self._call_props = None
        self._arg_types = None
        self._mode = M_UNDECIDED
        self._suffix = SUF_NONE
        self._held.len = 0
        self._json_open = False
        self._json_closed = False
        self._arg_count = 0
        self._resume = 0

    @property
    def _phase_name(self):
        return _PHASE_NAMES[self._phase]

    cdef int begin_block_c(self) except -1:
        if self._value_close is None:
            raise TypeError(f'{type(self).__name__}.arg_value_close_tag must be a non-empty str')
        ToolParser.begin_block_c(self)
        self.start_call(None)
        self._reset_call_state()
        self._out = None
        del self._frags[:]
        return 0

    # ---- helpers for hooks -------------------------------------------------

    cdef bint hold_tag_at(self, str payload, Py_ssize_t pos, str tag):
        return _prefix_at(payload, pos, PyUnicode_GET_LENGTH(payload), tag)

    cdef bint close_tag_at(self, str payload, Py_ssize_t pos):
        close = self._close_tag
        return close is not None and payload.startswith(close, pos)

    # ---- C-level hooks: results in _out_*; -1 means "need more" ------------
    # On -1 a hook sets _out_skip (text before it is junk the driver may drop)
    # and _resume (chars after _out_skip already searched).

    cdef Py_ssize_t function_c(self, str payload, Py_ssize_t pos, bint final) except -2:
        raise NotImplementedError(f'{type(self).__name__}._consume_function has not been implemented')

    cdef Py_ssize_t arg_start_c(self, str payload, Py_ssize_t pos) except -2:
        raise NotImplementedError(f'{type(self).__name__}._consume_arg_start has not been implemented')

    cdef Py_ssize_t arg_name_c(self, str payload, Py_ssize_t pos) except -2:
        raise NotImplementedError(f'{type(self).__name__}._consume_arg_name has not been implemented')

    cdef Py_ssize_t call_end_c(self, str payload, Py_ssize_t pos, bint final) except -2:
        # One call per block: skip whitespace, the payload is done.
        self._out_phase = PH_DONE
        return _skip_space(payload, pos, PyUnicode_GET_LENGTH(payload))

    # ---- Python-visible hooks (a Python subclass may override them) ---------

    def _consume_function(self, str payload not None, Py_ssize_t pos, bint final=False):
        """``(pos, name, "arg_start" | "done")`` or None; name None with "done" = empty block."""
        self._resume = 0
        cdef Py_ssize_t r = self.function_c(payload, pos, final)
        if r < 0:
            return None
        return r, self._out_name, _PHASE_NAMES[self._out_phase]

    def _consume_arg_start(self, str payload not None, Py_ssize_t pos):
        """``(pos, "arg_name" | "done")`` or None."""
        self._resume = 0
        cdef Py_ssize_t r = self.arg_start_c(payload, pos)
        if r < 0:
            return None
        return r, _PHASE_NAMES[self._out_phase]

    def _consume_arg_name(self, str payload not None, Py_ssize_t pos):
        """``(value_start, argument_name)`` or None."""
        self._resume = 0
        cdef Py_ssize_t r = self.arg_name_c(payload, pos)
        if r < 0:
            return None
        return r, self._out_name

    def _consume_call_end(self, str payload not None, Py_ssize_t pos, bint final=False):
        """After a call: ``(pos, "function")`` when another call follows in this block, ``(pos, "done")`` otherwise."""
        self._resume = 0
        cdef Py_ssize_t r = self.call_end_c(payload, pos, final)
        if r < 0:
            return None
        return r, _PHASE_NAMES[self._out_phase]

    # ---- hook dispatch -------------------------------------------------------

    cdef Py_ssize_t run_hook(self, int phase, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2:
        cdef int bit
        if phase == PH_FUNCTION:
            bit = XH_FUNCTION
        elif phase == PH_ARG_START:
            bit = XH_ARG_START
        elif phase == PH_ARG_NAME:
            bit = XH_ARG_NAME
        else:
            bit = XH_CALL_END
        if not (self._xml_hooks & bit):
            if phase == PH_FUNCTION:
                return self.function_c(text, pos, final)
            if phase == PH_ARG_START:
                return self.arg_start_c(text, pos)
            if phase == PH_ARG_NAME:
                return self.arg_name_c(text, pos)
            return self.call_end_c(text, pos, final)
        # A Python hook: validate its result.
        self._out_skip = pos
        self._resume = 0
        if pos >= size and not (final and phase == PH_CALL_END):
            return -1
        if phase == PH_FUNCTION:
            hook = '_consume_function'
            result = self._consume_function(text, pos, final)
        elif phase == PH_ARG_START:
            hook = '_consume_arg_start'
            result = self._consume_arg_start(text, pos)
        elif phase == PH_ARG_NAME:
            hook = '_consume_arg_name'
            result = self._consume_arg_name(text, pos)
        else:
            hook = '_consume_call_end'
            result = self._consume_call_end(text, pos, final)
        if result is None:
            return -1
        if not isinstance(result, tuple) or len(result) != (3 if phase == PH_FUNCTION else 2):
            raise ValueError(f'{type(self).__name__}.{hook} returned {result!r}; expected a tuple or None')
        r = _hook_pos(result[0], pos, size, hook)
        if phase == PH_FUNCTION:
            name = result[1]
            self._out_phase = _phase_code(result[2], ('arg_start', 'done'), hook)
            if not (isinstance(name, str) or (name is None and self._out_phase == PH_DONE)):
                raise ValueError(f'{type(self).__name__}.{hook} returned name {name!r}; expected a str')
            self._out_name = name
        elif phase == PH_ARG_START:
            self._out_phase = _phase_code(result[1], ('arg_name', 'done'), hook)
        elif phase == PH_ARG_NAME:
            if not isinstance(result[1], str):
                raise ValueError(f'{type(self).__name__}.{hook} returned name {result[1]!r}; expected a str')
            self._out_name = result[1]
        else:
            self._out_phase = _phase_code(result[1], ('function', 'done'), hook)
        return r

    # ---- the driver ------------------------------------------------------------

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0, r
        cdef int phase
        if (self._phase == PH_ARG_VALUE and not final and not self._payload_closed
                and self._hold_all_value_prefixes and _find_char(text, 0, size, self._value_lead) < 0):
            # Plain value text (most chunks): no close tag, nothing to hold back.
            if self._mode == M_BUFFERED:
                held_append(&self._held, text, 0, size)
            else:
                self.value_part(text, 0, size)
                if self._out is not None:
                    self.flush(deltas)
            return size
        self._last_call_end = -1
        while not self._payload_closed:
            phase = self._phase
            if phase == PH_ARG_VALUE:
                pos = self.consume_value(text, pos, size, final)
                if self._phase == PH_ARG_VALUE:
                    break
                continue
            if phase == PH_DONE:
                self._payload_closed = True
                break
            r = self.run_hook(phase, text, pos, size, final)
            if r < 0:
                if self._out_skip > pos:
                    pos = self._out_skip
                break
            pos = r
            self._resume = 0
            if phase == PH_FUNCTION:
                name = self._out_name
                if name is None:
                    self._phase = PH_DONE  # the block holds no call
                    continue
                self.begin_function(deltas, name)
                if self._out_phase == PH_DONE:
                    self.close_object()
                    self._phase = PH_CALL_END
                else:
                    self._phase = PH_ARG_START
            elif phase == PH_ARG_START:
                if self._out_phase == PH_ARG_NAME:
                    self._phase = PH_ARG_NAME
                else:
                    self.close_object()
                    self._phase = PH_CALL_END
            elif phase == PH_ARG_NAME:
                self.begin_arg(self._out_name)
                self._phase = PH_ARG_VALUE
            else:  # PH_CALL_END
                if self._out_phase == PH_FUNCTION:
                    if pos == self._last_call_end:
                        raise ValueError(f'{type(self).__name__}: hooks made no progress at {pos}')
                    self._last_call_end = pos
                    self.flush(deltas)
                    self.start_call(None)
                    self._reset_call_state()
                else:
                    self._phase = PH_DONE
        if final and not self._payload_closed:
            # End of input: close what was emitted, invent nothing.
            if self._phase == PH_ARG_VALUE and self._mode == M_STREAMING:
                self.finish_arg()
            self.close_object()
            self._payload_closed = True
        self.flush(deltas)
        return pos

    # ---- output: fragments of the arguments JSON, one delta per flush ------------

    cdef int put(self, str fragment) except -1:
        # Most feeds produce one fragment: it skips the list.
        if self._out is None:
            self._out = fragment
        else:
            self._frags.append(fragment)
        return 0

    cdef int flush(self, list deltas) except -1:
        out = self._out
        if out is None:
            return 0
        self._out = None
        frags = self._frags
        if frags:
            frags.insert(0, out)
            out = ''.join(frags)
            del frags[:]
        self.emit_c(deltas, None, out)
        return 0

    cdef int begin_function(self, list deltas, object name) except -1:
        self._func_name = name
        props = None
        schemas = self._tool_schemas
        if schemas is not None:
            parameters = (<dict>schemas).get(name) if type(schemas) is dict else schemas.get(name)
            if isinstance(parameters, dict):
                props = (<dict>parameters).get('properties') if type(parameters) is dict else parameters.get('properties')
        self._call_props = props if isinstance(props, dict) else None
        self.emit_c(deltas, name, None)
        self._name_emitted = True
        return 0

    cdef int open_object(self) except -1:
        if not self._json_open:
            self.put('{')
            self._json_open = True
        return 0

    cdef int close_object(self) except -1:
        if self._func_name is None or self._json_closed:
            return 0
        self.open_object()
        self.put('}')
        self._json_closed = True
        return 0

    cdef int begin_arg(self, object name) except -1:
        self._arg_name = name
        schema = None
        props = self._call_props
        if props is not None:
            schema = (<dict>props).get(name) if type(props) is dict else props.get(name)
        self._arg_types = schema_types_c(schema, 0) if isinstance(schema, dict) else None
        self._mode = M_UNDECIDED
        self._suffix = SUF_NONE
        self._held.len = 0
        return 0

    cdef int put_key(self, bint open_string) except -1:
        """``"key": `` (after ``, `` from the second argument on); then ``"`` when ``open_string``."""
        name = self._arg_name
        cdef str key
        if type(name) is str:
            key = _json_body(<str>name, 0, PyUnicode_GET_LENGTH(name))  # json.dumps' escapes
            self.open_object()
            self._arg_count += 1
            self.put('"' if self._arg_count == 1 else ', "')
            self.put(key)
        else:
            key = json.dumps(name, ensure_ascii=False)
            self.open_object()
            self._arg_count += 1
            if self._arg_count > 1:
                self.put(', ')
            self.put(key)
            self.put(': "' if open_string else ': ')
            return 0
        self.put('": "' if open_string else '": ')
        return 0

    # ---- argument values ----------------------------------------------------------

    cdef Py_ssize_t consume_value(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -1:
        cdef str close = self._value_close
        cdef Py_ssize_t m = PyUnicode_GET_LENGTH(close)
        cdef Py_ssize_t at, end = size, k
        if self._hold_all_value_prefixes:
            # The close tag and any partial one at the end start with its lead
            # character: one scan for it; plain value text costs no more.
            at = _find_char(text, pos, size, self._value_lead)
            while at >= 0:
                k = _match_len(text, at, size, close)
                if k == m:
                    break
                if at + k == size:  # a partial close tag ends the text
                    if not final:
                        end = at
                    at = -1
                    break
                at = _find_char(text, at + 1, size, self._value_lead)
        else:
            at = PyUnicode_Find(text, close, pos, size, 1) if pos < size else -1
            if at < 0 and not final:
                for prefix in self._value_prefixes:
                    if text.endswith(prefix, pos):
                        end = size - PyUnicode_GET_LENGTH(prefix)
                        break
        if at >= 0:
            if self._mode == M_UNDECIDED and self._held.len == 0:
                self.finish_whole(text, pos, at)
            else:
                self.value_part(text, pos, at)
                self.finish_arg()
            self._phase = PH_ARG_START
            return at + m
        self.value_part(text, pos, end)
        return end

    cdef int value_part(self, str text, Py_ssize_t a, Py_ssize_t b) except -1:
        """``text[a:b]``, more of the current value (its close tag not seen yet)."""
        cdef int kind, mode = self._mode
        cdef void *data
        cdef Py_ssize_t i
        if mode == M_STREAMING:
            return self.stream_part(text, a, b)
        if mode == M_BUFFERED or b <= a:
            return held_append(&self._held, text, a, b)
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        i = a
        while i < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        if i == b:
            return held_append(&self._held, text, a, b)  # still only whitespace: the value's kind is unknown
        types = self._arg_types
        if PyUnicode_READ(kind, data, i) == u'"' or (types is not None and (not types or types[0] != 'string')):
            # Quoted or typed: held whole until the close tag.
            self._mode = M_BUFFERED
            return held_append(&self._held, text, a, b)
        self._mode = M_STREAMING
        self.put_key(True)
        if self._held.len:  # leading whitespace from earlier feeds
            held_append(&self._held, text, a, b)
            text = held_take(&self._held, 0, self._held.len)
            a = 0
            b = PyUnicode_GET_LENGTH(text)
            kind = PyUnicode_KIND(text)
            data = PyUnicode_DATA(text)
        if self._strip_newlines:
            a = _after_newline(kind, data, a, b)
        return self.stream_part(text, a, b)

    cdef int stream_part(self, str text, Py_ssize_t a, Py_ssize_t b) except -1:
        cdef int kind, hold = SUF_NONE
        cdef void *data
        cdef Py_UCS4 last
        if b <= a:
            return 0
        if self._strip_newlines:
            # A trailing newline may be the protocol's: hold it until more text arrives.
            kind = PyUnicode_KIND(text)
            data = PyUnicode_DATA(text)
            last = PyUnicode_READ(kind, data, b - 1)
            if last == u'\n':
                if b - a > 1 and PyUnicode_READ(kind, data, b - 2) == u'\r':
                    hold = SUF_CRLF
                elif b - a == 1 and self._suffix == SUF_CR:
                    self._suffix = SUF_CRLF  # "\r" held before + "\n"
                    return 0
                else:
                    hold = SUF_LF
            elif last == u'\r':
                hold = SUF_CR
            if self._suffix != SUF_NONE:
                self.put(<str>_SUFFIX_JSON[self._suffix])
            self._suffix = hold
            b -= 2 if hold == SUF_CRLF else (1 if hold != SUF_NONE else 0)
            if b <= a:
                return 0
        self.put(_json_body(text, a, b))
        return 0

    cdef int finish_whole(self, str text, Py_ssize_t a, Py_ssize_t b) except -1:
        """The complete value ``text[a:b]`` seen at once (nothing held or streamed before)."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t i = a
        while i < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        types = self._arg_types
        cdef bint held = i == b or PyUnicode_READ(kind, data, i) == u'"' or (
            types is not None and (not types or types[0] != 'string'))
        if self._strip_newlines:
            a = _after_newline(kind, data, a, b)
            b = _before_newline(kind, data, a, b)
        if held:
            self.put_converted(text, a, b)
        else:
            # What streaming would have sent, in one piece.
            self.put_key(True)
            if b > a:
                self.put(json_string_body(text, a, b))
            self.put('"')
        return self.end_arg()

    cdef int put_converted(self, str text, Py_ssize_t a, Py_ssize_t b) except -1:
        """``"key": `` and the JSON of the held value ``text[a:b]`` converted by the schema."""
        out = held_value_json(text, a, b, self._arg_types)
        if out is None:  # the raw text as a JSON string
            self.put_key(True)
            if b > a:
                self.put(json_string_body(text, a, b))
            self.put('"')
        else:
            self.put_key(False)
            self.put(out)
        return 0

    cdef int finish_arg(self) except -1:
        cdef str raw
        cdef Py_ssize_t a, b
        if self._mode == M_STREAMING:
            if self._suffix == SUF_CR:
                self.put('\\r')  # a lone "\r" is not a protocol newline
            self.put('"')
        else:
            a = 0
            b = self._held.len
            if self._strip_newlines:
                a = _after_newline(self._held.kind, self._held.data, a, b)
                b = _before_newline(self._held.kind, self._held.data, a, b)
            raw = held_take(&self._held, a, b)
            self.put_converted(raw, 0, PyUnicode_GET_LENGTH(raw))
        return self.end_arg()

    cdef int end_arg(self) except -1:
        self._arg_name = None
        self._arg_types = None
        self._mode = M_UNDECIDED
        self._suffix = SUF_NONE
        self._held.len = 0
        return 0

    # ---- LMDeploy-compatible helpers ------------------------------------------

    def _get_param_schema(self, func_name, str param_name not None):
        """The request's JSON schema of one parameter, or None."""
        if func_name is None or self._tool_schemas is None:
            return None
        parameters = self._tool_schemas.get(func_name)
        props = parameters.get('properties') if isinstance(parameters, dict) else None
        schema = props.get(param_name) if isinstance(props, dict) else None
        return schema if isinstance(schema, dict) else None

    @staticmethod
    def _schema_types(dict schema not None):
        """Candidate JSON types of a schema (see the module docs)."""
        return schema_types_c(schema, 0)

    @staticmethod
    def _resolve_schema_type(dict schema not None):
        """The first candidate type of a schema, or None."""
        types = schema_types_c(schema, 0)
        return types[0] if types else None

    @staticmethod
    def _coerce_value(str raw_value not None, schema_type=None):
        """``raw_value`` converted to ``schema_type``; the original text when it is not one."""
        return coerce_one(raw_value, schema_type)[0]


# ---- Qwen3-Coder / Qwen3.5 / InternS2 ------------------------------------------

cdef str Q_FUNC = '<function='
cdef str Q_FUNC_END = '</function>'
cdef str Q_PARAM = '<parameter='


cdef class Qwen3CoderToolParser(XmlToolParser):
    """Qwen3-Coder: ``<tool_call><function=NAME><parameter=KEY>V</parameter></function></tool_call>``.

    Several ``<function=...>`` calls in one block are parsed as separate calls.
    """

    structural_tag_model = 'qwen_3_coder'
    reasoning_structural_tag_model = 'qwen_3_5'
    arg_value_close_tag = '</parameter>'
    strip_value_newlines = True

    @classmethod
    def get_tool_open_tag(cls):
        return '<tool_call>'

    @classmethod
    def get_tool_close_tag(cls):
        return '</tool_call>'

    cdef Py_ssize_t function_c(self, str payload, Py_ssize_t pos, bint final) except -2:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t p = pos, i, a, s, j
        while True:
            i = _find_lt(payload, p, size)
            if i < 0:
                self._out_skip = size
                self._resume = 0
                return -1
            if payload.startswith(Q_FUNC, i):
                a = i + PyUnicode_GET_LENGTH(Q_FUNC)
                s = a
                if i == pos and pos + self._resume > s:
                    s = pos + self._resume
                j = PyUnicode_FindChar(payload, u'>', s, size, 1) if s < size else -1
                if j < 0:
                    self._out_skip = i
                    self._resume = size - i
                    return -1
                self._out_name = _stripped(payload, a, j)
                self._out_phase = PH_ARG_START
                return j + 1
            if self.close_tag_at(payload, i):
                self._out_name = None
                self._out_phase = PH_DONE
                return i
            if not final and (_prefix_at(payload, i, size, Q_FUNC) or self.close_prefix_at(payload, i)):
                self._out_skip = i
                self._resume = 0
                return -1
            p = i + 1

    cdef Py_ssize_t arg_start_c(self, str payload, Py_ssize_t pos) except -2:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t p = pos, i
        while True:
            i = _find_lt(payload, p, size)
            if i < 0:
                self._out_skip = size
                self._resume = 0
                return -1
            if payload.startswith(Q_PARAM, i):
                self._out_phase = PH_ARG_NAME
                return i + PyUnicode_GET_LENGTH(Q_PARAM)
            if payload.startswith(Q_FUNC_END, i):
                self._out_phase = PH_DONE
                return i + PyUnicode_GET_LENGTH(Q_FUNC_END)
            if payload.startswith(Q_FUNC, i) or self.close_tag_at(payload, i):
                # </function> is missing: the call ends here.
                self._out_phase = PH_DONE
                return i
            if (_prefix_at(payload, i, size, Q_PARAM) or _prefix_at(payload, i, size, Q_FUNC_END)
                    or _prefix_at(payload, i, size, Q_FUNC) or self.close_prefix_at(payload, i)):
                self._out_skip = i
                self._resume = 0
                return -1
            p = i + 1

    cdef Py_ssize_t arg_name_c(self, str payload, Py_ssize_t pos) except -2:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t s = pos + self._resume
        cdef Py_ssize_t j = PyUnicode_FindChar(payload, u'>', s, size, 1) if s < size else -1
        if j < 0:
            self._out_skip = pos
            self._resume = size - pos
            return -1
        self._out_name = _stripped(payload, pos, j)
        return j + 1

    cdef Py_ssize_t call_end_c(self, str payload, Py_ssize_t pos, bint final) except -2:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t p = _skip_space(payload, pos, size)
        if p < size and payload.startswith(Q_FUNC, p):
            self._out_phase = PH_FUNCTION
            return p
        if not final and (p == size or _prefix_at(payload, p, size, Q_FUNC)):
            self._out_skip = p
            self._resume = 0
            return -1
        self._out_phase = PH_DONE
        return p


cdef class InternS2PreviewToolParser(Qwen3CoderToolParser):
    """InternS2-preview: the Qwen3-Coder grammar; special tokens are rendered without spaces."""

    def adjust_request(self, request):
        if type(request) is _OwnRequest:
            # The base adjustment returns a fresh copy: set the field on it
            # instead of copying twice (the same result as the general path).
            adjusted = ToolParser.adjust_request(self, request)
            if type(adjusted) is _OwnRequest and adjusted is not request:
                _set_spaces_between_special_tokens(adjusted, False)
                return adjusted
        return super().adjust_request(update_request(as_request(request), spaces_between_special_tokens=False))


# ---- GLM-4.5 / GLM-4.7 -----------------------------------------------------------

cdef str G_KEY = '<arg_key>'
cdef str G_KEY_END = '</arg_key>'
cdef str G_VALUE = '<arg_value>'


cdef class Glm47ToolParser(XmlToolParser):
    """GLM-4.5 / 4.7: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>``."""

    structural_tag_model = 'glm_4_7'
    arg_value_close_tag = '</arg_value>'

    @classmethod
    def get_tool_open_tag(cls):
        return '<tool_call>'

    @classmethod
    def get_tool_close_tag(cls):
        return '</tool_call>'

    cdef Py_ssize_t function_c(self, str payload, Py_ssize_t pos, bint final) except -2:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t p = pos + self._resume, i
        while True:
            i = _find_lt(payload, p, size)
            if i < 0:
                if final and pos < size:
                    # End of input: the rest is the name (LMDeploy's rule).
                    name = _stripped(payload, pos, size)
                    self._out_name = name if name else None
                    self._out_phase = PH_DONE
                    return size
                self._out_skip = pos
                self._resume = size - pos
                return -1
            if payload.startswith(G_KEY, i):
                self._out_name = _stripped(payload, pos, i)
                self._out_phase = PH_ARG_START
                return i
            if self.close_tag_at(payload, i):
                name = _stripped(payload, pos, i)
                self._out_name = name if name else None
                self._out_phase = PH_DONE
                return i
            if not final and (_prefix_at(payload, i, size, G_KEY) or self.close_prefix_at(payload, i)):
                self._out_skip = pos
                self._resume = i - pos
                return -1
            p = i + 1

    cdef Py_ssize_t arg_start_c(self, str payload, Py_ssize_t pos) except -2:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t p = pos, i
        while True:
            i = _find_lt(payload, p, size)
            if i < 0:
                self._out_skip = size
                self._resume = 0
                return -1
            if payload.startswith(G_KEY, i):
                self._out_phase = PH_ARG_NAME
                return i + PyUnicode_GET_LENGTH(G_KEY)
            if self.close_tag_at(payload, i):
                self._out_phase = PH_DONE
                return i
            if _prefix_at(payload, i, size, G_KEY) or self.close_prefix_at(payload, i):
                self._out_skip = i
                self._resume = 0
                return -1
            p = i + 1

    cdef Py_ssize_t arg_name_c(self, str payload, Py_ssize_t pos) except -2:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t s = pos + self._resume
        cdef Py_ssize_t k = PyUnicode_Find(payload, G_KEY_END, s, size, 1) if s < size else -1
        cdef Py_ssize_t v
        if k < 0:
            self._out_skip = pos
            self._resume = size - pos - PyUnicode_GET_LENGTH(G_KEY_END) + 1
            if self._resume < 0:
                self._resume = 0
            return -1
        v = PyUnicode_Find(payload, G_VALUE, k + PyUnicode_GET_LENGTH(G_KEY_END), size, 1)
        if v < 0:
            self._out_skip = pos
            self._resume = k - pos
            return -1
        self._out_name = _stripped(payload, pos, k)
        return v + PyUnicode_GET_LENGTH(G_VALUE)
