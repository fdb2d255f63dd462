"""Opt-in (LMPARSE_VLLM=1, the peers venv): the vLLM reasoning parsers' token-id helpers.

``is_reasoning_end`` / ``is_reasoning_end_streaming`` / ``extract_content_ids`` /
``count_reasoning_tokens`` with tags that arrive as one special token or as several
ordinary ones (MiniMax M3's ``</mm:think>``: vLLM 0.33's ``minimax_m3_reasoning_parser.py``).
"""
from __future__ import annotations

import os
import random
import string
from typing import Any

import pytest

if os.environ.get('LMPARSE_VLLM') != '1':
    pytest.skip('opt-in: set LMPARSE_VLLM=1 (needs vllm==0.33.0: tools/install_peers.sh)', allow_module_level=True)
pytest.importorskip('vllm')

from lmparse.integrations import vllm as integ  # noqa: E402
from tests.streaming import chunkings  # noqa: E402

OPEN, CLOSE = '<mm:think>', '</mm:think>'


class CharTokenizer:
    """One id per character; ``atomic``: the tags are one token each when encoded."""

    def __init__(self, atomic: bool) -> None:
        self.atomic = atomic
        self.vocab = {OPEN: 1, CLOSE: 2}
        for ch in string.printable:
            self.vocab[ch] = len(self.vocab) + 1
        self.inverse = {v: k for k, v in self.vocab.items()}

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        out, i = [], 0
        while i < len(text):
            tag = next((t for t in (OPEN, CLOSE) if self.atomic and text.startswith(t, i)), None)
            out.append(self.vocab[tag or text[i]])
            i += len(tag or text[i])
        return out

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return ''.join(self.inverse[i] for i in ids)


def parser(tokenizer: Any, **ctk: Any) -> Any:
    cls = integ._reasoning_class('minimax_m3', engine=True)
    return cls(tokenizer, chat_template_kwargs=ctk) if ctk else cls(tokenizer)


@pytest.mark.parametrize('atomic', [True, False])
def test_id_helpers(atomic: bool) -> None:
    tok = CharTokenizer(atomic)
    p = parser(tok)
    ids = tok.encode(OPEN + 'abc' + CLOSE + 'def')
    open_only = tok.encode(OPEN + 'abc')
    plain = tok.encode('plain')
    assert p.is_reasoning_end(ids)
    assert not p.is_reasoning_end(open_only) and not p.is_reasoning_end(plain)
    assert not p.is_reasoning_end(ids + tok.encode(OPEN + 'x'))
    assert tok.decode(p.extract_content_ids(ids)) == 'def'
    assert p.extract_content_ids(open_only) == []
    assert p.extract_content_ids(plain) == plain  # starts as content
    assert p.count_reasoning_tokens(ids) == 3
    assert p.count_reasoning_tokens(tok.encode('x' + OPEN + 'ab' + CLOSE + 'y' + OPEN + 'c')) == 3


@pytest.mark.parametrize('atomic', [True, False])
def test_id_helpers_starting_in_reasoning(atomic: bool) -> None:
    tok = CharTokenizer(atomic)
    p = parser(tok, thinking_mode='enabled')
    assert p.extract_content_ids(tok.encode('abc')) == []
    assert p.count_reasoning_tokens(tok.encode('abc' + CLOSE + 'de')) == 3
    assert p.count_reasoning_tokens(tok.encode('abc')) == 3


@pytest.mark.parametrize('atomic', [True, False])
def test_ids_only_streaming_end(atomic: bool) -> None:
    # vLLM's structured-output reasoner: ids only, never fed text; a close tag split over steps counts
    tok = CharTokenizer(atomic)
    ids = tok.encode(OPEN + 'ab' + CLOSE + 'c')
    end = len(tok.encode(OPEN + 'ab' + CLOSE))
    for step in (1, 2, 3, 100):
        p = parser(tok)
        seen = []
        for i in range(0, len(ids), step):
            if p.is_reasoning_end_streaming(ids[:i + step], ids[i:i + step]):
                seen.append(min(i + step, len(ids)))
        assert seen and seen[0] == min(len(ids), -(-end // step) * step), step


TEXTS = [
    (OPEN + 'Reasoning content' + CLOSE + 'content', {}, 'Reasoning content', 'content'),
    (CLOSE + 'answer', {}, None, 'answer'),
    ('plain answer', {}, None, 'plain answer'),
    ('plan' + CLOSE + 'answer', {'thinking_mode': 'enabled'}, 'plan', 'answer'),
]


@pytest.mark.parametrize('atomic', [True, False])
@pytest.mark.parametrize('text,ctk,reasoning,content', TEXTS)
def test_streaming_end_state(atomic: bool, text: str, ctk: dict[str, Any], reasoning: str | None,
                             content: str | None) -> None:
    tok = CharTokenizer(atomic)
    rng = random.Random(5)
    for label, chunks in chunkings(text, (OPEN, CLOSE), n_random=6):
        chunks = [c for chunk in chunks for c in ([''] * rng.randint(0, 1) + [chunk])]
        p = parser(tok, **ctk)
        got_r, got_c, prev_text, prev_ids = [], [], '', []
        for chunk in chunks:
            delta_ids = tok.encode(chunk)
            cur_ids = prev_ids + delta_ids
            delta = p.extract_reasoning_streaming(prev_text, prev_text + chunk, chunk, prev_ids, cur_ids, delta_ids)
            if delta is not None:
                got_r.append(delta.reasoning or '')
                got_c.append(delta.content or '')
            ended = p.is_reasoning_end_streaming(cur_ids, delta_ids)
            # reasoning is over exactly when content began or the close tag was read
            text_so_far = prev_text + chunk
            over = (''.join(got_c) != '' or CLOSE in text_so_far) and (OPEN not in text_so_far or CLOSE in text_so_far)
            assert ended is over, (label, chunks, chunk)
            prev_text, prev_ids = text_so_far, cur_ids
        final = p.finish_streaming()
        if final is not None:
            got_r.append(final.reasoning or '')
            got_c.append(final.content or '')
        assert (''.join(got_r) or None, ''.join(got_c) or None) == (reasoning, content), (label, chunks)


def test_content_ids_of_the_streamed_chunk() -> None:
    # a close tag the runtime split into characters: the chunk's content ids are found by its text
    tok = CharTokenizer(atomic=False)
    p = parser(CharTokenizer(atomic=True))
    p.model_tokenizer = tok
    prev = OPEN + 'Reasoning'
    prev_ids = tok.encode(prev)
    delta_ids = tok.encode(CLOSE + 'content')
    p.extract_reasoning_streaming('', prev, prev, [], prev_ids, prev_ids)
    p.extract_reasoning_streaming(prev, prev + CLOSE + 'content', CLOSE + 'content', prev_ids,
                                  prev_ids + delta_ids, delta_ids)
    assert p.is_reasoning_end_streaming(prev_ids + delta_ids, delta_ids)
    assert tok.decode(p.extract_content_ids(delta_ids)) == 'content'
