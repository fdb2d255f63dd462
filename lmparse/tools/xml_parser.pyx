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

from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_FromString
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring
from libc.math cimport isfinite
from libc.string cimport memcmp, memcpy

from lmparse.tools.base cimport ToolParser, hook_overrides, longest_first
from lmparse.tools.json_chars cimport lmp_next_special1, lmp_next_special2, lmp_next_special4
from lmparse.tools.json_escape cimport json_string_body

from lmparse.request import ChatCompletionRequest as _OwnRequest
from lmparse.request import as_request, update_request

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2
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

# A held buffer larger than this (bytes) is freed after its value, not kept for
# reuse: a parser keeps no copy of text it has already converted.
cdef Py_ssize_t _HELD_KEEP = 1 << 10

cdef enum:
    XH_FUNCTION = 1
    XH_ARG_START = 2
    XH_ARG_NAME = 4
    XH_CALL_END = 8

_set_spaces_between_special_tokens = _OwnRequest.spaces_between_special_tokens.__set__

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


cdef tuple _schema_types_c(object schema, int depth):
    """Candidate JSON types of a parameter schema: non-null types in order, then ``null``.

    ``type`` (a string or a list) wins; otherwise the branches of ``anyOf`` /
    ``oneOf`` are collected. ``()`` means the schema names no type.
    """
    cdef bint plain = type(schema) is dict  # C lookups; a dict subclass keeps its own get()
    declared = (<dict>schema).get('type') if plain else schema.get('type')
    cdef list found = []
    cdef list ordered
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list):
        found = [t for t in declared if isinstance(t, str)]
    elif depth < 8:
        for key in ('anyOf', 'oneOf'):
            branches = (<dict>schema).get(key) if plain else schema.get(key)
            if isinstance(branches, list):
                for branch in branches:
                    if isinstance(branch, dict):
                        found.extend(_schema_types_c(branch, depth + 1))
    ordered = []
    for t in found:
        if t != 'null' and t not in ordered:
            ordered.append(t)
    if 'null' in found:
        ordered.append('null')
    return tuple(ordered)


def _schema_types(schema, int depth=0):
    """Candidate JSON types of a parameter schema (see ``_schema_types_c``)."""
    return _schema_types_c(schema, depth)


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


cdef inline str _span(str text, Py_ssize_t a, Py_ssize_t b):
    if a == 0 and b == PyUnicode_GET_LENGTH(text):
        return text
    return PyUnicode_Substring(text, a, b)


# ---- C fast paths for held values (exactly json.dumps(_coerce_arg(...))) -------
# Each returns the JSON text ``finish_arg`` would emit, or None when the answer
# is not cheaply provable: the caller then takes the Python path above.

cdef object _FALLBACK = object()
cdef object _QUOTED = object()  # json.dumps of the raw value as a string

# Nesting bound of the canonical check: far below any recursion limit that
# could make json.loads / json.dumps fail on the same text.
cdef int _CANON_MAX_DEPTH = 64
# Object keys compared pairwise up to this count, then through a set.
cdef enum:
    _KEY_SPANS = 16


cdef inline bint _is_lower_hex(Py_UCS4 ch) noexcept:
    return (u'0' <= ch <= u'9') or (u'a' <= ch <= u'f')


ctypedef fused ucs_t:
    Py_UCS1
    Py_UCS2
    Py_UCS4


cdef inline Py_ssize_t _canon_string_t(const ucs_t *data, Py_ssize_t pos, Py_ssize_t n) noexcept:
    """End of the JSON string at ``pos`` when it is exactly ``json.dumps`` of its value, else -1.

    Canonical (``ensure_ascii=False``): only ``"``, the backslash and controls are
    escaped, with ``\\b \\f \\n \\r \\t`` or lower-case ``\\u00xx``.
    """
    cdef Py_ssize_t i = pos + 1
    cdef Py_UCS4 ch, e
    while i < n:
        # skip plain characters in bulk
        if ucs_t is Py_UCS1:
            i = lmp_next_special1(data, i, n)
        elif ucs_t is Py_UCS2:
            i = lmp_next_special2(data, i, n)
        else:
            i = lmp_next_special4(data, i, n)
        if i >= n:
            return -1
        ch = <Py_UCS4>data[i]
        if ch == u'"':
            return i + 1
        if ch < 0x20:
            return -1  # a raw control character: not valid JSON
        if ch == u'\\':
            if i + 1 >= n:
                return -1
            e = <Py_UCS4>data[i + 1]
            if e == u'"' or e == u'\\' or e == u'b' or e == u'f' or e == u'n' or e == u'r' or e == u't':
                i += 2
                continue
            if e != u'u' or i + 5 >= n:
                return -1
            # \\u00XX for a control character without a short escape
            if <Py_UCS4>data[i + 2] != u'0' or <Py_UCS4>data[i + 3] != u'0':
                return -1
            ch = <Py_UCS4>data[i + 4]
            e = <Py_UCS4>data[i + 5]
            if not (ch == u'0' or ch == u'1') or not _is_lower_hex(e):
                return -1
            if ch == u'0' and (e == u'8' or e == u'9' or e == u'a' or e == u'c' or e == u'd'):
                return -1
            i += 6
            continue
        i += 1
    return -1


