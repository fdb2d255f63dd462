"""The attribute-named invoke/parameter family (DeepSeek DSML and its relatives).

    \\n\\n<｜DSML｜function_calls>                       (V4: tool_calls, V4.1: "｜DSML｜ calls")
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="P" string="true">raw text</｜DSML｜parameter>
    <｜DSML｜parameter name="Q" string="false">JSON</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

A dialect declares the tag delimiters (``<`` ``</`` ``>``; Kimi K3's XTML
writes ``<|open|>`` ``<|close|>`` ``<|sep|>``), an optional token after them,
the block / invoke / parameter element names, which header attributes carry
the call name and the parameter key, and how a value's type is told: an
attribute (``string="true"``, ``type="string"``) or the request's JSON schema.

The invoke header carries the name, so identity goes out before any
parameter. Parameters become one JSON object: raw-text values are streamed
JSON-escaped up to their close tag; JSON values (``string="false"``) are held
to their end, found by ``JsonValueScanner``, and written as they are when they
are JSON, else as their raw text in a JSON string (as vLLM's and SGLang's
DeepSeek parsers fall back), so the arguments are never invalid JSON and no
text is dropped; a value whose first character cannot start JSON streams as
a string at once. Schema-typed non-string values are held to their close tag
and converted once (``xml_values``). Every marker starts with the same
character, so markers are found by scanning for it once.

Marker text inside a value is text unless the grammar confirms it: a
parameter close tag ends a raw (or fallen-back) value only when what follows
it, after whitespace (at most ``_CONFIRM_WINDOW`` characters), is the next
structural tag (a parameter or invoke open tag, the invoke or block close
tag) or the end of the output; otherwise it is part of the value (Kimi K3
values that quote ``<|close|>argument<|sep|>``, DeepSeek values that quote
``</｜DSML｜parameter>``). Only that lookahead is held back. Inside a JSON
value, tags within a JSON string are data and any tag outside one ends the
value (a missing close tag), except a parameter close tag that the lookahead
does not confirm: the value is then not JSON and continues as raw text.

Replace mode (``coerce_values_to_schema``, ``unwrap_wrapper_arguments``; off by default, as in LMDeploy)
gives values as vLLM's DeepSeek parsers do (``lmparse.tools.dsml_values``); a lone wrapper parameter's
fragments are held until the call shows it is alone.

Tags written without their block (the block open tag without its
``block_lead`` at the start of the answer; with ``bare_call_open``, an invoke
with no block) are structure only when the grammar confirms them: see
``lmparse.tools.dsml_grammar``.
"""

from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.attributes cimport _attribute, _attribute_text, _partial_end, _skip_space
from lmparse.tools.base cimport HOOK_PAYLOAD, REJECTED_INDEX, ToolParser, marker_match, seek_marker, start_block
from lmparse.tools.dsml_grammar cimport BARE_BLOCK, BARE_CALL, BARE_HOLD, DsmlBare, class_entry
from lmparse.tools.json_escape cimport json_string_body
from lmparse.tools.json_scanner cimport JsonValueScanner
from lmparse.tools.held_text cimport HeldText, held_append, held_free, held_take, held_take_with
from lmparse.tools.xml_values cimport held_value_json, is_json, schema_types_c, value_kind
from lmparse.tools.dsml_values cimport engine_json, engine_text, engine_types, unwrapped

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = ['DSML_TOKEN', 'DsmlToolParser']

# U+FF5C FULLWIDTH VERTICAL LINE on both sides, as DeepSeek's encodings write it.
DSML_TOKEN = '\uff5cDSML\uff5c'

# The markers each phase reacts to, in priority order, -1 ended (anything else
# before them is skipped). Outside a JSON string a tag cannot be data, so
# any of them ends a JSON value.
cdef int[3] _INVOKE_START_SET = [K_INVOKE, K_BLOCK_CLOSE, -1]
cdef int[5] _PARAM_OR_END_SET = [K_PARAM, K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_INVOKE, -1]
cdef int[6] _PARAM_END_SET = [K_PARAM_CLOSE, K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_PARAM, K_INVOKE, -1]
# A raw (or held) value ends only at its close tag.
cdef int[2] _STRING_END_SET = [K_PARAM_CLOSE, -1]
# What confirms a parameter close tag when it follows it (after whitespace).
cdef int[5] _AFTER_PARAM_SET = [K_PARAM, K_INVOKE_CLOSE, K_BLOCK_CLOSE, K_INVOKE, -1]
_PHASE_NAMES = ('invoke_start', 'invoke_header', 'parameter_or_invoke_end', 'parameter_header',
                'string_value', 'json_value', 'parameter_end', 'held_value', 'json_value_end', 'raw_json_value')


