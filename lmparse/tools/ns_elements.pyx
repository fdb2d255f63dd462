"""Namespace-marked element calls (MiniMax M3): parameters are elements named after the argument.

    NS<tool_call>
    NS<invoke name="NAME">
    NS<KEY>text or child elements NS</KEY>
    NS</invoke>
    NS</tool_call>

``NS`` (``]<]minimax[>[``) starts every structural tag, so only text after it
is markup. It does not fit the attribute-named family (``dsml``): the key is
the element's own name, so the value's close tag depends on it, and values
nest (an element with child elements is an object, or an array when its
schema says so; the template writes list items as ``<item>``).

Identity goes out at the invoke header. A parameter whose schema type is
only ``string`` streams its raw text JSON-escaped up to ``NS</KEY>``; any
other parameter (typed, untyped, or nested) is held to its close tag and
converted once by the request's schema: leaves as the XML family converts
a held value (``xml_values``), containers from their child elements.
"""
import json

from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.attributes cimport _attribute, _attribute_text, _partial_end, _skip_space
from lmparse.tools.base cimport REJECTED_INDEX, ToolParser, class_basis, immutable_type, marker_match, same_basis, seek_marker
from lmparse.tools.held_text cimport HeldText, held_append, held_free, held_take
from lmparse.tools.json_escape cimport json_string_body
from lmparse.tools.xml_values cimport held_value_json, schema_types_c, value_kind

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = ['MINIMAX_NAMESPACE', 'NsElementToolParser']

MINIMAX_NAMESPACE = ']<]minimax[>['

cdef enum:
    P_INVOKE_START = 0
    P_INVOKE_HEADER = 1
    P_PARAM_OR_END = 2
    P_PARAM_HEADER = 3
    P_STRING = 4
    P_HELD = 5

cdef enum:
    K_INVOKE = 0
    K_INVOKE_CLOSE = 1
    K_BLOCK_CLOSE = 2
    K_END = 3   # NS</  (any close tag)
    K_OPEN = 4  # NS<   (any open tag)

cdef int[3] _INVOKE_START_SET = [K_INVOKE, K_BLOCK_CLOSE, -1]
# NS</ and NS< are prefixes of the named tags: they come last.
cdef int[6] _PARAM_OR_END_SET = [K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_INVOKE, K_END, K_OPEN, -1]
cdef int[3] _ELEMENT_SET = [K_END, K_OPEN, -1]

_PHASE_NAMES = ('invoke_start', 'invoke_header', 'parameter_or_invoke_end', 'parameter_header', 'string_value',
                'held_value')
cdef tuple _DECLARED = ('namespace', 'tool_calls_element', 'invoke_element', 'call_name_attribute')
cdef dict _cache = {}
cdef int _MAX_DEPTH = 128


cdef tuple _class_entry(type cls):
    entry = _cache.get(cls)
    if entry is not None and immutable_type(cls):
        return <tuple>entry
    declared = class_basis(cls, _DECLARED)
    if entry is not None and same_basis(<tuple>(<tuple>entry)[0], declared):
        return <tuple>entry
    for name, value in zip(_DECLARED, declared):
        if not isinstance(value, str) or not value:
            raise TypeError(f'{cls.__name__}.{name} must be a non-empty str, got {value!r}')
    ns, block, invoke, _ = declared
    markers = (f'{ns}<{invoke}', f'{ns}</{invoke}>', f'{ns}</{block}>', f'{ns}</', f'{ns}<')
    entry = (declared, markers, f'{ns}<{block}>')
    if len(_cache) >= 256:
        _cache.clear()
    _cache[cls] = entry
    return <tuple>entry


# ---- held values: the element tree and its conversion (once per held value) ----------


def _parse_children(str text, str ns, Py_ssize_t pos, str close, int depth):
    """``(text parts, [(name, value)], end)`` of an element body from ``pos`` up to ``close``
    (None: the body runs to the end of ``text``). Raises ValueError when malformed."""
    if depth > _MAX_DEPTH:
        raise ValueError('elements nest too deep')
    cdef Py_ssize_t n = len(text), at, gt
    parts = []
    children = []
    while True:
        at = text.find(ns, pos)
        if at < 0:
            if close is not None:
                raise ValueError('unterminated element')
            parts.append(text[pos:])
            return parts, children, n
        parts.append(text[pos:at])
        if close is not None and text.startswith(close, at):
            return parts, children, at + len(close)
        at += len(ns)
        if not text.startswith('<', at) or text.startswith('</', at):
            raise ValueError('stray markup')
        gt = text.find('>', at)
        if gt < 0:
            raise ValueError('unterminated tag')
        name = text[at + 1:gt].strip()
        if not name:
            raise ValueError('element without a name')
        sub_parts, sub_children, pos = _parse_children(text, ns, gt + 1, f'{ns}</{name}>', depth + 1)
        children.append((name, _element(sub_parts, sub_children)))


