"""The compiled grammar of the XML-like family, built from a dialect's declarations.

A dialect declares its markers as class attributes; ``grammar_for`` reads them
once per class. The grammar recognises one payload step at a time and
returns a result the driver applies (it never touches the parse state)::

    <tool_call>{function_open}NAME{function_name_end}
        {arg_open}KEY{arg_name_end}{value_open}VALUE{arg_value_close_tag} ...
    {function_close}</tool_call>

Qwen3-Coder: ``<function=`` NAME ``>`` ``<parameter=`` KEY ``>`` V ``</parameter>`` ``</function>``.
GLM-4.7: NAME ``<arg_key>`` KEY ``</arg_key>`` ``<arg_value>`` V ``</arg_value>``
(``function_open`` is '': the name is the text up to the first argument).
"""
from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.base cimport (
    ToolParser, class_basis, hook_overrides, immutable_type, longest_first, same_basis, tag_prefix_hold,
)

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil

_XML_HOOK_NAMES = ('_consume_function', '_consume_arg_start', '_consume_arg_name', '_consume_call_end')
PHASE_NAMES = ('function', 'arg_start', 'arg_name', 'arg_value', 'call_end', 'done')

__all__ = ['ValueEnds', 'XmlGrammar', 'clear_grammar_cache']


# ---- scanning helpers -------------------------------------------------------------

cdef inline Py_ssize_t _find(str text, str marker, Py_ssize_t start, Py_ssize_t size):
    if start >= size:
        return -1
    if PyUnicode_GET_LENGTH(marker) == 1:
        return PyUnicode_FindChar(text, PyUnicode_READ(PyUnicode_KIND(marker), PyUnicode_DATA(marker), 0),
                                  start, size, 1)
    return PyUnicode_Find(text, marker, start, size, 1)


cdef inline bint _prefix_at(str text, Py_ssize_t pos, Py_ssize_t size, str tag) noexcept:
    """``text[pos:size]`` is a non-empty proper prefix of ``tag``."""
    cdef Py_ssize_t n = size - pos
    cdef Py_ssize_t i
    cdef int kind, tkind
    cdef void *data
    cdef void *tdata
    if n <= 0 or n >= PyUnicode_GET_LENGTH(tag):
        return False
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    tkind = PyUnicode_KIND(tag)
    tdata = PyUnicode_DATA(tag)
    for i in range(n):
        if PyUnicode_READ(kind, data, pos + i) != PyUnicode_READ(tkind, tdata, i):
            return False
    return True


cdef bint _declared_prefix_at(str text, Py_ssize_t pos, Py_ssize_t size, tuple prefixes) noexcept:
    """``text[pos:size]`` is one of ``prefixes``."""
    cdef int kind = PyUnicode_KIND(text), pkind
    cdef void *data = PyUnicode_DATA(text)
    cdef void *pdata
    cdef Py_ssize_t n = size - pos, i
    for prefix in prefixes:
        if PyUnicode_GET_LENGTH(prefix) != n:
            continue
        pkind = PyUnicode_KIND(prefix)
        pdata = PyUnicode_DATA(prefix)
        i = 0
        while i < n and PyUnicode_READ(kind, data, pos + i) == PyUnicode_READ(pkind, pdata, i):
            i += 1
        if i == n:
            return True
    return False


cdef inline bint _partial(str text, Py_ssize_t pos, Py_ssize_t size, str marker, tuple prefixes) noexcept:
    """``text[pos:size]`` may still grow into ``marker``: any proper prefix when
    ``prefixes`` is None, else one of the declared token-aligned prefixes."""
    if prefixes is None:
        return _prefix_at(text, pos, size, marker)
    return _declared_prefix_at(text, pos, size, prefixes)


cdef inline bint _close_at(ToolParser owner, str text, Py_ssize_t pos):
    close = owner._close_tag
    return close is not None and text.startswith(close, pos)


cdef inline Py_ssize_t _skip_space(str text, Py_ssize_t pos, Py_ssize_t size):
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    while pos < size and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, pos)):
        pos += 1
    return pos


