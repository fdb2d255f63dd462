"""Shared helpers: chunkings of a raw output and reconstruction of streamed deltas."""
from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
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


def with_empty_chunks(chunks: list[str], rng: random.Random) -> list[str]:
    """``chunks`` with 0-2 empty chunks before each one and at the end."""
    out: list[str] = []
    for c in chunks:
        out.extend([''] * rng.randint(0, 2))
        out.append(c)
    return out + [''] * rng.randint(0, 2)


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
    flagged = []
    for i, chunk in enumerate(chunks):
        flagged.extend(parser.stream_chunk(chunk, [], final=i == len(chunks) - 1))
    return reconstruct(parser, flagged)


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


# ---- additions for the dialect / router suites ---------------------------------


def atomic_chunks(text: str, markers: Iterable[str], size: int) -> list[str]:
    """Chunks as a tokenizer with special-token markers gives them: each marker whole, the text
    around it in ``size``-character pieces."""
    pattern = '(' + '|'.join(re.escape(m) for m in sorted(set(markers), key=len, reverse=True)) + ')'
    units: list[str] = []
    for i, piece in enumerate(re.split(pattern, text)):
        units.extend([piece] if i % 2 else fixed_chunks(piece, size) if piece else [])
    assert ''.join(units) == text
    return units or ['']


def split_at(text: str, cuts: Iterable[int]) -> list[str]:
    """Chunks of ``text`` cut at the given offsets (deduplicated, sorted, 0 < cut < len)."""
    points = sorted({c for c in cuts if 0 < c < len(text)})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])] or ['']


def stream_flagged(parser: Any, chunks: Sequence[Any], flush: bool = False) -> list[tuple[Any, bool]]:
    """Feed chunks and return every ``(DeltaMessage, tool_emitted)`` in order.

    A chunk is a str or a ``(text, token_ids)`` pair. The last chunk is final,
    unless ``flush`` is set: then every chunk is non-final and an empty final
    chunk follows (the shape of an engine's last, text-less step).
    """
    out: list[tuple[Any, bool]] = []
    for i, chunk in enumerate(chunks):
        text, ids = (chunk, []) if isinstance(chunk, str) else chunk
        out.extend(parser.stream_chunk(text, ids, final=not flush and i == len(chunks) - 1))
    if flush:
        out.extend(parser.stream_chunk('', [], final=True))
    return out


def check_messages(flagged: Sequence[tuple[Any, bool]]) -> None:
    """Each streamed message carries exactly one non-empty channel; the flag marks tool deltas."""
    for message, emitted in flagged:
        channels = [name for name in ('content', 'reasoning_content', 'tool_calls')
                    if getattr(message, name) is not None]
        assert len(channels) == 1, f'message mixes channels {channels}: {message!r}'
        assert getattr(message, channels[0]), f'empty {channels[0]} fragment: {message!r}'
        assert message.role == 'assistant', message
        assert emitted is (channels[0] == 'tool_calls'), f'tool_emitted={emitted} for {message!r}'


def reconstruct(parser: Any, flagged: Sequence[tuple[Any, bool]]) -> Reconstruction:
    """Rebuild content, reasoning and calls from ``stream_flagged`` output."""
    messages = [m for m, _ in flagged]
    content = ''.join(m.content or '' for m in messages)
    reasoning = ''.join(m.reasoning_content or '' for m in messages)
    deltas = [d for m in messages for d in (m.tool_calls or [])]
    check_identity_first(deltas)
    calls = calls_of(parser.tool_parser.build_tool_calls(deltas)) if parser.tool_parser is not None else []
    return Reconstruction(content or None, reasoning or None, calls, messages)


def tool_deltas(flagged: Sequence[tuple[Any, bool]]) -> list[Any]:
    return [d for m, _ in flagged for d in (m.tool_calls or [])]


