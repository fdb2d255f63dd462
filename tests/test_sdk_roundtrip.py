"""The official openai and anthropic SDKs against the replay server on 127.0.0.1.

Strict response validation is on: every event and response must match the
SDKs' own models. One server serves the whole session.
"""
from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from lmparse.server import ReplayConfig, ReplayServer, build_parser_class, load_outputs

openai = pytest.importorskip('openai')
anthropic = pytest.importorskip('anthropic')


def _http(server: ReplayServer, method: str, path: str, body: Any = None,
          headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """One raw request with the standard library; returns (status, decoded JSON)."""
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(str(host), port, timeout=10)
    try:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={'Content-Type': 'application/json', **(headers or {})})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()

DEMO_REASONING = ('\nThe user wants the weather in Beijing (北京) and the time in Tokyo. Both tools are available, '
                  'so I will call them one after the other.\n')
# The newline after the last tool block goes back to the content channel.
DEMO_TEXT = '\n\nLet me look both up for you.\n\n'
DEMO_CALLS = [('get_weather', {'city': 'Beijing', 'unit': 'celsius'}), ('get_time', {'timezone': 'Asia/Tokyo'})]

NESTED_REASONING_PARTS = ['\nThe user asks about Paris. I should check the weather first.\n',
                          '\nWhile that runs, I can also look up the local time.\n']
NESTED_TEXT = "\n\nI'm checking the weather in Paris for you.\n"
NESTED_CALLS = [('get_weather', {'city': 'Paris', 'unit': 'celsius'})]

PLAIN_TEXT = '\n\nHello! How can I help you today?'

EXPECTED = {
    'qwen3-demo': (DEMO_REASONING, DEMO_TEXT, DEMO_CALLS, [DEMO_REASONING]),
    'qwen3-nested': (''.join(NESTED_REASONING_PARTS), NESTED_TEXT, NESTED_CALLS, NESTED_REASONING_PARTS),
}

SCHEMAS = {
    'get_weather': {'type': 'object', 'properties': {'city': {'type': 'string'}, 'unit': {'type': 'string'}},
                    'required': ['city']},
    'get_time': {'type': 'object', 'properties': {'timezone': {'type': 'string'}}, 'required': ['timezone']},
}
OPENAI_TOOLS: Any = [{'type': 'function', 'function': {'name': n, 'description': n, 'parameters': s}}
                     for n, s in SCHEMAS.items()]
ANTHROPIC_TOOLS: Any = [{'name': n, 'description': n, 'input_schema': s} for n, s in SCHEMAS.items()]
MESSAGES: Any = [{'role': 'user', 'content': 'Weather in Beijing and time in Tokyo?'}]
THINKING: Any = {'type': 'enabled', 'budget_tokens': 1024}


@pytest.fixture(scope='session')
def replay_server() -> Iterator[ReplayServer]:
    with resources.as_file(resources.files('lmparse').joinpath('data', 'replay.jsonl')) as path:
        outputs = load_outputs(str(path))
    config = ReplayConfig(outputs, build_parser_class('default', 'default', 'qwen3'), chunk_size=5)
    server = ReplayServer(config, '127.0.0.1', 0).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope='session')
def oa(replay_server: ReplayServer) -> Any:
    return openai.OpenAI(base_url=replay_server.url + '/v1', api_key='unused', max_retries=0, timeout=10,
                         _strict_response_validation=True)


@pytest.fixture(scope='session')
def an(replay_server: ReplayServer) -> Any:
    return anthropic.Anthropic(base_url=replay_server.url, api_key='unused', max_retries=0, timeout=10,
                               _strict_response_validation=True)


def _openai_calls(message: Any) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_openai_stream_helper(oa: Any, name: str) -> None:
    reasoning, text, calls, _ = EXPECTED[name]
    chunks = []
    with oa.chat.completions.stream(model=name, messages=MESSAGES, tools=OPENAI_TOOLS,
                                    stream_options={'include_usage': True}) as stream:
        for event in stream:
            if event.type == 'chunk':
                chunks.append(event.chunk)
        final = stream.get_final_completion()
    choice = final.choices[0]
    assert choice.message.role == 'assistant'
    assert choice.message.content == text
    assert choice.message.reasoning_content == reasoning
    assert _openai_calls(choice.message) == calls
    assert all(c.id.startswith('chatcmpl-tool-') for c in choice.message.tool_calls)
    assert choice.finish_reason == 'tool_calls'
    # Same identity on every chunk; the last is the usage chunk with no choices.
    assert len({(c.id, c.created, c.model, c.object) for c in chunks}) == 1
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert final.usage is not None and final.usage.completion_tokens > 0
    roles = [c.choices[0].delta.role for c in chunks if c.choices]
    assert roles[0] == 'assistant' and not any(roles[1:])


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_openai_create(oa: Any, name: str) -> None:
    reasoning, text, calls, _ = EXPECTED[name]
    completion = oa.chat.completions.create(model=name, messages=MESSAGES, tools=OPENAI_TOOLS)
    message = completion.choices[0].message
    assert (message.content, message.reasoning_content, _openai_calls(message)) == (text, reasoning, calls)
    assert completion.choices[0].finish_reason == 'tool_calls'
    assert completion.object == 'chat.completion'


