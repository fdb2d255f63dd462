"""FunctionGemma (google/functiongemma-270m-it) tool calls through BaseResponseParser.

Syntax of Google's FunctionGemma guide and chat template:
``<start_function_call>call:NAME{key:<escape>text<escape>,n:3}<end_function_call>``,
strings between ``<escape>`` tokens, parallel calls as consecutive blocks.
Every case is checked against a literal result over every chunking (see
``tests/catalogue.py``); the markers are special tokens of the Gemma 3
tokenizer, which is not on PyPI, so the atomic streams keep each one whole.
"""
from __future__ import annotations

from typing import Any

from lmparse import FunctionGemmaToolParser, ToolParserManager
from tests.catalogue import Case, dialect_suite, request_field
from tests.streaming import stream_flagged, tool_deltas

SO, EO, ESC = '<start_function_call>', '<end_function_call>', '<escape>'
SPECIAL = (SO, EO, ESC, '<start_function_response>')
TAGS = (*SPECIAL, 'call:')


def call(name: str, body: str = '') -> str:
    return f'{SO}call:{name}{{{body}}}{EO}'


def s(text: str) -> str:
    return f'{ESC}{text}{ESC}'


def case(id: str, text: str, content: str | None, calls: list[tuple[str, str]], **request: Any) -> Case:
    return Case(id, text, content, None, calls, None, 'functiongemma', request)


CASES = [
    case('basic', 'Sure.' + call('get_weather', f'city:{s("Paris")},days:3'), 'Sure.',
         [('get_weather', '{"city": "Paris", "days": 3}')]),
    case('only-call', call('get_time'), None, [('get_time', '{}')]),
    case('parallel', call('get_weather', f'city:{s("Tokyo")}') + call('search', f'limit:2,query:{s("GOOG")}'), None,
         [('get_weather', '{"city": "Tokyo"}'), ('search', '{"limit": 2, "query": "GOOG"}')]),
    case('escape-protects-syntax', call('search', 'query:' + s('a{b}, c:d "q" [x]')), None,
         [('search', '{"query": "a{b}, c:d \\"q\\" [x]"}')]),
    case('nested-values', call('search', f'filters:{{lang:{s("en")},safe:true}},tags:[{s("a")},{s("b")}],x:-1.5'),
         None, [('search', '{"filters": {"lang": "en", "safe": true}, "tags": ["a", "b"], "x": -1.5}')]),
    case('unicode-and-newlines', call('search', 'query:' + s('北京 天气\nline 2 😀')), None,
         [('search', '{"query": "北京 天气\\nline 2 😀"}')]),
    case('unknown-tool-dropped', call('rm_rf', f'path:{s("/")}') + call('get_time'), None, [('get_time', '{}')]),
    case('text-after-block', call('get_time') + '\nDone.', '\nDone.', [('get_time', '{}')]),
    case('lookalikes-are-text', 'a <start_function b <end_function_call c call:x{}', 'a <start_function b '
         '<end_function_call c call:x{}', []),
    case('tool-choice-none', 'ok' + call('get_time'), 'ok' + call('get_time'), [], tool_choice='none'),
    # truncated / malformed (best effort, the same for every chunking)
    case('truncated-in-string', call('search', f'query:{s("abc")}')[:-len(EO) - 1 - len(ESC)], None,
         [('search', '{"query": "abc"}')]),
    case('truncated-after-open', 'ok' + SO, 'ok', []),
    case('missing-close-tag', f'{SO}call:get_time{{}}', None, [('get_time', '{}')]),
    case('truncated-bare-value-dropped', f'{SO}call:search{{query:{s("q")},limit:1', None,
         [('search', '{"query": "q"}')]),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered_and_declared() -> None:
    assert ToolParserManager.get('functiongemma') is FunctionGemmaToolParser
    assert (FunctionGemmaToolParser.tool_open_tag, FunctionGemmaToolParser.tool_close_tag,
            FunctionGemmaToolParser.string_delimiter) == (SO, EO, ESC)


def test_keeps_special_tokens_only_when_calls_are_parsed(make_parser: Any) -> None:
    # vLLM's adjust_request: the markers are kept only with tools and tool_choice != "none";
    # otherwise the default skip drops them instead of leaking them as text.
    assert request_field(make_parser(None, 'functiongemma'), 'skip_special_tokens') is False
    assert request_field(make_parser(None, 'functiongemma', tool_choice='none'), 'skip_special_tokens') is not False
    assert request_field(make_parser(None, 'functiongemma', request_tools=None), 'skip_special_tokens') is not False


def test_identity_first_and_strings_streamed(make_parser: Any) -> None:
    text = call('search', f'query:{s("a long query value")}')
    parser = make_parser(None, 'functiongemma')
    deltas = tool_deltas(stream_flagged(parser, list(text)))
    first = deltas[0]
    assert first.function.name == 'search' and first.id
    fragments = [d.function.arguments for d in deltas[1:] if d.function.arguments]
    assert len(fragments) > 5  # the string arrives piece by piece
    assert ''.join(fragments) == '{"query": "a long query value"}'


def test_required_tool_choice_is_refused(make_parser: Any) -> None:
    import pytest
    with pytest.raises(ValueError, match='does not support'):
        make_parser(None, 'functiongemma', tool_choice='required')
