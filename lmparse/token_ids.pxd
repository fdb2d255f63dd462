# Reading ``delta_token_ids`` without a Python object per id.
#
#   cdef TokenIds ids
#   ids_open(&ids, obj)          # list / tuple kept as is; integer buffers read in place;
#   try:                         # other sequences converted once
#       for i in range(ids.n):
#           tid = ids_at(&ids, i)
#   finally:
#       ids_close(&ids)
from cpython.object cimport PyObject
from cpython.buffer cimport Py_buffer
from libc.string cimport memcpy
from libc.stdint cimport int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t

cdef extern from "Python.h":
    Py_ssize_t _ids_list_size "PyList_GET_SIZE" (PyObject *)
    PyObject *_ids_list_item "PyList_GET_ITEM" (PyObject *, Py_ssize_t)
    PyObject *_ids_tuple_item "PyTuple_GET_ITEM" (PyObject *, Py_ssize_t)
    bint _ids_is_exact_int "PyLong_CheckExact" (PyObject *)

cdef enum:
    IDS_LIST = 0     # seq is a list (the caller's, or one converted from a generic sequence)
    IDS_TUPLE = 1
    IDS_I8 = 2       # buffers: native byte order, by item width and signedness
    IDS_U8 = 3
    IDS_I16 = 4
    IDS_U16 = 5
    IDS_I32 = 6
    IDS_U32 = 7
    IDS_I64 = 8
    IDS_U64 = 9
    IDS_SWAPPED = 10  # a buffer in the other byte order (read through ids_swapped_at)

cdef struct TokenIds:
    Py_ssize_t n
    int kind
    int width
    bint is_signed
    char *data
    Py_ssize_t stride
    PyObject *seq
    bint owns_seq
    bint has_view
    Py_buffer view

cdef int ids_open(TokenIds *r, object ids) except -1
cdef void ids_close(TokenIds *r) noexcept
cdef long long ids_object_at(TokenIds *r, Py_ssize_t i) except? -1
cdef long long ids_swapped_at(TokenIds *r, Py_ssize_t i) except? -1
cdef long long ids_overflow(uint64_t value) except? -1


cdef inline long long _ids_int(object item) except? -1:
    return item  # Cython's own int conversion (inlined for small ints)


cdef inline long long ids_at(TokenIds *r, Py_ssize_t i) except? -1:
    """The i-th id (0 <= i < r.n)."""
    cdef PyObject *item
    cdef char *p
    cdef int kind = r.kind
    cdef int8_t i8
    cdef int16_t i16
    cdef uint16_t u16
    cdef int32_t i32
    cdef uint32_t u32
    cdef int64_t i64
    cdef uint64_t u64
    if kind == IDS_LIST:
        if i < _ids_list_size(r.seq):
            item = _ids_list_item(r.seq, i)
            if _ids_is_exact_int(item):
                return _ids_int(<object>item)
        return ids_object_at(r, i)
    if kind == IDS_TUPLE:
        item = _ids_tuple_item(r.seq, i)
        if _ids_is_exact_int(item):
            return _ids_int(<object>item)
        return ids_object_at(r, i)
    p = r.data + i * r.stride
    if kind == IDS_I32:
        memcpy(&i32, p, 4)
        return i32
    if kind == IDS_I64:
        memcpy(&i64, p, 8)
        return i64
    if kind == IDS_U32:
        memcpy(&u32, p, 4)
        return u32
    if kind == IDS_U64:
        memcpy(&u64, p, 8)
        if u64 > <uint64_t>9223372036854775807:
            return ids_overflow(u64)
        return <long long>u64
    if kind == IDS_I16:
        memcpy(&i16, p, 2)
        return i16
    if kind == IDS_U16:
        memcpy(&u16, p, 2)
        return u16
    if kind == IDS_I8:
        i8 = (<int8_t *>p)[0]
        return i8
    if kind == IDS_U8:
        return (<uint8_t *>p)[0]
    return ids_swapped_at(r, i)


cdef bint ids_given_slow(object ids) except -1


cdef inline bint token_ids_given(object ids) except -1:
    """Whether ``ids`` holds at least one id (no truth test: numpy arrays refuse one)."""
    if ids is None:
        return False
    if type(ids) is list:
        return _ids_list_size(<PyObject *>ids) != 0
    return ids_given_slow(ids)


cdef bint count_between(object token_ids, long long open_id, long long close_id, bint counting,
                        Py_ssize_t *count) except -1


# Tags confirmed by their special token ids (see token_ids.pyx).
cdef class TagIds:
    cdef long long sid[3]
    cdef tuple tags
    cdef Py_ssize_t stream_len
    cdef list ranges
    cdef object decoder

    cdef int note(self, object token_ids, bint have_ids, Py_ssize_t size, Py_ssize_t pending) except -1
    cdef bint place(self, list ids, list found, Py_ssize_t start, Py_ssize_t size) except -1
    cdef bint confirmed(self, int kind, Py_ssize_t at) except -1


cdef tuple marker_token_ids(object tokenizer, tuple tags)
cdef TagIds new_tag_ids(object tokenizer, tuple tags)
