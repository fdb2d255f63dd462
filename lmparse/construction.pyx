"""What constructing a response parser needs besides the routing state machine.

Internal to :mod:`lmparse.response`: per-class construction plans, building
lmparse's own reasoning parsers without calling them, and reads of lmparse's
own request type. Everything here runs once per response; the per-chunk
routing lives in ``response.pyx``.
"""
from cpython.unicode cimport PyUnicode_FindChar, PyUnicode_Substring

from lmparse.tools.base cimport (
    S_CHAT_TEMPLATE_KWARGS,
    S_ENABLE_THINKING,
    S_MAX_COMPLETION_TOKENS,
    S_MAX_TOKENS,
    S_MESSAGES,
    S_REASONING_EFFORT,
    S_RESPONSE_FORMAT,
    S_STOP,
    S_TOOL_CHOICE,
)
from lmparse.tools.base cimport class_basis, immutable_type, is_own_request, own_slot, same_basis

from types import MethodType as _MethodType

from lmparse.reasoning import _GENERATION as _R_GENERATION_LIST
from lmparse.reasoning import ReasoningMeta as _ReasoningMeta
from lmparse.reasoning import ReasoningParser as _ReasoningParser
from lmparse.request import REQUEST_ADAPTERS as _ADAPTERS
from lmparse.request import dump_tools, get_field, normalize_chat_request
from lmparse.request import update_request as _update_request
from lmparse.tools.base import _dump_own_tools

__all__ = []

cdef extern from "Python.h":
    ctypedef struct PyObject
    object PyType_GenericNew(type tp, PyObject *args, PyObject *kwds)
    unsigned long PyType_GetFlags(type)
    unsigned long Py_TPFLAGS_IS_ABSTRACT
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object)

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
    """
    int lmp_str_eq(object a, str b)


cdef bint eq(object value, str literal) except -1:
    """``value == literal`` (a plain str compares in C)."""
    cdef int same = lmp_str_eq(value, literal)
    if same >= 0:
        return same
    return value == literal


# ---- lmparse's own request type ---------------------------------------------------

cdef inline object _adapter(object request):
    """The request adapter registered for ``request``'s exact type (lmparse.request), or None."""
    return (<dict>_ADAPTERS).get(type(request)) if _ADAPTERS else None


cdef tuple own_fields(object request):
    """The fields construction reads first (see F_*), or None: not an own request (nor one a
    registered request adapter reads), or one is unset."""
    if not is_own_request(request):
        adapter = _adapter(request)
        return None if adapter is None else <tuple?>adapter.fields(request)
    try:
        return (own_slot(request, S_TOOL_CHOICE), own_slot(request, S_CHAT_TEMPLATE_KWARGS),
                own_slot(request, S_ENABLE_THINKING), own_slot(request, S_REASONING_EFFORT))
    except AttributeError:
        return None


cdef object own_choice(tuple fields):
    """tool_choice_kind() of an own request when the value is a plain keyword, else None."""
    choice = fields[F_CHOICE]
    if choice is None:
        return 'auto'
    if type(choice) is str and (eq(choice, 'auto') or eq(choice, 'none') or eq(choice, 'required')):
        return choice
    return None


cdef object own_template_kwargs(tuple fields):
    """chat_template_kwargs_from_request() without its warnings path, else None."""
    if fields[F_THINK] is not None:
        return None
    ctk = fields[F_CTK]
    if ctk is not None and type(ctk) is not dict:
        return None
    effort = fields[F_EFFORT]
    if effort is not None and type(effort) is not str:
        return None
    kwargs = (<dict>ctk).copy() if ctk else {}
    if effort is not None and (eq(effort, 'high') or eq(effort, 'max')):
        kwargs.setdefault('reasoning_effort', effort)
    return kwargs


cdef bint same_choice(object adjusted, object request, tuple fields) except -1:
    """Whether the adjusted request kept the original tool_choice object (its kind is known).

    ``fields``: own_fields(request), or None.
    """
    if fields is not None and is_own_request(adjusted):
        try:
            return own_slot(adjusted, S_TOOL_CHOICE) is fields[F_CHOICE]
        except AttributeError:
            pass
    return get_field(adjusted, 'tool_choice', 'auto') is get_field(request, 'tool_choice', 'auto')


