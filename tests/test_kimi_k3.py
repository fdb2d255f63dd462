"""Kimi K3 XTML tool channels and the think channel through BaseResponseParser.

Real syntax (vLLM's ``kimi_k3_tool_parser`` / SGLang's ``kimik3_format``)::

    <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
    <|open|>argument key="K" type="string"<|sep|>VALUE<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|>

Checked three ways: streamed reconstruction over many chunkings (and a stream
where the special tokens ``<|open|>``, ``<|close|>``, ``<|sep|>`` are atomic),
``parse_complete`` and the literal expected result.
"""
from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import KimiK3ReasoningParser, KimiK3ToolParser, ReasoningParserManager, ToolParserManager
from tests.attr_cases import (
    Case,
    check_chunkings,
    check_complete,
    check_every_two_way_split,
    check_fragments,
    marker_atomic_chunks,
    stream_key,
)
from tests.streaming import FakeTokenizer, split_at, tool

O, C, S = '<|open|>', '<|close|>', '<|sep|>'
THINK_CLOSE = f'{C}think{S}'
R_OPEN, R_CLOSE, M_CLOSE = f'{O}response{S}', f'{C}response{S}', f'{C}message{S}'
TAGS = (f'{O}think{S}', THINK_CLOSE, f'{O}tools{S}', f'{C}tools{S}', f'{O}call', f'{C}call{S}', f'{O}argument',
        f'{C}argument{S}', S, R_OPEN, R_CLOSE, M_CLOSE)
K3 = 'kimi_k3'
NO_THINK = {'chat_template_kwargs': {'thinking': False}}
CFG = {'type': 'function', 'function': {'name': 'configure', 'parameters': {'type': 'object', 'properties': {}}}}
TOOLS = {'tools': [tool('get_weather'), tool('get_time'), tool('search'), CFG, tool('a"b&c')]}


def tools(*calls: str) -> str:
    return f'{O}tools{S}' + ''.join(calls) + f'{C}tools{S}'


def call(name: str, index: int, *args: str) -> str:
    return f'{O}call tool="{name}" index="{index}"{S}' + ''.join(args) + f'{C}call{S}'


def arg(key: str, value: str, type_: str | None = 'string') -> str:
    typed = f' type="{type_}"' if type_ is not None else ''
    return f'{O}argument key="{key}"{typed}{S}{value}{C}argument{S}'


def case(id: str, text: str, content: str | None, reasoning: str | None, calls: list[tuple[str, str]],
         invalid_json: bool = False, **request: Any) -> Case:
    return Case(id, text, content, reasoning, calls, K3, K3, {**TOOLS, **request}, invalid_json)


