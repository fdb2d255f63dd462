"""ToolParser: the outer tool block, call identity, filtering and normalized deltas."""
from cpython.object cimport PyObject, PyObject_GenericSetAttr
from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar
from libc.string cimport memcmp

from lmparse.protocol cimport (
    DeltaToolCall,
    new_tool_arguments,
    new_tool_delta,
    new_tool_identity,
)

from types import MethodType as _MethodType

from lmparse.protocol import FunctionCall, ToolCall, random_call_id
# Pure Python, imports no compiled module: safe at import time, saves a
# function-level import on every parser construction.
from lmparse.request import _FIELDS as _REQUEST_FIELDS
from lmparse.request import ChatCompletionRequest as _OwnRequest
from lmparse.request import allowed_tool_names as _allowed_tool_names
from lmparse.request import as_request as _as_request
from lmparse.request import get_field as _get_field
from lmparse.request import prepare_tools as _prepare_tools
from lmparse.request import tool_choice_kind as _tool_choice_kind

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    unsigned long PyType_GetFlags(type)
    unsigned long Py_TPFLAGS_HEAPTYPE
    unsigned long Py_TPFLAGS_IMMUTABLETYPE


# ---- lmparse's own request type ------------------------------------------------
#
# ChatCompletionRequest keeps its fields in ``__slots__`` (its __getattr__ and
# __setattr__ only route unknown names to ``extra``), so slot access ends in the
# slot's member descriptor. Reads and the copy below call the descriptors' own
# get/set functions (PyType_GetSlot on their type: public, stable ABI, static
# types since 3.10), skipping the generic protocol's MRO lookup. The descriptors
# are the class's own, from its __dict__ at import, checked to be member
# descriptors of it. An unset slot (a request made without __init__) raises
# AttributeError: callers then take the general path, which reports it.
# Free-threaded builds: the tables are written at import, then only read.

cdef extern from "Python.h":
    void *PyType_GetSlot(type tp, int slot) except? NULL
    object PyType_GenericNew(type tp, PyObject *args, PyObject *kwds)
    int Py_tp_descr_get
    int Py_tp_descr_set

ctypedef object (*_slot_get_t)(object descr, object obj, object owner)
ctypedef int (*_slot_set_t)(object descr, object obj, object value) except -1


class _MemberProbe:
    __slots__ = ('x',)


cdef tuple _OWN_SLOTS = _REQUEST_FIELDS + ('extra',)
if len(_OWN_SLOTS) != N_OWN_SLOTS or any(_OWN_SLOTS.index(k) != v for k, v in {
        'messages': S_MESSAGES, 'tools': S_TOOLS, 'tool_choice': S_TOOL_CHOICE, 'stop': S_STOP, 'extra': S_EXTRA,
        'max_completion_tokens': S_MAX_COMPLETION_TOKENS, 'max_tokens': S_MAX_TOKENS, 'stream': S_STREAM,
        'enable_thinking': S_ENABLE_THINKING, 'reasoning_effort': S_REASONING_EFFORT,
        'response_format': S_RESPONSE_FORMAT, 'chat_template_kwargs': S_CHAT_TEMPLATE_KWARGS}.items()):
    raise ImportError('ChatCompletionRequest slots differ from the S_* indices in lmparse/tools/base.pxd')
_MEMBER_DESCRIPTOR = type(_MemberProbe.__dict__['x'])
cdef tuple _OWN_DESCRS = tuple([_OwnRequest.__dict__.get(name) for name in _OWN_SLOTS])  # kept alive here
cdef PyObject *_own_descr[N_OWN_SLOTS]
cdef _slot_get_t _own_get = <_slot_get_t>PyType_GetSlot(_MEMBER_DESCRIPTOR, Py_tp_descr_get)
cdef _slot_set_t _own_set = <_slot_set_t>PyType_GetSlot(_MEMBER_DESCRIPTOR, Py_tp_descr_set)
for _i, _descr in enumerate(_OWN_DESCRS):
    _own_descr[_i] = <PyObject *>_descr
