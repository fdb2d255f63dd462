"""Response routing: plain / reasoning / tool modes over one pending buffer.

``ResponseParserCore`` is the compiled state machine; ``BaseResponseParser``
(a Python class compiled in this module) adds the writable class-level
configuration LMDeploy's server and tests use.
"""
import logging

from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_Find, PyUnicode_FindChar, PyUnicode_Substring, PyUnicode_Tailmatch

from lmparse.protocol cimport DeltaMessage, new_delta_message
from lmparse.tools.base cimport (
    HOOK_BEGIN_BLOCK,
    HOOK_FEED,
    ToolParser,
    member_slot_offset,
    slot_peek,
    tag_prefix_hold,
    type_version,
)

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    unsigned long PyType_GetFlags(type)
    unsigned long Py_TPFLAGS_HEAPTYPE

# Pure Python, imports no compiled module: bound once instead of on every construction.
from lmparse.request import (
    as_request,
    chat_template_kwargs_from_request,
    dump_tools,
    get_field,
    normalize_chat_request,
    tool_choice_kind,
    update_request,
)

from lmparse.request import ChatCompletionRequest as _OwnRequest

from lmparse.tools.base import _dump_own_tools

from lmparse.reasoning import _BUILTIN_INIT_SWITCHES, _BUILTIN_STARTS_SWITCHES, _BUILTIN_TAG_CLASSES
from lmparse.reasoning import ReasoningParser as _ReasoningParser

logger = logging.getLogger('lmparse')

# Construction runs once per response; for lmparse's own request type the
# common cases read the slots in C (a Python-level attribute read on that type
# goes through its __getattr__ hook). The slots are plain object members
# (``__slots__``): their offsets come from the member descriptors, checked at
# import; an unset slot (a request made without __init__) takes the general path.
cdef extern from *:
    """
    /* 1 when a equals the str b, 0 when not, -1 when a is not an exact str. */
    static int lmp_str_eq(PyObject *a, PyObject *b) {
        Py_ssize_t n;
        if (a == b)
            return 1;
        if (!PyUnicode_CheckExact(a))
            return -1;
        n = PyUnicode_GET_LENGTH(a);
        if (n != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b))
            return 0;
        return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)n * PyUnicode_KIND(a)) == 0;
    }

    /* Whether ``t(**kw)`` is object.__new__ plus __init__ and instance
       attributes are plain __dict__ entries (no hooks that could differ). */
    static int lmp_plain_instances(PyObject *t) {
        PyTypeObject *tp = (PyTypeObject *)t;
        return Py_IS_TYPE(t, &PyType_Type)
            && tp->tp_new == PyBaseObject_Type.tp_new
            && tp->tp_getattro == PyObject_GenericGetAttr
            && tp->tp_setattro == PyObject_GenericSetAttr
            && tp->tp_dictoffset != 0
            && !PyType_HasFeature(tp, Py_TPFLAGS_IS_ABSTRACT);
    }

    /* Whether instances of a and b look attributes up the same way. */
    static int lmp_same_getattro(PyObject *a, PyObject *b) {
        return ((PyTypeObject *)a)->tp_getattro == ((PyTypeObject *)b)->tp_getattro;
    }

    static PyObject *lmp_object_new(PyObject *t, PyObject *empty_args) {
        return PyBaseObject_Type.tp_new((PyTypeObject *)t, empty_args, NULL);
    }
    """
    int lmp_str_eq(object a, str b)
    bint lmp_plain_instances(object t)
    bint lmp_same_getattro(object a, object b)
    object lmp_object_new(object t, tuple empty_args)

cdef enum:
    _MAX_SLOTS = 32

cdef Py_ssize_t _slot_offsets[_MAX_SLOTS]
cdef Py_ssize_t _n_slots = 0


cdef Py_ssize_t _offset_of(str name) except -2:
    global _n_slots
    cdef Py_ssize_t offset = member_slot_offset(_OwnRequest.__dict__.get(name))
    if offset >= 0 and _n_slots < _MAX_SLOTS:
        _slot_offsets[_n_slots] = offset
        _n_slots += 1
    return offset


cdef Py_ssize_t _O_CHOICE = _offset_of('tool_choice')
cdef Py_ssize_t _O_CTK = _offset_of('chat_template_kwargs')
cdef Py_ssize_t _O_THINK = _offset_of('enable_thinking')
cdef Py_ssize_t _O_EFFORT = _offset_of('reasoning_effort')
cdef Py_ssize_t _O_FORMAT = _offset_of('response_format')
cdef Py_ssize_t _O_STOP = _offset_of('stop')
cdef Py_ssize_t _O_MCT = _offset_of('max_completion_tokens')
cdef Py_ssize_t _O_MT = _offset_of('max_tokens')
cdef Py_ssize_t _O_MESSAGES = _offset_of('messages')
cdef bint _SLOTS_OK = _n_slots == 9
cdef object _DEFAULT_KWARGS_FUNC = None  # BaseResponseParser's hook, set below


cdef inline bint _is_own(object request) noexcept:
    """An exact own request whose slots (the ones read here) are all set."""
    cdef Py_ssize_t i
    if not _SLOTS_OK or type(request) is not _OwnRequest:
        return False
    for i in range(_n_slots):
        if slot_peek(request, _slot_offsets[i]) is NULL:
            return False
    return True


