"""Pythonic tool calls: ``[get_weather(city="Paris", days=3), other()]`` (Llama 3.2 / Llama 4).

A list of calls with keyword arguments whose values are Python literals
(strings in either quote, triple-quoted too, with escapes; ints, floats,
``True``/``False``/``None``; lists, tuples, dicts, nested), converted to the
JSON arguments ``json.dumps`` would give (``{"city": "Paris", "days": 3}``),
with a cursor scanner and no ``ast``/``eval``.

Where a call list is: after the dialect's open tag (Llama 4's
``<|python_start|>``, the list then ends at ``<|python_end|>``), or, with
``bare_call_open = '['``, at the start of the response (after whitespace);
with ``bare_calls_after_text`` too, at any ``[`` of the plain text (SGLang's
pythonic detector reads a list after prose), confirmed the same way.
With ``call_list_brackets = False`` the open tag holds the calls themselves,
one after another (OLMo 3's ``<function_calls>f(a=1)\ng()</function_calls>``:
separated by a comma or whitespace), and the close tag ends them; with
``json_literals`` the words ``true`` / ``false`` / ``null`` are JSON values.
The list is a call list only when its first element is ``NAME(`` with NAME an
offered tool: until then nothing is emitted (the head is held, bounded by the
longest offered name), and anything else (a markdown link, a JSON array, a
call to a tool not offered) is content byte for byte, the open tag included.
Later calls to names not offered are dropped (accepted calls keep contiguous
indices).

Streaming: the name when its ``(`` arrives; ``{"key": `` when the keyword's
value starts (a key never stands without its value); string content as it arrives (escapes converted; only a cut
escape or a cut triple quote is held); numbers and ``True``/``False``/``None``
when they end (held while they may continue); brackets and separators as
they come.

Best effort (README "Malformed outputs"): positional arguments are skipped
(as vLLM's and SGLang's parsers read only keywords); a bare identifier value
(``unit=celsius``) and a token that is no number (``1.2.3``, ``1e999``) become
JSON strings of their text; ``(x)`` is a tuple (a JSON array). Any other
syntax error (``city=)``, ``city=,``, ``(=1)``, ``1,,``, ``{'a': }``) ends the
call list there: the current call keeps the arguments emitted so far (never
completed; a keyword or dict key whose value never started is not among
them), a tagged block's text up to its close tag is dropped, and a bare
list's text up to its own ``]`` (brackets counted outside quotes, found
within 256 characters) is dropped too; without that ``]`` the bare list's
text from the error on is content. The end of the output inside the list
ends the call the same way. SGLang's pythonic detector gives no call for
``[get_weather(city=)]`` (it parses the whole list with ``ast``); a stream
cannot take back a name sent at its ``(``, so lmparse keeps the call.
"""
import unicodedata

from cpython.unicode cimport PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.base cimport ToolParser, start_block
from lmparse.tools.held_text cimport HeldText, held_append, held_free, held_take
from lmparse.tools.pythonic_head cimport (
    HEAD_REJECTED, HEAD_UNDECIDED, _ident_char, _ident_start, _name_char, _ws, pythonic_head)
from lmparse.tools.json_escape cimport json_quoted, json_string_body

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = ['PythonicToolParser']

cdef enum:
    ST_HEAD = 0  # the undecided head: [ NAME (
    ST_CALL = 1  # a call's name or the list's ]
    ST_NAME = 2  # in a call's name (held)
    ST_PAREN = 3  # the call's (
    ST_ARG = 4  # a keyword, a positional value or the call's )
    ST_KW = 5  # in a keyword (held)
    ST_EQ = 6  # the keyword's = (or , / ): it was a positional identifier)
    ST_VALUE = 7  # a value's first character
    ST_STRING = 8  # in a string
    ST_TOKEN = 9  # in a number or word (held)
    ST_ARG_NEXT = 10  # , or ) after an argument
    ST_ITEM_NEXT = 11  # , or the closer after a container item
    ST_COLON = 12  # a dict key's :
    ST_CALL_NEXT = 13  # , or ] after a call
    ST_TAIL = 14  # after the list's ]: the close tag, or the block ends
    ST_SKIP = 15  # a bare list's text after a syntax error, up to the list's ] (held, bounded)

    C_LIST = 1
    C_TUPLE = 2
    C_DICT = 3
    C_ITEMS = 4  # flag: the container has an item

    _HEAD_WS = 64  # whitespace accepted in the head and before a close tag (bounds what is held)
    _SKIP_MAX = 256  # a malformed bare list's rest is the list's when its ] comes within this many characters