cdef bint own_is_normal(object request) except -1:
    """True when normalize_chat_request() would return an own request unchanged."""
    if not is_own_request(request):
        return False
    try:
        if own_slot(request, S_RESPONSE_FORMAT) is not None:
            return False
        if isinstance(own_slot(request, S_STOP), str):
            return False
        if own_slot(request, S_MAX_COMPLETION_TOKENS) is None and own_slot(request, S_MAX_TOKENS) is not None:
            return False
        messages = own_slot(request, S_MESSAGES)
    except AttributeError:
        return False
    if type(messages) is not list:
        return False
    for message in <list>messages:
        if type(message) is dict:
            if not eq((<dict>message).get('role'), 'assistant'):
                continue
            if not isinstance((<dict>message).get('tool_calls'), list):
                continue
            return False
        elif isinstance(message, dict):
            return False
    return True


cdef object normal_request(object adjusted):
    """``normalize_chat_request(adjusted)``, without the call when it would change nothing."""
    if own_is_normal(adjusted):
        return adjusted
    adapter = _adapter(adjusted)
    if adapter is not None:
        same = adapter.normalize(adjusted)
        if same is not None:
            return same
    return normalize_chat_request(adjusted)


cdef object foreign_dump_tools(object request):
    """``dump_tools(request)`` for a request that is not lmparse's own type."""
    adapter = _adapter(request)
    if adapter is not None:
        prepared = adapter.prepare_tools(request, None)
        if prepared is not None:
            return (<tuple?>prepared)[0]
    return dump_tools(request)


# ---- tags --------------------------------------------------------------------------

# (id(tokenizer), open tag, close tag) -> (tokenizer, open id, close id); vocab dicts are
# big. Free-threaded builds: entries are immutable tuples checked against the
# tokenizer itself, and dict get/set are atomic, so a race only repeats a lookup.
cdef dict _vocab_ids_cache = {}


cdef tuple reasoning_token_ids(object tokenizer, object open_tag, object close_tag):
    key = (id(tokenizer), open_tag, close_tag)
    entry = _vocab_ids_cache.get(key)
    if entry is not None and (<tuple>entry)[0] is tokenizer:
        return (<tuple>entry)[1:]
    vocab = tokenizer.get_vocab()
    open_id = vocab.get(open_tag) if open_tag else None
    close_id = vocab.get(close_tag) if close_tag else None
    if len(_vocab_ids_cache) > 64:
        _vocab_ids_cache.clear()
    _vocab_ids_cache[key] = (tokenizer, open_id, close_id)
    return (open_id, close_id)


cdef bint same_tag(object a, object b) except -1:
    if a is b:
        return True
    return a is not None and b is not None and a == b


cdef Py_UCS4 tag_anchor(object a, object b, object c, Py_ssize_t *reach):
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


cdef tuple content_markers(object reasoning_parser, object tool_parser, str attribute='content_markers'):
    """The ``content_markers`` both parsers declare, once each in declaration order (None: none).

    Channel syntax the router drops from text outside tool blocks (Kimi K3's
    ``<|open|>response<|sep|>``): a format property either owner may declare.
    ``attribute``: another such declaration (``split_marker_pieces``).
    """
    declared = []
    for owner in (reasoning_parser, tool_parser):
        markers = getattr(owner, attribute, None) if owner is not None else None
        if markers:
            for marker in markers:
                if type(marker) is not str:
                    raise TypeError(f'{type(owner).__name__}.{attribute}: {marker!r} is not a str')
                if marker and marker not in declared:
                    declared.append(marker)
    return tuple(declared) if declared else None


