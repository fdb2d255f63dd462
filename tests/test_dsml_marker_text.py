"""Marker text inside values of the attribute-named family (DeepSeek V3.2 / V4 / V4.1, Kimi K3, MiniMax M2).

A parameter close tag ends a value only when what follows it (whitespace,
then the next structural tag or the end of the output) confirms it; any
other close tag is text of the value. ``string="false"`` values that are not
JSON come back as their raw text in a JSON string (never invalid JSON, never
dropped text), as vLLM's and SGLang's DeepSeek parsers fall back. A DeepSeek
block whose open tag has no leading blank line (SGLang's tests write
``<｜DSML｜tool_calls>`` at the start of the answer) is a block there when an
invoke open tag follows the tag; otherwise the tag is content.

Each case: ``parse_complete``, every chunking (one chunk, every split inside
every tag, fixed and random sizes, an empty final chunk), every two-way
split, fragments == complete, real DeepSeek V4 token streams (the DSML token
is one special token), and Kimi K3 streams whose ``<|open|>`` ``<|close|>``
``<|sep|>`` tokens are atomic.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.attr_cases import (
    Case,
    check_chunkings,
    check_complete,
    check_every_two_way_split,
    check_fragments,
    marker_atomic_chunks,
    stream_key,
)
from tests.streaming import token_chunks
from tests.test_deepseek_v41 import to_v41
from tests.test_dsml import DSML_TOKEN as D
from tests.test_dsml import deepseek_tokenizer  # noqa: F401  (fixture)

THINK = {'chat_template_kwargs': {'thinking': True}}
PC, IC = f'</{D}parameter>', f'</{D}invoke>'


def block(name: str, *invokes: str, lead: str = '\n\n') -> str:
    return f'{lead}<{D}{name}>\n' + ''.join(i + '\n' for i in invokes) + f'</{D}{name}>'


def invoke(fn: str, *params: str) -> str:
    return f'<{D}invoke name="{fn}">\n' + ''.join(p + '\n' for p in params) + IC


def param(name: str, value: str, string: bool = True) -> str:
    return f'<{D}parameter name="{name}" string="{"true" if string else "false"}">{value}{PC}'


def q(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False)


def deepseek_cases(tool: str) -> list[Case]:
    name = 'function_calls' if tool == 'deepseek-v32' else 'tool_calls'
    b = lambda *inv, lead='\n\n': block(name, *inv, lead=lead)  # noqa: E731
    t = tool
    quoted_invoke = f'<{D}invoke name="search">\n<{D}parameter name="q" string="true">v{PC} then'
    cases = [
        # issue 27 item 9: not JSON -> the raw text as a JSON string
        Case(f'{t}-json-false-not-json', b(invoke('search', param('query', 'hello world', False)))
             , None, None, [('search', q({'query': 'hello world'}))], t),
        Case(f'{t}-json-false-not-json-then-more', b(invoke('search', param('query', 'a b', False),
                                                            param('limit', '3', False))),
             None, None, [('search', '{"query": "a b", "limit": 3}')], t),
        Case(f'{t}-json-false-trailing-text', b(invoke('search', param('query', '{"a": 1} and more', False))),
             None, None, [('search', q({'query': '{"a": 1} and more'}))], t),
        Case(f'{t}-json-false-literal-lookalikes', b(invoke('search', param('a', 'nullable', False),
                                                            param('b', 'NaN', False), param('c', '-', False),
                                                            param('d', '', False), param('e', ' true ', False))),
             None, None, [('search', '{"a": "nullable", "b": "NaN", "c": "-", "d": "", "e":  true}')], t),
        # a close tag inside a JSON string is data, even followed by a tag
        Case(f'{t}-json-string-holds-confirmed-looking-tags',
             b(invoke('search', param('query', q(f'x{PC} <{D}parameter name="y"'), False))),
             None, None, [('search', q({'query': f'x{PC} <{D}parameter name="y"'}))], t),
        # a close tag outside a JSON value's strings that nothing confirms: the value is raw text
        Case(f'{t}-json-false-unconfirmed-close', b(invoke('search', param('query', f'[1, {PC} 2]', False))),
             None, None, [('search', q({'query': f'[1, {PC} 2]'}))], t),
        # issue 27 item 6: SGLang's spelling, a self-closing invoke in a block without its blank line
        Case(f'{t}-bare-block-self-closing', b(f'<{D}invoke name="get_time"/>', lead=''),
             None, None, [('get_time', '{}')], t),
        Case(f'{t}-bare-block-after-thinking', 'Plan.</think>' + b(invoke('get_time'), lead='\n'),
             None, 'Plan.', [('get_time', '{}')], t, t, THINK),
        Case(f'{t}-bare-block-then-text', b(invoke('search', param('query', 'q')), lead='') + '\n\nDone.',
             '\n\nDone.', None, [('search', q({'query': 'q'}))], t),
        # ... only when an invoke open tag follows it: an answer quoting the tag keeps its text
        Case(f'{t}-bare-tag-quoted-at-start', f'<{D}{name}> opens a block, {PC} ends a value',
             f'<{D}{name}> opens a block, {PC} ends a value', None, [], t),
        Case(f'{t}-bare-tag-quoted-after-thinking', f'Plan.</think>\n<{D}{name}> is the tag',
             f'\n<{D}{name}> is the tag', 'Plan.', [], t, t, THINK),
        Case(f'{t}-bare-tag-then-block-close', f'<{D}{name}></{D}{name}>', f'<{D}{name}></{D}{name}>', None, [], t),
        # close tags written inside raw string values are text
        Case(f'{t}-close-tag-in-value', b(invoke('search', param('query', f'a {PC} b'), param('limit', '2', False))),
             None, None, [('search', q({'query': f'a {PC} b', 'limit': 2}))], t),
        Case(f'{t}-close-tag-ends-value-text', b(invoke('search', param('query', f'ends with {PC}'))),
             None, None, [('search', q({'query': f'ends with {PC}'}))], t),
        Case(f'{t}-quoted-call-in-value', 'See.' + b(invoke('search', param('query', quoted_invoke))),
             'See.', None, [('search', q({'query': quoted_invoke}))], t),
        Case(f'{t}-close-then-long-whitespace-is-text',
             b(invoke('search', param('query', f'a{PC}' + ' ' * 65 + f'<{D}parameter'))),
             None, None, [('search', q({'query': f'a{PC}' + ' ' * 65 + f'<{D}parameter'}))], t),
        Case(f'{t}-close-then-blank-lines-confirmed',
             b(f'<{D}invoke name="search">\n{param("query", "a")}\n\n\n  {param("limit", "1", False)}\n{IC}'),
             None, None, [('search', '{"query": "a", "limit": 1}')], t),
        # the end of the output confirms a close tag
        Case(f'{t}-truncated-after-close', f'\n\n<{D}{name}>\n<{D}invoke name="search">\n{param("query", "q")}\n',
             None, None, [('search', q({'query': 'q'}))], t),
        # the markers as text in reasoning and in content stay there
        Case(f'{t}-markers-in-reasoning', f'I would write {PC} or <{D}invoke name="x"> or </{D}{name}>.</think>Ok.',
             'Ok.', f'I would write {PC} or <{D}invoke name="x"> or </{D}{name}>.', [], t, t, THINK),
        Case(f'{t}-markers-in-content', f'Tags: {PC} <{D}invoke name="x"> </{D}{name}>',
             f'Tags: {PC} <{D}invoke name="x"> </{D}{name}>', None, [], t),
    ]
    return cases


def k3_cases() -> list[Case]:
    O, C, S = '<|open|>', '<|close|>', '<|sep|>'
    k3 = 'kimi_k3'
    tools = {'tools': [{'type': 'function', 'function': {'name': n, 'parameters': {'type': 'object', 'properties': {}}}}
                       for n in ('write_file', 'get_time')]}

    def call(name: str, *args: str) -> str:
        return f'{O}tools{S}{O}call tool="{name}" index="1"{S}' + ''.join(args) + f'{C}call{S}{C}tools{S}{C}message{S}'

    def arg(key: str, value: str, type_: str = 'string') -> str:
        return f'{O}argument key="{key}" type="{type_}"{S}{value}{C}argument{S}'

    def case(id: str, text: str, reasoning: str | None, calls: list[tuple[str, str]]) -> Case:
        return Case(id, text, None, reasoning, calls, k3, k3, tools)

    doc = f'{C}argument{S} closes a value'
    nested = f'{O}tools{S}{O}call tool="x"{S}{C}call{S}{C}tools{S} done'
    return [
        # issue 27 item 2: the close tag written at the start of a value
        case('k3-close-tag-at-value-start', f'Quote it.{C}think{S}' + call('write_file', arg('content', doc)),
             'Quote it.', [('write_file', q({'content': doc}))]),
        case('k3-whole-call-in-value', f'{C}think{S}' + call('write_file', arg('path', 'a.md'), arg('content', nested)),
             None, [('write_file', q({'path': 'a.md', 'content': nested}))]),
        case('k3-close-tag-at-value-end', f'{C}think{S}' + call('write_file', arg('content', f'end {C}argument{S}')),
             None, [('write_file', q({'content': f'end {C}argument{S}'}))]),
        case('k3-object-value-holds-tags', f'{C}think{S}' + call('write_file', arg(
            'o', json.dumps({'t': f'{C}argument{S}{O}argument key="k"{S}'}), 'object')),
             None, [('write_file', q({'o': {'t': f'{C}argument{S}{O}argument key="k"{S}'}}))]),
        case('k3-typed-not-json', f'{C}think{S}' + call('write_file', arg('n', 'three', 'integer')),
             None, [('write_file', q({'n': 'three'}))]),
        case('k3-markers-in-reasoning', f'A value ends with {C}argument{S} and a call with {C}call{S}.{C}think{S}'
             + call('get_time'), f'A value ends with {C}argument{S} and a call with {C}call{S}.', [('get_time', '{}')]),
    ]


DS_CASES = deepseek_cases('deepseek-v32') + deepseek_cases('deepseek-v4')
V41_CASES = [Case(c.id.replace('deepseek-v4', 'deepseek-v41'), to_v41(c.text), to_v41(c.content),
                  to_v41(c.reasoning_content), [(n, to_v41(a)) for n, a in c.calls], 'deepseek-v41',
                  'deepseek-v41' if c.reasoning else None, c.request)
             for c in deepseek_cases('deepseek-v4')]
K3_CASES = k3_cases()
CASES = DS_CASES + V41_CASES + K3_CASES
IDS = [c.id for c in CASES]
assert len(set(IDS)) == len(IDS)
TAGS = ('<think>', '</think>', f'<{D}', f'</{D}', 'parameter>', 'invoke>', '">', '"/>', f'<{D} ', f'</{D} ',
        '<|open|>', '<|close|>', '<|sep|>', 'argument', 'tools')


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_parse_complete(case: Case, make_parser: Any) -> None:
    check_complete(case, make_parser)


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_stream_chunkings(case: Case, make_parser: Any) -> None:
    check_chunkings(case, make_parser, TAGS)


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_every_two_way_split(case: Case, make_parser: Any) -> None:
    check_every_two_way_split(case, make_parser)


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_fragments_match_complete_and_are_json(case: Case, make_parser: Any) -> None:
    check_fragments(case, make_parser)


@pytest.mark.parametrize('case', K3_CASES, ids=[c.id for c in K3_CASES])
def test_k3_special_tokens_atomic(case: Case, make_parser: Any) -> None:
    assert stream_key(case, make_parser, marker_atomic_chunks(case.text, ('<|open|>', '<|close|>', '<|sep|>'))) \
        == case.expected


@pytest.mark.parametrize('case', DS_CASES + V41_CASES, ids=[c.id for c in DS_CASES + V41_CASES])
def test_deepseek_token_by_token(case: Case, make_parser: Any, deepseek_tokenizer: Any) -> None:  # noqa: F811
    chunks = token_chunks(deepseek_tokenizer, case.text)
    assert stream_key(case, make_parser, chunks) == case.expected
    assert stream_key(case, make_parser, chunks, flush=True) == case.expected


def test_json_value_that_cannot_start_json_streams_at_once(make_parser: Any) -> None:
    parser = make_parser(None, 'deepseek-v4')
    head = f'\n\n<{D}tool_calls>\n<{D}invoke name="search">\n<{D}parameter name="query" string="false"> hello'
    out = [d.function.arguments for m, _ in parser.stream_chunk(head, []) for d in (m.tool_calls or [])]
    assert out[:2] == [None, '{"query": '] and ''.join(out[2:]) == '" hello'  # before its close tag


def test_issue_repros(make_parser: Any) -> None:
    """The issue's own texts, each in one chunk."""
    v = f'\n\n<{D}tool_calls>\n<{D}invoke name="search">\n{param("v", "hello world", False)}\n{IC}\n</{D}tool_calls>'
    assert make_parser(None, 'deepseek-v4').parse_complete(v)[1][0].function.arguments == '{"v": "hello world"}'
    s = f'<{D}tool_calls>\n<{D}invoke name="get_time"/>\n</{D}tool_calls>'
    content, calls, _ = make_parser(None, 'deepseek-v4').parse_complete(s)
    assert content is None and [(c.function.name, c.function.arguments) for c in calls] == [('get_time', '{}')]