_STATE_NAMES = ('head', 'call', 'name', 'paren', 'argument', 'keyword', 'equals', 'value', 'string', 'token',
                'argument_next', 'item_next', 'colon', 'call_next', 'tail', 'skip')

# Python escapes with a fixed replacement, as JSON string text.
cdef dict _SIMPLE_ESCAPES = {
    u'\\': u'\\\\', u"'": u"'", u'"': u'\\"', u'a': u'\\u0007', u'b': u'\\b', u'f': u'\\f', u'n': u'\\n',
    u'r': u'\\r', u't': u'\\t', u'v': u'\\u000b', u'\n': u'',
}


cdef inline bint _hex(Py_UCS4 ch) noexcept:
    return (u'0' <= ch <= u'9') or (u'a' <= ch <= u'f') or (u'A' <= ch <= u'F')


cdef str _json_char(Py_ssize_t cp):
    """One code point as JSON string text (a lone surrogate as its escape)."""
    if 0xD800 <= cp <= 0xDFFF:
        return '\\u%04x' % cp
    return json_string_body(chr(cp), 0, 1)


cdef str _token_json(str tok, bint number, bint json_words):
    """A number or word token as JSON: a literal when it is one, else a string of its text."""
    if not number:
        if tok == 'True':
            return 'true'
        if tok == 'False':
            return 'false'
        if tok == 'None':
            return 'null'
        if json_words and (tok == 'true' or tok == 'false' or tok == 'null'):
            return tok
        return json_quoted(tok)
    cdef str t = tok.replace('_', '') if '_' in tok else tok
    try:
        return str(int(t, 0))
    except ValueError:
        pass
    try:
        if t.lstrip('+-').isdigit():
            return str(int(t, 10))  # a leading zero Python refuses: read as decimal
        v = float(t)
    except ValueError:
        return json_quoted(tok)
    if v != v or v in (float('inf'), float('-inf')) or t.lower().lstrip('+-') in ('nan', 'inf', 'infinity'):
        return json_quoted(tok)  # JSON has no non-finite numbers
    return repr(v)