cdef inline object _peek(object request, Py_ssize_t offset):
    # Only after _is_own(request).
    return <object>slot_peek(request, offset)


cdef inline bint _eq(object value, str literal) except -1:
    """``value == literal`` (a plain str compares in C)."""
    cdef int same = lmp_str_eq(value, literal)
    if same >= 0:
        return same
    return value == literal


cdef object _own_choice(object request):
    """tool_choice_kind() of an own request when the value is a plain keyword, else None."""
    choice = _peek(request, _O_CHOICE)
    if choice is None:
        return 'auto'
    if type(choice) is str and (_eq(choice, 'auto') or _eq(choice, 'none') or _eq(choice, 'required')):
        return choice
    return None


cdef object _own_template_kwargs(object request):
    """chat_template_kwargs_from_request() without its warnings path, else None."""
    if _peek(request, _O_THINK) is not None:
        return None
    ctk = _peek(request, _O_CTK)
    if ctk is not None and type(ctk) is not dict:
        return None
    effort = _peek(request, _O_EFFORT)
    if effort is not None and type(effort) is not str:
        return None
    kwargs = (<dict>ctk).copy() if ctk else {}
    if effort is not None and (_eq(effort, 'high') or _eq(effort, 'max')):
        kwargs.setdefault('reasoning_effort', effort)
    return kwargs


cdef bint _same_choice(object adjusted, object request):
    """Whether the adjusted request kept the original tool_choice object (its kind is known)."""
    if _is_own(adjusted) and _is_own(request):
        return _peek(adjusted, _O_CHOICE) is _peek(request, _O_CHOICE)
    return get_field(adjusted, 'tool_choice', 'auto') is get_field(request, 'tool_choice', 'auto')


cdef bint _own_is_normal(object request):
    """True when normalize_chat_request() would return an own request unchanged."""
    if not _is_own(request):
        return False
    if _peek(request, _O_FORMAT) is not None:
        return False
    if isinstance(_peek(request, _O_STOP), str):
        return False
    if _peek(request, _O_MCT) is None and _peek(request, _O_MT) is not None:
        return False
    messages = _peek(request, _O_MESSAGES)
    if type(messages) is not list:
        return False
    for message in <list>messages:
        if type(message) is dict:
            if not _eq((<dict>message).get('role'), 'assistant'):
                continue
            if not isinstance((<dict>message).get('tool_calls'), list):
                continue
            return False
        elif isinstance(message, dict):
            return False
    return True

__all__ = ['ResponseParserCore', 'ResponseParser', 'BaseResponseParser', 'aggregate_deltas']

cdef enum:
    M_PLAIN = 0
    M_REASONING = 1
    M_TOOL = 2

_MODE_NAMES = ('plain', 'reasoning', 'tool')

# (tokenizer, open tag, close tag) -> (tokenizer, open id, close id); vocab dicts are big.
cdef dict _vocab_ids_cache = {}


cdef tuple _reasoning_token_ids(object tokenizer, object open_tag, object close_tag):
    key = (id(tokenizer), open_tag, close_tag)
    entry = _vocab_ids_cache.get(key)
    if entry is not None and entry[0] is tokenizer:
        return entry[1:]
    vocab = tokenizer.get_vocab()
    open_id = vocab.get(open_tag) if open_tag else None
    close_id = vocab.get(close_tag) if close_tag else None
    if len(_vocab_ids_cache) > 64:
        _vocab_ids_cache.clear()
    _vocab_ids_cache[key] = (tokenizer, open_id, close_id)
    return (open_id, close_id)


cdef inline Py_ssize_t _find(str text, object tag, Py_ssize_t start, Py_ssize_t end):
    if tag is None:
        return -1
    return PyUnicode_Find(text, <str>tag, start, end, 1)


cdef Py_UCS4 _tag_anchor(object a, object b, object c, Py_ssize_t *reach):
    """A character every given tag contains (0 when there is none or no tag is given).

    ``reach[0]``: the furthest first offset of it in the tags. No tag, nor a
    tag prefix at the end of the text, starts more than ``reach`` characters
    before the anchor's first occurrence, and text without the anchor can only
    end in a tag prefix: one FindChar settles most chunks. It is the tags'
    shared first character (reach 0) when they have one.
    """
    tags = [tag for tag in (a, b, c) if tag is not None]
    reach[0] = 0
    if not tags:
        return 0
    cdef str first = <str>tags[0]
    cdef Py_ssize_t i, k
    cdef Py_UCS4 ch
    for i in range(PyUnicode_GET_LENGTH(first)):
        ch = PyUnicode_READ(PyUnicode_KIND(first), PyUnicode_DATA(first), i)
        if all(PyUnicode_FindChar(<str>tag, ch, 0, PyUnicode_GET_LENGTH(<str>tag), 1) >= 0 for tag in tags[1:]):
            for tag in tags:
                k = PyUnicode_FindChar(<str>tag, ch, 0, PyUnicode_GET_LENGTH(<str>tag), 1)
                if k > reach[0]:
                    reach[0] = k
            return ch
    return 0


