"""Replace mode's missing value close tag before the next argument (``next_arg_ends_value``).

vLLM's qwen3_coder parser ends a value at the next ``<parameter=`` opener
(test_qwen3coder_tool_parser.py, ``missing_closing_parameter_tag``). lmparse's
own rule (LMDeploy's) keeps an opener inside a value as its text; in replace mode
(the vLLM integration sets ``next_arg_ends_value``) an opener ends the value only
when the grammar confirms it: on a line of its own, naming a parameter the called
tool declares and the call has not given, then a newline. A value quoting any
other opener, this one inline, or one of a parameter already given keeps it.
Each case: one chunk, every split inside every marker, fixed 1/4/8/16/256 and
random chunkings, random chunkings with empty chunks, every two-way split, and a
real Qwen token stream.
"""
from __future__ import annotations

import json
import random
from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import chunkings, complete, fixed_chunks, random_chunks, run_case, token_chunks, with_empty_chunks

SCHEMA = {'type': 'object', 'properties': {'city': {'type': 'string'}, 'state': {'type': 'string'},
                                           'unit': {'type': 'string', 'enum': ['celsius', 'fahrenheit']},
                                           'days': {'type': 'integer'}}}
REQUEST = {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}],
           'tools': [{'type': 'function', 'function': {'name': 'get_weather', 'parameters': SCHEMA}}]}
TAGS = ('<tool_call>', '</tool_call>', '<function=', '</function>', '<parameter=', '</parameter>', '<think>',
        '</think>')


def parser(replace: bool = True, reasoning: str | None = None) -> Any:
    p = BaseResponseParser.with_parsers(reasoning, 'qwen3coder')(REQUEST)
    p.tool_parser.next_arg_ends_value = replace
    return p


def check(text: str, want: tuple[Any, Any, Any], replace: bool = True, reasoning: str | None = None) -> None:
    assert complete(parser(replace, reasoning), text).key() == want
    for label, chunks in chunkings(text, TAGS):
        assert run_case(parser(replace, reasoning), chunks) == want, label
    rng = random.Random(text)
    for i in range(5):
        assert run_case(parser(replace, reasoning), with_empty_chunks(random_chunks(text, rng), rng)) == want, i
    for size in (1, 3):
        assert run_case(parser(replace, reasoning), fixed_chunks(text, size), flush=True) == want, size
    for cut in range(1, len(text)):
        assert run_case(parser(replace, reasoning), [text[:cut], text[cut:]]) == want, cut


def call(*params: tuple[str, str], close: bool = True) -> str:
    body = ''.join(f'<parameter={k}>\n{v}\n' + ('</parameter>\n' if close else '') for k, v in params)
    return f'<tool_call>\n<function=get_weather>\n{body}</function>\n</tool_call>'


def calls(*args: dict[str, Any]) -> list[tuple[str, str]]:
    return [('get_weather', json.dumps(a, ensure_ascii=False)) for a in args]


# vLLM's test output: city's close tag missing before <parameter=state>.
VLLM_MISSING = ('Let me check the weather for you:\n<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n'
                '<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n'
                '</tool_call>')


def test_missing_close_before_a_declared_parameter() -> None:
    check(VLLM_MISSING, ('Let me check the weather for you:\n', None,
                         calls({'city': 'Dallas', 'state': 'TX', 'unit': 'fahrenheit'})))


def test_every_close_missing() -> None:
    text = call(('city', 'Dallas'), ('state', 'TX'), ('days', '3'), close=False)
    check(text, (None, None, calls({'city': 'Dallas', 'state': 'TX', 'days': 3})))


def test_default_mode_keeps_the_opener_as_text() -> None:
    check(VLLM_MISSING, ('Let me check the weather for you:\n', None,
                         calls({'city': 'Dallas\n<parameter=state>\nTX', 'unit': 'fahrenheit'})), replace=False)


QUOTED = [
    'write <parameter=state> inline\nok',          # not on a line of its own
    'a\n<parameter=stat>\nb',                       # not a declared parameter
    'a\n<parameter=x>\nb',
    'a\n<parameter=city>\nb',                       # the parameter being written
    'a\n<parameter=state> TX\nb',                   # no newline after the opener
    'a\n<parameter=' + 's' * 200 + '>\nb',          # too long for a name
]


@pytest.mark.parametrize('value', QUOTED)
def test_unconfirmed_opener_is_value_text(value: str) -> None:
    text = call(('city', value), ('days', '3'))
    check(text, (None, None, calls({'city': value, 'days': 3})))


def test_opener_of_a_given_parameter_is_value_text() -> None:
    value = 'quote:\n<parameter=city>\nLima'
    text = call(('city', 'Lima'), ('state', value))
    check(text, (None, None, calls({'city': 'Lima', 'state': value})))


def test_well_formed_values_quoting_declared_openers_keep_them() -> None:
    # A closed value is never cut at a later opener's line when the opener names a given parameter;
    # one naming a parameter still to come is exactly the shape the rule reads as structure.
    value = 'see\n<parameter=city>\nand </parameter> text'
    text = call(('city', 'Lima'), ('state', value))
    check(text, (None, None, calls({'city': 'Lima', 'state': value})))


def test_the_rule_reads_a_confirmed_quote_as_structure() -> None:
    # The limit of the rule: a value whose own line quotes a declared opener still to come, then a
    # newline, is read as that argument (vLLM reads every opener so).
    text = call(('city', 'a\n<parameter=state>'), ('days', '3'))
    check(text, (None, None, calls({'city': 'a', 'state': '', 'days': 3})))


def test_opener_in_reasoning_is_reasoning() -> None:
    text = 'plan:\n<parameter=state>\nTX\n</think>ok\n' + call(('city', 'Lima'))
    check(text, ('ok\n', 'plan:\n<parameter=state>\nTX\n', calls({'city': 'Lima'})), reasoning='qwen3')


def test_truncated_at_the_opener() -> None:
    text = '<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n<parameter=sta'
    check(text, (None, None, calls({'city': 'Dallas\n<parameter=sta'})))
    text = '<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n<parameter=state>\nT'
    check(text, (None, None, calls({'city': 'Dallas', 'state': 'T'})))


def test_typed_value_before_the_opener() -> None:
    text = '<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n<parameter=city>\nLima\n</parameter>\n' \
           '</function>\n</tool_call>'
    check(text, (None, None, calls({'days': 3, 'city': 'Lima'})))


@pytest.mark.parametrize('text', [VLLM_MISSING, call(('city', 'a\n<parameter=x>\nb'), ('days', '3'))])
def test_qwen_token_stream_with_ids(text: str, qwen_tokenizer: Any) -> None:
    want = complete(parser(), text).key()
    assert want[2]
    chunks = token_chunks(qwen_tokenizer, text)
    for flush in (False, True):
        assert run_case(parser(), chunks, flush=flush) == want
