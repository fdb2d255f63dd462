"""The OpenAI Responses API of ``lmparse serve``, driven by the official ``openai`` SDK on 127.0.0.1.

Strict response validation is on, and every raw streamed event is also
validated against the SDK's own typed event union (``ResponseStreamEvent``).
An openai-agents ``Agent`` with its default model class (the Responses one)
runs a scripted multi-turn tool conversation when ``openai-agents`` is
installed (the ``agents`` extra); that test skips otherwise.
"""
from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from lmparse.server import ReplayConfig, ReplayServer, build_parser_class, load_outputs

openai = pytest.importorskip('openai')
from openai._models import validate_type  # noqa: E402
from openai.types.responses import Response, ResponseStreamEvent  # noqa: E402

DEMO_REASONING = ('\nThe user wants the weather in Beijing (北京) and the time in Tokyo. Both tools are available, '
                  'so I will call them one after the other.\n')
DEMO_CALLS = [('get_weather', {'city': 'Beijing', 'unit': 'celsius'}), ('get_time', {'timezone': 'Asia/Tokyo'})]
SCHEMAS = {
    'get_weather': {'type': 'object', 'properties': {'city': {'type': 'string'}, 'unit': {'type': 'string'}},
                    'required': ['city']},
    'get_time': {'type': 'object', 'properties': {'timezone': {'type': 'string'}}, 'required': ['timezone']},
}
TOOLS: Any = [{'type': 'function', 'name': n, 'description': n, 'parameters': s, 'strict': False}
              for n, s in SCHEMAS.items()]
INPUT = 'Weather in Beijing and time in Tokyo?'
# Item types per output, in the model's order (streamed); non-streaming aggregates.
STREAMED_ORDER = {
    'qwen3-demo': ['reasoning', 'message', 'function_call', 'function_call', 'message'],
    'qwen3-nested': ['reasoning', 'function_call', 'reasoning', 'message'],
    'plain': ['reasoning', 'message'],
}
AGGREGATED_ORDER = {
    'qwen3-demo': ['reasoning', 'message', 'function_call', 'function_call'],
    'qwen3-nested': ['reasoning', 'message', 'function_call'],
    'plain': ['reasoning', 'message'],
}


def _outputs() -> dict[str, Any]:
    with resources.as_file(resources.files('lmparse').joinpath('data', 'replay.jsonl')) as path:
        return load_outputs(str(path))


@pytest.fixture(scope='module')
def server() -> Iterator[ReplayServer]:
    config = ReplayConfig(_outputs(), build_parser_class('default', 'default', 'qwen3'), chunk_size=5)
    srv = ReplayServer(config, '127.0.0.1', 0).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope='module')
def stored_server() -> Iterator[ReplayServer]:
    config = ReplayConfig(_outputs(), build_parser_class('default', 'default', 'qwen3'), chunk_size=7, store=True)
    srv = ReplayServer(config, '127.0.0.1', 0).start()
    try:
        yield srv
    finally:
        srv.stop()


def _client(server: ReplayServer) -> Any:
    return openai.OpenAI(base_url=server.url + '/v1', api_key='unused', max_retries=0, timeout=10,
                         _strict_response_validation=True)


@pytest.fixture(scope='module')
def oa(server: ReplayServer) -> Any:
    return _client(server)


def _raw(server: ReplayServer, method: str, path: str, body: Any = None) -> tuple[int, str]:
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(str(host), port, timeout=10)
    try:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={'Content-Type': 'application/json'})
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def _sse_events(text: str) -> list[dict[str, Any]]:
    events = []
    for block in text.split('\n\n'):
        if not block:
            continue
        name, data = block.split('\n')
        assert name.startswith('event: ') and data.startswith('data: ')
        event = json.loads(data[len('data: '):])
        assert event['type'] == name[len('event: '):]
        events.append(event)
    return events


def _calls(response: Any) -> list[tuple[str, Any]]:
    return [(item.name, json.loads(item.arguments)) for item in response.output if item.type == 'function_call']


def _reasoning(response: Any) -> list[str]:
    return [''.join(c.text for c in item.content or ()) for item in response.output if item.type == 'reasoning']


