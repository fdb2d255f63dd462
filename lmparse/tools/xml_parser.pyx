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
import math
from json.encoder import encode_basestring as _encode_basestring

from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.base cimport ToolParser, hook_overrides, tag_prefix_hold

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
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

cdef enum:
    XH_FUNCTION = 1
    XH_ARG_START = 2
    XH_ARG_NAME = 4
    XH_CALL_END = 8

_PHASE_NAMES = ('function', 'arg_start', 'arg_name', 'arg_value', 'call_end', 'done')
_XML_HOOK_NAMES = ('_consume_function', '_consume_arg_start', '_consume_arg_name', '_consume_call_end')

__all__ = ['XmlToolParser', 'Qwen3CoderToolParser', 'InternS2PreviewToolParser', 'Glm47ToolParser']

# ---- value conversion (once per held value; plain Python is fine here) ------


def _reject_constant(name):
    raise ValueError(f'{name} is not JSON')


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f'{text} overflows a double')
    return value


# NaN / Infinity / overflowing numbers would serialize to invalid JSON: reject them.
_loads = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float).decode


cdef tuple _coerce_one(str raw, object schema_type):
    """``(value, converted)``: ``raw`` as ``schema_type``; ``(raw, False)`` when it is not one."""
    s = raw.strip()
    if schema_type is None or schema_type == 'string':
        if s.startswith('"'):
            try:
                value = _loads(s)
            except (ValueError, RecursionError):
                return raw, True
            if isinstance(value, str):
                return value, True
        return raw, True
    if schema_type == 'boolean':
        lowered = s.lower()
        if lowered == 'true':
            return True, True
        if lowered == 'false':
            return False, True
        return raw, False
    if schema_type == 'null':
        return (None, True) if s.lower() == 'null' else (raw, False)
    if schema_type not in ('integer', 'number', 'array', 'object'):
        return raw, False
    try:
        value = _loads(s)
    except (ValueError, RecursionError):
        return raw, False
    if schema_type == 'integer':
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif schema_type == 'number':
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif schema_type == 'array':
        ok = isinstance(value, list)
    else:
        ok = isinstance(value, dict)
    return (value, True) if ok else (raw, False)


cdef object _coerce_arg(str raw, object types):
    """Convert a complete held value; ``types`` is ``_schema_types`` of its schema or None."""
    if types is None:
        return raw  # no schema for this parameter: the text as written
    if not types:
        return _coerce_one(raw, None)[0]
    if len(types) == 1:
        return _coerce_one(raw, types[0])[0]
    for schema_type in types:
        value, ok = _coerce_one(raw, schema_type)
        if ok:
            return value
    return raw


def _schema_types(schema, int depth=0):
    """Candidate JSON types of a parameter schema: non-null types in order, then ``null``.

    ``type`` (a string or a list) wins; otherwise the branches of ``anyOf`` /
    ``oneOf`` are collected. ``()`` means the schema names no type.
    """
    declared = schema.get('type')
    found = []
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list):
        found = [t for t in declared if isinstance(t, str)]
    elif depth < 8:
        for key in ('anyOf', 'oneOf'):
            branches = schema.get(key)
            if isinstance(branches, list):
                for branch in branches:
                    if isinstance(branch, dict):
                        found.extend(_schema_types(branch, depth + 1))
    ordered = []
    for t in found:
        if t != 'null' and t not in ordered:
            ordered.append(t)
    if 'null' in found:
        ordered.append('null')
    return tuple(ordered)


cdef str _normalize_value(str raw, bint strip_newlines):
    """Drop one protocol newline after the opening and before the closing tag."""
    if not strip_newlines:
        return raw
    if raw.startswith('\r\n'):
        raw = raw[2:]
    elif raw.startswith('\n'):
        raw = raw[1:]
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(raw)
    if raw.endswith('\r\n'):
        raw = PyUnicode_Substring(raw, 0, n - 2)
    elif raw.endswith('\n'):
        raw = PyUnicode_Substring(raw, 0, n - 1)
    return raw