cdef tuple block_headers(object reasoning_parser, object tool_parser, tuple markers):
    """``(header_markers, header_ends, reach, header_at_start)`` the parsers declare (None, None, 0, False: none).

    A header marker (a content marker) opens a block header: the text after it
    up to a header end (the marker naming the block's kind) is metadata, never
    text, as Inkling's ``<|message_model|>NAME<|content_invoke_tool_json|>``;
    ``header_at_start``: the prompt ends with a header marker. All are declared
    beside content markers. ``reach``: the longest header end.
    """
    if markers is None:
        # headers come with content markers (a header marker is one): most dialects stop here
        return None, None, 0, False
    opens, ends = [], []
    at_start = False
    for owner in (reasoning_parser, tool_parser):
        if owner is None:
            continue
        for attr, into in (('header_markers', opens), ('header_ends', ends)):
            for marker in getattr(owner, attr, None) or ():
                if type(marker) is not str or not marker:
                    raise TypeError(f'{type(owner).__name__}.{attr}: {marker!r} is not a non-empty str')
                if attr == 'header_markers' and marker not in markers:
                    raise TypeError(f'{type(owner).__name__}.header_markers: {marker!r} is not a content marker')
                if marker not in into:
                    into.append(marker)
        at_start = at_start or getattr(owner, 'header_at_start', False) is True
    if not opens and not at_start:
        return None, None, 0, False
    if not ends:
        raise TypeError('header_markers / header_at_start need header_ends')
    return tuple(opens), tuple(ends), max(len(e) for e in ends), at_start


cdef Py_UCS4 marker_anchor(Py_UCS4 anchor, Py_ssize_t *reach, tuple markers):
    """``anchor`` (of tag_anchor) if every marker contains it too, with ``reach`` widened to them; else 0."""
    cdef Py_ssize_t k
    if not anchor:
        return 0
    for marker in markers:
        k = PyUnicode_FindChar(<str>marker, anchor, 0, PyUnicode_GET_LENGTH(<str>marker), 1)
        if k < 0:
            reach[0] = 0
            return 0
        if k > reach[0]:
            reach[0] = k
    return anchor


# ---- declared reasoning parsers --------------------------------------------------------
#
# A reasoning class that keeps ReasoningParser's own methods is fully described
# by its declarations (tags, thinking_switches): construction reproduces
# ``cls(**kwargs)`` and starts_in_reasoning_mode() without Python calls. That
# holds while the class resolves these names to what ReasoningParser had at
# import (overriding or monkeypatching any of them turns it off on the next
# construction).

cdef tuple _R_BASIS_NAMES = ('__init__', 'starts_in_reasoning_mode', 'get_reasoning_open_tag',
                             'get_reasoning_close_tag', '__new__', '__getattribute__')
cdef tuple _R_DECLARED = ('reasoning_open_tag', 'reasoning_close_tag', 'thinking_switches', 'open_tag_in_prompt',
                          'thinking_values')
cdef tuple _R_ALL_NAMES = _R_BASIS_NAMES + _R_DECLARED

# Read-only after import.
cdef tuple _BASE_R_BASIS = class_basis(<type>_ReasoningParser, _R_BASIS_NAMES)
# ReasoningMeta renews _R_GENERATION[0] on every class attribute set or delete.
cdef list _R_GENERATION = _R_GENERATION_LIST
_META_SETATTR = _ReasoningMeta.__setattr__
_META_DELATTR = _ReasoningMeta.__delattr__


cdef bint _tracked(type rcls):
    """Whether every class ``rcls`` resolves names through (but object) renews the generation when patched."""
    for klass in rcls.__mro__[:-1]:
        meta = type(klass)
        if meta.__setattr__ is not _META_SETATTR or meta.__delattr__ is not _META_DELATTR:
            return False
    return True
_object_new = object.__new__


cdef tuple _declared_reasoning(type rcls):
    """(basis, switches) when ``rcls`` is described by its declarations alone, else None."""
    if not issubclass(rcls, _ReasoningParser) or not same_basis(class_basis(rcls, _R_BASIS_NAMES), _BASE_R_BASIS):
        return None
    declared = class_basis(rcls, _R_DECLARED)
    switches = declared[2]
    if type(declared[0]) is not str or type(declared[1]) is not str or type(switches) is not tuple or (
            type(declared[3]) is not bool):
        return None
    if declared[4]:
        return None  # valued switches (thinking_mode="enabled"): starts_in_reasoning_mode() decides
    for name in <tuple>switches:
        if type(name) is not str:
            return None
    return _BASE_R_BASIS + declared, switches