# Attribute access and construction end in these descriptors and object.__new__:
cdef bint _OWN_GENERIC = (_OwnRequest.__getattribute__ is object.__getattribute__
                          and _OwnRequest.__new__ is object.__new__
                          and _own_get is not NULL and _own_set is not NULL
                          and all(type(d) is _MEMBER_DESCRIPTOR and d.__objclass__ is _OwnRequest
                                  for d in _OWN_DESCRS))


cdef bint is_own_request(object request) noexcept:
    """An exact ``ChatCompletionRequest`` whose slots :func:`own_slot` may read."""
    return _OWN_GENERIC and type(request) is _OwnRequest


cdef object own_slot(object request, Py_ssize_t i):
    """Slot ``i`` (S_*) of an own request (see :func:`is_own_request`); AttributeError when unset."""
    return _own_get(<object>_own_descr[i], request, _OwnRequest)


cdef object _prepare_own_request(ToolParser parser, object request):
    """``prepare_tools`` for an exact ``ChatCompletionRequest`` in the common shape, in C.

    Same result as ``lmparse.request.prepare_tools`` (which handles every other
    shape and raises the validation errors): records the allowed names and
    schemas on ``parser`` (unless None) and returns the adjusted copy, or
    returns None to defer to it.
    """
    cdef list kept
    cdef set names
    cdef dict schemas
    cdef Py_ssize_t i, size
    try:
        choice = own_slot(request, S_TOOL_CHOICE)
        extra = own_slot(request, S_EXTRA)
        tools = own_slot(request, S_TOOLS)
    except AttributeError:
        return None  # a half-built request: the general path reports it
    if not (choice is None or (type(choice) is str and (
            choice == 'auto' or choice == 'none' or choice == 'required'))):
        return None
    if type(extra) is not dict:
        return None
    names = set()
    schemas = {}
    if not tools:
        kept = None
    elif type(tools) is not list:
        return None
    else:
        kept = []
        for tool in <list>tools:
            if type(tool) is not dict:
                return None
            function = (<dict>tool).get('function')
            if type(function) is not dict or 'function' in <dict>function:
                return None
            name = (<dict>function).get('name')
            if not isinstance(name, str):
                return None  # the general path raises the validation error
            kept.append((<dict>function).copy())
            size = len(names)
            names.add(name)
            if len(names) != size:  # the first tool of a name wins
                parameters = (<dict>function).get('parameters')
                schemas[name] = parameters if isinstance(parameters, dict) else {}
    new = PyType_GenericNew(_OwnRequest, NULL, NULL)  # object.__new__(_OwnRequest), in C
    try:  # every slot through its descriptor's setter (what GenericSetAttr ends in)
        for i in range(N_OWN_SLOTS):
            value = kept if i == S_TOOLS else (<dict>extra).copy() if i == S_EXTRA else own_slot(request, i)
            _own_set(<object>_own_descr[i], new, value)
    except AttributeError:
        return None  # a half-built request: the general path reports it
    if parser is not None:
        parser._allowed_tool_names = names
        parser._tool_schemas = schemas
    return new


def _dump_own_tools(request):
    """``dump_tools(request)`` for an exact ``ChatCompletionRequest`` in the common shape, else None.

    For response parsers without a tool parser (``lmparse.response``).
    """
    if is_own_request(request):
        return _prepare_own_request(None, request)
    return None


# ---- per-class caches ------------------------------------------------------------
#
# Keyed by the class object. A type flagged immutable (every compiled class)
# cannot change after creation, so its entry never goes stale. A Python class
# can: its entry keeps what the class resolved the attributes it was derived
# from to (``basis``), and is used only while the class still resolves them to
# the same objects; assigning a hook or ``tool_close_prefixes`` on the class or
# a base takes effect on the next instance.
#
# Free-threaded builds: entries are immutable once stored and dict get/set are
# atomic, so concurrent constructions at worst compute an entry twice.