cdef inline Py_ssize_t _tag_floor(str p, Py_ssize_t n, Py_UCS4 anchor, Py_ssize_t reach, Py_ssize_t *at) noexcept:
    """First offset of ``p[:n]`` where a tag, or a tag prefix at its end, can start (see _tag_anchor).

    ``at[0]``: the anchor's first offset; -1 when it does not occur, so ``p``
    holds no whole tag (0 without an anchor).
    """
    at[0] = PyUnicode_FindChar(p, anchor, 0, n, 1) if anchor and n else 0
    cdef Py_ssize_t a = n if at[0] < 0 else at[0]
    return a - reach if a > reach else 0


cdef enum:
    # Anchor occurrences checked one by one before two full tag searches are cheaper.
    _ANCHOR_CHECKS = 8


cdef inline bint _tag_at(str p, Py_ssize_t n, object tag, Py_UCS4 anchor, Py_ssize_t q) except -1:
    """A whole ``tag`` in ``p[:n]`` whose first ``anchor`` character is at ``q``."""
    if tag is None:
        return False
    cdef Py_ssize_t m = PyUnicode_GET_LENGTH(<str>tag)
    cdef Py_ssize_t s = q - PyUnicode_FindChar(<str>tag, anchor, 0, m, 1)
    return s >= 0 and s + m <= n and PyUnicode_Tailmatch(p, <str>tag, s, s + m, -1) == 1


cdef bint _may_hold_tag(str p, Py_ssize_t n, Py_UCS4 anchor, Py_ssize_t q,
                        object a, object b, object c) except -1:
    """False when ``p[:n]`` surely holds none of the tags (each contains ``anchor``).

    A whole tag's first anchor character is an anchor occurrence of ``p``, so
    checking each occurrence in place replaces full searches for the tags in
    text where the anchor is rare (prose: one ``<`` per chunk). True when a tag
    matched, or after _ANCHOR_CHECKS occurrences: the caller then searches.
    ``q``: the anchor's first occurrence.
    """
    cdef int k
    for k in range(_ANCHOR_CHECKS):
        if q < 0:
            return False
        if _tag_at(p, n, a, anchor, q) or _tag_at(p, n, b, anchor, q) or _tag_at(p, n, c, anchor, q):
            return True
        q = PyUnicode_FindChar(p, anchor, q + 1, n, 1)
    return True


def aggregate_deltas(list messages not None):
    """Join streamed ``(DeltaMessage, tool_emitted)`` pairs as a complete response does.

    Returns ``(content, reasoning, tool_deltas)``; the strings may be empty.
    """
    content_parts = []
    reasoning_parts = []
    tool_deltas = []
    cdef DeltaMessage message
    for item in messages:
        message = <DeltaMessage>item[0]
        if message.content:
            content_parts.append(message.content)
        if message.reasoning_content:
            reasoning_parts.append(message.reasoning_content)
        if message.tool_calls:
            tool_deltas.extend(message.tool_calls)
    return ''.join(content_parts), ''.join(reasoning_parts), tool_deltas


# ---- per-class construction plan ---------------------------------------------
#
# Much of a parser's construction depends only on its configured classes: which
# hooks are overridden, the reasoning and tool tags, their shared lead
# characters. A _Plan holds that, per parser class, and is valid while
# CPython's version tags of the parser class, the reasoning parser class and
# the tool parser class are unchanged: set_parsers, assigning
# reasoning_parser_cls directly, monkeypatching a hook on any of them or on a
# base class all change a tag, and the next construction builds a new plan.

cdef enum:
    STARTS_CALL = 0       # call starts_in_reasoning_mode() on the instance
    STARTS_ALWAYS = 1     # the built-in that returns True
    STARTS_SWITCHES = 2   # a built-in that returns whether any switch is True

_RP_INIT = _ReasoningParser.__dict__['__init__']


cdef object _builtin_entry(dict table, object func):
    # Identity, not equality: any other callable is a user override.
    for key, entry in table.items():
        if key is func:
            return entry
    return None


cdef object _defining_class(type klass, str name):
    for base in klass.__mro__:
        if name in base.__dict__:
            return base
    return None


cdef tuple _builtin_init_names(type rcls):
    """Attributes ``rcls(**kw)`` sets to ``kw.get(name)`` after ``self.kwargs``, in order.

    None unless every __init__ on its super() chain is a built-in one.
    """
    mro = rcls.__mro__
    cdef Py_ssize_t start = 0, j, n = len(mro)
    chain = []
    while True:
        j = start
        while j < n and '__init__' not in mro[j].__dict__:
            j += 1
        if j == n:
            return None
        func = mro[j].__dict__['__init__']
        entry = _builtin_entry(_BUILTIN_INIT_SWITCHES, func)
        if entry is None or entry[0] is not mro[j]:
            return None
        chain.append(entry[1])
        if func is _RP_INIT:
            break
        start = j + 1
    names = []
    for switches in reversed(chain):
        names.extend(switches)
    # Each attribute must land in the instance __dict__, as a plain setattr does.
    for name in ['kwargs'] + names:
        if _defining_class(rcls, name) is not None:
            return None
    return tuple(names)


cdef object _new_reasoning_parser(object rcls, dict kwargs, tuple names):
    """``rcls(**kwargs)`` for a class whose __init__ chain is built-in (see _builtin_init_names)."""
    obj = lmp_object_new(rcls, ())
    own = kwargs.copy()  # `**kwargs` hands __init__ a new dict
    obj.kwargs = own
    for name in names:
        setattr(obj, name, own.get(name))
    return obj


