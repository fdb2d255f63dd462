"""The DSML family's compiled declarations: its markers, built once per class, and the grammar of
its tags written without their block.

Two spellings SGLang's DeepSeek V3.2 / V4 detector tests write, each
structure only when the grammar confirms it (the marker rule; see
``docs/behaviour/malformed.md``):

- the block open tag without the declared ``block_lead``
  (``<｜DSML｜tool_calls>`` at the start of the answer): declared to the router
  as a bare opener anchored at the start of the plain channel; it opens the
  block only when an invoke open tag follows it after at most
  ``CONFIRM_WINDOW`` whitespace characters;
- an invoke with no block at all (``Checking.<｜DSML｜invoke name="X">...``,
  "DeepSeek V4 often" writes one), declared by ``bare_call_open``: searched
  anywhere in plain text; a call only when its header is complete and
  well-formed (whitespace, a name attribute naming an offered tool, the tag
  end within ``BARE_HEADER`` characters) and, after at most
  ``CONFIRM_WINDOW`` whitespace characters, a parameter open tag or the invoke
  close tag follows (or the header closes itself, ``/>``). The calls are a
  block of their own: a further confirmed invoke continues it, the block close
  tag after them is consumed, anything else is plain text again.

Until decided the text is held (in the router's buffer); refuted, or
unconfirmed at the end of the output, the tag is content and what follows it
is read as plain text again.
"""
from cpython.unicode cimport PyUnicode_Find

from lmparse.tools.attributes cimport _attribute, _attribute_text, _skip_space
from lmparse.tools.base cimport class_basis, immutable_type, marker_match, same_basis

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

cdef enum:
    # the longest invoke header (after the tag name) read as a bare call's
    BARE_HEADER = 256
    # whitespace between a tag and the tag that confirms it (dsml's _CONFIRM_WINDOW)
    CONFIRM_WINDOW = 64
    # indices in ``markers``
    _INVOKE = 0
    _PARAM = 1
    _INVOKE_CLOSE = 2
    _BLOCK_CLOSE = 4


