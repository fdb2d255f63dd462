"""ERNIE 4.5: ``<tool_call>`` JSON envelopes, ``</think>`` reasoning and the ``<response>`` answer wrapper.

Each case runs through ``case_checks`` (complete parse, every chunking, every
split inside every tag, fixed and random sizes, empty final chunk, every
two-way split) against a literal expected result, and as a token stream with
each tag whole (``atomic_chunks``): no ERNIE tokenizer installs from PyPI.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from lmparse import Ernie45ReasoningParser, Ernie45ToolParser, ReasoningParserManager, ToolParserManager
from tests import catalogue
from tests.streaming import atomic_chunks, case_checks, run_case

TC, ETC = '<tool_call>', '</tool_call>'
TAGS = ('<think>', '</think>', TC, ETC, '<response>', '</response>')


def call(name: str, args: str) -> str:
    return f'{TC}\n{{"name": "{name}", "arguments": {args}}}\n{ETC}\n'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'ernie45'
    tool: str | None = 'ernie45'


W = '{"city": "Beijing"}'
CASES = [
    # vLLM's documented shapes: abc\n</think>\n\n<response>\ndef\n</response>\n and abc\n</think>\ndef
    Case('response-wrapper', 'Think.\n</think>\n\n<response>\nHello.\n</response>\n', '\n\n\nHello.\n\n',
         'Think.\n', []),
    Case('bare-answer', 'Think.\n</think>\nHello.', '\nHello.', 'Think.\n', []),
    Case('one-call', 'Need weather.\n</think>\n\n' + call('get_weather', W), '\n\n\n', 'Need weather.\n',
         [('get_weather', W)]),
    Case('two-calls-and-unknown', 'x\n</think>\n\n' + call('get_weather', W) + call('rm', '{}')
         + call('search', '{"query": "天气"}'), '\n\n\n', 'x\n',
         [('get_weather', W), ('search', '{"query": "天气"}')]),
    Case('echoed-think', '<think>\nplan\n</think>\n<response>ok</response>', '\nok', '\nplan\n', []),
    Case('call-in-reasoning', 'a' + call('get_time', '{}') + 'b</think>c', 'c', 'a\nb', [('get_time', '{}')]),
    Case('thinking-off', '<response>\nDirect.\n</response>', '\nDirect.\n', None, [],
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('no-reasoning-parser', 'Sure. ' + call('search', '{}') + '<response>x</response>', 'Sure. \nx', None,
         [('search', '{}')], reasoning=None),
    Case('truncated-reasoning', 'still', None, 'still', []),
    Case('truncated-call', 'x</think>' + TC + '\n{"name": "get_weather", "arguments": {"city": "Be', None, 'x',
         [('get_weather', '{"city": "Be')]),
    Case('response-text-mentioning-tag', 'x</think><response>Use <response> tags.</response>', 'Use  tags.',
         'x', []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
@pytest.mark.parametrize('size', [1, 3, 7])
def test_special_tokens_whole(case: Case, size: int, make_parser: Any) -> None:
    assert run_case(case.parser(make_parser), atomic_chunks(case.text, TAGS, size)) == case.expected


def test_registration(make_parser: Any) -> None:
    assert ToolParserManager.get('ernie45') is Ernie45ToolParser
    assert ReasoningParserManager.get('ernie45') is Ernie45ReasoningParser
    assert make_parser(None, 'ernie45').request.skip_special_tokens is False