def test_create_non_streaming(oa: Any) -> None:
    response = oa.responses.create(model='qwen3-demo', input=INPUT, tools=TOOLS)
    assert response.object == 'response' and response.status == 'completed' and response.id.startswith('resp_')
    assert [item.type for item in response.output] == AGGREGATED_ORDER['qwen3-demo']
    assert _reasoning(response) == [DEMO_REASONING]
    assert response.output_text == '\n\nLet me look both up for you.\n\n'
    assert _calls(response) == DEMO_CALLS
    calls = [item for item in response.output if item.type == 'function_call']
    assert all(c.call_id and c.id.startswith('fc_') and c.status == 'completed' for c in calls)
    assert response.usage.output_tokens > 0 and response.usage.total_tokens == response.usage.output_tokens
    assert [t.name for t in response.tools] == ['get_weather', 'get_time'] and response.tool_choice == 'auto'
    assert response.incomplete_details is None and response.error is None


@pytest.mark.parametrize('name', sorted(STREAMED_ORDER))
def test_create_streaming_events_are_typed_and_ordered(server: ReplayServer, oa: Any, name: str) -> None:
    status, text = _raw(server, 'POST', '/v1/responses', {'model': name, 'input': INPUT, 'tools': TOOLS,
                                                          'stream': True})
    assert status == 200
    events = _sse_events(text)
    for e in events:
        validate_type(type_=ResponseStreamEvent, value=e)  # the SDK's own typed union, strictly
    assert [e['sequence_number'] for e in events] == list(range(len(events)))
    assert [e['type'] for e in events[:2]] == ['response.created', 'response.in_progress']
    assert events[-1]['type'] == 'response.completed'
    final = validate_type(type_=Response, value=events[-1]['response'])
    assert [item.type for item in final.output] == STREAMED_ORDER[name]
    added = [e for e in events if e['type'] == 'response.output_item.added']
    done = [e for e in events if e['type'] == 'response.output_item.done']
    assert [e['output_index'] for e in added] == [e['output_index'] for e in done] == list(range(len(final.output)))
    assert [e['item']['id'] for e in done] == [item.id for item in final.output]
    # One item open at a time: every delta belongs to the last added item.
    open_index = -1
    for e in events:
        if e['type'] == 'response.output_item.added':
            open_index = e['output_index']
        elif e['type'].endswith('.delta'):
            assert e['output_index'] == open_index
    # The deltas rebuild each finished item.
    for item in final.output:
        deltas = ''.join(e['delta'] for e in events if e['type'].endswith('.delta') and e.get('item_id') == item.id)
        whole = item.arguments if item.type == 'function_call' else ''.join(c.text for c in item.content or ())
        assert deltas == whole

    # The SDK's own stream iterator sees the same typed events.
    with oa.responses.create(model=name, input=INPUT, tools=TOOLS, stream=True) as stream:
        types = [event.type for event in stream]
    assert types == [e['type'] for e in events]


@pytest.mark.parametrize('name', sorted(STREAMED_ORDER))
def test_stream_helper_final_response(oa: Any, name: str) -> None:
    with oa.responses.stream(model=name, input=INPUT, tools=TOOLS) as stream:
        text_deltas = [e.delta for e in stream if e.type == 'response.output_text.delta']
        final = stream.get_final_response()
    assert [item.type for item in final.output] == STREAMED_ORDER[name]
    assert final.output_text == ''.join(text_deltas)
    plain = oa.responses.create(model=name, input=INPUT, tools=TOOLS)
    # Streamed and not: the same text, reasoning and calls (the stream keeps the model's item order).
    assert final.output_text == plain.output_text
    assert ''.join(_reasoning(final)) == ''.join(_reasoning(plain))
    assert _calls(final) == _calls(plain)


def test_interleaved_reasoning_keeps_the_model_order(oa: Any) -> None:
    with oa.responses.stream(model='qwen3-nested', input=INPUT, tools=TOOLS) as stream:
        final = stream.get_final_response()
    assert _reasoning(final) == ['\nThe user asks about Paris. I should check the weather first.\n',
                                 '\nWhile that runs, I can also look up the local time.\n']
    assert _calls(final) == [('get_weather', {'city': 'Paris', 'unit': 'celsius'})]


