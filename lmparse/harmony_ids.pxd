# Harmony special-token ids: tag codes, and text mode with ids (the ids decide which tag text is a tag).
from lmparse.token_ids cimport TokenIds

cdef enum:
    T_NONE = 0
    T_START = 1
    T_END = 2
    T_MESSAGE = 3
    T_CHANNEL = 4
    T_CONSTRAIN = 5
    T_RETURN = 6
    T_CALL = 7
    T_PARTIAL = -1


cdef inline int tag_of_id(long long tid) noexcept:
    if tid == 200006:
        return T_START
    if tid == 200007:
        return T_END
    if tid == 200008:
        return T_MESSAGE
    if tid == 200005:
        return T_CHANNEL
    if tid == 200003:
        return T_CONSTRAIN
    if tid == 200002:
        return T_RETURN
    if tid == 200012:
        return T_CALL
    return T_NONE


cdef inline bint is_terminator(int code) noexcept:
    return code == T_END or code == T_CALL or code == T_RETURN


cdef int first_special(TokenIds *ids, Py_ssize_t *at) except -1
cdef list segment_id_lists(TokenIds *ids)


cdef class SpecialAligner:
    cdef list _queue
    cdef Py_ssize_t _head
    cdef bint _tail_gap
    cdef bint _seg_text
    cdef int add_ids(self, TokenIds *ids) except -1
    cdef Py_ssize_t scan(self, str p, bint final, list events) except -1
    cdef int _check(self, str p, Py_ssize_t end, bint final) except -2
    cdef int _accept(self, int code, list events) except -1
