"""Gemma 4 tool calls and thinking channel through BaseResponseParser.

The outputs are written in the chat template's own syntax: ``render_call``
reproduces google/gemma-4's ``<|tool_call>call:NAME{...}<tool_call|>``
rendering (keys sorted and bare, values by its ``format_argument`` macro), and
the expected arguments are ``json.dumps`` of the same Python values. Every case
is checked three ways: streamed reconstruction over many chunkings (one chunk,
every split inside every marker, fixed and random sizes, hypothesis splits,
marker-atomic "token" streams, an empty final chunk), ``parse_complete`` and
the literal expected result.

No Gemma tokenizer is installable from PyPI for offline use (the ``gemma``
package downloads its vocabulary at run time), so real token streams are
approximated by marker-atomic chunkings: every marker is a special token.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import BaseResponseParser, Gemma4ReasoningParser, Gemma4ToolParser
from lmparse import ReasoningParserManager, ToolParserManager
from tests import catalogue
from tests.streaming import (
    FakeTokenizer,
    atomic_chunks,
    case_checks,
    fixed_chunks,
    make_request,
    reconstruct,
    run_case,
    split_at,
    stream_flagged,
    tool_deltas,
)

TC, TE, Q = '<|tool_call>', '<tool_call|>', '<|"|>'
CH, CE = '<|channel>', '<channel|>'
THOUGHT = CH + 'thought\n'
TAGS = (TC, TE, Q, CH, CE, THOUGHT)


def fmt(value: Any) -> str:
    """The template's ``format_argument(value, escape_keys=False)``."""
    if isinstance(value, str):
        return Q + value + Q
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, dict):
        return '{' + ','.join(f'{k}:{fmt(v)}' for k, v in sorted(value.items())) + '}'
    if isinstance(value, list):
        return '[' + ','.join(fmt(v) for v in value) + ']'
    if value is None:
        return 'null'
    return str(value)


def render_call(name: str, arguments: dict[str, Any]) -> str:
    return f'{TC}call:{name}{fmt(arguments)}{TE}'


def js(arguments: dict[str, Any]) -> str:
    """The arguments lmparse emits: json.dumps of the rendered (key-sorted) object."""
    def ordered(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: ordered(v[k]) for k in sorted(v)}
        if isinstance(v, list):
            return [ordered(x) for x in v]
        return v
    return json.dumps(ordered(arguments), ensure_ascii=False)


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'gemma4'
    tool: str | None = 'gemma4'


WEATHER = {'city': 'Beijing', 'unit': 'celsius'}
TYPED = {'query': 'x', 'limit': 3, 'ratio': -0.25, 'big': 1e-05, 'exact': True, 'fuzzy': False, 'none': None,
         'filters': {'lang': 'en', 'years': [2023, 2024], 'deep': {'a': [{'b': 'c'}, [], {}]}}, 'tags': []}
TRICKY = 'He said "hi" \\ C:\\path\n\ttab {a:1}, [x] : <b> < | 北京 😀 \u2028 <tool_call <|"| |>'

