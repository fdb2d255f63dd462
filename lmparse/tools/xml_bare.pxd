"""Bare calls of the XML-like family: a call written without the block's open tag.

Qwen3-Coder models sometimes write ``<function=NAME>...</function>`` (and
maybe an orphan ``</tool_call>``) straight into their answer. The router
starts a bare block at the opener (``bare_call_open``, left in the text); the
driver decides the call with these scans, in place over ``str`` spans:

- the name: a call only when it names an offered tool; rejected as soon as
  the text held so far cannot become one (``bare_name_possible``);
- the confirmation: after the name only whitespace and the first argument's
  opener or ``function_close`` may follow (``bare_confirm``);
- the end: after ``function_close`` (and whitespace) another bare call
  continues the block, an orphan close tag is consumed with it, anything else
  is text again (``bare_call_end``).

A rejected call's raw text goes back to the router as content.
"""
from cpython.unicode cimport PyUnicode_Substring

from lmparse.tools.base cimport ToolParser
from lmparse.tools.held_text cimport HeldText, held_append, held_take
from lmparse.tools.xml_grammar cimport NAME_NONE, XmlGrammar, XmlStep
# the C-API declarations the family's text helpers already make
from lmparse.tools.xml_text cimport (
    Py_UNICODE_ISSPACE, PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ, _match_len, _one_of_at,
)


cdef inline bint bare_has_text(str text, Py_ssize_t a, Py_ssize_t b) noexcept:
    """``text[a:b]`` holds a character other than whitespace."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    while a < b:
        if not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
            return True
        a += 1
    return False


cdef inline bint bare_name_possible(HeldText *h, object allowed) except -1:
    """Whether the held raw name may still strip to one of ``allowed``.

    With ``s`` the held text without leading whitespace: some name starts
    with ``s``, or equals ``s`` without its trailing whitespace. Each check
    costs at most the longest allowed name past the leading whitespace.
    """
    cdef Py_ssize_t a = 0, b = h.len, c, n, i
    cdef int nkind
    cdef void *ndata
    while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(h.kind, h.data, a)):
        a += 1
    if a == b:
        return True
    c = b
    while c > a and Py_UNICODE_ISSPACE(PyUnicode_READ(h.kind, h.data, c - 1)):
        c -= 1
    for name in allowed:
        if type(name) is not str:
            continue
        n = PyUnicode_GET_LENGTH(name)
        if n < c - a:
            continue
        nkind = PyUnicode_KIND(name)
        ndata = PyUnicode_DATA(name)
        i = 0
        while a + i < b and i < n and PyUnicode_READ(h.kind, h.data, a + i) == PyUnicode_READ(nkind, ndata, i):
            i += 1
        if a + i == b or (a + i >= c and i == n):
            return True
    return False


cdef inline int bare_confirm(str text, Py_ssize_t pos, Py_ssize_t size, bint final, str arg_open,
                             str function_close) noexcept:
    """After a bare call's name: 1 an argument or ``function_close`` follows (after
    whitespace), 0 other text does, -1 the text ends before that is known."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
        pos += 1
    if pos == size:
        return 0 if final else -1
    return _one_of_at(text, pos, size, final, arg_open, function_close)


cdef inline Py_ssize_t bare_call_end(str text, Py_ssize_t pos, Py_ssize_t size, bint final, str function_open,
                                     object orphan_close, bint *another) noexcept:
    """After a bare call's ``function_close`` at ``pos``: where the block's text ends.

    Whitespace and then ``function_open``: ``another`` is set and the result
    is where the next call starts. Whitespace and ``orphan_close``: the block
    ends after it. Anything else: the block ends at ``pos`` (the whitespace is
    text). -1: the text ends before that is known.
    """
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t p = pos, k
    another[0] = False
    while p < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, p)):
        p += 1
    if p == size:
        return pos if final else -1
    k = _match_len(text, p, size, function_open)
    if k == PyUnicode_GET_LENGTH(function_open):
        another[0] = True
        return p
    if p + k == size and not final:
        return -1
    if orphan_close is not None:
        k = _match_len(text, p, size, <str>orphan_close)
        if k == PyUnicode_GET_LENGTH(orphan_close):
            return p + k
        if p + k == size and not final:
            return -1
    return pos


