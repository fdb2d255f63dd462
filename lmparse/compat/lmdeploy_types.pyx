# cython: language_level=3
"""LMDeploy's pydantic output types built from lmparse's objects in compiled code.

The swapped LMDeploy parsers hand LMDeploy its own ``DeltaMessage`` /
``DeltaToolCall`` / ``DeltaFunctionCall`` / ``ToolCall`` / ``FunctionCall``
instances and its own adjusted ``ChatCompletionRequest``. pydantic v2 keeps an
instance's state in four attributes (``__dict__``, ``__pydantic_fields_set__``,
``__pydantic_extra__``, ``__pydantic_private__``); ``model_construct`` sets them
without validation. :class:`Converter` sets the same four in compiled code
(``lmparse.pydantic_state``), with no Python-level call per delta.

At start-up :meth:`Converter.__init__` builds each type both ways on probe
values and compares them with ``model_construct`` (dump, JSON, fields set,
equality, the four attributes); if any differs (another pydantic, other
fields), that type falls back to ``model_construct``.
"""
from cpython.dict cimport PyDict_Copy, PyDict_SetItem
from lmparse.pydantic_state cimport new_instance
from lmparse.protocol cimport DeltaFunctionCall as LpFunctionDelta
from lmparse.protocol cimport DeltaMessage as LpMessage
from lmparse.protocol cimport DeltaToolCall as LpToolDelta
from lmparse.protocol cimport FunctionCall as LpFunction
from lmparse.protocol cimport ToolCall as LpCall
from lmparse.response cimport ResponseParserCore

from lmparse.pydantic_state import same_instance

__all__ = ['Converter', 'SwappedStream']

# Field names and order LMDeploy 0.18 declares (the serializer writes __dict__ order).
cdef tuple _MESSAGE_FIELDS = ('role', 'content', 'reasoning_content', 'tool_calls')
cdef tuple _TOOL_DELTA_FIELDS = ('id', 'type', 'index', 'function')
cdef tuple _FUNCTION_DELTA_FIELDS = ('name', 'arguments')
cdef tuple _CALL_FIELDS = ('id', 'type', 'function')
cdef tuple _FUNCTION_FIELDS = ('name', 'arguments')

# The fields LMDeploy's own constructors pass, per case (what it marks as set).
cdef frozenset _SET_TOOLS = frozenset(('role', 'tool_calls'))
cdef frozenset _SET_CONTENT = frozenset(('role', 'content'))
cdef frozenset _SET_REASONING = frozenset(('role', 'reasoning_content'))
cdef frozenset _SET_BOTH = frozenset(('role', 'content', 'reasoning_content'))
cdef frozenset _SET_TOOL_DELTA = frozenset(_TOOL_DELTA_FIELDS)
cdef frozenset _SET_NAME = frozenset(('name',))
cdef frozenset _SET_ARGUMENTS = frozenset(('arguments',))
cdef frozenset _SET_NAME_ARGUMENTS = frozenset(('name', 'arguments'))
cdef frozenset _SET_NONE = frozenset()
cdef frozenset _SET_CALL = frozenset(_CALL_FIELDS)

# All-None states copied per instance (a dict copy is cheaper than building one key by key).
cdef dict _MESSAGE_NONE = dict.fromkeys(_MESSAGE_FIELDS)
cdef dict _FUNCTION_DELTA_NONE = dict.fromkeys(_FUNCTION_DELTA_FIELDS)


cdef inline object _instance(object cls, dict state, frozenset fields_set):
    """``model_construct``'s instance state (LMDeploy's models allow no extra fields)."""
    return new_instance(cls, state, fields_set, False)


cdef object _public(object cls, dict state, frozenset fields_set):
    """The fallback: pydantic's own ``model_construct`` with the set fields only."""
    return cls.model_construct(**{k: state[k] for k in state if k in fields_set})


