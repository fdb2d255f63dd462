"""inclusionAI Ling 3: GLM-4.7 XML-like tool calls and ``<think>`` reasoning (on unless switched off).

Syntax as SGLang's ``Ling3Detector`` reads it: ``<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>``,
also with the first ``<arg_key>`` right after the name and a call with no
arguments closed at once. ``<tool_call>`` / ``<arg_key>`` ... are ordinary
text for the purpose of chunking (no Ling tokenizer on PyPI): every split
inside every tag is checked.
"""
from __future__ import annotations

from dataclasses import dataclass

from lmparse import Ling3ToolParser, ReasoningParser, ReasoningParserManager, ToolParserManager
from tests import catalogue

THO, THC = '<think>', '</think>'
SPECIAL = (THO, THC, '<tool_call>', '</tool_call>')
TAGS = (*SPECIAL, '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>')


def call(name: str, sep: str = '\n', **params: str) -> str:
    body = ''.join(f'<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n' for k, v in params.items())
    return f'<tool_call>{name}{sep if params else ""}{body}</tool_call>'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'ling3'
    tool: str | None = 'ling3'


CASES = [
    Case('basic', f'The user asks.{THC}Checking.\n' + call('get_weather', city='Paris', unit='celsius'),
         'Checking.\n', 'The user asks.', [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    Case('name-then-arg-key', f'x{THC}' + call('search', '', query='q', limit='5'), None, 'x',
         [('search', '{"query": "q", "limit": 5}')]),
    Case('no-arguments', f'x{THC}' + call('get_time'), None, 'x', [('get_time', '{}')]),
    Case('two-calls-and-unknown', f'x{THC}' + call('get_time') + '\n' + call('rm', p='/') + '\n'
         + call('search', query='a & b'), None, 'x', [('get_time', '{}'), ('search', '{"query": "a & b"}')]),
    Case('tool-ends-reasoning', 'Look up.' + call('get_time') + f'more{THC}Answer.', 'Answer.', 'Look up.more',
         [('get_time', '{}')]),
    Case('model-writes-think', f'{THO}x{THC}y', 'y', 'x', []),
    Case('thinking-off', 'Direct answer.' + call('get_time'), 'Direct answer.', None, [('get_time', '{}')],
         request={'chat_template_kwargs': {'thinking': False}}),
    Case('enable-thinking-off', 'Direct.', 'Direct.', None, [],
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('multiline-value', f'x{THC}' + call('search', query='one\ntwo'), None, 'x',
         [('search', '{"query": "one\\ntwo"}')]),
    Case('lookalikes', f'x{THC}a <tool_cal b <arg_key>c</arg_key> d', 'a <tool_cal b <arg_key>c</arg_key> d', 'x', []),
    Case('truncated-in-value', f'x{THC}<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>ab', None, 'x',
         [('search', '{"query": "ab"}')]),
    Case('truncated-in-name', f'x{THC}ok<tool_call>sea', 'ok', 'x', []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def test_names_and_classes() -> None:
    assert ToolParserManager.get('ling3') is Ling3ToolParser
    assert ReasoningParserManager.get('ling3') is ReasoningParser


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)
