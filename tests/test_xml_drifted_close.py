"""A drifted value close tag in the XML-like family: ``</parameter1>``, ``</parameter_x>``, a bare ``</parameter``.

SGLang's qwen3_coder detector (test_qwen3_coder_detector.py,
``TestQwen3CoderDetectorMalformedParameterEnd``) drops such a marker and ends
the value there. lmparse does so only when the grammar confirms it, as for the
close tag itself: after at most 64 whitespace characters the next argument,
``function_close``, another call, the block's close tag or the end of the
output follows. Unconfirmed, it is value text (a value that holds
``</parameters>`` or ``</parameterSet>`` is kept). Each case: one chunk, every
split inside every marker, fixed 1/4/8/16/256 and random chunkings, random
chunkings with empty chunks anywhere, an empty final chunk, every two-way split.
"""
from __future__ import annotations

import json
import random
from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import chunkings, complete, fixed_chunks, random_chunks, run_case, with_empty_chunks

SCHEMA = {'type': 'object', 'properties': {'city': {'type': 'string'}, 'days': {'type': 'integer'}}}
REQUEST = {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}],
           'tools': [{'type': 'function', 'function': {'name': 'get_weather', 'parameters': SCHEMA}}]}
CODER_TAGS = ('<tool_call>', '</tool_call>', '<function=', '</function>', '<parameter=', '</parameter>', '</parameter')
GLM_TAGS = ('<tool_call>', '</tool_call>', '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>', '</arg_value')


def parser(tool: str, reasoning: str | None = None) -> Any:
    return BaseResponseParser.with_parsers(reasoning, tool)(REQUEST)


def coder(city_block: str, tail: str = '<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>') -> str:
    return '<tool_call>\n<function=get_weather>\n<parameter=city>\n' + city_block + '\n' + tail


def check(tool: str, text: str, want: tuple[Any, Any, Any], tags: tuple[str, ...], reasoning: str | None = None,
          every_split: bool = True) -> None:
    assert complete(parser(tool, reasoning), text).key() == want
    for label, chunks in chunkings(text, tags):
        assert run_case(parser(tool, reasoning), chunks) == want, label
    rng = random.Random(text)
    for i in range(5):
        assert run_case(parser(tool, reasoning), with_empty_chunks(random_chunks(text, rng), rng)) == want, i
    for size in (1, 3):
        assert run_case(parser(tool, reasoning), fixed_chunks(text, size), flush=True) == want, size
    if every_split:
        for cut in range(1, len(text)):
            assert run_case(parser(tool, reasoning), [text[:cut], text[cut:]]) == want, cut


def calls(*args: dict[str, Any]) -> list[tuple[str, str]]:
    return [('get_weather', json.dumps(a, ensure_ascii=False)) for a in args]


DRIFTED = ['</parameter1>', '</parameter_x>', '</parameter_function>', '</parameter', '</parameter-2>',
           '</parameter' + 'x' * 32 + '>']


@pytest.mark.parametrize('marker', DRIFTED)
def test_drifted_close_before_the_next_argument(marker: str) -> None:
    check('qwen3coder', coder('Lima\n' + marker), (None, None, calls({'city': 'Lima', 'days': 3})), CODER_TAGS)


@pytest.mark.parametrize(('text', 'want'), [
    # confirmed by </function>, the block's close tag, another call, the end of the output
    (coder('Lima\n</parameter1>', '</function>\n</tool_call>after'), ('after', None, calls({'city': 'Lima'}))),
    (coder('Lima\n</parameter1>', '</tool_call>'), (None, None, calls({'city': 'Lima'}))),
    (coder('Lima\n</parameter1>', '<function=get_weather>\n</function>\n</tool_call>'),
     (None, None, calls({'city': 'Lima'}, {}))),
    ('<tool_call>\n<function=get_weather>\n<parameter=city>\nLima\n</parameter_x>', (None, None, calls({'city': 'Lima'}))),
    ('<tool_call>\n<function=get_weather>\n<parameter=city>\nLima\n</parameter', (None, None, calls({'city': 'Lima'}))),
    # a typed value ends there too
    ('<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter1>\n<parameter=city>\nLima\n'
     '</parameter>\n</function>\n</tool_call>', (None, None, calls({'days': 3, 'city': 'Lima'}))),
])
def test_drifted_close_confirmed_by_what_follows(text: str, want: tuple[Any, Any, Any]) -> None:
    check('qwen3coder', text, want, CODER_TAGS)


def test_glm_drifted_value_close() -> None:
    text = ('<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lima</arg_value1>\n<arg_key>days</arg_key>\n'
            '<arg_value>3</arg_value>\n</tool_call>')
    check('glm47', text, (None, None, calls({'city': 'Lima', 'days': 3})), GLM_TAGS)


