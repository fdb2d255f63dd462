"""Pythonic call heads with the name filter opened (``_allowed_tool_names = None``).

The replay server and the vLLM integration's replace mode open the filter (vLLM's parsers keep calls to
tools the request does not declare). The pythonic head then takes any identifier of at most 256
characters followed by ``(``; with the filter closed (no tools offered: an empty set) nothing changes.
"""
from __future__ import annotations

import random
from typing import Any

import pytest

import lmparse
from tests.streaming import chunkings, complete, make_request, random_chunks, stream

OPEN, CLOSE = '<function_calls>', '</function_calls>'
TEXT = f"Checking.{OPEN}get_weather(city='Paris', note='f(x) </function_calls> [a(b)]')\nlookup(q=1){CLOSE}"
EXPECTED_CALLS = [('get_weather', '{"city": "Paris", "note": "f(x) </function_calls> [a(b)]"}'),
                  ('lookup', '{"q": 1}')]


def parser(tools: Any = None, open_names: bool = True) -> Any:
    cls = lmparse.BaseResponseParser.with_parsers(None, 'olmo3')
    p = cls(make_request(tools))
    if open_names:
        p.tool_parser._allowed_tool_names = None
    return p


@pytest.mark.parametrize('label,chunks', list(chunkings(TEXT, (OPEN, CLOSE, "get_weather(", 'lookup('))))
def test_any_name_every_chunking(label: str, chunks: list[str]) -> None:
    got = stream(parser(), chunks)
    assert (got.content, got.calls) == ('Checking.', EXPECTED_CALLS), label


def test_any_name_complete_and_empty_chunks() -> None:
    got = complete(parser(), TEXT)
    assert (got.content, got.calls) == ('Checking.', EXPECTED_CALLS)
    rng = random.Random(7)
    for _ in range(20):
        chunks = [c for piece in random_chunks(TEXT, rng) for c in (piece, '')]
        got = stream(parser(), chunks)
        assert (got.content, got.calls) == ('Checking.', EXPECTED_CALLS)


def test_filter_closed_without_tools_is_unchanged() -> None:
    got = complete(parser(open_names=False), TEXT)
    assert got.calls == [] and got.content == TEXT


def test_offered_names_still_filter() -> None:
    got = complete(parser(tools=['lookup'], open_names=False), f'{OPEN}lookup(q=1){CLOSE}')
    assert got.calls == [('lookup', '{"q": 1}')]


@pytest.mark.parametrize('name,is_call', [('a' * 256, True), ('a' * 257, False)])
def test_open_name_bound(name: str, is_call: bool) -> None:
    text = f'{OPEN}{name}(x=1){CLOSE}'
    for _, chunks in chunkings(text, (OPEN, CLOSE), n_random=3):
        got = stream(parser(), chunks)
        if is_call:
            assert got.calls == [(name, '{"x": 1}')]
        else:
            assert got.calls == [] and got.content == text


def test_not_a_call_is_text() -> None:
    text = f'{OPEN}just words here{CLOSE} tail'
    for _, chunks in chunkings(text, (OPEN, CLOSE), n_random=3):
        got = stream(parser(), chunks)
        assert got.calls == [] and got.content == text
