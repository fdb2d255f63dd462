"""The head of a pythonic call list (``[ NAME (``) and the character classes the family reads."""

cdef enum:
    HEAD_UNDECIDED = 0
    HEAD_CALL = 1
    HEAD_REJECTED = 2
    # The longest call name taken when no name filter applies (a head is undecided for at most this long).
    MAX_OPEN_NAME = 256


cdef inline bint _ws(Py_UCS4 ch) noexcept:
    return ch == u' ' or ch == u'\n' or ch == u'\r' or ch == u'\t' or ch == u'\f'


cdef inline bint _ident_start(Py_UCS4 ch) noexcept:
    return (u'a' <= ch <= u'z') or (u'A' <= ch <= u'Z') or ch == u'_' or (ch > 127 and (<str>chr(ch)).isidentifier())


cdef inline bint _ident_char(Py_UCS4 ch) noexcept:
    return _ident_start(ch) or (u'0' <= ch <= u'9')


cdef inline bint _name_char(Py_UCS4 ch) noexcept:
    # a call's name: an identifier, or a tool name with '-' / '.' written as one
    return _ident_char(ch) or ch == u'-' or ch == u'.'


cdef tuple pythonic_head(str text, Py_ssize_t size, bint final, object allowed, bint bracket)