cdef Py_ssize_t _number_end_t(const ucs_t *data, Py_ssize_t pos, Py_ssize_t n, bint *is_int) noexcept:
    """End of the JSON number token at ``pos`` (JSON grammar), else -1."""
    cdef Py_ssize_t i = pos
    cdef Py_UCS4 ch
    is_int[0] = True
    if i < n and <Py_UCS4>data[i] == u'-':
        i += 1
    if i >= n:
        return -1
    ch = <Py_UCS4>data[i]
    if ch == u'0':
        i += 1
    elif u'1' <= ch <= u'9':
        i += 1
        while i < n and u'0' <= <Py_UCS4>data[i] <= u'9':
            i += 1
    else:
        return -1
    if i < n and <Py_UCS4>data[i] == u'.':
        i += 1
        if i >= n or not (u'0' <= <Py_UCS4>data[i] <= u'9'):
            return -1
        while i < n and u'0' <= <Py_UCS4>data[i] <= u'9':
            i += 1
        is_int[0] = False
    if i < n:
        ch = <Py_UCS4>data[i]
        if ch == u'e' or ch == u'E':
            i += 1
            if i < n:
                ch = <Py_UCS4>data[i]
                if ch == u'+' or ch == u'-':
                    i += 1
            if i >= n or not (u'0' <= <Py_UCS4>data[i] <= u'9'):
                return -1
            while i < n and u'0' <= <Py_UCS4>data[i] <= u'9':
                i += 1
            is_int[0] = False
    return i


