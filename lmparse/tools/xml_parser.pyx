"""The XML-like family's driver: sequential, function-first, tag-delimited tool calls.

``XmlToolParser`` alone owns the parse state::

    function -> arg_start -> arg_name -> arg_value -> arg_start ... -> call_end -> done
                                                                          |
                                                      (another call) -> function

Each step before a value is recognised by the dialect's compiled grammar
(``xml_grammar``, built from the markers a dialect declares) or by a Python
hook that overrides it; either returns a result the driver applies. The
driver streams argument values, builds the OpenAI ``function.arguments`` JSON
object incrementally and converts held values by the request's JSON schema
(``xml_values``).

Marker text inside a value is text unless the grammar confirms it as
structure by what follows it (at most 64 whitespace characters, then a
marker, or the end of the output; held back until that is known): the close
tag ends a value before the next argument, ``function_close``, the block's
close tag, another call or only whitespace; with the close tag missing,
``function_close`` ends it before the block's close tag or another call, and
the block's close tag before another block. An opener inside a value (the
next argument's, a call's) is always text: a missing close tag before it is
the same text as a value that contains it. Except with ``next_arg_ends_value``
(set by the vLLM integration in replace mode, as vLLM's parsers end a value at
the next opener): an opener on a line of its own naming a parameter the tool
declares and the call has not given, then a newline, ends the value
(``xml_value_end._next_arg_at``).
``no_call_block_is_content``: see no_call.pxd.
"""
import json

from cpython.unicode cimport PyUnicode_Substring

from lmparse.tools.base cimport HOOK_PAYLOAD, ToolParser, start_block
from lmparse.tools.xml_bare cimport bare_call_end, bare_confirm, bare_name
from lmparse.tools.json_escape cimport json_string_body
from lmparse.tools.xml_grammar import PHASE_NAMES
from lmparse.tools.xml_grammar cimport (
    NAME_NONE, PH_ARG_NAME, PH_ARG_START, PH_ARG_VALUE, PH_CALL_END, PH_DONE, PH_FUNCTION,
    XH_CALL_END, ValueEnds, XmlGrammar, XmlStep, _step_name, grammar_for, python_step,
)
from lmparse.tools.xml_text cimport (
    _after_newline, _before_newline, _cdata_inner, _check_pos, _find_any, _find_char, _held_lead, _json_body,
    _match_len, _null_scan,
)
from lmparse.tools.xml_value_end cimport VE_CLOSE, VE_END, VE_MORE, VE_TEXT, _next_arg_at, _value_end_at
from lmparse.tools.held_text cimport HeldText, held_append, held_free, held_take
from lmparse.tools.xml_values cimport coerce_one, held_value_json, schema_types_c, span, value_kind
from lmparse.tools.no_call cimport no_call_end, no_call_skip


cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    void PyUnicode_WRITE(int kind, void *data, Py_ssize_t index, Py_UCS4 value) nogil
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil

# JSON of a held trailing newline, by SUF_* (xml_parser.pxd)
cdef tuple _SUFFIX_JSON = ('', '\\n', '\\r', '\\r\\n')

__all__ = ['XmlToolParser']


cdef inline Py_ssize_t _find_lead(ValueEnds e, str text, Py_ssize_t pos, Py_ssize_t size) noexcept:
    """The next offset from ``pos`` where a value end marker may start, or -1."""
    if e.lead:
        return _find_char(text, pos, size, e.lead)
    return _find_any(text, pos, size, e.leads)