def token_chunks(tokenizer: Any, text: str) -> list[tuple[str, list[int]]]:
    """Token-by-token engine chunks: ``(new text, [token ids])``.

    The text of a step is the growth of the decoded prefix, so multi-byte
    characters split over tokens arrive whole; a token whose prefix decodes
    to a partial character yields an empty-text step that carries its id.
    """
    ids = tokenizer.encode(text)
    chunks: list[tuple[str, list[int]]] = []
    shown = ''
    for i in range(1, len(ids) + 1):
        decoded = tokenizer.decode(ids[:i])
        if decoded.endswith('\ufffd') and i < len(ids):
            chunks.append(('', [ids[i - 1]]))
            continue
        assert decoded.startswith(shown), (shown, decoded)
        chunks.append((decoded[len(shown):], [ids[i - 1]]))
        shown = decoded
    assert shown == text, 'tokenizer does not round-trip this text'
    return chunks


# ---- requests and a vocabulary-only tokenizer ------------------------------------

# Function tools offered by default in test requests.
DEFAULT_TOOL_NAMES = ('get_weather', 'get_time', 'search')

_SCHEMAS: dict[str, dict[str, Any]] = {
    'get_weather': {
        'type': 'object',
        'properties': {'city': {'type': 'string'}, 'unit': {'type': 'string', 'enum': ['celsius', 'fahrenheit']}},
        'required': ['city'],
    },
    'get_time': {'type': 'object', 'properties': {}},
    'search': {'type': 'object', 'properties': {'query': {'type': 'string'}, 'limit': {'type': 'integer'}}},
}


def tool(name: str) -> dict[str, Any]:
    """One OpenAI function tool."""
    return {
        'type': 'function',
        'function': {
            'name': name,
            'description': f'The {name} tool.',
            'parameters': _SCHEMAS.get(name, {'type': 'object', 'properties': {}}),
        },
    }


def make_request(tool_names: Any = DEFAULT_TOOL_NAMES, **fields: Any) -> dict[str, Any]:
    """A plain-dict chat request; ``tool_names=None`` sends no tools."""
    request: dict[str, Any] = {
        'model': 'test-model',
        'messages': [{'role': 'user', 'content': 'What is the weather in Beijing?'}],
    }
    if tool_names is not None:
        request['tools'] = [tool(n) for n in tool_names]
    request.update(fields)
    return request


class FakeTokenizer:
    """Just enough tokenizer for reasoning-token accounting: a vocabulary."""

    def __init__(self, vocab: dict[str, int]) -> None:
        self._vocab = dict(vocab)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)


def run_case(parser: Any, chunks: Sequence[Any], flush: bool = False) -> tuple[Any, Any, Any]:
    """Stream ``chunks`` through ``parser``, check the messages, return (content, reasoning, calls)."""
    flagged = stream_flagged(parser, chunks, flush=flush)
    check_messages(flagged)
    return reconstruct(parser, flagged).key()


def case_checks(cases: Sequence[Any], tags: Sequence[str],
                parser_of: Callable[[Any, Any], Any] | None = None) -> tuple[Callable[..., None], ...]:
    """The four checks every dialect case runs, as test functions for a module to bind.

    Each case has ``id``, ``text``, ``expected`` and ``parser(make_parser)``
    (or ``parser_of(case, make_parser)``): ``parse_complete``; every chunking
    (one chunk, every split inside every tag, fixed and random sizes); fixed
    sizes then an empty final chunk; every two-way split. Bind them with
    ``(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
    test_every_two_way_split) = case_checks(CASES, TAGS)``.
    """
    import pytest

    make = parser_of or (lambda case, make_parser: case.parser(make_parser))
    each_case = pytest.mark.parametrize('case', list(cases), ids=[c.id for c in cases])

    @each_case
    def test_parse_complete(case: Any, make_parser: Any) -> None:
        assert complete(make(case, make_parser), case.text).key() == case.expected

    @each_case
    def test_stream_chunkings(case: Any, make_parser: Any) -> None:
        for label, chunks in chunkings(case.text, tags):
            assert run_case(make(case, make_parser), chunks) == case.expected, label

    @each_case
    def test_stream_then_empty_final_chunk(case: Any, make_parser: Any) -> None:
        for size in (1, 5, len(case.text)):
            assert run_case(make(case, make_parser), fixed_chunks(case.text, size), flush=True) == case.expected, size

    @each_case
    def test_every_two_way_split(case: Any, make_parser: Any) -> None:
        text = case.text
        for cut in range(1, len(text)):
            assert run_case(make(case, make_parser), [text[:cut], text[cut:]]) == case.expected, cut

    return test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split