cdef inline void _set_name(str text, Py_ssize_t a, Py_ssize_t b, bint none_if_empty, XmlStep *st) noexcept:
    """The name span ``text[a:b].strip()``."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
        a += 1
    while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)):
        b -= 1
    if a == b and none_if_empty:
        a = b = -1
    st.name_start = a
    st.name_end = b


cdef inline void _name_to(str text, Py_ssize_t a, Py_ssize_t b, bint optional, XmlStep *st) noexcept:
    """The name ends at ``b``: stripped in place, or (part of it held) the raw last piece."""
    if st.held == NAME_NONE:
        st.name_raw = False
        _set_name(text, a, b, optional, st)
        return
    st.name_raw = True
    st.name_optional = optional
    st.name_start = a
    st.name_end = b


cdef inline Py_ssize_t _hold_piece(Py_ssize_t a, Py_ssize_t b, Py_ssize_t skip, int held, XmlStep *st) noexcept:
    """Need more text: ``text[a:b]`` is more of an unterminated name, the text up to ``skip`` is consumed."""
    st.piece_start = a
    st.piece_end = b
    st.skip = skip
    st.resume = 0
    st.held = held
    return -1


cdef Py_ssize_t _next_any_lead(XmlGrammar g, ToolParser owner, str text, Py_ssize_t pos, Py_ssize_t size):
    # Markers with different first characters: one pass over the text.
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_UCS4 ch, close_lead = 0
    close = owner._close_tag
    if close:
        close_lead = PyUnicode_READ(PyUnicode_KIND(close), PyUnicode_DATA(close), 0)
    while pos < size:
        ch = PyUnicode_READ(kind, data, pos)
        if ch == close_lead or PyUnicode_FindChar(g.leads, ch, 0, PyUnicode_GET_LENGTH(g.leads), 1) >= 0:
            return pos
        pos += 1
    return -1


cdef inline Py_ssize_t _next_lead(XmlGrammar g, ToolParser owner, str text, Py_ssize_t pos, Py_ssize_t size,
                                  XmlStep *st):
    """The next offset where a marker or the close tag may start, or -1."""
    if pos >= size:
        return -1
    if st.lead:
        return PyUnicode_FindChar(text, st.lead, pos, size, 1)
    return _next_any_lead(g, owner, text, pos, size)


cdef Py_ssize_t _bare_name(XmlGrammar g, ToolParser owner, str payload, Py_ssize_t skip, Py_ssize_t a,
                           bint final, XmlStep *st) except -2:
    """A name from ``a`` to the first argument, ``function_close`` or the close tag.

    On "need more" the driver keeps ``payload[skip:]``; ``st.resume`` counts from ``skip``.
    With ``st.may_hold`` the name text before a possible partial marker is
    consumed into the driver's held name instead.
    """
    cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
    cdef Py_ssize_t p = skip + st.resume, i
    cdef str fc = g.function_close
    if p < a:
        p = a
    while True:
        i = _next_lead(g, owner, payload, p, size, st)
        if i < 0:
            if final and (a < size or st.held != NAME_NONE):
                # End of input: the rest is the name (LMDeploy's rule for GLM).
                _name_to(payload, a, size, True, st)
                st.phase = PH_DONE
                return size
            if st.may_hold:
                return _hold_piece(a, size, size, NAME_OPEN, st)
            st.skip = skip
            st.resume = size - skip
            return -1
        if payload.startswith(g.arg_open, i):
            _name_to(payload, a, i, False, st)
            st.phase = PH_ARG_START
            return i
        if fc is not None and payload.startswith(fc, i):
            _name_to(payload, a, i, True, st)
            st.phase = PH_DONE
            return i + PyUnicode_GET_LENGTH(fc)
        if _close_at(owner, payload, i):
            _name_to(payload, a, i, True, st)
            st.phase = PH_DONE
            return i
        if not final and (_partial(payload, i, size, g.arg_open, g.arg_open_prefixes)
                          or (fc is not None and _partial(payload, i, size, fc, g.function_close_prefixes))
                          or owner.close_prefix_at(payload, i)):
            if st.may_hold:
                return _hold_piece(a, i, i, NAME_OPEN, st)
            st.skip = skip
            st.resume = i - skip
            return -1
        p = i + 1


cdef Py_ssize_t _held_name_end(str payload, Py_ssize_t a, Py_ssize_t size, str ne, bint final,
                               XmlStep *st) except -2:
    """A ``function_open`` name held by the driver, from ``a`` to ``function_name_end``."""
    cdef Py_ssize_t j = _find(payload, ne, a, size)
    if j < 0:
        j = size if final else tag_prefix_hold(payload, a, ne)
        return _hold_piece(a, j, j, NAME_OPEN, st)
    _name_to(payload, a, j, False, st)
    st.phase = PH_ARG_START
    return j + PyUnicode_GET_LENGTH(ne)


# ---- a step by a Python hook ------------------------------------------------------

cdef int _phase_code(object name, tuple allowed, str hook) except -1:
    cdef int i
    for i in range(len(PHASE_NAMES)):
        if PHASE_NAMES[i] == name and name in allowed:
            return i
    raise ValueError(f'{hook} returned phase {name!r}; expected one of {allowed}')


cdef object python_step(ToolParser owner, int phase, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                        XmlStep *st):
    """Run the Python hook of ``phase`` and check its result: None (need more
    text) or ``(next_pos, name)``, with the phase it leads to in ``st.phase``."""
    st.skip = pos
    st.resume = 0
    if pos >= size and not (final and phase == PH_CALL_END):
        return None
    name = None
    if phase == PH_FUNCTION:
        hook = '_consume_function'
        result = owner._consume_function(text, pos, final)
    elif phase == PH_ARG_START:
        hook = '_consume_arg_start'
        result = owner._consume_arg_start(text, pos)
    elif phase == PH_ARG_NAME:
        hook = '_consume_arg_name'
        result = owner._consume_arg_name(text, pos)
    else:
        hook = '_consume_call_end'
        result = owner._consume_call_end(text, pos, final)
    if result is None:
        return None
    where = f'{type(owner).__name__}.{hook}'
    if not isinstance(result, tuple) or len(result) != (3 if phase == PH_FUNCTION else 2):
        raise ValueError(f'{where} returned {result!r}; expected a tuple or None')
    r = result[0]
    if not isinstance(r, int) or isinstance(r, bool) or not pos <= r <= size:
        raise ValueError(f'{hook} returned position {r!r}; expected an int in [{pos}, {size}]')
    if phase == PH_FUNCTION:
        name = result[1]
        st.phase = _phase_code(result[2], ('arg_start', 'done'), hook)
        if not (isinstance(name, str) or (name is None and st.phase == PH_DONE)):
            raise ValueError(f'{where} returned name {name!r}; expected a str')
    elif phase == PH_ARG_START:
        st.phase = _phase_code(result[1], ('arg_name', 'done'), hook)
    elif phase == PH_ARG_NAME:
        name = result[1]
        if not isinstance(name, str):
            raise ValueError(f'{where} returned name {name!r}; expected a str')
    else:
        st.phase = _phase_code(result[1], ('function', 'done'), hook)
    return r, name


# ---- declarations -> grammar --------------------------------------------------------

cdef str _marker(type cls, str attr, bint may_be_empty):
    value = getattr(cls, attr)
    if value is None:
        return None
    if not isinstance(value, str) or (not value and not may_be_empty):
        raise TypeError(f'{cls.__name__}.{attr} must be a non-empty str or None, not {value!r}')
    return <str>value


cdef tuple _prefixes(type cls, str attr, str marker):
    declared = getattr(cls, attr)
    if declared is None or marker is None:
        return None
    prefixes = longest_first(declared)
    for prefix in prefixes:
        if not isinstance(prefix, str) or not prefix or len(prefix) >= len(marker) or not marker.startswith(prefix):
            raise TypeError(f'{cls.__name__}.{attr}: {prefix!r} is not a proper prefix of {marker!r}')
    return prefixes


cdef class ValueEnds:
    """What ends a value in one kind of block, and what confirms each end (read-only)."""

    def __repr__(self):
        fields = ('close', 'function_close', 'block', 'close_follow', 'fc_follow', 'block_follow', 'confirm_close', 'drift')
        return 'ValueEnds(' + ', '.join(f'{f}={getattr(self, f)!r}' for f in fields) + ')'


cdef class XmlGrammar:
    """One dialect's markers, compiled; shared by every parser of its class (read-only)."""

    @property
    def python_hooks(self):
        """The hooks this class overrides in Python (the rest run compiled)."""
        return tuple(name for i, name in enumerate(_XML_HOOK_NAMES) if self.hooks & (1 << i))

    def __repr__(self):
        fields = ('function_open', 'function_name_end', 'arg_open', 'arg_name_end', 'value_open',
                  'value_close', 'function_close', 'multiple_calls', 'value_ends', 'bare_open')
        return 'XmlGrammar(' + ', '.join(f'{f}={getattr(self, f)!r}' for f in fields) + ')'

    cdef ValueEnds value_ends_for(self, object close_tag):
        """What ends a value in a block closed by ``close_tag`` (None: no close tag)."""
        cdef ValueEnds e = self.value_ends
        if close_tag == e.block:
            return e
        return _value_ends(e, close_tag)

    cdef Py_UCS4 block_lead(self, object close_tag):
        cdef Py_UCS4 lead = self.lead
        if close_tag and lead and PyUnicode_READ(PyUnicode_KIND(close_tag), PyUnicode_DATA(close_tag), 0) != lead:
            return 0
        return lead

    # ---- one step each; -1 means "need more text" (see XmlStep) -------------

    cdef Py_ssize_t function(self, ToolParser owner, str payload, Py_ssize_t pos, bint final, XmlStep *st) except -2:
        cdef str fo = self.function_open, ne = self.function_name_end
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t p = pos, i, a, s, j
        st.piece_start = -1
        if fo is None:
            raise NotImplementedError(f'{type(owner).__name__}._consume_function has not been implemented')
        if not fo and ne is not None:
            # The block's open tag leads into the name, which ends at function_name_end
            # (MiniCPM 5: '<function name="' NAME '">').
            if st.may_hold or st.held != NAME_NONE:
                return _held_name_end(payload, pos, size, ne, final, st)
            j = _find(payload, ne, pos + st.resume, size)
            if j < 0:
                st.skip = pos
                st.resume = size - pos - PyUnicode_GET_LENGTH(ne) + 1
                if st.resume < 0:
                    st.resume = 0
                return -1
            _set_name(payload, pos, j, False, st)
            st.phase = PH_ARG_START
            return j + PyUnicode_GET_LENGTH(ne)
        if not fo or (st.held != NAME_NONE and ne is None):
            return _bare_name(self, owner, payload, pos, pos, final, st)
        if st.held != NAME_NONE:  # more of a held ``function_open`` name
            return _held_name_end(payload, pos, size, ne, final, st)
        while True:
            i = _next_lead(self, owner, payload, p, size, st)
            if i < 0:
                st.skip = size  # no marker: junk before the first call
                st.resume = 0
                return -1
            if payload.startswith(fo, i):
                a = i + PyUnicode_GET_LENGTH(fo)
                if ne is None:
                    if i != pos:
                        st.resume = 0
                    return _bare_name(self, owner, payload, i, a, final, st)
                if st.may_hold:
                    return _held_name_end(payload, a, size, ne, final, st)
                s = a
                if i == pos and pos + st.resume > s:
                    s = pos + st.resume
                j = _find(payload, ne, s, size)
                if j < 0:
                    st.skip = i
                    st.resume = size - i - PyUnicode_GET_LENGTH(ne) + 1
                    if st.resume < 0:
                        st.resume = 0
                    return -1
                _set_name(payload, a, j, False, st)
                st.phase = PH_ARG_START
                return j + PyUnicode_GET_LENGTH(ne)
            if _close_at(owner, payload, i):
                st.name_start = st.name_end = -1
                st.phase = PH_DONE
                return i
            if not final and (_partial(payload, i, size, fo, self.function_open_prefixes)
                              or owner.close_prefix_at(payload, i)):
                st.skip = i
                st.resume = 0
                return -1
            p = i + 1

    cdef Py_ssize_t arg_start(self, ToolParser owner, str payload, Py_ssize_t pos, XmlStep *st) except -2:
        cdef str ao = self.arg_open, fc = self.function_close, fo = self.function_open
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t p = pos, i
        if ao is None:
            raise NotImplementedError(f'{type(owner).__name__}._consume_arg_start has not been implemented')
        if fo is not None and not fo:
            fo = None  # a bare name cannot be told from text
        while True:
            i = _next_lead(self, owner, payload, p, size, st)
            if i < 0:
                st.skip = size
                st.resume = 0
                return -1
            if payload.startswith(ao, i):
                st.phase = PH_ARG_NAME
                return i + PyUnicode_GET_LENGTH(ao)
            if fc is not None and payload.startswith(fc, i):
                st.phase = PH_DONE
                return i + PyUnicode_GET_LENGTH(fc)
            if (fo is not None and payload.startswith(fo, i)) or _close_at(owner, payload, i):
                # The call ends here (its function_close, if any, is missing).
                st.phase = PH_DONE
                return i
            if (_partial(payload, i, size, ao, self.arg_open_prefixes)
                    or (fc is not None and _partial(payload, i, size, fc, self.function_close_prefixes))
                    or (fo is not None and _partial(payload, i, size, fo, self.function_open_prefixes))
                    or owner.close_prefix_at(payload, i)):
                st.skip = i
                st.resume = 0
                return -1
            p = i + 1

    cdef Py_ssize_t arg_name(self, ToolParser owner, str payload, Py_ssize_t pos, XmlStep *st) except -2:
        cdef str end = self.arg_name_end, vo = self.value_open
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t m, k, v
        if end is None:
            raise NotImplementedError(f'{type(owner).__name__}._consume_arg_name has not been implemented')
        st.piece_start = -1
        m = PyUnicode_GET_LENGTH(end)
        if st.held == NAME_DONE:  # the name is held whole: find its value opener
            v = _find(payload, vo, pos, size)
            if v < 0:
                return _hold_piece(-1, -1, tag_prefix_hold(payload, pos, vo), NAME_DONE, st)
            _name_to(payload, pos, pos, False, st)
            return v + PyUnicode_GET_LENGTH(vo)
        k = _find(payload, end, pos + st.resume, size)
        if k < 0:
            if st.may_hold:
                k = tag_prefix_hold(payload, pos, end)
                return _hold_piece(pos, k, k, NAME_OPEN, st)
            st.skip = pos
            st.resume = size - pos - m + 1
            if st.resume < 0:
                st.resume = 0
            return -1
        if vo is None:
            _name_to(payload, pos, k, False, st)
            return k + m
        v = _find(payload, vo, k + m, size)  # text between the two markers is dropped
        if v < 0:
            if st.may_hold:
                return _hold_piece(pos, k, tag_prefix_hold(payload, k + m, vo), NAME_DONE, st)
            st.skip = pos
            st.resume = k - pos
            return -1
        _name_to(payload, pos, k, False, st)
        return v + PyUnicode_GET_LENGTH(vo)

    cdef Py_ssize_t call_end(self, str payload, Py_ssize_t pos, bint final, XmlStep *st) except -2:
        cdef str fo = self.function_open
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(payload)
        cdef Py_ssize_t p = _skip_space(payload, pos, size)
        if self.multiple_calls:
            if p < size and payload.startswith(fo, p):
                st.phase = PH_FUNCTION
                return p
            if not final and (p == size or _partial(payload, p, size, fo, self.function_open_prefixes)):
                st.skip = p
                st.resume = 0
                return -1
        st.phase = PH_DONE
        return p


