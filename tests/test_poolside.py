"""poolside v1 (Laguna-XS.2): GLM-4 XML-like tool calls, typed by schema, and opt-in ``<think>`` reasoning.

Syntax as SGLang's ``PoolsideV1Detector`` documents it:
``<tool_call>{name}\\n<arg_key>{key}</arg_key>\\n<arg_value>{val}</arg_value>\\n...</tool_call>``,
strings raw, other values JSON; reasoning only when ``enable_thinking`` (or
``thinking``) is true. No poolside tokenizer on PyPI: every split inside every
tag is checked, and the tags stream whole in the atomic test.
"""
from __future__ import annotations

from dataclasses import dataclass

from lmparse import PoolsideV1ReasoningParser, PoolsideV1ToolParser, ReasoningParserManager, ToolParserManager
from tests import catalogue

THO, THC = '<think>', '</think>'
SPECIAL = (THO, THC, '<tool_call>', '</tool_call>')
TAGS = (*SPECIAL, '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>')
ON = {'chat_template_kwargs': {'enable_thinking': True}}


def call(name: str, **params: str) -> str:
    body = ''.join(f'<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n' for k, v in params.items())
    return f'<tool_call>{name}\n{body}</tool_call>'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'poolside_v1'
    tool: str | None = 'poolside_v1'


CASES = [
    Case('default-is-content', 'Sure.\n' + call('get_weather', city='Paris'), 'Sure.\n', None,
         [('get_weather', '{"city": "Paris"}')]),
    Case('thinking-on', f'Plan.{THC}Sure.' + call('search', query='q', limit='2'), 'Sure.', 'Plan.',
         [('search', '{"query": "q", "limit": 2}')], request=ON),
    Case('thinking-switch', f'Plan.{THC}ok', 'ok', 'Plan.', [], request={'chat_template_kwargs': {'thinking': True}}),
    Case('model-opens-think', f'{THO}Plan.{THC}ok', 'ok', 'Plan.', []),
    Case('string-typed-number-stays-string', call('search', query='42', limit='7'), None, None,
         [('search', '{"query": "42", "limit": 7}')]),
    Case('two-calls-and-unknown', call('get_time') + '\n' + call('drop_db', table='x') + '\n' + call('get_weather', city='Rome'),
         None, None, [('get_time', '{}'), ('get_weather', '{"city": "Rome"}')]),
    Case('tool-in-reasoning', 'Look.' + call('get_time') + f'more{THC}Done.', 'Done.', 'Look.more',
         [('get_time', '{}')], request=ON),
    Case('value-with-lookalikes', call('search', query='a <arg_value> b </arg_valu'), None, None,
         [('search', '{"query": "a <arg_value> b </arg_valu"}')]),
    Case('truncated-in-value', '<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>abc', None, None,
         [('search', '{"query": "abc"}')]),
    Case('truncated-after-open', 'ok<tool_call>', 'ok', None, []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def test_names_and_classes() -> None:
    assert ToolParserManager.get('poolside_v1') is PoolsideV1ToolParser
    assert ReasoningParserManager.get('poolside_v1') is PoolsideV1ReasoningParser


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)
