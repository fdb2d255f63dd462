"""Tests for lmparse.request on dict, lmparse and pydantic (LMDeploy-shaped) requests."""
from __future__ import annotations

import copy
import logging
import pickle
from types import SimpleNamespace
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from lmparse.request import (
    ChatCompletionRequest,
    allowed_tool_names,
    as_request,
    chat_template_kwargs_from_request,
    dump_tools,
    get_field,
    normalize_chat_request,
    tool_choice_function_name,
    tool_choice_kind,
    tool_function_dict,
    tool_parameter_schemas,
    update_request,
)

# ---------------------------------------------------------------------------
# pydantic models mirroring LMDeploy 0.18's protocol
# ---------------------------------------------------------------------------


class Function(BaseModel):
    description: str | None = None
    name: str
    parameters: dict[str, Any] | None = None


class Tool(BaseModel):
    type: str = 'function'
    function: Function


class ToolChoiceFuncName(BaseModel):
    name: str


class ToolChoice(BaseModel):
    function: ToolChoiceFuncName
    type: Literal['function'] = 'function'


class AllowedTools(BaseModel):
    mode: Literal['auto', 'required']
    tools: list[dict[str, Any]]


class AllowedToolChoice(BaseModel):
    type: Literal['allowed_tools'] = 'allowed_tools'
    allowed_tools: AllowedTools


class StreamOptions(BaseModel):
    include_usage: bool | None = False


class JsonSchema(BaseModel):
    name: str
    description: str | None = None
    json_schema: dict[str, Any] | None = Field(default=None, alias='schema')
    strict: bool | None = False
    model_config = ConfigDict(serialize_by_alias=True)


class ResponseFormat(BaseModel):
    type: Literal['text', 'json_object', 'json_schema', 'regex_schema']
    json_schema: JsonSchema | None = None
    regex_schema: str | None = None


class PydanticRequest(BaseModel):
    model: str
    messages: list[dict[str, Any]]
    temperature: float | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | AllowedToolChoice | Literal['auto', 'required', 'none'] = 'auto'
    parallel_tool_calls: bool | None = True
    max_completion_tokens: int | None = None
    max_tokens: int | None = None
    stop: str | list[str] | None = None
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    reasoning_effort: Literal['low', 'medium', 'high', 'max'] | None = None
    response_format: ResponseFormat | None = None
    skip_special_tokens: bool | None = True
    spaces_between_special_tokens: bool | None = True
    enable_thinking: bool | None = None
    chat_template_kwargs: dict[str, Any] | None = None


# ---------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------

MESSAGES = [{'role': 'user', 'content': 'hi'}]

WEATHER = {
    'description': 'Get weather',
    'name': 'get_weather',
    'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}}},
}
TIME = {'description': 'Get time', 'name': 'get_time', 'parameters': {'type': 'object', 'properties': {}}}
SEARCH = {'description': 'Search', 'name': 'search', 'parameters': None}
TOOLS = [{'type': 'function', 'function': f} for f in (WEATHER, TIME, SEARCH)]

KINDS = ('dict', 'ours', 'pydantic')


def make(kind: str, **fields: Any) -> Any:
    """Build the same request as a dict, an lmparse request or a pydantic request."""
    data = {'model': 'm', 'messages': MESSAGES, **fields}
    if kind == 'dict':
        return data
    if kind == 'ours':
        return ChatCompletionRequest.from_dict(data)
    return PydanticRequest.model_validate(data)


def fn_choice(name: str) -> dict[str, Any]:
    return {'type': 'function', 'function': {'name': name}}


def allowed_choice(*names: str, mode: str = 'auto') -> dict[str, Any]:
    return {
        'type': 'allowed_tools',
        'allowed_tools': {'mode': mode, 'tools': [{'type': 'function', 'function': {'name': n}} for n in names]},
    }


# ---------------------------------------------------------------------------
# ChatCompletionRequest
# ---------------------------------------------------------------------------


def test_defaults() -> None:
    req = ChatCompletionRequest()
    assert req.model_dump() == {
        'model': '',
        'messages': [],
        'tools': None,
        'tool_choice': 'auto',
        'parallel_tool_calls': True,
        'max_completion_tokens': None,
        'max_tokens': None,
        'stop': None,
        'stream': False,
        'stream_options': None,
        'reasoning_effort': None,
        'response_format': None,
        'skip_special_tokens': True,
        'spaces_between_special_tokens': True,
        'enable_thinking': None,
        'chat_template_kwargs': None,
    }
    assert req.extra == {}


