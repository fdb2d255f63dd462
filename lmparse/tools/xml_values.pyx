"""Held argument values of the XML-like family: their JSON text.

A value held whole (quoted, or typed by the request's schema) is kept in a
``HeldText`` buffer (``held_text``) until its close tag and converted once. The result must be exactly
``json.dumps(_coerce_arg(raw, types), ensure_ascii=False)``; C checks prove the
common cases (canonical JSON numbers, literals, arrays, objects) without
decoding, and anything else takes the Python path.
"""
import json
import math

from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_FromString
from cpython.unicode cimport PyUnicode_Substring
from libc.math cimport isfinite
from libc.string cimport memcmp

from lmparse.tools.json_chars cimport lmp_next_special1, lmp_next_special2, lmp_next_special4

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil

__all__ = ['schema_types', 'coerce_value']

# ---- the Python definition (once per held value; plain Python is fine) -------


def _reject_constant(name):
    raise ValueError(f'{name} is not JSON')


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f'{text} overflows a double')
    return value


# NaN / Infinity / overflowing numbers would serialize to invalid JSON: reject them.
_loads = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float).decode


cdef bint is_json(str text) except -1:
    """Whether ``text`` is one JSON value with finite numbers (what ``_loads`` accepts)."""
    try:
        _loads(text)
    except (ValueError, RecursionError):
        return False
    return True


cdef tuple coerce_one(str raw, object schema_type, bint quoted_numbers=False):
    """``(value, converted)``: ``raw`` as ``schema_type``; ``(raw, False)`` when it is not one.
    ``quoted_numbers``: a JSON string holding a number is that number for integer / number."""
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
    if quoted_numbers and type(value) is str and (schema_type == 'integer' or schema_type == 'number'):
        # A number the model quoted ('"42"' for a number-typed parameter) is that number, as
        # SGLang's glm4_moe / glm47_moe detectors read it (parse_arguments / _convert_to_number).
        # Only a string that is exactly one JSON number token counts: '" 42"', '"4_2"', '"NaN"' stay strings.
        value = _number_in_string(value)
    if schema_type == 'integer':
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif schema_type == 'number':
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif schema_type == 'array':
        ok = isinstance(value, list)
    else:
        ok = isinstance(value, dict)
    return (value, True) if ok else (raw, False)


cdef object _number_in_string(str text):
    """The number ``text`` spells as one JSON number token, else ``text`` itself."""
    cdef Py_ssize_t n = len(text)
    cdef bint is_int
    if n == 0 or _number_end(PyUnicode_KIND(text), PyUnicode_DATA(text), 0, n, &is_int) != n:
        return text
    try:
        return _loads(text)
    except ValueError:  # a float token that overflows a double
        return text


cdef bint _null_word(str stripped):
    lowered = stripped.lower()
    return lowered == 'null' or lowered == 'none'


cdef object _coerce_arg(str raw, object types, bint quoted_numbers=False):
    """Convert a complete held value; ``types`` is ``schema_types_c`` of its schema or None.

    The one rule for every schema: the literal ``null`` / ``None`` (either case,
    whitespace around) is JSON null when the schema admits null; otherwise the
    types other than string and null are tried in schema order (the first that
    the text is wins); otherwise a string when the schema admits one (a quoted
    JSON string is decoded); otherwise the text as written.
    """
    if types is None:
        return raw  # no schema for this parameter: the text as written
    if not types:
        return coerce_one(raw, None)[0]
    if 'null' in types and _null_word(raw.strip()):
        return None
    for schema_type in types:
        if schema_type == 'string' or schema_type == 'null':
            continue
        value, ok = coerce_one(raw, schema_type, quoted_numbers)
        if ok:
            return value
    if 'string' in types:
        return coerce_one(raw, 'string')[0]
    return raw


cdef int value_kind(tuple types) noexcept:
    """How the driver takes a value of these types: 0 streamed as a string (only
    "string"), 1 streamed once it cannot be null ("string" and "null"), 2 held whole."""
    cdef bint string = False, null = False
    for t in types:
        if t == 'string':
            string = True
        elif t == 'null':
            null = True
        else:
            return 2
    if not string:
        return 2
    return 1 if null else 0


