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
        # gpt-oss (Harmony) also takes an input mode: 'text' fixtures carry the special tokens in the text.
        kwargs = {'input_mode': fixture.extra['input_mode']} if 'input_mode' in fixture.extra else {}
        if 'tokenizer' in fixture.extra:  # 'hf': the parsers come from the tokenizer's response_template
            kwargs['tokenizer'] = fixture.extra['tokenizer']
        cls = cls.with_parsers(fixture.reasoning_parser, fixture.tool_parser, **kwargs)
    return cls


def lmparse_request(fixture: BenchFixture) -> Any:
    """The request object built once outside the timed region."""
    from lmparse import ChatCompletionRequest

    return ChatCompletionRequest.from_dict(fixture.request)


def make_stream_runner(cls: type, request: Any, chunks: Sequence[str],
                       token_ids: Sequence[list[int]] | None = None) -> Callable[[], Any]:
    """A closure doing exactly the timed work: construct a parser, stream every chunk.

    ``token_ids`` (one list per chunk, built beforehand) go with the text as an
    engine sends them; without it every chunk carries an empty id list.
    The output of each ``stream_chunk`` is dropped (but produced): what a
    server does with it is not the parser's cost.
    """
    last = len(chunks) - 1
    empty: list[int] = []
    triples = [(c, token_ids[i] if token_ids is not None else empty, i == last) for i, c in enumerate(chunks)]

    def run() -> Any:
        parser = cls(request)
        step = parser.stream_chunk
        for chunk, ids, final in triples:
            step(chunk, ids, final=final)
        return parser

    return run


def _calls_by_index(deltas: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """(name, arguments) per call index, for parsers without ``build_tool_calls`` (LMDeploy's gpt-oss)."""
    calls: dict[int, list[str]] = {}
    for d in deltas:
        entry = calls.setdefault(d.index, ['', ''])
        if d.function is not None:
            entry[0] += d.function.name or ''
            entry[1] += d.function.arguments or ''
    return tuple((calls[i][0], calls[i][1]) for i in sorted(calls))


def reconstruct(cls: type, request: Any, chunks: Sequence[str],
                token_ids: Sequence[list[int]] | None = None) -> Expected:
    """Stream ``chunks`` (with ``token_ids``, if given) through a new parser; rebuild (content, reasoning, calls)."""
    parser = cls(request)
    last = len(chunks) - 1
    messages = []
    for i, chunk in enumerate(chunks):
        ids = token_ids[i] if token_ids is not None else []
        messages.extend(m for m, _ in parser.stream_chunk(chunk, ids, final=i == last))
    content = ''.join(m.content or '' for m in messages)
    reasoning = ''.join(m.reasoning_content or '' for m in messages)
    deltas = [d for m in messages for d in (m.tool_calls or [])]
    calls: tuple[tuple[str, str], ...] = ()
    if deltas:
        build = getattr(parser.tool_parser, 'build_tool_calls', None)
        if build is None:
            calls = _calls_by_index(deltas)
        else:
            calls = tuple((c.function.name, c.function.arguments) for c in build(deltas))
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