cdef bint _str_keys(dict kwargs):
    for key in kwargs:
        if not isinstance(key, str):
            return False
    return True


cdef class _Plan:
    """What constructing a parser of one class needs that depends only on its classes."""

    cdef object cls
    cdef object rcls
    cdef object tcls
    cdef object tokenizer
    cdef unsigned int cls_version
    cdef unsigned int r_version
    cdef unsigned int t_version
    cdef bint cacheable
    # None: the built-in chat_template_kwargs_from_request
    cdef object kwargs_hook
    # attributes _new_reasoning_parser sets (None: call rcls(**kwargs) instead)
    cdef tuple r_init_names
    cdef int r_starts
    cdef tuple r_starts_names
    cdef bint r_tags_known
    cdef object r_open
    cdef object r_close
    cdef bint t_tag_known
    cdef object t_open
    # _tag_anchor results, [0]: tool tag inactive, [1]: active
    cdef bint anchors_known
    cdef Py_UCS4 anchor_plain[2]
    cdef Py_UCS4 anchor_reasoning[2]
    cdef Py_ssize_t reach_plain[2]
    cdef Py_ssize_t reach_reasoning[2]
    cdef object token_ids

    cdef bint current(self):
        """Whether none of the classes changed since (only called on cached plans)."""
        if type_version(self.cls) != self.cls_version:
            return False
        if self.r_version != 0 and type_version(self.rcls) != self.r_version:
            return False
        if self.t_version != 0 and type_version(self.tcls) != self.t_version:
            return False
        return True


cdef _Plan _make_plan(type cls):
    cdef _Plan plan = _Plan.__new__(_Plan)
    cdef int active
    plan.cls = cls
    rcls = plan.rcls = getattr(cls, 'reasoning_parser_cls', None)
    tcls = plan.tcls = getattr(cls, 'tool_parser_cls', None)
    tokenizer = plan.tokenizer = getattr(cls, 'tokenizer', None)
    hook = getattr(cls, 'chat_template_kwargs_from_request', None)
    if hook is not None and getattr(hook, '__func__', None) is not _DEFAULT_KWARGS_FUNC:
        plan.kwargs_hook = hook

    plan.r_init_names = None
    plan.r_starts = STARTS_CALL
    # rcls(**kw) is then a plain instance of rcls whose attribute lookups
    # follow the class dicts: the tables in lmparse.reasoning apply.
    if isinstance(rcls, type) and lmp_plain_instances(rcls):
        plan.r_init_names = _builtin_init_names(<type>rcls)
        owner = _defining_class(<type>rcls, 'starts_in_reasoning_mode')
        entry = (_builtin_entry(_BUILTIN_STARTS_SWITCHES, owner.__dict__['starts_in_reasoning_mode'])
                 if owner is not None else None)
        if entry is not None and entry[0] is owner:
            if entry[1] is None:
                plan.r_starts = STARTS_ALWAYS
            elif plan.r_init_names is not None and all(n in plan.r_init_names for n in entry[1]):
                # the switches are the instance attributes __init__ set from kwargs
                plan.r_starts = STARTS_SWITCHES
                plan.r_starts_names = tuple(entry[1])
        open_owner = _defining_class(<type>rcls, 'get_reasoning_open_tag')
        close_owner = _defining_class(<type>rcls, 'get_reasoning_close_tag')
        if (open_owner in _BUILTIN_TAG_CLASSES and close_owner in _BUILTIN_TAG_CLASSES
                and type(open_owner.__dict__['get_reasoning_open_tag']) is classmethod
                and type(close_owner.__dict__['get_reasoning_close_tag']) is classmethod):
            plan.r_open = rcls.get_reasoning_open_tag() or None
            plan.r_close = rcls.get_reasoning_close_tag() or None
            plan.r_tags_known = True

    if isinstance(tcls, type):
        owner = _defining_class(<type>tcls, 'get_tool_open_tag')
        # lmparse's compiled dialects: their tag is a classmethod of immutable class data
        if (owner is not None and not (PyType_GetFlags(owner) & Py_TPFLAGS_HEAPTYPE)
                and str(getattr(owner, '__module__', '')).startswith('lmparse.')
                and type(owner.__dict__['get_tool_open_tag']) is classmethod
                and lmp_same_getattro(tcls, owner)):
            try:
                plan.t_open = tcls.get_tool_open_tag() or None
                plan.t_tag_known = True
            except Exception:
                pass  # raised again, at the same point, by the construction that needs it

    r_open = plan.r_open if rcls is not None else None
    r_close = plan.r_close if rcls is not None else None
    if (rcls is None or plan.r_tags_known) and (tcls is None or plan.t_tag_known):
        plan.anchors_known = True
        for active in range(2):
            t_open = plan.t_open if active and tcls is not None else None
            plan.anchor_plain[active] = _tag_anchor(r_open, t_open, None, &plan.reach_plain[active])
            plan.anchor_reasoning[active] = _tag_anchor(r_close, t_open, r_open, &plan.reach_reasoning[active])
    if tokenizer is not None and rcls is not None and plan.r_tags_known and r_close is not None:
        try:
            plan.token_ids = _reasoning_token_ids(tokenizer, r_open, r_close)
        except Exception:
            pass  # raised again by the construction

    # Read the version tags last: the lookups above (and these) gave each class one.
    # A configured callable that is not a class is only held: nothing above
    # was derived from it.
    plan.cls_version = type_version(cls)
    plan.cacheable = type(cls) is type and plan.cls_version != 0
    if isinstance(rcls, type):
        getattr(rcls, '__init__', None)
        plan.r_version = type_version(rcls)
        plan.cacheable = plan.cacheable and plan.r_version != 0
    if isinstance(tcls, type):
        getattr(tcls, '__init__', None)
        plan.t_version = type_version(tcls)
        plan.cacheable = plan.cacheable and plan.t_version != 0
    return plan


