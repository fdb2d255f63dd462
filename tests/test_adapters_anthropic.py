"""Anthropic adapter: Messages SSE events, the non-streaming message and the JSON-prefix guard."""
from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmparse import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from lmparse.adapters._jsonprefix import JsonObjectPrefix
from lmparse.adapters.anthropic import AnthropicStream, anthropic_message, map_stop_reason, tool_input
from lmparse.runner import ChatRunner, EngineChunk, StreamDelta
from tests.conftest import build_parser

NESTED = ('<think>\nfirst\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
          'second\n</think>\n\nanswer')


def _events(sse: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in sse[:-2].split('\n\n'):
        kind_line, data_line = block.split('\n')
        assert kind_line.startswith('event: ') and data_line.startswith('data: ')
        data = json.loads(data_line[len('data: '):])
        assert data['type'] == kind_line[len('event: '):]
        out.append((data['type'], data))
    return out


def _stream(text: str, size: int, finish: str = 'stop') -> list[tuple[str, dict[str, Any]]]:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    stream = AnthropicStream('m', id='msg_1', input_tokens=3)
    chunks = [EngineChunk(text[i:i + size]) for i in range(0, len(text), size)]
    chunks[-1].finish_reason = finish
    sse = stream.start() + ''.join(stream.events(d) for d in runner.stream(chunks))
    return _events(sse + stream.close(output_tokens=11))


def _check_structure(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One block open at a time, indices 0.. in start order; returns the rebuilt blocks."""
    assert events[0][0] == 'message_start' and events[-1][0] == 'message_stop'
    assert events[-2][0] == 'message_delta'
    blocks: list[dict[str, Any]] = []
    bufs: list[str] = []
    open_index = None
    for kind, data in events[1:-2]:
        if kind == 'content_block_start':
            assert open_index is None and data['index'] == len(blocks)
            open_index = data['index']
            blocks.append(dict(data['content_block']))
            bufs.append('')
        elif kind == 'content_block_delta':
            assert data['index'] == open_index
            delta = data['delta']
            block = blocks[open_index]
            if delta['type'] == 'thinking_delta':
                block['thinking'] += delta['thinking']
            elif delta['type'] == 'text_delta':
                block['text'] += delta['text']
            else:
                assert delta['type'] == 'input_json_delta' and block['type'] == 'tool_use'
                assert delta['partial_json'].strip() or bufs[open_index].strip(), 'whitespace-only first fragment'
                bufs[open_index] += delta['partial_json']
        else:
            assert kind == 'content_block_stop' and data['index'] == open_index
            open_index = None
    assert open_index is None
    for block, buf in zip(blocks, bufs):
        if block['type'] == 'tool_use':
            block['input'] = json.loads(buf) if buf else {}
    return blocks


@pytest.mark.parametrize('size', [1, 2, 5, 64, 1000])
def test_nested_tool_call_keeps_model_order(size: int) -> None:
    events = _stream(NESTED, size)
    blocks = _check_structure(events)
    assert [b['type'] for b in blocks] == ['thinking', 'tool_use', 'thinking', 'text']
    assert blocks[0] == {'type': 'thinking', 'thinking': '\nfirst\n', 'signature': ''}
    assert blocks[1]['name'] == 'get_weather' and blocks[1]['input'] == {'city': 'Paris'}
    assert blocks[2]['thinking'] == '\nsecond\n' and blocks[3]['text'] == '\n\nanswer'
    start = events[0][1]['message']
    assert start['id'] == 'msg_1' and start['usage'] == {'input_tokens': 3, 'output_tokens': 0}
    assert events[-2][1]['delta'] == {'stop_reason': 'tool_use', 'stop_sequence': None}
    assert events[-2][1]['usage'] == {'output_tokens': 11}


def test_stop_reason_mapping() -> None:
    assert [map_stop_reason(r) for r in ('stop', 'length', 'tool_calls', None, 'abort')] == \
        ['end_turn', 'max_tokens', 'tool_use', 'end_turn', 'end_turn']
    events = _stream('</think>hi', 3, finish='length')
    assert events[-2][1]['delta']['stop_reason'] == 'max_tokens'


def _tool_delta(index: int, *, call_id: str | None = None, name: str | None = None,
                args: str | None = None) -> StreamDelta:
    tc = DeltaToolCall(index=index, id=call_id, type='function' if call_id else None,
                       function=DeltaFunctionCall(name=name, arguments=args))
    return StreamDelta(DeltaMessage(role='assistant', tool_calls=[tc]), True)


def test_leading_whitespace_is_held_and_invalid_json_is_reported() -> None:
    stream = AnthropicStream('m')
    sse = stream.start() + stream.events(_tool_delta(0, call_id='c0', name='f'))
    for frag in ['\n ', '  ', '{"a": ', 'Paris', '}']:
        sse += stream.events(_tool_delta(0, args=frag))
    sse += stream.close('tool_calls')
    events = _events(sse)
    json_deltas = [d['delta']['partial_json'] for k, d in events if k == 'content_block_delta']
    assert json_deltas == ['\n   {"a": ']  # whitespace travels with the first significant text
    stop = next(d for k, d in events if k == 'content_block_stop')
    assert stop['lmparse_unsent_json'] == 'Paris}'


def test_non_object_arguments_send_nothing() -> None:
    stream = AnthropicStream('m')
    sse = stream.start() + stream.events(_tool_delta(0, call_id='c0', name='f', args='  [1, 2]'))
    events = _events(sse + stream.close())
    assert not [d for k, d in events if k == 'content_block_delta']
    assert next(d for k, d in events if k == 'content_block_stop')['lmparse_unsent_json'] == '  [1, 2]'


def test_error_event_closes_the_open_block() -> None:
    stream = AnthropicStream('m')
    stream.start()
    stream.events(StreamDelta(DeltaMessage(content='x'), False))
    events = _events(stream.error('bad', 'api_error'))
    assert events == [('content_block_stop', {'type': 'content_block_stop', 'index': 0}),
                      ('error', {'type': 'error', 'error': {'type': 'api_error', 'message': 'bad'}})]
    assert stream.close() == ''


def test_empty_fragments_open_no_block() -> None:
    stream = AnthropicStream('m')
    assert stream.events(StreamDelta(DeltaMessage(role='assistant', content=''), False)).count('content_block') == 0


def test_message_object() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    result = runner.collect([EngineChunk(NESTED, finish_reason='stop')])
    doc = anthropic_message(result, 'm', id='msg_2', input_tokens=1, output_tokens=2)
    assert [b['type'] for b in doc['content']] == ['thinking', 'text', 'tool_use']
    assert doc['content'][0] == {'type': 'thinking', 'thinking': '\nfirst\n\nsecond\n', 'signature': ''}
    assert doc['content'][2]['input'] == {'city': 'Paris'}
    assert doc['stop_reason'] == 'tool_use' and doc['usage'] == {'input_tokens': 1, 'output_tokens': 2}


def test_tool_input_never_invents() -> None:
    assert tool_input('{"a": 1, "a": 2}') == {'a': 2} and tool_input('{}') == {}
    assert tool_input('"{\\"a\\": 1}"') == {'a': 1}  # double-encoded arguments are decoded once
    for incomplete in (None, '', '  ', '{"a": ', '[1]', '"text"', '1'):
        assert tool_input(incomplete) is None, incomplete


INCOMPLETE = '<think>\nr\n</think>\n\nok<tool_call>\n{"name": "get_weather", "arguments": {"city": "Os'


def test_incomplete_call_policy_complete_responses() -> None:
    from lmparse.adapters.openai import openai_completion

    result = ChatRunner(build_parser('default', 'qwen3')).collect([EngineChunk(INCOMPLETE, finish_reason='length')])
    doc = anthropic_message(result, 'm')
    assert [b['type'] for b in doc['content']] == ['thinking', 'text'] and doc['stop_reason'] == 'max_tokens'
    assert [(c['name'], c['partial_json']) for c in doc['lmparse_incomplete_tool_calls']] == \
        [('get_weather', '{"city": "Os')]
    assert 'raw_arguments' not in json.dumps(doc)
    oa = openai_completion(result, 'm')
    assert oa['choices'][0]['message']['tool_calls'][0]['function']['arguments'] == '{"city": "Os'
    assert oa['choices'][0]['finish_reason'] == 'length'
    # A malformed call that ended with "stop": no tool_use, so no "tool_use" stop reason either.
    bad = 'x<tool_call>{"name": "get_weather", "arguments": {"city": 1</tool_call>'
    result = ChatRunner(build_parser(None, 'qwen3')).collect([EngineChunk(bad, finish_reason='stop')])
    doc = anthropic_message(result, 'm', thinking=False)
    assert [b['type'] for b in doc['content']] == ['text'] and doc['stop_reason'] == 'end_turn'


@pytest.mark.parametrize('tool_parser,text', [
    ('qwen3', INCOMPLETE),
    ('qwen3coder', 'ok<tool_call>\n<function=get_weather>\n<parameter=city>\nOs'),
    ('glm47', 'ok<tool_call>get_weather<arg_key>city</arg_key><arg_value>Os'),
])
def test_drop_incomplete_calls_on_length(tool_parser: str, text: str) -> None:
    done = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
    if tool_parser != 'qwen3':
        done = {'qwen3coder': '<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n'
                              '</function>\n</tool_call>',
                'glm47': '<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>'}[
            tool_parser]
    for finish, kept in (('length', 1), ('stop', 2)):
        runner = ChatRunner(build_parser('default', tool_parser), drop_incomplete_calls=True)
        result = runner.collect([EngineChunk(done + text, finish_reason=finish)])
        assert len(result.tool_calls or ()) == kept, (finish, result)
        assert json.loads(result.tool_calls[0].function.arguments) == {'city': 'Rome'}  # type: ignore[index]
        if finish == 'length':
            assert [c.function.name for c in result.dropped_tool_calls] == ['get_weather']
            assert result.finish_reason == 'length'
    # Without the option, the call stays (the parser's result).
    result = ChatRunner(build_parser('default', tool_parser)).collect([EngineChunk(done + text, finish_reason='length')])
    assert len(result.tool_calls or ()) == 2


def test_stream_marks_incomplete_calls() -> None:
    events = _stream(INCOMPLETE, 3, 'length')
    stops = [e for kind, e in events if kind == 'content_block_stop']
    assert stops[-1].get('lmparse_incomplete') is True and not any('lmparse_incomplete' in e for e in stops[:-1])
    complete = _stream(NESTED, 3)
    assert not any('lmparse_incomplete' in e for kind, e in complete if kind == 'content_block_stop')


def test_stream_thinking_off_and_whitespace_reasoning() -> None:
    text = '<think>\n\n</think>\n\nHi.'
    for size in (1, 3, 100):
        chunks = [EngineChunk(text[i:i + size]) for i in range(0, len(text), size)]
        stream = AnthropicStream('m', id='msg_1')
        events = stream.start() + ''.join(stream.events(d) for d in
                                          ChatRunner(build_parser('default', None)).stream(chunks))
        assert '"thinking"' not in events and '"text_delta"' in events
    text = '<think>\n\nreal\n</think>\n\nHi.'
    chunks = [EngineChunk(text[i:i + 1]) for i in range(len(text))]
    for thinking in (True, False):
        stream = AnthropicStream('m', id='msg_1', thinking=thinking)
        events = stream.start() + ''.join(stream.events(d) for d in
                                          ChatRunner(build_parser('default', None)).stream(chunks))
        events += stream.close()
        thought = ''.join(json.loads(line[6:])['delta'].get('thinking', '') for line in events.splitlines()
                          if line.startswith('data: ') and '"thinking_delta"' in line)
        assert thought == ('\n\nreal\n' if thinking else '')


# ---- the JSON-prefix guard --------------------------------------------------------------

VALID = [
    '{}', ' {"a": 1}', '{"a": -0.5e+10, "b": [true, false, null, {"c": "\\u00e9\\n\\"x"}], "d": []}',
    '{"k": "北京", "n": [1, [2, [3]]]}\n', '{"a":{"b":{"c":{}}}}',
]
INVALID = [
    ('{"a": Paris}', 6), ('{"a": 01}', 6), ('{"a": 1.}', 6), ('{"a" 1}', 5), ('{a: 1}', 1), ('{"a": 1,}', 8),
    ('{"a": [1,]}', 9), ('{"a": "\\x"}', 8), ('{"a": 1}}', 8), ('[1]', 0), ('"s"', 0), ('{"a": tru}', 6),
    ('{"a": "x\ny"}', 8), ('{"a": 1]', 7),
]


def _feed_all(text: str, cuts: list[int]) -> tuple[JsonObjectPrefix, int]:
    check = JsonObjectPrefix()
    accepted = 0
    bounds = [0, *sorted(set(cuts)), len(text)]
    for a, b in zip(bounds, bounds[1:]):
        n = check.feed(text[a:b])
        accepted += n
        if n < b - a:
            break
    return check, accepted


@pytest.mark.parametrize('text', VALID)
def test_valid_objects_are_accepted_at_every_split(text: str) -> None:
    for cut in range(len(text) + 1):
        check, accepted = _feed_all(text, [cut])
        assert accepted == len(text) and check.complete, (text, cut)


@pytest.mark.parametrize('text,bad', INVALID)
def test_invalid_text_stops_at_the_first_bad_character(text: str, bad: int) -> None:
    check, accepted = _feed_all(text, [])
    assert check.broken and accepted == bad
    for cut in range(len(text) + 1):
        check, accepted = _feed_all(text, [cut])
        assert check.broken and accepted < len(text)
        # What was accepted was a viable prefix when it was sent (e.g. '{"a": 0' before '1}').
        assert JsonObjectPrefix().feed(text[:accepted]) == accepted, (text, cut, accepted)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8), max_size=4), st.integers(0, 2**32), st.sampled_from([None, 2]))
def test_any_json_object_is_a_valid_prefix_throughout(value: dict[str, Any], seed: int, indent: Any) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=seed % 2 == 0)
    rng = random.Random(seed)
    cuts = [rng.randint(0, len(text)) for _ in range(rng.randint(0, 6))]
    check, accepted = _feed_all(text, cuts)
    assert accepted == len(text) and check.complete


def test_prefixes_accepted_by_the_guard_parse_in_jiter() -> None:
    jiter = pytest.importorskip('jiter')
    for text in VALID + [t for t, _ in INVALID]:
        check = JsonObjectPrefix()
        sent = ''
        for ch in text:
            n = check.feed(ch)
            sent += ch[:n]
            if sent.strip():
                jiter.from_json(sent.encode(), partial_mode=True)  # the SDK's own re-parse
            if check.broken:
                break
