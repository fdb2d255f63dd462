"""AI21 Jamba ``jamba``: ``<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>``.

Syntax from vLLM 0.33's Jamba parser (see ``lmparse.dialects.jamba``). Every
case is checked three ways: streamed reconstruction over many chunkings (one
chunk, every split inside every marker, fixed and random sizes, every two-way
split), ``parse_complete`` and a literal expected result; and in streams
where each special token is one chunk (no Jamba tokenizer is on PyPI).
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import JambaToolParser, ToolParserManager
from tests import catalogue
from tests.streaming import atomic_chunks, case_checks, run_case

TO, TC = '<tool_calls>', '</tool_calls>'
TAGS = (TO, TC)

Calls = list[tuple[str, str]]


def env(name: str, args: str) -> str:
    return f'{{"name": "{name}", "arguments": {args}}}'


class Case(catalogue.ToolCase):
    tool = 'jamba'


W = '{"city": "Tel Aviv", "unit": "celsius"}'
CASES = [
    Case('one', TO + '[' + env('get_weather', W) + ']' + TC, None, [('get_weather', W)]),
    Case('parallel', TO + '[' + env('get_weather', '{"city": "A"}') + ', ' + env('search', '{"query": "q"}') + ']'
         + TC, None, [('get_weather', '{"city": "A"}'), ('search', '{"query": "q"}')]),
    Case('content-before', 'Let me look that up.\n' + TO + '[' + env('get_time', '{}') + ']' + TC,
         'Let me look that up.\n', [('get_time', '{}')]),
    Case('content-after', TO + '[' + env('get_time', '{}') + ']' + TC + '\nDone.', '\nDone.', [('get_time', '{}')]),
    Case('spaced', TO + '\n[\n  ' + env('search', '{"query": "北京"}') + '\n]\n' + TC, None,
         [('search', '{"query": "北京"}')]),
    Case('single-object', TO + env('get_time', '{}') + TC, None, [('get_time', '{}')]),
    Case('unknown-dropped', TO + '[' + env('rm', '{}') + ', ' + env('get_time', '{}') + ']' + TC, None,
         [('get_time', '{}')]),
    Case('two-blocks', TO + '[' + env('get_time', '{}') + ']' + TC + TO + '[' + env('search', '{}') + ']' + TC, None,
         [('get_time', '{}'), ('search', '{}')]),
    Case('plain', 'No tools needed: 2 + 2 = 4.', 'No tools needed: 2 + 2 = 4.', []),
    Case('tag-name-in-prose', 'The <tool_call> tag is not Jamba\'s.', 'The <tool_call> tag is not Jamba\'s.', []),
    # malformed and truncated (documented best effort)
    Case('empty-list', 'a' + TO + '[]' + TC + 'b', 'ab', []),
    Case('missing-close-tag', TO + '[' + env('get_time', '{}') + ']', None, [('get_time', '{}')]),
    Case('truncated-arguments', TO + '[' + env('get_time', '{}') + ', {"name": "get_weather", "arguments": {"city": "T',
         None, [('get_time', '{}'), ('get_weather', '{"city": "T')]),
]
assert len({c.id for c in CASES}) == len(CASES)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize('size', [1, 3, 64])
def test_special_tokens_whole(case: Case, size: int, make_parser: Any) -> None:
    assert run_case(case.parser(make_parser), atomic_chunks(case.text, TAGS, size)) == case.expected


def test_registration(make_parser: Any) -> None:
    assert ToolParserManager.get('jamba') is JambaToolParser
    assert make_parser(None, 'jamba').request.skip_special_tokens is False
    assert make_parser(None, 'jamba', request_tools=None).request.skip_special_tokens is not False
