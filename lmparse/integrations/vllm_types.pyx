# cython: language_level=3
"""vLLM's ``DeltaMessage`` built from lmparse's deltas in compiled code.

One chunk's lmparse deltas become one vLLM ``DeltaMessage``, with only the
fields that are set (the server dumps with ``exclude_unset``), as vLLM's own
parsers build it: ``DeltaMessage(content=...)``, ``DeltaMessage(reasoning=...)``
or ``DeltaMessage(tool_calls=[...])`` with each ``DeltaToolCall`` /
``DeltaFunctionCall`` holding the fields a call fragment carries. Consecutive
argument fragments of one call are joined into one ``DeltaToolCall``.

vLLM's constructors run a pydantic validation plus a Python-level model
validator (``OpenAIBaseModel.__log_extra_fields__``) per model. The instance
state they produce is built here directly (``lmparse.pydantic_state``); at
start-up :class:`DeltaBuilder` builds every shape both ways and compares them,
and falls back to the public constructors if anything differs (another vLLM or
pydantic).
"""
from cpython.dict cimport PyDict_SetItem
from lmparse.protocol cimport DeltaFunctionCall as LpFunctionDelta
from lmparse.protocol cimport DeltaMessage as LpMessage
from lmparse.protocol cimport DeltaToolCall as LpToolDelta
from lmparse.pydantic_state cimport new_instance
from lmparse.response cimport ResponseParserCore

from lmparse.pydantic_state import same_instance

__all__ = ['DeltaBuilder']

# Field order vLLM 0.33 declares (the serializer writes __dict__ order).
cdef tuple _MESSAGE_FIELDS = ('role', 'content', 'reasoning', 'tool_calls')
cdef tuple _TOOL_FIELDS = ('id', 'type', 'index', 'function')
cdef tuple _FUNCTION_FIELDS = ('name', 'arguments')


cdef class _Call:
    """One DeltaToolCall being assembled (its arguments may still grow)."""
    cdef object id, type, name, arguments
    cdef Py_ssize_t index
    cdef bint has_function