cdef inline bint _canon_int_t(const ucs_t *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """A JSON integer token that ``int`` re-renders unchanged (no ``-0``, few digits)."""
    cdef Py_ssize_t digits = b - a
    if <Py_UCS4>data[a] == u'-':
        digits -= 1
        if digits == 1 and <Py_UCS4>data[a + 1] == u'0':
            return False
    return digits <= 18


cdef inline bint _literal_at_t(const ucs_t *data, Py_ssize_t pos, Py_ssize_t n, str word) noexcept:
    cdef Py_ssize_t m = PyUnicode_GET_LENGTH(word)
    cdef int wkind = PyUnicode_KIND(word)
    cdef void *wdata = PyUnicode_DATA(word)
    cdef Py_ssize_t i
    if n - pos < m:
        return False
    for i in range(m):
        if <Py_UCS4>data[pos + i] != PyUnicode_READ(wkind, wdata, i):
            return False
    return True


cdef inline bint _same_span_t(const ucs_t *data, Py_ssize_t a1, Py_ssize_t b1, Py_ssize_t a2, Py_ssize_t b2) noexcept:
    if b1 - a1 != b2 - a2:
        return False
    return memcmp(data + a1, data + a2, <size_t>(b1 - a1) * sizeof(ucs_t)) == 0


cdef Py_ssize_t _canon_scalar_t(str s, const ucs_t *data, Py_ssize_t pos, Py_ssize_t n) except -2:
    """``_canon_value_t`` for a value that is not an array or object."""
    cdef Py_UCS4 ch = <Py_UCS4>data[pos]
    cdef Py_ssize_t end
    cdef bint is_int
    if ch == u'"':
        return _canon_string_t(data, pos, n)
    if ch == u't':
        return pos + 4 if _literal_at_t(data, pos, n, 'true') else -1
    if ch == u'f':
        return pos + 5 if _literal_at_t(data, pos, n, 'false') else -1
    if ch == u'n':
        return pos + 4 if _literal_at_t(data, pos, n, 'null') else -1
    end = _number_end_t(data, pos, n, &is_int)
    if end < 0:
        return -1
    if is_int:
        return end if _canon_int_t(data, pos, end) else -1
    # A float: canonical when repr() gives the token back (that also rules out overflow).
    token = PyUnicode_Substring(s, pos, end)
    return end if repr(PyFloat_FromString(token)) == token else -1


cdef Py_ssize_t _canon_value_t(str s, const ucs_t *data, Py_ssize_t pos, Py_ssize_t n, int depth) except -2:
    """End of the JSON value at ``pos`` when ``json.dumps(json.loads(v)) == v``
    (with the module's ``_loads``), else -1 (not canonical, or not provably so).
    """
    cdef Py_UCS4 ch, item, ch2, close
    cdef Py_ssize_t end, key_end, i, nkeys
    cdef Py_ssize_t starts[_KEY_SPANS]
    cdef Py_ssize_t ends[_KEY_SPANS]
    cdef set seen
    if pos >= n:
        return -1
    ch = <Py_UCS4>data[pos]
    if ch != u'[' and ch != u'{':
        return _canon_scalar_t(s, data, pos, n)
    if depth >= _CANON_MAX_DEPTH:
        return -1
    if ch == u'[':
        close = u']'
    else:
        close = u'}'
    pos += 1
    if pos < n and <Py_UCS4>data[pos] == close:
        return pos + 1
    nkeys = 0
    seen = None
    while True:
        if ch == u'{':
            if pos >= n or <Py_UCS4>data[pos] != u'"':
                return -1
            key_end = _canon_string_t(data, pos, n)
            if key_end < 0:
                return -1
            # Duplicate keys collapse in json.loads: not canonical.
            # (Canonical escapes are unique, so equal text means equal keys.)
            if seen is not None:
                key = PyUnicode_Substring(s, pos, key_end)
                if key in seen:
                    return -1
                seen.add(key)
            else:
                for i in range(nkeys):
                    if _same_span_t(data, starts[i], ends[i], pos, key_end):
                        return -1
                if nkeys < _KEY_SPANS:
                    starts[nkeys] = pos
                    ends[nkeys] = key_end
                    nkeys += 1
                else:
                    seen = set()
                    for i in range(nkeys):
                        seen.add(PyUnicode_Substring(s, starts[i], ends[i]))
                    seen.add(PyUnicode_Substring(s, pos, key_end))
            if (key_end + 1 >= n or <Py_UCS4>data[key_end] != u':'
                    or <Py_UCS4>data[key_end + 1] != u' '):
                return -1
            pos = key_end + 2
        if pos >= n:
            return -1
        # Items: strings and other scalars without the nesting call.
        item = <Py_UCS4>data[pos]
        if item == u'"':
            end = _canon_string_t(data, pos, n)
        elif item == u'[' or item == u'{':
            end = _canon_value_t(s, data, pos, n, depth + 1)
        else:
            end = _canon_scalar_t(s, data, pos, n)
        if end < 0 or end >= n:
            return -1
        ch2 = <Py_UCS4>data[end]
        if ch2 == close:
            return end + 1
        if ch2 != u',' or end + 1 >= n or <Py_UCS4>data[end + 1] != u' ':
            return -1
        pos = end + 2


cdef Py_ssize_t _canon_string(int kind, void *data, Py_ssize_t pos, Py_ssize_t n) noexcept:
    if kind == 1:
        return _canon_string_t(<const Py_UCS1 *>data, pos, n)
    if kind == 2:
        return _canon_string_t(<const Py_UCS2 *>data, pos, n)
    return _canon_string_t(<const Py_UCS4 *>data, pos, n)


cdef Py_ssize_t _number_end(int kind, void *data, Py_ssize_t pos, Py_ssize_t n, bint *is_int) noexcept:
    if kind == 1:
        return _number_end_t(<const Py_UCS1 *>data, pos, n, is_int)
    if kind == 2:
        return _number_end_t(<const Py_UCS2 *>data, pos, n, is_int)
    return _number_end_t(<const Py_UCS4 *>data, pos, n, is_int)


cdef bint _canon_int(int kind, void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    if kind == 1:
        return _canon_int_t(<const Py_UCS1 *>data, a, b)
    if kind == 2:
        return _canon_int_t(<const Py_UCS2 *>data, a, b)
    return _canon_int_t(<const Py_UCS4 *>data, a, b)


cdef Py_ssize_t _canon_value(str s, int kind, void *data, Py_ssize_t pos, Py_ssize_t n) except -2:
    """End of the JSON value at ``pos`` when ``json.dumps(json.loads(v)) == v``, else -1."""
    if kind == 1:
        return _canon_value_t(s, <const Py_UCS1 *>data, pos, n, 0)
    if kind == 2:
        return _canon_value_t(s, <const Py_UCS2 *>data, pos, n, 0)
    return _canon_value_t(s, <const Py_UCS4 *>data, pos, n, 0)


cdef int _ascii_word(int kind, void *data, Py_ssize_t a, Py_ssize_t b, str word) noexcept:
    """``text[a:b].lower() == word`` for ASCII text: 1 / 0; -1 when the text is not ASCII."""
    cdef Py_ssize_t i
    cdef unsigned int ch  # not Py_UCS4: Cython adds to a Py_UCS4 as a str
    cdef bint equal = b - a == PyUnicode_GET_LENGTH(word)
    for i in range(a, b):
        ch = PyUnicode_READ(kind, data, i)
        if ch >= 0x80:
            return -1
        if equal:
            if u'A' <= ch <= u'Z':
                ch += 32
            if ch != PyUnicode_READ(PyUnicode_KIND(word), PyUnicode_DATA(word), i - a):
                equal = False
    return 1 if equal else 0


cdef object _fast_one(str text, Py_ssize_t a, Py_ssize_t b, object schema_type):
    """``_coerce_one(raw, schema_type)`` for the value whose stripped text is ``text[a:b]``:
    its value's JSON text when converted, ``_QUOTED`` when converted to the raw
    string itself, None when not converted (``raw`` stays), ``_FALLBACK`` when
    that is not cheaply provable.
    """
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t end
    cdef Py_UCS4 first = PyUnicode_READ(kind, data, a) if b > a else 0
    cdef bint is_int
    cdef int r
    if schema_type is not None and type(schema_type) is not str:
        return _FALLBACK
    if schema_type is None or schema_type == 'string':
        if first != u'"':
            return _QUOTED
        if _canon_string(kind, data, a, b) == b:
            return _span(text, a, b)
        return _FALLBACK
    if schema_type == 'boolean':
        r = _ascii_word(kind, data, a, b, 'true')
        if r == 1:
            return 'true'
        if r < 0:
            return _FALLBACK
        r = _ascii_word(kind, data, a, b, 'false')
        if r == 1:
            return 'false'
        return _FALLBACK if r < 0 else None
    if schema_type == 'null':
        r = _ascii_word(kind, data, a, b, 'null')
        if r == 1:
            return 'null'
        return _FALLBACK if r < 0 else None
    if schema_type == 'integer' or schema_type == 'number':
        # Only a whole JSON number token loads as an int / float.
        if not (first == u'-' or u'0' <= first <= u'9'):
            return None
        end = _number_end(kind, data, a, b, &is_int)
        if end != b:
            return _FALLBACK if end < 0 else None
        if is_int:
            if _canon_int(kind, data, a, b):
                return _span(text, a, b)
            return _FALLBACK
        if schema_type == 'integer':
            return None  # a float (or an overflow, rejected by _loads)
        value = PyFloat_FromString(_span(text, a, b))  # what _loads does with a float token
        return repr(value) if isfinite(PyFloat_AS_DOUBLE(value)) else None
    if schema_type == 'array' or schema_type == 'object':
        if schema_type == 'array':
            if first != u'[':
                return None  # loads gives another type or fails
        elif first != u'{':
            return None
        if _canon_value(text, kind, data, a, b) == b:
            return _span(text, a, b)
        return _FALLBACK
    return None  # not a JSON type name


cdef object _fast_arg_json(str text, Py_ssize_t a, Py_ssize_t b, object types):
    """``json.dumps(_coerce_arg(raw, types), ensure_ascii=False)`` for ``raw = text[a:b]``:
    that JSON text, ``_QUOTED`` for ``json.dumps(raw)``, or None when not cheaply exact.
    """
    cdef int kind
    cdef void *data
    if types is None:
        return _QUOTED
    if type(types) is not tuple:
        return None
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
        a += 1
    while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)):
        b -= 1
    if not types:
        out = _fast_one(text, a, b, None)
        return None if out is _FALLBACK else out
    for schema_type in <tuple>types:
        out = _fast_one(text, a, b, schema_type)
        if out is _FALLBACK:
            return None
        if out is not None:
            return out
    return _QUOTED


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
    return _span(text, a, b)


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
        self._held_kind = 1
        self._out = None
        self._frags = []
        self._reset_call_state()

    def __dealloc__(self):
        PyMem_Free(self._held)

    cdef _reset_call_state(self):
        self._phase = PH_FUNCTION
        self._func_name = None
        self._arg_name = None
        self._call_props = None
        self._arg_types = None
        self._mode = M_UNDECIDED
        self._suffix = SUF_NONE
        self._held_len = 0
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
                self.hold(text, 0, size)
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
        self._arg_types = _schema_types_c(schema, 0) if isinstance(schema, dict) else None
        self._mode = M_UNDECIDED
        self._suffix = SUF_NONE
        self._held_len = 0
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

    # ---- the held value -----------------------------------------------------------

    cdef int hold(self, str text, Py_ssize_t a, Py_ssize_t b) except -1:
        """Append ``text[a:b]`` to the held value."""
        cdef Py_ssize_t n = b - a, need = self._held_len + n, cap, i
        cdef int kind = PyUnicode_KIND(text), hkind = self._held_kind
        cdef void *data = PyUnicode_DATA(text)
        cdef char *grown
        if n <= 0:
            return 0
        if self._held_len == 0 and kind < hkind:  # a new value: narrow the empty buffer again
            self._held_cap = self._held_cap * hkind // kind
            self._held_kind = hkind = kind
        if kind > hkind or need > self._held_cap:
            cap = self._held_cap if self._held_cap >= 64 else 64
            while cap < need:
                cap *= 2
            if kind > hkind:  # a wider character: convert what is held
                grown = <char *>PyMem_Malloc(cap * kind)
                if grown is NULL:
                    raise MemoryError()
                for i in range(self._held_len):
                    PyUnicode_WRITE(kind, grown, i, PyUnicode_READ(hkind, self._held, i))
                PyMem_Free(self._held)
                self._held_kind = hkind = kind
            else:
                grown = <char *>PyMem_Realloc(self._held, cap * hkind)
                if grown is NULL:
                    raise MemoryError()
            self._held = grown
            self._held_cap = cap
        if kind == hkind:
            if n == 1:
                PyUnicode_WRITE(kind, self._held, self._held_len, PyUnicode_READ(kind, data, a))
            else:
                memcpy(self._held + self._held_len * kind, <char *>data + a * kind, n * kind)
        else:
            for i in range(n):
                PyUnicode_WRITE(hkind, self._held, self._held_len + i, PyUnicode_READ(kind, data, a + i))
        self._held_len = need
        return 0

    cdef str take_held(self, Py_ssize_t a, Py_ssize_t b):
        """``held[a:b]`` as a str; the buffer is emptied."""
        cdef str out = PyUnicode_FromKindAndData(self._held_kind, self._held + a * self._held_kind, b - a)
        self._held_len = 0
        if self._held_cap * self._held_kind > _HELD_KEEP:
            PyMem_Free(self._held)
            self._held = NULL
            self._held_cap = 0
            self._held_kind = 1
        return out

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
            if self._mode == M_UNDECIDED and self._held_len == 0:
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
            return self.hold(text, a, b)
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        i = a
        while i < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        if i == b:
            return self.hold(text, a, b)  # still only whitespace: the value's kind is unknown
        types = self._arg_types
        if PyUnicode_READ(kind, data, i) == u'"' or (types is not None and (not types or types[0] != 'string')):
            # Quoted or typed: held whole until the close tag.
            self._mode = M_BUFFERED
            return self.hold(text, a, b)
        self._mode = M_STREAMING
        self.put_key(True)
        if self._held_len:  # leading whitespace from earlier feeds
            self.hold(text, a, b)
            text = self.take_held(0, self._held_len)
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
        types = self._arg_types
        out = _fast_arg_json(text, a, b, types)
        if out is None:
            out = json.dumps(_coerce_arg(_span(text, a, b), types), ensure_ascii=False)
        if out is _QUOTED:
            self.put_key(True)
            if b > a:
                self.put(json_string_body(text, a, b))
            self.put('"')
        else:
            self.put_key(False)
            self.put(<str>out)
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
            b = self._held_len
            if self._strip_newlines:
                a = _after_newline(self._held_kind, self._held, a, b)
                b = _before_newline(self._held_kind, self._held, a, b)
            raw = self.take_held(a, b)
            self.put_converted(raw, 0, PyUnicode_GET_LENGTH(raw))
        return self.end_arg()

    cdef int end_arg(self) except -1:
        self._arg_name = None
        self._arg_types = None
        self._mode = M_UNDECIDED
        self._suffix = SUF_NONE
        self._held_len = 0
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