def test_truncated_output_is_incomplete(server: ReplayServer, oa: Any) -> None:
    response = oa.responses.create(model='qwen3-truncated', input=INPUT, tools=TOOLS)
    assert response.status == 'incomplete' and response.incomplete_details.reason == 'max_output_tokens'
    call = [item for item in response.output if item.type == 'function_call']
    # Kept as generated, marked incomplete, never repaired (the chat adapter's policy).
    assert [(c.name, c.arguments, c.status) for c in call] == [('get_weather', '{"city": "Bei', 'incomplete')]
    status, text = _raw(server, 'POST', '/v1/responses', {'model': 'qwen3-truncated', 'input': INPUT,
                                                          'tools': TOOLS, 'stream': True})
    events = _sse_events(text)
    for e in events:
        validate_type(type_=ResponseStreamEvent, value=e)
    assert events[-1]['type'] == 'response.incomplete'
    final = events[-1]['response']
    assert final['status'] == 'incomplete' and final['incomplete_details'] == {'reason': 'max_output_tokens'}
    assert final['output'][-1]['type'] == 'function_call' and final['output'][-1]['status'] == 'incomplete'
    assert final['output'][-1]['arguments'] == '{"city": "Bei'
    with oa.responses.create(model='qwen3-truncated', input=INPUT, tools=TOOLS, stream=True) as stream:
        assert [e.type for e in stream][-1] == 'response.incomplete'


def test_tools_filter_and_tool_choice(oa: Any) -> None:
    only_time = oa.responses.create(model='qwen3-demo', input=INPUT, tools=TOOLS[1:])
    assert _calls(only_time) == DEMO_CALLS[1:]
    no_tools = oa.responses.create(model='qwen3-demo', input=INPUT)
    assert _calls(no_tools) == DEMO_CALLS  # a replay shows every call when no tools are offered
    allowed = oa.responses.create(model='qwen3-demo', input=INPUT, tools=TOOLS, tool_choice={
        'type': 'allowed_tools', 'mode': 'auto', 'tools': [{'type': 'function', 'name': 'get_weather'}]})
    assert _calls(allowed) == DEMO_CALLS[:1]
    forced = oa.responses.create(model='qwen3-demo', input=INPUT, tools=TOOLS,
                                 tool_choice={'type': 'function', 'name': 'get_time'})
    assert forced.tool_choice.type == 'function' and forced.tool_choice.name == 'get_time'


def test_input_items_pick_the_conversation_turn(oa: Any) -> None:
    tools: Any = [{'type': 'function', 'name': 'get_weather', 'parameters': {'type': 'object'}}]
    items: list[Any] = [{'role': 'user', 'content': 'Weather in Paris?'}]
    first = oa.responses.create(model='qwen3-agent', input=items, tools=tools)
    call = next(item for item in first.output if item.type == 'function_call')
    assert (call.name, json.loads(call.arguments)) == ('get_weather', {'city': 'Paris'})
    items += [item.model_dump(exclude_none=True) for item in first.output]
    items.append({'type': 'function_call_output', 'call_id': call.call_id, 'output': '21 °C, sunny'})
    second = oa.responses.create(model='qwen3-agent', input=items, tools=tools)
    assert second.output_text == '\n\nIt is 21 °C and sunny in Paris.'
    assert not _calls(second)


def test_previous_response_id_needs_store(oa: Any, stored_server: ReplayServer) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        oa.responses.create(model='qwen3-agent', input='Weather in Paris?', previous_response_id='resp_x')
    body = info.value.body
    assert body['param'] == 'previous_response_id' and 'serve --store' in body['message']
    client = _client(stored_server)
    first = client.responses.create(model='qwen3-agent', input='Weather in Paris?')
    call = next(item for item in first.output if item.type == 'function_call')
    second = client.responses.create(model='qwen3-agent', previous_response_id=first.id, input=[
        {'type': 'function_call_output', 'call_id': call.call_id, 'output': '21 °C, sunny'}])
    assert second.output_text == '\n\nIt is 21 °C and sunny in Paris.'
    assert client.responses.retrieve(second.id).output_text == second.output_text
    with client.responses.stream(model='qwen3-agent', input='Weather in Paris?') as stream:
        streamed = stream.get_final_response()
    assert client.responses.retrieve(streamed.id).id == streamed.id
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model='qwen3-agent', input='x', previous_response_id='resp_unknown')
    assert info.value.body['code'] == 'previous_response_not_found'
    with pytest.raises(openai.NotFoundError):
        oa.responses.retrieve(streamed.id)  # the default server stores nothing