CASES = [
    Case('thinking-then-call', THOUGHT + 'The user wants weather.' + CE + render_call('get_weather', WEATHER),
         None, 'The user wants weather.', [('get_weather', js(WEATHER))]),
    Case('content-then-calls-with-unknown', 'Let me check.' + render_call('get_weather', {'city': 'A'})
         + render_call('delete_files', {'path': '/'}) + render_call('search', {'query': 'q', 'limit': 3}),
         'Let me check.', None, [('get_weather', js({'city': 'A'})), ('search', js({'query': 'q', 'limit': 3}))]),
    Case('typed-values', render_call('search', TYPED), None, None, [('search', js(TYPED))]),
    Case('tricky-string', render_call('search', {'query': TRICKY}), None, None, [('search', js({'query': TRICKY}))]),
    Case('bare-opener', f'{TC}:search{{query:{Q}x{Q}}}{TE}', None, None, [('search', '{"query": "x"}')]),
    Case('no-arguments', f'{TC}call:get_time{{}}{TE}', None, None, [('get_time', '{}')]),
    Case('header-without-brace', f'{TC}call:get_time{TE}', None, None, [('get_time', '{}')]),
    Case('quoted-keys-and-whitespace', f'{TC} call: search {{ {Q}query{Q} : {Q}a b{Q} ,\n limit : 3 ,}}\n{TE}',
         None, None, [('search', '{"query": "a b", "limit": 3}')]),
    Case('duplicate-keys-kept', f'{TC}call:search{{query:{Q}a{Q},query:{Q}b{Q}}}{TE}', None, None,
         [('search', '{"query": "a", "query": "b"}')]),
    Case('text-after-calls', render_call('get_time', {}) + '\n' + render_call('search', {'query': 'q'}) + '\nDone.',
         '\nDone.', None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
    Case('call-inside-thinking', THOUGHT + 'Look up.' + render_call('search', {'query': 'q'}) + 'found.' + CE
         + 'Answer.', 'Answer.', 'Look up.found.', [('search', '{"query": "q"}')]),
    Case('empty-thought', THOUGHT + CE + 'Hi.', 'Hi.', None, []),
    Case('thinking-off-channel-is-content', THOUGHT + 'hmm' + CE + 'Hi.', 'hmmHi.', None, [],
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('thinking-on-starts-in-content', 'Direct answer.', 'Direct answer.', None, [],
         request={'chat_template_kwargs': {'enable_thinking': True}}),
    Case('no-reasoning-parser', THOUGHT + 'x' + CE + 'y', THOUGHT + 'x' + CE + 'y', None, [], reasoning=None),
    Case('two-calls-one-block', f'{TC}call:get_time{{}}call:search{{query:{Q}q{Q}}}{TE}', None, None,
         [('get_time', '{}'), ('search', '{"query": "q"}')]),
    Case('all-unknown', 'ok ' + render_call('rm', {'p': '/'}) + ' bye', 'ok  bye', None, []),
    Case('tool-choice-none', 'x' + render_call('get_time', {}), 'x' + render_call('get_time', {}), None, [],
         request={'tool_choice': 'none'}),
    Case('lookalikes', f'a <|tool_cal and {CH}thoughts {TE} <|"|> <channel|',
         f'a <|tool_cal and {CH}thoughts {TE} <|"|> <channel|', None, [], reasoning=None),
    # malformed and truncated (documented best effort)
    Case('bad-literals-are-strings', f'{TC}call:search{{a:tru,b:1.,c:+3,d:None,e:007,f:1e5,g:-0}}{TE}', None, None,
         [('search', '{"a": "tru", "b": "1.", "c": "+3", "d": "None", "e": "007", "f": 1e5, "g": -0}')]),
    Case('empty-values-dropped', f'{TC}call:search{{a:,b:1,c:}}{TE}', None, None, [('search', '{"b": 1}')]),
    Case('key-without-colon-dropped', f'{TC}call:search{{oops,b:[1,,2]}}{TE}', None, None,
         [('search', '{"b": [1, 2]}')]),
    Case('missing-commas', f'{TC}call:search{{a:{Q}x{Q}b:{Q}y{Q} c:[1 2]}}{TE}', None, None,
         [('search', '{"a": "x", "b": "y", "c": ["1 2"]}')]),
    # a close tag inside a string ends the call only when the next open tag or the end of the output follows it
    Case('unterminated-string-at-close', f'{TC}call:get_weather{{city:{Q}Paris{TE}', None, None,
         [('get_weather', '{"city": "Paris"}')]),
    Case('unterminated-string-close-then-call', f'{TC}call:get_weather{{city:{Q}Paris{TE}\n{TC}call:get_time{{}}{TE}',
         None, None, [('get_weather', '{"city": "Paris"}'), ('get_time', '{}')]),
    Case('close-tag-then-text-in-string', f'{TC}call:get_weather{{city:{Q}Paris{TE}after', None, None,
         [('get_weather', '{"city": "Paris<tool_call|>after"}')]),
    Case('missing-brace-at-close', f'{TC}call:search{{limit:3{TE}after', 'after', None,
         [('search', '{"limit": 3}')]),
    Case('missing-close-tag-text-after', f'{TC}call:search{{limit:3}}\nDone.', '\nDone.', None,
         [('search', '{"limit": 3}')]),
    Case('missing-close-tag-next-call', f'{TC}call:search{{limit:3}}{TC}call:get_time{{}}{TE}', None, None,
         [('search', '{"limit": 3}'), ('get_time', '{}')]),
    # an open tag inside a string is text (a value quoting a call)
    Case('next-open-inside-string', f'{TC}call:search{{query:{Q}ab{TC}call:get_time{{}}{TE}', None, None,
         [('search', '{"query": "ab<|tool_call>call:get_time{}"}')]),
    Case('long-whitespace-before-close', f'{TC}call:get_time{{}}' + ' ' * 70 + f'{TE}x',
         ' ' * 70 + f'{TE}x', None, [('get_time', '{}')]),
    Case('whitespace-before-close', f'{TC}call:get_time{{}}' + ' \n' * 20 + f'{TE}x', 'x', None,
         [('get_time', '{}')]),
    Case('long-whitespace-at-end', f'{TC}call:get_time{{}}' + ' ' * 70, ' ' * 70, None, [('get_time', '{}')]),
    Case('stray-closers', f'{TC}call:search{{limit:3}}}}]{TE}x', 'x', None, [('search', '{"limit": 3}')]),
    Case('missing-bracket', f'{TC}call:search{{a:[1,{{b:2}}}}{TE}', None, None,
         [('search', '{"a": [1, {"b": 2}]}')]),
    Case('brace-closes-array', f'{TC}call:search{{c:{{d:[3}}}}{TE}', None, None, [('search', '{"c": {"d": [3]}}')]),
    Case('bracket-closes-object', f'{TC}call:search{{a:[{{b:2]}}{TE}', None, None, [('search', '{"a": [{"b": 2}]}')]),
    Case('empty-name', f'{TC}call:{{a:1}}{TE}ok', 'ok', None, []),
    Case('truncated-in-string', 'Sure.' + f'{TC}call:get_weather{{city:{Q}Bei', 'Sure.', None,
         [('get_weather', '{"city": "Bei"}')]),
    Case('truncated-in-bare-value', f'{TC}call:search{{query:{Q}x{Q},limit:1', None, None,
         [('search', '{"query": "x"}')]),
    Case('truncated-in-key', f'{TC}call:search{{query:{Q}x{Q},lim', None, None, [('search', '{"query": "x"}')]),
    Case('truncated-in-nested', f'{TC}call:search{{f:{{a:[1,{Q}t', None, None, [('search', '{"f": {"a": [1, "t"]}}')]),
    Case('truncated-after-brace', f'{TC}call:get_time{{', None, None, [('get_time', '{}')]),
    Case('truncated-in-header', f'ok{TC}call:get_wea', 'ok', None, []),
    Case('truncated-partial-delimiter', f'{TC}call:search{{query:{Q}ab<|"', None, None,
         [('search', '{"query": "ab<|\\""}')]),
    Case('truncated-before-close', f'{TC}call:get_time{{}}<tool_ca', None, None, [('get_time', '{}')]),
    Case('truncated-in-thought', THOUGHT + 'Thinking abo', None, 'Thinking abo', []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _run(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> Any:
    return run_case(case.parser(make_parser), chunks, flush=flush)


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_marker_atomic_streams(case: Case, make_parser: Any) -> None:
    """Every marker is one special token: each marker one chunk, text around it in small pieces."""
    for size in (1, 3):
        assert _run(case, make_parser, atomic_chunks(case.text, (TC, TE, Q, CH, CE), size)) == case.expected


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '2000' if os.environ.get('LMPARSE_SLOW') else '200')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    n = len(case.text)
    cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=30), label='cuts')
    assert _run(case, make_parser, split_at(case.text, cuts)) == case.expected, case.id


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_arguments_are_json(case: Case) -> None:
    for _name, args in case.calls:
        json.loads(args)


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(st.characters(blacklist_categories=('Cs',)), max_size=12).filter(lambda s: '<' not in s),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.from_regex(r'[a-z_][a-z0-9_]{0,6}', fullmatch=True), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '1500' if os.environ.get('LMPARSE_SLOW') else '150')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments=st.dictionaries(st.from_regex(r'[a-z_][a-z0-9_]{0,8}', fullmatch=True), _VALUES, max_size=5),
       data=st.data())
