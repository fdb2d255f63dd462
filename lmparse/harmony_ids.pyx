"""Harmony special-token ids, and text mode with ids.

In text mode the engine detokenizes with ``skip_special_tokens=False``: the
special tokens appear in ``delta_text`` as their tag text. A tool argument or
a reasoning text may also hold the literal characters ``<|call|>`` written as
ordinary tokens. When ``delta_token_ids`` come with the text, the ids decide:
``SpecialAligner`` queues each special id (and whether ordinary ids came
between it and the previous one) and matches it to an occurrence of its tag
text; every other tag text is ordinary text. Text never precedes its ids, so
with no special id pending all text is ordinary and nothing is held.

An occurrence of the expected tag is taken as the special unless the ids rule
it out: a special right after the previous one (no ordinary id between) must
follow its text directly; one preceded by ordinary ids needs text before it;
the special after it, when no ordinary id separates them, must follow the
occurrence directly; and a last special with nothing after it must end the
text. Until the id after a candidate arrives (or the response ends) the text
from the candidate on is held. Occurrences these rules cannot tell apart (a
literal tag followed by ordinary tokens, then the real one also followed by
ordinary tokens) resolve to the first.
"""
from cpython.unicode cimport PyUnicode_Find, PyUnicode_Substring

from lmparse.token_ids cimport ids_at

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object)

cdef tuple TAGS = ('', '<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|constrain|>',
                   '<|return|>', '<|call|>')

cdef enum:
    ACCEPT = 1
    REJECT = 0
    WAIT = -1


cdef int first_special(TokenIds *ids, Py_ssize_t *at) except -1:
    """Tag code of the first Harmony special id (T_NONE without one); its index goes to ``at``."""
    cdef Py_ssize_t i
    cdef int code
    for i in range(ids.n):
        code = tag_of_id(ids_at(ids, i))
        if code != T_NONE:
            at[0] = i
            return code
    at[0] = ids.n
    return T_NONE


cdef list segment_id_lists(TokenIds *ids):
    """The ordinary ids between the specials, as lists of int (for a tokenizer's decode)."""
    cdef list out = []
    cdef list current = []
    cdef Py_ssize_t i
    cdef long long tid
    for i in range(ids.n):
        tid = ids_at(ids, i)
        if tag_of_id(tid) == T_NONE:
            current.append(tid)
        else:
            out.append(current)
            current = []
    out.append(current)
    return out


cdef Py_ssize_t _partial_at(str p, Py_ssize_t pos, Py_ssize_t n, str tag):
    """Start of the longest suffix of p[pos:n] that is a proper prefix of ``tag`` (n if none)."""
    cdef Py_ssize_t tl = PyUnicode_GET_LENGTH(tag)
    cdef Py_ssize_t start = n - tl + 1
    if start < pos:
        start = pos
    while start < n:
        if tag.startswith(PyUnicode_Substring(p, start, n)):
            return start
        start += 1
    return n


cdef class SpecialAligner:
    """Matches the special ids of text mode to their tag text (one per response)."""

    def __cinit__(self, *args, **kwargs):
        self._queue = []
        self._head = 0
        self._tail_gap = False
        self._seg_text = False

    def __init__(self, bint ordinary_before=False):
        # Ordinary ids (and their text) came before the aligner took over.
        self._tail_gap = ordinary_before
        self._seg_text = ordinary_before

    @property
    def pending_specials(self):
        """Special ids whose tag text has not been matched yet (their codes)."""
        return [e & 7 for e in self._queue[self._head:]]

    cdef int add_ids(self, TokenIds *ids) except -1:
        cdef Py_ssize_t i
        cdef int code
        cdef bint gap = self._tail_gap
        for i in range(ids.n):
            code = tag_of_id(ids_at(ids, i))
            if code == T_NONE:
                gap = True
            else:
                self._queue.append(code + 8 * gap)
                gap = False
        self._tail_gap = gap
        return 0

    cdef Py_ssize_t scan(self, str p, bint final, list events) except -1:
        """Append text pieces (str) and tag codes (int) of ``p`` to ``events``; return chars consumed."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t pos = 0, at, tl, hold
        cdef int entry, code, verdict
        cdef bint gap
        cdef str tag
        while True:
            if self._head >= len(self._queue):
                # No special pending: text never precedes its ids, so all of it is ordinary.
                if pos < n:
                    events.append(PyUnicode_Substring(p, pos, n) if pos else p)
                    self._seg_text = True
                return n
            entry = self._queue[self._head]
            code = entry & 7
            gap = entry >> 3
            tag = <str>TAGS[code]
            tl = PyUnicode_GET_LENGTH(tag)
            if not gap and not self._seg_text:
                # Right after the previous special: its text must come next.
                if p.startswith(tag, pos):
                    self._accept(code, events)
                    pos += tl
                    continue
                if n - pos < tl and tag.startswith(PyUnicode_Substring(p, pos, n)) and not final:
                    return pos
                # The text disagrees with the ids: look for the tag further on.
            at = pos
            verdict = REJECT
            while True:
                at = PyUnicode_Find(p, tag, at, n, 1)
                if at < 0:
                    break
                if gap and at == pos and not self._seg_text:
                    verdict = REJECT  # ordinary ids came first: they have text before the special
                else:
                    verdict = self._check(p, at + tl, final)
                if verdict != REJECT:
                    break
                at += 1
            if at < 0:
                if final:
                    # The tag text never came: the rest is text, the unmatched specials are dropped.
                    del self._queue[:]
                    self._head = 0
                    continue
                hold = _partial_at(p, pos, n, tag)
                if hold > pos:
                    events.append(PyUnicode_Substring(p, pos, hold))
                    self._seg_text = True
                return hold
            if at > pos:
                events.append(PyUnicode_Substring(p, pos, at))
                self._seg_text = True
            if verdict == WAIT:
                return at
            self._accept(code, events)
            pos = at + tl

    cdef int _check(self, str p, Py_ssize_t end, bint final) except -2:
        """Whether the head special may end at ``end`` of ``p``: ACCEPT, REJECT or WAIT (for more input)."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef int nxt
        cdef str tag
        if self._head + 1 < len(self._queue):
            nxt = self._queue[self._head + 1]
            if nxt >> 3:
                return ACCEPT  # ordinary ids between the two specials: no adjacency to check
            tag = <str>TAGS[nxt & 7]
            if p.startswith(tag, end):
                return ACCEPT
            if not final and n - end < PyUnicode_GET_LENGTH(tag) and tag.startswith(PyUnicode_Substring(p, end, n)):
                return WAIT
            return REJECT
        if self._tail_gap:
            return ACCEPT
        if final:
            return ACCEPT if end == n else REJECT
        return WAIT

    cdef int _accept(self, int code, list events) except -1:
        events.append(code)
        self._head += 1
        self._seg_text = False
        if self._head >= 64 and self._head * 2 >= len(self._queue):
            del self._queue[:self._head]
            self._head = 0
        return 0
