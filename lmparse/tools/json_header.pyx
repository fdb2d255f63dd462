"""Tool calls written as a name header and one JSON value, one call per block.

    {open}NAME{argument_marker}{json}
    {open}NAME{call_id_marker}ID{argument_marker}{json}

Mistral's tokenizers from v11 on (mistral-common ``InstructTokenizerV11`` /
``V13``): ``[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}``, with the model's
call id ``[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]{...}`` in v11;
several calls repeat the open tag. The block has no close tag: it ends with
the JSON value (text after it is content), or where the next open tag
starts outside a string (a value cut short). ``NAME{...}`` (the arguments'
brace right after the name, no marker) is read the same way when the dialect
declares ``brace_starts_arguments``.

A payload that starts with ``{`` or ``[`` (not a marker) is the JSON envelope
family's layout instead: Mistral's pre-v11 ``[TOOL_CALLS][{"name": ..,
"arguments": ..}, ...]`` (the dialect declares ``envelope_array``). The
header is read in place (nothing is consumed until it ends, at most
``_HEADER_WINDOW`` characters); a payload that is neither (``[TOOL_CALLS]I
think...``: whitespace inside the name, a quote, a bracket) is no call, and
its text is content.
"""
from random import getrandbits as _getrandbits

from cpython.unicode cimport PyUnicode_Find, PyUnicode_Substring

from lmparse.tools.base cimport REJECTED_INDEX, ToolParser, class_basis, immutable_type, marker_match, same_basis
from lmparse.tools.base cimport tag_prefix_hold
from lmparse.tools.json_parser cimport JsonToolParser
from lmparse.tools.json_scanner cimport JsonValueScanner

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

__all__ = ['JsonHeaderToolParser']

cdef enum:
    L_UNDECIDED = 0  # the header (or the envelope's first character) is still to come
    L_ENVELOPE = 1  # the JSON envelope family's layout
    L_ARGS = 2  # the header was read: the argument value
    # The longest header (whitespace, name, call id, markers) read before it is called text.
    _HEADER_WINDOW = 256

cdef str _ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'


cdef str _alnum_id(int n):
    """``n`` random alphanumerics (six random bits per draw, 62 and 63 redrawn)."""
    cdef list out = []
    cdef object word = 0
    cdef int left = 0, v
    while len(out) < n:
        if left == 0:
            word = _getrandbits(60)
            left = 10
        v = word & 63
        word >>= 6
        left -= 1
        if v < 62:
            out.append(_ALNUM[v])
    return ''.join(out)


# class -> (argument_marker, call_id_marker, brace_starts_arguments, random_call_id_length) as
# declared; compiled classes' entries are final, Python classes' compared by identity.
cdef tuple _HEADER_NAMES = ('argument_marker', 'call_id_marker', 'brace_starts_arguments', 'random_call_id_length')
cdef dict _declared = {}


cdef tuple _declared_header(type cls):
    entry = _declared.get(cls)
    if entry is not None and immutable_type(cls):
        return <tuple>entry
    basis = class_basis(cls, _HEADER_NAMES)
    if entry is not None and same_basis(<tuple>entry, basis):
        return <tuple>entry
    marker, id_marker, _, id_len = basis
    if type(marker) is not str or not marker:
        raise TypeError(f'{cls.__name__}.argument_marker must be a non-empty str, got {marker!r}')
    if id_marker is not None and (type(id_marker) is not str or not id_marker):
        raise TypeError(f'{cls.__name__}.call_id_marker must be a non-empty str or None, got {id_marker!r}')
    if type(id_len) is not int or not 0 <= id_len <= 64:
        raise TypeError(f'{cls.__name__}.random_call_id_length must be an int in [0, 64], got {id_len!r}')
    if len(_declared) >= 256:
        _declared.clear()
    _declared[cls] = basis
    return basis


cdef inline bint _name_stop(Py_UCS4 ch) noexcept:
    # Characters no function name or call id holds: a header with one is text.
    return ch == u'"' or ch == u']' or ch == u'{' or ch == u'}' or ch == u'<' or ch < 32


cdef Py_ssize_t _args_limit(object owner, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                            bint *at_marker) except -1:
    # The next open tag (or the close tag, if any) outside a string ends the arguments.
    cdef JsonHeaderToolParser self = <JsonHeaderToolParser>owner
    cdef Py_ssize_t at = -1, c, hold
    if self._open_tag is not None:
        at = PyUnicode_Find(text, <str>self._open_tag, pos, size, 1)
    if self._close_tag is not None:
        c = PyUnicode_Find(text, <str>self._close_tag, pos, size if at < 0 else at, 1)
        if c >= 0:
            at = c
    if at >= 0:
        at_marker[0] = True
        return at
    at_marker[0] = False
    if final:
        return size
    hold = self.close_hold_end(text, pos)
    if self._open_tag is not None:
        at = tag_prefix_hold(text, pos, <str>self._open_tag)
        if at < hold:
            hold = at
    return hold


