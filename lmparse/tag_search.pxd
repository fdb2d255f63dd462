"""Where the router's tags can be in its buffer: bulk searches over ``str`` spans.

Split from ``lmparse.response`` (its compiled-size budget): the anchor-based
floor (see ``construction.tag_anchor``), the in-place checks that spare
full tag searches in prose, what is held back at the end of the buffer, and the
separator between two tool blocks.
"""
from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring, PyUnicode_Tailmatch

from lmparse.tools.base cimport tag_prefix_hold


cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_UCS4 PyUnicode_READ_CHAR(object, Py_ssize_t)


cdef inline Py_ssize_t _find(str text, object tag, Py_ssize_t start, Py_ssize_t end):
    if tag is None:
        return -1
    return PyUnicode_Find(text, <str>tag, start, end, 1)


cdef inline Py_ssize_t _tag_floor(str p, Py_ssize_t n, Py_UCS4 anchor, Py_ssize_t reach, Py_ssize_t *at) noexcept:
    """First offset of ``p[:n]`` where a tag, or a tag prefix at its end, can start (see construction.tag_anchor).

    ``at[0]``: the anchor's first offset; -1 when it does not occur, so ``p``
    holds no whole tag (0 without an anchor).
    """
    at[0] = PyUnicode_FindChar(p, anchor, 0, n, 1) if anchor and n else 0
    cdef Py_ssize_t a = n if at[0] < 0 else at[0]
    return a - reach if a > reach else 0


cdef enum:
    # Anchor occurrences checked one by one before two full tag searches are cheaper.
    _ANCHOR_CHECKS = 8


cdef inline bint _tag_at(str p, Py_ssize_t n, object tag, Py_UCS4 anchor, Py_ssize_t q) except -1:
    """A whole ``tag`` in ``p[:n]`` whose first ``anchor`` character is at ``q``."""
    if tag is None:
        return False
    cdef Py_ssize_t m = PyUnicode_GET_LENGTH(<str>tag)
    cdef Py_ssize_t s = q - PyUnicode_FindChar(<str>tag, anchor, 0, m, 1)
    return s >= 0 and s + m <= n and PyUnicode_Tailmatch(p, <str>tag, s, s + m, -1) == 1


cdef inline bint _may_hold_tag(str p, Py_ssize_t n, Py_UCS4 anchor, Py_ssize_t q,
                        object a, object b, object c, tuple markers) except -1:
    """False when ``p[:n]`` surely holds none of the tags (each contains ``anchor``).

    A whole tag's first anchor character is an anchor occurrence of ``p``, so
    checking each occurrence in place replaces full searches for the tags in
    text where the anchor is rare (prose: one ``<`` per chunk). True when a tag
    matched, or after _ANCHOR_CHECKS occurrences: the caller then searches.
    ``q``: the anchor's first occurrence. ``markers``: declared content
    markers (None: none), checked the same way.
    """
    cdef int k
    for k in range(_ANCHOR_CHECKS):
        if q < 0:
            return False
        if _tag_at(p, n, a, anchor, q) or _tag_at(p, n, b, anchor, q) or _tag_at(p, n, c, anchor, q):
            return True
        if markers is not None:
            for marker in markers:
                if _tag_at(p, n, marker, anchor, q):
                    return True
        q = PyUnicode_FindChar(p, anchor, q + 1, n, 1)
    return True


cdef inline int _starts_at(str p, Py_ssize_t k, Py_ssize_t n, object tag, bint final) except -2:
    """``tag`` at ``p[k:n]``: 1 whole, 0 the text is a proper prefix of it (held unless ``final``), -1 neither."""
    if tag is None:
        return -1
    cdef Py_ssize_t m = PyUnicode_GET_LENGTH(<str>tag)
    if n - k >= m:
        return 1 if PyUnicode_Tailmatch(p, <str>tag, k, k + m, -1) == 1 else -1
    if not final and PyUnicode_Tailmatch(<str>tag, PyUnicode_Substring(p, k, n), 0, n - k, -1) == 1:
        return 0
    return -1


cdef enum:
    # Whitespace an anchored bare opener may follow (bounds what is held at the start).
    _BARE_LEAD = 64


cdef inline int _at_start(str p, Py_ssize_t n, object tag, bint final, Py_ssize_t *k) except -2:
    """``tag`` at the start of ``p[:n]`` after at most _BARE_LEAD whitespace characters (``k[0]``:
    where): 1 whole, 0 too short to tell (held unless final), -1 not there."""
    cdef int kind = PyUnicode_KIND(p)
    cdef void *data = PyUnicode_DATA(p)
    cdef Py_UCS4 ch
    k[0] = 0
    while k[0] < n and k[0] <= _BARE_LEAD:
        ch = PyUnicode_READ(kind, data, k[0])
        if not (ch == u' ' or ch == u'\n' or ch == u'\r' or ch == u'\t'):
            break
        k[0] += 1
    if k[0] <= _BARE_LEAD and k[0] < n:
        return _starts_at(p, k[0], n, tag, final)
    return 0 if k[0] == n and k[0] <= _BARE_LEAD and not final else -1


cdef inline Py_ssize_t _hold_back(str p, Py_ssize_t start, object a, object b, object c, tuple markers):
    """Where the longest trailing proper prefix of any given tag or marker starts in ``p[start:]`` (``len(p)``: none)."""
    cdef Py_ssize_t hold = PyUnicode_GET_LENGTH(p), h
    if markers is not None:
        for marker in markers:
            h = tag_prefix_hold(p, start, <str>marker)
            if h < hold:
                hold = h
    if a is not None:
        h = tag_prefix_hold(p, start, <str>a)
        if h < hold:
            hold = h
    if b is not None:
        h = tag_prefix_hold(p, start, <str>b)
        if h < hold:
            hold = h
    if c is not None:
        h = tag_prefix_hold(p, start, <str>c)
        if h < hold:
            hold = h
    return hold