cdef object new_reasoning_parser(object rcls, dict kwargs, tuple names):
    """``rcls(**kwargs)`` for a declared reasoning class (see _declared_reasoning); str keys only."""
    # object.__new__(rcls) (the class resolves __new__ to it) without the Python-level call;
    # object.__new__ also refuses abstract classes: those keep the call.
    obj = (PyType_GenericNew(<type>rcls, NULL, NULL) if not PyType_GetFlags(<type>rcls) & Py_TPFLAGS_IS_ABSTRACT
           else _object_new(rcls))
    own = kwargs.copy()  # `**kwargs` hands __init__ a new dict
    obj.kwargs = own
    for name in names:
        setattr(obj, name, own.get(name))
    return obj


cdef bint str_keys(dict kwargs) noexcept:
    for key in kwargs:
        if not isinstance(key, str):
            return False
    return True


# ---- per-response reads of the request and the declarations ---------------------------

cdef object adjusted_request(object tool_parser, object request, tuple fields, object choice, bint reasoning):
    """The request for the engine: the tool parser's adjust_request (or tools dumped for the
    template), normalized; ``tool_choice="required"`` adds the structural tag.

    ``fields``: own_fields(request); ``choice``: the tool_choice kind; ``reasoning``: output
    starts in reasoning.
    """
    if tool_parser is not None:
        adjusted = tool_parser.adjust_request(request)
    else:
        if eq(choice, 'required'):
            raise ValueError('`tool_choice="required"` requires a configured tool-call parser.')
        adjusted = _dump_own_tools(request) if fields is not None else None
        if adjusted is None:
            adjusted = foreign_dump_tools(request)
    adjusted = normal_request(adjusted)
    if eq(choice, 'required'):
        # The engine applies one guided-decoding constraint: the structural tag wins.
        fmt = tool_parser.build_required_response_format(get_field(request, 'tools') or [], reasoning=reasoning)
        adjusted = _update_request(adjusted, response_format=fmt)
    return adjusted


cdef object thinking_switch(object kwargs):
    """``enable_thinking`` from the chat template kwargs (``thinking`` too; ``thinking=True`` wins)."""
    if type(kwargs) is dict:
        if not kwargs:
            return None
        enable_thinking = (<dict>kwargs).get('enable_thinking', (<dict>kwargs).get('thinking', None))
        thinking = (<dict>kwargs).get('thinking')
    else:
        enable_thinking = kwargs.get('enable_thinking', kwargs.get('thinking', None))
        thinking = kwargs.get('thinking')
    return True if thinking is True else enable_thinking


cdef bint starts_in_reasoning(Plan plan, object reasoning_parser, object kwargs) except -1:
    """Whether output starts inside reasoning (thinking not switched off), by the plan when it can."""
    if plan.r_starts == STARTS_ALWAYS:
        return True
    if plan.r_starts == STARTS_SWITCHES and type(kwargs) is dict:
        # the switches are kwargs.get(name): see ReasoningParser.thinking_switches
        for name in plan.r_starts_names:
            if (<dict>kwargs).get(name) is True:
                return True
        return False
    return bool(reasoning_parser.starts_in_reasoning_mode())


cdef bint calls_in_reasoning(object reasoning_parser, object tool_parser) except -1:
    """False when either parser declares ``calls_in_reasoning = False``: the model never calls
    tools inside reasoning, so a tool-open tag there is reasoning text."""
    if reasoning_parser is None or tool_parser is None:
        return True
    return bool(getattr(tool_parser, 'calls_in_reasoning', True)) and bool(
        getattr(reasoning_parser, 'calls_in_reasoning', True))


cdef object call_end_tag(object cls, object reasoning_parser, object tool_parser):
    """The reasoning dialect's ``call_open_tag`` when a response class that sets ``call_ends_reasoning``
    (vLLM replace mode) runs it without a tool parser: there that tag ends reasoning, and it and all
    that follows are content for the engine's own tool parser. None: reasoning ends only at its close tag."""
    if tool_parser is not None or reasoning_parser is None or getattr(cls, 'call_ends_reasoning', False) is not True:
        return None
    tag = getattr(reasoning_parser, 'call_open_tag', None)
    if tag is not None and (type(tag) is not str or not tag):
        raise TypeError(f'{type(reasoning_parser).__name__}.call_open_tag: expected a non-empty str or None, '
                        f'got {tag!r}')
    return tag