cdef tuple schema_types_c(object schema, int depth):
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
                        found.extend(schema_types_c(branch, depth + 1))
    ordered = []
    for t in found:
        if t != 'null' and t not in ordered:
            ordered.append(t)
    if 'null' in found:
        ordered.append('null')
    return tuple(ordered)


def schema_types(schema, int depth=0):
    """Candidate JSON types of a parameter schema (see ``schema_types_c``)."""
    return schema_types_c(schema, depth)


def coerce_value(str raw not None, schema_type=None, bint quoted_numbers=False):
    """``raw`` converted to ``schema_type``; the original text when it is not one.
    ``quoted_numbers``: ``'"42"'`` is 42 for integer / number."""
    return coerce_one(raw, schema_type, quoted_numbers)[0]



# ---- C fast paths (exactly json.dumps(_coerce_arg(...))) ---------------------
# Each returns the JSON text the driver would emit, or None when the answer is
# not cheaply provable: the caller then takes the Python path above.

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


cdef object _fast_one(str text, Py_ssize_t a, Py_ssize_t b, object schema_type, bint quoted_numbers=False):
    """``coerce_one(raw, schema_type)`` for the value whose stripped text is ``text[a:b]``:
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
            return span(text, a, b)
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
        if first == u'"' and quoted_numbers:
            return _FALLBACK  # a quoted number may be that number (coerce_one)
        if not (first == u'-' or u'0' <= first <= u'9'):
            return None
        end = _number_end(kind, data, a, b, &is_int)
        if end != b:
            return _FALLBACK if end < 0 else None
        if is_int:
            if _canon_int(kind, data, a, b):
                return span(text, a, b)
            return _FALLBACK
        if schema_type == 'integer':
            return None  # a float (or an overflow, rejected by _loads)
        value = PyFloat_FromString(span(text, a, b))  # what _loads does with a float token
        return repr(value) if isfinite(PyFloat_AS_DOUBLE(value)) else None
    if schema_type == 'array' or schema_type == 'object':
        if schema_type == 'array':
            if first != u'[':
                return None  # loads gives another type or fails
        elif first != u'{':
            return None
        if _canon_value(text, kind, data, a, b) == b:
            return span(text, a, b)
        return _FALLBACK
    return None  # not a JSON type name


cdef object _fast_arg_json(str text, Py_ssize_t a, Py_ssize_t b, object types, bint quoted_numbers):
    """``json.dumps(_coerce_arg(raw, types), ensure_ascii=False)`` for ``raw = text[a:b]``:
    that JSON text, ``_QUOTED`` for ``json.dumps(raw)``, or None when not cheaply exact.
    """
    cdef int kind
    cdef void *data
    cdef int r
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
    # _coerce_arg's rule: null, then the other non-string types, then string.
    if 'null' in <tuple>types:
        r = _ascii_word(kind, data, a, b, 'null')
        if r == 0:
            r = _ascii_word(kind, data, a, b, 'none')
        if r < 0:
            return None
        if r == 1:
            return 'null'
    for schema_type in <tuple>types:
        if schema_type == 'string' or schema_type == 'null':
            continue
        out = _fast_one(text, a, b, schema_type, quoted_numbers)
        if out is _FALLBACK:
            return None
        if out is not None:
            return out
    if 'string' in <tuple>types:
        out = _fast_one(text, a, b, 'string')
        return None if out is _FALLBACK else out
    return _QUOTED



cdef str held_value_json(str text, Py_ssize_t a, Py_ssize_t b, object types, bint quoted_numbers=False):
    """``json.dumps(_coerce_arg(text[a:b], types), ensure_ascii=False)``, or None when
    that is the raw text as a JSON string (the caller escapes it without a copy).
    """
    out = _fast_arg_json(text, a, b, types, quoted_numbers)
    if out is None:
        return json.dumps(_coerce_arg(span(text, a, b), types, quoted_numbers), ensure_ascii=False)
    if out is _QUOTED:
        return None
    return <str>out