def test_from_dict_keeps_extra_and_dumps_back() -> None:
    data = {
        'model': 'qwen',
        'messages': MESSAGES,
        'tools': TOOLS,
        'tool_choice': 'required',
        'temperature': 0.3,
        'n': 2,
        'stream': True,
        'stream_options': {'include_usage': True},
    }
    req = ChatCompletionRequest.from_dict(data)
    assert req.model == 'qwen'
    assert req.messages is MESSAGES
    assert req.tools is TOOLS
    assert req.tool_choice == 'required'
    assert req.stream is True
    assert req.extra == {'temperature': 0.3, 'n': 2}
    assert req.temperature == 0.3
    assert req.model_dump(exclude_none=True) == {
        'model': 'qwen',
        'messages': MESSAGES,
        'tools': TOOLS,
        'tool_choice': 'required',
        'parallel_tool_calls': True,
        'stream': True,
        'stream_options': {'include_usage': True},
        'skip_special_tokens': True,
        'spaces_between_special_tokens': True,
        'temperature': 0.3,
        'n': 2,
    }
    assert list(req.model_dump())[:4] == ['model', 'messages', 'tools', 'tool_choice']
    assert list(req.model_dump())[-2:] == ['temperature', 'n']
    assert ChatCompletionRequest.from_dict(req.model_dump()) == req


def test_model_dump_exclude_none_drops_none_extras() -> None:
    req = ChatCompletionRequest(model='m', user=None, seed=1)
    dumped = req.model_dump(exclude_none=True)
    assert 'user' not in dumped
    assert dumped['seed'] == 1
    assert req.model_dump()['user'] is None


def test_keyword_constructor_collects_extras() -> None:
    req = ChatCompletionRequest(model='m', messages=MESSAGES, top_k=5, extra={'seed': 7})
    assert req.extra == {'seed': 7, 'top_k': 5}
    with pytest.raises(ValueError, match=r"extra must not contain declared fields: \['model'\]"):
        ChatCompletionRequest(extra={'model': 'x'})


def test_null_tool_choice_means_auto() -> None:
    assert ChatCompletionRequest.from_dict({'tool_choice': None}).tool_choice == 'auto'
    assert ChatCompletionRequest().model_copy(update={'tool_choice': None}).tool_choice == 'auto'


def test_attribute_access_and_assignment() -> None:
    req = ChatCompletionRequest(model='m')
    req.tool_choice = 'none'
    req.temperature = 0.5  # unknown names land in extra
    assert req.tool_choice == 'none'
    assert req.extra == {'temperature': 0.5}
    assert req.temperature == 0.5
    assert not hasattr(req, 'top_p')
    with pytest.raises(AttributeError, match="has no attribute 'top_p'"):
        req.top_p
    del req.temperature
    assert req.extra == {}


