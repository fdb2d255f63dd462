"""Marker text inside brace-call strings (Gemma 4, FunctionGemma).

Inside a delimited string the block's open tag is text, and its close tag
ends the call only when the next open tag or the end of the output follows
it (after whitespace); a string ends only at its delimiter. Well-formed calls
whose string values (and reasoning) quote the dialect's own markers come
back exactly as written, over every chunking and with every marker atomic
(each is one special token). The issue's repro: a Gemma 4 string argument
quoting ``<|tool_call>call:f{}<tool_call|>`` ended the call and leaked the
rest into content.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests import catalogue
from tests.streaming import atomic_chunks, case_checks, run_case
from tests.test_gemma4 import CE, CH, Q, TC, TE, THOUGHT, js, render_call

SO, SE, ESC = '<start_function_call>', '<end_function_call>', '<escape>'


@dataclass(frozen=True)
class Case(catalogue.Case):
    reasoning: str | None = 'gemma4'
    tool: str | None = 'gemma4'


QUOTED_CALL = f'{TC}call:search{{}}{TE}'
CASES = [
    Case('issue-repro', f'{TC}call:search{{query:{Q}x {QUOTED_CALL} y{Q}}}{TE}tail', 'tail', None,
         [('search', js({'query': f'x {QUOTED_CALL} y'}))]),
    Case('close-tag-in-value', render_call('search', {'query': f'ends with {TE} here', 'limit': 2}), None, None,
         [('search', js({'query': f'ends with {TE} here', 'limit': 2}))]),
    Case('close-tag-ends-value', render_call('search', {'query': f'a{TE}'}), None, None,
         [('search', js({'query': f'a{TE}'}))]),
    Case('open-tag-in-value', render_call('search', {'query': f'{TC}call:get_time'}), None, None,
         [('search', js({'query': f'{TC}call:get_time'}))]),
    Case('channel-markers-in-value', render_call('search', {'query': f'{THOUGHT}x{CE}'}), None, None,
         [('search', js({'query': f'{THOUGHT}x{CE}'}))]),
    Case('nested-values', render_call('search', {'f': {'a': [f'{TE} b', {'c': f'{QUOTED_CALL}!'}]}}), None, None,
         [('search', js({'f': {'a': [f'{TE} b', {'c': f'{QUOTED_CALL}!'}]}}))]),
    Case('quoted-key', f'{TC}call:search{{{Q}k{TE}x{Q}:1}}{TE}', None, None, [('search', '{"k<tool_call|>x": 1}')]),
    Case('close-then-long-whitespace-is-text', render_call('search', {'query': TE + ' ' * 65 + TC}), None, None,
         [('search', js({'query': TE + ' ' * 65 + TC}))]),
    Case('two-calls-quoting-each-other', render_call('search', {'query': QUOTED_CALL})
         + render_call('get_weather', {'city': f'{TE} then {TC}'}), None, None,
         [('search', js({'query': QUOTED_CALL})), ('get_weather', js({'city': f'{TE} then {TC}'}))]),
    Case('markers-in-reasoning', f'{THOUGHT}I write {TE} and {Q} here.{CE}' + render_call('get_time', {}) + 'Done.',
         'Done.', f'I write {TE} and {Q} here.', [('get_time', '{}')]),
    Case('markers-in-content', f'A call ends with {TE} and strings use {Q}.',
         f'A call ends with {TE} and strings use {Q}.', None, []),
    # FunctionGemma: the same family, its own tokens
    Case('fg-close-tag-in-value', f'{SO}call:search{{query:{ESC}a {SE} b{ESC}}}{SE}', None, None,
         [('search', '{"query": "a <end_function_call> b"}')], None, 'functiongemma'),
    Case('fg-quoted-call-in-value', f'{SO}call:search{{query:{ESC}{SO}call:x{{}}{SE}.{ESC}}}{SE}', None, None,
         [('search', '{"query": "<start_function_call>call:x{}<end_function_call>."}')], None, 'functiongemma'),
    Case('fg-missing-delimiter-at-end', f'{SO}call:search{{query:{ESC}a{SE}', None, None,
         [('search', '{"query": "a"}')], None, 'functiongemma'),
]
TAGS = (TC, TE, Q, CH, CE, THOUGHT, SO, SE, ESC)
IDS = [c.id for c in CASES]
assert len(set(IDS)) == len(IDS)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_marker_atomic_streams(case: Case, make_parser: Any) -> None:
    for size in (1, 3):
        assert run_case(case.parser(make_parser), atomic_chunks(case.text, TAGS, size)) == case.expected


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_arguments_are_json(case: Case) -> None:
    for _name, args in case.calls:
        json.loads(args)
