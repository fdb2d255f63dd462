"""Beam: Harmony-style channel messages whose calls are ``<rfl:parameter>`` lists.

Syntax as SGLang 0.5.23's ``BEAM_RESPONSE_TEMPLATE`` (``sglang/srt/parser/beam.py``)
describes it (see lmparse/dialects/beam.py)::

    <|channel|>analysis<|message|>R<|end|><|start|>assistant to=NAME<|channel|>analysis <|constrain|>xml<|message|>
    <rfl:parameter name="K">\\nV\\n</rfl:parameter><|call|>
    <|start|>assistant<|channel|>final<|message|>A<|return|>

The Beam tokenizer is not on PyPI: every split inside every marker is checked,
and the atomic test streams each special token whole.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmparse import BeamReasoningParser, BeamToolParser, ReasoningParserManager, ToolParserManager
from tests import catalogue
from tests.streaming import fixed_chunks, stream_flagged, tool_deltas

START, CHANNEL, MSG, CONSTRAIN = '<|start|>', '<|channel|>', '<|message|>', '<|constrain|>'
END, RETURN, CALL = '<|end|>', '<|return|>', '<|call|>'
SPECIAL = (START, CHANNEL, MSG, CONSTRAIN, END, RETURN, CALL)
TAGS = (*SPECIAL, '<rfl:parameter', '</rfl:parameter>', ' to=')
NEXT = END + START + 'assistant'


def analysis(text: str) -> str:
    """Reasoning, closed as the template closes it (the next message's start consumed)."""
    return CHANNEL + 'analysis' + MSG + text + NEXT


def final(text: str, end: str = RETURN) -> str:
    return CHANNEL + 'final' + MSG + text + end


def param(key: str, value: str, close: bool = True) -> str:
    return f'<rfl:parameter name="{key}">\n{value}\n' + ('</rfl:parameter>' if close else '')


def call(name: str, *params: str, end: str = CALL) -> str:
    return f' to={name}{CHANNEL}analysis {CONSTRAIN}xml{MSG}' + ''.join(params) + end


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'beam'
    tool: str | None = 'beam'


ECHO = param('query', 'x')
CASES = [
    Case('reasoning-then-answer', analysis('Think.') + final('Answer.'), 'Answer.', 'Think.', []),
    Case('reasoning-then-call', analysis('Need weather.') + call('get_weather', param('city', 'Paris')), None,
         'Need weather.', [('get_weather', '{"city": "Paris"}')]),
    Case('several-calls', analysis('Plan.') + call('get_weather', param('city', 'Paris'), end=NEXT)
         + call('search', param('limit', '2'), param('query', 'q')), None, 'Plan.',
         [('get_weather', '{"city": "Paris"}'), ('search', '{"limit": 2, "query": "q"}')]),
    Case('call-then-answer', analysis('r') + call('get_time', end=NEXT) + final('Noon.'), 'Noon.', 'r',
         [('get_time', '{}')]),
    Case('missing-parameter-close', call('search', param('query', 'a b', close=False), param('limit', '3')), None, None,
         [('search', '{"query": "a b", "limit": 3}')]),
    Case('values-are-text', call('search', param('query', '  spaced\n\nlines  '), param('limit', 'many')), None, None,
         [('search', '{"query": "  spaced\\n\\nlines  ", "limit": "many"}')]),
    Case('echo-in-reasoning', analysis('write ' + ECHO + ' later') + final('ok'), 'ok', 'write ' + ECHO + ' later',
         []),
    Case('echo-in-answer', analysis('r') + final('Use ' + ECHO), 'Use ' + ECHO, 'r', []),
    Case('unterminated-reasoning-then-call', CHANNEL + 'analysis' + MSG + 'thinking' + call('get_time'), None,
         'thinking ', [('get_time', '{}')]),
    Case('other-channel-dropped', CHANNEL + 'commentary' + MSG + 'note' + NEXT + final('A.'), 'A.', None, []),
    Case('truncated-call', analysis('r') + ' to=search' + CHANNEL + 'analysis ' + CONSTRAIN + 'xml' + MSG
         + '<rfl:parameter name="query">\nabc', None, 'r', [('search', '{"query": "abc"}')]),
    Case('truncated-in-header', analysis('r') + ' to=sear', None, 'r', []),
    Case('unknown-tool-dropped', analysis('r') + call('rm', param('path', '/'), end=NEXT)
         + call('get_time'), None, 'r', [('get_time', '{}')]),
    Case('literal-markers-in-bodies', analysis('a <|x|> b <| c') + final('1 <|en 2'), '1 <|en 2', 'a <|x|> b <| c',
         []),
    Case('answer-ended-by-end', analysis('r') + final('A.', END), 'A.', 'r', []),
    Case('unframed', 'No channels here.', 'No channels here.', None, []),
    Case('reasoning-parser-alone', analysis('r') + call('search', ECHO),
         START + 'assistant' + call('search', ECHO), 'r', [], tool=None),
    Case('tool-parser-alone', analysis('r') + call('get_time'), None, 'r', [('get_time', '{}')], reasoning=None),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)


def test_names_and_classes() -> None:
    assert ToolParserManager.get('beam') is BeamToolParser
    assert ReasoningParserManager.get('beam') is BeamReasoningParser


def test_arguments_stream_per_parameter(make_parser: Any) -> None:
    """A string value streams as it arrives (minus the newlines framing it); a typed one is held to its close."""
    text = call('search', param('query', 'ab\ncdefgh'), param('limit', '3'))
    deltas = tool_deltas(stream_flagged(make_parser('beam', 'beam'), fixed_chunks(text, 2)))
    assert deltas[0].function.name == 'search' and deltas[0].id
    args = [d.function.arguments for d in deltas[1:]]
    assert args[0].startswith('{"query": "') and args[-2:] == [', "limit": 3', '}']
    assert len(args) > 4 and ''.join(args[:-2]) == '{"query": "ab\\ncdefgh"'
