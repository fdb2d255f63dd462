# Text held across chunks (see held_text.pyx): ``len`` characters of one PEP 393 ``kind``.
# A zeroed struct is empty; held_free releases the buffer and leaves it empty.
cdef struct HeldText:
    char *data
    Py_ssize_t len
    Py_ssize_t cap
    int kind


cdef int held_append(HeldText *h, str text, Py_ssize_t a, Py_ssize_t b) except -1
cdef str held_take(HeldText *h, Py_ssize_t a, Py_ssize_t b)
cdef str held_take_with(HeldText *h, str text, Py_ssize_t a, Py_ssize_t b)
cdef void held_free(HeldText *h) noexcept
