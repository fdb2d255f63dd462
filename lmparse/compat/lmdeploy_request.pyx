# cython: language_level=3
"""LMDeploy's ``ChatCompletionRequest`` adjusted at parser construction, in compiled code.

Constructing a response parser copies the request with its tools dumped to
bare function dicts (``dump_tools``), records the offered names and parameter
schemas, and normalises the copy for the chat template. On LMDeploy's pydantic
request the Python path (``lmparse.request.prepare_tools`` and
``normalize_chat_request``) costs more than the rest of construction together:
a ``model_dump`` per tool and a ``model_copy``. :class:`LmdeployRequests` gives
the same results for the common shapes:

* ``prepare_tools``: one copy with the instance state ``model_copy(update=...)``
  sets (``__dict__`` copied and updated, ``__pydantic_fields_set__`` with the
  updated names added, ``__pydantic_extra__`` copied), each ``Function`` dumped
  as its ``model_dump`` would (JSON-like values copied container by container);
* ``normalize``: the request itself when it already is normal;
* ``fields``: the fields construction reads first, from the instance state.

Anything else (``allowed_tools``, private attributes, values that are not
plain JSON, a request that needs normalising) returns ``None`` and the caller
takes the Python path. At start-up probe requests go through both paths and are
compared (type and the four state attributes); if one differs, the instance
is left unused (``fast`` is False).
"""
from cpython.dict cimport PyDict_Copy, PyDict_GetItem, PyDict_SetItem
from cpython.object cimport PyObject, PyObject_GenericGetAttr, PyObject_GenericSetAttr
from cpython.type cimport PyType_GenericNew

__all__ = ['LmdeployRequests']

cdef extern from "Python.h":
    object PyObject_GenericGetDict(object obj, void *context)

cdef tuple _EMPTY = ()
# Function's fields in LMDeploy 0.18's declaration order (model_dump's key order).
cdef tuple _FUNCTION_FIELDS = ('description', 'name', 'parameters')
# What parser construction reads first (lmparse.construction.own_fields).
cdef tuple _CONSTRUCTION_FIELDS = ('tool_choice', 'chat_template_kwargs', 'enable_thinking', 'reasoning_effort')
# Deeper schemas take the Python path.
cdef int _MAX_DEPTH = 64
cdef object _NOT_PLAIN = object()


cdef inline object _get(dict d, object key):
    """``d.get(key)`` without a method call."""
    cdef PyObject *p = PyDict_GetItem(d, key)
    return None if p is NULL else <object>p


cdef object _plain_copy(object value, int depth):
    """``value`` as pydantic dumps an ``Any`` of JSON-like values, or _NOT_PLAIN."""
    cdef type t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    if depth >= _MAX_DEPTH:
        return _NOT_PLAIN
    cdef dict out_d
    cdef list out_l
    if t is dict:
        out_d = {}
        for k, v in (<dict>value).items():
            if type(k) is not str:
                return _NOT_PLAIN
            c = _plain_copy(v, depth + 1)
            if c is _NOT_PLAIN:
                return _NOT_PLAIN
            PyDict_SetItem(out_d, k, c)
        return out_d
    if t is list:
        out_l = []
        for v in <list>value:
            c = _plain_copy(v, depth + 1)
            if c is _NOT_PLAIN:
                return _NOT_PLAIN
            out_l.append(c)
        return out_l
    return _NOT_PLAIN


cdef inline dict _state(object obj):
    """A pydantic instance's ``__dict__`` (its field values in declaration order)."""
    return <dict?>PyObject_GenericGetDict(obj, NULL)


cdef inline object _attr(object obj, str name):
    """``object.__getattribute__(obj, name)``: pydantic's ``__getattr__`` hook slows plain reads."""
    return PyObject_GenericGetAttr(obj, name)


