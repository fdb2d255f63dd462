"""rednote dots.llm1 ``dots``: ``<dots_function_call>`` blocks of ``<invoke>`` / ``<parameter>``, ``<think>`` reasoning.

Syntax from the engines' dots parsers (see ``lmparse.dialects.dots``). Every
case is checked three ways: streamed reconstruction over many chunkings (one
chunk, every split inside every marker, fixed and random sizes, every two-way
split), ``parse_complete`` and a literal expected result; and in streams where
the block markers are one chunk each (no dots tokenizer is on PyPI).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from lmparse import DotsToolParser, ReasoningParser, ReasoningParserManager, ToolParserManager
from tests import catalogue
from tests.streaming import atomic_chunks, case_checks, run_case

BO, BC = '<dots_function_call>', '</dots_function_call>'
SPECIAL = (BO, BC, '<think>', '</think>')
TAGS = (*SPECIAL, '<invoke name=', '</invoke>', '<parameter name=', '</parameter>')

Calls = list[tuple[str, str]]


def block(*invokes: tuple[str, dict[str, str]]) -> str:
    """A block as the engines' docs write it: one element per line."""
    lines = [BO]
    for name, params in invokes:
        lines.append(f'<invoke name="{name}">')
        lines.extend(f'<parameter name="{k}">{v}</parameter>' for k, v in params.items())
        lines.append('</invoke>')
    lines.append(BC)
    return '\n'.join(lines)


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'dots'
    tool: str | None = 'dots'


CASES = [
    Case('engines-example', block(('search', {'query': 'weather in Shanghai'})), None, None,
         [('search', '{"query": "weather in Shanghai"}')]),
    Case('typed-by-schema', block(('search', {'query': '上海 "today"', 'limit': '3'})), None, None,
         [('search', '{"query": "上海 \\"today\\"", "limit": 3}')]),
    Case('two-invokes', block(('get_time', {}), ('get_weather', {'city': 'Shanghai', 'unit': 'celsius'})), None, None,
         [('get_time', '{}'), ('get_weather', '{"city": "Shanghai", "unit": "celsius"}')]),
    Case('two-blocks', block(('get_time', {})) + '\n' + block(('search', {'query': 'q'})), None, None,
         [('get_time', '{}'), ('search', '{"query": "q"}')]),
    Case('reasoning-content-call', 'The user wants weather.</think>Checking.\n'
         + block(('get_weather', {'city': 'Beijing'})), 'Checking.\n', 'The user wants weather.',
         [('get_weather', '{"city": "Beijing"}')]),
    Case('think-open-written', '<think>plan</think>answer', 'answer', 'plan', []),
    Case('unknown-dropped', block(('rm', {'p': '/'}), ('get_time', {})), None, None, [('get_time', '{}')]),
    Case('multiline-value', block(('search', {'query': 'line one\nline two'})), None, None,
         [('search', '{"query": "line one\\nline two"}')]),
    Case('no-reasoning-parser', 'Hi ' + block(('get_time', {})), 'Hi ', None, [('get_time', '{}')], None),
    Case('plain', 'No call here.', 'No call here.', None, [], None),
    # malformed and truncated (documented best effort)
    Case('truncated-value', BO + '\n<invoke name="search">\n<parameter name="query">wea', None, None,
         [('search', '{"query": "wea"}')], None),
    Case('empty-block', 'a' + BO + BC + 'b', 'ab', None, [], None),
    # text in a block that is not markup is content, never dropped (vLLM's dots parser keeps it too)
    Case('block-without-invoke', 'a ' + BO + 'garbage' + BC + ' b', 'a garbage b', None, [], None),
    Case('block-text-spaces', BO + '\n  note: x < y  and  z\n' + BC, 'note: x < y  and  z', None, [], None),
    Case('block-text-around-invokes', BO + '\nfirst\n<invoke name="get_time">\n</invoke>\nthen <b>\n'
         + '<invoke name="search">\n<parameter name="query">q</parameter>\n</invoke>\nlast\n' + BC,
         'firstthen <b>last', None, [('get_time', '{}'), ('search', '{"query": "q"}')], None),
    Case('block-text-truncated', 'x' + BO + 'half a thought  ', 'xhalf a thought', None, [], None),
    Case('block-text-after-call-truncated', block(('get_time', {}))[:-len(BC)] + 'tail <dots_func',
         'tail <dots_func', None, [('get_time', '{}')], None),
    # a close tag outside a block is text, as every dialect's stray close tag (vLLM's dots parser strips it)
    Case('stray-close-tag', 'some text ' + BC + 'more', 'some text ' + BC + 'more', None, [], None),
    Case('stray-close-tag-in-reasoning', 'plan' + BC + '</think>ok' + BC, 'ok' + BC, 'plan' + BC, []),
    Case('stray-close-tag-after-block', block(('get_time', {})) + BC + ' done', BC + ' done', None,
         [('get_time', '{}')], None),
    # the same markers written as text inside a value and in reasoning stay text
    Case('block-markup-in-value', block(('search', {'query': BO + 'garbage' + BC})), None, None,
         [('search', '{"query": "<dots_function_call>garbage</dots_function_call>"}')], None),
    # a block inside reasoning is a block (calls there are calls): its text is reasoning
    Case('block-text-in-reasoning', 'I could write ' + BO + 'x' + BC + '.</think>ok', 'ok', 'I could write x.', []),
]
assert len({c.id for c in CASES}) == len(CASES)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize('size', [1, 3, 64])
def test_markers_whole(case: Case, size: int, make_parser: Any) -> None:
    assert run_case(case.parser(make_parser), atomic_chunks(case.text, SPECIAL, size)) == case.expected


def test_registration() -> None:
    assert ToolParserManager.get('dots') is DotsToolParser
    assert ReasoningParserManager.get('dots') is ReasoningParser
