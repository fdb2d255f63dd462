"""Opt-in (LMPARSE_VLLM=1, the peers venv): K2 Horizon through lmparse's vLLM plugin classes.

The request's ``chat_template_kwargs`` pick the tool-call layout per request and a layout or effort the
template does not write is a ValueError before generation, as vLLM 0.33's own k2_horizon parsers do.
"""
from __future__ import annotations

import json
import os
from typing import Any

import pytest

if os.environ.get('LMPARSE_VLLM') != '1':
    pytest.skip('opt-in: set LMPARSE_VLLM=1 (needs vllm==0.33.0: tools/install_peers.sh)', allow_module_level=True)
pytest.importorskip('vllm')

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402

from lmparse.integrations import vllm as integ  # noqa: E402

TOOLS = [{'type': 'function', 'function': {'name': 'lookup', 'parameters': {
    'type': 'object', 'properties': {'query': {'type': 'string'}, 'limit': {'type': 'integer'}}}}}]
GO, GC, CO, CC = '<ifm|tool_calls>', '</ifm|tool_calls>', '<ifm|tool_call>', '</ifm|tool_call>'
JSON_GROUP = GO + CO + '{"name": "lookup", "arguments": {"query": "q", "limit": 2}}' + CC + GC
XML_GROUP = GO + CO + 'lookup<ifm|arg_key>limit</ifm|arg_key><ifm|arg_value>2</ifm|arg_value>' + CC + GC


class Vocab:
    def get_vocab(self) -> dict[str, int]:
        return {}


def request(fmt: Any = None, **kwargs: Any) -> ChatCompletionRequest:
    ctk = {'tool_call_format': fmt} if fmt is not None else None
    return ChatCompletionRequest(model='m', messages=[], tools=TOOLS, chat_template_kwargs=ctk, **kwargs)


@pytest.mark.parametrize('engine', [True, False], ids=['replace', 'lmparse'])
@pytest.mark.parametrize('fmt', ['yaml', 'xml_untyped', '', 1])
def test_unknown_tool_call_format_is_refused_before_generation(engine: bool, fmt: Any) -> None:
    parser = integ._tool_class('k2_horizon', engine=engine)(Vocab(), TOOLS)
    with pytest.raises(ValueError, match='Unsupported tool_call_format'):
        parser.adjust_request(request(fmt))


@pytest.mark.parametrize('fmt', [None, 'xml', 'xml_typed', 'json'])
def test_known_formats_pass(fmt: Any) -> None:
    parser = integ._tool_class('k2_horizon', engine=True)(Vocab(), TOOLS)
    req = request(fmt)
    assert parser.adjust_request(req) is req


@pytest.mark.parametrize('fmt, group', [('json', JSON_GROUP), (None, XML_GROUP)])
def test_request_format_picks_the_layout(fmt: Any, group: str) -> None:
    parser = integ._tool_class('k2_horizon', engine=True)(Vocab(), TOOLS)
    result = parser.extract_tool_calls('a' + group + 'b', request(fmt))
    assert result.tools_called and result.content == 'ab'
    assert result.tool_calls[0].function.name == 'lookup'
    assert json.loads(result.tool_calls[0].function.arguments)['limit'] == 2


def test_json_layout_streams_per_request() -> None:
    parser = integ._tool_class('k2_horizon', engine=True)(Vocab(), TOOLS)
    req = request('json')
    text = 'a' + JSON_GROUP + 'b'
    content, args, names = [], [], []
    for ch in text:
        delta = parser.extract_tool_calls_streaming('', '', ch, [], [], [], req)
        for d in [delta] if delta is not None else []:
            content.append(d.content or '')
            for tc in d.tool_calls or []:
                names.append(tc.function.name or '')
                args.append(tc.function.arguments or '')
    final = parser.finish_streaming()
    if final is not None:
        content.append(final.content or '')
    assert ''.join(content) == 'ab' and ''.join(names) == 'lookup'
    assert json.loads(''.join(args)) == {'query': 'q', 'limit': 2}


def test_junk_group_is_content() -> None:
    parser = integ._tool_class('k2_horizon', engine=True)(Vocab(), TOOLS)
    text = f'x{GO}junk{GC}y'
    assert parser.extract_tool_calls(text, request()).content == text


@pytest.mark.parametrize('effort', ['none', 'unknown'])
def test_unknown_reasoning_effort_is_refused_at_construction(effort: str) -> None:
    with pytest.raises(ValueError, match='reasoning_effort'):
        integ._reasoning_class('k2_horizon', engine=True)(Vocab(), chat_template_kwargs={'reasoning_effort': effort})