cdef object _declared_tag(type cls, str getter, str attr):
    """A class's outer tag (a non-empty str) or None; a getter that needs an instance: the attribute."""
    try:
        tag = getattr(cls, getter)()
    except NotImplementedError:
        return None
    except TypeError:
        tag = getattr(cls, attr, None)
    return tag if isinstance(tag, str) and tag else None


cdef ValueEnds _value_ends(ValueEnds base, object block):
    """``base`` for a block closed by ``block`` (None: no close tag)."""
    cdef ValueEnds e = ValueEnds.__new__(ValueEnds)
    block = block if isinstance(block, str) and block else None
    e.close = base.close
    e.function_close = base.function_close
    e.block = block
    e.close_follow = base.close_follow
    e.fc_follow = base.fc_follow
    e.block_follow = base.block_follow
    e.confirm_close = base.confirm_close
    e.drift = base.drift
    e.leads = ''.join({m[0] for m in (e.close, e.function_close, block) if m})
    e.lead = e.leads[0] if len(e.leads) == 1 else 0
    return e


cdef XmlGrammar _build(type cls):
    cdef XmlGrammar g = XmlGrammar.__new__(XmlGrammar)
    g.function_open = _marker(cls, 'function_open', True)
    g.function_name_end = _marker(cls, 'function_name_end', False)
    g.arg_open = _marker(cls, 'arg_open', False)
    g.arg_name_end = _marker(cls, 'arg_name_end', False)
    g.value_open = _marker(cls, 'value_open', False)
    g.function_close = _marker(cls, 'function_close', False)
    g.multiple_calls = bool(cls.multiple_calls)
    if g.function_open == '' and g.arg_open is None:
        raise TypeError(f'{cls.__name__}: a bare function name (function_open = "") needs arg_open')
    if g.multiple_calls and not g.function_open:
        raise TypeError(f'{cls.__name__}.multiple_calls needs a non-empty function_open marker')
    g.function_open_prefixes = _prefixes(cls, 'function_open_prefixes', g.function_open or None)
    g.arg_open_prefixes = _prefixes(cls, 'arg_open_prefixes', g.arg_open)
    g.function_close_prefixes = _prefixes(cls, 'function_close_prefixes', g.function_close)
    leads = []
    for marker in (g.function_open, g.arg_open, g.function_close):
        if marker and marker[0] not in leads:
            leads.append(marker[0])
    g.leads = ''.join(leads)
    g.lead = g.leads[0] if len(g.leads) == 1 else 0

    close = cls.arg_value_close_tag
    g.value_close = close if isinstance(close, str) and close else None
    g.value_prefixes = longest_first(cls.arg_value_close_prefixes)
    g.hold_all_value_prefixes = g.value_prefixes is None
    if g.hold_all_value_prefixes:
        g.value_prefixes = ()
    g.strip_newlines = bool(cls.strip_value_newlines)
    g.cdata_values = bool(getattr(cls, 'cdata_values', False))
    g.quoted_numbers = bool(cls.quoted_numbers)
    for gone in ('value_end_tags', 'value_ends_at_function_close'):
        if getattr(cls, gone, None):
            raise TypeError(f'{cls.__name__}.{gone} is no longer a declaration: the family ends a value at its '
                            f'close tag, function_close or the block\'s close tag when what follows confirms it')
    g.hooks = hook_overrides(cls, _XML_HOOK_NAMES)
    # Marker text inside a value is text unless what follows it confirms it as structure.
    cdef ValueEnds e = ValueEnds.__new__(ValueEnds)
    e.close = g.value_close
    e.function_close = g.function_close
    fo = g.function_open or None
    e.close_follow = tuple(m for m in (g.arg_open, g.function_close, fo) if m)
    e.fc_follow = (fo,) if fo else ()
    e.block_follow = (_declared_tag(cls, 'get_tool_open_tag', 'tool_open_tag'),)
    e.confirm_close = g.arg_open is not None and not (g.hooks & (XH_ARG_START | XH_CALL_END))
    if e.block_follow[0] is None:
        e.block_follow = ()
    e.drift = e.confirm_close and e.close is not None and len(e.close) > 3 and e.close.endswith('>')
    g.value_ends = _value_ends(e, _declared_tag(cls, 'get_tool_close_tag', 'tool_close_tag'))
    bare = cls.bare_call_open
    if bare is not None and (bare != g.function_open or not bare or g.function_name_end is None):
        raise TypeError(f'{cls.__name__}.bare_call_open must be None or function_open ({g.function_open!r}) '
                        f'with a function_name_end, not {bare!r}')
    # a bare call is decided by the compiled steps: a Python hook turns it off
    g.bare_open = g.function_open if bare is not None and not g.hooks else None
    return g