cdef class Converter:
    """lmparse output -> LMDeploy's pydantic types (one per process, built from its protocol module)."""

    cdef readonly object DeltaMessage, DeltaToolCall, DeltaFunctionCall, ToolCall, FunctionCall
    # Whether each type is built directly (True) or through model_construct (False).
    cdef readonly bint fast_message, fast_tool_delta, fast_function_delta, fast_call, fast_function

    def __init__(self, protocol: object) -> None:
        self.DeltaMessage = protocol.DeltaMessage
        self.DeltaToolCall = protocol.DeltaToolCall
        self.DeltaFunctionCall = protocol.DeltaFunctionCall
        self.ToolCall = protocol.ToolCall
        self.FunctionCall = protocol.FunctionCall
        self.fast_message = self._check(self.DeltaMessage, _MESSAGE_FIELDS, (
            ({'role': 'assistant', 'content': 'x', 'reasoning_content': None, 'tool_calls': None}, _SET_CONTENT),
            ({'role': 'assistant', 'content': None, 'reasoning_content': 'r', 'tool_calls': None}, _SET_REASONING),
            ({'role': 'assistant', 'content': 'x', 'reasoning_content': 'r', 'tool_calls': None}, _SET_BOTH),
            ({'role': 'assistant', 'content': None, 'reasoning_content': None, 'tool_calls': []}, _SET_TOOLS)))
        self.fast_function_delta = self._check(self.DeltaFunctionCall, _FUNCTION_DELTA_FIELDS, (
            ({'name': 'f', 'arguments': None}, _SET_NAME), ({'name': None, 'arguments': '{'}, _SET_ARGUMENTS),
            ({'name': 'f', 'arguments': '{}'}, _SET_NAME_ARGUMENTS), ({'name': None, 'arguments': None}, _SET_NONE)))
        self.fast_tool_delta = self._check(self.DeltaToolCall, _TOOL_DELTA_FIELDS, (
            ({'id': 'c', 'type': 'function', 'index': 0, 'function': None}, _SET_TOOL_DELTA),
            ({'id': None, 'type': None, 'index': 3, 'function': None}, _SET_TOOL_DELTA)))
        self.fast_function = self._check(self.FunctionCall, _FUNCTION_FIELDS, (
            ({'name': 'f', 'arguments': '{}'}, _SET_NAME_ARGUMENTS),))
        probe_function = self.FunctionCall.model_construct(name='f', arguments='{}')
        self.fast_call = self._check(self.ToolCall, _CALL_FIELDS, (
            ({'id': 'c', 'type': 'function', 'function': probe_function}, _SET_CALL),))

    @staticmethod
    def _check(cls: object, tuple fields, tuple probes) -> bool:
        try:
            if tuple(cls.model_fields) != fields:
                return False
            for state, fields_set in probes:
                if not same_instance(_instance(cls, dict(state), fields_set), _public(cls, dict(state), fields_set)):
                    return False
        except Exception:  # any surprise: use the public API
            return False
        return True

    cdef inline object _function_delta(self, LpFunctionDelta f):
        cdef frozenset fs
        if f.name is None:
            fs = _SET_NONE if f.arguments is None else _SET_ARGUMENTS
        else:
            fs = _SET_NAME if f.arguments is None else _SET_NAME_ARGUMENTS
        cdef dict state = PyDict_Copy(_FUNCTION_DELTA_NONE)
        if f.name is not None:
            PyDict_SetItem(state, 'name', f.name)
        if f.arguments is not None:
            PyDict_SetItem(state, 'arguments', f.arguments)
        if self.fast_function_delta:
            return _instance(self.DeltaFunctionCall, state, fs)
        return _public(self.DeltaFunctionCall, state, fs)

    cdef inline object _tool_delta(self, LpToolDelta d):
        function = None if d.function is None else self._function_delta(<LpFunctionDelta?>d.function)
        state = {'id': d.id, 'type': d.type, 'index': d.index, 'function': function}
        if self.fast_tool_delta:
            return _instance(self.DeltaToolCall, state, _SET_TOOL_DELTA)
        return _public(self.DeltaToolCall, state, _SET_TOOL_DELTA)

    cdef object _message(self, LpMessage m):
        cdef frozenset fs
        cdef list calls
        cdef dict state = PyDict_Copy(_MESSAGE_NONE)
        PyDict_SetItem(state, 'role', m.role)
        if m.tool_calls is not None:
            calls = <list?>m.tool_calls
            PyDict_SetItem(state, 'tool_calls', [self._tool_delta(<LpToolDelta?>d) for d in calls])
            fs = _SET_TOOLS
        elif m.reasoning_content is not None:
            PyDict_SetItem(state, 'reasoning_content', m.reasoning_content)
            if m.content is None:
                fs = _SET_REASONING
            else:
                PyDict_SetItem(state, 'content', m.content)
                fs = _SET_BOTH
        else:
            PyDict_SetItem(state, 'content', m.content)
            fs = _SET_CONTENT
        if self.fast_message:
            return _instance(self.DeltaMessage, state, fs)
        return _public(self.DeltaMessage, state, fs)

    def message(self, LpMessage m not None) -> object:
        """One lmparse ``DeltaMessage`` as LMDeploy's."""
        return self._message(m)

    def pairs(self, list out not None) -> list:
        """``stream_chunk`` output: ``[(DeltaMessage, emitted), ...]`` with LMDeploy's messages."""
        cdef list result = []
        cdef tuple pair
        for item in out:
            pair = <tuple?>item
            result.append((self._message(<LpMessage?>pair[0]), pair[1]))
        return result

    cdef object _call(self, LpCall c):
        cdef LpFunction f = <LpFunction?>c.function
        state = {'name': f.name, 'arguments': f.arguments}
        function = (_instance(self.FunctionCall, state, _SET_NAME_ARGUMENTS) if self.fast_function
                    else _public(self.FunctionCall, state, _SET_NAME_ARGUMENTS))
        state = {'id': c.id, 'type': c.type, 'function': function}
        if self.fast_call:
            return _instance(self.ToolCall, state, _SET_CALL)
        return _public(self.ToolCall, state, _SET_CALL)

    def tool_call(self, LpCall c not None) -> object:
        """One lmparse ``ToolCall`` as LMDeploy's."""
        return self._call(c)

    def complete(self, tuple result not None) -> tuple:
        """``parse_complete`` output ``(content, tool_calls, reasoning)`` with LMDeploy's tool calls."""
        content, calls, reasoning = result
        if calls is not None:
            calls = [self._call(<LpCall?>c) for c in <list?>calls]
        return content, calls, reasoning


