"""Kimi K2 tool-call sections through BaseResponseParser.

Every case is checked three ways: streamed reconstruction over many chunkings
(one chunk, every split inside every marker, fixed sizes, random and
hypothesis splits, and marker-atomic "token" streams), ``parse_complete`` and
a literal expected normalized result, including the model's call ids.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import KimiK2ToolParser, ToolParserManager
from tests.streaming import (
    atomic_chunks,
    check_messages,
    chunkings,
    complete,
    fixed_chunks,
    reconstruct,
    split_at,
    stream_flagged,
    tool_deltas,
)

SB, SE = '<|tool_calls_section_begin|>', '<|tool_calls_section_end|>'
CB, AB, CE = '<|tool_call_begin|>', '<|tool_call_argument_begin|>', '<|tool_call_end|>'
TAGS = ('<think>', '</think>', SB, SE, CB, AB, CE)

Calls = list[tuple[str, str]]


def call(name: str, idx: int, args: str) -> str:
    return f'{CB}functions.{name}:{idx}{AB}{args}{CE}'


def section(*calls: str) -> str:
    return SB + ''.join(calls) + SE


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    ids: list[str]
    reasoning: str | None = None
    tool: str = 'kimi_k2'
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


TRICKY = ('{"q": "北京 😀 \\"x\\" C:\\\\ ' + CE + ' ' + SE + ' </think>", "n": [1, {"k": "}]"}], '
          '"e": "\\\\"}')
assert json.loads(TRICKY)['q'].endswith('</think>')

CASES = [
    Case('basic', '<think>The user wants weather.</think>Let me check.'
         + section(call('get_weather', 0, '{"city": "Beijing", "unit": "celsius"}')),
         'Let me check.', 'The user wants weather.',
         [('get_weather', '{"city": "Beijing", "unit": "celsius"}')], ['functions.get_weather:0'], 'default'),
    Case('several-with-unknown', 'Three.' + section(
        call('get_weather', 0, '{"city": "A"}'), '\n', call('delete_files', 1, '{"p": "/"}'),
        call('search', 2, '{"query": "q", "limit": 3}')),
        'Three.', None, [('get_weather', '{"city": "A"}'), ('search', '{"query": "q", "limit": 3}')],
        ['functions.get_weather:0', 'functions.search:2']),
    Case('empty-arguments', section(call('get_time', 0, '')), None, None, [('get_time', '{}')],
         ['functions.get_time:0']),
    Case('empty-object', section(call('get_time', 3, '{}')), None, None, [('get_time', '{}')],
         ['functions.get_time:3']),
    Case('whitespace-around', section('\n ', CB, ' functions.search:0 ', AB, '\n{"query": "x"} \n', CE, '\n'),
         None, None, [('search', '\n{"query": "x"}')], ['functions.search:0']),
    Case('whitespace-only-arguments', section(CB, 'functions.get_time:0', AB, '  ', CE),
         None, None, [('get_time', '{}')], ['functions.get_time:0']),
    Case('duplicate-keys-and-formatting', section(call('search', 0, '{ "query" : "a",\n "query":"b" }')),
         None, None, [('search', '{ "query" : "a",\n "query":"b" }')], ['functions.search:0']),
    Case('tricky-strings', section(call('search', 0, TRICKY)), None, None, [('search', TRICKY)],
         ['functions.search:0']),
    Case('scalar-arguments', section(call('search', 0, '42')), None, None, [('search', '42')],
         ['functions.search:0']),
    Case('name-without-prefix-or-counter', section(f'{CB}search{AB}{{}}{CE}', f'{CB}functions.get_time{AB}{{}}{CE}'),
         None, None, [('search', '{}'), ('get_time', '{}')], ['search', 'functions.get_time']),
    Case('text-after-section', section(call('get_time', 0, '{}')) + '\nDone.', '\nDone.', None,
         [('get_time', '{}')], ['functions.get_time:0']),
    Case('two-sections', section(call('get_time', 0, '{}')) + '\n' + section(call('search', 1, '{}')),
         None, None, [('get_time', '{}'), ('search', '{}')], ['functions.get_time:0', 'functions.search:1']),
    Case('all-unknown', 'ok ' + section(call('rm', 0, '{}')) + ' bye', 'ok  bye', None, [], []),
    Case('tool-in-reasoning', '<think>Look up.' + section(call('search', 0, '{"query": "q"}'))
         + 'found.</think>Answer.', 'Answer.', 'Look up.found.', [('search', '{"query": "q"}')],
         ['functions.search:0'], 'default'),
    Case('filtered-in-reasoning-missing-close', '<think>Hmm.' + section(call('browse', 0, '{}')) + 'more',
         None, 'Hmm.more', [], [], 'default'),
    Case('tool-choice-none', 'x' + section(call('get_time', 0, '{}')), 'x' + section(call('get_time', 0, '{}')),
         None, [], [], None, 'kimi_k2', {'tool_choice': 'none'}),
    Case('alias', section(call('get_time', 0, '{}')), None, None, [('get_time', '{}')], ['functions.get_time:0'],
         None, 'kimi-k2'),
    Case('lookalikes', 'a <|tool_calls_section and <|tool_call_begin|> <|tool_calls_section_beg',
         'a <|tool_calls_section and <|tool_call_begin|> <|tool_calls_section_beg', None, [], []),
    # malformed and truncated (documented best effort)
    Case('garbage-in-section', 'a' + section('junk <b>', call('get_time', 0, '{}'), 'more junk') + 'b',
         'ab', None, [('get_time', '{}')], ['functions.get_time:0']),
    Case('missing-argument-marker', section(f'{CB}functions.get_time:0{CE}', call('search', 1, '{}')),
         None, None, [('get_time', '{}'), ('search', '{}')], ['functions.get_time:0', 'functions.search:1']),
    Case('missing-call-end', SB + f'{CB}functions.search:0{AB}{{"query": "q"}}' + SE + 'after',
         'after', None, [('search', '{"query": "q"}')], ['functions.search:0']),
    Case('malformed-json-ends-at-marker', section(call('search', 0, '{"query": "q", "limit": 1'),
                                                  call('get_time', 1, '{}')),
         None, None, [('search', '{"query": "q", "limit": 1'), ('get_time', '{}')],
         ['functions.search:0', 'functions.get_time:1']),
    Case('empty-header', section(f'{CB}{AB}{{}}{CE}', call('get_time', 1, '{}')), None, None,
         [('get_time', '{}')], ['functions.get_time:1']),
    Case('truncated-in-arguments', 'Sure.' + SB + f'{CB}functions.get_weather:0{AB}{{"city": "Bei',
         'Sure.', None, [('get_weather', '{"city": "Bei')], ['functions.get_weather:0']),
    Case('truncated-after-argument-marker', SB + f'{CB}functions.get_time:0{AB}', None, None,
         [('get_time', '')], ['functions.get_time:0']),
    Case('truncated-in-header', 'ok' + SB + f'{CB}functions.get_wea', 'ok', None, [], []),
    Case('truncated-after-open', 'ok' + SB, 'ok', None, [], []),
    Case('truncated-before-section-end', SB + call('get_time', 0, '{}') + '<|tool_calls_sec', None, None,
         [('get_time', '{}')], ['functions.get_time:0']),
    # the header is read in place (two-byte text here): id = header stripped, name = id minus prefix and counter
    Case('header-edge-cases', '北京。' + section(
        f'{CB}\n functions.search:１２\t{AB}{{}}{CE}',  # str.isdigit digits
        f'{CB}functions.get_time:{AB}{{}}{CE}', f'{CB}get_time:0x{AB}{{}}{CE}', f'{CB}functions.{AB}{{}}{CE}',
        f'{CB}functionsXsearch:1{AB}{{}}{CE}', f'{CB}functions.functions.search:3{AB}{{}}{CE}',
        f'{CB} get_weather:1:2 {AB}{{}}{CE}', f'{CB}functions.get_weather:02{AB}{{"city": "巴黎"}}{CE}'),
         '北京。', None, [('search', '{}'), ('get_weather', '{"city": "巴黎"}')],
         ['functions.search:１２', 'functions.get_weather:02']),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _run(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> tuple[Any, list[str]]:
    parser = case.parser(make_parser)
    flagged = stream_flagged(parser, chunks, flush=flush)
    check_messages(flagged)
    ids = [c.id for c in parser.tool_parser.build_tool_calls(tool_deltas(flagged))]
    return reconstruct(parser, flagged).key(), ids


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_parse_complete(case: Case, make_parser: Any) -> None:
    parser = case.parser(make_parser)
    assert complete(parser, case.text).key() == case.expected
    _content, calls, _reasoning = case.parser(make_parser).parse_complete(case.text)
    assert [c.id for c in calls or []] == case.ids


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_chunkings(case: Case, make_parser: Any) -> None:
    for label, chunks in chunkings(case.text, TAGS):
        assert _run(case, make_parser, chunks) == (case.expected, case.ids), label


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_then_empty_final_chunk(case: Case, make_parser: Any) -> None:
    for size in (1, 5, len(case.text)):
        assert _run(case, make_parser, fixed_chunks(case.text, size), flush=True) == (case.expected, case.ids)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_every_two_way_split(case: Case, make_parser: Any) -> None:
    text = case.text
    for cut in range(1, len(text)):
        assert _run(case, make_parser, [text[:cut], text[cut:]]) == (case.expected, case.ids), cut


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_marker_atomic_streams(case: Case, make_parser: Any) -> None:
    """Kimi's markers are single special tokens: each marker one chunk, text around it in small pieces."""
    assert _run(case, make_parser, atomic_chunks(case.text, TAGS, 3)) == (case.expected, case.ids)


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '2000' if os.environ.get('LMPARSE_SLOW') else '250')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    n = len(case.text)
    cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=30), label='cuts')
    assert _run(case, make_parser, split_at(case.text, cuts)) == (case.expected, case.ids), case.id


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_streamed_arguments_match_complete(case: Case, make_parser: Any) -> None:
    expected = [args for _name, args in complete(case.parser(make_parser), case.text).calls]
    for label, chunks in chunkings(case.text, (), n_random=3):
        per: dict[int, str] = {}
        for d in tool_deltas(stream_flagged(case.parser(make_parser), chunks)):
            per[d.index] = per.get(d.index, '') + (d.function.arguments or '')
        assert [per[i] for i in sorted(per)] == expected, label
    if not any(w in case.id for w in ('truncated', 'malformed')):
        for args in expected:
            json.loads(args)