cdef class DeltaBuilder:
    """lmparse's ``stream_chunk`` output -> one vLLM ``DeltaMessage`` (one builder per process)."""

    cdef readonly object DeltaMessage, DeltaToolCall, DeltaFunctionCall
    # True: instance state built directly; False: the public constructors (the start-up check failed)
    cdef readonly bint fast

    def __init__(self, delta_message: object, delta_tool_call: object, delta_function_call: object) -> None:
        self.DeltaMessage = delta_message
        self.DeltaToolCall = delta_tool_call
        self.DeltaFunctionCall = delta_function_call
        self.fast = False
        self.fast = self._check()

    def _check(self) -> bool:
        """Every shape built directly equals the public constructor's instance."""
        probes = (
            {'content': 'x'}, {'reasoning': 'r'}, {'content': 'x', 'reasoning': 'r'},
            {'tool_calls': [{'index': 0, 'id': 'call_1', 'type': 'function',
                             'function': {'name': 'f', 'arguments': '{"a": 1'}}]},
            {'tool_calls': [{'index': 1, 'function': {'arguments': '}'}}], 'content': 'c', 'reasoning': 'r'},
            {'tool_calls': [{'index': 0, 'id': 'call_2', 'type': 'function', 'function': {'name': 'g'}},
                            {'index': 2}]},
        )
        try:
            if (tuple(self.DeltaMessage.model_fields) != _MESSAGE_FIELDS
                    or tuple(self.DeltaToolCall.model_fields) != _TOOL_FIELDS
                    or tuple(self.DeltaFunctionCall.model_fields) != _FUNCTION_FIELDS):
                return False
            for kwargs in probes:
                calls = None
                if 'tool_calls' in kwargs:
                    calls = []
                    for d in kwargs['tool_calls']:
                        c = _Call()
                        c.index = d['index']
                        c.id = d.get('id')
                        c.type = d.get('type')
                        fn = d.get('function')
                        c.has_function = fn is not None
                        if fn is not None:
                            c.name = fn.get('name')
                            c.arguments = fn.get('arguments')
                        calls.append(c)
                direct = self._direct(kwargs.get('content'), kwargs.get('reasoning'), calls)
                if not same_instance(direct, self.DeltaMessage(**kwargs)):
                    return False
        except Exception:  # any surprise: use the public constructors
            return False
        return True

    cdef object _tool_call(self, _Call c):
        cdef dict state = {'id': c.id, 'type': c.type, 'index': c.index, 'function': None}
        cdef set fields = {'index'}
        cdef dict fn_state
        cdef set fn_fields
        if c.id is not None:
            fields.add('id')
        if c.type is not None:
            fields.add('type')
        if c.has_function:
            fn_state = {'name': c.name, 'arguments': c.arguments}
            fn_fields = set()
            if c.name is not None:
                fn_fields.add('name')
            if c.arguments is not None:
                fn_fields.add('arguments')
            PyDict_SetItem(state, 'function', new_instance(self.DeltaFunctionCall, fn_state, fn_fields, False))
            fields.add('function')
        return new_instance(self.DeltaToolCall, state, fields, True)

    cdef object _direct(self, object content, object reasoning, list calls):
        cdef dict state = {'role': None, 'content': content, 'reasoning': reasoning, 'tool_calls': []}
        cdef set fields = set()
        if content is not None:
            fields.add('content')
        if reasoning is not None:
            fields.add('reasoning')
        if calls is not None:
            PyDict_SetItem(state, 'tool_calls', [self._tool_call(<_Call>c) for c in calls])
            fields.add('tool_calls')
        return new_instance(self.DeltaMessage, state, fields, True)

    cdef object _public(self, object content, object reasoning, list calls):
        cdef dict kwargs = {}
        cdef _Call c
        if calls is not None:
            tool_calls = []
            for item in calls:
                c = <_Call>item
                d = {'index': c.index}
                if c.id is not None:
                    d['id'] = c.id
                if c.type is not None:
                    d['type'] = c.type
                if c.has_function:
                    fn = {}
                    if c.name is not None:
                        fn['name'] = c.name
                    if c.arguments is not None:
                        fn['arguments'] = c.arguments
                    d['function'] = fn
                tool_calls.append(d)
            kwargs['tool_calls'] = tool_calls
        if content is not None:
            kwargs['content'] = content
        if reasoning is not None:
            kwargs['reasoning'] = reasoning
        return self.DeltaMessage(**kwargs)

    cpdef object build(self, list out):
        """``stream_chunk``'s ``[(DeltaMessage, emitted), ...]`` as one vLLM DeltaMessage, or None when empty."""
        cdef object content = None, reasoning = None
        cdef list calls = None
        cdef _Call last = None, call
        cdef LpMessage m
        cdef LpToolDelta tc
        cdef LpFunctionDelta fn
        cdef object name, args
        for item in out:
            m = <LpMessage?>(<tuple?>item)[0]
            if m.content:
                content = m.content if content is None else content + m.content
            if m.reasoning_content:
                reasoning = m.reasoning_content if reasoning is None else reasoning + m.reasoning_content
            if not m.tool_calls:
                continue
            if calls is None:
                calls = []
            for t in <list?>m.tool_calls:
                tc = <LpToolDelta?>t
                fn = <LpFunctionDelta?>tc.function if tc.function is not None else None
                name = fn.name if fn is not None else None
                args = fn.arguments if fn is not None else None
                if (last is not None and last.index == tc.index and tc.id is None and name is None
                        and args is not None and last.has_function):
                    last.arguments = args if last.arguments is None else last.arguments + args
                    continue
                call = _Call()
                call.index = tc.index
                call.id = tc.id
                # a continuation fragment names no type (vLLM's parsers send it with the id or the name)
                call.type = tc.type if tc.type is not None and (tc.id is not None or name is not None) else None
                call.has_function = fn is not None
                call.name = name
                call.arguments = args
                calls.append(call)
                last = call
        if content is None and reasoning is None and calls is None:
            return None
        if self.fast:
            return self._direct(content, reasoning, calls)
        return self._public(content, reasoning, calls)

    def feed(self, parser: object, delta_text: object, delta_token_ids: object) -> object:
        """One chunk through ``parser`` (an lmparse response parser), as one vLLM DeltaMessage or None."""
        if type(parser).stream_chunk is ResponseParserCore.stream_chunk:
            out = (<ResponseParserCore>parser)._stream(delta_text, delta_token_ids, False)
        else:
            out = parser.stream_chunk(delta_text, delta_token_ids)
        return self.build(out) if out else None