# ---- the same text that is not confirmed: value text, whatever the chunking ------------------------------

KEPT = [
    'y </parameterSet>',  # then the real close tag: not a confirming marker
    '<cfg>\n  <v>1</v>\n</parameters>',
    'a </parameter1> b',  # text follows
    'a </parameter_x>\nb',
    '</parameter1>x',
    'a </parameter b',
    'a </parameter1></parameter2> b',
    'a </parameter' + 'x' * 33 + '>',  # more name characters than a drift carries
    'a </parameter1>' + ' ' * 65 + 'b',
]


@pytest.mark.parametrize('value', KEPT)
def test_unconfirmed_drift_is_value_text(value: str) -> None:
    check('qwen3coder', coder(value + '\n</parameter>'), (None, None, calls({'city': value, 'days': 3})), CODER_TAGS)


def test_drift_past_the_whitespace_limit_is_text() -> None:
    value = 'Lima\n</parameter1>' + ' ' * 65
    text = coder(value + '<parameter=x>\n</parameter>')
    want = (None, None, calls({'city': value + '<parameter=x>', 'days': 3}))
    check('qwen3coder', text, want, CODER_TAGS, every_split=False)
    # within the limit it is confirmed
    text = coder('Lima\n</parameter1>' + ' ' * 63)
    check('qwen3coder', text, (None, None, calls({'city': 'Lima', 'days': 3})), CODER_TAGS, every_split=False)


def test_drift_in_a_typed_json_value_is_text() -> None:
    obj = {'k': '</parameter1>\n<parameter=days>'}
    schema_text = coder(json.dumps(obj) + '\n</parameter>')
    # city is string-typed: the JSON text is the string; no drift is read inside it
    check('qwen3coder', schema_text, (None, None, calls({'city': json.dumps(obj), 'days': 3})), CODER_TAGS,
          every_split=False)


@pytest.mark.parametrize(('text', 'want'), [
    # in reasoning and in content outside a block the marker is text
    ('<think>x </parameter1>\n<parameter=days> y</think>ok', ('ok', 'x </parameter1>\n<parameter=days> y', [])),
    ('<think>a</think>See </parameter1>\n<parameter=days>\n3', ('See </parameter1>\n<parameter=days>\n3', 'a', [])),
])
def test_drifted_marker_outside_a_value_is_text(text: str, want: tuple[Any, Any, Any]) -> None:
    check('qwen3coder', text, want, CODER_TAGS + ('<think>', '</think>'), reasoning='qwen3')


def _streamed_args(p: Any, chunks: list[str]) -> str:
    from tests.streaming import tool_deltas
    return ''.join(d.function.arguments or '' for c in chunks for d in tool_deltas(p.stream_chunk(c, [])))


def test_drift_is_held_only_until_what_follows_decides() -> None:
    p = parser('qwen3coder')
    head = '<tool_call>\n<function=get_weather>\n<parameter=city>\n'
    assert _streamed_args(p, [head, 'Lima ']) == '{"city": "Lima '
    assert _streamed_args(p, ['</parameter1']) == ''  # may be a drifted close: held
    assert _streamed_args(p, ['>', ' ']) == ''
    assert _streamed_args(p, ['x']) == '</parameter1> x'  # text follows: it was text
    p = parser('qwen3coder')
    assert _streamed_args(p, [head, 'Lima\n</parameter_x>\n']) == '{"city": "Lima'
    assert _streamed_args(p, ['<parameter=days>\n3\n</parameter>\n</function>']).startswith('", "days": 3')


def test_grammar_declares_the_drift() -> None:
    from lmparse import ToolParserManager
    ends = ToolParserManager.get('qwen3coder')._xml_grammar().value_ends
    assert ends.drift and ends.close == '</parameter>'


TOKEN_CASES = [coder('Lima\n' + m) for m in DRIFTED] + [coder(v + '\n</parameter>') for v in KEPT]


@pytest.mark.parametrize('text', TOKEN_CASES)
def test_qwen_token_stream_with_ids(text: str, qwen_tokenizer: Any) -> None:
    """Token by token with the ids the engine passes, as a Qwen3-Coder model's output arrives."""
    from tests.streaming import token_chunks
    want = complete(parser('qwen3coder'), text).key()
    assert want[2] and want[2][0][1].endswith('"days": 3}')
    chunks = token_chunks(qwen_tokenizer, text)
    for flush in (False, True):
        assert run_case(parser('qwen3coder'), chunks, flush=flush) == want