def test_identity_carries_model_id_first(make_parser: Any) -> None:
    text = section(call('get_weather', 7, '{"city": "Paris"}'))
    parser = make_parser(None, 'kimi_k2')
    seen: list[Any] = []
    for i, ch in enumerate(text):
        seen.extend(tool_deltas(parser.stream_chunk(ch, [], final=i == len(text) - 1)))
    first = seen[0]
    assert (first.index, first.id, first.type, first.function.name) == \
        (0, 'functions.get_weather:7', 'function', 'get_weather')
    assert all(d.id is None and d.function.name is None for d in seen[1:])
    assert ''.join(d.function.arguments for d in seen[1:]) == '{"city": "Paris"}'
    assert len(seen) > 3  # arguments streamed as they stabilised


def test_adjust_request_keeps_special_tokens(make_parser: Any) -> None:
    for fields in ({}, {'tool_choice': 'none'}):
        request = make_parser(None, 'kimi_k2', **fields).request
        get = request.get if isinstance(request, dict) else lambda k: getattr(request, k)
        assert get('skip_special_tokens') is False
        assert get('spaces_between_special_tokens') is False


def _reference_function_name(raw_id: str) -> str:
    name = raw_id
    prefix, separator, counter = raw_id.rpartition(':')
    if separator and counter.isdigit():
        name = prefix
    return name[10:] if name.startswith('functions.') else name


