"""Long held names, keys and headers (JSON envelope and Kimi sections).

While a JSON function name, an envelope key or a Kimi call header is not yet
terminated, the tool parser consumes it and holds it itself: the router's
buffer keeps at most a partial marker, so a long held token costs linear work
(issue #20 item 2). Checked here without timing: the router's ``_pending``
stays bounded after every chunk of every chunking (it grew with the held
token before), and every chunking, 1-character chunks included, gives the
one-chunk result and ``parse_complete``'s, with identity first and contiguous
indices.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.streaming import Reconstruction, chunkings, complete, fixed_chunks, reconstruct, stream

SB, SE = '<|tool_calls_section_begin|>', '<|tool_calls_section_end|>'
CB, AB, CE = '<|tool_call_begin|>', '<|tool_call_argument_begin|>', '<|tool_call_end|>'
KIMI_TAGS = (SB, SE, CB, AB, CE)
JSON_TAGS = {
    'qwen3': ('<tool_call>', '</tool_call>'),
    'internlm': ('<|action_start|><|plugin|>', '<|action_end|>'),
    'llama3': ('<|python_tag|>', ''),
}
ARG_FIELD = {'qwen3': 'arguments', 'internlm': 'parameters', 'llama3': 'parameters'}

SIZE = 50_000  # 1-character chunks
CHUNKING_SIZE = 8_000  # every chunking of tests.streaming
# The router may hold a partial tag; nothing of a held token stays in its buffer.
PENDING_BOUND = max(len(t) for t in (*KIMI_TAGS, *(t for pair in JSON_TAGS.values() for t in pair)))


def _long(seed: str, size: int) -> str:
    return (seed * (size // len(seed) + 1))[:size]


def _names(size: int) -> tuple[str, str, str]:
    """Decoded names: plain, with every escape JSON writes (\\" \\\\ \\n, \\u00e9, a
    surrogate pair for an astral character) and with raw non-Latin-1 text."""
    return ('tool_' + _long('abcdefghij', size), 'tool_' + _long('x"y\\z\n\u00e9\U0001F600 ', size),
            'tool_' + _long('名前\U0001F600é', size))


PLAIN_NAME, ESCAPED_NAME, RAW_NAME = _names(SIZE)


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    text: str
    calls: list[tuple[str, str]]
    tools: tuple[str, ...]
    tags: tuple[str, ...]

    def parser(self, make_parser: Any) -> Any:
        return make_parser(None, self.tool, request_tools=self.tools)


def _json_cases(size: int) -> list[Case]:
    plain_name, escaped_name, raw_name = _names(size)
    out = []
    for tool, (open_tag, close_tag) in JSON_TAGS.items():
        field = ARG_FIELD[tool]
        tags = tuple(t for t in (open_tag, close_tag) if t)

        def block(body: str, open_tag: str = open_tag, close_tag: str = close_tag) -> str:
            return f'{open_tag}{body}{close_tag}'

        args = '{"city": "Paris"}'
        for label, name, encoded in (
            ('plain', plain_name, json.dumps(plain_name)),
            ('escaped', escaped_name, json.dumps(escaped_name)),  # \uXXXX and surrogate pairs
            ('raw', raw_name, json.dumps(raw_name, ensure_ascii=False)),
        ):
            out.append(Case(f'{tool}-name-{label}', tool, block(f'{{"name": {encoded}, "{field}": {args}}}'),
                            [(name, args)], (name, 'get_time'), tags))
        # An undecodable escape keeps the name as written, in every chunking.
        bad = 'bad\\x' + _long('q', size)
        out.append(Case(f'{tool}-name-bad-escape', tool, block(f'{{"name": "{bad}", "{field}": {{}}}}'),
                        [(bad, '{}')], (bad,), tags))
        # Arguments before a long name: held, released after its identity.
        out.append(Case(f'{tool}-arguments-first', tool,
                        block(f'{{"{field}": {args}, "name": {json.dumps(escaped_name)}}}'),
                        [(escaped_name, args)], (escaped_name,), tags))
        # A long envelope key (not a field of the envelope) is skipped with its value.
        key = json.dumps('k\\"' + _long('key\u00e9\U0001F600', size))
        out.append(Case(f'{tool}-key', tool,
                        block(f'{{{key}: {{"x": [1, "}}"]}}, "name": "get_time", "{field}": {{}}}}'),
                        [('get_time', '{}')], ('get_time',), tags))
        # A long name never terminated: nothing is emitted.
        out.append(Case(f'{tool}-name-unterminated', tool, f'{open_tag}{{"name": "{_long("a", size)}',
                        [], ('get_time',), tags))
        out.append(Case(f'{tool}-key-unterminated', tool, f'{open_tag}{{"{_long("k", size)}', [], ('get_time',), tags))
        if close_tag:
            # A long unknown name is rejected; the next call still gets index 0.
            out.append(Case(f'{tool}-rejected-then-accepted', tool,
                            block(f'{{"name": {json.dumps(escaped_name)}, "{field}": {args}}}') + '\n'
                            + block(f'{{"name": "get_time", "{field}": {{}}}}'),
                            [('get_time', '{}')], ('get_time',), tags))
    return out


def _kimi(header: str, args: str) -> str:
    return f'{CB}{header}{AB}{args}{CE}'


def _kimi_cases(size: int) -> list[Case]:
    plain_name, _, raw_name = _names(size)
    args = '{"city": "Paris"}'
    near_miss = 'functions.' + _long('ab<|tool_call<|tool_callx<|tool_calls_section_en', size) + ':7'
    near_miss_name = near_miss[len('functions.'):-2]
    lead = _long(' \n\t', size)
    return [
        Case('kimi-header', 'kimi_k2', f'{SB}{_kimi(f"functions.{plain_name}:0", args)}{SE}',
             [(plain_name, args)], (plain_name,), KIMI_TAGS),
        Case('kimi-header-raw', 'kimi_k2', f'{SB}{_kimi(f"  functions.{raw_name}:12 ", args)}{SE}',
             [(raw_name, args)], (raw_name,), KIMI_TAGS),
        # Marker fragments inside the header are data.
        Case('kimi-header-near-miss', 'kimi_k2', f'{SB}{_kimi(near_miss, args)}{SE}',
             [(near_miss_name, args)], (near_miss_name,), KIMI_TAGS),
        Case('kimi-header-unterminated', 'kimi_k2', f'{SB}{CB}functions.{plain_name}', [], (plain_name,), KIMI_TAGS),
        Case('kimi-rejected-then-accepted', 'kimi_k2',
             f'{SB}{_kimi(f"functions.{plain_name}:0", args)}{_kimi("functions.get_time:1", "{}")}{SE}',
             [('get_time', '{}')], ('get_time',), KIMI_TAGS),
        # A long whitespace run before the value is held, then forwarded with it.
        Case('kimi-lead-space', 'kimi_k2', f'{SB}{_kimi("functions.get_time:0", lead + args)}{SE}',
             [('get_time', lead + args)], ('get_time',), KIMI_TAGS),
        Case('kimi-space-only-arguments', 'kimi_k2', f'{SB}{_kimi("functions.get_time:0", lead)}{SE}',
             [('get_time', '{}')], ('get_time',), KIMI_TAGS),
    ]


CASES = _json_cases(SIZE) + _kimi_cases(SIZE)
CHUNKING_CASES = _json_cases(CHUNKING_SIZE) + _kimi_cases(CHUNKING_SIZE)


def stream_bounded(parser: Any, chunks: list[str]) -> Reconstruction:
    """Stream ``chunks`` (the last final), asserting after each that the router's buffer stays bounded."""
    flagged: list[Any] = []
    for i, chunk in enumerate(chunks):
        flagged.extend(parser.stream_chunk(chunk, [], final=i == len(chunks) - 1))
        assert len(parser._pending) <= PENDING_BOUND, \
            f'router buffer holds {len(parser._pending)} characters after chunk {i}'
    return reconstruct(parser, flagged)


