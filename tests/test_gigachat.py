"""Sber GigaChat 3 / 3.1 ``gigachat3`` (JSON calls) and GigaChat 3.5 ``gigachat35`` (GCML markup, ``<think>``).

Syntax from the GigaChat 3 chat template and the engines' parsers (see
``lmparse.dialects.gigachat``). Every case is checked three ways: streamed
reconstruction over many chunkings (one chunk, every split inside every
marker, fixed and random sizes, every two-way split), ``parse_complete`` and
a literal expected result; and in streams where each special token is one
chunk (no GigaChat tokenizer is on PyPI).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from lmparse import GigaChat3ToolParser, GigaChat35ToolParser, ReasoningParser, ReasoningParserManager, ToolParserManager
from tests.streaming import atomic_chunks, case_checks, run_case

MSEP, RSEP, FC = '<|message_sep|>', '<|role_sep|>', '<|function_call|>'
CALL = MSEP + '\n\nfunction call' + RSEP + '\n'  # GigaChat 3: the answer, then the call
G = '\uff5cGCML\uff5c'
BO, BC = f'<{G}tool_calls>', f'</{G}tool_calls>'
IC, PC = f'</{G}invoke>', f'</{G}parameter>'
SPECIAL = (MSEP, RSEP, FC, BO, BC, '<think>', '</think>')
TAGS = (*SPECIAL, MSEP + '\n\n', f'<{G}invoke', f'<{G}parameter', IC, PC)

Calls = list[tuple[str, str]]


def env(name: str, args: str) -> str:
    return f'{{"name": "{name}", "arguments": {args}}}'


def gcml(*invokes: tuple[str, dict[str, tuple[str, bool]]]) -> str:
    """A GCML block as the 3.5 format writes it: ``{key: (value, is_string)}`` per invoke."""
    out = [BO]
    for name, params in invokes:
        out.append(f'<{G}invoke name="{name}">')
        for key, (value, is_string) in params.items():
            out.append(f'<{G}parameter name="{key}" string="{str(is_string).lower()}">{value}{PC}')
        out.append(IC)
    out.append(BC)
    return '\n'.join(out)


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    calls: Calls
    reasoning_content: str | None = None
    tool: str = 'gigachat3'
    reasoning: str | None = None
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


W = '{"city": "Москва", "unit": "celsius"}'
CASES = [
    # GigaChat 3: function call<|role_sep|>\n{json} after the answer's <|message_sep|>
    # '<|message_sep|>\n\n' (the template's separator, blank line included) is dropped, as vLLM and SGLang drop it
    Case('g3-after-answer', 'Сейчас проверю.' + CALL + env('get_weather', W), 'Сейчас проверю.',
         [('get_weather', W)]),
    Case('g3-call-only', 'function call' + RSEP + '\n' + env('get_time', '{}'), None, [('get_time', '{}')]),
    Case('g3-separator-first', CALL + env('search', '{"query": "q", "limit": 2}'), None,
         [('search', '{"query": "q", "limit": 2}')]),
    Case('g3-answer-only', 'Здравствуйте! Чем помочь?' + MSEP, 'Здравствуйте! Чем помочь?', []),
    Case('g3-unknown-tool', 'x' + CALL + env('rm', '{"p": "/"}'), 'x', []),
    Case('g3-one-newline-is-text', 'x' + MSEP + '\ny', 'x\ny', []),
    Case('g3-newlines-after-blank-line', 'x' + MSEP + '\n\n\ny\n\n', 'x\ny\n\n', []),
    Case('g3-words-in-prose', 'A function call is a request.', 'A function call is a request.', []),
    Case('g3-truncated', CALL + '{"name": "get_weather", "arguments": {"city": "Мос', None,
         [('get_weather', '{"city": "Мос')]),
    # GigaChat 3.1: <|function_call|>{json}
    Case('g31-call', FC + env('get_weather', W), None, [('get_weather', W)]),
    Case('g31-after-text', 'Проверяю. ' + FC + env('get_time', '{}'), 'Проверяю. ', [('get_time', '{}')]),
    Case('g31-marker-without-json', 'see ' + FC + ' here', 'see ' + FC + ' here', []),
    # GigaChat 3.5: <think> reasoning, GCML blocks
    Case('g35-reasoning-then-call', 'Нужна погода.</think>Сейчас.\n\n'
         + gcml(('get_weather', {'city': ('Москва', True), 'days': ('3', False)})), 'Сейчас.\n\n',
         [('get_weather', '{"city": "Москва", "days": 3}')], 'Нужна погода.', 'gigachat35', 'gigachat35'),
    Case('g35-two-invokes', gcml(('get_time', {}), ('search', {'query': ('a "b"', True),
                                                                 'filters': ('{"lang": ["ru"]}', False)})), None,
         [('get_time', '{}'), ('search', '{"query": "a \\"b\\"", "filters": {"lang": ["ru"]}}')], None,
         'gigachat35'),
    Case('g35-unknown-dropped', gcml(('rm', {'p': ('/', True)}), ('get_time', {})), None, [('get_time', '{}')], None,
         'gigachat35'),
    Case('g35-open-think', '<think>план</think>ответ', 'ответ', [], 'план', 'gigachat35', 'gigachat35'),
    Case('g35-plain', 'Просто ответ.', 'Просто ответ.', [], None, 'gigachat35'),
    Case('g35-truncated', BO + f'\n<{G}invoke name="search">\n<{G}parameter name="query" string="true">abc', None,
         [('search', '{"query": "abc"}')], None, 'gigachat35'),
]
assert len({c.id for c in CASES}) == len(CASES)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize('size', [1, 3, 64])
def test_special_tokens_whole(case: Case, size: int, make_parser: Any) -> None:
    assert run_case(case.parser(make_parser), atomic_chunks(case.text, SPECIAL, size)) == case.expected


def test_registration(make_parser: Any) -> None:
    assert ToolParserManager.get('gigachat3') is GigaChat3ToolParser
    assert ToolParserManager.get('gigachat35') is GigaChat35ToolParser
    assert ReasoningParserManager.get('gigachat35') is ReasoningParser
    assert make_parser(None, 'gigachat3').request.skip_special_tokens is False
    assert make_parser(None, 'gigachat3', request_tools=None).request.skip_special_tokens is not False