@settings(max_examples=500, deadline=None)
@given(raw_id=st.lists(st.sampled_from(['functions.', 'functions', '.', ':', '0', '7', '１', '²', 'x', '北', ' ', '😀']),
                       max_size=8).map(''.join))
def test_function_name_matches_reference(raw_id: str) -> None:
    assert KimiK2ToolParser._resolve_function_name(raw_id) == _reference_function_name(raw_id)


def test_adjust_request_does_not_mutate_input() -> None:
    from lmparse import ChatCompletionRequest
    from tests.streaming import make_request

    for request in (make_request(('search',)), ChatCompletionRequest.from_dict(make_request(('search',)))):
        before = request if isinstance(request, dict) else request.model_dump()
        adjusted = KimiK2ToolParser().adjust_request(request)
        assert adjusted is not request
        assert adjusted.skip_special_tokens is False and adjusted.spaces_between_special_tokens is False
        assert (request if isinstance(request, dict) else request.model_dump()) == before


def test_python_subclass_changes_markers() -> None:
    class Custom(KimiK2ToolParser):
        call_end = '<|end|>'
        section_end = '<|done|>'

    def feed(parser_cls: Any) -> tuple[list[Any], str]:
        parser = parser_cls()
        parser.begin_tool_block()
        deltas: list[Any] = []
        text = f'{CB}functions.x:0{AB}{{"a": 1}}<|end|><|done|>rest'
        consumed = parser.feed_tool_block(text, deltas, final=False)
        return [(d.function.name, d.function.arguments) for d in deltas], text[consumed:]

    assert feed(Custom) == ([('x', None), (None, '{"a": 1}')], 'rest')
    Custom.section_end = '<|fin|>'  # '<|done|>' no longer ends the section
    assert feed(Custom) == ([('x', None), (None, '{"a": 1}')], '')
    assert feed(KimiK2ToolParser)[1] == ''


def test_registry_and_class() -> None:
    assert ToolParserManager.get('kimi_k2') is KimiK2ToolParser
    assert ToolParserManager.get('kimi-k2') is KimiK2ToolParser
    assert KimiK2ToolParser.structural_tag_model == 'kimi'
    assert KimiK2ToolParser.get_tool_open_tag() == SB
    assert KimiK2ToolParser.get_tool_close_tag() == SE
    assert KimiK2ToolParser._resolve_function_name('functions.a.b:12') == 'a.b'
    assert KimiK2ToolParser._resolve_function_name('functions.x:y') == 'x:y'


def test_large_arguments(make_parser: Any) -> None:
    args = '{"items": [' + ', '.join('"<|tool_call_end|> %d"' % i for i in range(20000)) + ']}'
    text = section(call('search', 0, args))
    for size in (16, 256, len(text)):
        parser = make_parser(None, 'kimi_k2')
        assert reconstruct(parser, stream_flagged(parser, fixed_chunks(text, size))).calls == [('search', args)]
