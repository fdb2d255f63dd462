"""The DSML family's compiled declarations and bare-tag grammar: see ``dsml_grammar.pyx``."""

cdef enum:
    BARE_HOLD = 0  # not decided yet: nothing consumed
    BARE_TEXT = 1  # refuted (the tag is content), or the calls ended: plain text again
    BARE_CALL = 2  # an invoke confirmed
    BARE_BLOCK = 3  # the block open tag confirmed, or the block close tag after the calls


cdef class DsmlBare:
    cdef tuple markers  # DsmlToolParser's (invoke open, parameter open, invoke close, parameter close, block close)
    cdef Py_UCS4 lead
    cdef str tag_close
    cdef str name_attr
    cdef tuple entities
    cdef str block_tag  # the block open tag without block_lead (None: not taken)
    cdef bint invokes  # an invoke without a block is taken (bare_call_open)
    # searched in plain text past the start of the answer: the invoke tag, or with a block tag too their
    # common prefix, so that a block tag glued to prose is confirmed as at the start (None: nothing)
    cdef readonly object mid_opener

    cdef int confirm_invoke(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final, object allowed) except -2
    cdef int opening(self, str text, Py_ssize_t size, bint final, object allowed, Py_ssize_t *where) except -1
    cdef int after_call(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final, object allowed,
                        Py_ssize_t *where) except -1


cdef tuple class_entry(type cls)