cdef bint immutable_type(type cls) noexcept:
    return (PyType_GetFlags(cls) & Py_TPFLAGS_IMMUTABLETYPE) != 0


cdef tuple class_basis(type cls, tuple names):
    """What ``cls`` resolves each of ``names`` to (a bound classmethod: its function; None: absent)."""
    cdef Py_ssize_t i, n = len(names)
    cdef list out = [None] * n
    for i in range(n):
        value = getattr(cls, <str>names[i], None)
        if type(value) is _MethodType:
            value = value.__func__
        out[i] = value
    return tuple(out)


cdef bint same_basis(tuple a, tuple b) noexcept:
    """Element-wise identity of two equally long tuples."""
    cdef Py_ssize_t i
    for i in range(len(a)):
        if <object>a[i] is not <object>b[i]:
            return False
    return True


cdef class _Hooks:
    cdef tuple names
    cdef int bits
    cdef tuple basis  # None for an immutable class


_TOOL_HOOK_NAMES = ('feed_tool_block', '_consume_stream_payload', 'begin_tool_block', '_begin_call')

__all__ = ['ToolParser']
# class -> (_Hooks, ...), one per names tuple asked for (callers pass module constants)
cdef dict _hook_cache = {}


cdef int hook_overrides(type cls, tuple names) except -1:
    """Bit i is set when hook ``names[i]`` is defined by a Python (heap) class.

    Built-in dialects are static extension types, so their hooks are called
    through the C vtable; only genuinely Python overrides pay Python dispatch.
    """
    cdef _Hooks entry
    cdef bint frozen = immutable_type(cls)
    cached = _hook_cache.get(cls)
    entries = cached if cached is not None else ()
    basis = None
    for item in <tuple>entries:
        entry = <_Hooks>item
        if entry.names is names:
            if frozen:
                return entry.bits
            basis = class_basis(cls, names)
            if same_basis(entry.basis, basis):
                return entry.bits
            break
    cdef int bits = 0
    cdef int i
    for i, name in enumerate(names):
        for klass in cls.__mro__:
            if name in klass.__dict__:
                if PyType_GetFlags(klass) & Py_TPFLAGS_HEAPTYPE:
                    bits |= 1 << i
                break
    entry = _Hooks.__new__(_Hooks)
    entry.names = names
    entry.bits = bits
    entry.basis = None if frozen else (basis if basis is not None else class_basis(cls, names))
    entries = tuple([e for e in <tuple>entries if (<_Hooks>e).names is not names] + [entry])  # no closure
    if len(_hook_cache) >= 256:
        _hook_cache.clear()
    _hook_cache[cls] = entries
    return bits


cdef class _ToolClass:
    """Per tool parser class: what every instance's __cinit__ derives from class attributes."""
    cdef int hooks
    cdef bint hold_all_close_prefixes
    cdef tuple close_prefixes
    cdef object prefixes  # tool_close_prefixes as read


# class -> _ToolClass
cdef dict _tool_classes = {}


cdef tuple longest_first(object prefixes):
    """A declared tuple of token-aligned tag prefixes, longest first (None: hold back every prefix)."""
    if prefixes is None:
        return None
    return tuple(sorted(prefixes, key=len, reverse=True))


cdef _ToolClass _tool_class(type cls):
    entry = _tool_classes.get(cls)
    if entry is not None:
        if immutable_type(cls):
            return <_ToolClass>entry
        # the hook bits are checked by hook_overrides (cached by class as well)
        if (cls.tool_close_prefixes is (<_ToolClass>entry).prefixes
                and hook_overrides(cls, _TOOL_HOOK_NAMES) == (<_ToolClass>entry).hooks):
            return <_ToolClass>entry
    cdef _ToolClass info = _ToolClass.__new__(_ToolClass)
    prefixes = info.prefixes = cls.tool_close_prefixes
    info.close_prefixes = longest_first(prefixes)
    info.hold_all_close_prefixes = info.close_prefixes is None
    if info.hold_all_close_prefixes:
        info.close_prefixes = ()
    info.hooks = hook_overrides(cls, _TOOL_HOOK_NAMES)
    # A mutable prefixes container could change in place: read it every time.
    if prefixes is None or type(prefixes) is tuple:
        if len(_tool_classes) >= 256:
            _tool_classes.clear()
        _tool_classes[cls] = info
    return info


