"""Property: for any text and any chunking, streaming equals the complete parse.

Texts are built from protocol fragments (tags, partial tags, JSON syntax,
escapes, CJK) so that random inputs hit tag boundaries and malformed payloads.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import BaseResponseParser
from tests.streaming import complete, stream

EXAMPLES = 1500 if os.environ.get('LMPARSE_SLOW') else 120

COMMON = ['<think>', '</think>', '<', '</', '<th', '</thi', '\n', '\n\n', ' ', 'a', 'text', '北京', '🌧',
          '{', '}', '[', ']', '"', '\\', '\\"', ',', ':', '1', 'null', '"name"', '"f"', '"g"', '"x"',
          '"arguments"', '"parameters"', '{"name": "f", "arguments": ', '{"name": "f", "parameters": ']
DIALECT_PIECES = {
    'qwen3': ['<tool_call>', '</tool_call>', '<tool_call', '</tool_', '<tool'],
    'internlm': ['<|action_start|><|plugin|>', '<|action_end|>', '<|action_start|>', '<|plugin|>', '<|action'],
    'llama3': ['<|python_tag|>', '<|python', '<|'],
}
TOOLS = [{'type': 'function', 'function': {'name': 'f', 'parameters': {}}},
         {'type': 'function', 'function': {'name': 'x', 'parameters': {}}}]


def _texts(dialect: str) -> st.SearchStrategy[str]:
    pieces = COMMON + DIALECT_PIECES[dialect]
    return st.lists(st.sampled_from(pieces), max_size=40).map(''.join)


def _cuts(text: str) -> st.SearchStrategy[list[str]]:
    return st.lists(st.integers(0, max(len(text), 0)), max_size=12).map(
        lambda cuts: _split(text, sorted(set(cuts))))


def _split(text: str, cuts: list[int]) -> list[str]:
    out, prev = [], 0
    for c in cuts:
        if c > prev:
            out.append(text[prev:c])
            prev = c
    out.append(text[prev:])
    return out


@pytest.mark.parametrize('reasoning', ['default', None])
@pytest.mark.parametrize('dialect', sorted(DIALECT_PIECES))
@pytest.mark.parametrize('thinking', [None, False])
def test_stream_equals_complete(dialect: str, reasoning: str | None, thinking: bool | None) -> None:
    parser_cls = BaseResponseParser.with_parsers(reasoning, dialect)
    request = {'model': 'm', 'messages': [], 'tools': TOOLS}
    if thinking is not None:
        request['chat_template_kwargs'] = {'enable_thinking': thinking}

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        text = data.draw(_texts(dialect))
        chunks = data.draw(_cuts(text))
        expected = complete(parser_cls(request), text)
        got = stream(parser_cls(request), chunks)
        assert got.key() == expected.key(), (text, chunks)

    check()