cdef str _escape(str text, Py_ssize_t a, Py_ssize_t b):
    """JSON string body of ``text[a:b]`` (same escapes as ``json.dumps(ensure_ascii=False)``)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i
    cdef Py_UCS4 ch
    for i in range(a, b):
        ch = PyUnicode_READ(kind, data, i)
        if ch < 0x20 or ch == u'"' or ch == u'\\':
            quoted = _encode_basestring(PyUnicode_Substring(text, a, b))
            return PyUnicode_Substring(quoted, 1, PyUnicode_GET_LENGTH(quoted) - 1)
    if a == 0 and b == PyUnicode_GET_LENGTH(text):
        return text
    return PyUnicode_Substring(text, a, b)


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
    return PyUnicode_Substring(text, a, b).strip()


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
        prefixes = cls.arg_value_close_prefixes
        if prefixes is None:
            self._hold_all_value_prefixes = True
            self._value_prefixes = ()
        else:
            self._hold_all_value_prefixes = False
            self._value_prefixes = tuple(sorted(prefixes, key=len, reverse=True))
        self._strip_newlines = bool(cls.strip_value_newlines)
        self._xml_hooks = hook_overrides(cls, _XML_HOOK_NAMES)
        self._buffered = []
        self._frags = []
        self._pending_suffix = ''
        self._reset_call_state()

    cdef _reset_call_state(self):
        self._phase = PH_FUNCTION
        self._func_name = None
        self._arg_name = None
        self._call_props = None
        self._arg_types = None
        self._mode = M_UNDECIDED
        self._pending_suffix = ''
        self._buffered.clear()
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
        self._frags.clear()
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

    cdef int flush(self, list deltas) except -1:
        cdef list frags = self._frags
        if frags:
            joined = frags[0] if len(frags) == 1 else ''.join(frags)
            frags.clear()
            self.emit_c(deltas, None, joined)
        return 0

    cdef int begin_function(self, list deltas, object name) except -1:
        self._func_name = name
        props = None
        schemas = self._tool_schemas
        if schemas is not None:
            parameters = schemas.get(name)
            if isinstance(parameters, dict):
                props = parameters.get('properties')
        self._call_props = props if isinstance(props, dict) else None
        self.emit_c(deltas, name, None)
        self._name_emitted = True
        return 0

    cdef int open_object(self) except -1:
        if not self._json_open:
            self._frags.append('{')
            self._json_open = True
        return 0

    cdef int close_object(self) except -1:
        if self._func_name is None or self._json_closed:
            return 0
        self.open_object()
        self._frags.append('}')
        self._json_closed = True
        return 0

    cdef int begin_arg(self, object name) except -1:
        self._arg_name = name
        schema = None
        props = self._call_props
        if props is not None:
            schema = props.get(name)
        self._arg_types = _schema_types(schema) if isinstance(schema, dict) else None
        self._mode = M_UNDECIDED
        self._pending_suffix = ''
        self._buffered.clear()
        return 0

    cdef str key_prefix(self):
        cdef str key = json.dumps(self._arg_name, ensure_ascii=False)
        self.open_object()
        self._arg_count += 1
        return key + ': ' if self._arg_count == 1 else ', ' + key + ': '

    cdef Py_ssize_t consume_value(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -1:
        cdef str close = self._value_close
        cdef Py_ssize_t at = PyUnicode_Find(text, close, pos, size, 1) if pos < size else -1
        cdef Py_ssize_t end
        if at >= 0:
            if at > pos:
                self.value_part(text, pos, at)
            self.finish_arg()
            self._phase = PH_ARG_START
            return at + PyUnicode_GET_LENGTH(close)
        if final:
            end = size
        elif self._hold_all_value_prefixes:
            end = tag_prefix_hold(text, pos, close)
        else:
            end = size
            for prefix in self._value_prefixes:
                if text.endswith(prefix, pos):
                    end = size - PyUnicode_GET_LENGTH(prefix)
                    break
        if end > pos:
            self.value_part(text, pos, end)
        return end

    cdef int value_part(self, str text, Py_ssize_t a, Py_ssize_t b) except -1:
        cdef int kind, mode = self._mode
        cdef void *data
        cdef Py_ssize_t i
        if mode == M_STREAMING:
            return self.stream_part(text, a, b)
        self._buffered.append(PyUnicode_Substring(text, a, b))
        if mode == M_BUFFERED:
            return 0
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        i = a
        while i < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        if i == b:
            return 0  # still only whitespace: the value's kind is unknown
        raw = ''.join(self._buffered)
        joined = raw
        if self._strip_newlines:
            if joined.startswith('\r\n'):
                joined = joined[2:]
            elif joined.startswith('\n'):
                joined = joined[1:]
        types = self._arg_types
        if PyUnicode_READ(kind, data, i) == u'"' or (types is not None and (not types or types[0] != 'string')):
            # Quoted or typed: held whole until the close tag.
            self._mode = M_BUFFERED
            self._buffered = [raw]
            return 0
        self._mode = M_STREAMING
        self._buffered.clear()
        self._frags.append(self.key_prefix() + '"')
        return self.stream_part(joined, 0, PyUnicode_GET_LENGTH(joined))

    cdef int stream_part(self, str text, Py_ssize_t a, Py_ssize_t b) except -1:
        cdef int kind
        cdef void *data
        cdef Py_ssize_t hold = 0
        cdef Py_UCS4 last
        if not self._strip_newlines:
            if b > a:
                self._frags.append(_escape(text, a, b))
            return 0
        if self._pending_suffix:
            text = self._pending_suffix + PyUnicode_Substring(text, a, b)
            a = 0
            b = PyUnicode_GET_LENGTH(text)
            self._pending_suffix = ''
        if b <= a:
            return 0
        # A trailing newline may be the protocol's: hold it until more text arrives.
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        last = PyUnicode_READ(kind, data, b - 1)
        if last == u'\n':
            hold = 2 if b - a > 1 and PyUnicode_READ(kind, data, b - 2) == u'\r' else 1
        elif last == u'\r':
            hold = 1
        if hold:
            self._pending_suffix = PyUnicode_Substring(text, b - hold, b)
            b -= hold
        if b > a:
            self._frags.append(_escape(text, a, b))
        return 0

    cdef int finish_arg(self) except -1:
        if self._mode == M_STREAMING:
            if self._pending_suffix == '\r':
                self._frags.append('\\r')
            self._frags.append('"')
        else:
            raw = _normalize_value(''.join(self._buffered), self._strip_newlines)
            value = _coerce_arg(raw, self._arg_types)
            self._frags.append(self.key_prefix() + json.dumps(value, ensure_ascii=False))
        self._arg_name = None
        self._arg_types = None
        self._mode = M_UNDECIDED
        self._pending_suffix = ''
        self._buffered.clear()
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
        return _schema_types(schema)

    @staticmethod
    def _resolve_schema_type(dict schema not None):
        """The first candidate type of a schema, or None."""
        types = _schema_types(schema)
        return types[0] if types else None

    @staticmethod
    def _coerce_value(str raw_value not None, schema_type=None):
        """``raw_value`` converted to ``schema_type``; the original text when it is not one."""
        return _coerce_one(raw_value, schema_type)[0]


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
        from lmparse.request import as_request, update_request

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
