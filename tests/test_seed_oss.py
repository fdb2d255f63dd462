"""ByteDance Seed-OSS reasoning and tool calls through BaseResponseParser.

Syntax of ByteDance-Seed/Seed-OSS-36B-Instruct's chat template:
``<seed:think>...</seed:think>`` reasoning (``<seed:cot_budget_reflect>`` notes
inside it with a thinking budget; budget 0 puts ``<seed:think><seed:cot_budget_reflect>``
in the prompt) and one call per block:
``<seed:tool_call>\\n<function=NAME>\\n<parameter=KEY>VALUE</parameter>\\n</function>\\n</seed:tool_call>``.

Every case is checked three ways: streamed reconstruction over many chunkings
(one chunk, every split inside every marker, fixed and random sizes, every
two-way split, hypothesis splits, and streams where each special token is one
chunk — the Seed-OSS tokenizer is not on PyPI), ``parse_complete`` and a
literal expected result.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ReasoningParserManager, SeedOssReasoningParser, SeedOssToolParser, ToolParserManager
from tests import catalogue
from tests.streaming import (
    atomic_chunks,
    case_checks,
    fixed_chunks,
    reconstruct,
    run_case,
    split_at,
    stream_flagged,
    tool_deltas,
)

TO, TC = '<seed:tool_call>', '</seed:tool_call>'
THO, THC = '<seed:think>', '</seed:think>'
BO, BC = '<seed:cot_budget_reflect>', '</seed:cot_budget_reflect>'
SPECIAL = (TO, TC, THO, THC, BO, BC)
TAGS = (*SPECIAL, '<function=', '</function>', '<parameter=', '</parameter>')


def call(name: str, **params: str) -> str:
    """One block as the template writes it."""
    body = ''.join(f'<parameter={k}>{v}</parameter>\n' for k, v in params.items())
    return f'{TO}\n<function={name}>\n{body}</function>\n{TC}'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'seed_oss'
    tool: str | None = 'seed_oss'


REFLECT = f'{BO}I have used 129 tokens, and there are 383 tokens remaining for use.{BC}'

CASES = [
    Case('basic', f'{THO}The user wants weather.{THC}Let me check.\n' + call('get_weather', city='Paris', unit='celsius'),
         'Let me check.\n', 'The user wants weather.', [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    Case('budget-reflections-are-reasoning', f'{THO}Step one.{REFLECT}\nStep two.{THC}Done.',
         'Done.', f'Step one.{REFLECT}\nStep two.', []),
    Case('budget-zero-prompt', 'The current thinking budget is 0, so I will directly start answering the question.'
         f'{BC}\n{THC}Answer.', 'Answer.',
         f'The current thinking budget is 0, so I will directly start answering the question.{BC}\n', []),
    Case('several-blocks-with-unknown', f'{THO}x{THC}' + call('search', query='q', limit='3') + '\n'
         + call('rm_rf', p='/') + '\n' + call('get_time'),
         None, 'x', [('search', '{"query": "q", "limit": 3}'), ('get_time', '{}')]),
    Case('multiline-value', f'{THO}x{THC}' + call('search', query='This is the value\nthat can span\nmultiple lines'),
         None, 'x', [('search', '{"query": "This is the value\\nthat can span\\nmultiple lines"}')]),
    Case('value-with-lookalikes', f'{THO}x{THC}' + call('search', query='a < b </param x <seed:tool'),
         None, 'x', [('search', '{"query": "a < b </param x <seed:tool"}')]),
    Case('value-newlines-are-markup', f'{THO}x{THC}{TO}\n<function=search>\n<parameter=query>\nq\n</parameter>\n'
         f'</function>\n{TC}', None, 'x', [('search', '{"query": "q"}')]),
    Case('two-calls-one-block', f'{THO}x{THC}{TO}\n<function=get_time>\n</function>\n<function=search>\n'
         f'<parameter=query>q</parameter>\n</function>\n{TC}', None, 'x', [('get_time', '{}'), ('search', '{"query": "q"}')]),
    Case('tool-in-reasoning', f'{THO}Look up.' + call('get_time') + f'more{THC}Answer.', 'Answer.', 'Look up.more',
         [('get_time', '{}')]),
    Case('text-after-block', f'{THO}x{THC}' + call('get_time') + '\nDone.', '\nDone.', 'x', [('get_time', '{}')]),
    Case('bare-function-call', f'{THO}x{THC}<function=get_time>\n</function>', None, 'x', [('get_time', '{}')]),
    Case('bare-unknown-is-text', f'{THO}x{THC}see <function=rm>\n<parameter=p>/</parameter>\n</function> ok',
         'see <function=rm>\n<parameter=p>/</parameter>\n</function> ok', 'x', []),
    Case('tool-choice-none', f'{THO}x{THC}ok' + call('get_time'), 'ok' + call('get_time'), 'x', [],
         request={'tool_choice': 'none'}),
    Case('lookalikes', f'{THO}x{THC}a <seed:tool_cal b <seed:think c {TC} d', f'a <seed:tool_cal b <seed:think c {TC} d',
         'x', []),
    Case('no-reasoning-parser', f'{THO}x{THC}' + call('search', query='q'), f'{THO}x{THC}', None,
         [('search', '{"query": "q"}')], reasoning=None),
    Case('no-tags-is-reasoning', 'Thinking without tags', None, 'Thinking without tags', []),
    # malformed and truncated (best effort, identical for every chunking)
    Case('missing-parameter-close', f'{THO}x{THC}{TO}\n<function=search>\n<parameter=query>abc\n</function>{TC}after',
         'after', 'x', [('search', '{"query": "abc"}')]),
    # a parameter marker inside a value cannot be told from a missing close tag: it is text
    Case('parameter-marker-in-value', f'{THO}x{THC}{TO}\n<function=search>\n<parameter=query>abc\n<parameter=limit>2'
         f'</parameter></function>{TC}after', 'after', 'x', [('search', '{"query": "abc\\n<parameter=limit>2"}')]),
    Case('close-markers-in-value', f'{THO}x{THC}{TO}\n<function=search>\n<parameter=query>\na</parameter>b{TC}c'
         f'</function>d\n</parameter>\n</function>{TC}after', 'after', 'x',
         [('search', '{"query": "a</parameter>b</seed:tool_call>c</function>d"}')]),
    Case('missing-function-close', f'{THO}x{THC}{TO}\n<function=search>\n<parameter=query>q</parameter>\n{TC}tail',
         'tail', 'x', [('search', '{"query": "q"}')]),
    Case('truncated-in-value', f'{THO}x{THC}{TO}\n<function=search>\n<parameter=query>abc', None, 'x',
         [('search', '{"query": "abc"}')]),
    Case('truncated-in-name', f'{THO}x{THC}ok{TO}\n<function=sea', 'ok', 'x', []),
    Case('truncated-after-open', f'{THO}x{THC}ok{TO}', 'ok', 'x', []),
    Case('alias', f'{THO}x{THC}' + call('get_time'), None, 'x', [('get_time', '{}')], 'seed-oss', 'seed-oss'),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _run(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> Any:
    return run_case(case.parser(make_parser), chunks, flush=flush)


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_special_token_atomic_streams(case: Case, make_parser: Any) -> None:
    """The seed: tags are special tokens: each one chunk, the text around them in small pieces."""
    for size in (1, 3):
        assert _run(case, make_parser, atomic_chunks(case.text, SPECIAL, size)) == case.expected


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '2000' if os.environ.get('LMPARSE_SLOW') else '200')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    n = len(case.text)
    cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=30), label='cuts')
    assert _run(case, make_parser, split_at(case.text, cuts)) == case.expected, case.id


def test_identity_first_and_values_streamed(make_parser: Any) -> None:
    text = f'{THO}x{THC}' + call('search', query='a long query value')
    parser = make_parser('seed_oss', 'seed_oss')
    seen: list[Any] = []
    for i, ch in enumerate(text):
        seen.extend(tool_deltas(parser.stream_chunk(ch, [], final=i == len(text) - 1)))
    first = seen[0]
    assert (first.index, first.type, first.function.name) == (0, 'function', 'search')
    assert first.id
    assert all(d.id is None and d.function.name is None for d in seen[1:])
    assert ''.join(d.function.arguments for d in seen[1:]) == '{"query": "a long query value"}'
    assert len(seen) > 5  # the string value is streamed as it is generated


def test_registry_and_declarations(make_parser: Any) -> None:
    for name in ('seed_oss', 'seed-oss'):
        assert ToolParserManager.get(name) is SeedOssToolParser
        assert ReasoningParserManager.get(name) is SeedOssReasoningParser
    assert SeedOssToolParser.get_tool_open_tag() == TO
    assert SeedOssToolParser.get_tool_close_tag() == TC
    assert SeedOssReasoningParser.get_reasoning_open_tag() == THO
    assert SeedOssReasoningParser.get_reasoning_close_tag() == THC
    assert SeedOssReasoningParser().starts_in_reasoning_mode() is True
    assert SeedOssToolParser.structural_tag_model is None
    request = make_parser(None, 'seed_oss').request
    get = request.get if isinstance(request, dict) else lambda k: getattr(request, k)
    assert get('skip_special_tokens') is False


def test_large_values_linear(make_parser: Any) -> None:
    big = 'x<y </seed ' * 30000
    text = f'{THO}x{THC}' + call('search', query=big)
    for size in (16, 256, len(text)):
        parser = make_parser('seed_oss', 'seed_oss')
        calls = reconstruct(parser, stream_flagged(parser, fixed_chunks(text, size))).calls
        assert calls == [('search', '{"query": "' + big + '"}')]
