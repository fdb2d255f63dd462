"""Liquid AI LFM2 / LFM2.5: pythonic call lists between ``<|tool_call_start|>`` and ``<|tool_call_end|>``.

Syntax as the LFM2 chat template, vLLM's ``lfm2`` and SGLang's ``Lfm2Detector``
write it: ``<|tool_call_start|>[get_weather(location="Paris")]<|tool_call_end|>Text.``
Both markers are special tokens (no LFM2 tokenizer on PyPI: they stream as one
chunk each in the atomic test, and every split inside them is checked too).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


from lmparse import Lfm2ToolParser, ToolParserManager
from tests import catalogue

TO, TC = '<|tool_call_start|>', '<|tool_call_end|>'
SPECIAL = (TO, TC)
TAGS = SPECIAL


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = None
    tool: str | None = 'lfm2'


CASES = [
    Case('basic', f'{TO}[get_weather(city="Paris")]{TC}Checking the weather.', 'Checking the weather.', None,
         [('get_weather', '{"city": "Paris"}')]),
    Case('two-calls', f'Let me look.{TO}[get_weather(city=\'Tokyo\', unit="celsius"), get_time()]{TC}',
         'Let me look.', None, [('get_weather', '{"city": "Tokyo", "unit": "celsius"}'), ('get_time', '{}')]),
    Case('literals', f'{TO}[search(query="a \\"b\\" \\n c", limit=3)]{TC}', None, None,
         [('search', '{"query": "a \\"b\\" \\n c", "limit": 3}')]),
    Case('nested-literals', f'{TO}[search(query="q", opts={{"k": [1, 2.5, True, None]}})]{TC}', None, None,
         [('search', '{"query": "q", "opts": {"k": [1, 2.5, true, null]}}')]),
    Case('unknown-tool-dropped', f'{TO}[get_time(), rm(path="/")]{TC}ok', 'ok', None, [('get_time', '{}')]),
    Case('two-blocks', f'{TO}[get_time()]{TC}\n{TO}[search(query="x")]{TC}', None, None,
         [('get_time', '{}'), ('search', '{"query": "x"}')]),
    Case('json-list-is-content', f'{TO}[{{"name": "get_time", "arguments": {{}}}}]{TC}after',
         f'{TO}[{{"name": "get_time", "arguments": {{}}}}]{TC}after', None, []),
    Case('plain-text', 'Just [a link](http://x) and f(x).', 'Just [a link](http://x) and f(x).', None, []),
    Case('with-reasoning', f'<think>Need time.</think>{TO}[get_time()]{TC}Done.', 'Done.', 'Need time.',
         [('get_time', '{}')], reasoning='default'),
    Case('tool-choice-none', f'ok{TO}[get_time()]{TC}', f'ok{TO}[get_time()]{TC}', None, [],
         request={'tool_choice': 'none'}),
    Case('truncated-in-value', f'{TO}[search(query="abc', None, None, [('search', '{"query": "abc')]),
    # an undecided list head at the end of the output is text, the open tag included (the pythonic family's rule)
    Case('truncated-after-open', f'ok{TO}[get_t', f'ok{TO}[get_t', None, []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def test_names_and_classes() -> None:
    assert ToolParserManager.get('lfm2') is Lfm2ToolParser


def test_keeps_special_tokens_with_tools(make_parser: Any) -> None:
    assert make_parser(None, 'lfm2').request.skip_special_tokens is False
    assert make_parser(None, 'lfm2', request_tools=None).request.skip_special_tokens is not False


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)