cdef inline Py_ssize_t bare_fail_point(str name, object allowed) except -2:
    """Where a rejected name stops being any offered name's beginning: the offset
    just past the first non-space character at or after the longest prefix some
    allowed name shares (leading whitespace skipped), or -1 if there is none.

    A rejection hands back the text up to this point only, so the same text is
    content for every chunking; the rest is read again as plain text.
    """
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(name), a = 0, best = 0, i, m
    cdef int kind = PyUnicode_KIND(name)
    cdef void *data = PyUnicode_DATA(name)
    if allowed is None:
        return -1
    while a < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
        a += 1
    for cand in allowed:
        if type(cand) is not str:
            continue
        m = PyUnicode_GET_LENGTH(cand)
        i = 0
        while a + i < n and i < m and PyUnicode_READ(kind, data, a + i) == PyUnicode_READ(
                PyUnicode_KIND(cand), PyUnicode_DATA(cand), i):
            i += 1
        if i > best:
            best = i
    i = a + best
    while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
        i += 1
    return i + 1 if i < n else -1


cdef inline tuple _rejected(Py_ssize_t cursor, str raw, str name_text, object allowed):
    """``(cursor, content, None, replay)`` for a name that is no offered tool."""
    cdef Py_ssize_t k = bare_fail_point(name_text, allowed)
    if k < 0 or k == PyUnicode_GET_LENGTH(name_text):
        return (cursor, raw + name_text, None, None)
    return (cursor, raw + PyUnicode_Substring(name_text, 0, k), None, PyUnicode_Substring(
        name_text, k, PyUnicode_GET_LENGTH(name_text)))


cdef inline tuple bare_name(XmlGrammar g, ToolParser owner, str text, Py_ssize_t pos, bint final, XmlStep *st,
                            HeldText *held, int *name_state, str raw):
    """The name of a bare call at ``pos`` (its opener, or more of a held name).

    None: more text is needed (the text before ``st.skip`` is more of the
    name, held). Else ``(cursor, raw text of the call so far, name, replay)``;
    name None when it is not an offered tool (``raw``: the call's text before
    the name), and then ``replay`` (or None) is consumed text after the
    rejection point, to be read again as plain text. The end of the output
    inside the name rejects it.
    """
    cdef Py_ssize_t r, m = PyUnicode_GET_LENGTH(g.function_open)
    cdef str tail
    allowed = owner._allowed_tool_names
    st.may_hold = True
    st.held = name_state[0]
    st.resume = 0
    r = g.function(owner, text, pos, final, st)
    if r < 0:
        if st.piece_start >= 0:
            held_append(held, text, st.piece_start, st.piece_end)
        name_state[0] = st.held
        if final or (allowed is not None and st.piece_start >= 0 and bare_has_text(text, st.piece_start, st.piece_end)
                     and not bare_name_possible(held, allowed)):
            return _rejected(st.skip, raw, held_take(held, 0, held.len), allowed)
        return None
    if st.name_raw:
        held_append(held, text, st.name_start, r)
        tail = held_take(held, 0, held.len)
        name = PyUnicode_Substring(tail, 0, PyUnicode_GET_LENGTH(tail) - (r - st.name_end)).strip()
    else:
        tail = PyUnicode_Substring(text, pos + m, r)
        name = PyUnicode_Substring(text, st.name_start, st.name_end)
    name_state[0] = NAME_NONE
    if allowed is not None and name not in allowed:
        return _rejected(r, raw, tail, allowed)
    return (r, raw + tail, name, None)