cdef class SwappedStream:
    """Compiled ``stream_chunk`` / ``parse_complete`` of the swapped LMDeploy parsers.

    Forwards to the wrapped lmparse parser and converts its output with a
    :class:`Converter`: one Python-level call per chunk (the lmparse parser's
    own compiled method), none per delta.
    """

    cdef object _inner_stream, _inner_complete
    cdef Converter _converter
    # the wrapped lmparse parser
    cdef readonly object _inner
    # the same parser when its stream_chunk is the router's own (then called without a Python call)
    cdef ResponseParserCore _core

    def _attach(self, inner: object, Converter converter not None) -> None:
        """Wrap ``inner`` (done once by the Python subclass' constructor)."""
        self._inner = inner
        self._inner_stream = inner.stream_chunk
        self._inner_complete = inner.parse_complete
        self._converter = converter
        own = isinstance(inner, ResponseParserCore) and type(inner).stream_chunk is ResponseParserCore.stream_chunk
        self._core = <ResponseParserCore>inner if own else None

    def stream_chunk(self, delta_text, delta_token_ids=None, final=False, **kwargs):
        if self._core is not None:
            out = self._core._stream(delta_text, delta_token_ids, final)  # its stream_chunk ignores kwargs
        elif kwargs:
            out = self._inner_stream(delta_text, delta_token_ids, final, **kwargs)
        else:
            out = self._inner_stream(delta_text, delta_token_ids, final)
        if not out:
            return out
        cdef list result = []
        cdef tuple pair
        for item in <list?>out:
            pair = <tuple?>item
            result.append((self._converter._message(<LpMessage?>pair[0]), pair[1]))
        return result

    def parse_complete(self, text, token_ids=None, **kwargs):
        return self._converter.complete(self._inner_complete(text, token_ids, **kwargs))
