"""Qwen3's ``<tool_call>`` inside reasoning read as the end of reasoning when no tool parser runs
(``call_open_tag`` on the ``qwen3`` reasoning dialect, ``call_ends_reasoning`` on the response class:
the vLLM plugin's replace mode), and nowhere else.

Source: vLLM 0.33's ``vllm/parser/qwen3.py`` (its ``(REASONING, TOOL_START)`` transition: Qwen3.5 and
Qwen3-Coder call tools without closing ``</think>``; its reasoning parser alone hands ``<tool_call>``
and what follows to the tool parser) and ``tests/reasoning/test_qwen3_reasoning_parser.py``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from lmparse import BaseResponseParser
from lmparse.dialects.qwen import Qwen3ReasoningParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager
from tests.conftest import THINK_CLOSE_ID, TOOL_OPEN_ID
from tests.streaming import (
    case_checks, chunkings, complete, make_request, reconstruct, stream_flagged, token_chunks, with_empty_chunks,
)

CALL = '<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n</function>\n</tool_call>'
TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>', '<function=', '</parameter>')

_CLASSES: dict[tuple[Any, ...], Any] = {}


def call_ends_class(tool: str | None = None, tokenizer: Any = None, call_ends: bool = True) -> Any:
    key = (tool, id(tokenizer), call_ends)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = _CLASSES[key] = BaseResponseParser.with_parsers('qwen3', tool, tokenizer)
        cls.call_ends_reasoning = call_ends
    return cls


@dataclass
class Case:
    id: str
    text: str
    expected: tuple[Any, Any, Any]
    kwargs: dict[str, Any] = field(default_factory=dict)
    call_ends: bool = True

    def parser(self, make_parser: Any = None, tokenizer: Any = None) -> Any:
        fields = {'chat_template_kwargs': self.kwargs} if self.kwargs else {}
        return call_ends_class(None, tokenizer, self.call_ends)(make_request(None, **fields))


CASES = [
    # vLLM's cases: no </think>, with or without the open tag
    Case('no-think-end', 'I need to read the file.\n\n' + CALL, (CALL, 'I need to read the file.\n\n', [])),
    Case('open-tag-no-end', '<think>I need to read the file.\n\n' + CALL, (CALL, 'I need to read the file.\n\n', [])),
    Case('call-first', CALL, (CALL, None, [])),
    Case('call-cut-short', 'plan<tool_call>\n<function=ba', ('<tool_call>\n<function=ba', 'plan', [])),
    # well-formed output: after </think> a call is content anyway
    Case('after-close', 'r</think>Hi ' + CALL, ('Hi ' + CALL, 'r', [])),
    Case('closed-no-call', '<think>r</think>answer', ('answer', 'r', [])),
    # the tag written as text inside a closed reasoning block: reasoning ends there, as vLLM reads it;
    # what follows is content as written (vLLM also drops the </think>; lmparse keeps the text whole)
    Case('tag-as-text-in-closed-reasoning', '<think>I could use <tool_call> here</think>Answer',
         ('<tool_call> here</think>Answer', 'I could use ', [])),
    # after the end every marker is text: reasoning tags inside a value are the value's
    Case('markers-in-value', 'r ' + CALL.replace('cat /etc/hosts', 'echo </think><think> done'),
         (CALL.replace('cat /etc/hosts', 'echo </think><think> done'), 'r ', [])),
    Case('second-call', 'r' + CALL + '\n' + CALL, (CALL + '\n' + CALL, 'r', [])),
    # a prefix of the tag at the end is reasoning text
    Case('cut-tag-at-end', 'plan <tool_', (None, 'plan <tool_', [])),
    Case('near-tag-is-text', 'plan <tool_cal> x</think>y', ('y', 'plan <tool_cal> x', [])),
    # thinking off: content throughout
    Case('thinking-off', 'Hi ' + CALL, ('Hi ' + CALL, None, []), {'enable_thinking': False}),
    # not asked for (lmparse-<name>, LMDeploy): the call markup stays reasoning text
    Case('default-keeps-reasoning', 'I need to read the file.\n\n' + CALL,
         (None, 'I need to read the file.\n\n' + CALL, []), call_ends=False),
    Case('default-tag-as-text', '<think>I could use <tool_call> here</think>Answer',
         ('Answer', 'I could use <tool_call> here', []), call_ends=False),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
def test_random_chunkings_with_empty_chunks(case: Case) -> None:
    rng = random.Random(11)
    for label, chunks in chunkings(case.text, TAGS, seed=5, n_random=8):
        parser = case.parser()
        chunks = with_empty_chunks(chunks, rng)
        assert reconstruct(parser, stream_flagged(parser, chunks)).key() == case.expected, (label, chunks)


class _Vocab:
    """The real tokenizer's ids of the Qwen tags (held as one token each) as a ``get_vocab``."""

    def __init__(self, tokenizer: Any) -> None:
        self._vocab = {tag: tokenizer.encode(tag)[0] for tag in ('<think>', '</think>', '<tool_call>', '</tool_call>')}
        assert all(len(tokenizer.encode(tag)) == 1 for tag in self._vocab)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)


