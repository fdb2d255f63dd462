"""A parser failure in the middle of a stream ends it with each API's own error event (all three endpoints)."""
from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from lmparse.runner import ChatRunner
from lmparse.server import ReplayConfig, ReplayServer, build_parser_class, load_outputs


@pytest.fixture
def failing_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    real_stream = ChatRunner.stream

    def stream(self: ChatRunner, chunks: Any) -> Iterator[Any]:
        for i, delta in enumerate(real_stream(self, chunks)):
            if i == 2:
                raise RuntimeError('boom')
            yield delta

    monkeypatch.setattr(ChatRunner, 'stream', stream)
    with resources.as_file(resources.files('lmparse').joinpath('data', 'replay.jsonl')) as path:
        outputs = load_outputs(str(path))
    config = ReplayConfig(outputs, build_parser_class('default', 'default', 'qwen3'), chunk_size=5)
    server = ReplayServer(config, '127.0.0.1', 0).start()
    try:
        yield server
    finally:
        server.stop()


def _post(server: ReplayServer, path: str, body: dict[str, Any]) -> str:
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(str(host), port, timeout=10)
    try:
        conn.request('POST', path, body=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
        resp = conn.getresponse()
        assert resp.status == 200
        return resp.read().decode()
    finally:
        conn.close()


MESSAGES = [{'role': 'user', 'content': 'Weather in Beijing?'}]


def test_chat_completions_stream_ends_with_error_and_done(failing_server: ReplayServer) -> None:
    text = _post(failing_server, '/v1/chat/completions', {'model': 'qwen3-demo', 'messages': MESSAGES, 'stream': True})
    events = [line[6:] for line in text.split('\n') if line.startswith('data: ')]
    assert events[-1] == '[DONE]'
    assert json.loads(events[-2])['error']['message'] == 'failed to parse output: boom'


def test_messages_stream_ends_with_error_event(failing_server: ReplayServer) -> None:
    text = _post(failing_server, '/v1/messages', {'model': 'qwen3-demo', 'messages': MESSAGES, 'max_tokens': 64,
                                                  'stream': True})
    last = text.strip().split('\n\n')[-1]
    assert last.startswith('event: error\n')
    assert json.loads(last.split('data: ', 1)[1])['error']['message'] == 'failed to parse output: boom'


def test_responses_stream_ends_with_error_then_failed(failing_server: ReplayServer) -> None:
    text = _post(failing_server, '/v1/responses', {'model': 'qwen3-demo', 'input': 'Weather in Beijing?',
                                                   'stream': True})
    kinds = [line[7:] for line in text.split('\n') if line.startswith('event: ')]
    assert kinds[-2:] == ['error', 'response.failed']
    assert 'failed to parse output: boom' in text
