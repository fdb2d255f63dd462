"""Scripted replays: multi-turn conversations for agent loops against ``lmparse serve``.

The loop is driven with the official openai and anthropic SDKs, and, where
``openai-agents`` is installed (the ``agents`` extra; skipped otherwise), by
an openai-agents ``Runner`` over chat completions, the README recipe
(tests/test_responses_sdk.py runs one with the default Responses model).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from lmparse.server import ReplayConfig, ReplayError, ReplayServer, build_parser_class, load_outputs

TOOLS: Any = [{'type': 'function', 'function': {
    'name': 'get_weather', 'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}}}}}]


def _bundled() -> dict[str, Any]:
    with resources.as_file(resources.files('lmparse').joinpath('data', 'replay.jsonl')) as path:
        return load_outputs(str(path))


@pytest.fixture(scope='module')
def server() -> Iterator[ReplayServer]:
    config = ReplayConfig(_bundled(), build_parser_class('default', 'default', 'qwen3'))
    srv = ReplayServer(config, '127.0.0.1', 0).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_turn_selection_rules(tmp_path: Path) -> None:
    path = tmp_path / 'c.jsonl'
    path.write_text(json.dumps({'name': 'c', 'turns': [
        {'output': 'zero'}, {'output': 'one', 'finish_reason': 'length'}, {'output': 'help', 'match': 'HELP'},
    ]}) + '\n')
    conv = load_outputs(str(path))['c']
    user = {'role': 'user', 'content': 'hi'}
    assistant = {'role': 'assistant', 'content': 'x'}
    assert conv.select([user]).text == 'zero'
    assert conv.select([user, assistant, {'role': 'tool', 'content': 'r'}]).text == 'one'
    assert conv.select([user, assistant, user, assistant, user]).text == 'one'  # the last turn repeats
    assert conv.select([user, assistant, {'role': 'user', 'content': [{'type': 'text', 'text': 'HELP me'}]}]).text \
        == 'help'
    assert conv.select([user, assistant, user]).finish_reason == 'length'
    for bad, needle in (({'name': 'c', 'turns': []}, 'non-empty list'),
                        ({'name': 'c', 'turns': [{'output': 1}]}, 'turns[0]: expected an object'),
                        ({'name': 'c', 'turns': [{'output': 'x', 'match': 3}]}, '"match" must be a string')):
        path.write_text(json.dumps(bad) + '\n')
        with pytest.raises(ReplayError, match=needle.replace('[', r'\[').replace(']', r'\]')):
            load_outputs(str(path))


def test_folder_conversations(tmp_path: Path) -> None:
    (tmp_path / 'single.txt').write_text('one output')
    (tmp_path / 'agent').mkdir()
    (tmp_path / 'agent' / '01-call.txt').write_text('first')
    (tmp_path / 'agent' / '02-answer.txt').write_text('second')
    outputs = load_outputs(str(tmp_path))
    assert list(outputs) == ['single', 'agent']
    assert [t.text for t in outputs['agent'].turns] == ['first', 'second']


def test_openai_agent_loop_ends(server: ReplayServer) -> None:
    openai = pytest.importorskip('openai')
    client = openai.OpenAI(base_url=server.url + '/v1', api_key='unused', max_retries=0, timeout=10)
    messages: list[Any] = [{'role': 'user', 'content': 'Weather in Paris?'}]
    for _ in range(5):
        reply = client.chat.completions.create(model='qwen3-agent', messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            assert json.loads(call.function.arguments) == {'city': 'Paris'}
            messages.append({'role': 'tool', 'tool_call_id': call.id, 'content': '21 °C, sunny'})
    assert reply.choices[0].finish_reason == 'stop'
    assert message.content == '\n\nIt is 21 °C and sunny in Paris.' and len(messages) == 4


def test_anthropic_agent_loop_ends(server: ReplayServer) -> None:
    anthropic = pytest.importorskip('anthropic')
    client = anthropic.Anthropic(base_url=server.url, api_key='unused', max_retries=0, timeout=10)
    tools: Any = [{'name': 'get_weather', 'input_schema': {'type': 'object'}}]
    messages: list[Any] = [{'role': 'user', 'content': 'Weather in Paris?'}]
    for _ in range(5):
        reply = client.messages.create(model='qwen3-agent', max_tokens=256, messages=messages, tools=tools)
        messages.append({'role': 'assistant', 'content': [b.model_dump() for b in reply.content]})
        uses = [b for b in reply.content if b.type == 'tool_use']
        if not uses:
            break
        messages.append({'role': 'user', 'content': [
            {'type': 'tool_result', 'tool_use_id': b.id, 'content': '21 °C, sunny'} for b in uses]})
    assert reply.stop_reason == 'end_turn' and len(messages) == 4
    assert [b.text for b in reply.content if b.type == 'text'] == ['\n\nIt is 21 °C and sunny in Paris.']


def test_openai_agents_runner_completes(server: ReplayServer) -> None:
    """The README recipe: an openai-agents Runner against the replay server runs to completion."""
    agents = pytest.importorskip('agents', reason='openai-agents is not installed (pip install "lmparse[agents]")')
    from openai import AsyncOpenAI

    calls: list[str] = []

    @agents.function_tool  # type: ignore[untyped-decorator,unused-ignore]
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return '21 °C, sunny'

    client = AsyncOpenAI(base_url=server.url + '/v1', api_key='unused', max_retries=0)
    agents.set_tracing_disabled(True)
    agent = agents.Agent(name='weather', instructions='Answer with the weather.', tools=[get_weather],
                         model=agents.OpenAIChatCompletionsModel(model='qwen3-agent', openai_client=client))
    result = agents.Runner.run_sync(agent, 'Weather in Paris?', max_turns=4)
    assert calls == ['Paris']
    assert result.final_output.strip() == 'It is 21 °C and sunny in Paris.'
