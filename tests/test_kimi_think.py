"""Kimi ``◁think▷`` reasoning (SGLang's ``kimi``: Kimi-VL-Thinking and Kimi thinking models).

The model opens its reasoning itself: ``◁think▷...◁/think▷`` then the answer
(moonshotai/Kimi-VL-A3B-Thinking's output; SGLang's ``KimiDetector``, not
forced into reasoning). Literal results over every chunking (``tests/catalogue.py``).
"""
from __future__ import annotations

from typing import Any

from lmparse import KimiThinkReasoningParser, ReasoningParserManager
from tests.catalogue import Case, dialect_suite

O, C = '◁think▷', '◁/think▷'
SPECIAL = (O, C)
TAGS = SPECIAL


def case(id: str, text: str, content: str | None, reasoning: str | None, name: str = 'kimi',
         **request: Any) -> Case:
    return Case(id, text, content, reasoning, [], name, None, request)


CASES = [
    case('basic', f'{O}The user asks 2+2.{C}4', '4', 'The user asks 2+2.'),
    case('multiline', f'{O}Step 1.\nStep 2: 1 < 2 ◁thin ◁/thin▷ ok\n{C}\n\nThe answer.', '\n\nThe answer.',
         'Step 1.\nStep 2: 1 < 2 ◁thin ◁/thin▷ ok\n'),
    case('no-reasoning', 'Just an answer.', 'Just an answer.', None),
    case('unicode', f'{O}北京 😀{C}晴', '晴', '北京 😀'),
    case('truncated-in-reasoning', f'{O}still thinking', None, 'still thinking'),
    case('truncated-open-tag', 'ok ◁thi', 'ok ◁thi', None),
    case('stray-close-is-text', f'a{C}b', f'a{C}b', None),
    case('alias', f'{O}x{C}y', 'y', 'x', name='kimi-vl'),
    case('thinking-disabled', f'{O}x{C}y', 'xy', None, chat_template_kwargs={'enable_thinking': False}),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered_and_declared() -> None:
    for name in ('kimi', 'kimi-vl'):
        assert ReasoningParserManager.get(name) is KimiThinkReasoningParser
    assert (KimiThinkReasoningParser.get_reasoning_open_tag(), KimiThinkReasoningParser.get_reasoning_close_tag()) \
        == (O, C)
    assert KimiThinkReasoningParser().starts_in_reasoning_mode() is False