# Everything _build reads from a class.
cdef tuple _BASIS_NAMES = (
    'function_open', 'function_name_end', 'arg_open', 'arg_name_end', 'value_open', 'function_close',
    'multiple_calls', 'function_open_prefixes', 'arg_open_prefixes', 'function_close_prefixes',
    'arg_value_close_tag', 'arg_value_close_prefixes', 'strip_value_newlines', 'cdata_values', 'quoted_numbers',
    'value_end_tags', 'value_ends_at_function_close', 'bare_call_open', 'tool_open_tag', 'get_tool_open_tag', 'tool_close_tag',
    'get_tool_close_tag') + _XML_HOOK_NAMES

# class -> XmlGrammar, keyed by the class object. A compiled class's entry is
# final; a Python class's is reused while the class still resolves every
# declaration and hook to the same objects (a change takes effect on the next
# parser). Free-threaded builds: entries are never modified once stored, so
# a race only builds one twice.
cdef dict _grammars = {}


cdef XmlGrammar grammar_for(type cls):
    cdef bint frozen = immutable_type(cls)
    basis = None
    found = _grammars.get(cls)
    if found is not None:
        if frozen:
            return <XmlGrammar>found
        basis = class_basis(cls, _BASIS_NAMES)
        if same_basis((<XmlGrammar>found).basis, basis):
            return <XmlGrammar>found
    cdef XmlGrammar g = _build(cls)
    if not frozen:
        g.basis = basis if basis is not None else class_basis(cls, _BASIS_NAMES)
    if len(_grammars) >= 256:  # bound the entries of classes made on the fly
        _grammars.clear()
    _grammars[cls] = g
    return g


def clear_grammar_cache():
    """Forget every compiled grammar (changes to a dialect class are also seen without it)."""
    _grammars.clear()
