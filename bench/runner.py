"""Shared machinery: configured parser classes, one timed run, verification of the result."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from bench.fixtures import BenchFixture, Expected


def lmparse_class(fixture: BenchFixture) -> type:
    """lmparse's response parser class configured for ``fixture`` (independent subclass)."""
    import lmparse

    cls = lmparse.ResponseParserManager.get(fixture.response_parser)
    if hasattr(cls, 'with_parsers'):
        cls = cls.with_parsers(fixture.reasoning_parser, fixture.tool_parser)
    return cls


def lmparse_request(fixture: BenchFixture) -> Any:
    """The request object built once outside the timed region."""
    from lmparse import ChatCompletionRequest

    return ChatCompletionRequest.from_dict(fixture.request)


def make_stream_runner(cls: type, request: Any, chunks: Sequence[str]) -> Callable[[], Any]:
    """A closure doing exactly the timed work: construct a parser, stream every chunk.

    The output of each ``stream_chunk`` is dropped (but produced): what a
    server does with it is not the parser's cost.
    """
    last = len(chunks) - 1
    pairs = [(c, i == last) for i, c in enumerate(chunks)]
    empty: list[int] = []

    def run() -> Any:
        parser = cls(request)
        step = parser.stream_chunk
        for chunk, final in pairs:
            step(chunk, empty, final=final)
        return parser

    return run


def reconstruct(cls: type, request: Any, chunks: Sequence[str]) -> Expected:
    """Stream ``chunks`` through a new parser and rebuild (content, reasoning, calls)."""
    parser = cls(request)
    last = len(chunks) - 1
    messages = []
    for i, chunk in enumerate(chunks):
        messages.extend(m for m, _ in parser.stream_chunk(chunk, [], final=i == last))
    content = ''.join(m.content or '' for m in messages)
    reasoning = ''.join(m.reasoning_content or '' for m in messages)
    deltas = [d for m in messages for d in (m.tool_calls or [])]
    calls: tuple[tuple[str, str], ...] = ()
    if deltas:
        built = parser.tool_parser.build_tool_calls(deltas)
        calls = tuple((c.function.name, c.function.arguments) for c in built)
    return Expected(content or None, reasoning or None, calls)


def describe_mismatch(got: Expected, want: Expected) -> str:
    parts = []
    for name in ('content', 'reasoning', 'calls'):
        g, w = getattr(got, name), getattr(want, name)
        if g != w:
            parts.append(f'{name}: got {str(g)[:120]!r}... want {str(w)[:120]!r}...')
    return '; '.join(parts)


def time_once(run: Callable[[], Any]) -> float:
    t0 = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - t0) / 1e9