cdef tuple text_reasoning_tags(object reasoning_parser):
    """The reasoning parser's ``text_reasoning_tags`` (open, close), checked; None: none."""
    alt = getattr(reasoning_parser, 'text_reasoning_tags', None) if reasoning_parser is not None else None
    if alt is None:
        return None
    if type(alt) is not tuple or len(<tuple>alt) != 2 or not all(type(tag) is str and tag for tag in <tuple>alt):
        raise TypeError(f'{type(reasoning_parser).__name__}.text_reasoning_tags: '
                        f'expected (open tag, close tag), got {alt!r}')
    return <tuple>alt


# ---- per-class construction plan ----------------------------------------------------
#
# Much of a parser's construction depends only on its configured classes:
# the reasoning and tool tags, their shared lead characters, the reasoning
# fast path. A Plan holds that per parser class. Every construction checks,
# by identity, that the class still has the configuration the plan was made
# from (reasoning_parser_cls, tool_parser_cls, tokenizer, the kwargs hook) and
# that a declared reasoning class is unchanged: set_parsers, direct
# assignment and monkeypatching take effect on the next construction. Facts
# about a tool parser class are only cached for immutable (compiled) classes.

cdef object _DEFAULT_KWARGS_FUNC = None


cdef int set_default_kwargs_func(object func) except -1:
    global _DEFAULT_KWARGS_FUNC
    _DEFAULT_KWARGS_FUNC = func
    return 0


cdef inline object _kwargs_func(type cls):
    hook = getattr(cls, 'chat_template_kwargs_from_request', None)
    if type(hook) is _MethodType:
        return hook.__func__
    return hook


cdef class Plan:
    """What constructing a parser of one class needs that depends only on its classes."""

    cdef bint current(self, type cls) except -1:
        """Whether ``cls`` still has the configuration this plan was made from."""
        if getattr(cls, 'reasoning_parser_cls', None) is not self.rcls:
            return False
        if getattr(cls, 'tool_parser_cls', None) is not self.tcls:
            return False
        if getattr(cls, 'tokenizer', None) is not self.tokenizer:
            return False
        if _kwargs_func(cls) is not self.kwargs_func:
            return False
        if self.r_basis is None:
            return True
        if self.r_generation is not None:
            # No reasoning class was patched since the plan was made (see _tracked).
            return <object>(_R_GENERATION[0]) is self.r_generation
        return same_basis(class_basis(<type>self.rcls, _R_ALL_NAMES), self.r_basis)


cdef Plan _make_plan(type cls):
    cdef Plan plan = Plan.__new__(Plan)
    cdef int active
    plan.cls = cls
    rcls = plan.rcls = getattr(cls, 'reasoning_parser_cls', None)
    tcls = plan.tcls = getattr(cls, 'tool_parser_cls', None)
    tokenizer = plan.tokenizer = getattr(cls, 'tokenizer', None)
    func = plan.kwargs_func = _kwargs_func(cls)
    if func is not None and func is not _DEFAULT_KWARGS_FUNC:
        plan.kwargs_hook = getattr(cls, 'chat_template_kwargs_from_request')

    plan.r_starts = STARTS_CALL
    generation = _R_GENERATION[0]  # read before the class, so a concurrent patch renews it after
    declared = _declared_reasoning(<type>rcls) if isinstance(rcls, type) else None
    if declared is not None:
        plan.r_basis, switches = declared
        if _tracked(<type>rcls):
            plan.r_generation = generation
        plan.r_init_names = switches
        if switches or not rcls.open_tag_in_prompt:
            plan.r_starts = STARTS_SWITCHES
            plan.r_starts_names = switches if rcls.open_tag_in_prompt else ()
        else:
            plan.r_starts = STARTS_ALWAYS
        plan.r_open = rcls.reasoning_open_tag or None
        plan.r_close = rcls.reasoning_close_tag or None
        plan.r_tags_known = True

    if isinstance(tcls, type):
        try:
            plan.t_open = tcls.get_tool_open_tag() or None
        except Exception:
            pass  # raised again, at the same point, by the construction that needs it
        else:
            # lmparse's compiled dialects: the tag is a classmethod of immutable class data
            plan.t_tag_known = (immutable_type(<type>tcls)
                                and str(getattr(tcls, '__module__', '')).startswith('lmparse.'))

    select = getattr(tcls, 'for_template_kwargs', None) if isinstance(tcls, type) else None
    plan.t_select = select if callable(select) else None
    bare = getattr(tcls, 'bare_call_open', None) if isinstance(tcls, type) else None
    plan.t_bare = bare if type(bare) is str and bare else None
    if rcls is None or plan.r_tags_known:
        plan.anchors_known = True
        for active in range(3):
            t_open = plan.t_open if active else None
            plan.anchor_plain[active] = tag_anchor(plan.r_open, t_open, plan.t_bare if active == 2 else None,
                                                   &plan.reach_plain[active])
            plan.anchor_reasoning[active] = tag_anchor(plan.r_close, t_open, plan.r_open,
                                                       &plan.reach_reasoning[active])
    if tokenizer is not None and plan.r_tags_known and plan.r_close is not None:
        try:
            plan.token_ids = reasoning_token_ids(
                tokenizer, getattr(rcls, 'reasoning_open_token', None) or plan.r_open, plan.r_close)
        except Exception:
            pass  # raised again by the construction
    return plan