cdef class DsmlBare:
    """The confirmation grammar of one DSML dialect's bare tags (built once per parser class)."""

    def __cinit__(self, tuple markers, str tag_close, str name_attr, tuple entities, object block_tag, bint invokes):
        self.markers = markers
        self.lead = (<str>markers[_INVOKE])[0]
        self.tag_close = tag_close
        self.name_attr = name_attr
        self.entities = entities
        self.block_tag = block_tag
        self.invokes = invokes
        invoke = <str>markers[_INVOKE]
        self.mid_opener = invoke if invokes else None
        if invokes and block_tag is not None:
            n = 0
            while n < min(len(invoke), len(block_tag)) and invoke[n] == block_tag[n]:
                n += 1
            if n > 1:
                self.mid_opener = invoke[:n]

    cdef int confirm_invoke(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final, object allowed) except -2:
        """The invoke open tag at ``pos`` written without a block: 1 a call, 0 text, -1 not decided yet."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t a = pos + PyUnicode_GET_LENGTH(<str>self.markers[_INVOKE]), b, gt, at, q
        cdef Py_ssize_t value_end = 0
        cdef int found, closing
        if a >= size:
            return 0 if final else -1
        if not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
            return 0  # another word (``<｜DSML｜invoked``), not the tag
        gt = PyUnicode_Find(text, self.tag_close, a, size if size - a <= BARE_HEADER else a + BARE_HEADER, 1)
        if gt < 0:
            return 0 if final or size - a >= BARE_HEADER else -1
        b = gt
        if b > a and PyUnicode_READ(kind, data, b - 1) == u'/':
            b -= 1
        at = _attribute(text, kind, data, a, b, self.name_attr, &value_end)
        if at < 0 or value_end <= at:
            return 0
        if allowed is not None and _attribute_text(text, at, value_end, self.entities) not in allowed:
            return 0  # a name the request does not offer: quoted markup, not a call
        if b < gt:
            return 1  # ``<TOKEN invoke name="X"/>``: a call without arguments
        gt += PyUnicode_GET_LENGTH(self.tag_close)
        q = _skip_space(kind, data, gt, size)
        if q - gt > CONFIRM_WINDOW:
            return 0
        if q == size:
            return 0 if final else -1
        if PyUnicode_READ(kind, data, q) != self.lead:
            return 0
        found = marker_match(kind, data, q, size, <str>self.markers[_PARAM])
        closing = marker_match(kind, data, q, size, <str>self.markers[_INVOKE_CLOSE])
        if found == 2 or closing == 2:
            return 1
        return -1 if (found == 1 or closing == 1) and not final else 0

    cdef int opening(self, str text, Py_ssize_t size, bint final, object allowed, Py_ssize_t *where) except -1:
        """The start of a bare block (the router saw its opener whole): the block tag after whitespace
        (BARE_BLOCK, ``where`` past it) or an invoke (BARE_CALL, ``where`` at it); BARE_HOLD; BARE_TEXT
        (``where``: the end of the text that is content)."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t pos = _skip_space(kind, data, 0, size), end = pos, at
        cdef int found
        where[0] = pos
        if self.invokes and pos < size:
            found = marker_match(kind, data, pos, size, <str>self.markers[_INVOKE])
            if found == 2:
                found = self.confirm_invoke(text, pos, size, final, allowed)
                if found == 0:
                    where[0] = pos + PyUnicode_GET_LENGTH(<str>self.markers[_INVOKE])
                return BARE_HOLD if found < 0 else (BARE_CALL if found else BARE_TEXT)
            if found == 1 and not final:
                return BARE_HOLD  # the shared prefix (mid_opener) may still become an invoke
        if self.block_tag is None:
            found = 0
        else:
            found = marker_match(kind, data, pos, size, self.block_tag) if pos < size else 1
        if found == 2:
            end = pos + PyUnicode_GET_LENGTH(self.block_tag)
            at = _skip_space(kind, data, end, size)
            if at - end <= CONFIRM_WINDOW:
                found = 1 if at == size else (marker_match(kind, data, at, size, <str>self.markers[_INVOKE])
                                              if PyUnicode_READ(kind, data, at) == self.lead else 0)
                if found == 2:
                    where[0] = end
                    return BARE_BLOCK
            else:
                found = 0
        if found == 1 and not final:
            return BARE_HOLD
        # refuted: the text up to past the tag (at least one character, so the search moves on) is content
        where[0] = end if end > pos else pos + 1
        return BARE_TEXT

    cdef int after_call(self, str text, Py_ssize_t pos, Py_ssize_t size, bint final, object allowed,
                        Py_ssize_t *where) except -1:
        """After an invoke of a bare block: another confirmed invoke (BARE_CALL, ``where`` past its tag
        name), the block close tag (BARE_BLOCK, ``where`` at it), BARE_HOLD, or BARE_TEXT: the block ends
        at ``pos``, before the whitespace."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef Py_ssize_t at = _skip_space(kind, data, pos, size)
        cdef int found, closing, verdict
        if at == size and not final:
            return BARE_HOLD  # whitespace may come before the next invoke
        if at < size and PyUnicode_READ(kind, data, at) == self.lead:
            found = marker_match(kind, data, at, size, <str>self.markers[_INVOKE])
            closing = marker_match(kind, data, at, size, <str>self.markers[_BLOCK_CLOSE])
            if found == 2:
                verdict = self.confirm_invoke(text, at, size, final, allowed)
                if verdict < 0:
                    return BARE_HOLD
                if verdict == 1:
                    where[0] = at + PyUnicode_GET_LENGTH(<str>self.markers[_INVOKE])
                    return BARE_CALL
            elif closing == 2:
                where[0] = at
                return BARE_BLOCK
            elif not final and (found == 1 or closing == 1):
                return BARE_HOLD
        return BARE_TEXT


# The declarations a dialect's whole syntax is built from.
cdef tuple _DECLARED = ('dsml_token', 'tool_calls_block_name', 'invoke_element', 'parameter_element', 'block_lead',
                        'tag_open', 'end_tag_open', 'tag_close', 'call_name_attribute', 'parameter_key_attribute',
                        'string_attribute', 'string_attribute_values', 'string_by_default', 'schema_typed_values',
                        'attribute_entities', 'block_open_tag', 'block_close_tag', 'bare_call_open',
                        'block_text_is_content')
cdef tuple _STR_DECLARED = ('dsml_token', 'tool_calls_block_name', 'invoke_element', 'parameter_element',
                            'block_lead', 'tag_open', 'end_tag_open', 'tag_close', 'call_name_attribute',
                            'parameter_key_attribute')

# class -> (declared values, markers, open tag, settings, bare_call_open, DsmlBare, block_text_is_content): joining the markers
# costs more than the rest of a parser's construction. A compiled class's entry
# is final; a Python class's declarations are compared by identity at each use
# (the base's class_basis), so a changed declaration rebuilds its entry.
# Threads racing on a miss only build the same entry twice.
cdef dict _marker_cache = {}


cdef tuple class_entry(type cls):
    entry = _marker_cache.get(cls)
    if entry is not None and immutable_type(cls):
        return <tuple>entry
    declared = class_basis(cls, _DECLARED)
    if entry is not None and same_basis(<tuple>(<tuple>entry)[0], declared):
        return <tuple>entry
    values = dict(zip(_DECLARED, declared))
    for name in _STR_DECLARED:
        if not isinstance(values[name], str):
            raise TypeError(f'{cls.__name__}.{name} must be str, got {type(values[name]).__name__}')
    token, block, invoke, parameter, lead = declared[:5]
    t_open, t_end, t_close = values['tag_open'], values['end_tag_open'], values['tag_close']
    if not t_open or not t_end or not t_close or t_open[0] != t_end[0]:
        raise TypeError(f'{cls.__name__}: tag_open and end_tag_open must be non-empty and start with the same '
                        f'character, tag_close non-empty')
    string_attr = values['string_attribute']
    if string_attr is not None and not isinstance(string_attr, str):
        raise TypeError(f'{cls.__name__}.string_attribute must be str or None')
    block_open, block_close = values['block_open_tag'], values['block_close_tag']
    bare_invoke = values['bare_call_open']
    for name, tag in (('block_open_tag', block_open), ('block_close_tag', block_close)):
        if tag is not None and (not isinstance(tag, str) or not tag or tag[0] != t_open[0]):
            raise TypeError(f'{cls.__name__}.{name} must be None or a non-empty str starting with {t_open[0]!r}')
    markers = (f'{t_open}{token}{invoke}', f'{t_open}{token}{parameter}', f'{t_end}{token}{invoke}{t_close}',
               f'{t_end}{token}{parameter}{t_close}',
               block_close if block_close is not None else f'{t_end}{token}{block}{t_close}')
    if bare_invoke is not None and bare_invoke != markers[_INVOKE]:
        raise TypeError(f'{cls.__name__}.bare_call_open must be None or the invoke open tag {markers[_INVOKE]!r}')
    string_values = values['string_attribute_values']
    settings = (t_close, values['call_name_attribute'], values['parameter_key_attribute'], string_attr,
                (string_values,) if isinstance(string_values, str) else tuple(string_values), bool(values['string_by_default']),
                bool(values['schema_typed_values']), tuple(tuple(p) for p in values['attribute_entities']))
    open_tag = f'{lead}{block_open}' if block_open is not None else f'{lead}{t_open}{token}{block}{t_close}'
    # the block tag without its lead (taken only at the start of the answer) and bare invokes
    bare = DsmlBare(markers, t_close, values['call_name_attribute'], settings[7], open_tag[len(lead):] if lead else None,
                    bare_invoke is not None)
    entry = (declared, markers, open_tag, settings, bare_invoke, bare, bool(values['block_text_is_content']))
    if len(_marker_cache) >= 256:
        _marker_cache.clear()
    _marker_cache[cls] = entry
    return <tuple>entry