# parser class -> _Plan; bounded, since each entry keeps its class alive
cdef dict _plans = {}
# the plan used last: a server constructs parsers of one class over and over
cdef _Plan _last_plan = None


cdef _Plan _plan_for(type cls):
    global _last_plan
    cdef _Plan plan = _last_plan
    if plan is not None and plan.cls is cls and plan.current():
        return plan
    entry = _plans.get(cls)
    if entry is not None and (<_Plan>entry).current():
        plan = <_Plan>entry
    else:
        plan = _make_plan(cls)
        if not plan.cacheable:
            return plan
        if len(_plans) >= 64:
            _plans.clear()
        _plans[cls] = plan
    _last_plan = plan
    return plan


cdef class ResponseParserCore:
    """Streaming state machine shared by the default response parser.

    Owns the only buffer (``_pending``): the suffix whose meaning is not
    stable yet. In tool mode the tool parser consumes a prefix of it and
    returns how much it consumed.
    """

    cdef public str _pending
    cdef int _mode
    cdef int _return_mode
    cdef bint _after_tool_block
    cdef bint _received_any_text
    cdef bint _final
    cdef bint _passthrough
    cdef bint _thinking_off
    cdef object _r_open
    cdef object _r_close
    cdef object _t_open
    cdef ToolParser _tool
    cdef int _tool_hooks
    # see _tag_anchor
    cdef Py_UCS4 _anchor_plain
    cdef Py_UCS4 _anchor_reasoning
    cdef Py_ssize_t _reach_plain
    cdef Py_ssize_t _reach_reasoning
    # Reused delta list for built-in tool parsers (handed off only when filled;
    # made on first use).
    cdef list _scratch
    cdef public object request
    cdef public object reasoning_parser
    cdef public object tool_parser
    cdef public object enable_thinking
    cdef public bint reasoning_enabled
    cdef public dict _kwargs
    # reasoning-token accounting over the raw tag interval
    cdef bint _count_on
    cdef bint _counting
    cdef Py_ssize_t _reasoning_count
    cdef long long _rt_open_id
    cdef long long _rt_close_id

    def __cinit__(self):
        # No arguments: Cython then ignores the constructor's instead of packing them.
        self._pending = ''
        self._rt_open_id = -1
        self._rt_close_id = -1

    def __init__(self, request):
        cdef _Plan plan = _plan_for(type(self))
        if type(request) is not _OwnRequest:
            request = as_request(request)
        cdef bint own = _is_own(request)
        kwargs_hook = plan.kwargs_hook
        kwargs = _own_template_kwargs(request) if own and kwargs_hook is None else None
        if kwargs is None:
            kwargs = kwargs_hook(request) if kwargs_hook is not None else chat_template_kwargs_from_request(request)
        self._kwargs = kwargs
        if type(kwargs) is dict:
            if kwargs:
                enable_thinking = (<dict>kwargs).get('enable_thinking', (<dict>kwargs).get('thinking', None))
                thinking = (<dict>kwargs).get('thinking')
            else:
                enable_thinking = thinking = None
        else:
            enable_thinking = kwargs.get('enable_thinking', kwargs.get('thinking', None))
            thinking = kwargs.get('thinking')
        if thinking is True:
            enable_thinking = True
        self.enable_thinking = enable_thinking
        self._thinking_off = enable_thinking is False

        rcls = plan.rcls
        if rcls is None:
            reasoning_parser = None
        elif plan.r_init_names is not None and type(kwargs) is dict and _str_keys(kwargs):
            reasoning_parser = _new_reasoning_parser(rcls, kwargs, plan.r_init_names)
        else:
            reasoning_parser = rcls(**kwargs)
        self.reasoning_parser = reasoning_parser
        self.tool_parser = plan.tcls() if plan.tcls is not None else None
        cdef bint reasoning_enabled = False
        if reasoning_parser is not None and enable_thinking is not False:
            if plan.r_starts == STARTS_ALWAYS:
                reasoning_enabled = True
            elif plan.r_starts == STARTS_SWITCHES and type(kwargs) is dict:
                # the switches are kwargs.get(name): see _builtin_init_names
                if kwargs:
                    for name in plan.r_starts_names:
                        if (<dict>kwargs).get(name) is True:
                            reasoning_enabled = True
                            break
            else:
                reasoning_enabled = bool(reasoning_parser.starts_in_reasoning_mode())
        self.reasoning_enabled = reasoning_enabled

        choice = _own_choice(request) if own else None
        if choice is None:
            choice = tool_choice_kind(request)
        if self.tool_parser is not None:
            adjusted = self.tool_parser.adjust_request(request)
        else:
            if _eq(choice, 'required'):
                raise ValueError('`tool_choice="required"` requires a configured tool-call parser.')
            adjusted = _dump_own_tools(request) if own else None
            if adjusted is None:
                adjusted = dump_tools(request)
        if not _own_is_normal(adjusted):
            adjusted = normalize_chat_request(adjusted)
        if _eq(choice, 'required'):
            # The engine applies one guided-decoding constraint: the structural tag wins.
            fmt = self.tool_parser.build_required_response_format(
                get_field(request, 'tools') or [], reasoning=self.reasoning_enabled)
            adjusted = update_request(adjusted, response_format=fmt)
        self.request = adjusted

        self._r_open = None
        self._r_close = None
        if reasoning_parser is not None:
            if plan.r_tags_known:
                self._r_open = plan.r_open
                self._r_close = plan.r_close
            else:
                self._r_open = reasoning_parser.get_reasoning_open_tag() or None
                self._r_close = reasoning_parser.get_reasoning_close_tag() or None
            if self._r_close is None:
                raise RuntimeError(
                    f'Reasoning parser {type(reasoning_parser).__name__} must provide a reasoning end tag')

        self._t_open = None
        self._tool = None
        self._tool_hooks = HOOK_FEED | HOOK_BEGIN_BLOCK
        cdef bint tool_active = self.tool_parser is not None and not _eq(
            choice if _same_choice(adjusted, request) else tool_choice_kind(adjusted), 'none')
        # the plan's tags (and anchors) hold for the classes it was made for
        cdef bint tags_known = plan.anchors_known
        if tool_active:
            if plan.t_tag_known and type(self.tool_parser) is plan.tcls:
                self._t_open = plan.t_open
            else:
                self._t_open = self.tool_parser.get_tool_open_tag() or None
                tags_known = False
            if self._t_open is None:
                raise RuntimeError(f'Tool parser {type(self.tool_parser).__name__} must provide a tool start tag')
            if isinstance(self.tool_parser, ToolParser):
                self._tool = <ToolParser>self.tool_parser
                self._tool_hooks = self._tool._hooks

        self._passthrough = reasoning_parser is None and self.tool_parser is None
        if tags_known:
            self._anchor_plain = plan.anchor_plain[tool_active]
            self._anchor_reasoning = plan.anchor_reasoning[tool_active]
            self._reach_plain = plan.reach_plain[tool_active]
            self._reach_reasoning = plan.reach_reasoning[tool_active]
        else:
            self._anchor_plain = _tag_anchor(self._r_open, self._t_open, None, &self._reach_plain)
            self._anchor_reasoning = _tag_anchor(self._r_close, self._t_open, self._r_open, &self._reach_reasoning)
        self._mode = M_REASONING if reasoning_enabled else M_PLAIN
        self._return_mode = self._mode
        self._pending = ''
        self._after_tool_block = False
        self._received_any_text = False
        self._final = False

        self._count_on = False
        self._counting = self._mode == M_REASONING
        self._reasoning_count = 0
        tokenizer = plan.tokenizer
        if reasoning_parser is not None and tokenizer is not None:
            token_ids = plan.token_ids
            if token_ids is None:
                token_ids = _reasoning_token_ids(tokenizer, self._r_open, self._r_close)
            open_id, close_id = token_ids
            self._count_on = True
            self._rt_open_id = -1 if open_id is None else open_id
            self._rt_close_id = -1 if close_id is None else close_id

    # ---- public state ---------------------------------------------------------

    @property
    def reasoning_tokens(self):
        """Tokens inside the reasoning tags so far, or None without a tokenizer."""
        return self._reasoning_count if self._count_on else None

    @reasoning_tokens.setter
    def reasoning_tokens(self, value):
        if value is None:
            self._count_on = False
            self._reasoning_count = 0
        else:
            self._count_on = True
            self._reasoning_count = value

    @property
    def mode(self):
        return _MODE_NAMES[self._mode]

    # ---- streaming ------------------------------------------------------------

    def stream_chunk(self, delta_text, delta_token_ids=None, final=False, **kwargs):
        """Route one engine chunk; returns ``[(DeltaMessage, tool_calls_emitted), ...]``.

        ``final=True`` means no more text will follow: ambiguous suffixes are
        released and open tool blocks are closed (never completed by invention).
        """
        if delta_text is None:
            delta_text = ''
        elif not isinstance(delta_text, str):
            raise TypeError(f'delta_text must be str, not {type(delta_text).__name__}')
        if self._count_on and not self._thinking_off and delta_token_ids:
            self._count_reasoning_tokens(delta_token_ids)
        self._final = bool(final)
        cdef str text = <str>delta_text
        if not text and not delta_token_ids and not self._received_any_text:
            # Some engines send an empty first step; clients expect a visible empty delta.
            return [(new_delta_message('', None, None), False)]
        if self._passthrough:
            if not text:
                return []
            return [(new_delta_message(text, None, None), False)]
        if text:
            self._received_any_text = True
            if self._pending:
                self._pending = self._pending + text
            else:
                self._pending = text
        cdef list out = []
        self._run(out)
        return out

    cdef int _count_reasoning_tokens(self, object token_ids) except -1:
        cdef long long tid
        cdef long long open_id = self._rt_open_id
        cdef long long close_id = self._rt_close_id
        cdef bint counting = self._counting
        cdef Py_ssize_t count = self._reasoning_count
        for item in token_ids:
            tid = item
            if tid == open_id:
                counting = True
            elif tid == close_id:
                counting = False
            elif counting:
                count += 1
        self._counting = counting
        self._reasoning_count = count
        return 0

    cdef int _run(self, list out) except -1:
        cdef bint progressed
        while True:
            if self._after_tool_block and not self._resolve_separator():
                break
            progressed = False
            if self._mode == M_PLAIN:
                progressed = self._consume_plain(out)
            elif self._mode == M_REASONING:
                progressed = self._consume_reasoning(out)
            if self._mode == M_TOOL:
                # Dispatch the payload now rather than waiting for the next chunk.
                progressed = self._consume_tool(out)
            if not progressed or not self._pending:
                break
        return 0

    cdef int _emit_text(self, list out, str text, bint reasoning) except -1:
        if reasoning and not self._thinking_off:
            out.append((new_delta_message(None, text, None), False))
        else:
            out.append((new_delta_message(text, None, None), False))
        return 0

    cdef bint _release_or_hold(self, list out, bint reasoning, Py_ssize_t start,
                               object tag_a, object tag_b, object tag_c) except -1:
        """No tag in the buffer: emit all but a suffix that may still grow into a tag.

        ``start``: no tag prefix can begin before this offset.
        """
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t hold = n, h
        if n == 0:
            return False
        if not self._final and start < n:
            if tag_a is not None:
                hold = tag_prefix_hold(p, start, <str>tag_a)
            if tag_b is not None:
                h = tag_prefix_hold(p, start, <str>tag_b)
                if h < hold:
                    hold = h
            if tag_c is not None:
                h = tag_prefix_hold(p, start, <str>tag_c)
                if h < hold:
                    hold = h
        if hold == 0:
            return False
        if hold == n:
            self._pending = ''
            self._emit_text(out, p, reasoning)
        else:
            self._pending = PyUnicode_Substring(p, hold, n)
            self._emit_text(out, PyUnicode_Substring(p, 0, hold), reasoning)
        return True

    cdef bint _consume_plain(self, list out) except -1:
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t at = -1, t, first = 0
        cdef bint to_reasoning = False
        cdef Py_ssize_t anchor_at
        first = _tag_floor(p, n, self._anchor_plain, self._reach_plain, &anchor_at)
        if anchor_at < 0 or (self._anchor_plain and not _may_hold_tag(
                p, n, self._anchor_plain, anchor_at, self._r_open, self._t_open, None)):
            return self._release_or_hold(out, False, first, self._r_open, self._t_open, None)
        if self._r_open is not None:
            at = _find(p, self._r_open, first, n)
            to_reasoning = at >= 0
        if self._t_open is not None:
            t = _find(p, self._t_open, first, n if at < 0 else at)
            if t >= 0:
                at = t
                to_reasoning = False
        if at < 0:
            return self._release_or_hold(out, False, first, self._r_open, self._t_open, None)
        if at > 0:
            self._emit_text(out, PyUnicode_Substring(p, 0, at), False)
        if to_reasoning:
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._r_open), n)
            self._mode = M_REASONING
        else:
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._t_open), n)
            self._enter_tool_mode()
        return True

    cdef bint _consume_reasoning(self, list out) except -1:
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t at, t, first = 0
        cdef int which = 0  # 0 close, 1 tool open, 2 reasoning open (dropped)
        cdef Py_ssize_t anchor_at
        first = _tag_floor(p, n, self._anchor_reasoning, self._reach_reasoning, &anchor_at)
        if anchor_at < 0 or (self._anchor_reasoning and not _may_hold_tag(
                p, n, self._anchor_reasoning, anchor_at, self._r_close, self._t_open, self._r_open)):
            return self._release_or_hold(out, True, first, self._r_close, self._t_open, self._r_open)
        at = _find(p, self._r_close, first, n)
        if self._t_open is not None:
            t = _find(p, self._t_open, first, n if at < 0 else at)
            if t >= 0:
                at = t
                which = 1
        if self._r_open is not None:
            t = _find(p, self._r_open, first, n if at < 0 else at)
            if t >= 0:
                at = t
                which = 2
        if at < 0:
            return self._release_or_hold(out, True, first, self._r_close, self._t_open, self._r_open)
        if at > 0:
            self._emit_text(out, PyUnicode_Substring(p, 0, at), True)
        if which == 0:
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._r_close), n)
            self._mode = M_PLAIN
        elif which == 1:
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._t_open), n)
            self._enter_tool_mode()
        else:
            # An explicit open tag inside reasoning carries no text.
            self._pending = PyUnicode_Substring(p, at + PyUnicode_GET_LENGTH(self._r_open), n)
        return True

    cdef int _enter_tool_mode(self) except -1:
        self._return_mode = self._mode
        self._mode = M_TOOL
        if self._tool_hooks & HOOK_BEGIN_BLOCK:
            self.tool_parser.begin_tool_block()
        else:
            self._tool.begin_block_c()
        return 0

    cdef bint _consume_tool(self, list out) except -1:
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t consumed
        cdef list calls
        cdef bint closed
        if self._tool_hooks == 0:
            # Built-in parser, no Python hooks: nothing can keep a reference to the list.
            calls = self._scratch
            if calls is None:
                calls = self._scratch = []
            elif calls:
                del calls[:]
            consumed = self._tool.feed_c(p, calls, self._final)
            closed = self._tool.block_closed
            if calls:
                self._scratch = []
        elif self._tool_hooks & HOOK_FEED:
            calls = []
            result = self.tool_parser.feed_tool_block(p, calls, final=self._final)
            if not isinstance(result, int) or not 0 <= result <= n:
                raise ValueError(f'feed_tool_block returned {result!r}; expected an int in [0, {n}]')
            consumed = result
            closed = self.tool_parser.block_closed
        else:
            calls = []
            consumed = self._tool.feed_c(p, calls, self._final)
            closed = self._tool.block_closed
        if consumed == n:
            self._pending = ''
        elif consumed:
            self._pending = PyUnicode_Substring(p, consumed, n)
        if closed:
            self._mode = self._return_mode
            self._after_tool_block = True
        if calls:
            out.append((new_delta_message(None, None, calls), True))
        return consumed > 0 or closed

    cdef bint _resolve_separator(self) except -1:
        """Drop newlines between two tool blocks only once the next open tag is confirmed."""
        cdef str p = self._pending
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(p)
        cdef Py_ssize_t k = 0, rest
        cdef int kind = PyUnicode_KIND(p)
        cdef void *data = PyUnicode_DATA(p)
        cdef str tag = self._t_open
        while k < n and PyUnicode_READ(kind, data, k) == u'\n':
            k += 1
        if k:
            rest = n - k
            if rest == 0:
                if not self._final:
                    return False
            elif p.startswith(tag, k):
                self._pending = PyUnicode_Substring(p, k, n)
            elif rest < PyUnicode_GET_LENGTH(tag) and not self._final and tag.startswith(
                    PyUnicode_Substring(p, k, n)):
                return False
        self._after_tool_block = False
        return True

    # ---- complete responses -------------------------------------------------

    def parse_complete(self, str text not None, token_ids=None, **kwargs):
        """Parse a whole response: ``(content or None, [ToolCall] or None, reasoning or None)``."""
        if self._count_on:
            self._reasoning_count = 0
            self._counting = self.reasoning_enabled
        content, reasoning, tool_deltas = aggregate_deltas(self.stream_chunk(text, token_ids or [], final=True))
        tool_calls = self.tool_parser.build_tool_calls(tool_deltas) if self.tool_parser is not None else []
        return (content or None), (tool_calls or None), (reasoning or None)


