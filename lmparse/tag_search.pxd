"""Where the router's tags can be in its buffer: bulk searches over ``str`` spans.

Split from ``lmparse.response`` (its compiled-size budget): the anchor-based
floor (see ``construction.tag_anchor``) and the in-place checks that spare
full tag searches in prose.
"""
from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring, PyUnicode_Tailmatch

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object)


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
                        object a, object b, object c) except -1:
    """False when ``p[:n]`` surely holds none of the tags (each contains ``anchor``).

    A whole tag's first anchor character is an anchor occurrence of ``p``, so
    checking each occurrence in place replaces full searches for the tags in
    text where the anchor is rare (prose: one ``<`` per chunk). True when a tag
    matched, or after _ANCHOR_CHECKS occurrences: the caller then searches.
    ``q``: the anchor's first occurrence.
    """
    cdef int k
    for k in range(_ANCHOR_CHECKS):
        if q < 0:
            return False
        if _tag_at(p, n, a, anchor, q) or _tag_at(p, n, b, anchor, q) or _tag_at(p, n, c, anchor, q):
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
