"""Preferred Networks PLaMo 3: ``<|plamo:...|>`` tool-request sections and think blocks.

Syntax as vLLM's ``vllm/parser/plamo3.py`` and its tests' complete outputs
write it (markers adjacent)::

    <|plamo:begin_think:plamo|>R<|plamo:end_think:plamo|>
    <|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>
    <|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>
    <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{...}<|plamo:end_tool_arguments:plamo|>
    <|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>

The markers are split by PLaMo's tokenizer (not on PyPI), so every split
inside every marker is checked; the atomic test streams each marker whole.
"""
from __future__ import annotations

from dataclasses import dataclass

from lmparse import Plamo3ReasoningParser, Plamo3ToolParser, ReasoningParserManager, ToolParserManager
from tests import catalogue

THO, THC = '<|plamo:begin_think:plamo|>', '<|plamo:end_think:plamo|>'
RS, RE = '<|plamo:begin_tool_requests:plamo|>', '<|plamo:end_tool_requests:plamo|>'
QS, QE = '<|plamo:begin_tool_request:plamo|>', '<|plamo:end_tool_request:plamo|>'
NS, NE = '<|plamo:begin_tool_name:plamo|>', '<|plamo:end_tool_name:plamo|>'
AS, AE = '<|plamo:begin_tool_arguments:plamo|>', '<|plamo:end_tool_arguments:plamo|>'
CJ, MSG, EOT = '<|plamo:constrain|>', '<|plamo:msg|>', '<|plamo:tag|>'
SPECIAL = (THO, THC, RS, RE, QS, QE, NS, NE, AS, AE, CJ, MSG, EOT)
TAGS = SPECIAL


def call(name: str, args: str) -> str:
    return f'{QS}{NS}{name}{NE}{AS}{CJ}json{MSG}{args}{AE}{QE}'


def block(*calls: str) -> str:
    return RS + ''.join(calls) + RE


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'plamo3'
    tool: str | None = 'plamo3'


CASES = [
    Case('reasoning-and-content', f'let me think{THC}Here is the answer.', 'Here is the answer.', 'let me think', []),
    Case('model-opens-think', f'{THO}deciding{THC}ok', 'ok', 'deciding', []),
    Case('one-call', f'deciding{THC}' + block(call('get_weather', '{"city": "Tokyo"}')), None, 'deciding',
         [('get_weather', '{"city": "Tokyo"}')]),
    Case('two-calls-and-unknown', f'x{THC}Sure.' + block(call('get_time', '{}'), call('rm', '{"p": "/"}'),
                                                          call('search', '{"query": "q", "limit": 2}')) + 'after',
         'Sure.after', 'x', [('get_time', '{}'), ('search', '{"query": "q", "limit": 2}')]),
    Case('nested-json', f'x{THC}' + block(call('search', '{"query": "a \\"<|plamo:end_tool_arguments:plamo|>\\"", '
                                                         '"opts": {"k": [1, 2]}}')), None, 'x',
         [('search', '{"query": "a \\"<|plamo:end_tool_arguments:plamo|>\\"", "opts": {"k": [1, 2]}}')]),
    Case('tool-ends-reasoning', 'Look.' + block(call('get_time', '{}')) + f'more{THC}Done.', 'Done.', 'Look.more',
         [('get_time', '{}')]),
    Case('eot-dropped', f'x{THC}Answer.{EOT}', 'Answer.', 'x', []),
    Case('thinking-off', 'Direct.' + block(call('get_time', '{}')), 'Direct.', None, [('get_time', '{}')],
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('no-reasoning-parser', 'Plain ' + block(call('get_time', '{}')), 'Plain ', None, [('get_time', '{}')],
         reasoning=None),
    Case('lookalikes', f'x{THC}a <|plamo:begin_tool b <|plamo:x|> c', 'a <|plamo:begin_tool b <|plamo:x|> c', 'x', []),
    Case('truncated-in-arguments', f'x{THC}' + RS + f'{QS}{NS}search{NE}{AS}{CJ}json{MSG}{{"query": "ab', None, 'x',
         [('search', '{"query": "ab')]),
    Case('truncated-in-name', f'x{THC}ok{RS}{QS}{NS}sea', 'ok', 'x', []),
    # a second end-think marker is a marker, not the answer's text (vLLM drops it too)
    Case('duplicate-end-think', f'x{THC}A{THC}B', 'AB', 'x', []),
    Case('end-think-in-answer-only', f'{THC}A{THC}B', 'AB', None, []),
    Case('end-think-thinking-off', f'A{THC}B', 'AB', None, [], request={'chat_template_kwargs': {'enable_thinking': False}}),
    # a marker the end of the output cut: its first piece is a special token, so it is no text (dropped)
    Case('cut-end-think-piece', 'visible<|plamo:end_', None, 'visible', []),
    Case('cut-end-think-word', 'visible<|plamo:end_think', None, 'visible', []),
    Case('cut-end-think-almost', 'visible<|plamo:end_think:plamo|', None, 'visible', []),
    Case('cut-tool-requests', f'x{THC}ok<|plamo:begin_tool_req', 'ok', 'x', []),
    Case('cut-begin-think-in-answer', f'x{THC}ok <|plamo:begin_thi', 'ok ', 'x', []),
    Case('cut-marker-thinking-off', 'ok<|plamo:end_thi', 'ok', None, [],
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    # shorter than a piece, or not a marker prefix: text as written
    Case('cut-short-prefix-is-text', f'x{THC}ok <|plamo:', 'ok <|plamo:', 'x', []),
    Case('cut-partial-piece-is-text', f'x{THC}ok <|plamo:b', 'ok <|plamo:b', 'x', []),
    Case('piece-then-other-text', f'x{THC}ok <|plamo:begin_tool b', 'ok <|plamo:begin_tool b', 'x', []),
    Case('piece-in-reasoning-not-at-end', 'a <|plamo:end_ b' + THC + 'c', 'c', 'a <|plamo:end_ b', []),
    # marker text inside arguments is argument text, cut or not
    Case('cut-marker-in-arguments', f'x{THC}' + RS + f'{QS}{NS}search{NE}{AS}{CJ}json{MSG}{{"query": "<|plamo:end_',
         None, 'x', [('search', '{"query": "<|plamo:end_')]),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def test_names_and_classes() -> None:
    assert ToolParserManager.get('plamo3') is Plamo3ToolParser
    assert ReasoningParserManager.get('plamo3') is Plamo3ReasoningParser


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)