cdef class JsonHeaderToolParser(JsonToolParser):
    """``OPEN NAME [CALL_ID_MARKER ID] ARGUMENT_MARKER {json}`` calls, or JSON envelopes (see the module docs).

    A dialect declares ``tool_open_tag`` (``tool_close_tag`` None: the value
    ends the block), ``argument_marker``, and where they apply
    ``call_id_marker`` (the text between it and the argument marker is the
    model's call id), ``brace_starts_arguments``, ``envelope_array`` and
    ``random_call_id_length`` (ids of that many random alphanumerics when the
    model gives none; 0: lmparse's usual ids).
    """

    argument_marker = None
    call_id_marker = None
    brace_starts_arguments = False
    random_call_id_length = 0

    cdef int _layout
    cdef str _arg_marker
    cdef object _id_marker
    cdef bint _brace_args
    cdef int _id_len

    def __cinit__(self, *args, **kwargs):
        cdef tuple basis = _declared_header(type(self))
        self._arg_marker = <str>basis[0]
        self._id_marker = basis[1]
        self._brace_args = bool(basis[2])
        self._id_len = <int>basis[3]
        self._layout = L_UNDECIDED

    @property
    def _layout_name(self):
        return ('undecided', 'envelope', 'arguments')[self._layout]

    cdef int begin_block_c(self) except -1:
        JsonToolParser.begin_block_c(self)
        self._layout = L_UNDECIDED
        return 0

    cdef int reset_call_c(self, object call_id) except -1:
        if call_id is None and self._id_len:
            call_id = _alnum_id(self._id_len)
        return ToolParser.reset_call_c(self, call_id)

    cdef int not_a_call(self, list deltas) except -1:
        """The payload is text: the block ends before it (the router makes it content)."""
        self._output_index = REJECTED_INDEX
        self.end_block_here(deltas)
        return 0

    cdef Py_ssize_t header(self, str text, Py_ssize_t size, list deltas, bint final) except -1:
        """Read the payload's start in place; returns how much to consume (0 while undecided)."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t pos = 0, q, name_end = -1, id_start = -1, seg_end, args_at = -1
        cdef int m, mi
        cdef Py_UCS4 ch
        cdef str marker = self._arg_marker
        while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
            pos += 1
        if pos > _HEADER_WINDOW:
            self.not_a_call(deltas)
            return 0
        if pos == size:
            if final:  # only whitespace after the open tag: no call
                self._output_index = REJECTED_INDEX
                self.finish_envelope(deltas)
                return size
            return 0
        ch = PyUnicode_READ(kind, data, pos)
        if ch == u'{' or ch == u'[':
            m = marker_match(kind, data, pos, size, marker)
            mi = marker_match(kind, data, pos, size, <str>self._id_marker) if self._id_marker is not None else 0
            if m == 0 and mi == 0:
                self._layout = L_ENVELOPE
                return JsonToolParser.consume_c(self, text, deltas, final)
        # NAME [ID_MARKER ID] ARGUMENT_MARKER, read in place.
        q = seg_end = pos
        while True:
            if q - pos > _HEADER_WINDOW:
                self.not_a_call(deltas)
                return 0
            if q == size:
                if not final:
                    return 0
                # cut off inside the header: no call, and a name prefix is not text
                self._output_index = REJECTED_INDEX
                self.finish_envelope(deltas)
                return size
            ch = PyUnicode_READ(kind, data, q)
            if ch == u'[':
                m = marker_match(kind, data, q, size, marker)
                if m == 2:
                    if name_end < 0:
                        name_end = seg_end
                    args_at = q + PyUnicode_GET_LENGTH(marker)
                    break
                mi = 0
                if self._id_marker is not None and id_start < 0:
                    mi = marker_match(kind, data, q, size, <str>self._id_marker)
                    if mi == 2:
                        name_end = seg_end
                        q += PyUnicode_GET_LENGTH(<str>self._id_marker)
                        id_start = seg_end = q
                        continue
                if (m == 1 or mi == 1) and not final:
                    return 0  # a marker may still complete
                self.not_a_call(deltas)
                return 0
            if ch == u'{' and self._brace_args and id_start < 0 and seg_end > pos:
                name_end = seg_end
                args_at = q  # the brace is the value's
                break
            if Py_UNICODE_ISSPACE(ch):
                q += 1
                continue
            if id_start >= 0 and seg_end == id_start:
                id_start = q  # whitespace before the id is not the id's
            if _name_stop(ch) or (seg_end < q and seg_end > (id_start if id_start >= 0 else pos)):
                # a character no name holds, or a second word after whitespace
                self.not_a_call(deltas)
                return 0
            q += 1
            seg_end = q
        call_id = None
        if id_start >= 0 and seg_end > id_start:
            call_id = PyUnicode_Substring(text, id_start, seg_end)
        self.start_call(call_id)
        self._arguments_seen = False
        self._value_scanner.reset_c()
        if name_end > pos:
            self.emit_c(deltas, PyUnicode_Substring(text, pos, name_end), None)
            self._name_emitted = True
        else:
            self._output_index = REJECTED_INDEX  # no name: never invent one
        self._layout = L_ARGS
        return self.arguments(text, args_at, size, deltas, final)

    cdef Py_ssize_t arguments(self, str text, Py_ssize_t pos, Py_ssize_t size, list deltas, bint final) except -1:
        """Forward the argument value's stable source; the payload ends with it."""
        cdef JsonValueScanner scanner = self._value_scanner
        cdef int kind
        cdef void *data
        cdef Py_ssize_t begin
        cdef bint at_marker = False
        if not scanner.started:
            # whitespace before the value is not forwarded
            kind = PyUnicode_KIND(text)
            data = PyUnicode_DATA(text)
            while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
                pos += 1
        begin = pos
        pos = scanner.scan_to_marker(text, pos, size, self, _args_limit, final, &at_marker)
        if pos > begin:
            self._arguments_seen = True
            self.emit_c(deltas, None, PyUnicode_Substring(text, begin, pos))
        if scanner.complete or at_marker or final:
            self.finish_envelope(deltas)
        return pos

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        if self._layout == L_ENVELOPE:
            return JsonToolParser.consume_c(self, text, deltas, final)
        if self._layout == L_ARGS:
            return self.arguments(text, 0, size, deltas, final)
        return self.header(text, size, deltas, final)