def _same(a: object, b: object) -> bool:
    return (type(a) is type(b) and a.__dict__ == b.__dict__ and list(a.__dict__) == list(b.__dict__)
            and a.__pydantic_fields_set__ == b.__pydantic_fields_set__
            and a.__pydantic_extra__ == b.__pydantic_extra__
            and a.__pydantic_private__ == b.__pydantic_private__)


cdef class LmdeployRequests:
    """Compiled ``prepare_tools`` / ``normalize`` for LMDeploy 0.18's request type."""

    cdef readonly object request_type, tool_type, function_type, tool_choice_type
    cdef readonly bint fast

    def __init__(self, protocol: object) -> None:
        self.fast = False
        try:
            self.request_type = protocol.ChatCompletionRequest
            self.tool_type = protocol.Tool
            self.function_type = protocol.Function
            self.tool_choice_type = protocol.ToolChoice
            self.fast = self._check()
        except Exception:  # any surprise: the Python path
            self.fast = False

    def _check(self) -> bool:
        from lmparse.request import normalize_chat_request, prepare_tools, update_request

        if tuple(self.function_type.model_fields) != _FUNCTION_FIELDS:
            return False
        if self.request_type.model_config.get('extra') == 'allow':
            return False
        schema = {'type': 'object', 'properties': {'city': {'type': 'string', 'enum': ['a', 'b']},
                                                   'n': {'type': 'integer', 'minimum': 1.5}},
                  'required': ['city'], 'additionalProperties': False, 'x': None, 'y': True}
        tools = [{'type': 'function', 'function': {'name': 'get', 'description': 'd', 'parameters': schema}},
                 {'type': 'function', 'function': {'name': 'put'}},
                 {'type': 'function', 'function': {'name': 'get', 'parameters': {}}}]
        messages = [{'role': 'user', 'content': 'hi'},
                    {'role': 'assistant', 'content': None,
                     'tool_calls': [{'id': 'c', 'type': 'function',
                                     'function': {'name': 'get', 'arguments': {'city': 'a'}}}]}]
        probes = [
            {'model': 'm', 'messages': messages, 'tools': tools},
            {'model': 'm', 'messages': messages, 'tools': tools, 'tool_choice': 'none', 'stop': ['x']},
            {'model': 'm', 'messages': messages, 'tools': tools, 'tool_choice': 'required'},
            {'model': 'm', 'messages': messages, 'tools': tools,
             'tool_choice': {'type': 'function', 'function': {'name': 'put'}}},
            {'model': 'm', 'messages': messages},
            {'model': 'm', 'messages': messages, 'tools': [], 'max_completion_tokens': 5},
        ]
        updates = {'skip_special_tokens': False}
        for probe in probes:
            request = self.request_type.model_validate(probe)
            for upd in (None, updates):
                ours = self.prepare_tools(request, upd)
                if ours is None:
                    return False
                base = update_request(request, **upd) if upd else request
                theirs = prepare_tools(base)
                if not _same(ours[0], theirs[0]) or ours[1] != theirs[1] or ours[2] != theirs[2]:
                    return False
                if self.normalize(ours[0]) is not ours[0] or normalize_chat_request(theirs[0]) is not theirs[0]:
                    return False
            if self.fields(request) != tuple(getattr(request, name) for name in _CONSTRUCTION_FIELDS):
                return False
        # Shapes the Python path must take.
        if self.normalize(self.request_type.model_validate(
                {'model': 'm', 'messages': messages, 'stop': 'x'})) is not None:
            return False
        return True

    cpdef object prepare_tools(self, object request, object updates):
        """``(adjusted, allowed names, parameter schemas)`` as ``lmparse.request.prepare_tools``
        gives for ``request`` updated with ``updates`` (a dict or None); None: take the Python path."""
        if type(request) is not self.request_type:
            return None
        cdef dict state = _state(request)
        if _attr(request, '__pydantic_private__') is not None:
            return None
        choice = _get(state, 'tool_choice')
        forced = None
        if type(choice) is str:
            if not (choice == 'auto' or choice == 'none' or choice == 'required'):
                return None
        elif type(choice) is self.tool_choice_type:
            forced = choice.function.name
            if type(forced) is not str:
                return None
        else:
            return None  # allowed_tools and anything unusual
        tools = _get(state, 'tools')
        cdef list kept
        cdef set names = set()
        cdef dict schemas = {}
        if not tools:
            kept_value = None
        elif type(tools) is not list:
            return None
        else:
            kept = []
            for tool in <list>tools:
                if type(tool) is not self.tool_type:
                    return None
                function = _get(_state(tool), 'function')
                if type(function) is not self.function_type or _attr(function, '__pydantic_extra__') is not None:
                    return None
                fstate = _state(function)
                if len(fstate) != 3:
                    return None
                name = _get(fstate, 'name')
                if type(name) is not str:
                    return None
                if forced is not None and name != forced:
                    continue
                dumped = {}
                for field in _FUNCTION_FIELDS:
                    if PyDict_GetItem(fstate, field) is NULL:
                        return None
                    value = _plain_copy(<object>PyDict_GetItem(fstate, field), 0)
                    if value is _NOT_PLAIN:
                        return None
                    PyDict_SetItem(dumped, field, value)
                kept.append(dumped)
                if name not in names:
                    names.add(name)
                    parameters = dumped['parameters']
                    schemas[name] = parameters if type(parameters) is dict else {}
            kept_value = kept
        return self._copy(request, state, updates, kept_value), names, schemas

    cdef object _copy(self, object request, dict state, object updates, object tools):
        """``request.model_copy(update={**updates, 'tools': tools})``'s instance state, set directly."""
        cdef dict new_state = PyDict_Copy(state)
        fields_set = set(_attr(request, '__pydantic_fields_set__'))
        if updates:
            for key, value in (<dict?>updates).items():
                PyDict_SetItem(new_state, key, value)
                fields_set.add(key)
        PyDict_SetItem(new_state, 'tools', tools)
        fields_set.add('tools')
        extra = _attr(request, '__pydantic_extra__')
        obj = PyType_GenericNew(self.request_type, _EMPTY, None)
        PyObject_GenericSetAttr(obj, '__dict__', new_state)
        PyObject_GenericSetAttr(obj, '__pydantic_extra__', None if extra is None else dict(extra))
        PyObject_GenericSetAttr(obj, '__pydantic_fields_set__', fields_set)
        PyObject_GenericSetAttr(obj, '__pydantic_private__', None)
        return obj

    cpdef object fields(self, object request):
        """``(tool_choice, chat_template_kwargs, enable_thinking, reasoning_effort)`` as stored; None:
        another type, or one is missing."""
        if type(request) is not self.request_type:
            return None
        cdef dict state = _state(request)
        cdef list values = []
        cdef PyObject *p
        for name in _CONSTRUCTION_FIELDS:
            p = PyDict_GetItem(state, name)
            if p is NULL:
                return None
            values.append(<object>p)
        return tuple(values)

    cpdef object normalize(self, object request):
        """``request`` when ``normalize_chat_request`` would leave it unchanged; None: ask it."""
        if type(request) is not self.request_type:
            return None
        cdef dict state = _state(request)
        if _get(state, 'response_format') is not None:
            return None
        if type(_get(state, 'stop')) is str:
            return None
        # Read from __dict__: the attribute (deprecated in LMDeploy) warns on every access.
        if (_get(state, 'max_completion_tokens') is None
                and _get(state, 'max_tokens') is not None):
            return None
        messages = _get(state, 'messages')
        if type(messages) is not list:
            return None
        for message in <list>messages:
            if type(message) is not dict:
                continue
            if (<dict>message).get('role') != 'assistant':
                continue
            calls = (<dict>message).get('tool_calls')
            if type(calls) is not list:
                continue
            for call in <list>calls:
                if type(call) is not dict:
                    continue
                function = (<dict>call).get('function')
                if type(function) is dict and isinstance((<dict>function).get('arguments'), str):
                    return None  # a JSON string to decode: the Python path
        return request