cdef inline bint _matches_at(int kind, void *data, Py_ssize_t pos, Py_ssize_t n, str tag) noexcept:
    # text[pos:n] == tag[:n - pos]
    cdef int tkind = PyUnicode_KIND(tag)
    cdef void *tdata = PyUnicode_DATA(tag)
    cdef Py_ssize_t i
    for i in range(n - pos):
        if PyUnicode_READ(kind, data, pos + i) != PyUnicode_READ(tkind, tdata, i):
            return False
    return True


cdef Py_ssize_t tag_prefix_hold(str text, Py_ssize_t start, str tag):
    """Offset of the longest trailing proper prefix of ``tag`` in ``text[start:]``.

    Returns ``len(text)`` when no suffix of the text could still grow into the tag.
    """
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef Py_ssize_t m = PyUnicode_GET_LENGTH(tag)
    cdef Py_ssize_t p = n - m + 1
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_UCS4 first
    if m == 0:
        return n
    first = PyUnicode_READ(PyUnicode_KIND(tag), PyUnicode_DATA(tag), 0)
    if p < start:
        p = start
    while p < n:
        if PyUnicode_READ(kind, data, p) == first and _matches_at(kind, data, p, n, tag):
            return p
        p += 1
    return n


cdef int marker_match(int kind, void *data, Py_ssize_t at, Py_ssize_t size, str marker) noexcept:
    """2: ``marker`` starts at ``at``; 1: ``text[at:size]`` is a proper prefix of it; 0: neither."""
    cdef Py_ssize_t m = PyUnicode_GET_LENGTH(marker), n = size - at, i
    cdef int mkind = PyUnicode_KIND(marker)
    cdef void *mdata = PyUnicode_DATA(marker)
    if n > m:
        n = m
    if kind == mkind:
        if memcmp(<char *>data + at * kind, mdata, n * kind) != 0:
            return 0
    else:
        for i in range(n):
            if PyUnicode_READ(kind, data, at + i) != PyUnicode_READ(mkind, mdata, i):
                return 0
    return 2 if n == m else 1


cdef Py_ssize_t seek_marker(str text, Py_ssize_t pos, Py_ssize_t size, Py_UCS4 lead, tuple markers,
                            const int *wanted, bint final, int *hit) noexcept:
    """Offset of the first ``markers[k]`` (k in ``wanted``, a -1 ended array in priority order) at or
    after ``pos``; ``hit[0] = k``.

    Every marker starts with ``lead`` (one ``PyUnicode_FindChar`` per
    candidate; markers mostly start right at ``pos``). With no marker,
    ``hit[0]`` is -1 and the result is where a partial marker that may still
    complete starts (``size`` when none, or when ``final``).
    """
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t at = pos
    cdef int i, found
    cdef bint partial
    while at < size:
        if PyUnicode_READ(kind, data, at) != lead:
            at = PyUnicode_FindChar(text, lead, at, size, 1)
            if at < 0:
                break
        partial = False
        i = 0
        while wanted[i] >= 0:
            found = marker_match(kind, data, at, size, <str>markers[wanted[i]])
            if found == 2:
                hit[0] = wanted[i]
                return at
            partial |= found
            i += 1
        if partial and not final:
            hit[0] = -1
            return at
        at += 1
    hit[0] = -1
    return size


cdef object _UNDECLARED = object()