def test_rendered_values_round_trip(make_parser: Any, arguments: dict[str, Any], data: st.DataObject) -> None:
    """Any value the template can render comes back as the same JSON, for any chunking."""
    text = 'Sure.' + render_call('search', arguments)
    cuts = data.draw(st.lists(st.integers(1, len(text) - 1), max_size=20), label='cuts')
    got = _run(Case('x', text, 'Sure.', None, []), make_parser, split_at(text, cuts))
    assert got[2] == [('search', js(arguments))]
    assert json.loads(got[2][0][1]) == json.loads(js(arguments))


def test_arguments_stream_as_they_arrive(make_parser: Any) -> None:
    text = render_call('search', {'query': 'abcdefgh', 'limit': 3})
    parser = make_parser('gemma4', 'gemma4')
    seen: list[Any] = []
    for i, ch in enumerate(text):
        seen.append((ch, [(d.function.name, d.function.arguments) for d in
                          tool_deltas(parser.stream_chunk(ch, [], final=i == len(text) - 1))]))
    flat = [d for _ch, ds in seen for d in ds]
    assert flat[0] == ('search', None)
    args = [a for _n, a in flat[1:]]
    assert ''.join(args) == '{"limit": 3, "query": "abcdefgh"}'
    # each string character is forwarded with the character that brought it
    assert args.count('c') == 1 and args.count('d') == 1
    # a bare value is held until it ends
    assert '"limit": 3' in args[1] and '{' == args[0]