CODE = f'print("<|open|>x") if a < b else None  # {C}call 北京\n'
CASES = [
    case('k3-thinking', 'The user wants Paris weather.' + THINK_CLOSE
         + tools(call('get_weather', 1, arg('city', 'Paris'), arg('unit', 'celsius'))),
         None, 'The user wants Paris weather.', [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    case('k3-instruct', 'Checking.' + tools(call('get_time', 1)), 'Checking.', None, [('get_time', '{}')], **NO_THINK),
    case('k3-model-opens-think', f'{O}think{S}Plan.{THINK_CLOSE}Done.', 'Done.', 'Plan.', []),
    case('k3-typed-values', THINK_CLOSE + tools(call('configure', 1, arg('n', '3', 'integer'), arg('x', '1.5', 'number'),
                                                     arg('ok', 'true', 'boolean'), arg('z', 'null', 'null'),
                                                     arg('tags', '["a", "b"]', 'array'),
                                                     arg('opts', '{"k": {"v": [1, "<|sep|>"]}}', 'object'),
                                                     arg('s', '42'))),
         None, None, [('configure', '{"n": 3, "x": 1.5, "ok": true, "z": null, "tags": ["a", "b"], '
                                    '"opts": {"k": {"v": [1, "<|sep|>"]}}, "s": "42"}')]),
    case('k3-type-absent-is-string', THINK_CLOSE + tools(call('search', 1, arg('query', 'q', None))),
         None, None, [('search', '{"query": "q"}')]),
    case('k3-raw-code-value', THINK_CLOSE + tools(call('search', 1, arg('query', CODE))), None, None,
         [('search', '{"query": "print(\\"<|open|>x\\") if a < b else None  # <|close|>call 北京\\n"}')]),
    case('k3-several-with-unknown', THINK_CLOSE + 'Three.'
         + tools(call('get_weather', 1, arg('city', 'A')), call('rm_rf', 2, arg('p', '/')), call('search', 3)),
         'Three.', None, [('get_weather', '{"city": "A"}'), ('search', '{}')]),
    case('k3-entities-in-attributes', THINK_CLOSE + tools(call('a&quot;b&amp;c', 1, arg('k&quot;1', 'a &amp; b'))),
         None, None, [('a"b&c', '{"k\\"1": "a &amp; b"}')]),
    case('k3-indented-layout', THINK_CLOSE + f'{O}tools{S}\n  {O}call tool="get_time" index="1"{S}\n  {C}call{S}\n'
         f'{C}tools{S}', None, None, [('get_time', '{}')]),
    case('k3-text-after-tools', THINK_CLOSE + 'a' + tools(call('get_time', 1)) + 'b', 'ab', None, [('get_time', '{}')]),
    case('k3-tools-inside-think', 'Need time.' + tools(call('get_time', 1)) + 'More.' + THINK_CLOSE + 'Noon.',
         'Noon.', 'Need time.More.', [('get_time', '{}')]),
    case('k3-two-channels', THINK_CLOSE + tools(call('get_time', 1)) + tools(call('search', 1, arg('query', 'x'))),
         None, None, [('get_time', '{}'), ('search', '{"query": "x"}')]),
    case('k3-tool-choice-none', 'x' + tools(call('get_time', 1)), 'x' + tools(call('get_time', 1)), None, [],
         tool_choice='none', **NO_THINK),
    # malformed and truncated payloads
    case('k3-argument-without-key', THINK_CLOSE + tools(call('search', 1, f'{O}argument type="string"{S}v{C}argument{S}')),
         None, None, [('search', '{"": "v"}')]),
    case('k3-call-without-tool', THINK_CLOSE + tools(f'{O}call index="1"{S}{C}call{S}', call('get_time', 2)),
         None, None, [('get_time', '{}')]),
    case('k3-missing-call-close', THINK_CLOSE + f'{O}tools{S}{O}call tool="search"{S}{arg("query", "q")}{C}tools{S}ok',
         'ok', None, [('search', '{"query": "q"}')]),
    case('k3-truncated-in-string', THINK_CLOSE + f'{O}tools{S}{O}call tool="get_weather"{S}'
         f'{O}argument key="city" type="string"{S}Par', None, None, [('get_weather', '{"city": "Par"}')]),
    case('k3-truncated-in-json', THINK_CLOSE + f'{O}tools{S}{O}call tool="search"{S}{O}argument key="limit" '
         f'type="integer"{S}1', None, None, [('search', '{"limit": 1}')]),
    case('k3-truncated-in-json-object', THINK_CLOSE + f'{O}tools{S}{O}call tool="configure"{S}{O}argument key="o" '
         f'type="object"{S}{{"a": [1, ', None, None, [('configure', '{"o": "{\\"a\\": [1, "}')]),
    case('k3-truncated-in-call-header', THINK_CLOSE + f'ok{O}tools{S}{O}call tool="get_ti', 'ok', None, []),
    case('k3-truncated-before-sep', THINK_CLOSE + f'{O}tools{S}{O}call tool="get_time" index="1"<|se', None, None, []),
    case('k3-truncated-after-open', THINK_CLOSE + f'ok{O}tools{S}', 'ok', None, []),
]
# The response channel and the message end (declared content_markers): dropped from text
# outside tool blocks, in content and in reasoning; kept inside argument values.
CASES += [
    case('k3-response-channel', f'Plan.{THINK_CLOSE}{R_OPEN}Sure.{R_CLOSE}' + tools(call('get_time', 1)) + M_CLOSE,
         'Sure.', 'Plan.', [('get_time', '{}')]),
    case('k3-response-prefilled', f'Sure, at noon.{R_CLOSE}{M_CLOSE}', 'Sure, at noon.', None, [], **NO_THINK),
    case('k3-markers-start-middle-end', f'{R_OPEN}a{R_CLOSE}b{M_CLOSE}c{M_CLOSE}', 'abc', None, [], **NO_THINK),
    case('k3-markers-only', f'{THINK_CLOSE}{R_OPEN}{R_CLOSE}{M_CLOSE}', None, None, []),
    case('k3-marker-in-reasoning', f'Pl{R_OPEN}an.{R_CLOSE}{THINK_CLOSE}{R_OPEN}x{R_CLOSE}', 'x', 'Plan.', []),
    case('k3-markers-beside-tools', f'{THINK_CLOSE}{R_OPEN}Hi{R_CLOSE}' + tools(call('get_time', 1)) + M_CLOSE
         + tools(call('search', 1, arg('query', 'q'))) + f'{R_OPEN}after{R_CLOSE}{M_CLOSE}',
         'Hiafter', None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
    case('k3-marker-in-argument-kept', THINK_CLOSE + tools(call('search', 1, arg('query', f'a{R_CLOSE}b{M_CLOSE}'))),
         None, None, [('search', '{"query": "a<|close|>response<|sep|>b<|close|>message<|sep|>"}')]),
    case('k3-marker-like-text-kept', f'{R_OPEN}<|open|>respond <|close|>message{R_CLOSE}', '<|open|>respond <|close|>message',
         None, [], **NO_THINK),
    case('k3-cut-marker-at-end', f'{R_OPEN}Sure.<|close|>resp', 'Sure.<|close|>resp', None, [], **NO_THINK),
    case('k3-markers-tool-choice-none', f'{R_OPEN}x{R_CLOSE}{M_CLOSE}', 'x', None, [], tool_choice='none', **NO_THINK),
    # one owner alone: the reasoning parser without tools, the tool parser without reasoning
    Case('k3-reasoning-only', f'Plan.{THINK_CLOSE}{R_OPEN}Sure.{R_CLOSE}{M_CLOSE}', 'Sure.', 'Plan.', [], None, K3),
    Case('k3-reasoning-only-no-think', f'{R_OPEN}Sure.{R_CLOSE}{M_CLOSE}', 'Sure.', None, [], None, K3, NO_THINK),
    Case('k3-tools-only', f'{R_OPEN}Sure.{R_CLOSE}' + tools(call('get_time', 1)) + M_CLOSE, 'Sure.', None,
         [('get_time', '{}')], K3, None, TOOLS),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_parse_complete(case: Case, make_parser: Any) -> None:
    check_complete(case, make_parser)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_chunkings(case: Case, make_parser: Any) -> None:
    check_chunkings(case, make_parser, TAGS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_special_tokens_atomic(case: Case, make_parser: Any) -> None:
    assert stream_key(case, make_parser, marker_atomic_chunks(case.text, (O, C, S))) == case.expected


@pytest.mark.parametrize('case', CASES[:2], ids=CASE_IDS[:2])
def test_every_two_way_split(case: Case, make_parser: Any) -> None:
    check_every_two_way_split(case, make_parser)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_streamed_arguments_match_complete(case: Case, make_parser: Any) -> None:
    check_fragments(case, make_parser)


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '1000' if os.environ.get('LMPARSE_SLOW') else '100')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    cuts = data.draw(st.lists(st.integers(1, max(1, len(case.text) - 1)), max_size=30), label='cuts')
    assert stream_key(case, make_parser, split_at(case.text, cuts)) == case.expected, case.id


def test_string_argument_streams_before_close(make_parser: Any) -> None:
    parser = make_parser(K3, K3, **TOOLS)
    head = THINK_CLOSE + f'{O}tools{S}{O}call tool="search" index="1"{S}{O}argument key="query" type="string"{S}abc'
    out = [d.function.arguments for m, _ in parser.stream_chunk(head, []) for d in (m.tool_calls or [])]
    assert out == [None, '{"query": "', 'abc']


def test_registry_and_switches(make_parser: Any) -> None:
    for name in ('kimi_k3', 'kimi-k3'):
        assert ToolParserManager.get(name) is KimiK3ToolParser
        assert ReasoningParserManager.get(name) is KimiK3ReasoningParser
    assert KimiK3ToolParser.get_tool_open_tag() == f'{O}tools{S}'
    assert KimiK3ToolParser.get_tool_close_tag() == f'{C}tools{S}'
    assert KimiK3ReasoningParser(thinking=False).starts_in_reasoning_mode() is False
    assert KimiK3ReasoningParser(enable_thinking=False).starts_in_reasoning_mode() is False
    assert KimiK3ReasoningParser().starts_in_reasoning_mode() is True
    KimiK3ReasoningParser.validate_tokenizer(FakeTokenizer({O: 1, C: 2, S: 3}))
    with pytest.raises(RuntimeError):
        KimiK3ReasoningParser.validate_tokenizer(FakeTokenizer({O: 1}))


@pytest.mark.parametrize('case', [c for c in CASES if 'marker' in c.id or 'response' in c.id or 'only' in c.id],
                         ids=lambda c: c.id)
def test_markers_every_two_way_split(case: Case, make_parser: Any) -> None:
    check_every_two_way_split(case, make_parser)


def test_response_channel_unwrapped(make_parser: Any) -> None:
    text = f'Plan.{THINK_CLOSE}{O}response{S}Sure.{C}response{S}' + tools(call('get_time', 1)) + f'{C}message{S}'
    check_complete(case('k3-response-channel', text, 'Sure.', 'Plan.', [('get_time', '{}')]), make_parser)


def test_cut_marker_held_then_released_on_final(make_parser: Any) -> None:
    parser = make_parser(K3, K3, **TOOLS, **NO_THINK)
    out = [m.content for m, _ in parser.stream_chunk('Sure.<|close|>resp', [])]
    assert out == ['Sure.']  # the marker prefix is held like a tag prefix
    out = [m.content for m, _ in parser.stream_chunk('', [], final=True)]
    assert out == ['<|close|>resp']  # final: held text is released, never dropped


def test_declaration_is_generic(make_parser: Any) -> None:
    """Any reasoning parser declaring content_markers gets them dropped (no dialect special case)."""
    from lmparse import BaseResponseParser, ReasoningParser

    class Marked(ReasoningParser):
        content_markers = ('[[ans]]', '<end>')

    cls = BaseResponseParser.with_parsers()
    cls.reasoning_parser_cls = Marked
    parser = cls({'messages': [], 'chat_template_kwargs': {'enable_thinking': True}})
    content, calls, reasoning = parser.parse_complete('a[[ans]]b</think>[[ans]]c<end>d<en')
    assert (content, calls, reasoning) == ('cd<en', None, 'ab')


@pytest.mark.parametrize('markers', [('>', '<x>'), ('<x>', '>'), ('<x><y>', '<y>')])
def test_overlapping_markers(make_parser: Any, markers: tuple[str, ...]) -> None:
    """A marker that ends (or contains) another: the earliest start wins, the longer at a tie, for every chunking."""
    from lmparse import BaseResponseParser, ReasoningParser

    class Marked(ReasoningParser):
        content_markers = markers

    cls = BaseResponseParser.with_parsers()
    cls.reasoning_parser_cls = Marked
    text = 'a<x>b><x><y>c<y>d'
    expected = ''.join(text.split('<x><y>')) if '<x><y>' in markers else text
    for m in sorted(markers, key=len, reverse=True):
        expected = expected.replace(m, '')
    request = {'messages': [], 'chat_template_kwargs': {'enable_thinking': False}}
    assert cls(request).parse_complete(text)[0] == expected
    for size in range(1, len(text) + 1):
        parser = cls(request)
        out = [m.content or '' for i in range(0, len(text), size)
               for m, _ in parser.stream_chunk(text[i:i + size], [], final=i + size >= len(text))]
        assert ''.join(out) == expected, size