cdef inline Py_ssize_t _cut_marker_end(str p, Py_ssize_t start, object a, object b, object c, tuple markers,
                                       tuple pieces):
    """At the end of the output: where the trailing tag or marker prefix starts when it starts with one of
    ``pieces`` (special-token pieces of split markers: a marker the output cut), else ``len(p)``."""
    cdef Py_ssize_t h = _hold_back(p, start, a, b, c, markers)
    if h < PyUnicode_GET_LENGTH(p):
        for piece in pieces:
            if p.startswith(<str>piece, h):
                return h
    return PyUnicode_GET_LENGTH(p)


cdef inline Py_ssize_t _separator_end(str p, str tag, bint final) except -2:
    """Newlines between two tool blocks: where the text after them starts, or -1 while undecided.

    They are dropped once the next open tag ``tag`` is confirmed after them (an
    open tag's own leading newlines, as DSML's, are not separator); any other
    text keeps them (0).
    """
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
    cdef Py_ssize_t k = 0, rest, lead = 0
    cdef int kind = PyUnicode_KIND(p)
    cdef void *data = PyUnicode_DATA(p)
    cdef Py_ssize_t tag_n = PyUnicode_GET_LENGTH(tag)
    if n == 0 and not final:
        # An empty step decides nothing: the next text may still be a newline.
        return -1
    while k < n and PyUnicode_READ(kind, data, k) == u'\n':
        k += 1
    if k:
        while lead < tag_n and PyUnicode_READ_CHAR(tag, lead) == u'\n':
            lead += 1
        rest = n - k
        if rest == 0:
            if not final:
                return -1
        elif k >= lead and PyUnicode_Tailmatch(p, tag, k - lead, n, -1):
            return k - lead
        elif rest < tag_n - lead and not final and PyUnicode_Tailmatch(
                tag, PyUnicode_Substring(p, k, n), lead, tag_n, -1):
            return -1
    return 0


cdef inline bint _marker_may_grow(str p, Py_ssize_t at, Py_ssize_t n, tuple markers):
    """Whether ``p[at:n]``, a marker found at ``at`` and what follows it to the end of the text, is a proper
    prefix of a longer marker (which then may still arrive)."""
    cdef Py_ssize_t k = n - at
    for marker in markers:
        if (PyUnicode_GET_LENGTH(<str>marker) > k
                and PyUnicode_Tailmatch(<str>marker, PyUnicode_Substring(p, at, n), 0, k, -1)):
            return True
    return False


cdef inline Py_ssize_t _find_marker(str p, tuple markers, Py_ssize_t start, Py_ssize_t end, Py_ssize_t *length,
                                    bint final):
    """The first whole declared content marker in ``p[start:end]`` (-1: none); ``length[0]``: its length.

    Each marker is searched over the whole span (one may end another), the
    earliest start wins, the longer marker at the same start. Before the final
    chunk, -1 when a longer marker may still grow from that start ('<|message_sep|>'
    then '\\n\\n'): the caller holds it back as a tag prefix.
    """
    cdef Py_ssize_t at = -1, t, m
    for marker in markers:
        t = PyUnicode_Find(p, <str>marker, start, end, 1)
        if t >= 0:
            m = PyUnicode_GET_LENGTH(<str>marker)
            if at < 0 or t < at or (t == at and m > length[0]):
                at = t
                length[0] = m
    if at >= 0 and not final and _marker_may_grow(p, at, PyUnicode_GET_LENGTH(p), markers):
        return -1
    return at


cdef inline Py_ssize_t _header_end(str p, tuple ends, Py_ssize_t limit, Py_ssize_t n):
    """The earliest whole header end starting in ``p[:limit]`` (-1: none)."""
    cdef Py_ssize_t at = -1, t, stop
    for end in ends:
        stop = min(n, limit + PyUnicode_GET_LENGTH(<str>end))
        t = PyUnicode_Find(p, <str>end, 0, stop, 1)
        if t >= 0 and (at < 0 or t < at):
            at = t
    return at


cdef inline bint _opens_header(str p, Py_ssize_t at, tuple opens):
    """Whether the content marker dropped at ``at`` opens a block header."""
    if opens is None:
        return False
    for marker in opens:
        if p.startswith(<str>marker, at):
            return True
    return False


cdef inline bint _any_tag(str p, Py_ssize_t end, object tag_a, object tag_b, object tag_c, tuple markers):
    cdef Py_ssize_t m = 0
    return (_find(p, tag_a, 0, end) >= 0 or _find(p, tag_b, 0, end) >= 0 or _find(p, tag_c, 0, end) >= 0
            or (markers is not None and _find_marker(p, markers, 0, end, &m, True) >= 0))


cdef inline Py_ssize_t _header_cut(str p, Py_ssize_t n, tuple ends, Py_ssize_t reach, Py_ssize_t cap, bint final,
                                   object tag_a, object tag_b, object tag_c, tuple markers):
    """Inside a block header: the offset of its end marker (the header before it is metadata); -1 when it
    is ordinary text (another tag, ``cap`` characters or the end of output come first); -2 undecided.

    Decided on whole text only, so every chunking agrees: an end starting within ``cap`` is complete
    once ``cap + reach`` characters are there.
    """
    cdef Py_ssize_t at = _header_end(p, ends, min(n, cap), n)
    if at >= 0 and not _any_tag(p, at, tag_a, tag_b, tag_c, markers):
        return at
    if at >= 0 or final or n >= cap + reach or _any_tag(p, n, tag_a, tag_b, tag_c, markers):
        return -1
    return -2