_VOCABS: dict[int, _Vocab] = {}


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
def test_real_token_stream(case: Case, qwen_tokenizer: Any) -> None:
    # the tags arrive as their special tokens, confirmed by id against the class's tokenizer
    chunks = token_chunks(qwen_tokenizer, case.text)
    vocab = _VOCABS.setdefault(id(qwen_tokenizer), _Vocab(qwen_tokenizer))
    for tokenizer in (None, vocab):
        parser = case.parser(tokenizer=tokenizer)
        assert reconstruct(parser, stream_flagged(parser, chunks)).key() == case.expected, tokenizer


def test_tag_not_sent_as_its_token_is_text(fake_tokenizer: Any) -> None:
    cls = call_ends_class(None, fake_tokenizer)
    parser = cls(make_request(None))
    chunks = [('plan ', [1]), ('<tool_call>', [7, 8, 9]), (' more', [2]), ('</think>', [THINK_CLOSE_ID]), ('a', [1])]
    assert reconstruct(parser, stream_flagged(parser, chunks)).key() == ('a', 'plan <tool_call> more', [])
    parser = cls(make_request(None))
    chunks = [('plan ', [1]), ('<tool_call>', [TOOL_OPEN_ID]), (' more', [2])]
    assert reconstruct(parser, stream_flagged(parser, chunks)).key() == ('<tool_call> more', 'plan ', [])


def test_reasoning_tokens_stop_at_the_call(fake_tokenizer: Any) -> None:
    parser = call_ends_class(None, fake_tokenizer)(make_request(None))
    stream_flagged(parser, [('a', [1]), ('b', [2]), ('<tool_call>', [TOOL_OPEN_ID]), ('c', [1]), ('d', [2])])
    assert parser.reasoning_tokens == 3  # counted per chunk before it is read: the tag's chunk counts
    assert parser.mode == 'plain'


@pytest.mark.parametrize('chunks', [[CALL], list(CALL)])
def test_with_a_tool_parser_the_call_is_parsed_inside_reasoning(chunks: list[str]) -> None:
    # the declaration only matters without a tool parser: with one, reasoning resumes after the block
    text = 'plan ' + ''.join(chunks) + 'more</think>answer'
    parser = call_ends_class('qwen3_coder')(make_request(['bash']))
    got = reconstruct(parser, stream_flagged(parser, ['plan '] + chunks + ['more</think>answer'])).key()
    assert got == ('answer', 'plan more', [('bash', '{"command": "cat /etc/hosts"}')]), text
    assert complete(call_ends_class('qwen3_coder')(make_request(['bash'])), text).key() == got


def test_declarations() -> None:
    assert ReasoningParserManager.get('qwen3') is Qwen3ReasoningParser
    assert ReasoningParserManager.get('qwen3-thinking') is Qwen3ReasoningParser
    assert Qwen3ReasoningParser.call_open_tag == '<tool_call>'
    assert ReasoningParser.call_open_tag is None
    assert BaseResponseParser.call_ends_reasoning is False
    # the default protocol declares no such tag: the class switch alone changes nothing
    cls = BaseResponseParser.with_parsers('default', None)
    cls.call_ends_reasoning = True
    assert complete(cls(make_request(None)), 'a' + CALL).key() == (None, 'a' + CALL, [])


def test_bad_declaration_is_a_typed_error() -> None:
    bad = type('BadReasoning', (Qwen3ReasoningParser,), {'call_open_tag': ''})
    ReasoningParserManager.register_module('test-bad-call-open-tag', module=bad)
    try:
        cls = BaseResponseParser.with_parsers('test-bad-call-open-tag', None)
        cls.call_ends_reasoning = True
        with pytest.raises(TypeError, match='call_open_tag'):
            cls(make_request(None))
    finally:
        ReasoningParserManager.module_dict.pop('test-bad-call-open-tag', None)