def test_model_copy_shallow_deep_and_update() -> None:
    req = ChatCompletionRequest.from_dict({'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}], 'seed': 1})
    shallow = req.model_copy()
    assert shallow == req and shallow is not req
    assert shallow.messages is req.messages
    shallow.extra['seed'] = 2  # extras dict is per-copy
    assert req.extra == {'seed': 1}

    deep = req.model_copy(deep=True)
    assert deep == req
    assert deep.messages is not req.messages
    assert deep.messages[0] is not req.messages[0]

    updated = req.model_copy(update={'tool_choice': 'required', 'top_p': 0.9})
    assert updated.tool_choice == 'required'
    assert updated.extra == {'seed': 1, 'top_p': 0.9}
    assert req.tool_choice == 'auto'
    assert req.extra == {'seed': 1}

    with pytest.raises(ValueError, match=r"tool_choice must be 'auto', 'none', 'required' or a dict, got 'bogus'"):
        req.model_copy(update={'tool_choice': 'bogus'})
    with pytest.raises(TypeError, match='messages must be a list, got str'):
        req.model_copy(update={'messages': 'hi'})


def test_eq_and_repr() -> None:
    a = ChatCompletionRequest(model='m', seed=1)
    b = ChatCompletionRequest(model='m', seed=1)
    assert a == b
    assert a != ChatCompletionRequest(model='m', seed=2)
    assert a != ChatCompletionRequest(model='n', seed=1)
    assert a != {'model': 'm'}
    text = repr(a)
    assert text.startswith("ChatCompletionRequest(model='m', messages=[], tools=None, tool_choice='auto'")
    assert text.endswith("extra={'seed': 1})")


def test_copy_and_pickle() -> None:
    req = ChatCompletionRequest(model='m', messages=[{'role': 'user', 'content': 'x'}], seed=3)
    for clone in (copy.copy(req), copy.deepcopy(req), pickle.loads(pickle.dumps(req))):
        assert clone == req
        assert clone.seed == 3
    assert copy.copy(req).messages is req.messages
    assert copy.deepcopy(req).messages is not req.messages


@pytest.mark.parametrize(
    ('fields', 'exc', 'message'),
    [
        ({'messages': 'hi'}, TypeError, 'messages must be a list, got str'),
        ({'tools': {'a': 1}}, TypeError, 'tools must be a list of dicts or None, got dict'),
        ({'tools': ['x']}, TypeError, 'tools[0] must be a dict, got str'),
        ({'tools': [{'type': 'function', 'function': 'f'}]}, TypeError, 'tools[0].function must be a dict, got str'),
        ({'tools': [{'type': 'function', 'function': {}}]}, ValueError, 'tools[0].function.name must be a string'),
        ({'tools': [{'type': 'function'}]}, ValueError,
         "tools[0] must be an OpenAI tool {'type': 'function', 'function': {...}} "
         "or a function dict with a string 'name'"),
        ({'tool_choice': 'sometimes'}, ValueError,
         "tool_choice must be 'auto', 'none', 'required' or a dict, got 'sometimes'"),
        ({'tool_choice': 3}, TypeError, 'tool_choice must be a str or a dict, got int'),
        ({'tool_choice': {'type': 'function'}}, ValueError,
         "tool_choice of type 'function' requires function.name (a string)"),
        ({'tool_choice': {'type': 'function', 'function': {}}}, ValueError,
         "tool_choice of type 'function' requires function.name (a string)"),
        ({'tool_choice': {'type': 'allowed_tools', 'allowed_tools': {'mode': 'auto'}}}, ValueError,
         "tool_choice of type 'allowed_tools' requires allowed_tools.tools (a list)"),
        ({'tool_choice': {'type': 'allowed_tools', 'allowed_tools': {'mode': 'x', 'tools': []}}}, ValueError,
         "tool_choice allowed_tools.mode must be 'auto' or 'required', got 'x'"),
        ({'tool_choice': {'type': 'custom'}}, ValueError,
         "tool_choice type must be 'function' or 'allowed_tools', got 'custom'"),
        ({'chat_template_kwargs': []}, TypeError, 'chat_template_kwargs must be a dict or None, got list'),
        ({'response_format': 'json'}, TypeError, 'response_format must be a dict or None, got str'),
    ],
)
def test_validation_errors(fields: dict[str, Any], exc: type[Exception], message: str) -> None:
    with pytest.raises(exc) as info:
        ChatCompletionRequest.from_dict(fields)
    assert str(info.value) == message
    with pytest.raises(exc):
        ChatCompletionRequest(**fields)


def test_valid_tool_choice_dicts_accepted() -> None:
    assert ChatCompletionRequest(tool_choice={'function': {'name': 'f'}}).tool_choice == {'function': {'name': 'f'}}
    assert ChatCompletionRequest(tool_choice=allowed_choice('f', mode='required')).tool_choice['type'] == \
        'allowed_tools'
    # Bare function dicts (as left by dump_tools) are valid tools.
    assert ChatCompletionRequest(tools=[WEATHER]).tools == [WEATHER]


def test_from_dict_rejects_non_mapping() -> None:
    with pytest.raises(TypeError, match=r'from_dict\(\) expects a dict, got list'):
        ChatCompletionRequest.from_dict([])  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# as_request / update_request / get_field
# ---------------------------------------------------------------------------


def test_as_request() -> None:
    converted = as_request({'model': 'm', 'messages': MESSAGES, 'seed': 1})
    assert type(converted) is ChatCompletionRequest
    assert converted == ChatCompletionRequest(model='m', messages=MESSAGES, seed=1)
    ours = make('ours')
    assert as_request(ours) is ours
    pyd = make('pydantic')
    assert as_request(pyd) is pyd
    duck = SimpleNamespace(tool_choice='auto')
    assert as_request(duck) is duck
    with pytest.raises(TypeError, match='Expected a ChatCompletionRequest, a dict or a pydantic request, got int'):
        as_request(3)


@pytest.mark.parametrize('kind', KINDS)
def test_update_request(kind: str) -> None:
    req = make(kind)
    new = update_request(req, tool_choice='none', stop=['x'])
    assert type(new) is type(req)
    assert new is not req
    assert get_field(new, 'tool_choice') == 'none'
    assert get_field(new, 'stop') == ['x']
    assert get_field(req, 'tool_choice', 'auto') == 'auto'
    assert get_field(req, 'stop') is None


def test_update_request_plain_object() -> None:
    obj = SimpleNamespace(tool_choice='auto', tools=None)
    new = update_request(obj, tools=[WEATHER])
    assert isinstance(new, SimpleNamespace)
    assert new.tools == [WEATHER]
    assert obj.tools is None


def test_get_field() -> None:
    assert get_field({'a': 1}, 'a') == 1
    assert get_field({'a': 1}, 'b', 2) == 2
    assert get_field(ChatCompletionRequest(seed=4), 'seed') == 4
    assert get_field(ChatCompletionRequest(), 'seed', 'd') == 'd'
    assert get_field(make('pydantic', temperature=0.1), 'temperature') == 0.1
    assert get_field(make('pydantic'), 'nope', 5) == 5


# ---------------------------------------------------------------------------
# tool_choice
# ---------------------------------------------------------------------------


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize(
    ('choice', 'expected_kind', 'expected_name'),
    [
        ('auto', 'auto', None),
        ('none', 'none', None),
        ('required', 'required', None),
        (fn_choice('get_time'), 'function', 'get_time'),
        (allowed_choice('get_time'), 'allowed_tools', None),
    ],
)
def test_tool_choice_kind(kind: str, choice: Any, expected_kind: str, expected_name: str | None) -> None:
    req = make(kind, tools=TOOLS, tool_choice=choice)
    assert tool_choice_kind(req) == expected_kind
    assert tool_choice_function_name(req) == expected_name


def test_tool_choice_kind_defaults_and_untyped_dicts() -> None:
    assert tool_choice_kind({}) == 'auto'
    assert tool_choice_kind({'tool_choice': None}) == 'auto'
    assert tool_choice_kind({'tool_choice': {'function': {'name': 'f'}}}) == 'function'
    assert tool_choice_function_name({'tool_choice': {'function': {'name': 'f'}}}) == 'f'
    assert tool_choice_kind({'tool_choice': {'allowed_tools': {'mode': 'auto', 'tools': []}}}) == 'allowed_tools'
    with pytest.raises(ValueError, match="got 'maybe'"):
        tool_choice_kind({'tool_choice': 'maybe'})


def test_pydantic_tool_choice_types() -> None:
    req = make('pydantic', tools=TOOLS, tool_choice=fn_choice('search'))
    assert isinstance(req.tool_choice, ToolChoice)
    req2 = make('pydantic', tools=TOOLS, tool_choice=allowed_choice('search'))
    assert isinstance(req2.tool_choice, AllowedToolChoice)
    assert tool_choice_kind(req2) == 'allowed_tools'


# ---------------------------------------------------------------------------
# tool_function_dict
# ---------------------------------------------------------------------------


def test_tool_function_dict_shapes() -> None:
    openai_tool = {'type': 'function', 'function': {'name': 'f', 'parameters': {'type': 'object'}}}
    out = tool_function_dict(openai_tool)
    assert out == {'name': 'f', 'parameters': {'type': 'object'}}
    assert out is not openai_tool['function']

    bare = {'name': 'f', 'description': 'd'}
    out = tool_function_dict(bare)
    assert out == {'name': 'f', 'description': 'd'} and out is not bare

    pyd_tool = Tool(function=Function(name='f', parameters={'type': 'object'}))
    out = tool_function_dict(pyd_tool)
    assert out == {'description': None, 'name': 'f', 'parameters': {'type': 'object'}}
    assert list(out) == ['description', 'name', 'parameters']

    assert tool_function_dict(Function(name='g')) == {'description': None, 'name': 'g', 'parameters': None}
    assert tool_function_dict({'function': Function(name='h', description='x')}) == {
        'description': 'x', 'name': 'h', 'parameters': None}

    duck = SimpleNamespace(function=SimpleNamespace(name='k', description='kk'))
    out = tool_function_dict(duck)
    assert out == {'description': 'kk', 'name': 'k', 'parameters': None}
    assert list(out) == ['description', 'name', 'parameters']

    with pytest.raises(TypeError, match='Cannot interpret int as a tool function'):
        tool_function_dict(3)


# ---------------------------------------------------------------------------
# dump_tools
# ---------------------------------------------------------------------------


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize(
    ('choice', 'expected'),
    [
        ('auto', [WEATHER, TIME, SEARCH]),
        ('none', [WEATHER, TIME, SEARCH]),
        ('required', [WEATHER, TIME, SEARCH]),
        (fn_choice('get_time'), [TIME]),
        (fn_choice('missing'), []),
        (allowed_choice('search', 'get_weather'), [WEATHER, SEARCH]),  # request order
        (allowed_choice('get_time', mode='required'), [TIME]),
    ],
)
def test_dump_tools(kind: str, choice: Any, expected: list[dict[str, Any]]) -> None:
    req = make(kind, tools=TOOLS, tool_choice=choice)
    dumped = dump_tools(req)
    assert type(dumped) is type(req)
    assert get_field(dumped, 'tools') == expected
    assert all(type(t) is dict for t in get_field(dumped, 'tools'))
    # The caller's request is untouched.
    tools_before = get_field(req, 'tools')
    assert len(tools_before) == 3
    if kind != 'pydantic':
        assert tools_before == TOOLS
    # Dumping again keeps the result (an empty list becomes None, as with no tools).
    assert get_field(dump_tools(dumped), 'tools') == (expected or None)


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('tools', [None, []])
@pytest.mark.parametrize('choice', ['auto', 'required', fn_choice('get_time')])
def test_dump_tools_without_tools(kind: str, tools: Any, choice: Any) -> None:
    dumped = dump_tools(make(kind, tools=tools, tool_choice=choice))
    assert get_field(dumped, 'tools', 'missing') is None


@pytest.mark.parametrize('kind', KINDS)
def test_dump_tools_allowed_without_request_tools(kind: str) -> None:
    choice = allowed_choice('a', 'b')
    choice['allowed_tools']['tools'].append({'type': 'function', 'function': {'description': 'no name'}})
    choice['allowed_tools']['tools'].append({'type': 'function'})
    dumped = dump_tools(make(kind, tool_choice=choice))
    assert get_field(dumped, 'tools') == [{'name': 'a'}, {'name': 'b'}]

    empty = dump_tools(make(kind, tool_choice=allowed_choice()))
    assert get_field(empty, 'tools', 'missing') is None


@pytest.mark.parametrize('kind', KINDS)
def test_dump_tools_allowed_missing(kind: str) -> None:
    req = make(kind, tools=TOOLS, tool_choice=allowed_choice('zzz', 'get_time', 'nope'))
    with pytest.raises(ValueError) as info:
        dump_tools(req)
    assert str(info.value) == "Allowed tool(s) not found in request.tools: ['nope', 'zzz']"


def test_dump_tools_pydantic_fills_none_fields() -> None:
    req = make('pydantic', tools=[{'type': 'function', 'function': {'name': 'only_name'}}])
    dumped = dump_tools(req)
    assert isinstance(dumped, PydanticRequest)
    assert dumped.tools == [{'description': None, 'name': 'only_name', 'parameters': None}]
    assert isinstance(req.tools[0], Tool)
    # Dict tools are copied as given, without added keys.
    assert dump_tools(make('ours', tools=[{'type': 'function', 'function': {'name': 'only_name'}}])).tools == [
        {'name': 'only_name'}]


def test_dump_tools_does_not_alias_caller_dicts() -> None:
    req = make('ours', tools=TOOLS)
    dumped = dump_tools(req)
    dumped.tools[0]['name'] = 'changed'
    assert TOOLS[0]['function']['name'] == 'get_weather'


# ---------------------------------------------------------------------------
# allowed_tool_names / tool_parameter_schemas
# ---------------------------------------------------------------------------


@pytest.mark.parametrize('kind', KINDS)
def test_allowed_tool_names_and_schemas(kind: str) -> None:
    req = make(kind, tools=TOOLS, tool_choice=fn_choice('get_weather'))
    expected_schemas = {
        'get_weather': {'type': 'object', 'properties': {'city': {'type': 'string'}}},
        'get_time': {'type': 'object', 'properties': {}},
        'search': {},
    }
    # Raw request tools (OpenAI dicts or pydantic Tools).
    assert allowed_tool_names(req) == {'get_weather', 'get_time', 'search'}
    assert tool_parameter_schemas(req) == expected_schemas
    # Dumped request tools (bare function dicts).
    dumped = dump_tools(req)
    assert allowed_tool_names(dumped) == {'get_weather'}
    assert tool_parameter_schemas(dumped) == {'get_weather': expected_schemas['get_weather']}


def test_allowed_tool_names_edge_cases() -> None:
    assert allowed_tool_names({}) == set()
    assert allowed_tool_names(ChatCompletionRequest()) == set()
    assert tool_parameter_schemas(make('pydantic')) == {}
    tools = [{'name': 'a', 'parameters': {'x': 1}}, {'name': 'a', 'parameters': {'y': 2}}, {'name': 3}]
    assert allowed_tool_names({'tools': tools}) == {'a'}
    assert tool_parameter_schemas({'tools': tools}) == {'a': {'x': 1}}  # first wins


# ---------------------------------------------------------------------------
# chat_template_kwargs_from_request
# ---------------------------------------------------------------------------


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize(
    ('fields', 'expected', 'warnings'),
    [
        ({}, {}, 0),
        ({'chat_template_kwargs': {'foo': 1}}, {'foo': 1}, 0),
        ({'enable_thinking': False}, {'enable_thinking': False}, 1),
        ({'enable_thinking': False, 'chat_template_kwargs': {'enable_thinking': True}}, {'enable_thinking': True}, 2),
        ({'enable_thinking': True, 'chat_template_kwargs': {'enable_thinking': None}}, {'enable_thinking': True}, 1),
        ({'reasoning_effort': 'low'}, {}, 0),
        ({'reasoning_effort': 'high'}, {'reasoning_effort': 'high'}, 0),
        ({'reasoning_effort': 'max', 'chat_template_kwargs': {'reasoning_effort': 'medium'}},
         {'reasoning_effort': 'medium'}, 0),
    ],
)
def test_chat_template_kwargs(kind: str, fields: dict[str, Any], expected: dict[str, Any], warnings: int,
                              caplog: pytest.LogCaptureFixture) -> None:
    req = make(kind, **copy.deepcopy(fields))
    original_kwargs = copy.deepcopy(get_field(req, 'chat_template_kwargs'))
    with caplog.at_level(logging.WARNING, logger='lmparse'):
        result = chat_template_kwargs_from_request(req)
    assert result == expected
    assert get_field(req, 'chat_template_kwargs') == original_kwargs  # not mutated
    records = [r for r in caplog.records if r.name == 'lmparse']
    assert len(records) == warnings
    if warnings:
        assert 'deprecated' in records[0].getMessage()


# ---------------------------------------------------------------------------
# normalize_chat_request
# ---------------------------------------------------------------------------


@pytest.mark.parametrize('kind', ['ours', 'pydantic'])
def test_normalize_noop_returns_same_object(kind: str) -> None:
    req = make(kind, stop=['a'], max_completion_tokens=5)
    assert normalize_chat_request(req) is req


def test_normalize_dict_passthrough() -> None:
    data = {'model': 'm', 'messages': MESSAGES, 'stop': 'x', 'response_format': {'type': 'text'}}
    assert normalize_chat_request(data) is data
    assert data['stop'] == 'x'


@pytest.mark.parametrize('kind', ['ours', 'pydantic'])
def test_normalize_scalars(kind: str) -> None:
    req = make(kind, stop='END', max_tokens=12, response_format={'type': 'text'})
    out = normalize_chat_request(req)
    assert type(out) is type(req)
    assert out.stop == ['END']
    assert out.max_completion_tokens == 12
    assert out.response_format is None
    # Input untouched.
    assert req.stop == 'END'
    assert req.max_completion_tokens is None
    assert req.response_format is not None

    # An explicit max_completion_tokens wins over max_tokens.
    assert normalize_chat_request(make(kind, max_tokens=12, max_completion_tokens=3)).max_completion_tokens == 3


def test_normalize_response_format_to_dict() -> None:
    fmt = {'type': 'json_schema', 'json_schema': {'name': 'x', 'schema': {'type': 'object'}}}
    pyd = make('pydantic', response_format=fmt)
    assert isinstance(pyd.response_format, ResponseFormat)
    assert normalize_chat_request(pyd).response_format == {
        'type': 'json_schema',
        'json_schema': {'name': 'x', 'description': None, 'schema': {'type': 'object'}, 'strict': False},
        'regex_schema': None,
    }
    ours = make('ours', response_format=fmt)
    assert normalize_chat_request(ours) is ours  # already a dict: unchanged
    assert normalize_chat_request(ours).response_format is fmt


@pytest.mark.parametrize('kind', ['ours', 'pydantic'])
def test_normalize_tool_call_arguments(kind: str) -> None:
    user = {'role': 'user', 'content': 'weather?'}
    call_a = {'id': 'a', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city": "Paris"}'}}
    call_b = {'id': 'b', 'type': 'function', 'function': {'name': 'get_time', 'arguments': {'tz': 'UTC'}}}
    call_c = {'id': 'c', 'type': 'function', 'function': {'name': 'search', 'arguments': '[1, 2]'}}
    assistant = {'role': 'assistant', 'content': None, 'tool_calls': [call_a, call_b, call_c]}
    tool_msg = {'role': 'tool', 'tool_call_id': 'a', 'content': '{"temp": 20}'}
    plain_assistant = {'role': 'assistant', 'content': 'ok'}
    messages = [user, assistant, tool_msg, plain_assistant]
    snapshot = copy.deepcopy(messages)

    req = make(kind, messages=messages)
    out = normalize_chat_request(req)
    assert out is not req
    assert out.messages == [
        user,
        {'role': 'assistant', 'content': None, 'tool_calls': [
            {'id': 'a', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': {'city': 'Paris'}}},
            call_b,
            call_c,
        ]},
        tool_msg,
        plain_assistant,
    ]
    # Copy-on-write: caller data untouched, untouched parts shared.
    assert messages == snapshot
    assert req.messages == snapshot
    assert out.messages[0] is req.messages[0]
    assert out.messages[2] is req.messages[2]
    assert out.messages[3] is req.messages[3]
    assert out.messages[1] is not req.messages[1]
    assert out.messages[1]['tool_calls'][1] is req.messages[1]['tool_calls'][1]
    assert out.messages[1]['tool_calls'][2]['function']['arguments'] == '[1, 2]'


@pytest.mark.parametrize('kind', ['ours', 'pydantic'])
def test_normalize_messages_nothing_to_do(kind: str) -> None:
    messages = [
        {'role': 'assistant', 'tool_calls': [{'function': {'name': 'f', 'arguments': {'a': 1}}}]},
        {'role': 'assistant', 'tool_calls': [{'function': {'name': 'f', 'arguments': '"str"'}}]},
        {'role': 'assistant', 'tool_calls': None},
        {'role': 'user', 'tool_calls': [{'function': {'name': 'f', 'arguments': 'not json'}}]},
        {'role': 'assistant', 'tool_calls': ['junk', {'function': 'junk'}]},
    ]
    req = make(kind, messages=messages)
    assert normalize_chat_request(req) is req


@pytest.mark.parametrize('kind', ['ours', 'pydantic'])
@pytest.mark.parametrize(
    ('arguments', 'message'),
    [
        ('{"a": 1', 'Tool call arguments contain invalid JSON at position 7 (line 1, column 8)'),
        ('{"a":\n tru}', 'Tool call arguments contain invalid JSON at position 7 (line 2, column 2)'),
    ],
)
def test_normalize_invalid_json(kind: str, arguments: str, message: str) -> None:
    messages = [{'role': 'assistant', 'tool_calls': [{'function': {'name': 'f', 'arguments': arguments}}]}]
    with pytest.raises(ValueError) as info:
        normalize_chat_request(make(kind, messages=messages))
    assert str(info.value) == message