cdef object _request_updates(type cls, object request):
    """The request fields ``cls`` declares for ``request`` (None: none)."""
    settings = cls.request_settings
    with_tools = cls.request_settings_with_tools
    if not settings and not with_tools:
        return None
    updates = dict(settings) if settings else {}
    if with_tools and _get_field(request, 'tools') and _tool_choice_kind(request) != 'none':
        updates.update(with_tools)
    return updates or None


cdef class ToolParser:
    """Base class for model-specific tool-call extractors.

    Every accepted call emits its identity (id, type, name) before any
    argument fragment; arguments seen earlier are held and released in order.
    ``_payload_closed`` means the dialect's inner payload ended;
    ``block_closed`` means the whole outer block was consumed (or the final
    chunk forced it closed).
    """

    structural_tag_model = None
    reasoning_structural_tag_model = None
    # A dialect declares its outer tags as ``tool_open_tag`` / ``tool_close_tag``
    # (None: the block has no such tag); get_tool_open_tag() and
    # get_tool_close_tag() return them.
    # Request fields the dialect needs (e.g. special tokens kept in the decoded
    # text); the second dict applies only when tools are offered and
    # tool_choice is not "none".
    request_settings = None
    request_settings_with_tools = None
    # None: hold back every proper prefix of the close tag (right for any
    # chunking). A tuple: only these token-aligned prefixes, longest first.
    tool_close_prefixes = None
    # False: the model never calls tools inside reasoning (its chat template renders calls
    # after the reasoning block only), so the open tag there is reasoning text. The router
    # reads it once per response; the reasoning parser may declare the same.
    calls_in_reasoning = True
    # The opener of a call the model may write without the block's open tag
    # (Qwen3-Coder's '<function='); None: none. The XML family takes it.
    bare_call_open = None

    def __cinit__(self):
        # No arguments: Cython then ignores the constructor's instead of packing them.
        cdef _ToolClass info = _tool_class(type(self))
        self._close_tag = None
        self._active_tool_call_id = ''
        self._name_emitted = False
        self._allowed_tool_names = None
        self._tool_schemas = None
        self._output_index = PENDING_INDEX
        self._next_output_index = 0
        self._pending_arguments = []
        self._payload_closed = False
        self.block_closed = False
        self._hold_all_close_prefixes = info.hold_all_close_prefixes
        self._close_prefixes = info.close_prefixes
        self._hooks = info.hooks

    def __init__(self, *args, **kwargs):
        pass

    # ---- request --------------------------------------------------------

    def adjust_request(self, request):
        """Dump tools for the chat template, record the allowed names, apply ``request_settings``."""
        if type(request) is not _OwnRequest:
            request = _as_request(request)
        updates = _request_updates(type(self), request)
        if is_own_request(request):
            adjusted = _prepare_own_request(self, request)
            if adjusted is not None:
                if updates is not None:
                    # A fresh copy of our own type: set the fields on it (the slots' own setters).
                    for name, value in (<dict>updates).items():
                        PyObject_GenericSetAttr(adjusted, name, value)
                return adjusted
        request, self._allowed_tool_names, self._tool_schemas = _prepare_tools(request, updates)
        return request

    @classmethod
    def build_required_response_format(cls, tools, *, reasoning):
        """XGrammar structural tag forcing at least one tool call."""
        model = cls.structural_tag_model
        if reasoning and cls.reasoning_structural_tag_model is not None:
            model = cls.reasoning_structural_tag_model
        if model is None:
            raise ValueError(f'Tool parser {cls.__name__!r} does not support `tool_choice="required"`.')
        try:
            import xgrammar as xgr
        except ImportError as err:
            raise ImportError('`tool_choice="required"` needs xgrammar: pip install "lmparse[structural-tags]"') from err
        from lmparse.structural_tags import openai_tool_dict
        return xgr.get_model_structural_tag(
            model, [openai_tool_dict(t) for t in tools or ()], tool_choice='required', reasoning=reasoning,
        ).model_dump(mode='json')

    @staticmethod
    def _get_allowed_tool_names(request):
        return _allowed_tool_names(request)

    # ---- tags -----------------------------------------------------------

    @classmethod
    def get_tool_open_tag(cls):
        tag = getattr(cls, 'tool_open_tag', _UNDECLARED)
        if tag is _UNDECLARED:
            raise NotImplementedError(f'{cls.__name__}.get_tool_open_tag has not been implemented')
        return tag

    @classmethod
    def get_tool_close_tag(cls):
        tag = getattr(cls, 'tool_close_tag', _UNDECLARED)
        if tag is _UNDECLARED:
            raise NotImplementedError(f'{cls.__name__}.get_tool_close_tag has not been implemented')
        return tag

    # ---- block and call lifecycle ---------------------------------------

    def begin_tool_block(self):
        """Start one outer block right after its open tag."""
        self.begin_block_c()

    cdef int begin_block_c(self) except -1:
        self._close_tag = self.get_tool_close_tag()
        self._payload_closed = False
        self.block_closed = False
        return 0

    cdef int begin_bare_block_c(self) except -1:
        """Start a block the model opened with ``_bare_open`` instead of the open tag (left in the text)."""
        raise TypeError(f'{type(self).__name__}: this family takes no bare calls')

    def _begin_call(self, call_id=None):
        """Reset per-call state; ``call_id`` is the model's own id when it has one."""
        self.reset_call_c(call_id)

    cdef int reset_call_c(self, object call_id) except -1:
        self._active_tool_call_id = call_id if call_id is not None else random_call_id('chatcmpl-tool-')
        self._name_emitted = False
        self._output_index = PENDING_INDEX
        self._pending_arguments.clear()
        return 0

    cdef int start_call(self, object call_id) except -1:
        if self._hooks & HOOK_BEGIN_CALL:
            self._begin_call(call_id)
        else:
            self.reset_call_c(call_id)
        return 0

    def _close_tool_block(self):
        self.block_closed = True
        self._pending_arguments.clear()

    # ---- feeding ----------------------------------------------------------

    def feed_tool_block(self, str text not None, list deltas not None, *, bint final=False):
        """Consume a prefix of an open block; return how many leading chars to drop.

        ``text`` starts right after the open tag (or after what an earlier
        call consumed) and may run past the close tag into ordinary content.
        """
        return self.feed_c(text, deltas, final)

    cdef Py_ssize_t feed_c(self, str text, list deltas, bint final) except -1:
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        cdef Py_ssize_t consumed = 0, at
        if self.block_closed:
            return 0
        if not self._payload_closed:
            if self._hooks & HOOK_PAYLOAD:
                result = self._consume_stream_payload(text, deltas, final=final)
                if not isinstance(result, int) or not 0 <= result <= size:
                    raise ValueError(
                        f'{type(self).__name__}._consume_stream_payload returned {result!r}; '
                        f'expected an int in [0, {size}]')
                consumed = result
            else:
                consumed = self.consume_c(text, deltas, final)
        if self._payload_closed:
            close_tag = self._close_tag
            if close_tag is None:
                self._close_tool_block()
                return consumed
            at = PyUnicode_Find(text, close_tag, consumed, size, 1)
            if at >= 0:
                self._close_tool_block()
                return at + PyUnicode_GET_LENGTH(close_tag)
            if final:
                self._close_tool_block()
                return size
            return self.close_hold_end(text, consumed)
        if final:
            self._close_tool_block()
            return size
        return consumed

    def _consume_stream_payload(self, str text not None, list deltas not None, *, bint final=False):
        """Consume the dialect's inner payload (never the outer close tag)."""
        return self.consume_c(text, deltas, final)

    cdef Py_ssize_t consume_c(self, str text, list deltas, bint final) except -1:
        raise NotImplementedError(f'{type(self).__name__}._consume_stream_payload has not been implemented')

    # ---- close-tag prefixes -----------------------------------------------

    cdef Py_ssize_t close_hold_end(self, str text, Py_ssize_t start):
        """End of the consumable prefix before a possible partial close tag."""
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        close_tag = self._close_tag
        if close_tag is None:
            return size
        if self._hold_all_close_prefixes:
            return tag_prefix_hold(text, start, <str>close_tag)
        for prefix in self._close_prefixes:
            if text.endswith(prefix, start):
                return size - PyUnicode_GET_LENGTH(prefix)
        return size

    cdef bint close_prefix_at(self, str text, Py_ssize_t pos):
        """Whether ``text[pos:]`` is a proper prefix of the close tag that may still complete."""
        close_tag = self._close_tag
        if close_tag is None:
            return False
        cdef Py_ssize_t size = PyUnicode_GET_LENGTH(text)
        if size - pos >= PyUnicode_GET_LENGTH(close_tag) or pos >= size:
            return False
        if self._hold_all_close_prefixes:
            return _matches_at(PyUnicode_KIND(text), PyUnicode_DATA(text), pos, size, <str>close_tag)
        for prefix in self._close_prefixes:
            if PyUnicode_GET_LENGTH(prefix) == size - pos and text.endswith(prefix, pos):
                return True
        return False

    @staticmethod
    def _stable_prefix_end(str text not None, tuple marker_prefixes not None, Py_ssize_t start=0):
        """End of ``text`` minus the longest listed marker prefix it ends with."""
        for prefix in marker_prefixes:
            if text.endswith(prefix, start):
                return len(text) - len(prefix)
        return len(text)

    # ---- output -------------------------------------------------------------

    def _emit_delta(self, list deltas not None, *, name=None, arguments=None):
        """Emit one fragment under the identity-first contract."""
        self.emit_c(deltas, name, arguments)

    cdef int emit_c(self, list deltas, object name, object arguments) except -1:
        cdef Py_ssize_t index = self._output_index
        if name is None and arguments is None:
            return 0
        if index == REJECTED_INDEX:
            return 0
        if index == PENDING_INDEX:
            if name is None:
                # No identity yet: keep fragments separate to keep their order.
                self._pending_arguments.append(arguments)
                return 0
            allowed = self._allowed_tool_names
            if allowed is not None and not self.keep_undeclared_calls and name not in allowed:
                self._pending_arguments.clear()
                self._output_index = REJECTED_INDEX
                return 0
            index = self._next_output_index
            self._next_output_index = index + 1
            self._output_index = index
            deltas.append(new_tool_identity(index, self._active_tool_call_id, name))
            for pending in self._pending_arguments:
                deltas.append(new_tool_arguments(index, pending))
            self._pending_arguments.clear()
            if arguments is not None:
                deltas.append(new_tool_arguments(index, arguments))
            return 0
        if name is None:
            deltas.append(new_tool_arguments(index, arguments))
        else:
            deltas.append(new_tool_delta(index, name, arguments))
        return 0

    @staticmethod
    def build_tool_calls(deltas):
        """Group ordered deltas by index into complete calls (first id and name win)."""
        order = []
        parts = {}
        for delta in deltas:
            index = delta.index
            entry = parts.get(index)
            if entry is None:
                entry = [None, None, []]
                parts[index] = entry
                order.append(index)
            if delta.id is not None and entry[0] is None:
                entry[0] = delta.id
            function = delta.function
            if function is None:
                continue
            if function.name is not None and entry[1] is None:
                entry[1] = function.name
            if function.arguments is not None:
                entry[2].append(function.arguments)
        calls = []
        for index in order:
            call_id, name, arguments = parts[index]
            if name is None:
                continue
            function = FunctionCall(name=name, arguments=''.join(arguments))
            if call_id is None:
                calls.append(ToolCall(function=function))
            else:
                calls.append(ToolCall(id=call_id, function=function))
        return calls
