"""Request adapters: a faster construction path for one foreign request type.

``lmparse.compat.lmdeploy_request.LmdeployRequests`` is checked here on the
pydantic models of ``tests/test_request.py`` (LMDeploy 0.18's request shape,
no LMDeploy needed): for every request shape its result is the generic
path's (type, ``__dict__`` in order, fields set, extra, private), and it
declines (None) every shape it does not handle. The opt-in LMDeploy lanes run
it on LMDeploy's own types.
"""
from __future__ import annotations

import copy
import itertools
from types import SimpleNamespace
from typing import Any

import pytest

import lmparse
from lmparse.compat.lmdeploy_request import LmdeployRequests
from lmparse.request import (
    REQUEST_ADAPTERS,
    normalize_chat_request,
    prepare_tools,
    register_request_adapter,
    update_request,
)
from tests.test_request import (
    MESSAGES,
    TOOLS,
    AllowedToolChoice,
    Function,
    PydanticRequest,
    Tool,
    ToolChoice,
    allowed_choice,
    fn_choice,
)

pytestmark = pytest.mark.filterwarnings('ignore:Pydantic serializer warnings:UserWarning')

PROTOCOL = SimpleNamespace(ChatCompletionRequest=PydanticRequest, Tool=Tool, Function=Function,
                           ToolChoice=ToolChoice, AllowedToolChoice=AllowedToolChoice)

NESTED = {'type': 'object', 'properties': {
    'q': {'type': 'string', 'enum': ['a', 'b'], 'default': None},
    'n': {'type': 'number', 'minimum': 0.5, 'maximum': 10, 'exclusive': True},
    'deep': {'type': 'array', 'items': {'type': 'object', 'properties': {'x': {'type': ['string', 'null']}}}}},
    'required': ['q'], 'additionalProperties': False}
DUPLICATE = {'type': 'function', 'function': {'name': 'get_weather', 'parameters': {'type': 'object'}}}
NESTED_TOOL = {'type': 'function', 'function': {'name': 'nested', 'description': 'n', 'parameters': NESTED}}
HISTORY = [*MESSAGES, {'role': 'assistant', 'content': None, 'tool_calls': [
    {'id': 'c', 'type': 'function', 'function': {'name': 'search', 'arguments': {'q': 'a'}}}]},
    {'role': 'tool', 'tool_call_id': 'c', 'content': 'r'}]

# Shapes the adapter handles: (tools, tool_choice, other fields)
HANDLED_TOOLS = [None, [], TOOLS, [*TOOLS, DUPLICATE, NESTED_TOOL]]
HANDLED_CHOICES = ['auto', 'none', 'required', fn_choice('get_time'), fn_choice('absent')]
HANDLED_FIELDS: list[dict[str, Any]] = [{}, {'messages': HISTORY, 'stop': ['x'], 'max_completion_tokens': 3},
                                        {'chat_template_kwargs': {'enable_thinking': False}, 'temperature': 0.5}]
UPDATES = [None, {'skip_special_tokens': False}, {'skip_special_tokens': False, 'spaces_between_special_tokens': False}]


def _state(obj: Any) -> tuple[Any, ...]:
    return (type(obj), list(obj.__dict__.items()), obj.__pydantic_fields_set__, obj.__pydantic_extra__,
            obj.__pydantic_private__)


@pytest.fixture(scope='module')
def adapter() -> LmdeployRequests:
    a = LmdeployRequests(PROTOCOL)
    assert a.fast, 'the start-up check rejected the LMDeploy-shaped models'
    return a


@pytest.mark.parametrize('tools, choice, fields', list(itertools.product(
    range(len(HANDLED_TOOLS)), range(len(HANDLED_CHOICES)), range(len(HANDLED_FIELDS)))))
