"""IQuest Q1 tool calls and reasoning (SGLang's ``iquest_q1``).

``<iquest_tool_call>NAME\\n<arg_key>KEY</arg_key>\\n<arg_value>VALUE</arg_value>\\n...</iquest_tool_call>``
(the GLM-4.7 grammar in IQuest's tags) after ``<think>`` reasoning that is on
unless ``thinking`` / ``enable_thinking`` switch it off. Literal results over
every chunking (``tests/catalogue.py``); values typed by the tool's schema,
strings kept raw.
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import IQuestQ1ReasoningParser, IQuestQ1ToolParser, ReasoningParserManager, ToolParserManager
from tests.catalogue import Case, dialect_suite, request_field

TO, TC, O, C = '<iquest_tool_call>', '</iquest_tool_call>', '<think>', '</think>'
SPECIAL = (TO, TC, O, C)
TAGS = (*SPECIAL, '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>')


def call(name: str, **args: str) -> str:
    body = ''.join(f'<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n' for k, v in args.items())
    return f'{TO}{name}\n{body}{TC}'


def case(id: str, text: str, content: str | None, reasoning: str | None, calls: Any = (),
         reasoning_parser: str | None = 'iquest_q1', **request: Any) -> Case:
    return Case(id, text, content, reasoning, list(calls), reasoning_parser, 'iquest_q1', request)


CASES = [
    case('basic', f'Need weather.{C}\nChecking.' + call('get_weather', city='Paris', unit='celsius'), '\nChecking.',
         'Need weather.', [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    case('typed-and-raw-strings', f'x{C}' + call('search', query=' 42 ', limit='3'), None, 'x',
         [('search', '{"query": " 42 ", "limit": 3}')]),
    case('consecutive-blocks-unknown-dropped', f'x{C}' + call('rm_rf', p='/') + call('get_time') + '\n'
         + call('search', query='q'), None, 'x', [('get_time', '{}'), ('search', '{"query": "q"}')]),
    case('value-lookalikes', f'x{C}' + call('search', query='a </arg b <arg_key c </iquest_tool'), None, 'x',
         [('search', '{"query": "a </arg b <arg_key c </iquest_tool"}')]),
    case('thinking-off-by-switch', 'Answer.' + call('get_time'), 'Answer.', None, [('get_time', '{}')],
         chat_template_kwargs={'thinking': False}),
    case('either-switch-on', f'x{C}y', 'y', 'x', chat_template_kwargs={'thinking': False, 'enable_thinking': True}),
    case('call-inside-reasoning', 'Look.' + call('get_time') + f'more{C}Done.', 'Done.', 'Look.more',
         [('get_time', '{}')]),
    case('tool-choice-none', f'x{C}ok' + call('get_time'), 'ok' + call('get_time'), 'x', tool_choice='none'),
    case('lookalikes', f'x{C}a <iquest_tool b <tool_call>get_time</tool_call>', 'a <iquest_tool b '
         '<tool_call>get_time</tool_call>', 'x'),
    # truncated / malformed (best effort, the same for every chunking)
    case('missing-value-close', f'x{C}{TO}search\n<arg_key>query</arg_key>\n<arg_value>abc\n{TC}', None, 'x',
         [('search', '{"query": "abc\\n"}')]),
    # a key marker inside a value cannot be told from a missing close tag: it is text
    case('key-marker-in-value', f'x{C}{TO}search\n<arg_key>query</arg_key>\n<arg_value>abc\n<arg_key>limit'
         f'</arg_key><arg_value>2</arg_value>{TC}tail', 'tail', 'x',
         [('search', '{"query": "abc\\n<arg_key>limit</arg_key><arg_value>2"}')]),
    case('close-markers-in-value', f'x{C}{TO}search<arg_key>query</arg_key><arg_value>a{TC}b</arg_value>c\n'
         f'</arg_value>\n{TC}tail', 'tail', 'x', [('search', '{"query": "a</iquest_tool_call>b</arg_value>c\\n"}')]),
    case('truncated-in-value', f'x{C}{TO}search\n<arg_key>query</arg_key>\n<arg_value>ab', None, 'x',
         [('search', '{"query": "ab"}')]),
    case('truncated-in-name', f'x{C}ok{TO}sea', 'ok', 'x'),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered_and_declared(make_parser: Any) -> None:
    assert ToolParserManager.get('iquest_q1') is IQuestQ1ToolParser
    assert ReasoningParserManager.get('iquest_q1') is IQuestQ1ReasoningParser
    assert IQuestQ1ReasoningParser().starts_in_reasoning_mode() is True
    assert IQuestQ1ReasoningParser(enable_thinking=False).starts_in_reasoning_mode() is False
    assert request_field(make_parser(None, 'iquest_q1'), 'skip_special_tokens') is False


def test_required_tool_choice_is_refused(make_parser: Any) -> None:
    with pytest.raises(ValueError, match='does not support'):
        make_parser(None, 'iquest_q1', tool_choice='required')
