"""Nanbeige tool calls and reasoning (SGLang's ``nanbeige``: Qwen3-Coder XML calls, Qwen3 ``<think>``).

``<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>``
after ``<think>`` reasoning that starts in the prompt. Literal results over
every chunking (``tests/catalogue.py``); values typed by the tool's schema.
"""
from __future__ import annotations

from typing import Any

from lmparse import NanbeigeToolParser, ReasoningParser, ReasoningParserManager, ToolParserManager
from tests.catalogue import Case, dialect_suite

TO, TC, O, C = '<tool_call>', '</tool_call>', '<think>', '</think>'
SPECIAL = (TO, TC, O, C)
TAGS = (*SPECIAL, '<function=', '</function>', '<parameter=', '</parameter>')


def call(name: str, **params: str) -> str:
    body = ''.join(f'<parameter={k}>\n{v}\n</parameter>\n' for k, v in params.items())
    return f'{TO}\n<function={name}>\n{body}</function>\n{TC}'


def case(id: str, text: str, content: str | None, reasoning: str | None, calls: Any = (),
         reasoning_parser: str | None = 'nanbeige', **request: Any) -> Case:
    return Case(id, text, content, reasoning, list(calls), reasoning_parser, 'nanbeige', request)


CASES = [
    case('basic', f'Need weather.\n{C}\n\n' + call('get_weather', city='Paris', unit='celsius'), '\n\n',
         'Need weather.\n', [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    case('typed-by-schema', f'x{C}' + call('search', query='42', limit='3'), None, 'x',
         [('search', '{"query": "42", "limit": 3}')]),
    case('two-functions-one-block', f'x{C}{TO}\n<function=get_time>\n</function>\n<function=search>\n'
         f'<parameter=query>\nq\n</parameter>\n</function>\n{TC}', None, 'x',
         [('get_time', '{}'), ('search', '{"query": "q"}')]),
    case('multiline-value', f'x{C}' + call('search', query='line 1\nline 2 <b> & "q"'), None, 'x',
         [('search', '{"query": "line 1\\nline 2 <b> & \\"q\\""}')]),
    case('unknown-dropped', f'x{C}' + call('rm_rf', p='/') + '\n' + call('get_time'), None, 'x',
         [('get_time', '{}')]),
    case('call-inside-reasoning', 'Look up.' + call('get_time') + f'more{C}Answer.', 'Answer.', 'Look up.more',
         [('get_time', '{}')]),
    case('thinking-off', call('get_time') + '\nDone.', '\nDone.', None, [('get_time', '{}')],
         chat_template_kwargs={'enable_thinking': False}),
    case('tool-choice-none', f'x{C}ok' + call('get_time'), 'ok' + call('get_time'), 'x', tool_choice='none'),
    # truncated / malformed (best effort, the same for every chunking)
    case('missing-parameter-close', f'x{C}{TO}\n<function=search>\n<parameter=query>\nabc\n</function>\n{TC}after',
         'after', 'x', [('search', '{"query": "abc"}')]),
    # a parameter marker inside a value cannot be told from a missing close tag: it is text
    case('parameter-marker-in-value', f'x{C}{TO}\n<function=search>\n<parameter=query>\nabc\n<parameter=limit>\n2\n'
         f'</parameter>\n</function>\n{TC}after', 'after', 'x',
         [('search', '{"query": "abc\\n<parameter=limit>\\n2"}')]),
    case('truncated-in-value', f'x{C}{TO}\n<function=search>\n<parameter=query>\nabc', None, 'x',
         [('search', '{"query": "abc"}')]),
    case('truncated-in-name', f'x{C}ok{TO}\n<function=sea', 'ok', 'x'),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered() -> None:
    assert ToolParserManager.get('nanbeige') is NanbeigeToolParser
    assert ReasoningParserManager.get('nanbeige') is ReasoningParser