# parser class -> Plan; bounded, since each entry keeps its class alive.
# Free-threaded builds: a Plan is not modified once stored and dict get/set
# are atomic, so a race only builds a plan twice.
cdef dict _plans = {}


cdef Plan plan_for(type cls):
    entry = _plans.get(cls)
    if entry is not None and (<Plan>entry).current(cls):
        return <Plan>entry
    cdef Plan plan = _make_plan(cls)
    if len(_plans) >= 64:
        _plans.clear()
    _plans[cls] = plan
    return plan


# ---- reasoning framing at the start of the content (ReasoningParser declarations) ---------------

cdef tuple lead_framing(object reasoning_parser, bint reasoning_enabled, object close_tag):
    """(close tag dropped at the output's start or None, characters dropped after the close tag or None)."""
    if reasoning_parser is None:
        return None, None
    lead_close = close_tag if not reasoning_enabled and getattr(
        reasoning_parser, 'drop_leading_close_tag', False) is True else None
    chars = getattr(reasoning_parser, 'content_lead_strip', None)
    return lead_close, (chars if type(chars) is str and chars else None)


cdef str lead_strip(str p, str chars, object tag, bint final, bint *hold, bint *stripped):
    """``p`` without its first characters that are ``chars``: up to the first other one, or to where
    ``tag`` (the tool-open tag, which may start with one of them) begins. ``hold`` stays set while
    the rest may still become that tag or more of ``chars``; ``stripped`` is set when any went."""
    cdef Py_ssize_t m = 0, j, n = PyUnicode_GET_LENGTH(p), k = PyUnicode_GET_LENGTH(chars)
    cdef Py_ssize_t t = PyUnicode_GET_LENGTH(<str>tag) if tag is not None else 0
    cdef Py_UCS4 c
    while m < n:
        if t:
            if n - m >= t:
                if p.startswith(<str>tag, m):
                    hold[0] = False
                    break
            elif not final and (<str>tag).startswith(p[m:]):
                break  # held
        c = p[m]
        for j in range(k):
            if chars[j] == c:
                break
        else:
            hold[0] = False
            break
        m += 1
    if m == 0:
        return p
    stripped[0] = True
    return PyUnicode_Substring(p, m, n)


cdef int leading_tag(str p, Py_ssize_t n, str tag, bint final) except -2:
    """``tag`` at the very start of ``p``: 1 whole, 0 maybe (a proper prefix, more text to come), -1 not."""
    cdef Py_ssize_t m = PyUnicode_GET_LENGTH(tag)
    if n < m:
        return 0 if not final and tag.startswith(p) else -1
    return 1 if p.startswith(tag) else -1


cdef bint content_forced(object reasoning_parser, object kwargs) except -1:
    """``reasoning_as_missing_content`` declared and the request asks for content (vLLM's Nemotron V3)."""
    if getattr(reasoning_parser, 'reasoning_as_missing_content', False) is not True:
        return False
    return type(kwargs) is dict and (kwargs.get('force_nonempty_content') is True
                                     or kwargs.get('enable_thinking') is False)