def test_openai_create_streaming_iterates_raw_chunks(oa: Any) -> None:
    stream = oa.chat.completions.create(model='plain', messages=MESSAGES, stream=True)
    chunks = list(stream)
    assert ''.join(c.choices[0].delta.content or '' for c in chunks if c.choices) == PLAIN_TEXT
    assert chunks[-1].choices[0].finish_reason == 'stop'


def test_openai_truncated_length(oa: Any) -> None:
    completion = oa.chat.completions.create(model='qwen3-truncated', messages=MESSAGES, tools=OPENAI_TOOLS)
    choice = completion.choices[0]
    # finish stays "length"; the unfinished call keeps only what was stable.
    assert choice.finish_reason == 'length'
    assert choice.message.content == '\n\nLet me check.\n'


def test_openai_errors(oa: Any) -> None:
    with pytest.raises(openai.NotFoundError) as info:
        oa.chat.completions.create(model='no-such-output', messages=MESSAGES)
    assert 'no-such-output' in str(info.value)
    with pytest.raises(openai.BadRequestError):
        oa.chat.completions.create(model='plain', messages=MESSAGES,
                                   tools=[{'type': 'function', 'function': {'name': 3}}])


def _thinking_parts(message: Any) -> list[str]:
    return [b.thinking for b in message.content if b.type == 'thinking']


def _anthropic_calls(message: Any) -> list[tuple[str, Any]]:
    return [(b.name, b.input) for b in message.content if b.type == 'tool_use']


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_anthropic_stream_final_message(an: Any, name: str) -> None:
    reasoning, text, calls, thinking_parts = EXPECTED[name]
    with an.messages.stream(model=name, max_tokens=256, messages=MESSAGES, tools=ANTHROPIC_TOOLS,
                            thinking=THINKING) as stream:
        events = list(stream)
        final = stream.get_final_message()
    assert _thinking_parts(final) == thinking_parts
    assert ''.join(b.text for b in final.content if b.type == 'text') == text
    assert _anthropic_calls(final) == calls
    assert final.stop_reason == 'tool_use'
    assert final.usage.output_tokens > 0
    starts = [e for e in events if e.type == 'content_block_start']
    assert [e.index for e in starts] == list(range(len(final.content)))
    if name == 'qwen3-nested':
        # The model's order survives: thinking, tool_use, thinking, text.
        assert [b.type for b in final.content] == ['thinking', 'tool_use', 'thinking', 'text']
    else:
        assert [b.type for b in final.content] == ['thinking', 'text', 'tool_use', 'tool_use', 'text']


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_anthropic_create(an: Any, name: str) -> None:
    reasoning, text, calls, _ = EXPECTED[name]
    message = an.messages.create(model=name, max_tokens=256, messages=MESSAGES, tools=ANTHROPIC_TOOLS,
                                 thinking=THINKING)
    assert _thinking_parts(message) == [reasoning]
    assert [b.text for b in message.content if b.type == 'text'] == [text]
    assert _anthropic_calls(message) == calls
    assert message.stop_reason == 'tool_use'


def test_anthropic_truncated_and_plain(an: Any) -> None:
    with an.messages.stream(model='qwen3-truncated', max_tokens=256, messages=MESSAGES,
                            tools=ANTHROPIC_TOOLS) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == 'max_tokens'
    plain = an.messages.create(model='plain', max_tokens=16, messages=MESSAGES, thinking=THINKING)
    assert [b.type for b in plain.content] == ['thinking', 'text'] and plain.stop_reason == 'end_turn'


