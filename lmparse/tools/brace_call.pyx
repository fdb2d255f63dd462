"""Brace calls: ``NAME{key:value,...}`` with a delimiter token around strings (Gemma 4).

    {tool_open_tag}call:NAME{key:<|"|>text<|"|>,n:3,ok:true,obj:{k:...},list:[...]}{tool_close_tag}

One call per block (a second ``call:NAME{...}`` right after the ``}`` is
taken as the next call). The value grammar is the chat template's
``format_argument``: strings between two ``string_delimiter`` tokens, written
as is (no escapes); bare keys (a key between delimiters is accepted too);
``{...}`` objects and ``[...]`` arrays separated by ``,``; any other value is
bare text up to ``,`` ``}`` or ``]``. The arguments are converted to JSON with
``json.dumps``' layout (``{"key": "text", "n": 3}``): a bare value that is a
JSON literal (``true``, ``false``, ``null``) or a JSON number is kept as
written, any other bare text becomes a JSON string; whitespace outside strings
is dropped.

Streaming: the ``{`` and each key once its value starts, string contents as
they arrive (JSON-escaped), closers as they come. Held: a key until its value
starts, and a bare value until it ends (so a truncated one is never emitted
with a guessed type); both are held here (``HeldText``), as is a call header,
so only a partial marker stays in the router's buffer. Every marker (the
delimiter, the block's open and close tags) starts with one lead character;
strings are searched for it with ``PyUnicode_FindChar``.

Marker text inside a string is text unless the grammar confirms it: the
block's open tag there is text (a value quoting a call), and its close tag
ends the call only when what follows it, after at most ``_TAIL_WINDOW``
whitespace characters, is the next open tag or the end of the output; only
that lookahead is held back. A string can end only at its delimiter, which
the grammar has no way to write as text.

Malformed output: a confirmed close tag inside a string, or the close tag or
a next open tag anywhere outside strings, ends the call, closing the JSON the
parser opened; the end of the output does the same, dropping an unfinished
key or bare value. Text after the call's ``}`` that is not the close tag (nor the
next call) ends the block there: it is the router's again (whitespace and
stray ``}`` ``]`` right before the close tag are dropped). A header without
``{`` before the close tag is a call with ``{}``; an empty name is no call.
"""
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.unicode cimport PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.base cimport REJECTED_INDEX, ToolParser, marker_match
from lmparse.tools.held_text cimport HeldText, held_append, held_free, held_take_with
from lmparse.tools.json_escape cimport json_quoted, json_string_body

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = ['BraceCallToolParser']

cdef enum:
    PH_HEADER = 0  # call:NAME up to '{'
    PH_KEY_START = 1  # in an object, before a key
    PH_KEY = 2  # a bare key, up to ':'
    PH_QKEY = 3  # a key between delimiters
    PH_COLON = 4  # after a delimited key
    PH_VALUE = 5  # before a member's value or an array item
    PH_STRING = 6  # inside a delimited string
    PH_BARE = 7  # a bare value, up to ',' '}' ']'
    PH_AFTER = 8  # after a value
    PH_TAIL = 9  # after the call's '}'

# Markers, as returned by ``_marker``.
cdef enum:
    MK_NONE = -1
    MK_PARTIAL = -2  # a proper prefix of a marker ends the text (only when not final)
    MK_DELIM = 0
    MK_CLOSE = 1
    MK_OPEN = 2

# Stack entry bits.
cdef enum:
    E_ARRAY = 1
    E_MEMBERS = 2

_PHASE_NAMES = ('header', 'key_start', 'key', 'quoted_key', 'colon', 'value', 'string', 'bare', 'after', 'tail')

# A run of whitespace after the call's '}' longer than this ends the block (it is not the close tag's).
cdef Py_ssize_t _TAIL_WINDOW = 64


cdef inline Py_ssize_t _skip_space(int kind, void *data, Py_ssize_t pos, Py_ssize_t size) noexcept:
    while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
        pos += 1
    return pos


cdef inline Py_ssize_t _digits(int kind, void *data, Py_ssize_t i, Py_ssize_t end) noexcept:
    while i < end and u'0' <= PyUnicode_READ(kind, data, i) <= u'9':
        i += 1
    return i


