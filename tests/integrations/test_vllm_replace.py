"""Opt-in (LMPARSE_VLLM=1, the peers venv): what lmparse's classes under vLLM's own names take from vLLM.

The classes are built as ``register(replace=True)`` builds them, without registering them (the
process's vLLM registry stays vLLM's for the other lanes). The vLLM suite lane
(``tools/run_vllm_suite.py``) runs vLLM's whole parser suite against them.
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
from vllm.tool_parsers import ToolParserManager  # noqa: E402

from lmparse.integrations import vllm as integ  # noqa: E402

TOOLS = [{'type': 'function', 'function': {'name': 'get_weather', 'parameters': {
    'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}}}]
CALL = '<tool_call>\n{"name": "%s", "arguments": {"city": "Paris"}}\n</tool_call>'


class Vocab:
    def __init__(self, tokens: dict[str, int]) -> None:
        self.tokens = tokens

    def get_vocab(self) -> dict[str, int]:
        return dict(self.tokens)


TOKENIZER = Vocab({'<tool_call>': 10, '</tool_call>': 11, '<think>': 12, '</think>': 13})


def request(**fields: Any) -> ChatCompletionRequest:
    return ChatCompletionRequest(model='m', messages=[], **fields)


def test_engine_class_takes_vllm_declarations() -> None:
    vllm_cls = ToolParserManager.get_tool_parser('hermes')
    if vllm_cls.__module__.startswith('lmparse.'):
        pytest.skip('vLLM names replaced in this process')
    cls = integ._tool_class('hermes', engine=True)
    assert cls.vllm_class is vllm_cls
    for attr in integ._TOOL_ENGINE_ATTRS:
        assert getattr(cls, attr) == getattr(vllm_cls, attr)
    own = integ._tool_class('hermes')
    assert own.vllm_class is None and own.structural_tag_model is None and own is not cls


def test_required_gets_vllms_structural_tag() -> None:
    cls = integ._tool_class('hermes', engine=True)
    parser = cls(TOKENIZER)
    req = request(tools=TOOLS, tool_choice='required')
    tag = parser.get_structural_tag(req)
    vllm_tag = ToolParserManager.get_tool_parser('hermes')(TOKENIZER).get_structural_tag(req)
    assert tag is not None
    assert json.dumps(tag.model_dump(), sort_keys=True) == json.dumps(vllm_tag.model_dump(), sort_keys=True)


def test_adjust_request_as_vllm() -> None:
    for engine in (True, False):
        parser = integ._tool_class('hermes', engine=engine)(TOKENIZER)
        req = parser.adjust_request(request(tools=TOOLS, tool_choice='auto'))
        assert req.skip_special_tokens is False
    vllm_req = ToolParserManager.get_tool_parser('hermes')(TOKENIZER).adjust_request(
        request(tools=TOOLS, tool_choice='auto'))
    assert vllm_req.skip_special_tokens is False


@pytest.mark.parametrize('engine,kept', [(True, True), (False, False)])
def test_undeclared_tool(engine: bool, kept: bool) -> None:
    cls = integ._tool_class('hermes', engine=engine)
    out = cls(TOKENIZER, TOOLS).extract_tool_calls(CALL % 'send_mail', request(tools=TOOLS))
    assert [c.function.name for c in out.tool_calls] == (['send_mail'] if kept else [])
    declared = cls(TOKENIZER, TOOLS).extract_tool_calls(CALL % 'get_weather', request(tools=TOOLS))
    assert [json.loads(c.function.arguments) for c in declared.tool_calls] == [{'city': 'Paris'}]


def test_tools_from_the_request() -> None:
    parser = integ._tool_class('hermes')(TOKENIZER)  # built without tools, as vLLM's tests build parsers
    out = parser.extract_tool_calls(CALL % 'get_weather', request(tools=TOOLS))
    assert [c.function.name for c in out.tool_calls] == ['get_weather']
    streamed = integ._tool_class('hermes')(TOKENIZER)
    names = []
    for piece in ('<tool_call>\n{"name": "get_', 'weather", "arguments": {"city": "Paris"}}\n</tool_call>'):
        delta = streamed.extract_tool_calls_streaming('', '', piece, [], [], [], request(tools=TOOLS))
        for tc in (delta.tool_calls if delta is not None else None) or ():
            if tc.function is not None and tc.function.name:
                names.append(tc.function.name)
    assert names == ['get_weather']


def test_extract_reasoning_reads_request_switches() -> None:
    cls = integ._reasoning_class('qwen3')
    text = 'plain answer'
    thinking = cls(TOKENIZER).extract_reasoning(text, request(chat_template_kwargs={'enable_thinking': True}))
    off = cls(TOKENIZER).extract_reasoning(text, request(chat_template_kwargs={'enable_thinking': False}))
    assert off == (None, 'plain answer')
    assert thinking == ('plain answer', None)


def test_deltas_built_as_vllm_constructs_them() -> None:
    """The plugin's compiled DeltaMessage equals what vLLM's own constructors build from the same fields."""
    import random

    from lmparse.integrations import vllm as plugin
    from lmparse.pydantic_state import same_instance
    from tests.test_engine_types import _public, _random_chunk
    from vllm.entrypoints.generate.base.protocol import DeltaMessage

    builder = plugin._DELTAS
    assert builder.fast and builder.DeltaMessage is DeltaMessage
    rng = random.Random(3)
    for _ in range(300):
        chunk = _random_chunk(rng)
        direct = builder.build(chunk)
        if direct is not None:
            assert same_instance(direct, _public(builder, chunk))