def _element(list parts, list children):
    body = ''.join(parts)
    if not children:
        return body
    if body.strip():
        field = '$text'  # mixed text under a reserved field no child uses
        while any(c == field for c, _ in children):
            field = '$' + field
        children.append((field, body))
    return children


def _container(schema):
    """'array' / 'object' when ``schema`` (or one of its anyOf / oneOf branches) is one, else None."""
    if not isinstance(schema, dict):
        return None, None
    types = schema.get('type')
    for kind in ('array', 'object'):
        if types == kind or (isinstance(types, list) and kind in types):
            return kind, schema
    if types is None:
        if 'items' in schema:
            return 'array', schema
        if 'properties' in schema or 'additionalProperties' in schema:
            return 'object', schema
    for key in ('anyOf', 'oneOf'):
        for branch in schema.get(key) or ():
            found = _container(branch)
            if found[0] is not None:
                return found
    return None, None


def _convert(value, schema):
    kind, container = _container(schema)
    if isinstance(value, str):
        if not isinstance(schema, dict):
            return value
        types = schema_types_c(schema, 0)
        if kind is not None and 'string' not in types and not value.strip():
            return [] if kind == 'array' else {}  # the template writes an empty container as an empty element
        if not types:
            return value
        out = held_value_json(value, 0, len(value), types)
        return value if out is None else json.loads(out)
    if kind == 'array':
        items = container.get('items')
        return [_convert(child, items) for _, child in value]
    properties = (container or {}).get('properties') or {}
    additional = (container or {}).get('additionalProperties')
    result = {}
    repeated = set()
    for name, child in value:
        converted = _convert(child, properties.get(name, additional))
        if name not in result:
            result[name] = converted
        elif name in repeated:
            result[name].append(converted)
        else:
            result[name] = [result[name], converted]  # a repeated element name collects into a list
            repeated.add(name)
    return result


cdef str _held_json(str raw, str ns, object schema, object types):
    """JSON of a held parameter body; a malformed body is its raw text (never lost)."""
    if PyUnicode_Find(raw, ns, 0, PyUnicode_GET_LENGTH(raw), 1) < 0:
        if types is not None and len(<tuple>types):
            out = held_value_json(raw, 0, PyUnicode_GET_LENGTH(raw), types)
            if out is not None:
                return out
        kind, _ = _container(schema)
        if kind is not None and not raw.strip() and 'string' not in (types or ()):
            return '[]' if kind == 'array' else '{}'
        return '"' + json_string_body(raw, 0, PyUnicode_GET_LENGTH(raw)) + '"'
    try:
        parts, children, _ = _parse_children(raw, ns, 0, None, 1)
        value = _convert(_element(parts, children), schema)
    except (ValueError, RecursionError):
        return '"' + json_string_body(raw, 0, PyUnicode_GET_LENGTH(raw)) + '"'
    return json.dumps(value, ensure_ascii=False)


