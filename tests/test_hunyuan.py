"""Tencent Hunyuan: A13B's ``<tool_calls>[...]`` JSON arrays and ``<answer>`` wrapper; HY v3 / v4 suffixed XML calls.

``case_checks`` runs each case over every chunking (every split inside every
tag, fixed and random sizes, empty final chunk, every two-way split) against a
literal expected result; ``atomic_chunks`` streams each special token whole
(no Hunyuan tokenizer installs from PyPI without the model files).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from lmparse import (
    HunyuanA13BReasoningParser,
    HunyuanA13BToolParser,
    HYV3ReasoningParser,
    HYV3ToolParser,
    HYV4ReasoningParser,
    HYV4ToolParser,
    ReasoningParserManager,
    ToolParserManager,
)
from lmparse.dialects.hunyuan import hy_markers, hy_think_markers
from tests.conftest import build_parser
from tests.streaming import atomic_chunks, case_checks, complete, run_case

S = ':opensource'


def t(name: str) -> str:
    return f'<{name}{S}>'


def c(name: str) -> str:
    return f'</{name}{S}>'


A13B_TAGS = ('<think>', '</think>', '<answer>', '</answer>', '<tool_calls>', '</tool_calls>')
HY_TAGS = tuple(f(n) for n in ('think', 'tool_calls', 'tool_call', 'arg_key', 'arg_value') for f in (t, c)) + (
    t('tool_sep'),)
TAGS = A13B_TAGS + HY_TAGS


def a13b_calls(*calls: tuple[str, str]) -> str:
    return '<tool_calls>[' + ', '.join(f'{{"name": "{n}", "arguments": {a}}}' for n, a in calls) + ']</tool_calls>'


def hy_call(name: str, *args: tuple[str, str], sep: bool = True) -> str:
    body = ''.join(f'{t("arg_key")}{k}{c("arg_key")}\n{t("arg_value")}{v}{c("arg_value")}\n' for k, v in args)
    return f'{t("tool_call")}{name}{t("tool_sep") if sep else ""}\n{body}{c("tool_call")}\n'


def hy_block(*calls: str) -> str:
    return t('tool_calls') + '\n' + ''.join(calls) + c('tool_calls')


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: list[tuple[str, str]]
    dialect: str = 'hunyuan_a13b'
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.dialect, self.dialect, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


W = '{"city": "Shenzhen"}'
NO_THINK = {'chat_template_kwargs': {'reasoning_effort': 'no_think'}}
CASES = [
    # Hunyuan-A13B: the model opens <think> itself; the answer is wrapped in <answer>
    Case('a13b-answer', '<think>\nplan\n</think>\n<answer>\nHello.\n</answer>', '\n\nHello.\n', '\nplan\n', []),
    Case('a13b-calls', '<think>\nneed weather\n</think>\n<answer>\n'
         + a13b_calls(('get_weather', W), ('rm', '{}'), ('search', '{"query": "深圳"}')) + '\n</answer>',
         '\n\n\n', '\nneed weather\n', [('get_weather', W), ('search', '{"query": "深圳"}')]),
    Case('a13b-no-think', '<think>\n\n</think>\n<answer>\nQuick.\n</answer>', '\n\nQuick.\n', '\n\n', []),
    Case('a13b-unwrapped', 'Just text.', 'Just text.', None, []),
    Case('a13b-truncated-call', '<answer>\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Sh', '\n', None,
         [('get_weather', '{"city": "Sh')]),
    # HY v3: suffixed tokens, <tool_sep> after the name; output starts in reasoning (prefilled <think>)
    Case('hy3-call', 'Look it up.' + c('think') + '\nChecking.' + hy_block(
        hy_call('get_weather', ('city', 'Paris'), ('unit', 'celsius')),
        hy_call('search', ('query', 'a < b'), ('limit', '3'))), '\nChecking.', 'Look it up.',
         [('get_weather', '{"city": "Paris", "unit": "celsius"}'), ('search', '{"query": "a < b", "limit": 3}')],
         'hy_v3'),
    Case('hy3-unknown-and-empty', 'r' + c('think') + hy_block(hy_call('rm', ('p', '/')), hy_call('get_time')),
         None, 'r', [('get_time', '{}')], 'hy_v3'),
    Case('hy3-answer', 'r' + c('think') + 'The answer.', 'The answer.', 'r', [], 'hy_v3'),
    Case('hy3-no-think', 'Direct.' + hy_block(hy_call('get_time')), 'Direct.', None, [('get_time', '{}')],
         'hy_v3', NO_THINK),
    Case('hy3-unsuffixed-tags-are-text', 'r' + c('think') + '<tool_calls><tool_call>x</tool_call></tool_calls>',
         '<tool_calls><tool_call>x</tool_call></tool_calls>', 'r', [], 'hy_v3'),
    Case('hy3-truncated-value', 'r' + c('think') + t('tool_calls') + t('tool_call') + 'search' + t('tool_sep')
         + t('arg_key') + 'query' + c('arg_key') + t('arg_value') + 'ab', None, 'r', [('search', '{"query": "ab"}')],
         'hy_v3'),
    # SGLang's hunyuan: the HY v3 format
    Case('hunyuan-alias', 'r' + c('think') + hy_block(hy_call('search', ('query', 'q'))), None, 'r',
         [('search', '{"query": "q"}')], 'hunyuan'),
    # HY v4: no <tool_sep>
    Case('hy4-call', 'think' + c('think') + hy_block(hy_call('get_weather', ('city', 'Rome'), sep=False),
                                                     hy_call('get_time', sep=False)),
         None, 'think', [('get_weather', '{"city": "Rome"}'), ('get_time', '{}')], 'hy_v4'),
    Case('hy4-answer-then-unknown', 'r' + c('think') + 'Sure.' + hy_block(hy_call('rm', ('p', '/'), sep=False)),
         'Sure.', 'r', [], 'hy_v4'),
    Case('hy4-typed-and-string', 'r' + c('think') + hy_block(hy_call('search', ('query', '42'), ('limit', '42'),
                                                                      sep=False)),
         None, 'r', [('search', '{"query": "42", "limit": 42}')], 'hy_v4'),
    Case('hy4-truncated', 'r' + c('think') + t('tool_calls') + t('tool_call') + 'get_weather' + t('arg_key') + 'ci',
         None, 'r', [('get_weather', '{}')], 'hy_v4'),
    Case('hy4-no-think', 'x' + hy_block(hy_call('search', ('limit', '2'), sep=False)), 'x', None,
         [('search', '{"limit": 2}')], 'hy_v4', NO_THINK),
]
CASE_IDS = [case.id for case in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
@pytest.mark.parametrize('size', [1, 3, 7])
def test_special_tokens_whole(case: Case, size: int, make_parser: Any) -> None:
    assert run_case(case.parser(make_parser), atomic_chunks(case.text, TAGS, size)) == case.expected


def test_hy_markers_match_the_declarations() -> None:
    for cls, sep in ((HYV3ToolParser, True), (HYV4ToolParser, False)):
        for key, value in hy_markers(tool_sep=sep).items():
            assert getattr(cls, key) == value, (cls.__name__, key)


def test_hy_markers_for_another_suffix() -> None:
    for key, value in hy_think_markers().items():
        assert getattr(HYV3ReasoningParser, key) == value
    Bare = type('BareHyV3', (HYV3ToolParser,), hy_markers(''))
    BareThink = type('BareHyV3Think', (HYV3ReasoningParser,), hy_think_markers(''))
    ToolParserManager.register_module('test-hy-v3-bare', module=Bare)
    ReasoningParserManager.register_module('test-hy-v3-bare', module=BareThink)
    try:
        text = 'plan</think>ok<tool_calls>\n<tool_call>search<tool_sep>\n<arg_key>query</arg_key>\n' \
               '<arg_value>x</arg_value>\n</tool_call>\n</tool_calls>'
        got = complete(build_parser('test-hy-v3-bare', 'test-hy-v3-bare'), text).key()
    finally:
        del ToolParserManager.module_dict['test-hy-v3-bare']
        del ReasoningParserManager.module_dict['test-hy-v3-bare']
    assert got == ('ok', 'plan', [('search', '{"query": "x"}')])


def test_registration(make_parser: Any) -> None:
    assert ToolParserManager.get('hunyuan_a13b') is HunyuanA13BToolParser
    assert ReasoningParserManager.get('hunyuan_a13b') is HunyuanA13BReasoningParser
    assert ToolParserManager.get('hy_v3') is HYV3ToolParser and ToolParserManager.get('hunyuan') is HYV3ToolParser
    assert ReasoningParserManager.get('hy_v3') is HYV3ReasoningParser
    assert ReasoningParserManager.get('hunyuan') is HYV3ReasoningParser
    assert ToolParserManager.get('hy_v4') is HYV4ToolParser
    assert ReasoningParserManager.get('hy_v4') is HYV4ReasoningParser
    assert make_parser(None, 'hy_v3').request.skip_special_tokens is False