@pytest.mark.parametrize('body,param', [
    ({'input': INPUT}, 'model'),
    ({'model': 'plain', 'input': 3}, 'input'),
    ({'model': 'plain', 'input': [{'type': 'computer_call_output', 'call_id': 'c'}]}, 'input'),
    ({'model': 'plain', 'input': INPUT, 'tools': [{'type': 'web_search'}]}, 'tools'),
    ({'model': 'plain', 'input': INPUT, 'tools': [{'type': 'function', 'function': {'name': 'f'}}]}, 'tools'),
    ({'model': 'plain', 'input': INPUT, 'tool_choice': {'type': 'mcp'}}, 'tool_choice'),
    ({'model': 'plain', 'input': INPUT, 'conversation': 'conv_1'}, 'conversation'),
])
def test_errors_in_the_api_shape(server: ReplayServer, body: Any, param: str) -> None:
    status, text = _raw(server, 'POST', '/v1/responses', body)
    error = json.loads(text)['error']
    assert status == 400 and error['type'] == 'invalid_request_error' and error['param'] == param, error
    assert error['message']


def test_unknown_output_is_404(oa: Any) -> None:
    with pytest.raises(openai.NotFoundError):
        oa.responses.create(model='no-such-output', input=INPUT)


def test_started_in_reasoning_output_over_responses(tmp_path: Path) -> None:
    # #27: a Qwen3-thinking output with the open tag in the prompt: no </think> in the text.
    outputs = tmp_path / 'r1.txt'
    outputs.write_text('The user greets me.\n</think>\n\nHello!')
    config = ReplayConfig(load_outputs(str(outputs)), build_parser_class('default', 'default', None))
    srv = ReplayServer(config, '127.0.0.1', 0).start()
    try:
        response = _client(srv).responses.create(model='r1', input='hi')
        assert response.output_text == '\n\nHello!' and _reasoning(response) == ['The user greets me.\n']
    finally:
        srv.stop()


def test_openai_agents_default_model_runs_a_tool_conversation(server: ReplayServer) -> None:
    """An openai-agents Agent with its default model class (Responses API) finishes a scripted tool loop."""
    agents = pytest.importorskip('agents', reason='openai-agents is not installed (pip install "lmparse[agents]")')
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    calls: list[str] = []

    @agents.function_tool  # type: ignore[untyped-decorator,unused-ignore]
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return '21 °C, sunny'

    client = AsyncOpenAI(base_url=server.url + '/v1', api_key='unused', max_retries=0,
                         _strict_response_validation=True)
    agents.set_tracing_disabled(True)
    provider = agents.OpenAIProvider(openai_client=client)
    agent = agents.Agent(name='weather', instructions='Answer with the weather.', tools=[get_weather],
                         model='qwen3-agent')
    assert isinstance(provider.get_model('qwen3-agent'), OpenAIResponsesModel)  # the default model class
    config = agents.RunConfig(model_provider=provider, tracing_disabled=True)

    async def conversation() -> tuple[Any, Any]:
        # One event loop for both runs: the client's connection pool belongs to it.
        result = await agents.Runner.run(agent, 'Weather in Paris?', max_turns=4, run_config=config)
        streamed = agents.Runner.run_streamed(agent, 'Weather in Paris?', max_turns=4, run_config=config)
        kinds = [event.type async for event in streamed.stream_events()]
        assert 'raw_response_event' in kinds
        return result, streamed

    result, streamed = asyncio.run(conversation())
    assert calls == ['Paris', 'Paris']  # once per run: the tool turn, then the answer turn
    assert result.final_output.strip() == 'It is 21 °C and sunny in Paris.'
    assert streamed.final_output.strip() == 'It is 21 °C and sunny in Paris.'
    assert len(result.raw_responses) == 2 and result.raw_responses[0].response_id.startswith('resp_')
