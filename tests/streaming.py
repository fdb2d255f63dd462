"""Shared helpers: chunkings of a raw output and reconstruction of streamed deltas."""
from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

FIXED_SIZES = (1, 4, 8, 16, 256)


def fixed_chunks(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or ['']


def random_chunks(text: str, rng: random.Random, max_size: int = 12) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, max_size)
        out.append(text[i:i + n])
        i += n
    return out or ['']


def splits_inside(text: str, tags: Iterable[str]) -> Iterator[list[str]]:
    """Two-chunk splits at every position inside every occurrence of every tag."""
    seen: set[int] = set()
    for tag in tags:
        start = text.find(tag)
        while start >= 0:
            for cut in range(start + 1, start + len(tag)):
                if cut not in seen:
                    seen.add(cut)
                    yield [text[:cut], text[cut:]]
            start = text.find(tag, start + 1)


def chunkings(text: str, tags: Sequence[str] = (), seed: int = 0, n_random: int = 5) -> Iterator[tuple[str, list[str]]]:
    """(label, chunks) for one chunk, every split inside each tag, fixed sizes and random sizes."""
    yield 'one', [text]
    for chunks in splits_inside(text, tags):
        yield f'split@{len(chunks[0])}', chunks
    for size in FIXED_SIZES:
        yield f'fixed{size}', fixed_chunks(text, size)
    rng = random.Random(seed)
    for i in range(n_random):
        yield f'random{i}', random_chunks(text, rng)


@dataclass
class Reconstruction:
    content: str | None = None
    reasoning: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments)
    messages: list[Any] = field(default_factory=list)

    def key(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning, self.calls


def calls_of(tool_calls: Any) -> list[tuple[str, str]]:
    return [(c.function.name, c.function.arguments) for c in tool_calls or []]


def stream(parser: Any, chunks: Sequence[str]) -> Reconstruction:
    """Feed chunks (the last with final=True) and rebuild content, reasoning and calls."""
    messages = []
    for i, chunk in enumerate(chunks):
        for message, _ in parser.stream_chunk(chunk, [], final=i == len(chunks) - 1):
            messages.append(message)
    content = ''.join(m.content or '' for m in messages)
    reasoning = ''.join(m.reasoning_content or '' for m in messages)
    deltas = [d for m in messages for d in (m.tool_calls or [])]
    check_identity_first(deltas)
    calls = calls_of(parser.tool_parser.build_tool_calls(deltas)) if parser.tool_parser is not None else []
    return Reconstruction(content or None, reasoning or None, calls, messages)


def complete(parser: Any, text: str) -> Reconstruction:
    content, tool_calls, reasoning = parser.parse_complete(text)
    return Reconstruction(content, reasoning, calls_of(tool_calls))


def check_identity_first(deltas: Sequence[Any]) -> None:
    """Each index's first delta carries id, type and name; indices are 0..n-1 in order."""
    seen: list[int] = []
    for d in deltas:
        if d.index not in seen:
            assert d.index == len(seen), f'non-contiguous tool index {d.index} after {seen}'
            assert d.id and d.type == 'function' and d.function is not None and d.function.name, \
                f'first delta of index {d.index} lacks identity: {d!r}'
            seen.append(d.index)
        else:
            assert d.id is None, f'id repeated on later delta: {d!r}'