def test_prepare_tools_equals_generic_path(adapter: LmdeployRequests, tools: int, choice: int,
                                           fields: int) -> None:
    data: dict[str, Any] = {'model': 'm', 'messages': MESSAGES, 'tool_choice': HANDLED_CHOICES[choice],
                            **HANDLED_FIELDS[fields]}
    if HANDLED_TOOLS[tools] is not None:
        data['tools'] = HANDLED_TOOLS[tools]
    request = PydanticRequest.model_validate(data)
    before = copy.deepcopy(request)
    for updates in UPDATES:
        ours = adapter.prepare_tools(request, updates)
        assert ours is not None
        theirs = prepare_tools(update_request(request, **updates) if updates else request)
        assert _state(ours[0]) == _state(theirs[0])
        assert ours[1:] == theirs[1:]
        # dumped tools are copies: changing them leaves the request's Function untouched
        for dumped in ours[0].tools or []:
            if isinstance(dumped.get('parameters'), dict):
                dumped['parameters']['mutated'] = True
        assert request == before and _state(request) == _state(before)
        assert adapter.normalize(ours[0]) is ours[0]
        assert normalize_chat_request(theirs[0]) is theirs[0]


@pytest.mark.parametrize('data', [
    {'tool_choice': allowed_choice('get_time'), 'tools': TOOLS},  # allowed_tools: generic path
    {'tools': [{'type': 'function', 'function': {'name': 'f', 'parameters': {'t': (1, 2)}}}]},  # not JSON
    {'tools': [{'type': 'function', 'function': {'name': 'f', 'parameters': {'p': {1: 'a'}}}}]},  # int key
], ids=['allowed_tools', 'tuple_value', 'int_key'])
def test_prepare_tools_declines(adapter: LmdeployRequests, data: dict[str, Any]) -> None:
    request = PydanticRequest.model_validate({'model': 'm', 'messages': MESSAGES, **data})
    assert adapter.prepare_tools(request, None) is None
    assert adapter.prepare_tools(data, None) is None  # not the registered type
    deep = PydanticRequest.model_validate({'model': 'm', 'messages': MESSAGES, 'tools': [
        {'type': 'function', 'function': {'name': 'f', 'parameters': _deep(80)}}]})
    assert adapter.prepare_tools(deep, None) is None  # deeper than the compiled copy goes


def _deep(n: int) -> dict[str, Any]:
    node: dict[str, Any] = {'leaf': 1}
    for _ in range(n):
        node = {'a': [node]}
    return node


@pytest.mark.parametrize('data', [
    {'stop': 'x'}, {'max_tokens': 5}, {'response_format': {'type': 'json_object'}},
    {'response_format': {'type': 'text'}},
    {'messages': [*MESSAGES, {'role': 'assistant', 'tool_calls': [
        {'id': 'c', 'type': 'function', 'function': {'name': 'f', 'arguments': '{"a": 1}'}}]}]},
], ids=['stop_str', 'max_tokens', 'json_object', 'text_format', 'string_arguments'])
def test_normalize_declines_what_needs_normalizing(adapter: LmdeployRequests, data: dict[str, Any]) -> None:
    request = PydanticRequest.model_validate({'model': 'm', 'messages': MESSAGES, **data})
    assert normalize_chat_request(request) is not request
    assert adapter.normalize(request) is None


@pytest.mark.parametrize('data', [
    {}, {'tool_choice': 'none', 'chat_template_kwargs': {'enable_thinking': False}},
    {'tool_choice': fn_choice('x'), 'enable_thinking': True, 'reasoning_effort': 'high'}])
def test_fields_are_the_stored_values(adapter: LmdeployRequests, data: dict[str, Any]) -> None:
    request = PydanticRequest.model_validate({'model': 'm', 'messages': MESSAGES, **data})
    assert adapter.fields(request) == (request.tool_choice, request.chat_template_kwargs,
                                       request.enable_thinking, request.reasoning_effort)
    assert adapter.fields(data) is None


@pytest.mark.parametrize('data', [
    {'chat_template_kwargs': {'enable_thinking': False}}, {'enable_thinking': False},
    {'chat_template_kwargs': {'thinking': True}, 'reasoning_effort': 'max'},
    {'tool_choice': 'none', 'tools': TOOLS}, {'tool_choice': fn_choice('get_time'), 'tools': TOOLS}])
