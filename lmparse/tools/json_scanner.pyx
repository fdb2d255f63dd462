"""Lexical end-of-value scanner for one streamed JSON value.

It tracks only strings, escapes and container depth: no validation and no
decoding, so callers forward the source text byte for byte. ``scan_to_marker``
is the one loop every payload grammar with JSON values uses (the JSON envelope,
DSML, Kimi): scan up to the next outer marker, where markers inside a JSON
string are data; the caller supplies the marker search.
"""
from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar
from libc.string cimport memchr

__all__ = ['JsonValueScanner']

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

cdef enum:
    MODE_NONE = 0
    MODE_STRING = 1
    MODE_CONTAINER = 2
    MODE_SCALAR = 3


cdef inline Py_ssize_t _find_quote(str text, int kind, void *data, Py_ssize_t pos, Py_ssize_t end):
    cdef const char *hit
    if pos >= end:
        return -1
    if kind == 1:
        hit = <const char *>memchr(<const char *>data + pos, 34, end - pos)
        return -1 if hit == NULL else hit - <const char *>data
    return PyUnicode_FindChar(text, 34, pos, end, 1)


cdef class JsonValueScanner:
    """Find the lexical end of one JSON value across chunks."""

    def __init__(self):
        self.reset_c()

    cdef void reset_c(self):
        self.complete = False
        self.started = False
        self._mode = MODE_NONE
        self._depth = 0
        self._in_string = False
        self._escape_next = False

    def reset(self) -> None:
        """Forget all state and expect a new value."""
        self.reset_c()

    @property
    def in_string(self) -> bool:
        """Whether the cursor is inside a string (protocol markers there are data)."""
        return self._in_string

    @property
    def depth(self) -> int:
        return self._depth

    def feed(self, str text not None, Py_ssize_t start=0, end=None) -> int:
        """Scan ``text[start:end]`` and return where this value's prefix ends.

        Returns ``end`` when the value continues past it, or the offset just
        after the value when it completes (a root scalar stops before its
        delimiter).
        """
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t stop = size if end is None else min(<Py_ssize_t>end, size)
        if start < 0 or start > stop:
            raise ValueError(f'invalid scan range [{start}, {stop}) for text of length {size}')
        return self.feed_c(text, start, stop, False)

    def feed_until(self, str text not None, tuple markers not None, Py_ssize_t start=0, end=None, *,
                   bint final=False):
        """Scan ``text[start:end]`` up to the value's end or the first of ``markers`` outside strings.

        Returns ``(offset, at_marker)``. Without a marker the scan stops where a
        partial marker may start (unless ``final``). At a marker a root scalar
        is finished (the marker delimits it).
        """
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t stop = size if end is None else min(<Py_ssize_t>end, size)
        cdef bint at_marker = False
        if start < 0 or start > stop:
            raise ValueError(f'invalid scan range [{start}, {stop}) for text of length {size}')
        for marker in markers:
            if not isinstance(marker, str) or not marker:
                raise ValueError('markers must be non-empty strings')
        pos = self.scan_to_marker(text, start, stop, markers, _any_marker_limit, final, &at_marker)
        return pos, at_marker

    def finish(self) -> None:
        """End a root scalar at an externally known boundary."""
        self.finish_c()

    def finish_scalar(self) -> bool:
        self.finish_c()
        return self.complete

    cdef void finish_c(self):
        if self.started and self._mode == MODE_SCALAR:
            self.complete = True

    cdef Py_ssize_t feed_c(self, str text, Py_ssize_t pos, Py_ssize_t end, bint stop_after_string):
        # stop_after_string: return right after the string that is open at
        # ``pos`` closes, so callers can re-check protocol markers outside it.
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_UCS4 ch
        cdef Py_ssize_t quote, slash
        if self.complete:
            return pos
        if not self.started:
            while pos < end and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
                pos += 1
            if pos == end:
                return pos
            self.started = True
            ch = PyUnicode_READ(kind, data, pos)
            if ch == u'"':
                self._mode = MODE_STRING
                self._in_string = True
                pos += 1
            elif ch == u'{' or ch == u'[':
                self._mode = MODE_CONTAINER
                self._depth = 1
                pos += 1
            else:
                self._mode = MODE_SCALAR

        if self._mode == MODE_SCALAR:
            while pos < end:
                ch = PyUnicode_READ(kind, data, pos)
                if Py_UNICODE_ISSPACE(ch) or ch == u',' or ch == u'}' or ch == u']':
                    self.complete = True
                    break
                pos += 1
            return pos

        while pos < end:
            if self._in_string:
                if self._escape_next:
                    self._escape_next = False
                    pos += 1
                    continue
                quote = _find_quote(text, kind, data, pos, end)
                if quote < 0:
                    # Only an odd trailing backslash run escapes the next chunk's first char.
                    slash = end
                    while slash > pos and PyUnicode_READ(kind, data, slash - 1) == u'\\':
                        slash -= 1
                    self._escape_next = (end - slash) & 1
                    return end
                slash = quote
                while slash > pos and PyUnicode_READ(kind, data, slash - 1) == u'\\':
                    slash -= 1
                pos = quote + 1
                if (quote - slash) & 1:
                    continue
                self._in_string = False
                if self._mode == MODE_STRING:
                    self.complete = True
                    return pos
                if stop_after_string:
                    return pos
                continue
            ch = PyUnicode_READ(kind, data, pos)
            pos += 1
            if ch == u'"':
                self._in_string = True
            elif ch == u'{' or ch == u'[':
                self._depth += 1
            elif ch == u'}' or ch == u']':
                self._depth -= 1
                if self._depth == 0:
                    self.complete = True
                    return pos
        return pos

    cdef Py_ssize_t scan_to_marker(self, str text, Py_ssize_t pos, Py_ssize_t size, object owner,
                                   marker_limit_fn limit_of, bint final, bint *at_marker) except -1:
        """Feed ``text[pos:size]`` up to the value's end or the next outer marker outside strings.

        Returns the end of the scanned span (``complete`` tells whether the
        value ended there). Stopping at a marker sets ``at_marker[0]`` and
        finishes a root scalar: the marker delimits it.
        """
        cdef Py_ssize_t limit = -1
        cdef bint marker = False
        at_marker[0] = False
        while True:
            if self._in_string:
                # Markers inside strings are data: scan to the string's end.
                pos = self.feed_c(text, pos, size, True)
                if self.complete or pos >= size:
                    return pos
                continue
            # Search again only when a string carried the cursor past the last
            # limit: one search per chunk, not one per short string.
            if limit < pos:
                limit = limit_of(owner, text, pos, size, final, &marker)
            pos = self.feed_c(text, pos, limit, False)
            if self.complete:
                return pos
            if self._in_string:
                continue
            if marker and pos == limit:
                self.finish_c()
                at_marker[0] = True
            return pos


cdef Py_ssize_t _any_marker_limit(object owner, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                                  bint *at_marker) except -1:
    # The Python-level ``feed_until``: the first of a tuple of markers (not a hot path).
    cdef Py_ssize_t best = -1, at, p
    for marker in <tuple>owner:
        at = PyUnicode_Find(text, marker, pos, size, 1)
        if at >= 0 and (best < 0 or at < best):
            best = at
    at_marker[0] = best >= 0
    if best >= 0:
        return best
    best = size
    if not final:
        for marker in <tuple>owner:
            p = max(pos, size - PyUnicode_GET_LENGTH(marker) + 1)
            while p < best:
                if (<str>marker).startswith(text[p:size]):
                    best = p
                    break
                p += 1
    return best