cdef inline bint _may_start_json(Py_UCS4 c) noexcept:
    return (c == u'{' or c == u'[' or c == u'"' or c == u'-' or (u'0' <= c <= u'9')
            or c == u't' or c == u'f' or c == u'n')

cdef Py_ssize_t _param_end_limit(object owner, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                                 bint *at_marker) except -1:
    # Outside a JSON string any tag of the family ends the value (see JsonValueScanner.scan_to_marker).
    cdef Py_ssize_t at = (<DsmlToolParser>owner).seek(text, pos, size, _PARAM_END_SET, final)
    at_marker[0] = (<DsmlToolParser>owner)._hit >= 0
    return at


cdef class DsmlToolParser(ToolParser):
    """Blocks of attribute-named calls: ``<TOKEN BLOCK>`` of ``<TOKEN invoke name=..>`` and ``<TOKEN parameter name=..>``.

    A dialect declares ``tool_calls_block_name`` and, where they differ from
    DeepSeek's DSML: ``dsml_token`` (text right after each tag opener), the
    element names, ``block_lead`` (text before the block's open tag), the tag
    delimiters ``tag_open`` / ``end_tag_open`` / ``tag_close``, the attributes
    naming the call and the parameter (``call_name_attribute``,
    ``parameter_key_attribute``), how a value is typed
    (``string_attribute`` with ``string_attribute_values`` marking raw text,
    ``string_by_default`` when it is absent, or ``schema_typed_values``: by the
    request's JSON schema), ``attribute_entities`` decoded in names and
    keys, and ``block_open_tag`` / ``block_close_tag`` for a block written as
    tags of another markup. The markers are built from them once per class.
    """

    dsml_token = DSML_TOKEN
    tool_calls_block_name = None
    invoke_element = 'invoke'
    parameter_element = 'parameter'
    block_lead = '\n\n'
    tag_open = '<'
    end_tag_open = '</'
    tag_close = '>'
    call_name_attribute = 'name'
    parameter_key_attribute = 'name'
    # A raw-text value is marked by this attribute having one of these values;
    # without the attribute it is raw text when string_by_default, else JSON
    # (or, with schema_typed_values, typed by the request's JSON schema).
    string_attribute = 'string'
    string_attribute_values = ('true',)
    string_by_default = False
    schema_typed_values = False
    # (entity, character) pairs decoded in attribute values, in this order.
    attribute_entities = ()
    # The block's open / close tag written whole when it is not an element of
    # the markup (Step-3's special-token section around its steptml calls);
    # None: built from tool_calls_block_name. Text between calls is skipped.
    block_open_tag = None
    block_close_tag = None
    # The invoke open tag, declared by a dialect whose model writes invokes without the block
    # (SGLang's DeepSeek V3.2 / V4 detectors read them); None: an invoke needs its block.
    bare_call_open = None
    # Text in a block outside any invoke that is not markup (``<B>garbage</B>``): True, content
    # (vLLM's dots parser returns it); False, skipped as the DeepSeek parsers of the engines do.
    block_text_is_content = False

    cdef int _phase
    cdef Py_ssize_t _param_count
    cdef int _hit
    cdef JsonValueScanner _value_scanner
    cdef tuple _markers
    cdef Py_UCS4 _lead
    cdef str _tag_close
    cdef str _name_attr
    cdef str _key_attr
    cdef object _string_attr
    cdef tuple _string_values
    cdef bint _string_default
    cdef bint _schema_typed
    cdef tuple _entities
    cdef object _call_props
    cdef object _arg_types
    # an invoke / parameter header not terminated yet: its text so far
    cdef HeldText _header
    # a schema-typed or JSON value held to its end
    cdef HeldText _value
    # a bare block (opened without block_lead, or an invoke without one): its opener is still in the text
    cdef bint _skip_open
    # invokes written without a block (bare_call_open): the block is those invokes and ends after them
    cdef bint _bare_calls
    cdef DsmlBare _bare_grammar
    cdef bint _text_is_content
    # text between calls that is not markup is going out as content: its spaces are kept
    cdef bint _block_text
    # replace mode, set by lmparse.integrations.vllm: values as vLLM's DeepSeek parsers give them (dsml_values)
    cdef public bint coerce_values_to_schema
    cdef public bint unwrap_wrapper_arguments
    cdef list _wrapped  # argument fragments held while the first parameter may be a lone wrapper (None: not)
    cdef Py_ssize_t _wrap_prefix

    def __cinit__(self, *args, **kwargs):
        self._header.kind = 1
        self._value.kind = 1
        entry = class_entry(type(self))
        self._markers = <tuple>entry[1]
        self._lead = (<str>self._markers[0])[0]
        (self._tag_close, self._name_attr, self._key_attr, self._string_attr, self._string_values,
         self._string_default, self._schema_typed, self._entities) = <tuple>entry[3]
        self._value_scanner = JsonValueScanner()
        self._phase = D_INVOKE_START
        self._param_count = 0
        self._skip_open = False
        self._bare_grammar = <DsmlBare>entry[5]
        self._text_is_content = <bint>entry[6]
        if not (self._hooks & HOOK_PAYLOAD):
            if self._bare_grammar.block_tag is not None:
                self._bare_open = self._bare_grammar.block_tag  # anchored at the start of the answer
                self._bare_at_start = True
                # past the start: an invoke without a block, or the block tag glued to prose (None: not taken)
                self._bare_search = self._bare_grammar.mid_opener
            else:
                self._bare_open = entry[4]

    def __dealloc__(self):
        held_free(&self._header)
        held_free(&self._value)

    @classmethod
    def get_tool_open_tag(cls):
        return class_entry(cls)[2]

    @classmethod
    def get_tool_close_tag(cls):
        # Called at every block start: the cached marker, not a fresh join.
        return (<tuple>class_entry(cls)[1])[K_BLOCK_CLOSE]

    @classmethod
    def _family_markers(cls):
        """(invoke open, parameter open, invoke close, parameter close, block close) as built for ``cls``."""
        return class_entry(cls)[1]

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
        if self._value.len:
            held_free(&self._value)
        self._value_scanner.reset_c()
        self._skip_open = False
        self._bare_calls = False
        self._block_text = False
        self._wrapped = None
        return 0

    cdef int begin_bare_block_c(self) except -1:
        """A block opened by its tag without ``block_lead``: the tag is still in the text."""
        start_block(self)
        self._skip_open = True
        return 0

    cdef Py_ssize_t skip_open(self, str text, Py_ssize_t size, bint final) except -1:
        """The opener of a bare block (``DsmlBare.opening``): returns the offset to read the block from,
        0 with ``_skip_open`` kept while undecided; refuted, its text goes back to the router as content
        and the block ends."""
        cdef Py_ssize_t where = 0
        cdef int verdict = self._bare_grammar.opening(text, size, final, self._allowed_tool_names, &where)
        if verdict == BARE_HOLD:
            return 0
        self._skip_open = False
        if verdict == BARE_BLOCK or verdict == BARE_CALL:
            self._bare_calls = verdict == BARE_CALL
            return where
        self._handback = PyUnicode_Substring(text, 0, where)  # not a block: what follows is plain text again
        self._payload_closed = True
        self._close_tag = None  # the feed closes the block at ``where`` (begin_block_c restores it)
        return where

    cdef Py_ssize_t end_bare_calls(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -1:
        """After an invoke of a bare block (``DsmlBare.after_call``): the offset to go on from."""
        cdef Py_ssize_t where = pos
        cdef int verdict = self._bare_grammar.after_call(text, pos, size, final, self._allowed_tool_names, &where)
        if verdict == BARE_HOLD:
            return pos
        if verdict == BARE_CALL:
            self._phase = D_INVOKE_HEADER
            return where
        self._payload_closed = True  # at the block close tag the base consumes it
        if verdict != BARE_BLOCK:
            self._close_tag = None  # the block ends here: what follows is plain text
        return where

    cdef int confirm_close(self, str text, Py_ssize_t after, Py_ssize_t size, bint final) except -2:
        """Whether the parameter close tag ending at ``after`` ends the value.

        1: whitespace then the next structural tag, or then the end of the
        output; 0: anything else (the tag is text); -1: not decided yet.
        """
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t pos = _skip_space(kind, data, after, size)
        cdef int i = 0, found
        cdef bint partial = False
        if pos - after > _CONFIRM_WINDOW:
            return 0
        if pos == size:
            return 1 if final else -1
        if PyUnicode_READ(kind, data, pos) != self._lead:
            return 0
        while _AFTER_PARAM_SET[i] >= 0:
            found = marker_match(kind, data, pos, size, <str>self._markers[_AFTER_PARAM_SET[i]])
            if found == 2:
                return 1
            partial |= found
            i += 1
        return -1 if partial and not final else 0

    cdef Py_ssize_t seek(self, str text, Py_ssize_t pos, Py_ssize_t size, const int *wanted, bint final) noexcept:
        """First ``wanted`` marker at or after ``pos`` (``_hit`` = its index, -1 for none); see ``seek_marker``."""
        return seek_marker(text, pos, size, self._lead, self._markers, wanted, final, &self._hit)

    cdef inline int arg(self, list deltas, object text) except -1:
        """An argument fragment of the current call: emitted, or held while a wrapper parameter may be unwrapped."""
        if self._wrapped is not None:
            self._wrapped.append(text)
            return 0
        return self.emit_c(deltas, None, text)

    cdef int flush_wrapped(self, list deltas) except -1:
        """A held wrapper parameter is an ordinary one (another parameter follows it): its fragments go out."""
        cdef list held = self._wrapped
        if held is not None:
            self._wrapped = None
            self.emit_c(deltas, None, ''.join(held))
        return 0

    cdef int close_arguments(self, list deltas) except -1:
        if self._wrapped is not None:  # a lone wrapper parameter: its object is the arguments if its keys are declared
            inner = unwrapped(''.join(self._wrapped)[self._wrap_prefix:], self._call_props, self.coerce_values_to_schema)
            if inner is not None:
                self._wrapped = None
                self._param_count = 0
                return self.emit_c(deltas, None, inner)
            self.flush_wrapped(deltas)
        self.emit_c(deltas, None, '}' if self._param_count else '{}')
        self._param_count = 0
        return 0

    cdef int emit_held(self, list deltas) except -1:
        """The held schema-typed value as JSON (converted once; its raw text as a string when it is not its type)."""
        cdef str raw = held_take(&self._value, 0, self._value.len)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(raw)
        if self.coerce_values_to_schema:
            return self.arg(deltas, engine_text(raw, <tuple>self._arg_types))
        out = held_value_json(raw, 0, n, self._arg_types)
        self.arg(deltas, ('"' + json_string_body(raw, 0, n) + '"') if out is None else out)
        return 0

    cdef int emit_json(self, list deltas, bint raw) except -1:
        """The held ``string="false"`` value: as written when it is JSON, else a JSON string (``raw``: not JSON)."""
        cdef str value = held_take(&self._value, 0, self._value.len)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(value)
        cdef int kind = PyUnicode_KIND(value)
        cdef void *data = PyUnicode_DATA(value)
        cdef Py_ssize_t end = n
        while end > 0 and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)):
            end -= 1
        if not raw and end > 0 and is_json(value):
            value = value if end == n else PyUnicode_Substring(value, 0, end)
            if self.coerce_values_to_schema and self._arg_types is not None:
                value = engine_json(value, self._arg_types)
            self.arg(deltas, value)
        else:
            self.arg(deltas, '"' + json_string_body(value, 0, n) + '"')
        return 0

    cdef Py_ssize_t scan_json(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """Hold a JSON parameter value up to its lexical end (or a tag outside its strings)."""
        cdef Py_ssize_t start = pos, at
        cdef bint at_marker = False
        cdef JsonValueScanner scanner = self._value_scanner
        cdef int kind
        cdef void *data
        cdef str lead_space
        if not scanner.started:
            kind = PyUnicode_KIND(text)
            data = PyUnicode_DATA(text)
            at = _skip_space(kind, data, pos, size)
            if at < size and PyUnicode_READ(kind, data, at) != self._lead and not _may_start_json(
                    PyUnicode_READ(kind, data, at)):
                # cannot be JSON: the raw text streams as a string from here
                lead_space = held_take_with(&self._value, text, pos, at)
                self.arg(deltas, '"' + json_string_body(lead_space, 0, PyUnicode_GET_LENGTH(lead_space)))
                self._phase = D_STRING
                return at
        pos = scanner.scan_to_marker(text, pos, size, self, _param_end_limit, final, &at_marker)
        if pos > start:
            held_append(&self._value, text, start, pos)
        if scanner.complete:
            self._phase = D_JSON_AFTER
        elif at_marker:
            pos = self.json_marker(text, pos, size, deltas, final)
        return pos

    cdef Py_ssize_t json_marker(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """A tag outside the strings of a JSON value (``_hit``): it ends the value, unless it is a
        parameter close tag the lookahead does not confirm (then the value is raw text)."""
        cdef int verdict
        cdef Py_ssize_t m
        if self._hit != K_PARAM_CLOSE:
            self.emit_json(deltas, False)  # a missing close tag: the next tag decides
            self._phase = D_PARAM_OR_END
            return pos
        m = PyUnicode_GET_LENGTH(<str>self._markers[K_PARAM_CLOSE])
        verdict = self.confirm_close(text, pos + m, size, final)
        if verdict < 0:
            self._phase = D_JSON_AFTER if self._value_scanner.complete else D_JSON
            return pos  # held until the lookahead decides
        if verdict == 0:
            held_append(&self._value, text, pos, pos + m)
            self._phase = D_RAW
            return pos + m
        self.emit_json(deltas, False)
        self._phase = D_PARAM_OR_END
        return pos + m

    cdef Py_ssize_t json_after(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """After a JSON value's lexical end: whitespace, then a tag; other text makes it raw text."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t at = _skip_space(kind, data, pos, size), m
        if at > pos:
            held_append(&self._value, text, pos, at)
        if at == size:
            return at
        if PyUnicode_READ(kind, data, at) == self._lead:
            m = self.seek(text, at, size, _PARAM_END_SET, final)
            if m == at:
                if self._hit >= 0:
                    return self.json_marker(text, at, size, deltas, final)
                return at  # a partial tag: held
        self._phase = D_RAW  # text after the value: the whole value is raw text
        return at

    cdef int begin_call_props(self, object name) except -1:
        """The called tool's parameter schemas (for ``schema_typed_values``)."""
        props = None
        schemas = self._tool_schemas
        if schemas is not None and name is not None:
            parameters = schemas.get(name)
            if isinstance(parameters, dict):
                props = (<dict>parameters).get('properties')
        self._call_props = props if isinstance(props, dict) else None
        return 0

    cdef int value_phase(self, str h, int kind, void *data, Py_ssize_t a, Py_ssize_t b, str key) except -1:
        """D_STRING, D_JSON or D_HELD for the parameter whose header is ``h[a:b]``."""
        cdef Py_ssize_t at = -1, value_end = 0
        cdef int phase
        if self._string_attr is not None:
            at = _attribute(h, kind, data, a, b, <str>self._string_attr, &value_end)
            if at >= 0:
                phase = D_STRING if PyUnicode_Substring(h, at, value_end) in self._string_values else D_JSON
                if self.coerce_values_to_schema:  # a typed raw value is held, a JSON one converted at its end
                    self._arg_types = engine_types(self._call_props, key, phase == D_STRING)
                    if self._arg_types is not None and phase == D_STRING:
                        return D_HELD
                return phase
        if not self._schema_typed:
            return D_STRING if self._string_default else D_JSON
        self._arg_types = None
        props = self._call_props
        schema = (<dict>props).get(key) if props is not None else None
        if not isinstance(schema, dict):
            return D_STRING  # no schema: the text as it was written
        types = schema_types_c(schema, 0)
        if not types or value_kind(<tuple>types) == 0:
            return D_STRING
        self._arg_types = types
        return D_HELD

    cdef Py_ssize_t header(self, str text, Py_ssize_t pos, Py_ssize_t gt, list deltas, int phase) except -1:
        """Apply the header ``text[pos:gt]`` (after what is held of it); returns the offset past its terminator."""
        cdef str h = text
        cdef Py_ssize_t a = pos, b = gt, at, value_end = 0
        cdef bint self_closing
        cdef int value
        if self._header.len:
            held_append(&self._header, text, pos, gt)
            h = held_take(&self._header, 0, self._header.len)
            a = 0
            b = PyUnicode_GET_LENGTH(h)
        cdef int kind = PyUnicode_KIND(h)
        cdef void *data = PyUnicode_DATA(h)
        gt += PyUnicode_GET_LENGTH(self._tag_close)
        # ``<TOKEN invoke name="..."/>``: a call without arguments.
        self_closing = b > a and PyUnicode_READ(kind, data, b - 1) == u'/'
        if self_closing:
            b -= 1
        # Attributes are read in place: a header seen whole is never copied.
        if phase == D_INVOKE_HEADER:
            at = _attribute(h, kind, data, a, b, self._name_attr, &value_end)
            self.start_call(None)
            self._param_count = 0
            if at >= 0 and value_end > at:
                name = _attribute_text(h, at, value_end, self._entities)
                self.emit_c(deltas, name, None)
                if self._schema_typed or self.coerce_values_to_schema or self.unwrap_wrapper_arguments:
                    self.begin_call_props(name)
            else:
                self._output_index = REJECTED_INDEX  # no name: never invent one
            if self_closing:
                self.close_arguments(deltas)
                self._phase = D_INVOKE_START
            else:
                self._phase = D_PARAM_OR_END
            return gt
        at = _attribute(h, kind, data, a, b, self._key_attr, &value_end)
        key = _attribute_text(h, at, value_end, self._entities) if at >= 0 else ''
        value = self.value_phase(h, kind, data, a, b, key)
        prefix = '{' if self._param_count == 0 else ', '
        if (self._param_count == 0 and self.unwrap_wrapper_arguments and (key == 'arguments' or key == 'input')
                and self._call_props and key not in <dict>self._call_props):
            self._wrapped = []  # held until the call shows whether this is its only parameter
        else:
            self.flush_wrapped(deltas)
        key = json_string_body(key, 0, PyUnicode_GET_LENGTH(key))
        self._param_count += 1
        self._wrap_prefix = PyUnicode_GET_LENGTH(prefix) + PyUnicode_GET_LENGTH(key) + 4  # '"KEY": '
        if self_closing:
            # ``<parameter name="k"/>``: the empty text it wrote.
            self.arg(deltas, f'{prefix}"{key}": ""')
            self._phase = D_PARAM_OR_END
            return gt
        self.arg(deltas, f'{prefix}"{key}": "' if value == D_STRING else f'{prefix}"{key}": ')
        self._value_scanner.reset_c()
        self._phase = value
        return gt

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0, at, gt
        cdef str close, terminator = self._tag_close
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef int phase, verdict
        cdef tuple markers = self._markers
        if self._skip_open:
            pos = self.skip_open(text, size, final)
            if self._skip_open:
                return 0
        while pos < size and not self._payload_closed:
            phase = self._phase
            if phase == D_INVOKE_START and self._bare_calls:
                pos = self.end_bare_calls(text, pos, size, final)
                if self._phase == D_INVOKE_START:
                    break
            elif phase == D_INVOKE_START or phase == D_PARAM_OR_END or phase == D_PARAM_END:
                if not self._block_text:
                    pos = _skip_space(kind, data, pos, size)
                if pos == size:
                    break
                if phase == D_INVOKE_START:
                    at = self.seek(text, pos, size, _INVOKE_START_SET, final)
                    if at > pos and self._text_is_content:
                        pos = self.block_text(text, pos, at, final or self._hit >= 0)
                        if not final:
                            break  # the router emits it before what follows
                        continue
                    self._block_text = False
                elif phase == D_PARAM_OR_END:
                    at = self.seek(text, pos, size, _PARAM_OR_END_SET, final)
                else:
                    at = self.seek(text, pos, size, _PARAM_END_SET, final)
                pos = at  # text before the marker is not markup: skipped
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
                if PyUnicode_GET_LENGTH(terminator) == 1:
                    gt = PyUnicode_FindChar(text, terminator[0], pos, size, 1)
                else:
                    gt = PyUnicode_Find(text, terminator, pos, size, 1)
                if gt < 0:
                    # Held in the parser (one copy, linear): the router's buffer keeps at most
                    # a partial terminator.
                    at = size if final else _partial_end(text, kind, data, pos, size, terminator)
                    held_append(&self._header, text, pos, at)
                    pos = at
                    break
                pos = self.header(text, pos, gt, deltas, phase)
            elif phase == D_STRING or phase == D_HELD or phase == D_RAW:
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
                    gt = at + PyUnicode_GET_LENGTH(close)
                    verdict = self.confirm_close(text, gt, size, final)
                    if verdict == 0:
                        # the close tag is text of the value
                        self.value_text(phase, text, pos, gt, deltas)
                        pos = gt
                        continue
                    if verdict < 0:
                        self.value_text(phase, text, pos, at, deltas)
                        pos = at
                        break  # held until the lookahead decides
                    if phase == D_STRING:
                        self.arg(deltas, json_string_body(text, pos, at) + '"')
                    else:
                        self.value_text(phase, text, pos, at, deltas)
                    if phase == D_HELD:
                        self.emit_held(deltas)
                    elif phase == D_RAW:
                        self.emit_json(deltas, True)
                    pos = gt
                    self._phase = D_PARAM_OR_END
                    continue
                # ``at`` is where a partial close tag starts (the text end when none)
                if at > pos:
                    self.value_text(phase, text, pos, at, deltas)
                    pos = at
                break
            elif phase == D_JSON_AFTER:
                pos = self.json_after(text, pos, size, deltas, final)
                if self._phase == D_JSON_AFTER:
                    break
            else:  # D_JSON
                pos = self.scan_json(text, pos, size, deltas, final)
                if self._phase == D_JSON:
                    break
        if final and not self._payload_closed:
            self.finish_c(deltas)
        return pos

    cdef Py_ssize_t block_text(self, str text, Py_ssize_t a, Py_ssize_t b, bint ended) except -1:
        """Text in a block, outside any invoke, that is not markup (``text[a:b]``, up to the next tag):
        content, never dropped (vLLM's dots parser returns it too). Spaces before the next tag
        are dropped with the tags; until that tag is seen they are held."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t end = b
        while end > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)):
            end -= 1
        if end > a:
            self._block_text = True
            piece = PyUnicode_Substring(text, a, end)
            self._handback = piece if self._handback is None else <str>self._handback + piece
        if ended:
            self._block_text = False
            return b
        return end

    cdef int value_text(self, int phase, str text, Py_ssize_t a, Py_ssize_t b, list deltas) except -1:
        """``text[a:b]`` of a value: streamed JSON-escaped (D_STRING) or held."""
        if b <= a:
            return 0
        if phase == D_STRING:
            self.arg(deltas, json_string_body(text, a, b))
        else:
            held_append(&self._value, text, a, b)
        return 0

    cdef int finish_c(self, list deltas) except -1:
        # End of input inside a call: close the object lmparse opened (values as written, never invalid JSON).
        cdef int phase = self._phase
        if self._header.len:
            held_free(&self._header)  # an unterminated header: nothing of it is emitted
        if phase == D_STRING:
            self.arg(deltas, '"')
        elif phase == D_HELD:
            self.emit_held(deltas)  # released as written, converted like a closed one
        elif phase == D_JSON or phase == D_JSON_AFTER or phase == D_RAW:
            self.emit_json(deltas, phase == D_RAW)
        if phase != D_INVOKE_START and phase != D_INVOKE_HEADER:
            self.close_arguments(deltas)
        self._phase = D_INVOKE_START
        return 0
