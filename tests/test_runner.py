"""ChatRunner: metadata on the last delta of an engine chunk, stop -> tool_calls, usage."""
from __future__ import annotations

from typing import Any

import pytest

from lmparse.runner import ChatRunner, EngineChunk, build_usage
from tests.conftest import THINK_CLOSE_ID, TOOL_CLOSE_ID, TOOL_OPEN_ID, build_parser

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_metadata_only_on_last_delta_of_a_chunk() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    # One chunk: end of reasoning, content, a whole tool call -> several deltas.
    out = runner.feed('why</think>\n\nhi' + CALL, [1, 2, 3], logprobs=['a', 'b', 'c'], finish_reason='stop')
    assert len(out) >= 3
    for d in out[:-1]:
        assert (d.token_ids, d.logprobs, d.finish_reason, d.is_last) == ((), None, None, False)
    last = out[-1]
    assert list(last.token_ids) == [1, 2, 3] and last.logprobs == ['a', 'b', 'c'] and last.is_last
    assert last.finish_reason == 'tool_calls'
    assert runner.finished and runner.finish_reason == 'tool_calls' and runner.tool_emitted
    with pytest.raises(RuntimeError):
        runner.feed('more')


@pytest.mark.parametrize('reason', ['stop', 'length'])
def test_finish_without_tools_is_kept(reason: str) -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    deltas = list(runner.stream([EngineChunk('</think>hel'), EngineChunk('lo', finish_reason=reason)]))
    assert deltas[-1].finish_reason == reason
    assert ''.join(d.message.content or '' for d in deltas) == 'hello'


def test_length_is_not_turned_into_tool_calls() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    deltas = list(runner.stream([EngineChunk('</think>' + CALL), EngineChunk('x', finish_reason='length')]))
    assert deltas[-1].finish_reason == 'length'


def test_final_chunk_without_visible_text_still_yields_the_finish() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    assert runner.feed('</think>', [5]) == []  # nothing visible yet
    out = runner.feed('', [6], finish_reason='stop')
    assert len(out) == 1 and out[-1].finish_reason == 'stop' and list(out[-1].token_ids) == [6]
    assert out[-1].message.content is None  # metadata only: a tool-only response keeps content None


def test_metadata_only_chunks_on_request() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'), emit_metadata_only=True)
    runner.feed('a', [1])
    out = runner.feed('<tool', [2])  # held back: a possible tag prefix
    assert len(out) == 1 and list(out[0].token_ids) == [2] and out[0].message.content is None


def test_stream_without_engine_finish_ends_with_stop() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    deltas = list(runner.stream([EngineChunk('</think>' + CALL)]))
    assert deltas[-1].finish_reason == 'tool_calls'
    assert runner.finish() == []


def test_collect_matches_parse_complete_and_converts_stop() -> None:
    text = 'think</think>\n\nok' + CALL
    chunks = [EngineChunk(text[i:i + 3], [i]) for i in range(0, len(text), 3)]
    chunks[-1].finish_reason = 'stop'
    result = ChatRunner(build_parser('default', 'qwen3')).collect(chunks)
    assert result.content == '\n\nok'
    assert result.reasoning_content == 'think'
    assert result.tool_calls is not None and result.tool_calls[0].function.name == 'get_weather'
    assert result.finish_reason == 'tool_calls'
    assert result.completion_tokens == len(chunks)


def test_reasoning_tokens_in_usage(fake_tokenizer: Any) -> None:
    runner = ChatRunner(build_parser('default', 'qwen3', tokenizer=fake_tokenizer))
    ids = [7, 8, TOOL_OPEN_ID, 9, TOOL_CLOSE_ID, THINK_CLOSE_ID, 10]
    list(runner.stream([EngineChunk('a b <tool_call>{"name": "get_time", "arguments": {}}</tool_call></think>x',
                                    ids, finish_reason='stop')]))
    # Tool tokens inside <think> count as reasoning tokens.
    assert runner.reasoning_tokens == 5
    usage = build_usage(3, runner.completion_tokens, runner.reasoning_tokens)
    assert usage == {'prompt_tokens': 3, 'completion_tokens': 7, 'total_tokens': 10,
                     'completion_tokens_details': {'reasoning_tokens': 5}}


def test_usage_without_reasoning_count() -> None:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    assert runner.reasoning_tokens is None
    assert 'completion_tokens_details' not in build_usage(0, 4, None)


class _ListParser:
    """A minimal non-lmparse response parser: the runner uses only the public interface."""

    def __init__(self) -> None:
        from lmparse import DeltaMessage
        self._cls = DeltaMessage

    def stream_chunk(self, text: str, ids: Any, final: bool = False) -> list[tuple[Any, bool]]:
        return [(self._cls(role='assistant', content=c), False) for c in text]

    def parse_complete(self, text: str, ids: Any = None) -> tuple[Any, Any, Any]:
        return text, None, None


def test_any_response_parser() -> None:
    runner = ChatRunner(_ListParser())
    out = runner.feed('abc', [1], finish_reason='stop')
    assert [d.message.content for d in out] == ['a', 'b', 'c']
    assert [d.finish_reason for d in out] == [None, None, 'stop']
    assert runner.reasoning_tokens is None
