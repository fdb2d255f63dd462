"""Spark 2.5 tool calls (SGLang's ``spark25``: the GLM-4.7 XML-KV grammar).

``<tool_call>NAME\\n<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>\\n</tool_call>``,
values typed by the tool's schema. Literal results over every chunking
(``tests/catalogue.py``).
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import Spark25ToolParser, ToolParserManager
from tests.catalogue import Case, dialect_suite

TO, TC = '<tool_call>', '</tool_call>'
SPECIAL = (TO, TC)
TAGS = (*SPECIAL, '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>')


def call(name: str, **args: str) -> str:
    return f'{TO}{name}\n' + ''.join(f'<arg_key>{k}</arg_key><arg_value>{v}</arg_value>' for k, v in args.items()) \
        + f'\n{TC}'


def case(id: str, text: str, content: str | None, calls: Any = (), **request: Any) -> Case:
    return Case(id, text, content, None, list(calls), None, 'spark25', request)


CASES = [
    case('basic', 'Checking.\n' + call('get_weather', city='Paris', unit='celsius'), 'Checking.\n',
         [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    case('typed-by-schema', call('search', query='007', limit='10'), None, [('search', '{"query": "007", "limit": 10}')]),
    case('no-arguments', f'{TO}get_time\n{TC}', None, [('get_time', '{}')]),
    case('parallel-unknown-dropped', call('search', query='a') + '\n' + call('rm_rf', p='/') + '\n' + call('get_time'),
         None, [('search', '{"query": "a"}'), ('get_time', '{}')]),
    case('multiline-unicode-value', call('search', query='北京\n天气 😀 <b>'), None,
         [('search', '{"query": "北京\\n天气 😀 <b>"}')]),
    case('text-after-block', call('get_time') + '\nDone.', '\nDone.', [('get_time', '{}')]),
    case('tool-choice-none', 'ok' + call('get_time'), 'ok' + call('get_time'), tool_choice='none'),
    case('lookalikes', 'a <tool_cal b </tool_call> c', 'a <tool_cal b </tool_call> c'),
    # truncated / malformed (best effort, the same for every chunking)
    case('missing-value-close', f'{TO}search\n<arg_key>query</arg_key><arg_value>abc{TC}', None,
         [('search', '{"query": "abc"}')]),
    # a key marker inside a value cannot be told from a missing close tag: it is text
    case('key-marker-in-value', f'{TO}search\n<arg_key>query</arg_key><arg_value>abc<arg_key>limit</arg_key>'
         f'<arg_value>2</arg_value>{TC}tail', 'tail', [('search', '{"query": "abc<arg_key>limit</arg_key><arg_value>2"}')]),
    case('truncated-in-value', f'{TO}search\n<arg_key>query</arg_key><arg_value>ab', None,
         [('search', '{"query": "ab"}')]),
    case('truncated-after-open', f'ok{TO}', 'ok'),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered() -> None:
    assert ToolParserManager.get('spark25') is Spark25ToolParser


def test_required_tool_choice_is_refused(make_parser: Any) -> None:
    with pytest.raises(ValueError, match='does not support'):
        make_parser(None, 'spark25', tool_choice='required')