cdef class PythonicToolParser(ToolParser):
    """Tool parser for a pythonic call list (see the module docstring).

    A dialect declares ``tool_open_tag`` / ``tool_close_tag`` and, to take a
    list written without them at the start of the response, ``bare_call_open = '['``.
    ``call_list_brackets = False``: the block holds calls without ``[`` ``]``,
    separated by commas or whitespace (OLMo 3's lines), ended by the close
    tag. ``json_literals``: ``true`` / ``false`` / ``null`` are those JSON
    values too (not strings of their text). ``bare_calls_after_text``: a bare
    list may also start after text, at any ``[`` (held while its head is
    undecided, content when it is not ``[NAME(`` with NAME an offered tool).
    """

    tool_open_tag = None
    tool_close_tag = None
    call_list_brackets = True
    json_literals = False
    bare_calls_after_text = False

    cdef int _state
    cdef list _stack  # open containers: kind | C_ITEMS
    cdef list _frags  # argument text of the current call not yet emitted
    cdef HeldText _tok  # a name, keyword, number or word not yet ended
    cdef bint _tok_number
    cdef bint _tok_key
    cdef bint _item_start  # the next value is a container's item (or key)
    cdef bint _val_key  # the value being read is a dict key
    cdef bint _positional  # the argument being read is positional: not emitted
    cdef str _sep  # a keyword's '{"key": ' or a dict's ': ', emitted only when the value starts
    cdef bint _sep_kw  # _sep is a keyword's
    cdef Py_ssize_t _skip_depth  # ST_SKIP: brackets open at the syntax error, the list's [ included
    cdef bint _has_kwargs
    cdef bint _bare_block
    cdef Py_UCS4 _quote
    cdef bint _triple
    cdef str _name
    cdef object _open_tag
    cdef bint _brackets
    cdef bint _json_words

    def __cinit__(self, *args, **kwargs):
        cls = type(self)
        bare = getattr(cls, 'bare_call_open', None)
        self._brackets = bool(cls.call_list_brackets)
        self._json_words = bool(cls.json_literals)
        if not self._brackets and (bare is not None or not cls.tool_close_tag):
            raise TypeError(f'{cls.__name__}.call_list_brackets = False needs a tool_close_tag and no bare_call_open')
        if bare is not None:
            if bare != '[':
                raise TypeError(f"{type(self).__name__}.bare_call_open: the pythonic family takes None or '['")
            self._bare_open = bare
            self._bare_at_start = not cls.bare_calls_after_text
        elif cls.bare_calls_after_text:
            raise TypeError(f"{cls.__name__}.bare_calls_after_text needs bare_call_open = '['")
        self._stack = []
        self._frags = []
        self._tok.kind = 1
        self._sep = ''
        self._state = ST_HEAD

    def __dealloc__(self):
        held_free(&self._tok)

    @property
    def _state_name(self):
        return _STATE_NAMES[self._state]

    cdef int begin_block_c(self) except -1:
        ToolParser.begin_block_c(self)
        open_tag = self.get_tool_open_tag()
        self._open_tag = open_tag if isinstance(open_tag, str) else ''
        self._state = ST_HEAD
        self._bare_block = False
        del self._stack[:]
        del self._frags[:]
        self._tok.len = 0
        self._positional = False
        self._sep = ''
        self._sep_kw = False
        return 0

    cdef int begin_bare_block_c(self) except -1:
        start_block(self)
        self._bare_block = True
        self._open_tag = ''
        return 0

    # ---- output -------------------------------------------------------------

    cdef inline int put(self, str s) except -1:
        if not self._positional:
            self._frags.append(s)
        return 0

    cdef int flush(self, list deltas) except -1:
        if self._frags:
            self.emit_c(deltas, None, self._frags[0] if len(self._frags) == 1 else ''.join(self._frags))
            del self._frags[:]
        return 0

    cdef int begin_call(self, list deltas, str name) except -1:
        self.flush(deltas)
        self.start_call(None)
        self.emit_c(deltas, name, None)
        self._name_emitted = True
        self._has_kwargs = False
        self._state = ST_ARG
        return 0

    cdef Py_ssize_t end_list(self, Py_ssize_t pos) except -1:
        """The call list ends at ``pos``: the current call keeps what it emitted."""
        self._payload_closed = True
        self._sep = ''
        if self._bare_block:
            self._close_tag = None  # the rest is plain text again
        return pos

    cdef Py_ssize_t malformed(self, Py_ssize_t pos) except -1:
        """A syntax error at ``pos`` (see the module docstring).

        A tagged block's text up to its close tag is the block's (the feed drops it). A bare list's rest is
        the list's up to its own ``]`` (ST_SKIP) when that comes within _SKIP_MAX characters.
        """
        cdef int st = self._state
        if not self._bare_block or not self._brackets:
            return self.end_list(pos)
        self._sep = ''
        # open brackets at pos: the list's [, the call's ( when inside it, the containers
        self._skip_depth = 1 + len(self._stack) + (0 if st == ST_CALL or st == ST_NAME or st == ST_PAREN
                                                     or st == ST_CALL_NEXT else 1)
        self._state = ST_SKIP
        return pos

    cdef Py_ssize_t skip(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -1:
        """ST_SKIP: ``text[pos:]`` starts at the syntax error. Through the list's ``]`` (brackets counted outside
        quotes) the text is the list's and dropped; else, past _SKIP_MAX characters or at the end of the output,
        the list ends at ``pos`` and the text is content. Returns pos while undecided (held, rescanned: bounded)."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t p = pos, end = min(size, pos + _SKIP_MAX), depth = self._skip_depth
        cdef Py_UCS4 ch, quote = 0
        while p < end:
            ch = PyUnicode_READ(kind, data, p)
            if quote:
                if ch == u'\\':
                    p += 1
                elif ch == quote:
                    quote = 0
            elif ch == u'"' or ch == u"'":
                quote = ch  # a triple quote opens, closes and opens: still inside
            elif ch == u'[' or ch == u'(' or ch == u'{':
                depth += 1
            elif ch == u']' or ch == u')' or ch == u'}':
                depth -= 1
                if depth == 0:
                    if ch != u']':
                        break  # the brackets do not close the list
                    self.end_list(p + 1)
                    return p + 1
            p += 1
        if final or p >= pos + _SKIP_MAX or depth == 0:
            return self.end_list(pos)
        return pos

    # ---- values -------------------------------------------------------------

    cdef int value_done(self) except -1:
        cdef bint key = self._val_key
        self._val_key = False
        if not self._stack:
            self._state = ST_ARG_NEXT
        else:
            self._state = ST_COLON if key else ST_ITEM_NEXT
        return 0

    cdef int token_end(self) except -1:
        """A held name, keyword or value token ended."""
        cdef str tok = held_take(&self._tok, 0, self._tok.len)
        cdef str out
        if self._state == ST_NAME:
            self._name = tok
            self._state = ST_PAREN
        elif self._state == ST_KW:
            self._name = tok
            self._state = ST_EQ
        else:
            out = _token_json(tok, self._tok_number, self._json_words)
            if self._tok_key and not out.startswith('"'):
                out = '"' + out + '"'  # json.dumps turns a non-string key into its JSON text
            self.put(out)
            self.value_done()
        return 0

    cdef int close_container(self, Py_UCS4 ch) except -1:
        """``ch`` closes the innermost container: 1; 0 when it is not that container's closer."""
        cdef int top = <int>self._stack[len(self._stack) - 1] & 3
        if (ch == u']' and top != C_LIST) or (ch == u')' and top != C_TUPLE) or (ch == u'}' and top != C_DICT):
            return 0
        self.put(u'}' if top == C_DICT else u']')
        self._stack.pop()
        self._item_start = False
        self.value_done()
        return 1

    cdef Py_ssize_t value_start(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2:
        """The value starting at ``pos``; -1: hold (a quote whose triple-ness is unknown)."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_UCS4 ch = PyUnicode_READ(kind, data, pos)
        cdef int top = (<int>self._stack[len(self._stack) - 1] & 3) if self._stack else 0
        if (ch == u'"' or ch == u"'") and not final and (
                pos + 1 == size or (pos + 2 == size and PyUnicode_READ(kind, data, pos + 1) == ch)):
            return -1  # one quote, or two: a triple quote is not ruled out yet
        if self._item_start and (ch == u']' or ch == u')' or ch == u'}'):
            # an empty container or a trailing comma
            return pos + 1 if self._stack and self.close_container(ch) else self.malformed(pos)
        cdef bint string = ch == u'"' or ch == u"'"
        cdef bint container = ch == u'[' or ch == u'(' or ch == u'{'
        self._val_key = self._item_start and top == C_DICT
        if not (string or container or (u'0' <= ch <= u'9') or ch == u'-' or ch == u'+' or ch == u'.'
                or _ident_start(ch)) or (container and self._val_key):
            return self.malformed(pos)  # no value (the pending key is never emitted), or a container as a dict key
        if self._sep:
            # the value starts: now its keyword (or the dict's ': ') is stable
            self.put(self._sep)
            self._sep = ''
            if self._sep_kw:
                self._has_kwargs = True
                self._sep_kw = False
        if self._item_start and self._stack:
            if <int>self._stack[len(self._stack) - 1] & C_ITEMS:
                self.put(u', ')
            else:
                self._stack[len(self._stack) - 1] = <int>self._stack[len(self._stack) - 1] | C_ITEMS
        self._item_start = False
        if string:
            self._quote = ch
            self._triple = pos + 2 < size and PyUnicode_READ(kind, data, pos + 1) == ch and PyUnicode_READ(
                kind, data, pos + 2) == ch
            self._state = ST_STRING
            self.put(u'"')
            return pos + (3 if self._triple else 1)
        if container:
            self._stack.append(C_LIST if ch == u'[' else C_TUPLE if ch == u'(' else C_DICT)
            self.put(u'{' if ch == u'{' else u'[')
            self._item_start = True
            self._state = ST_VALUE
            return pos + 1
        self._tok_number = not _ident_start(ch)
        self._tok_key = self._val_key
        self._state = ST_TOKEN
        return pos  # the token loop reads it

    cdef Py_ssize_t escape(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2:
        """The escape at ``pos`` (a backslash) converted; -1: cut by the chunk (held)."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_UCS4 c
        cdef Py_ssize_t n, k, cp, close
        if pos + 1 >= size:
            if not final:
                return -1
            self.put(u'\\\\')
            return size
        c = PyUnicode_READ(kind, data, pos + 1)
        simple = _SIMPLE_ESCAPES.get(chr(c))
        if simple is not None:
            self.put(<str>simple)
            return pos + 2
        if u'0' <= c <= u'7':
            k = 1
            while k < 3 and pos + 1 + k < size and u'0' <= PyUnicode_READ(kind, data, pos + 1 + k) <= u'7':
                k += 1
            if k < 3 and pos + 1 + k == size and not final:
                return -1
            self.put(_json_char(int(PyUnicode_Substring(text, pos + 1, pos + 1 + k), 8)))
            return pos + 1 + k
        n = 2 if c == u'x' else 4 if c == u'u' else 8 if c == u'U' else 0
        if n:
            k = 0
            while k < n and pos + 2 + k < size and _hex(PyUnicode_READ(kind, data, pos + 2 + k)):
                k += 1
            if k == n:
                cp = int(PyUnicode_Substring(text, pos + 2, pos + 2 + n), 16)
                if cp <= 0x10FFFF:
                    self.put(_json_char(cp))
                    return pos + 2 + n
            elif pos + 2 + k == size and not final:
                return -1
        elif c == u'N' and pos + 2 < size and PyUnicode_READ(kind, data, pos + 2) == u'{':
            close = PyUnicode_FindChar(text, u'}', pos + 3, min(size, pos + 3 + 128), 1)
            if close < 0 and size < pos + 3 + 128 and not final:
                return -1
            if close >= 0:
                try:
                    self.put(json_string_body(unicodedata.lookup(PyUnicode_Substring(text, pos + 3, close)), 0, 1))
                    return close + 1
                except KeyError:
                    pass
        elif c == u'N' and pos + 2 == size and not final:
            return -1
        # an unknown or invalid escape keeps its backslash (Python's rule for unknown ones)
        self.put(u'\\\\')
        return pos + 1

    cdef Py_ssize_t scan_string(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final, bint *hold) except -1:
        """String content from ``pos``; ``hold``: the text from the result on must wait for more."""
        cdef Py_UCS4 quote = self._quote
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t q = -2, b, stop, r
        while pos < size:
            if q != -1 and q < pos:
                q = PyUnicode_FindChar(text, quote, pos, size, 1)
            b = PyUnicode_FindChar(text, u'\\', pos, q if q >= 0 else size, 1)
            stop = b if b >= 0 else (q if q >= 0 else size)
            if stop > pos:
                self.put(json_string_body(text, pos, stop))
                pos = stop
            if pos == size:
                break
            if pos == b:
                r = self.escape(text, pos, size, final)
                if r < 0:
                    hold[0] = True  # held from the backslash
                    return pos
                pos = r
                continue
            if self._triple:
                if pos + 3 <= size and PyUnicode_READ(kind, data, pos + 1) == quote and PyUnicode_READ(
                        kind, data, pos + 2) == quote:
                    self.put(u'"')
                    self.value_done()
                    return pos + 3
                if not final and (pos + 1 == size or (pos + 2 == size and PyUnicode_READ(kind, data, pos + 1) == quote)):
                    hold[0] = True  # maybe the closing quotes
                    return pos
                self.put(json_string_body(text, pos, pos + 1))
                pos += 1
                continue
            self.put(u'"')
            self.value_done()
            return pos + 1
        return pos

    # ---- the call list ------------------------------------------------------

    cdef Py_ssize_t tail(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final) except -2:
        """After the list's ``]``: whitespace and the close tag end the block with it; else the block
        ends at ``pos`` and the text is the router's. -1: too little text to tell."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t p = pos
        close_tag = self._close_tag
        if close_tag is not None:
            while p < size and p - pos <= _HEAD_WS and _ws(PyUnicode_READ(kind, data, p)):
                p += 1  # bounded: what the router holds to decide
            if text.startswith(close_tag, p):
                self._payload_closed = True  # the feed consumes the whitespace and the tag
                return pos
            if not final and p - pos <= _HEAD_WS and (p == size or self.close_prefix_at(text, p)):
                return -1
        self._close_tag = None
        self._payload_closed = True
        return pos

    cdef Py_ssize_t scan(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_UCS4 ch, last
        cdef Py_ssize_t e, r
        cdef int st
        cdef bint hold
        while pos < size and not self._payload_closed:
            st = self._state
            if st == ST_STRING:
                hold = False
                pos = self.scan_string(text, pos, size, final, &hold)
                if hold:
                    return pos
                continue
            if st == ST_NAME or st == ST_KW or st == ST_TOKEN:
                e = pos
                if st == ST_NAME:
                    while e < size and _name_char(PyUnicode_READ(kind, data, e)):
                        e += 1
                elif st == ST_KW or not self._tok_number:
                    while e < size and (_ident_char(PyUnicode_READ(kind, data, e)) or (
                            st == ST_TOKEN and PyUnicode_READ(kind, data, e) == u'.')):
                        e += 1
                else:
                    last = PyUnicode_READ(self._tok.kind, self._tok.data, self._tok.len - 1) if self._tok.len else 0
                    while e < size:
                        ch = PyUnicode_READ(kind, data, e)
                        if not (_ident_char(ch) or ch == u'.' or ((ch == u'+' or ch == u'-') and (
                                e == pos and self._tok.len == 0 or last == u'e' or last == u'E'))):
                            break
                        last = ch
                        e += 1
                held_append(&self._tok, text, pos, e)
                pos = e
                if pos == size:
                    break
                self.token_end()
                continue
            if st == ST_TAIL:
                r = self.tail(text, pos, size, final)
                return pos if r < 0 else r
            if st == ST_SKIP:
                return self.skip(text, pos, size, final)
            while pos < size and _ws(PyUnicode_READ(kind, data, pos)):
                pos += 1
            if pos == size:
                break
            ch = PyUnicode_READ(kind, data, pos)
            if st == ST_VALUE:
                r = self.value_start(text, pos, size, final)
                if r < 0:
                    break
                pos = r
            elif st == ST_CALL:
                if ch == u']' and self._brackets:
                    self.flush(deltas)
                    self._state = ST_TAIL
                    pos += 1
                elif _name_char(ch):
                    self._state = ST_NAME
                else:
                    pos = self.malformed(pos)
            elif st == ST_PAREN:
                if ch != u'(':
                    pos = self.malformed(pos)
                    continue
                self.begin_call(deltas, self._name)
                pos += 1
            elif st == ST_ARG:
                if ch == u')':
                    self.put(u'}' if self._has_kwargs else u'{}')
                    self._state = ST_CALL_NEXT
                    pos += 1
                elif _ident_start(ch):
                    self._state = ST_KW
                else:
                    self._positional = True  # skipped: only keywords are arguments
                    self._item_start = False
                    self._state = ST_VALUE
            elif st == ST_EQ:
                if ch == u'=':
                    self._sep = (u', ' if self._has_kwargs else u'{') + json_quoted(self._name) + u': '
                    self._sep_kw = True
                    self._item_start = False
                    self._state = ST_VALUE
                    pos += 1
                elif ch == u',' or ch == u')':
                    self._state = ST_ARG_NEXT  # a positional identifier: skipped
                else:
                    pos = self.malformed(pos)
            elif st == ST_ARG_NEXT:
                self._positional = False
                if ch == u',':
                    self._state = ST_ARG
                    pos += 1
                elif ch == u')':
                    self.put(u'}' if self._has_kwargs else u'{}')
                    self._state = ST_CALL_NEXT
                    pos += 1
                else:
                    pos = self.malformed(pos)
            elif st == ST_ITEM_NEXT:
                if ch == u',':
                    self._item_start = True
                    self._state = ST_VALUE
                    pos += 1
                elif (ch == u']' or ch == u')' or ch == u'}') and self.close_container(ch):
                    pos += 1
                else:
                    pos = self.malformed(pos)
            elif st == ST_COLON:
                if ch != u':':
                    pos = self.malformed(pos)
                    continue
                self._sep = u': '
                self._state = ST_VALUE
                pos += 1
            elif st == ST_CALL_NEXT:
                if ch == u',':
                    self._state = ST_CALL
                    pos += 1
                elif not self._brackets:
                    # calls one per line: the next call's name, else the close tag (or the block ends there)
                    self._state = ST_NAME if _name_char(ch) else ST_TAIL
                elif ch == u']':
                    self.flush(deltas)
                    self._state = ST_TAIL
                    pos += 1
                else:
                    pos = self.malformed(pos)
        return pos

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t pos = 0
        if self._state == ST_HEAD:
            # keep_undeclared_calls: any name makes the list calls (vLLM's pythonic parsers)
            allowed = None if self.keep_undeclared_calls else self._allowed_tool_names
            verdict, pos, name = pythonic_head(text, size, final, () if allowed is not None and not allowed
                                               else allowed, self._brackets)
            if verdict == HEAD_UNDECIDED:
                return 0
            if verdict == HEAD_REJECTED:
                # not a call list: its text (the open tag included) is content, the rest plain text
                self._handback = <str>self._open_tag + PyUnicode_Substring(text, 0, pos)
                self._close_tag = None
                self._payload_closed = True
                return pos
            self.begin_call(deltas, <str>name)
        pos = self.scan(text, pos, size, deltas, final)
        if final and not self._payload_closed:
            if self._state == ST_TOKEN and self._tok.len:
                self.token_end()  # the output ends the number or word
            self._tok.len = 0
            if self._state == ST_SKIP:
                self.end_list(pos)  # (scan decides it at the end of the output; kept for safety)
            elif self._state != ST_TAIL:
                self.end_list(size)  # truncated: the call keeps what it has (a pending key is not emitted)
                pos = size
            else:
                self.tail(text, pos, size, True)
        self.flush(deltas)
        if self._payload_closed:
            # the list ended: keep nothing of it (a runaway nesting or token)
            if self._stack:
                self._stack = []
            held_free(&self._tok)
        return pos