cdef class XmlToolParser(ToolParser):
    """Shared driver for sequential, function-first, tag-delimited tool calls.

    A dialect declares its markers (below) and ``arg_value_close_tag``; the
    family compiles them once per class. A dialect whose syntax the markers
    cannot say overrides the hooks ``_consume_function``,
    ``_consume_arg_start`` and ``_consume_arg_name`` (plus
    ``_consume_call_end`` when one block may hold several calls) in Python.
    A hook returns a tuple starting with the next cursor, or ``None`` when it
    needs more text; it never consumes the outer close tag.
    """

    # ---- declarations (None: not part of the dialect) ----
    # Opens a call; the function name follows. '': the name starts the call
    # and runs to the first arg_open (or function_close / the close tag).
    function_open = None
    # Ends the name after function_open (with function_open '': the name starts
    # the block and ends here); None: the name runs as for ''.
    function_name_end = None
    # Opens an argument; its name follows, up to arg_name_end.
    arg_open = None
    arg_name_end = None
    # Between the argument name and its value (text in between is dropped).
    value_open = None
    # The marker that ends a raw argument value.
    arg_value_close_tag = None
    # Ends a call; None: a call ends at the next function_open or the close tag.
    function_close = None
    # Several function_open calls may follow in one block.
    multiple_calls = False
    # Token-aligned proper prefixes a chunk may end with; None: hold back
    # every proper prefix (right for any chunking).
    function_open_prefixes = arg_open_prefixes = function_close_prefixes = arg_value_close_prefixes = None
    # Remove one protocol newline after the value opener and before its closer.
    strip_value_newlines = False
    cdata_values = False  # a value that is one <![CDATA[...]]> section is its inner text (held whole)
    quoted_numbers = False  # '"42"' (a JSON string holding one JSON number) typed number / integer is 42

    def __cinit__(self, *args, **kwargs):
        cdef XmlGrammar g = grammar_for(type(self))
        self._grammar = g
        self._value_close = g.value_close
        self._value_prefixes = g.value_prefixes
        self._no_call_content = getattr(type(self), 'no_call_block_is_content', False) is True
        self._hold_all_value_prefixes = g.hold_all_value_prefixes
        self._ends = g.value_ends_for(None)
        self._strip_newlines = g.strip_newlines
        self._xml_hooks = g.hooks
        self._bare_open = g.bare_open if not (self._hooks & HOOK_PAYLOAD) else None
        self._step.lead = g.block_lead(None)
        self._held.kind = 1
        self._name_buf.kind = 1
        self._out = None
        self._frags = []
        self._reset_call_state()

    def __dealloc__(self):
        held_free(&self._held)
        held_free(&self._name_buf)

    @classmethod
    def _xml_grammar(cls):
        """The compiled grammar of this class's declarations (for inspection)."""
        return grammar_for(cls)

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
        self._given = None
        self._step.resume = 0
        self._name_state = NAME_NONE
        self._bare_name = self._out_name = None
        if self._name_buf.len:
            held_free(&self._name_buf)  # a name the block never finished

    @property
    def _phase_name(self):
        return PHASE_NAMES[self._phase]

    cdef int begin_block_c(self) except -1:
        if self._value_close is None:
            raise TypeError(f'{type(self).__name__}.arg_value_close_tag must be a non-empty str')
        ToolParser.begin_block_c(self)
        self._step.lead = self._grammar.block_lead(self._close_tag)
        self._ends = self._grammar.value_ends_for(self._close_tag)
        self.start_call(None)
        self._reset_call_state()
        self._bare = False
        self._out = None
        del self._frags[:]
        self._no_call_text = [] if self._no_call_content else None  # no_call.pxd
        return 0

    cdef int begin_bare_block_c(self) except -1:
        start_block(self)
        self._bare = True
        self._bare_raw = self._grammar.function_open
        return 0

    # ---- Python-visible hooks over the compiled grammar (a subclass may override them)

    def _consume_function(self, str payload not None, Py_ssize_t pos, bint final=False):
        """``(pos, name, "arg_start" | "done")`` or None; name None with "done" = empty block."""
        self.fresh_step(payload, pos)
        cdef Py_ssize_t r = self._grammar.function(self, payload, pos, final, &self._step)
        if r < 0:
            return None
        return r, _step_name(payload, &self._step), PHASE_NAMES[self._step.phase]

    def _consume_arg_start(self, str payload not None, Py_ssize_t pos):
        """``(pos, "arg_name" | "done")`` or None."""
        self.fresh_step(payload, pos)
        cdef Py_ssize_t r = self._grammar.arg_start(self, payload, pos, &self._step)
        if r < 0:
            return None
        return r, PHASE_NAMES[self._step.phase]

    def _consume_arg_name(self, str payload not None, Py_ssize_t pos):
        """``(value_start, argument_name)`` or None."""
        self.fresh_step(payload, pos)
        cdef Py_ssize_t r = self._grammar.arg_name(self, payload, pos, &self._step)
        if r < 0:
            return None
        return r, _step_name(payload, &self._step)

    def _consume_call_end(self, str payload not None, Py_ssize_t pos, bint final=False):
        """After a call: ``(pos, "function")`` when another call follows in this block, ``(pos, "done")`` otherwise."""
        self.fresh_step(payload, pos)
        cdef Py_ssize_t r = self._grammar.call_end(payload, pos, final, &self._step)
        if r < 0:
            return None
        return r, PHASE_NAMES[self._step.phase]

    cdef int fresh_step(self, str payload, Py_ssize_t pos) except -1:
        """The step state a Python-visible hook starts from (names stay in the payload)."""
        _check_pos(payload, pos)
        self._step.resume = 0
        self._step.may_hold = False
        self._step.held = NAME_NONE
        return 0

    # ---- hook dispatch -------------------------------------------------------

    cdef object held_name(self, str text):
        """The held name joined with the step's last piece, stripped (see ``XmlStep``)."""
        cdef XmlStep *st = &self._step
        held_append(&self._name_buf, text, st.name_start, st.name_end)
        name = held_take(&self._name_buf, 0, self._name_buf.len).strip()
        if not name and st.name_optional:
            return None
        return name

    cdef Py_ssize_t run_hook(self, int phase, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2:
        cdef int bit = XH_CALL_END if phase == PH_CALL_END else 1 << phase  # XH_* of the phase
        cdef Py_ssize_t r
        cdef XmlGrammar g
        cdef XmlStep *st = &self._step
        if not (self._xml_hooks & bit):
            g = self._grammar
            if phase == PH_ARG_START:
                return g.arg_start(self, text, pos, st)
            if phase == PH_CALL_END:
                return g.call_end(text, pos, final, st)
            # A name the text has not terminated is consumed and held here.
            st.may_hold = True
            st.held = self._name_state
            if phase == PH_FUNCTION:
                r = g.function(self, text, pos, final, st)
            else:
                r = g.arg_name(self, text, pos, st)
            if r < 0:
                if st.piece_start >= 0:
                    held_append(&self._name_buf, text, st.piece_start, st.piece_end)
                self._name_state = st.held
            else:
                self._out_name = self.held_name(text) if st.name_raw else _step_name(text, st)
                self._name_state = NAME_NONE
            return r
        result = python_step(self, phase, text, pos, size, final, &self._step)
        if result is None:
            return -1
        if phase == PH_FUNCTION or phase == PH_ARG_NAME:
            self._out_name = (<tuple>result)[1]
        return (<tuple>result)[0]

    # ---- the driver ------------------------------------------------------------

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0, r
        cdef int phase
        if (self._phase == PH_ARG_VALUE and not final and not self._payload_closed
                and _find_lead(self._ends, text, 0, size) < 0):
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
            if self._bare and (phase == PH_FUNCTION or phase == PH_CALL_END or self._bare_name is not None):
                if not self.bare_step(text, &pos, size, final, deltas):
                    break
                continue
            r = self.run_hook(phase, text, pos, size, final)
            if r < 0:
                if self._step.skip > pos:
                    if phase == PH_FUNCTION and self._name_state == NAME_NONE:
                        no_call_skip(self, text, pos, self._step.skip)
                    pos = self._step.skip
                break
            if phase == PH_FUNCTION and no_call_end(self, text, pos, r, self._out_name):
                pos, self._step.resume = r, 0
                if self._payload_closed:
                    break
                continue  # a call whose name is no name: its text is collected too (no_call.pxd)
            pos, self._step.resume = r, 0
            if phase == PH_FUNCTION:
                name = self._out_name
                if name is None:
                    self._phase = PH_DONE  # the block holds no call
                    continue
                self.begin_function(deltas, name)
                if self._step.phase == PH_DONE:
                    self.close_object()
                    self._phase = PH_CALL_END
                else:
                    self._phase = PH_ARG_START
            elif phase == PH_ARG_START:
                if self._step.phase == PH_ARG_NAME:
                    self._phase = PH_ARG_NAME
                else:
                    self.close_object()
                    self._phase = PH_CALL_END
            elif phase == PH_ARG_NAME:
                self.begin_arg(self._out_name)
                self._phase = PH_ARG_VALUE
            else:  # PH_CALL_END
                if self._step.phase == PH_FUNCTION:
                    if pos == self._last_call_end:
                        raise ValueError(f'{type(self).__name__}: hooks made no progress at {pos}')
                    self._last_call_end = pos
                    self.flush(deltas)
                    self.start_call(None)
                    self._reset_call_state()
                else:
                    self._phase = PH_DONE
        if final and not self._payload_closed:
            # End of input: close what was emitted and the value being written (held whole), invent nothing.
            if self._phase == PH_ARG_VALUE and (self._mode == M_STREAMING or self._mode == M_BUFFERED):
                self.finish_arg()
            self.close_object()
            self._payload_closed = True
        if self._bare and self._payload_closed:
            self._close_tag = None  # the block ends with its last call: no close tag to look for
        self.flush(deltas)
        if final:  # nothing follows: drop what a long held name or value grew
            self._reset_call_state()
            held_free(&self._held)
        return pos

    # ---- bare calls (see xml_bare) --------------------------------------------

    cdef bint bare_step(self, str text, Py_ssize_t *cursor, Py_ssize_t size, bint final, list deltas) except -1:
        """A bare call's name, confirmation or end at ``cursor[0]``; False: more text is needed."""
        cdef XmlGrammar g = self._grammar
        cdef Py_ssize_t pos = cursor[0], r
        cdef bint another
        cdef int ok
        raw = None  # a rejected call's text
        if self._phase == PH_CALL_END:
            r = bare_call_end(text, pos, size, final, g.function_open, self._close_tag, &another)
            if r < 0:
                return False
            cursor[0] = r
            self._phase = PH_DONE
            if another:
                self.flush(deltas)
                self.start_call(None)
                self._reset_call_state()
                # the separator is the next call's text until it is a call
                self._bare_raw = PyUnicode_Substring(text, pos, r + PyUnicode_GET_LENGTH(g.function_open))
            return True
        elif self._bare_name is not None:  # an offered name: a call once an argument or its end follows
            ok = bare_confirm(text, pos, size, final, g.arg_open, g.function_close)
            if ok < 0:
                return False
            if ok == 0:
                raw = self._bare_raw
            else:
                self.begin_function(deltas, self._bare_name)
        else:
            decided = bare_name(g, self, text, pos, final, &self._step, &self._name_buf, &self._name_state,
                                self._bare_raw)
            if decided is None:
                if self._step.skip > pos:
                    cursor[0] = self._step.skip  # more of the name, held
                return False
            cursor[0] = <Py_ssize_t>decided[0]
            if decided[2] is None:
                raw, self._replay = decided[1], decided[3]
            else:
                self._bare_raw = <str>decided[1]
                self._bare_name = decided[2]
                self._phase = PH_ARG_START
                return True
        self._bare_name = None
        self._bare_raw = None
        if raw is not None:  # not a call: the block ends, its text goes back to the router
            self._handback = raw
            self._phase = PH_DONE
        return True

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
        if self.next_arg_ends_value:
            if self._given is None:
                self._given = []
            self._given.append(name)
        schema = None
        props = self._call_props
        if props is not None:
            schema = (<dict>props).get(name) if type(props) is dict else props.get(name)
        types = self._arg_types = schema_types_c(schema, 0) if isinstance(schema, dict) else None
        self._arg_kind = AK_TEXT
        if types is not None:
            self._arg_kind = value_kind(<tuple>types)
        self._null_state = 0
        self._null_mask = 3
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
        """More of the current value from ``pos``: up to its end (then PH_ARG_START) or what may be one."""
        cdef ValueEnds e = self._ends
        cdef Py_ssize_t at = _find_lead(e, text, pos, size), end = size, close_len = 0
        cdef int ends = VE_TEXT
        while at >= 0:
            ends = _value_end_at(e, text, at, size, final, self._hold_all_value_prefixes, self._value_prefixes,
                                 &close_len)
            if ends != VE_TEXT:
                break
            if self.next_arg_ends_value and self._call_props is not None and self.line_start(text, pos, at):
                ends = _next_arg_at(text, at, size, final, self._grammar.arg_open, self._grammar.arg_name_end,
                                    self._call_props, self._given)
                if ends != VE_TEXT:
                    ends = VE_END if ends > 0 else VE_MORE  # the opener is read as the next argument's
                    break
            at = _find_lead(e, text, at + 1, size)
        if at >= 0 and ends != VE_MORE:
            if self._mode == M_UNDECIDED and self._held.len == 0:
                self.finish_whole(text, pos, at)
            else:
                self.value_part(text, pos, at)
                self.finish_arg()
            self._phase = PH_ARG_START
            return at + close_len if ends == VE_CLOSE else at
        if at >= 0:
            end = at  # a possible end: hold it back
        self.value_part(text, pos, end)
        return end

    cdef bint line_start(self, str text, Py_ssize_t pos, Py_ssize_t at) except -1:
        """Whether ``text[at]`` starts a line of the current value (``text[:pos]`` was taken before)."""
        if at > pos:
            return PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), at - 1) == u'\n'
        if self._mode == M_STREAMING:  # a streamed value holds its trailing newline (strip_newlines)
            return self._strip_newlines and (self._suffix == SUF_LF or self._suffix == SUF_CRLF)
        return self._held.len > 0 and PyUnicode_READ(self._held.kind, self._held.data, self._held.len - 1) == u'\n'

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
        if self._arg_kind == AK_NULLABLE:
            if self.may_be_null(text, a, b):
                return held_append(&self._held, text, a, b)  # whitespace, or null / None so far
            if self._null_state == 0 and _held_lead(kind, data, i, self._grammar.cdata_values):
                self._mode = M_BUFFERED
                return held_append(&self._held, text, a, b)
        elif i == b:
            return held_append(&self._held, text, a, b)  # still only whitespace: the value's kind is unknown
        elif _held_lead(kind, data, i, self._grammar.cdata_values) or self._arg_kind == AK_WHOLE:
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

    cdef bint may_be_null(self, str text, Py_ssize_t a, Py_ssize_t b) except -1:
        """Whether the value so far, with ``text[a:b]``, may still be the literal null / None."""
        return _null_scan(text, a, b, &self._null_state, &self._null_mask)

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
        cdef bint held = i == b or self._arg_kind != AK_TEXT or _held_lead(kind, data, i, self._grammar.cdata_values)
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
        _cdata_inner(text, &a, &b, self._grammar.cdata_values)
        out = held_value_json(text, a, b, self._arg_types, self._grammar.quoted_numbers)
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
        parameters = self._tool_schemas.get(func_name) if self._tool_schemas is not None else None
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