class ResponseParser:
    """Interface of every response parser (one instance per response)."""

    supports_required_tool_choice = False

    @classmethod
    def set_parsers(cls, reasoning_parser_name=None, tool_parser_name=None, tokenizer=None):
        pass

    def __init__(self, request):
        self.request = request
        self.reasoning_tokens = None

    def stream_chunk(self, delta_text, delta_token_ids=None, final=False, **kwargs):
        raise NotImplementedError

    def parse_complete(self, text, token_ids=None, **kwargs):
        raise NotImplementedError


class BaseResponseParser(ResponseParserCore, ResponseParser):
    """Default response parser: content, reasoning and tool calls.

    Configure it with ``set_parsers`` (process-wide, like LMDeploy) or get an
    independent configured subclass with ``with_parsers``.
    """

    reasoning_parser_cls = None
    tool_parser_cls = None
    tokenizer = None
    supports_required_tool_choice = True
    MODE_PLAIN = 'plain'
    MODE_REASONING = 'reasoning'
    MODE_TOOL = 'tool'

    # No __init__ here: ResponseParserCore.__init__ comes first in the MRO, and
    # without a Python-level override the class calls it straight from C.

    @classmethod
    def set_parsers(cls, reasoning_parser_name=None, tool_parser_name=None, tokenizer=None):
        """Configure this class by registry name; unset names clear earlier settings."""
        from lmparse.registry import ReasoningParserManager, ToolParserManager, validate_parser_names

        reasoning_parser_name, tool_parser_name = validate_parser_names(reasoning_parser_name, tool_parser_name)
        rcls = ReasoningParserManager.get(reasoning_parser_name) if reasoning_parser_name is not None else None
        tcls = ToolParserManager.get(tool_parser_name) if tool_parser_name is not None else None
        if rcls is not None and tokenizer is not None and hasattr(rcls, 'validate_tokenizer'):
            rcls.validate_tokenizer(tokenizer)
        cls.reasoning_parser_cls = rcls
        cls.tool_parser_cls = tcls
        cls.tokenizer = tokenizer

    @classmethod
    def with_parsers(cls, reasoning_parser_name=None, tool_parser_name=None, tokenizer=None):
        """Return a new subclass configured independently of ``cls`` (one per served model)."""
        name = f'{cls.__name__}[{reasoning_parser_name or "-"},{tool_parser_name or "-"}]'
        configured = type(name, (cls,), {'__module__': cls.__module__, '__qualname__': name})
        configured.set_parsers(reasoning_parser_name, tool_parser_name, tokenizer)
        return configured

    @classmethod
    def chat_template_kwargs_from_request(cls, request):
        return chat_template_kwargs_from_request(request)


_DEFAULT_KWARGS_FUNC = BaseResponseParser.__dict__['chat_template_kwargs_from_request'].__func__
