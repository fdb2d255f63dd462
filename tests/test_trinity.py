"""Arcee Trinity tool calls (SGLang's ``trinity``: the Qwen 2.5 ``<tool_call>`` JSON format).

``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``; Trinity models
reason in ``<think>`` and may call a tool from inside it (the reason SGLang's
detector strips the think tags), which lmparse parses as a call when a
reasoning parser is configured. Literal results over every chunking
(``tests/catalogue.py``).
"""
from __future__ import annotations

import json
from typing import Any

from lmparse import ToolParserManager, TrinityToolParser
from tests.catalogue import Case, dialect_suite

TO, TC, O, C = '<tool_call>', '</tool_call>', '<think>', '</think>'
SPECIAL = (TO, TC, O, C)
TAGS = SPECIAL


def call(name: str, args: str = '{}') -> str:
    return f'{TO}\n{{"name": {json.dumps(name)}, "arguments": {args}}}\n{TC}'


def case(id: str, text: str, content: str | None, reasoning: str | None, calls: Any = (),
         reasoning_parser: str | None = 'qwen3', **request: Any) -> Case:
    return Case(id, text, content, reasoning, list(calls), reasoning_parser, 'trinity', request)


W = '{"city": "Paris", "unit": "celsius"}'
CASES = [
    case('basic', f'The user wants weather.{C}\n\nLet me check.\n' + call('get_weather', W), '\n\nLet me check.\n',
         'The user wants weather.', [('get_weather', W)]),
    case('call-inside-reasoning', 'Look it up.' + call('search', '{"query": "q", "limit": 3}') + f'\nthen{C}Done.',
         'Done.', 'Look it up.\nthen', [('search', '{"query": "q", "limit": 3}')]),
    case('parallel-with-unknown', f'x{C}' + call('search', '{"query": "a"}') + '\n' + call('rm_rf', '{"p": "/"}')
         + '\n' + call('get_time'), None, 'x', [('search', '{"query": "a"}'), ('get_time', '{}')]),
    case('nested-source-kept', f'x{C}' + call('search', '{"query": "a \\"b\\" 北京", "f": {"n": [1, 2.50]}}'), None,
         'x', [('search', '{"query": "a \\"b\\" 北京", "f": {"n": [1, 2.50]}}')]),
    case('text-after-block', f'x{C}' + call('get_time') + '\nDone.', '\nDone.', 'x', [('get_time', '{}')]),
    case('no-reasoning-parser', f'{O}x{C}' + call('get_time'), f'{O}x{C}', None, [('get_time', '{}')],
         reasoning_parser=None),
    case('tool-choice-none', f'x{C}ok' + call('get_time'), 'ok' + call('get_time'), 'x', tool_choice='none'),
    case('lookalikes', f'x{C}a <tool_cal b {{"name": "get_time"}} c', 'a <tool_cal b {"name": "get_time"} c', 'x'),
    # truncated (best effort, the same for every chunking)
    case('truncated-in-arguments', f'x{C}ok{TO}\n{{"name": "search", "arguments": {{"query": "ab', 'ok', 'x',
         [('search', '{"query": "ab')]),
    case('truncated-in-name', f'x{C}ok{TO}\n{{"name": "sea', 'ok', 'x'),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered() -> None:
    assert ToolParserManager.get('trinity') is TrinityToolParser
    assert (TrinityToolParser.get_tool_open_tag(), TrinityToolParser.get_tool_close_tag()) == (TO, TC)