cdef bint _json_scalar(str s) noexcept:
    """Whether ``s`` is a JSON literal or a JSON number (kept as written)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i = 0, j
    cdef int kind = PyUnicode_KIND(s)
    cdef void *data = PyUnicode_DATA(s)
    if n == 0:
        return False
    if n <= 5 and (s == 'true' or s == 'false' or s == 'null'):
        return True
    if PyUnicode_READ(kind, data, 0) == u'-':
        i = 1
    if i < n and PyUnicode_READ(kind, data, i) == u'0':
        i += 1
    else:
        j = _digits(kind, data, i, n)
        if j == i:
            return False
        i = j
    if i < n and PyUnicode_READ(kind, data, i) == u'.':
        j = _digits(kind, data, i + 1, n)
        if j == i + 1:
            return False
        i = j
    if i < n and (PyUnicode_READ(kind, data, i) == u'e' or PyUnicode_READ(kind, data, i) == u'E'):
        i += 1
        if i < n and (PyUnicode_READ(kind, data, i) == u'+' or PyUnicode_READ(kind, data, i) == u'-'):
            i += 1
        j = _digits(kind, data, i, n)
        if j == i:
            return False
        i = j
    return i == n


cdef str _stripped(str s):
    cdef Py_ssize_t a = 0, b = PyUnicode_GET_LENGTH(s)
    cdef int kind = PyUnicode_KIND(s)
    cdef void *data = PyUnicode_DATA(s)
    a = _skip_space(kind, data, 0, b)
    while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)):
        b -= 1
    return PyUnicode_Substring(s, a, b)


cdef class BraceCallToolParser(ToolParser):
    """``call:NAME{key:value,...}`` calls (see the module docs).

    A dialect declares ``tool_open_tag``, ``tool_close_tag``,
    ``string_delimiter`` (all three starting with the same character) and
    ``call_prefixes`` (stripped from the front of the header to give the name;
    the first also starts a next call in the same block).
    """

    tool_open_tag = None
    tool_close_tag = None
    string_delimiter = None
    call_prefixes = ('call:',)

    cdef int _phase
    cdef tuple _markers  # (delimiter, close tag, open tag)
    cdef tuple _prefixes
    cdef str _next_call
    cdef Py_UCS4 _lead
    cdef HeldText _held  # an unfinished header, key or bare value
    cdef str _key  # the JSON key of the member whose value is next (None in an array)
    cdef list _out  # argument text of this chunk, emitted as one fragment
    cdef char *_stack  # open containers, innermost last (E_* bits)
    cdef Py_ssize_t _depth
    cdef Py_ssize_t _cap

    def __cinit__(self, *args, **kwargs):
        cls = type(self)
        delim, close, open_ = cls.string_delimiter, cls.tool_close_tag, cls.tool_open_tag
        for marker in (delim, close, open_):
            if not isinstance(marker, str) or not marker:
                raise TypeError(f'{cls.__name__} must declare string_delimiter, tool_open_tag and tool_close_tag '
                                f'as non-empty str, got {marker!r}')
        self._lead = (<str>delim)[0]
        if (<str>close)[0] != self._lead or (<str>open_)[0] != self._lead:
            raise TypeError(f'{cls.__name__}: string_delimiter, tool_open_tag and tool_close_tag must start '
                            f'with the same character')
        prefixes = cls.call_prefixes
        if not isinstance(prefixes, tuple) or not all(isinstance(p, str) and p for p in prefixes):
            raise TypeError(f'{cls.__name__}.call_prefixes must be a tuple of non-empty str, got {prefixes!r}')
        self._markers = (delim, close, open_)
        self._prefixes = prefixes
        self._next_call = prefixes[0] if prefixes else None
        self._out = []
        self._phase = PH_HEADER

    def __dealloc__(self):
        held_free(&self._held)
        PyMem_Free(self._stack)

    @property
    def _phase_name(self):
        return _PHASE_NAMES[self._phase]

    cdef int begin_block_c(self) except -1:
        ToolParser.begin_block_c(self)
        self._phase = PH_HEADER
        self._depth = 0
        self._key = None
        del self._out[:]
        held_free(&self._held)
        return 0

    # ---- output -------------------------------------------------------------

    cdef int flush(self, list deltas) except -1:
        cdef Py_ssize_t n = len(self._out)
        if n:
            self.emit_c(deltas, None, self._out[0] if n == 1 else ''.join(self._out))
            del self._out[:]
        return 0

    cdef int push(self, char entry) except -1:
        cdef char *grown
        if self._depth == self._cap:
            grown = <char *>PyMem_Realloc(self._stack, self._cap * 2 + 16)
            if grown is NULL:
                raise MemoryError()
            self._stack = grown
            self._cap = self._cap * 2 + 16
        self._stack[self._depth] = entry
        self._depth += 1
        self._out.append('[' if entry & E_ARRAY else '{')
        return 0

    cdef inline bint in_array(self) noexcept:
        return self._depth > 0 and self._stack[self._depth - 1] & E_ARRAY

    cdef int begin_member(self) except -1:
        """The separator and key before a value in the innermost container."""
        cdef Py_ssize_t top = self._depth - 1
        if self._stack[top] & E_MEMBERS:
            self._out.append(', ')
        self._stack[top] |= E_MEMBERS
        if not self._stack[top] & E_ARRAY:
            self._out.append(self._key if self._key is not None else '""')
            self._out.append(': ')
        self._key = None
        return 0

    cdef int pop(self) except -1:
        """Close the innermost container; the phase follows from what is left."""
        self._depth -= 1
        self._out.append(']' if self._stack[self._depth] & E_ARRAY else '}')
        self._phase = PH_AFTER if self._depth else PH_TAIL
        if not self._depth and self._cap > 256:
            PyMem_Free(self._stack)  # a deep value's stack is not kept past its call
            self._stack = NULL
            self._cap = 0
        return 0

    cdef int bare_value(self, str raw) except -1:
        """A bare value ended: a JSON literal or number as written, else a string; empty: no value."""
        cdef str value = _stripped(raw)
        if not value:
            self._key = None
            return 0
        self.begin_member()
        self._out.append(value if _json_scalar(value) else json_quoted(value))
        return 0

    cdef int close_all(self, bint string_open) except -1:
        """The call ends here: close the string and containers this parser opened."""
        if string_open:
            self._out.append('"')
        self._key = None
        held_free(&self._held)
        while self._depth:
            self.pop()
        self._phase = PH_TAIL
        return 0

    # ---- scanning -----------------------------------------------------------

    cdef int _marker(self, int kind, void *data, Py_ssize_t at, Py_ssize_t size, bint final) noexcept:
        """Which marker starts at ``at`` (a lead character)."""
        cdef int k, found
        cdef bint partial = False
        for k in range(3):
            found = marker_match(kind, data, at, size, <str>self._markers[k])
            if found == 2:
                return k
            partial |= found
        return MK_PARTIAL if partial and not final else MK_NONE

    cdef int boundary(self, int mk, Py_ssize_t pos, list deltas) except -1:
        """The close tag (consumed by the feed) or the next open tag (the router's) at the cursor."""
        self.flush(deltas)
        self._payload_closed = True
        if mk == MK_OPEN:
            self._close_tag = None  # the feed then ends the block at the cursor (begin_block_c restores it)
        return 0

    cdef Py_ssize_t header(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """``call:NAME`` up to ``{`` (or a marker): the call's identity."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t at = pos
        cdef int mk = MK_NONE
        cdef Py_UCS4 c
        while at < size:
            c = PyUnicode_READ(kind, data, at)
            if c == u'{':
                break
            if c == self._lead:
                mk = self._marker(kind, data, at, size, final)
                if mk == MK_PARTIAL or mk == MK_CLOSE or mk == MK_OPEN:
                    break
                mk = MK_NONE
            at += 1
        if at == size or mk == MK_PARTIAL:
            held_append(&self._held, text, pos, at)
            return at
        name = _stripped(held_take_with(&self._held, text, pos, at))
        for prefix in self._prefixes:
            if name.startswith(prefix):
                name = _stripped(name[len(prefix):])
                break
        self.flush(deltas)
        self.start_call(None)
        if name:
            self.emit_c(deltas, name, None)
        else:
            self._output_index = REJECTED_INDEX  # no name: never invent one
        if mk == MK_NONE:  # '{'
            self._depth = 0
            self.push(0)
            self._phase = PH_KEY_START
            return at + 1
        self._out.append('{}')
        self.boundary(mk, at, deltas)
        return at

    cdef Py_ssize_t run_to(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final, bint key,
                           int *mk) except -1:
        """End of a bare key (``key``) or value: its terminator, a marker, or a partial marker at the end."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_UCS4 c
        mk[0] = MK_NONE
        while pos < size:
            c = PyUnicode_READ(kind, data, pos)
            if c == u',' or c == u'}' or (c == u':' if key else c == u']'):
                return pos
            if c == self._lead:
                mk[0] = self._marker(kind, data, pos, size, final)
                if mk[0] == MK_PARTIAL or mk[0] == MK_CLOSE or mk[0] == MK_OPEN:
                    return pos
                mk[0] = MK_NONE
            pos += 1
        return size

    cdef int confirm_close(self, int kind, void *data, Py_ssize_t after, Py_ssize_t size, bint final) noexcept:
        """Whether a close tag inside a string (ending at ``after``) ends the call: 1 whitespace then the
        next open tag or the end of the output; 0 anything else (text); -1 not decided yet."""
        cdef Py_ssize_t pos = _skip_space(kind, data, after, size)
        cdef int found
        if pos - after > _TAIL_WINDOW:
            return 0
        if pos == size:
            return 1 if final else -1
        found = marker_match(kind, data, pos, size, <str>self._markers[MK_OPEN])
        if found == 2:
            return 1
        return -1 if found == 1 and not final else 0

    cdef Py_ssize_t string_run(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final, bint key,
                               int *mk) except -1:
        """Up to the closing delimiter (or a confirmed close tag); a value's text is output as it goes."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t at = pos
        cdef int verdict
        while True:
            at = PyUnicode_FindChar(text, self._lead, at, size, 1)
            if at < 0:
                at = size
                mk[0] = MK_NONE
                break
            mk[0] = self._marker(kind, data, at, size, final)
            if mk[0] == MK_CLOSE:
                verdict = self.confirm_close(kind, data, at + PyUnicode_GET_LENGTH(<str>self._markers[MK_CLOSE]),
                                             size, final)
                if verdict < 0:
                    mk[0] = MK_PARTIAL  # held from the tag until what follows decides
                    break
                if verdict > 0:
                    break
            elif mk[0] != MK_NONE and mk[0] != MK_OPEN:  # an open tag inside a string is text
                break
            at += 1
        if at > pos:
            if key:
                held_append(&self._held, text, pos, at)
            else:
                self._out.append(json_string_body(text, pos, at))
        return at

    cdef Py_ssize_t tail(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """After the call's ``}``: the close tag, a next call, or text that ends the block."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t q = pos
        cdef int mk, found
        cdef Py_UCS4 c
        # whitespace and stray closers before the close tag are the block's (up to _TAIL_WINDOW of them,
        # counted from the '}' whatever the chunking)
        while q < size and q - pos <= _TAIL_WINDOW:
            c = PyUnicode_READ(kind, data, q)
            if not (c == u'}' or c == u']' or Py_UNICODE_ISSPACE(c)):
                break
            q += 1
        self.flush(deltas)
        if q - pos > _TAIL_WINDOW:
            self.boundary(MK_OPEN, pos, deltas)  # too long a run: the block ended at the '}'
            return pos
        if q == size:
            if final:
                self._payload_closed = True
                return size  # trailing whitespace is the block's
            return pos
        if PyUnicode_READ(kind, data, q) == self._lead:
            mk = self._marker(kind, data, q, size, final)
            if mk == MK_PARTIAL:
                return pos
            if mk == MK_CLOSE:
                self.boundary(mk, q, deltas)
                return q
            if final and marker_match(kind, data, q, size, <str>self._markers[MK_CLOSE]) == 1:
                self._payload_closed = True  # the output ends inside the close tag: it is the block's
                return size
        if self._next_call is not None:
            found = marker_match(kind, data, q, size, self._next_call)
            if found == 2:
                self._phase = PH_HEADER
                return q
            if found == 1 and not final:
                return pos
        self.boundary(MK_OPEN, pos, deltas)  # anything else is the router's, whitespace included
        return pos

    cdef Py_ssize_t structure(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final, int *mk) except -1:
        """One step between tokens of an object or array (phases KEY_START, COLON, VALUE, AFTER).

        Returns the new cursor; ``mk[0]`` is set when a marker stops the step.
        """
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef int phase = self._phase
        cdef bint array = self.in_array()
        cdef Py_UCS4 c
        mk[0] = MK_NONE
        pos = _skip_space(kind, data, pos, size)
        if pos == size:
            return pos
        c = PyUnicode_READ(kind, data, pos)
        if c == self._lead:
            mk[0] = self._marker(kind, data, pos, size, final)
            if mk[0] == MK_PARTIAL or mk[0] == MK_CLOSE or mk[0] == MK_OPEN:
                return pos
        if phase == PH_AFTER:
            if c == u',':
                self._phase = PH_VALUE if array else PH_KEY_START
                return pos + 1
            if c == u'}' or c == u']':
                if array or c == u'}' or self._depth > 1:
                    self.pop()  # a '}' closing an array, or a ']' an inner object: closes it and counts again
                    return pos + 1 if (c == u']') == array else pos
                return pos + 1  # a stray ']' in the outer object
            self._phase = PH_VALUE if array else PH_KEY_START  # a missing ','
            return pos
        if phase == PH_KEY_START:
            if c == u',' or c == u']':
                return pos + 1
            if c == u'}':
                self.pop()
                return pos + 1
            if mk[0] == MK_DELIM:
                self._phase = PH_QKEY
                return pos + PyUnicode_GET_LENGTH(<str>self._markers[MK_DELIM])
            self._phase = PH_KEY
            return pos
        if phase == PH_COLON:
            if c == u':':
                self._phase = PH_VALUE
                return pos + 1
            if c == u',' or c == u'}':
                self._key = None  # a key without a value
                self._phase = PH_KEY_START
                return pos
            self._phase = PH_VALUE  # a missing ':'
            return pos
        # PH_VALUE
        if mk[0] == MK_DELIM:
            self.begin_member()
            self._out.append('"')
            self._phase = PH_STRING
            return pos + PyUnicode_GET_LENGTH(<str>self._markers[MK_DELIM])
        if c == u'{' or c == u'[':
            self.begin_member()
            self.push(E_ARRAY if c == u'[' else 0)
            self._phase = PH_VALUE if c == u'[' else PH_KEY_START
            return pos + 1
        if c == u',' or c == u'}' or c == u']':
            self._key = None  # no value: the member is dropped
            self._phase = PH_AFTER
            return pos + 1 if c == u',' and array else pos
        self._phase = PH_BARE
        return pos

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0, at
        cdef int phase, mk = MK_NONE
        cdef str raw
        while pos < size and not self._payload_closed:
            phase = self._phase
            mk = MK_NONE
            if phase == PH_HEADER:
                at = self.header(text, pos, size, deltas, final)
                if self._phase == PH_HEADER and not self._payload_closed:
                    pos = at
                    break
                pos = at
                continue
            if phase == PH_TAIL:
                at = self.tail(text, pos, size, deltas, final)
                if self._phase == PH_TAIL and not self._payload_closed:
                    pos = at
                    break
                pos = at
                continue
            if phase == PH_STRING or phase == PH_QKEY:
                at = self.string_run(text, pos, size, final, phase == PH_QKEY, &mk)
                pos = at
                if mk == MK_DELIM:
                    pos += PyUnicode_GET_LENGTH(<str>self._markers[MK_DELIM])
                    if phase == PH_STRING:
                        self._out.append('"')
                        self._phase = PH_AFTER
                    else:
                        self._key = json_quoted(held_take_with(&self._held, text, 0, 0))
                        self._phase = PH_COLON
                    continue
                if mk == MK_CLOSE or mk == MK_OPEN:
                    self.close_all(phase == PH_STRING)
                    self.boundary(mk, pos, deltas)
                break  # the end of the text or a partial marker
            if phase == PH_KEY or phase == PH_BARE:
                at = self.run_to(text, pos, size, final, phase == PH_KEY, &mk)
                if at == size or mk == MK_PARTIAL:
                    held_append(&self._held, text, pos, at)
                    pos = at
                    break
                raw = held_take_with(&self._held, text, pos, at)
                pos = at
                if phase == PH_BARE:
                    self.bare_value(raw)  # ended by its terminator or a marker
                    self._phase = PH_AFTER
                elif mk == MK_NONE and PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), at) == u':':
                    self._key = json_quoted(_stripped(raw))
                    self._phase = PH_VALUE
                    pos += 1
                    continue
                else:
                    self._phase = PH_KEY_START  # a key without ':' is dropped
                if mk != MK_NONE:
                    self.close_all(False)
                    self.boundary(mk, pos, deltas)
                continue
            at = self.structure(text, pos, size, final, &mk)
            if mk == MK_CLOSE or mk == MK_OPEN:
                self.close_all(False)
                self.boundary(mk, at, deltas)
                pos = at
                break
            if mk == MK_PARTIAL or at == size:
                pos = at
                break
            pos = at
        if final and not self._payload_closed:
            # No more text: close what was opened; an unfinished header, key or bare value is dropped.
            if self._phase != PH_HEADER and self._phase != PH_TAIL:
                self.close_all(self._phase == PH_STRING)
            held_free(&self._held)
        self.flush(deltas)
        return pos