def test_construction_with_the_adapter_equals_without(adapter: LmdeployRequests, data: dict[str, Any]) -> None:
    """Template kwargs, thinking and tool_choice read through fields() give the generic result."""
    request = PydanticRequest.model_validate({'model': 'm', 'messages': MESSAGES, **data})
    cls = lmparse.BaseResponseParser.with_parsers('qwen3', 'qwen3')
    plain = cls(request)
    register_request_adapter(PydanticRequest, adapter)
    try:
        adapted = cls(request)
    finally:
        register_request_adapter(PydanticRequest, None)
    assert adapted._kwargs == plain._kwargs
    assert (adapted.enable_thinking, adapted.reasoning_enabled) == (plain.enable_thinking, plain.reasoning_enabled)
    assert _state(adapted.request) == _state(plain.request)
    text = 'r</think>a<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    ours, theirs = adapted.parse_complete(text), plain.parse_complete(text)
    calls = lambda r: [(c.function.name, c.function.arguments) for c in r[1] or []]  # noqa: E731
    assert (ours[0], calls(ours), ours[2]) == (theirs[0], calls(theirs), theirs[2])


def test_private_attributes_take_the_generic_path(adapter: LmdeployRequests) -> None:
    class WithPrivate(PydanticRequest):
        _note: str = 'x'
    request = WithPrivate.model_validate({'model': 'm', 'messages': MESSAGES, 'tools': TOOLS})
    assert adapter.prepare_tools(request, None) is None  # another type
    proto = SimpleNamespace(**{**vars(PROTOCOL), 'ChatCompletionRequest': WithPrivate})
    assert LmdeployRequests(proto).prepare_tools(request, None) is None  # private state


def test_start_up_check_rejects_other_models() -> None:
    class OtherFunction(Function):
        strict: bool | None = None
    assert not LmdeployRequests(SimpleNamespace(**{**vars(PROTOCOL), 'Function': OtherFunction})).fast
    assert not LmdeployRequests(SimpleNamespace(ChatCompletionRequest=dict)).fast


class _Counting:
    """Delegates to an adapter and counts what construction asks."""

    def __init__(self, inner: LmdeployRequests) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def prepare_tools(self, request: Any, updates: dict[str, Any] | None) -> Any:
        self.calls.append('prepare_tools')
        return self.inner.prepare_tools(request, updates)

    def normalize(self, request: Any) -> Any:
        self.calls.append('normalize')
        return self.inner.normalize(request)

    def fields(self, request: Any) -> Any:
        self.calls.append('fields')
        return self.inner.fields(request)


@pytest.mark.parametrize('tool', ['qwen3', 'internlm', None])
def test_construction_consults_the_registered_adapter(adapter: LmdeployRequests, tool: str | None) -> None:
    request = PydanticRequest.model_validate({'model': 'm', 'messages': MESSAGES, 'tools': TOOLS})
    cls = lmparse.BaseResponseParser.with_parsers('qwen3', tool)
    plain = cls(request)
    counting = _Counting(adapter)
    register_request_adapter(PydanticRequest, counting)
    try:
        adapted = cls(request)
    finally:
        register_request_adapter(PydanticRequest, None)
    assert PydanticRequest not in REQUEST_ADAPTERS
    assert counting.calls == ['fields', 'prepare_tools', 'normalize']
    assert _state(adapted.request) == _state(plain.request)
    if tool is not None:
        assert adapted.tool_parser._allowed_tool_names == plain.tool_parser._allowed_tool_names
        assert adapted.tool_parser._tool_schemas == plain.tool_parser._tool_schemas
    text = '<think>r</think>a<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    ours, theirs = adapted.parse_complete(text), plain.parse_complete(text)
    calls = lambda r: [(c.function.name, c.function.arguments) for c in r[1] or []]  # noqa: E731
    assert (ours[0], calls(ours), ours[2]) == (theirs[0], calls(theirs), theirs[2])
    if tool == 'qwen3':
        assert calls(ours) == [('get_time', '{}')]
