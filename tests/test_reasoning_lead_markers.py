"""Reasoning framing the engines drop: MiniMax M3's leading stray ``</mm:think>``
(``drop_leading_close_tag``), Granite 4.2's template newline after ``</think>``
(``content_lead_strip``), Nemotron V3 / Granite's reasoning-as-content for complete
responses (``reasoning_as_missing_content``) and DeepSeek V4.1's thinking default.

Sources: vLLM 0.33's ``vllm/reasoning/minimax_m3_reasoning_parser.py``,
``vllm/parser/granite_thinking.py``, ``vllm/parser/nemotron_v3.py``,
``vllm/tokenizers/deepseek_v41.py`` / ``vllm/parser/deepseek_v4.py``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from lmparse.dialects.deepseek import DeepSeekV41ReasoningParser, DeepSeekV4ReasoningParser
from lmparse.registry import ReasoningParserManager
from tests.streaming import case_checks, chunkings, complete, reconstruct, stream_flagged

MM_OPEN, MM_CLOSE = '<mm:think>', '</mm:think>'
TAGS = (MM_OPEN, MM_CLOSE, '<think>', '</think>')


@dataclass
class Case:
    id: str
    reasoning_name: str
    text: str
    expected: tuple[Any, Any, Any]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        fields = {'chat_template_kwargs': self.kwargs} if self.kwargs else {}
        return make_parser(self.reasoning_name, None, request_tools=None, **fields)


ENABLED = {'thinking_mode': 'enabled'}
CASES = [
    # MiniMax M3, thinking_mode not enabled: output starts as content
    Case('m3-leading-close', 'minimax_m3', MM_CLOSE + 'answer', ('answer', None, [])),
    Case('m3-leading-close-only', 'minimax_m3', MM_CLOSE, (None, None, [])),
    Case('m3-close-later-is-text', 'minimax_m3', 'XXX' + MM_CLOSE + 'YYY', ('XXX' + MM_CLOSE + 'YYY', None, [])),
    Case('m3-second-close-is-text', 'minimax_m3', MM_CLOSE + MM_CLOSE + 'a', (MM_CLOSE + 'a', None, [])),
    Case('m3-space-then-close-is-text', 'minimax_m3', ' ' + MM_CLOSE + 'a', (' ' + MM_CLOSE + 'a', None, [])),
    Case('m3-partial-close-released', 'minimax_m3', '</mm:', ('</mm:', None, [])),
    Case('m3-block', 'minimax_m3', MM_OPEN + 'plan' + MM_CLOSE + 'answer', ('answer', 'plan', [])),
    Case('m3-close-as-text-after-block', 'minimax_m3', MM_OPEN + 'p' + MM_CLOSE + 'a' + MM_CLOSE + 'b',
         ('a' + MM_CLOSE + 'b', 'p', [])),
    Case('m3-leading-close-then-block', 'minimax_m3', MM_CLOSE + MM_OPEN + 'p' + MM_CLOSE + 'a', ('a', 'p', [])),
    # thinking_mode="enabled": in reasoning from the start, the close tag ends it as usual
    Case('m3-enabled', 'minimax_m3', 'plan' + MM_CLOSE + 'answer', ('answer', 'plan', []), ENABLED),
    Case('m3-enabled-empty', 'minimax_m3', MM_CLOSE + 'answer', ('answer', None, []), ENABLED),
    # Granite 4.2: the template's newline(s) after </think> are not content; later newlines are
    Case('granite-newline', 'granite_thinking_parser', '<think>r</think>\nHello', ('Hello', 'r', [])),
    Case('granite-newlines', 'granite_thinking_parser', '<think>r</think>\n\n\nHello', ('Hello', 'r', [])),
    Case('granite-lines', 'granite_thinking_parser', 'a\nb</think>\nc\n\nd\n', ('c\n\nd\n', 'a\nb', [])),
    Case('granite-newlines-only', 'granite_thinking_parser', '<think>r</think>\n\n', (None, 'r', [])),
    Case('granite-space-kept', 'granite_thinking_parser', 'r</think> \nHello', (' \nHello', 'r', [])),
    Case('granite-empty-block', 'granite_thinking_parser', '<think></think>\nHello', ('Hello', None, [])),
    Case('granite-thinking-off', 'granite_thinking_parser', '\nplain\n', ('\nplain\n', None, []),
         {'enable_thinking': False}),
    Case('granite-close-in-content', 'granite_thinking_parser', 'r</think>\nsay </think>\nx',
         ('say </think>\nx', 'r', [])),
    # the default <think> protocol keeps the newline (no declaration)
    Case('default-keeps-newline', 'default', 'r</think>\nHello', ('\nHello', 'r', [])),
    # DeepSeek V4.1: thinking unless switched off
    Case('v41-default-thinks', 'deepseek_v41', 'Plan.</think>12', ('12', 'Plan.', [])),
    Case('v41-empty-reasoning', 'deepseek_v41', '</think>12', ('12', None, [])),
    Case('v41-effort-none', 'deepseek_v41', '12', ('12', None, []), {'thinking': True, 'reasoning_effort': 'none'}),
    Case('v41-thinking-off', 'deepseek_v41', '12', ('12', None, []), {'thinking': False}),
    Case('v41-effort-high', 'deepseek_v41', 'P</think>12', ('12', 'P', []), {'reasoning_effort': 'high'}),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
def test_random_chunkings_with_empty_chunks(case: Case, make_parser: Any) -> None:
    rng = random.Random(7)
    for _, chunks in chunkings(case.text, TAGS, seed=3, n_random=8):
        with_empty: list[str] = []
        for chunk in chunks:
            with_empty.extend([''] * rng.randint(0, 2) + [chunk])
        with_empty.extend([''] * rng.randint(0, 2))
        parser = case.parser(make_parser)
        assert reconstruct(parser, stream_flagged(parser, with_empty)).key() == case.expected, with_empty


# force_nonempty_content: complete responses with nothing after the reasoning answer with it as content
FORCED = {'force_nonempty_content': True}


@pytest.mark.parametrize('name', ['nemotron_v3', 'granite_thinking_parser'])
@pytest.mark.parametrize('text,kwargs,expected', [
    ('<think>reasoning', FORCED, ('reasoning', None)),
    ('<think>reasoning</think>', FORCED, ('reasoning', None)),
    ('<think>reasoning</think>answer', FORCED, ('answer', 'reasoning')),
    ('<think>reasoning</think>', {}, (None, 'reasoning')),
    ('<think>reasoning', {'enable_thinking': True}, (None, 'reasoning')),
    ('plain', {'enable_thinking': False}, ('plain', None)),
])
def test_reasoning_as_missing_content(name: str, text: str, kwargs: dict[str, Any], expected: tuple[Any, Any],
                                      make_parser: Any) -> None:
    fields = {'chat_template_kwargs': kwargs} if kwargs else {}
    result = complete(make_parser(name, None, request_tools=None, **fields), text)
    assert (result.content, result.reasoning) == expected


def test_newlines_only_after_reasoning_is_an_answer(make_parser: Any) -> None:
    # Granite: the newline was written after </think>, so content was not missing (vLLM: no swap)
    parser = make_parser('granite_thinking_parser', None, request_tools=None, chat_template_kwargs=FORCED)
    assert complete(parser, '<think>reasoning</think>\n\n').key() == (None, 'reasoning', [])
    parser = make_parser('nemotron_v3', None, request_tools=None, chat_template_kwargs=FORCED)
    assert complete(parser, '<think>reasoning</think>\n\n').key() == ('\n\n', 'reasoning', [])


def test_forced_content_is_for_complete_responses_only(make_parser: Any) -> None:
    parser = make_parser('nemotron_v3', None, request_tools=None, chat_template_kwargs=FORCED)
    flagged = stream_flagged(parser, ['<think>', 'reason', '</think>'])
    assert reconstruct(parser, flagged).key() == (None, 'reason', [])


def test_forced_content_not_declared_elsewhere(make_parser: Any) -> None:
    parser = make_parser('default', None, request_tools=None, chat_template_kwargs=FORCED)
    assert complete(parser, '<think>reasoning</think>').key() == (None, 'reasoning', [])


def test_declarations() -> None:
    assert ReasoningParserManager.get('minimax_m3').drop_leading_close_tag is True
    assert ReasoningParserManager.get('granite_thinking_parser').content_lead_strip == '\n'
    assert ReasoningParserManager.get('nemotron_v3').reasoning_as_missing_content is True
    assert ReasoningParserManager.get('deepseek_v41') is DeepSeekV41ReasoningParser
    assert ReasoningParserManager.get('deepseek-v4.1') is DeepSeekV41ReasoningParser
    assert ReasoningParserManager.get('deepseek_v4') is DeepSeekV4ReasoningParser


@pytest.mark.parametrize('kwargs,thinks', [
    ({}, True), ({'thinking': True}, True), ({'enable_thinking': True}, True), ({'thinking': False}, False),
    ({'enable_thinking': False}, False), ({'thinking': None}, False), ({'reasoning_effort': 'none'}, False),
    ({'thinking': True, 'reasoning_effort': 'none'}, False), ({'reasoning_effort': 'max'}, True),
])
def test_deepseek_v41_switches(kwargs: dict[str, Any], thinks: bool) -> None:
    assert DeepSeekV41ReasoningParser(**kwargs).starts_in_reasoning_mode() is thinks


# ---- ReasoningTagIds: the tags as token-id sequences (the vLLM plugin's token helpers) -------------

def test_tag_ids_last_and_tail() -> None:
    from array import array

    from lmparse.token_ids import ReasoningTagIds

    tags = ReasoningTagIds([(1,), (5, 6, 7)], [(2,), (8, 9), (2,)])
    assert tags.has_close and tags.longest_close == 2
    for ids in ([3, 1, 4, 8, 9, 4], (3, 1, 4, 8, 9, 4), array('q', [3, 1, 4, 8, 9, 4]), array('h', [3, 1, 4, 8, 9, 4])):
        assert tags.last(ids) == (2, 5)
    assert tags.last([5, 6, 7, 4]) == (1, 3)
    assert tags.last([6, 7, 4, 9]) == (0, 0)  # parts of spellings are not tags
    assert tags.last([]) == (0, 0)
    assert tags.close_in_tail([1, 8, 9, 3], 2) and tags.close_in_tail([1, 8, 9], 1)
    assert not tags.close_in_tail([1, 8, 9, 3], 1) and not tags.close_in_tail([2], 0)
    assert tags.count_inside([5, 6, 7, 4, 4, 8, 9, 3]) == 2
    assert tags.count_inside([4, 4, 2, 3], True) == 2
    assert tags.count_inside([4, 8, 4], True) == 3  # 8 alone is no close tag: reasoning
    assert tags.count_inside([1, 4, 4]) == 2
    assert ReasoningTagIds([], []).has_close is False
    assert ReasoningTagIds([], [list(range(40))]).has_close is False  # too long to record
    with pytest.raises(TypeError):
        tags.last(['a'])


def test_tool_tag_that_starts_with_a_newline_is_not_stripped(make_parser: Any) -> None:
    # DeepSeek V4's DSML block opens with '\n\n<｜DSML｜tool_calls>': the newlines are the tag's
    from lmparse.tools.dsml import DSML_TOKEN as D

    block = f'\n\n<{D}tool_calls>\n<{D}invoke name="get_time">\n</{D}invoke>\n</{D}tool_calls>'
    for text, content in (('r</think>' + block, None), ('r</think>\n' + block, None),
                          ('r</think>\n\nHi' + block, 'Hi'), ('r</think>\n\n\n<' + D, '<' + D)):
        for label, chunks in chunkings(text, ('</think>', f'\n\n<{D}tool_calls>')):
            parser = make_parser('granite_thinking_parser', 'deepseek-v4')
            got = reconstruct(parser, stream_flagged(parser, chunks)).key()
            calls = [('get_time', '{}')] if 'tool_calls>' in text else []
            assert got == (content, 'r', calls), (label, chunks, got)