@pytest.mark.parametrize('thinking', [None, {'type': 'disabled'}])
def test_anthropic_no_thinking_blocks_unless_enabled(an: Any, thinking: Any) -> None:
    extra = {} if thinking is None else {'thinking': thinking}
    for name, (_, text, calls, _) in EXPECTED.items():
        message = an.messages.create(model=name, max_tokens=256, messages=MESSAGES, tools=ANTHROPIC_TOOLS, **extra)
        assert _thinking_parts(message) == [] and [b.text for b in message.content if b.type == 'text'] == [text]
        assert _anthropic_calls(message) == calls
        with an.messages.stream(model=name, max_tokens=256, messages=MESSAGES, tools=ANTHROPIC_TOOLS,
                                **extra) as stream:
            final = stream.get_final_message()
        assert _thinking_parts(final) == [] and _anthropic_calls(final) == calls
        assert ''.join(b.text for b in final.content if b.type == 'text') == text


def test_anthropic_incomplete_call_is_not_a_tool_use(an: Any) -> None:
    # qwen3-truncated ends inside '{"city": "Bei' (finish_reason length).
    message = an.messages.create(model='qwen3-truncated', max_tokens=256, messages=MESSAGES, tools=ANTHROPIC_TOOLS)
    assert message.stop_reason == 'max_tokens' and _anthropic_calls(message) == []
    extra = message.model_extra or {}
    assert [(c['name'], c['partial_json']) for c in extra['lmparse_incomplete_tool_calls']] == \
        [('get_weather', '{"city": "Bei')]


def test_tools_not_offered_are_not_filtered(oa: Any, an: Any) -> None:
    completion = oa.chat.completions.create(model='qwen3-demo', messages=MESSAGES)
    assert _openai_calls(completion.choices[0].message) == DEMO_CALLS
    assert completion.choices[0].finish_reason == 'tool_calls'
    message = an.messages.create(model='qwen3-demo', max_tokens=256, messages=MESSAGES)
    assert _anthropic_calls(message) == DEMO_CALLS and message.stop_reason == 'tool_use'
    # Offered tools still filter.
    completion = oa.chat.completions.create(model='qwen3-demo', messages=MESSAGES, tools=OPENAI_TOOLS[1:])
    assert _openai_calls(completion.choices[0].message) == DEMO_CALLS[1:]


def test_anthropic_errors(an: Any, replay_server: ReplayServer) -> None:
    with pytest.raises(anthropic.NotFoundError):
        an.messages.create(model='no-such-output', max_tokens=16, messages=MESSAGES)
    status, body = _http(replay_server, 'POST', '/v1/messages', {'model': 'plain', 'messages': MESSAGES})
    assert status == 400
    assert body['type'] == 'error' and 'max_tokens' in body['error']['message']
    status, body = _http(replay_server, 'POST', '/v1/messages', b'{not json')
    assert status == 400 and body['error']['type'] == 'invalid_request_error'
    status, body = _http(replay_server, 'POST', '/v1/chat/completions', [1, 2])
    assert status == 400 and body['error']['type'] == 'invalid_request_error'


def test_output_header_and_models(replay_server: ReplayServer) -> None:
    status, body = _http(replay_server, 'POST', '/v1/chat/completions', {'model': 'anything', 'messages': MESSAGES},
                         {'X-Replay-Output': 'plain'})
    assert status == 200
    assert body['choices'][0]['message']['content'] == PLAIN_TEXT
    status, models = _http(replay_server, 'GET', '/v1/models')
    assert [m['id'] for m in models['data']] == ['qwen3-demo', 'qwen3-nested', 'qwen3-truncated', 'plain', 'qwen3-agent']
    assert _http(replay_server, 'GET', '/nope')[0] == 404


def test_round_trip_time(oa: Any, an: Any) -> None:
    """Whole streamed round trips through the SDKs stay fast (printed with -s)."""
    def timed(fn: Any) -> float:
        best = float('inf')
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return best

    def oa_stream() -> None:
        with oa.chat.completions.stream(model='qwen3-demo', messages=MESSAGES, tools=OPENAI_TOOLS) as s:
            s.get_final_completion()

    def an_stream() -> None:
        with an.messages.stream(model='qwen3-demo', max_tokens=256, messages=MESSAGES, tools=ANTHROPIC_TOOLS) as s:
            s.get_final_message()

    t_oa, t_an = timed(oa_stream), timed(an_stream)
    print(f'\nstreamed round trip of qwen3-demo (5-char chunks, best of 5): openai {t_oa * 1e3:.1f} ms, '
          f'anthropic {t_an * 1e3:.1f} ms')
    # A generous bound: catches a Nagle/delayed-ACK stall (40 ms per event), not machine speed.
    assert t_oa < 2.0 and t_an < 2.0
