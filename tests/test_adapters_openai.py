"""OpenAI adapter: chat.completion.chunk SSE and the chat.completion object."""
from __future__ import annotations

import json
from typing import Any

import pytest

from lmparse import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from lmparse.adapters.openai import DONE, OpenAIStream, openai_completion
from lmparse.runner import ChatRunner, EngineChunk, StreamDelta
from tests.conftest import build_parser

TEXT = ('<think>\nplan\n</think>\n\nSure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>')


def _sse_payloads(text: str) -> list[str]:
    assert text.endswith('\n\n')
    events = text[:-2].split('\n\n')
    assert all(e.startswith('data: ') for e in events)
    return [e[len('data: '):] for e in events]


def _run_stream(size: int, **kw: Any) -> list[str]:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    stream = OpenAIStream('m', id='chatcmpl-x', created=7, **kw)
    chunks = [EngineChunk(TEXT[i:i + size]) for i in range(0, len(TEXT), size)]
    chunks[-1].finish_reason = 'stop'
    sse = ''.join(stream.event(d) for d in runner.stream(chunks))
    return _sse_payloads(sse + stream.close({'prompt_tokens': 1, 'completion_tokens': 2, 'total_tokens': 3}))


@pytest.mark.parametrize('size', [1, 3, 16, 1000])
def test_stream_reconstructs(size: int) -> None:
    payloads = _run_stream(size, include_usage=True)
    assert payloads[-1] == '[DONE]'
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert {(c['id'], c['object'], c['created'], c['model']) for c in chunks} == {('chatcmpl-x', 'chat.completion.chunk', 7, 'm')}
    usage = chunks.pop()
    assert usage['choices'] == [] and usage['usage']['total_tokens'] == 3
    deltas = [c['choices'][0]['delta'] for c in chunks]
    assert deltas[0]['role'] == 'assistant' and all('role' not in d for d in deltas[1:])
    assert all(c['usage'] is None for c in chunks)
    assert ''.join(d.get('reasoning_content', '') for d in deltas) == '\nplan\n'
    assert ''.join(d.get('content', '') for d in deltas) == '\n\nSure.\n'
    calls: dict[int, dict[str, str]] = {}
    for d in deltas:
        for tc in d.get('tool_calls', []):
            if tc['index'] not in calls:
                assert tc['id'] and tc['type'] == 'function' and tc['function']['name']
                calls[tc['index']] = {'name': tc['function']['name'], 'arguments': tc['function']['arguments']}
            else:
                assert set(tc) == {'index', 'function'} and set(tc['function']) == {'arguments'}
                calls[tc['index']]['arguments'] += tc['function']['arguments']
    assert [(c['name'], json.loads(c['arguments'])) for c in calls.values()] == \
        [('get_weather', {'city': 'Paris'}), ('get_time', {})]
    finishes = [c['choices'][0]['finish_reason'] for c in chunks]
    assert finishes[-1] == 'tool_calls' and not any(finishes[:-1])


def test_reasoning_field_choices() -> None:
    d = StreamDelta(DeltaMessage(role='assistant', reasoning_content='r'), False)
    assert 'reasoning' not in json.loads(OpenAIStream('m').chunk_json(d))['choices'][0]['delta']
    only = json.loads(OpenAIStream('m', reasoning_field='reasoning').chunk_json(d))['choices'][0]['delta']
    assert only == {'role': 'assistant', 'reasoning': 'r'}
    both = json.loads(OpenAIStream('m', reasoning_field='both').chunk_json(d))['choices'][0]['delta']
    assert both['reasoning'] == both['reasoning_content'] == 'r'
    with pytest.raises(ValueError):
        OpenAIStream('m', reasoning_field='thoughts')  # type: ignore[arg-type]


def test_fragments_of_one_call_are_merged() -> None:
    message = DeltaMessage(role='assistant', tool_calls=[
        DeltaToolCall(index=0, id='c1', function=DeltaFunctionCall(name='f')),
        DeltaToolCall(index=0, type=None, function=DeltaFunctionCall(arguments='{"a"')),
        DeltaToolCall(index=0, type=None, function=DeltaFunctionCall(arguments=': 1}')),
        DeltaToolCall(index=1, id='c2', function=DeltaFunctionCall(name='g', arguments='{}')),
    ])
    entries = json.loads(OpenAIStream('m').chunk_json(StreamDelta(message, True)))['choices'][0]['delta']['tool_calls']
    assert entries == [
        {'index': 0, 'id': 'c1', 'type': 'function', 'function': {'name': 'f', 'arguments': '{"a": 1}'}},
        {'index': 1, 'id': 'c2', 'type': 'function', 'function': {'name': 'g', 'arguments': '{}'}},
    ]


def test_logprobs_and_finish_chunk_when_engine_gave_none() -> None:
    stream = OpenAIStream('m')
    first = json.loads(stream.chunk_json(StreamDelta(DeltaMessage(content='a'), False, [1], [{'token': 'a', 'logprob': -0.1}])))
    assert first['choices'][0]['logprobs'] == {'content': [{'token': 'a', 'logprob': -0.1}]}
    tail = _sse_payloads(stream.close())
    finish = json.loads(tail[0])
    assert finish['choices'][0] == {'index': 0, 'delta': {}, 'logprobs': None, 'finish_reason': 'stop'}
    assert tail[1:] == ['[DONE]'] and stream.close() == ''


def test_usage_chunk_only_when_requested() -> None:
    stream = OpenAIStream('m')
    stream.chunk_json(StreamDelta(DeltaMessage(content='a'), False, finish_reason='stop'))
    assert stream.close({'prompt_tokens': 0, 'completion_tokens': 1, 'total_tokens': 1}) == DONE


def test_error_mid_stream() -> None:
    stream = OpenAIStream('m')
    stream.event(StreamDelta(DeltaMessage(content='a'), False))
    payloads = _sse_payloads(stream.error('boom', 'internal_error', 500))
    assert json.loads(payloads[0]) == {'error': {'message': 'boom', 'type': 'internal_error', 'param': None, 'code': 500}}
    assert payloads[1] == '[DONE]'
    with pytest.raises(RuntimeError):
        stream.chunk_json(StreamDelta(DeltaMessage(content='b'), False))


def test_completion_object() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    result = runner.collect([EngineChunk(TEXT, finish_reason='stop')])
    doc = openai_completion(result, 'm', id='chatcmpl-1', created=5, prompt_tokens=4, completion_tokens=9,
                            reasoning_field='both')
    assert doc['object'] == 'chat.completion' and doc['id'] == 'chatcmpl-1'
    choice = doc['choices'][0]
    assert choice['finish_reason'] == 'tool_calls' and choice['logprobs'] is None
    message = choice['message']
    assert message['content'] == '\n\nSure.\n'
    assert message['reasoning_content'] == message['reasoning'] == '\nplan\n'
    assert [(c['function']['name'], json.loads(c['function']['arguments'])) for c in message['tool_calls']] == \
        [('get_weather', {'city': 'Paris'}), ('get_time', {})]
    assert doc['usage'] == {'prompt_tokens': 4, 'completion_tokens': 9, 'total_tokens': 13}


def test_completion_without_content_or_tools() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    doc = openai_completion(runner.collect([EngineChunk('only thinking', finish_reason='length')]), 'm')
    message = doc['choices'][0]['message']
    assert message == {'role': 'assistant', 'content': None, 'reasoning_content': 'only thinking'}
    assert doc['choices'][0]['finish_reason'] == 'length'
