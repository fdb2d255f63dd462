"""LongCat-Flash: ``<longcat_tool_call>`` JSON envelopes and ``<longcat_think>`` reasoning.

``case_checks`` runs each case over every chunking against a literal expected
result; ``atomic_chunks`` streams the tags whole (no LongCat tokenizer on PyPI).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from lmparse import LongcatReasoningParser, LongcatToolParser, ReasoningParserManager, ToolParserManager
from tests import catalogue
from tests.streaming import atomic_chunks, case_checks, run_case

LT, ELT = '<longcat_tool_call>', '</longcat_tool_call>'
TH, ETH = '<longcat_think>', '</longcat_think>'
TAGS = (LT, ELT, TH, ETH)


def call(name: str, args: str) -> str:
    return f'{LT}\n{{"name": "{name}", "arguments": {args}}}\n{ELT}'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = None
    tool: str | None = 'longcat'


W = '{"city": "Shanghai", "unit": "celsius"}'
CASES = [
    Case('one-call', 'Let me check. ' + call('get_weather', W), 'Let me check. ', None, [('get_weather', W)]),
    Case('two-calls', call('get_weather', W) + '\n' + call('search', '{"query": "x", "limit": 2}'), None, None,
         [('get_weather', W), ('search', '{"query": "x", "limit": 2}')]),
    Case('unknown-dropped', call('rm', '{"p": "/"}') + '\n' + call('get_time', '{}'), None, None,
         [('get_time', '{}')]),
    Case('plain', 'No tools needed: <tool_call> is not LongCat\'s tag.',
         'No tools needed: <tool_call> is not LongCat\'s tag.', None, []),
    Case('thinking', 'Plan the call.\n' + ETH + '\n' + call('search', '{"query": "猫"}'), '\n',
         'Plan the call.\n', [('search', '{"query": "猫"}')], 'longcat'),
    Case('thinking-answer', 'hmm' + ETH + 'Answer.', 'Answer.', 'hmm', [], 'longcat'),
    Case('thinking-off', TH + 'a' + ETH + 'b', 'ab', None, [], 'longcat',
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('truncated', call('get_weather', W)[:-len(ELT) - 5], None, None, [('get_weather', W[:-3])]),
    Case('no-tools-offered', call('search', '{}'), None, None, [], request={'request_tools': None}),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _parser(case: Case, make_parser: Any) -> Any:
    request = dict(case.request)
    if 'request_tools' in request:
        return make_parser(case.reasoning, 'longcat', request_tools=request.pop('request_tools'), **request)
    return case.parser(make_parser)


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS, parser_of=_parser)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
@pytest.mark.parametrize('size', [1, 3, 7])
def test_special_tokens_whole(case: Case, size: int, make_parser: Any) -> None:
    assert run_case(_parser(case, make_parser), atomic_chunks(case.text, TAGS, size)) == case.expected


def test_registration(make_parser: Any) -> None:
    assert ToolParserManager.get('longcat') is LongcatToolParser
    assert ReasoningParserManager.get('longcat') is LongcatReasoningParser
    assert make_parser(None, 'longcat').request.skip_special_tokens is False
