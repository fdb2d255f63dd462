"""Swiss AI Apertus ``apertus`` / ``apertus2509``: ``<|tools_prefix|>[{"NAME": {...}}]<|tools_suffix|>``, inner reasoning.

Syntax from the Apertus format specification (see ``lmparse.dialects.apertus``).
Every case is checked three ways: streamed reconstruction over many chunkings
(one chunk, every split inside every marker, fixed and random sizes, every
two-way split), ``parse_complete`` and a literal expected result; and in
streams where each special token is one chunk (no Apertus tokenizer is on PyPI).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from lmparse import ApertusReasoningParser, ApertusToolParser, ReasoningParserManager, ToolParserManager
from tests import catalogue
from tests.streaming import atomic_chunks, case_checks, fixed_chunks, run_case, stream_flagged, tool_deltas

TP, TS = '<|tools_prefix|>', '<|tools_suffix|>'
IP, IS = '<|inner_prefix|>', '<|inner_suffix|>'
TAGS = (TP, TS, IP, IS)


def calls(*items: tuple[str, str]) -> str:
    """A tools block as the format writes it: a list of one-key objects."""
    return TP + '[' + ', '.join(f'{{"{n}": {a}}}' for n, a in items) + ']' + TS


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'apertus2509'
    tool: str | None = 'apertus'


W = '{"city": "Zürich", "unit": "celsius"}'
CASES = [
    # the specification's example turn: inner thoughts, a tools block, then the answer
    Case('spec-turn', IP + 'I need to calculate this.' + IS + '\n' + calls(('get_weather', W)) + '\n[4]\nThe answer.',
         '\n\n[4]\nThe answer.', 'I need to calculate this.', [('get_weather', W)]),
    Case('parallel', calls(('get_weather', '{"city": "Bern"}'), ('search', '{"query": "Aare", "limit": 2}')), None,
         None, [('get_weather', '{"city": "Bern"}'), ('search', '{"query": "Aare", "limit": 2}')]),
    Case('empty-arguments', calls(('get_time', '{}')), None, None, [('get_time', '{}')]),
    Case('nested-arguments', calls(('search', '{"query": "a\\"b", "filters": {"lang": ["de", "fr"]}}')), None, None,
         [('search', '{"query": "a\\"b", "filters": {"lang": ["de", "fr"]}}')]),
    Case('content-before', 'Let me check. ' + calls(('get_time', '{}')), 'Let me check. ', None, [('get_time', '{}')]),
    Case('unknown-dropped', calls(('rm', '{"p": "/"}'), ('get_time', '{}')), None, None, [('get_time', '{}')]),
    Case('call-inside-inner', IP + 'a' + calls(('get_time', '{}')) + 'b' + IS + 'c', 'c', 'ab', [('get_time', '{}')]),
    Case('two-inner-blocks', IP + 'one' + IS + 'x' + IP + 'two' + IS + 'y', 'xy', 'onetwo', []),
    Case('no-reasoning', 'Grüezi!', 'Grüezi!', None, []),
    Case('tool-only-parser', calls(('get_time', '{}')) + 'ok', 'ok', None, [('get_time', '{}')], None),
    Case('reasoning-only-parser', IP + 'r' + IS + 'a', 'a', 'r', [], 'apertus2509', None),
    # malformed and truncated (documented best effort)
    Case('empty-list', 'a' + TP + '[]' + TS + 'b', 'ab', None, []),
    Case('extra-key-skipped', TP + '[{"get_time": {}, "note": "x"}]' + TS, None, None, [('get_time', '{}')]),
    Case('missing-suffix', TP + '[{"get_time": {}}]', None, None, [('get_time', '{}')]),
    Case('truncated-arguments', TP + '[{"get_weather": {"city": "Zü', None, None,
         [('get_weather', '{"city": "Zü')]),
    Case('unclosed-inner', IP + 'thinking', None, 'thinking', []),
]
assert len({c.id for c in CASES}) == len(CASES)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize('size', [1, 3, 64])
def test_special_tokens_whole(case: Case, size: int, make_parser: Any) -> None:
    assert run_case(case.parser(make_parser), atomic_chunks(case.text, TAGS, size)) == case.expected


def test_arguments_stream_as_generated(make_parser: Any) -> None:
    deltas = tool_deltas(stream_flagged(make_parser(None, 'apertus'), fixed_chunks(calls(('get_weather', W)), 4)))
    assert deltas[0].function.name == 'get_weather' and deltas[0].id
    assert ''.join(d.function.arguments for d in deltas[1:]) == W
    assert len(deltas) > 5


def test_registration(make_parser: Any) -> None:
    for name in ('apertus', 'apertus2509'):
        assert ToolParserManager.get(name) is ApertusToolParser
    assert ReasoningParserManager.get('apertus2509') is ApertusReasoningParser
    assert make_parser(None, 'apertus').request.skip_special_tokens is False
