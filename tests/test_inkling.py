"""Inkling typed message blocks through BaseResponseParser (``inkling`` tool and reasoning parsers).

Syntax of vLLM 0.33's ``vllm/parser/inkling.py`` and SGLang 0.5.23's
``inkling_detector.py``: the prompt ends with ``<|message_model|>``; blocks are
``[<|message_model|>[NAME]]<|content_KIND|>BODY<|end_message|>``. No Inkling
tokenizer is on PyPI, so besides every character chunking each special token
is also streamed as one chunk.

Every case is checked by its streamed reconstruction over many chunkings,
``parse_complete`` and a literal expected result.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import InklingReasoningParser, InklingToolParser, ReasoningParserManager, ToolParserManager
from tests import catalogue
from tests.streaming import atomic_chunks, case_checks, run_case, split_at, tool_deltas

MM, TEXT, THINK = '<|message_model|>', '<|content_text|>', '<|content_thinking|>'
TOOL, TOOL_TEXT, ERR = '<|content_invoke_tool_json|>', '<|content_invoke_tool_text|>', '<|content_tool_error|>'
END, STOP = '<|end_message|>', '<|content_model_end_sampling|>'
SPECIAL = (MM, TEXT, THINK, TOOL, TOOL_TEXT, ERR, END, STOP)


def call(name: str, args: str, header: str | None = None) -> str:
    """One tool block after a ``<|message_model|>`` (the header names the function unless told otherwise)."""
    head = name if header is None else header
    return f'{MM}{head}{TOOL}{{"name": "{name}", "args": {args}}}{END}'


def answer(text: str) -> str:
    return f'{MM}{TEXT}{text}{END}'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'inkling'
    tool: str | None = 'inkling'


PARIS = '{"city": "Paris"}'
LONG_HEADER = 'h' * 300

CASES = [
    Case('think-then-call', f'{THINK}Need the weather.{END}' + call('get_weather', PARIS), None, 'Need the weather.',
         [('get_weather', PARIS)]),
    Case('think-then-answer', f'{THINK}Easy.{END}' + answer('It is 4.'), 'It is 4.', 'Easy.', []),
    Case('answer-first', f'{TEXT}Hello!{END}', 'Hello!', None, []),
    Case('call-first-with-header', 'get_time' + TOOL + '{"name": "get_time", "args": {}}' + END + answer('Done.'),
         'Done.', None, [('get_time', '{}')]),
    Case('call-without-header-name', f'{THINK}x{END}' + call('search', '{"query": "a <b>", "limit": 3}', header=''),
         None, 'x', [('search', '{"query": "a <b>", "limit": 3}')]),
    Case('blocks-in-any-order', f'{THINK}a{END}' + answer('Checking. ') + call('get_time', '{}')
         + f'{MM}{THINK}b{END}' + answer('It is noon.'), 'Checking. It is noon.', 'ab', [('get_time', '{}')]),
    Case('two-calls-unknown-dropped', call('get_weather', PARIS) + call('rm_rf', '{"p": "/"}') + call('get_time', '{}'),
         None, None, [('get_weather', PARIS), ('get_time', '{}')]),
    Case('arguments-alias', f'{MM}{TOOL}{{"name": "get_time", "arguments": {{"tz": "UTC"}}}}{END}', None, None,
         [('get_time', '{"tz": "UTC"}')]),
    Case('end-sampling', f'{THINK}t{END}{MM}{TEXT}bye{STOP}', 'bye', 't', []),
    Case('text-tool-block-is-text', f'{MM}{TOOL_TEXT}run ls{END}', 'run ls', None, []),
    Case('tool-error-block-is-text', f'{MM}{ERR}boom{END}', 'boom', None, []),
    Case('no-markers-is-text', 'Just text.', 'Just text.', None, []),
    Case('header-without-kind-is-text', f'{THINK}a{END}{MM}oops{END}', 'oops', 'a', []),
    Case('long-header-is-text', f'{MM}{LONG_HEADER}{TEXT}x{END}', LONG_HEADER + 'x', None, []),
    Case('lookalikes', f'{TEXT}a <|message_mod b <|content_thin c {END[:-2]} d{END}',
         f'a <|message_mod b <|content_thin c {END[:-2]} d', None, []),
    # a thinking block left open stays open across a tool block (the router's contract; vLLM ends it there)
    Case('tool-in-open-reasoning', f'{THINK}Look up.' + call('get_time', '{}', header='') + answer('ok'),
         None, 'Look up.ok', [('get_time', '{}')]),
    Case('truncated-in-arguments', f'{THINK}x{END}{MM}get_weather{TOOL}{{"name": "get_weather", "args": {{"city": "Pa',
         None, 'x', [('get_weather', '{"city": "Pa')]),
    Case('truncated-in-header', f'{THINK}x{END}{MM}get_wea', 'get_wea', 'x', []),
    # tools off: the block's JSON and kind marker are text; the header and framing markers are not
    Case('tool-choice-none', call('get_time', '{}'), TOOL + '{"name": "get_time", "args": {}}', None, [],
         request={'tool_choice': 'none'}),
    Case('reasoning-parser-alone', f'{THINK}x{END}' + answer('y'), 'y', 'x', [], tool=None),
    # Alone, the thinking block's text is content and its marker framing (SGLang shows it so; vLLM drops it).
    Case('tool-parser-alone', f'{THINK}x{END}' + call('get_time', '{}'), 'x', None, [('get_time', '{}')],
         reasoning=None),
    Case('tool-parser-alone-text', f'{THINK}x{END}' + answer('y'), 'xy', None, [], reasoning=None),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, SPECIAL)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_special_token_atomic_streams(case: Case, make_parser: Any) -> None:
    """Each special token one chunk, the text around them in small pieces."""
    for size in (1, 3):
        assert run_case(case.parser(make_parser), atomic_chunks(case.text, SPECIAL, size)) == case.expected


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '2000' if os.environ.get('LMPARSE_SLOW') else '200')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    cuts = data.draw(st.lists(st.integers(1, max(1, len(case.text) - 1)), max_size=30), label='cuts')
    assert run_case(case.parser(make_parser), split_at(case.text, cuts)) == case.expected, case.id


def test_identity_first_and_arguments_streamed(make_parser: Any) -> None:
    text = f'{THINK}x{END}' + call('search', '{"query": "a long query value"}')
    parser = make_parser('inkling', 'inkling')
    seen: list[Any] = []
    for i, ch in enumerate(text):
        seen.extend(tool_deltas(parser.stream_chunk(ch, [], final=i == len(text) - 1)))
    assert (seen[0].index, seen[0].type, seen[0].function.name) == (0, 'function', 'search')
    assert all(d.id is None and d.function.name is None for d in seen[1:])
    assert ''.join(d.function.arguments for d in seen[1:]) == '{"query": "a long query value"}'
    assert len(seen) > 5


def test_registry_and_declarations(make_parser: Any) -> None:
    assert ToolParserManager.get('inkling') is InklingToolParser
    assert ReasoningParserManager.get('inkling') is InklingReasoningParser
    assert InklingReasoningParser().starts_in_reasoning_mode() is False
    assert InklingToolParser.get_tool_open_tag() == TOOL
    assert InklingToolParser.get_tool_close_tag() == END
    request = make_parser(None, 'inkling').request
    get = request.get if isinstance(request, dict) else lambda k: getattr(request, k)
    assert get('skip_special_tokens') is False


def test_header_declarations_are_checked() -> None:
    """A header marker must be a content marker, and headers need their end markers."""
    from lmparse import BaseResponseParser

    class NoEnds(InklingReasoningParser):
        header_ends = ()

    class NotAMarker(InklingReasoningParser):
        header_markers = ('<|other|>',)

    for cls in (NoEnds, NotAMarker):
        parser_cls = BaseResponseParser.with_parsers(None, None)
        parser_cls.reasoning_parser_cls = cls
        with pytest.raises(TypeError, match='header'):
            parser_cls({'model': 'm', 'messages': []})
