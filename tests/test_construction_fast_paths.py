"""Parser construction: the compiled fast paths for lmparse's own request type give
exactly what the general (pure Python) request helpers give."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from lmparse import BaseResponseParser, ChatCompletionRequest
from lmparse.request import (
    allowed_tool_names,
    chat_template_kwargs_from_request,
    dump_tools,
    normalize_chat_request,
    prepare_tools,
    tool_parameter_schemas,
    update_request,
)
from tests.streaming import make_request, tool

ASSISTANT_CALL = {'role': 'assistant', 'content': None, 'tool_calls': [
    {'id': 'c1', 'type': 'function', 'function': {'name': 'search', 'arguments': '{"query": "x"}'}}]}

VARIANTS: dict[str, dict[str, Any]] = {
    'plain': {},
    'no-tools': {'tools': None},
    'empty-tools': {'tools': []},
    'duplicate-names': {'tools': [tool('search'), tool('search'), tool('get_time')]},
    'no-parameters': {'tools': [{'type': 'function', 'function': {'name': 'f'}}]},
    'bare-function-dicts': {'tools': [{'name': 'search', 'parameters': {}}]},
    'choice-none': {'tool_choice': 'none'},
    'choice-required': {'tool_choice': 'required'},
    'choice-null': {'tool_choice': None},
    'choice-named': {'tool_choice': {'type': 'function', 'function': {'name': 'search'}}},
    'choice-allowed': {'tool_choice': {'type': 'allowed_tools',
                                       'allowed_tools': {'mode': 'auto', 'tools': [
                                           {'type': 'function', 'function': {'name': 'get_time'}}]}}},
    'kwargs': {'chat_template_kwargs': {'enable_thinking': False, 'x': 1}},
    'empty-kwargs': {'chat_template_kwargs': {}},
    'effort-high': {'reasoning_effort': 'high'},
    'effort-low': {'reasoning_effort': 'low'},
    'effort-kept': {'reasoning_effort': 'max', 'chat_template_kwargs': {'reasoning_effort': 'low'}},
    'top-level-thinking': {'enable_thinking': False},
    'stop-str': {'stop': 'END'},
    'max-tokens': {'max_tokens': 7},
    'both-max': {'max_tokens': 7, 'max_completion_tokens': 9},
    'text-format': {'response_format': {'type': 'text'}},
    'json-format': {'response_format': {'type': 'json_object'}},
    'assistant-call': {'messages': [{'role': 'user', 'content': 'q'}, ASSISTANT_CALL]},
    'assistant-no-calls': {'messages': [{'role': 'assistant', 'content': 'a'}]},
    'extra-field': {'user': 'u1', 'seed': 3},
}
TOOL_PARSERS = (None, 'qwen3', 'internlm', 'llama3')


def reference(request: ChatCompletionRequest, tool_parser: str | None) -> tuple[Any, ...]:
    """What construction must produce, from the general helpers only."""
    kwargs = chat_template_kwargs_from_request(request)
    if tool_parser == 'internlm':
        updates: dict[str, Any] = {'spaces_between_special_tokens': False}
        if request.tools and request.tool_choice not in ('none',):
            updates['skip_special_tokens'] = False
        request = update_request(request, **updates)
    dumped = dump_tools(request)
    names = allowed_tool_names(dumped) if tool_parser else None
    schemas = tool_parameter_schemas(dumped) if tool_parser else None
    return kwargs, normalize_chat_request(dumped), names, schemas


@pytest.mark.parametrize('tool_parser', TOOL_PARSERS)
@pytest.mark.parametrize('variant', sorted(VARIANTS))
def test_construction_matches_general_helpers(variant: str, tool_parser: str | None) -> None:
    fields = make_request(**VARIANTS[variant])
    request = ChatCompletionRequest.from_dict(fields)
    before = copy.deepcopy(request)
    cls = BaseResponseParser.with_parsers('default', tool_parser)
    if variant == 'choice-required' and tool_parser is None:
        with pytest.raises(ValueError):
            cls(request)
        return
    if variant == 'choice-required':
        pytest.importorskip('xgrammar')
        if tool_parser == 'llama3':
            with pytest.raises(ValueError, match='does not support'):
                cls(request)
            return
    parser = cls(request)
    kwargs, adjusted, names, schemas = reference(request, tool_parser)
    if variant == 'choice-required':
        # The structural tag replaces the client's response_format.
        fmt = cls.tool_parser_cls.build_required_response_format(request.tools, reasoning=parser.reasoning_enabled)
        adjusted = update_request(adjusted, response_format=fmt)
    assert parser._kwargs == kwargs
    assert parser.request == adjusted
    assert parser.request is not request or adjusted is request
    if tool_parser:
        assert parser.tool_parser._allowed_tool_names == names
        assert parser.tool_parser._tool_schemas == schemas
    # The caller's request is never modified, and its nested tool dicts are not shared.
    assert request == before
    if parser.request.tools and request.tools:
        assert all(a is not b for a in parser.request.tools for b in request.tools)
    # A dict request goes through the general path: same result.
    assert cls(fields).request == parser.request


@pytest.mark.parametrize('variant', sorted(VARIANTS))
def test_prepare_tools_matches_dump_tools(variant: str) -> None:
    request = ChatCompletionRequest.from_dict(make_request(**VARIANTS[variant]))
    dumped, names, schemas = prepare_tools(request)
    assert dumped == dump_tools(request)
    assert names == allowed_tool_names(dumped)
    assert schemas == tool_parameter_schemas(dumped)


def test_invalid_tool_name_still_rejected() -> None:
    request = ChatCompletionRequest.from_dict(make_request())
    object.__setattr__(request, 'tools', [{'type': 'function', 'function': {'name': 3}}])
    with pytest.raises(ValueError):
        BaseResponseParser.with_parsers('default', 'qwen3')(request)