cdef class NsElementToolParser(ToolParser):
    """``NS<BLOCK>`` blocks of ``NS<invoke name="..">`` calls whose parameters are elements named by the key.

    A dialect declares ``namespace`` (the marker before every tag) and, where
    they differ, ``tool_calls_element``, ``invoke_element`` and
    ``call_name_attribute``.
    """

    namespace = MINIMAX_NAMESPACE
    tool_calls_element = 'tool_call'
    invoke_element = 'invoke'
    call_name_attribute = 'name'

    cdef int _phase
    cdef int _hit
    cdef int _depth
    cdef Py_ssize_t _param_count
    cdef tuple _markers
    cdef str _ns
    cdef str _name_attr
    cdef str _close  # the open parameter's close tag
    cdef object _call_props
    cdef object _schema
    cdef object _types
    cdef HeldText _header
    cdef HeldText _value

    def __cinit__(self, *args, **kwargs):
        self._header.kind = 1
        self._value.kind = 1
        entry = _class_entry(type(self))
        self._markers = <tuple>entry[1]
        self._ns = (<tuple>entry[0])[0]
        self._name_attr = (<tuple>entry[0])[3]
        self._phase = P_INVOKE_START

    def __dealloc__(self):
        held_free(&self._header)
        held_free(&self._value)

    @classmethod
    def get_tool_open_tag(cls):
        return _class_entry(cls)[2]

    @classmethod
    def get_tool_close_tag(cls):
        return (<tuple>_class_entry(cls)[1])[K_BLOCK_CLOSE]

    @property
    def _phase_name(self):
        return _PHASE_NAMES[self._phase]

    cdef int begin_block_c(self) except -1:
        ToolParser.begin_block_c(self)
        self._phase = P_INVOKE_START
        self._param_count = 0
        held_free(&self._header)
        held_free(&self._value)
        return 0

    cdef Py_ssize_t seek(self, str text, Py_ssize_t pos, Py_ssize_t size, const int *wanted, bint final) noexcept:
        return seek_marker(text, pos, size, self._ns[0], self._markers, wanted, final, &self._hit)

    cdef bint longer_partial(self, int kind, void *data, Py_ssize_t pos, Py_ssize_t size) noexcept:
        """Whether a named tag (or NS</) is cut off by the text end at ``pos``."""
        cdef int k
        for k in range(K_OPEN):
            if marker_match(kind, data, pos, size, <str>self._markers[k]) == 1:
                return True
        return False

    cdef bint invoke_word_ends(self, str text, int kind, void *data, Py_ssize_t pos, Py_ssize_t size) noexcept:
        """Whether the invoke marker at ``pos`` ends its tag name (a space or ``>`` follows)."""
        cdef Py_ssize_t end = pos + PyUnicode_GET_LENGTH(<str>self._markers[K_INVOKE])
        cdef Py_UCS4 ch
        if end >= size:
            return False
        ch = PyUnicode_READ(kind, data, end)
        return ch == u'>' or ch == u' ' or ch == u'\t' or ch == u'\n' or ch == u'\r'

    cdef int close_arguments(self, list deltas) except -1:
        self.emit_c(deltas, None, '}' if self._param_count else '{}')
        self._param_count = 0
        return 0

    cdef int end_value(self, list deltas) except -1:
        cdef str raw
        if self._phase == P_STRING:
            self.emit_c(deltas, None, '"')
        elif self._phase == P_HELD:
            raw = held_take(&self._value, 0, self._value.len)
            self.emit_c(deltas, None, _held_json(raw, self._ns, self._schema, self._types))
        self._phase = P_PARAM_OR_END
        return 0

    cdef Py_ssize_t header(self, str text, Py_ssize_t pos, Py_ssize_t gt, list deltas) except -1:
        """Apply the invoke / parameter header ``text[pos:gt]`` (after what is held of it)."""
        cdef str h = text
        cdef Py_ssize_t a = pos, b = gt, at, value_end = 0
        if self._header.len:
            held_append(&self._header, text, pos, gt)
            h = held_take(&self._header, 0, self._header.len)
            a = 0
            b = PyUnicode_GET_LENGTH(h)
        cdef int kind = PyUnicode_KIND(h)
        cdef void *data = PyUnicode_DATA(h)
        if self._phase == P_INVOKE_HEADER:
            self.start_call(None)
            self._param_count = 0
            self._call_props = None
            at = _attribute(h, kind, data, a, b, self._name_attr, &value_end)
            if at >= 0 and value_end > at:
                name = _attribute_text(h, at, value_end, ())
                self.emit_c(deltas, name, None)
                schemas = self._tool_schemas
                parameters = schemas.get(name) if schemas is not None else None
                props = (<dict>parameters).get('properties') if isinstance(parameters, dict) else None
                self._call_props = props if isinstance(props, dict) else None
            else:
                self._output_index = REJECTED_INDEX  # no name: never invent one
            self._phase = P_PARAM_OR_END
            return gt + 1
        key = PyUnicode_Substring(h, a, b).strip()
        self._close = f'{self._ns}</{key}>'
        self._schema = (<dict>self._call_props).get(key) if self._call_props is not None else None
        self._types = schema_types_c(self._schema, 0) if isinstance(self._schema, dict) else None
        prefix = '{' if self._param_count == 0 else ', '
        body = json_string_body(key, 0, PyUnicode_GET_LENGTH(key))
        self._param_count += 1
        if self._types is not None and len(<tuple>self._types) and value_kind(<tuple>self._types) == 0:
            self.emit_c(deltas, None, f'{prefix}"{body}": "')
            self._phase = P_STRING
        else:
            self.emit_c(deltas, None, f'{prefix}"{body}": ')
            self._depth = 0
            self._phase = P_HELD
        return gt + 1

    cdef Py_ssize_t scan_held(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """Hold a parameter body up to its close tag at depth 0 (child elements counted)."""
        cdef Py_ssize_t at, gt, tag
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t ns_len = PyUnicode_GET_LENGTH(self._ns)
        while True:
            at = self.seek(text, pos, size, _ELEMENT_SET, final)
            if self._hit < 0:
                held_append(&self._value, text, pos, at)  # a partial NS< stays unconsumed
                return at
            tag = at + ns_len + (2 if self._hit == K_END else 1)
            gt = PyUnicode_FindChar(text, u'>', tag, size, 1)
            if gt < 0 and not final:
                held_append(&self._value, text, pos, at)
                return at  # the tag's name is not complete yet
            if self._hit == K_OPEN:
                self._depth += 1
            elif self._depth > 0:
                self._depth -= 1
            else:
                held_append(&self._value, text, pos, at)
                if marker_match(kind, data, at, size, self._close) == 2:
                    at += PyUnicode_GET_LENGTH(self._close)
                # else a missing close tag: the value ends at this structural close (invoke, block)
                self.end_value(deltas)
                return at
            if gt < 0:
                held_append(&self._value, text, pos, size)
                return size
            held_append(&self._value, text, pos, gt + 1)
            pos = gt + 1

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0, at, gt
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef int phase
        cdef str close
        cdef tuple markers = self._markers
        while pos < size and not self._payload_closed:
            phase = self._phase
            if phase == P_INVOKE_START or phase == P_PARAM_OR_END:
                pos = _skip_space(kind, data, pos, size)
                if pos == size:
                    break
                if phase == P_INVOKE_START:
                    pos = self.seek(text, pos, size, _INVOKE_START_SET, final)
                else:
                    pos = self.seek(text, pos, size, _PARAM_OR_END_SET, final)
                if self._hit < 0:
                    break
                if (self._hit == K_END or self._hit == K_OPEN) and not final and self.longer_partial(kind, data, pos, size):
                    break  # NS</ or NS< may still grow into a named tag
                if self._hit == K_BLOCK_CLOSE:
                    if phase == P_PARAM_OR_END:
                        self.close_arguments(deltas)  # a missing invoke close tag
                    self._phase = P_INVOKE_START
                    self._payload_closed = True  # the base consumes the close tag
                elif self._hit == K_INVOKE and not self.invoke_word_ends(text, kind, data, pos, size):
                    # NS<invoke_id>: a parameter whose name starts with the invoke element's
                    if pos + PyUnicode_GET_LENGTH(<str>markers[K_INVOKE]) == size and not final:
                        break  # not decidable yet
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_OPEN])
                    self._phase = P_PARAM_HEADER if phase == P_PARAM_OR_END else P_INVOKE_START
                elif self._hit == K_INVOKE:
                    if phase == P_PARAM_OR_END:
                        self.close_arguments(deltas)
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_INVOKE])
                    self._phase = P_INVOKE_HEADER
                elif self._hit == K_INVOKE_CLOSE:
                    self.close_arguments(deltas)
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_INVOKE_CLOSE])
                    self._phase = P_INVOKE_START
                elif self._hit == K_END:
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_END])  # a stray close tag: skipped
                else:
                    pos += PyUnicode_GET_LENGTH(<str>markers[K_OPEN])
                    self._phase = P_PARAM_HEADER
            elif phase == P_INVOKE_HEADER or phase == P_PARAM_HEADER:
                gt = PyUnicode_FindChar(text, u'>', pos, size, 1)
                if gt < 0:
                    held_append(&self._header, text, pos, size)
                    pos = size
                    break
                pos = self.header(text, pos, gt, deltas)
            elif phase == P_STRING:
                close = self._close
                at = PyUnicode_Find(text, close, pos, size, 1)
                if at >= 0:
                    self.emit_c(deltas, None, json_string_body(text, pos, at))
                    self.end_value(deltas)
                    pos = at + PyUnicode_GET_LENGTH(close)
                    continue
                at = size if final else _partial_end(text, kind, data, pos, size, close)
                if at > pos:
                    self.emit_c(deltas, None, json_string_body(text, pos, at))
                    pos = at
                break
            else:  # P_HELD
                pos = self.scan_held(text, pos, size, deltas, final)
                if self._phase == P_HELD:
                    break
        if final and not self._payload_closed:
            self.finish_c(deltas)
        return pos

    cdef int finish_c(self, list deltas) except -1:
        # End of input inside a call: release what was written, close the object lmparse opened.
        cdef int phase = self._phase
        held_free(&self._header)
        if phase == P_STRING or phase == P_HELD:
            self.end_value(deltas)
        if phase != P_INVOKE_START and phase != P_INVOKE_HEADER:
            self.close_arguments(deltas)
        self._phase = P_INVOKE_START
        return 0
