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

__all__ = ['read_token_ids']

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

