"""Microsoft Phi-4-mini ``phi4_mini_json``: ``functools[{"name": ..., "arguments": {...}}, ...]``.

Syntax from Phi-4-mini's published function-calling prompt (see
``lmparse.dialects.phi``). ``functools`` is ordinary text, so every chunking
is a real tokenizer's possibility. Every case is checked three ways: streamed
reconstruction over many chunkings (one chunk, every split inside every
marker, fixed and random sizes, every two-way split), ``parse_complete`` and
a literal expected result.
"""
from __future__ import annotations

from typing import Any

from lmparse import Phi4MiniJsonToolParser, ToolParserManager
from tests import catalogue
from tests.streaming import case_checks, fixed_chunks, stream_flagged, tool_deltas

FT = 'functools['
TAGS = (FT,)

Calls = list[tuple[str, str]]


def env(name: str, args: str, key: str = 'arguments') -> str:
    return f'{{"name": "{name}", "{key}": {args}}}'


class Case(catalogue.ToolCase):
    tool = 'phi4_mini_json'


W = '{"city": "Paris", "unit": "celsius"}'
CASES = [
    Case('one', FT + env('get_weather', W) + ']', None, [('get_weather', W)]),
    Case('parallel', FT + env('get_weather', '{"city": "A"}') + ', ' + env('search', '{"query": "q", "limit": 3}')
         + ']', None, [('get_weather', '{"city": "A"}'), ('search', '{"query": "q", "limit": 3}')]),
    Case('parameters-key', FT + env('search', '{"query": "北京"}', 'parameters') + ']', None,
         [('search', '{"query": "北京"}')]),
    Case('no-arguments', FT + '{"name": "get_time"}]', None, [('get_time', '{}')]),
    Case('newlines', FT + '\n  ' + env('get_time', '{}') + ',\n  ' + env('search', '{}') + '\n]', None,
         [('get_time', '{}'), ('search', '{}')]),
    Case('text-before-and-after', 'Let me check. ' + FT + env('get_time', '{}') + '] Done.', 'Let me check.  Done.',
         [('get_time', '{}')]),
    Case('unknown-tool-dropped', FT + env('rm', '{"p": "/"}') + ', ' + env('get_time', '{}') + ']', None,
         [('get_time', '{}')]),
    # prose: the word alone (or spaced from its bracket) is never a call
    Case('prose-word', 'Use functools.partial or import functools.', 'Use functools.partial or import functools.', []),
    Case('prose-spaced', 'functools [' + env('get_time', '{}') + ']', 'functools [' + env('get_time', '{}') + ']', []),
    Case('prose-at-end', 'call functools', 'call functools', []),
    Case('no-tools-offered', 'a ' + FT + env('get_time', '{}') + '] b', 'a  b', [], {'request_tools': None}),
    # malformed and truncated (documented best effort)
    Case('empty-list', 'a ' + FT + '] b', 'a  b', []),
    Case('not-json', 'a ' + FT + 'oops] b', 'a oops] b', []),
    Case('missing-close', FT + env('get_time', '{}'), None, [('get_time', '{}')]),
    Case('truncated-arguments', FT + env('get_time', '{}') + ', {"name": "get_weather", "arguments": {"city": "Pa',
         None, [('get_time', '{}'), ('get_weather', '{"city": "Pa')]),
]
assert len({c.id for c in CASES}) == len(CASES)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


def test_arguments_stream_as_generated(make_parser: Any) -> None:
    text = FT + env('get_weather', W) + ']'
    deltas = tool_deltas(stream_flagged(make_parser(None, 'phi4_mini_json'), fixed_chunks(text, 4)))
    assert deltas[0].function.name == 'get_weather' and deltas[0].id
    assert ''.join(d.function.arguments for d in deltas[1:]) == W
    assert len(deltas) > 5


def test_registration() -> None:
    for name in ('phi4-mini-json', 'phi4_mini_json'):
        assert ToolParserManager.get(name) is Phi4MiniJsonToolParser
