"""Bare JSON calls: an envelope written without the block's open tag (Llama 3.x ``llama3_json``).

Llama 3.1-3.3 often answer a tool request with a bare
``{"name": "f", "parameters": {...}}`` instead of ``<|python_tag|>{...}``. The
router starts a bare block only at the start of the plain channel (after
whitespace) when it reads the opener ``{``; the JSON family then confirms the
envelope with ``json_bare_confirm`` before anything is emitted:

    WS { WS "NAME_FIELD" WS : WS "OFFERED NAME" WS , WS "ARGUMENT KEY" WS :

(``ARGUMENT KEY``: the dialect's ``argument_field`` or one of its
``argument_field_aliases``). The name key must come first. Every
whitespace run is bounded (``_BARE_WS``) and the name must stay a prefix of an
offered name, so the undecided text (held by the router and scanned again
from its start on the next chunk) is bounded by the longest offered name.

A rejection point ``q`` is a function of the text alone (the first character
that cannot continue the envelope, or the end of the output): the text before
it is handed back to the router as content, the rest is read again as plain
text, so an ordinary JSON answer stays content byte for byte for every
chunking.
"""
cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    object PyUnicode_Substring(object, Py_ssize_t, Py_ssize_t)

cdef enum:
    # The longest whitespace run accepted between the envelope's tokens.
    _BARE_WS = 64
    BARE_UNDECIDED = 0
    BARE_CONFIRMED = 1
    BARE_REJECTED = 2


cdef inline int json_object_opens(int kind, void *data, Py_ssize_t b, Py_ssize_t size, bint final) noexcept:
    """Whether the ``{`` at ``b`` opens an object: whitespace, then ``"`` or ``}``: 1; anything else: 0;
    undecided at the end of the text: -1 (1 at the end of the output: a cut envelope). A whitespace run
    longer than ``_BARE_WS`` is taken as one (the envelope family's text before an envelope, json_parser)."""
    cdef Py_ssize_t q = b + 1
    cdef Py_UCS4 ch
    while q < size and q - b <= _BARE_WS:
        ch = PyUnicode_READ(kind, data, q)
        if ch == u'"' or ch == u'}':
            return 1
        if not Py_UNICODE_ISSPACE(ch):
            return 0
        q += 1
    return 1 if q < size or final else -1


cdef inline bint _bare_ws(Py_UCS4 ch) noexcept:
    return ch == u' ' or ch == u'\n' or ch == u'\r' or ch == u'\t'


cdef inline Py_ssize_t _skip_ws(int kind, void *data, Py_ssize_t pos, Py_ssize_t size, bint *over) noexcept:
    """After the whitespace run at ``pos``; ``over``: it is longer than _BARE_WS (the result is where it overflowed)."""
    cdef Py_ssize_t start = pos
    over[0] = False
    while pos < size and _bare_ws(PyUnicode_READ(kind, data, pos)):
        pos += 1
        if pos - start > _BARE_WS:
            over[0] = True
            break
    return pos


cdef inline Py_ssize_t _lit_len(int kind, void *data, Py_ssize_t pos, Py_ssize_t size, str lit) noexcept:
    """How many characters of ``lit`` match at ``pos`` (stops at the end of the text)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(lit), i = 0
    cdef int lkind = PyUnicode_KIND(lit)
    cdef void *ldata = PyUnicode_DATA(lit)
    while i < n and pos + i < size and PyUnicode_READ(kind, data, pos + i) == PyUnicode_READ(lkind, ldata, i):
        i += 1
    return i


cdef inline Py_ssize_t _name_prefix(int kind, void *data, Py_ssize_t s, Py_ssize_t e, object allowed,
                                    bint *whole) noexcept:
    """The longest prefix of ``text[s:e]`` some offered name starts with; ``whole``: ``text[s:e]`` is one."""
    cdef Py_ssize_t best = 0, i, m
    whole[0] = False
    for cand in allowed:
        if type(cand) is not str:
            continue
        m = PyUnicode_GET_LENGTH(cand)
        i = 0
        while s + i < e and i < m and PyUnicode_READ(kind, data, s + i) == PyUnicode_READ(
                PyUnicode_KIND(cand), PyUnicode_DATA(cand), i):
            i += 1
        if i > best:
            best = i
        if i == m and s + i == e:
            whole[0] = True
    return best


cdef inline tuple json_bare_confirm(str text, Py_ssize_t size, bint final, str name_key, tuple arg_keys,
                                    object allowed, Py_ssize_t max_name, object loads, bint array=False):
    """Decide the bare envelope at the start of ``text``: ``(verdict, pos, name, argument key)``.

    ``array``: the envelope is the first of a JSON array (``[`` before its ``{``).
    ``name_key`` and ``arg_keys`` are written with their quotes; ``loads``
    (``json.loads``) decodes a name written with escapes.
    BARE_CONFIRMED: ``pos`` is just after the argument key's ``:``.
    BARE_REJECTED: ``text[:pos]`` is content, the rest is plain text again.
    BARE_UNDECIDED: the text ends first (never when ``final``).
    """
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t p = 0, k, s, e, best
    cdef Py_UCS4 ch
    cdef bint whole, over, escaped = False
    cdef str name = None, lit, arg_key = None
    cdef int step
    for step in range(-1 if array else 0, 8):
        # { "name" : " NAME" , "KEY" :  -- whitespace may precede each step
        p = _skip_ws(kind, data, p, size, &over)
        if over:
            return (BARE_REJECTED, p, None, None)
        if p == size:
            break
        if step == 4:  # the name's body and its closing quote
            s = e = p
            while e < size:
                ch = PyUnicode_READ(kind, data, e)
                if ch == u'"':
                    break
                if ch == u'\\':
                    escaped = True
                    e += 1
                e += 1
                if e - s > 6 * max_name + 6:
                    return (BARE_REJECTED, e, None, None)  # no offered name is written that long
            if e > size:
                e = size  # a backslash was the last character
            if not escaped:
                best = _name_prefix(kind, data, s, e, allowed, &whole)
                if best < e - s:
                    return (BARE_REJECTED, s + best, None, None)
            if e == size:
                break
            if not escaped and not whole:
                return (BARE_REJECTED, e, None, None)
            name = PyUnicode_Substring(text, s, e)
            if escaped:
                try:
                    name = loads('"' + name + '"')
                except ValueError:
                    name = None
                if name is None or name not in allowed:
                    return (BARE_REJECTED, e + 1, None, None)
            p = e + 1
            continue
        if step == 6:  # one of the argument keys
            best = 0
            for key in arg_keys:
                k = _lit_len(kind, data, p, size, <str>key)
                if k == PyUnicode_GET_LENGTH(<str>key):
                    arg_key = <str>key
                    break
                if k > best:
                    best = k
            if arg_key is None:
                if p + best == size:
                    break
                return (BARE_REJECTED, p + best, None, None)
            p += PyUnicode_GET_LENGTH(arg_key)
            continue
        lit = u'[' if step == -1 else u'{' if step == 0 else name_key if step == 1 else u'"' if step == 3 else u',' if step == 5 else u':'
        k = _lit_len(kind, data, p, size, lit)
        if k < PyUnicode_GET_LENGTH(lit):
            if p + k == size:
                break
            return (BARE_REJECTED, p + k, None, None)
        p += k
        if step == 7:
            return (BARE_CONFIRMED, p, name, PyUnicode_Substring(arg_key, 1, PyUnicode_GET_LENGTH(arg_key) - 1))
    if final:
        return (BARE_REJECTED, size, None, None)
    return (BARE_UNDECIDED, 0, None, None)