@pytest.mark.parametrize('case', CASES, ids=lambda c: c.id)
def test_one_char_chunks_equal_one_chunk(case: Case, make_parser: Any) -> None:
    one = stream(case.parser(make_parser), [case.text])
    assert (one.content, one.reasoning, one.calls) == (None, None, case.calls)
    assert complete(case.parser(make_parser), case.text).key() == one.key()
    assert stream_bounded(case.parser(make_parser), fixed_chunks(case.text, 1)).key() == one.key()


@pytest.mark.parametrize('case', CHUNKING_CASES, ids=lambda c: c.id)
def test_router_buffer_stays_bounded_in_every_chunking(case: Case, make_parser: Any) -> None:
    expected = (None, None, case.calls)
    for label, chunks in chunkings(case.text, case.tags, n_random=2):
        got = stream_bounded(case.parser(make_parser), chunks)
        assert got.key() == expected, label


def test_kimi_held_header_is_the_call_id(make_parser: Any) -> None:
    header = f'functions.{RAW_NAME}:3'
    text = f'{SB}{_kimi(" " + header + " ", "{}")}{SE}'
    for chunks in ([text], fixed_chunks(text, 1), fixed_chunks(text, 7)):
        parser = make_parser(None, 'kimi_k2', request_tools=(RAW_NAME,))
        flagged = []
        for i, chunk in enumerate(chunks):
            flagged.extend(parser.stream_chunk(chunk, [], final=i == len(chunks) - 1))
        deltas = [d for m, _ in flagged for d in (m.tool_calls or [])]
        assert deltas[0].id == header and deltas[0].function.name == RAW_NAME


@pytest.mark.parametrize('tool', sorted(JSON_TAGS))
def test_held_name_is_released_at_its_closing_quote(tool: str, make_parser: Any) -> None:
    # The name is consumed as it arrives but shown only once it ends, and then at once.
    open_tag, _ = JSON_TAGS[tool]
    name = ESCAPED_NAME[:2000]
    head = f'{open_tag}{{"name": {json.dumps(name)}'
    parser = make_parser(None, tool, request_tools=(name,))
    for i, ch in enumerate(head):
        out = parser.stream_chunk(ch, [])
        deltas = [d for m, _ in out for d in (m.tool_calls or [])]
        if i < len(head) - 1:
            assert not deltas, i
        else:
            assert [(d.index, d.function.name) for d in deltas] == [(0, name)] and deltas[0].id
        assert len(parser._pending) <= PENDING_BOUND