def test_reasoning_parser_declaration(make_parser: Any) -> None:
    assert ReasoningParserManager.get('gemma4') is Gemma4ReasoningParser
    assert ToolParserManager.get('gemma4') is Gemma4ToolParser
    for kwargs in ({}, {'enable_thinking': True}, {'enable_thinking': False}):
        assert Gemma4ReasoningParser(**kwargs).starts_in_reasoning_mode() is False
    parser = make_parser('gemma4', 'gemma4', chat_template_kwargs={'enable_thinking': True})
    assert parser.reasoning_enabled is False and parser.mode == 'plain'


def test_reasoning_tokens_count_from_channel_token() -> None:
    tokenizer = FakeTokenizer({'<|channel>': 100, '<channel|>': 101, 'thought': 5, '\n': 6, 'a': 7, 'b': 8})
    Gemma4ReasoningParser.validate_tokenizer(tokenizer)
    assert Gemma4ReasoningParser.token_ids(tokenizer) == (100, 101)
    cls = BaseResponseParser.with_parsers('gemma4', 'gemma4', tokenizer)
    parser = cls(make_request())
    steps = [('<|channel>', [100]), ('thought', [5]), ('\n', [6]), ('a', [7]), ('b', [8]), ('<channel|>', [101]),
             ('a', [7])]
    out = []
    for text, ids in steps:
        out += parser.stream_chunk(text, ids)
    out += parser.stream_chunk('', [], final=True)
    assert ''.join(m.reasoning_content or '' for m, _ in out) == 'ab'
    assert ''.join(m.content or '' for m, _ in out) == 'a'
    assert parser.reasoning_tokens == 4  # thought, \n, a, b: the raw channel interval


def test_adjust_request_keeps_special_tokens(make_parser: Any) -> None:
    for fields in ({}, {'tool_choice': 'none'}):
        request = make_parser('gemma4', 'gemma4', **fields).request
        get = request.get if isinstance(request, dict) else lambda k: getattr(request, k)
        assert get('skip_special_tokens') is False
        assert get('spaces_between_special_tokens') is False


def test_python_subclass_changes_markers() -> None:
    """The family is generic: FunctionGemma-style markers are a declaration."""
    class Custom(Gemma4ToolParser):
        tool_open_tag = '<start_function_call>'
        tool_close_tag = '<end_function_call>'
        string_delimiter = '<escape>'
        call_prefixes = ('call:',)

    parser = Custom()
    parser.begin_tool_block()
    deltas: list[Any] = []
    text = 'call:f{a:<escape>x<escape>,n:2}<end_function_call>rest'
    consumed = parser.feed_tool_block(text, deltas, final=False)
    assert text[consumed:] == 'rest'
    assert [(d.function.name, d.function.arguments) for d in deltas] == [('f', None), (None, '{"a": "x", "n": 2}')]

    class Bad(Gemma4ToolParser):
        string_delimiter = '"'

    with pytest.raises(TypeError):
        Bad()


def test_large_and_deep(make_parser: Any) -> None:
    big = {'items': [f'{TE[1:]} {i}' for i in range(5000)], 'text': 'x' * 20000}
    deep = {'a': None}
    node = deep
    for _ in range(300):
        node['a'] = {'a': [1]}
        node = node['a']
    for args in (big, deep):
        text = render_call('search', args)
        for size in (16, 256, len(text)):
            parser = make_parser(None, 'gemma4')
            assert reconstruct(parser, stream_flagged(parser, fixed_chunks(text, size))).calls == [('search', js(args))]
