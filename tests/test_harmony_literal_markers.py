"""GPT-OSS in text mode with token ids: the ids decide which tag text is a special token.

With ``skip_special_tokens=False`` the special tokens appear in ``delta_text``
as their tag text, and a tool argument or a reasoning text may hold the same
characters (``<|call|>``, ``<|end|>``, ``<|channel|>``) written as ordinary
tokens. Here a case spells such a literal as ``[[<|call|>]]``: its text is the
tag, its ids are ordinary 3-character pieces, while a bare tag is the real
special id (200012 for ``<|call|>`` ...). Every case runs over one chunk,
``parse_complete``, token groupings of fixed and random sizes, and chunkings
where the text lags the ids (an engine holding back text) with empty steps
anywhere and final on an empty step. Without ids, text mode reads tag text as
tags (unchanged).

Not covered, by design (``lmparse.harmony_ids``): without a tokenizer a literal
that reproduces the real sequence exactly (``[[<|end|>]][[<|start|>]]`` inside
a body that the real ``<|end|><|start|>`` ends) is taken for the real one.
"""
from __future__ import annotations

import random
import re
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse.harmony import HARMONY_SPECIAL_TOKEN_IDS
from tests.streaming import stream_flagged
from tests.test_harmony import CASES, SLOW, TOKENIZER, WEATHER_ARGS, Case, complete_result, new_parser, run

_PIECE_RE = re.compile(r'(\[\[.*?\]\]|' + '|'.join(re.escape(t) for t in HARMONY_SPECIAL_TOKEN_IDS) + ')', re.S)

Token = tuple[str, int]


def tokens_of(spec: str) -> list[Token]:
    """(text, id) per token: bare tags are specials, ``[[...]]`` and the rest ordinary pieces."""
    out: list[Token] = []
    for part in _PIECE_RE.split(spec):
        if not part:
            continue
        if part in HARMONY_SPECIAL_TOKEN_IDS:
            out.append((part, HARMONY_SPECIAL_TOKEN_IDS[part]))
            continue
        if part.startswith('[['):
            part = part[2:-2]
        for i in range(0, len(part), 3):
            piece = part[i:i + 3]
            out.append((piece, TOKENIZER.encode(piece)[0] if piece not in HARMONY_SPECIAL_TOKEN_IDS
                        else TOKENIZER._ordinary(piece)))
    return out


def text_of(spec: str) -> str:
    return ''.join(t for t, _ in tokens_of(spec))


def ids_of(spec: str) -> list[int]:
    return [i for _, i in tokens_of(spec)]


def grouped(spec: str, sizes: list[int]) -> list[tuple[str, list[int]]]:
    toks = tokens_of(spec)
    out, i, k = [], 0, 0
    while i < len(toks):
        group = toks[i:i + sizes[k % len(sizes)]]
        out.append((''.join(t for t, _ in group), [tid for _, tid in group]))
        i += len(group)
        k += 1
    return out


def lagged(spec: str, rng: random.Random, first_text: bool = True) -> list[tuple[str, list[int]]]:
    """Ids cut anywhere; the text cut anywhere not ahead of its ids; empty steps anywhere.

    ``first_text``: the first step carries some text. Auto mode decides at the first special id
    whether the specials are in the text: a first step of ids alone reads as token-id mode.
    """
    toks = tokens_of(spec)
    ends = [0]
    for t, _ in toks:
        ends.append(ends[-1] + len(t))
    text = ''.join(t for t, _ in toks)
    chunks, i, shown = [], 0, 0
    while i < len(toks) or shown < len(text):
        j = min(len(toks), i + rng.choice((1, 2, 3, 5) if not chunks else (0, 1, 1, 2, 3, 5)))
        upto = rng.randint(shown, ends[j]) if rng.random() < 0.5 else ends[j]
        if first_text and not chunks:
            upto = max(upto, 1)
        chunks.append((text[shown:upto], [tid for _, tid in toks[i:j]]))
        i, shown = j, upto
        if rng.random() < 0.1:
            chunks.append(('', []))
    return chunks


ARGS = '{"q": "stop at [[<|call|>]] or [[<|end|>]], then [[<|channel|>]]final [[<|return|>]]."}'
ARGS_TEXT = '{"q": "stop at <|call|> or <|end|>, then <|channel|>final <|return|>."}'

LITERAL_CASES = [
    Case('literal-markers-in-arguments',
         '<|channel|>analysis<|message|>Search.<|end|>'
         '<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>' + ARGS + '<|call|>',
         None, 'Search.', [('search', ARGS_TEXT)]),
    Case('literal-call-right-before-the-real-one',
         '<|channel|>commentary to=functions.search <|constrain|>json<|message|>{"q": "[[<|call|>]]"}[[<|call|>]]<|call|>',
         None, None, [('search', '{"q": "<|call|>"}<|call|>')]),
    Case('literal-call-then-another-call',
         '<|channel|>commentary to=functions.search <|constrain|>json<|message|>{"q": "[[<|call|>]]"}<|call|>'
         '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
         + WEATHER_ARGS + '<|call|>',
         None, None, [('search', '{"q": "<|call|>"}'), ('get_weather', WEATHER_ARGS)]),
    Case('literal-end-in-reasoning-then-final',
         '<|channel|>analysis<|message|>[[<|end|>]] ends a message; write [[<|end|>]] then [[<|start|>]] twice.<|end|>'
         '<|start|>assistant<|channel|>final<|message|>Use [[<|return|>]] last.<|return|>',
         'Use <|return|> last.', '<|end|> ends a message; write <|end|> then <|start|> twice.', []),
    Case('literal-channel-in-reasoning',
         '<|channel|>analysis<|message|>a [[<|channel|>]]final [[<|message|>]]b<|end|>'
         '<|start|>assistant<|channel|>final<|message|>ok<|return|>',
         'ok', 'a <|channel|>final <|message|>b', []),
    Case('literal-only-body',
         '<|channel|>final<|message|>[[<|return|>]]<|return|>',
         '<|return|>', None, []),
]
LITERAL_IDS = [c.id for c in LITERAL_CASES]
MODES = ('auto', 'text')


@pytest.mark.parametrize('case', LITERAL_CASES, ids=LITERAL_IDS)
def test_literal_markers_one_chunk_and_complete(case: Case) -> None:
    text, ids = text_of(case.text), ids_of(case.text)
    for mode in MODES:
        assert complete_result(case, text, ids, mode=mode) == case.expected, mode
        assert run(case, [(text, ids)], mode=mode).key() == case.expected, mode
        assert run(case, [(text, ids)], mode=mode, flush=True).key() == case.expected, mode


@pytest.mark.parametrize('case', LITERAL_CASES, ids=LITERAL_IDS)
def test_literal_markers_token_groupings(case: Case) -> None:
    for mode in MODES:
        for size in (1, 2, 3, 4, 5, 7, 16, 256):
            chunks = grouped(case.text, [size])
            assert run(case, chunks, mode=mode).key() == case.expected, (mode, size)
            assert run(case, chunks, mode=mode, flush=True).key() == case.expected, (mode, size)
        rng = random.Random(case.id)
        for _ in range(10):
            sizes = [rng.randint(1, 9) for _ in range(20)]
            assert run(case, grouped(case.text, sizes), mode=mode).key() == case.expected, (mode, sizes)


@pytest.mark.parametrize('case', LITERAL_CASES + CASES, ids=LITERAL_IDS + [c.id for c in CASES])
def test_text_lagging_ids(case: Case) -> None:
    """Text and ids cut at different places (the text never ahead of its ids): the one-chunk result."""
    text, ids = text_of(case.text), ids_of(case.text)
    if case.id == 'no-harmony-structure':
        return  # no special id: auto never leaves text scanning; covered by test_harmony
    expected = complete_result(case, text, ids)
    assert expected == case.expected
    rng = random.Random(case.id)
    for _ in range(30 if SLOW else 12):
        chunks = lagged(case.text, rng)
        assert run(case, chunks).key() == expected, chunks
        chunks = lagged(case.text, rng, first_text=False)
        assert run(case, chunks, mode='text', flush=True).key() == expected, chunks


@settings(max_examples=400 if SLOW else 60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(LITERAL_CASES), seed=st.integers(0, 2**32), mode=st.sampled_from(MODES))
def test_literal_markers_random_lagged_chunkings(case: Case, seed: int, mode: str) -> None:
    chunks = lagged(case.text, random.Random(seed), first_text=mode == 'auto')
    assert run(case, chunks, mode=mode).key() == case.expected


def test_one_token_per_step_streams_without_holding_ordinary_text() -> None:
    """Ordinary text with no special id pending is emitted at once, even when it looks like a tag."""
    case = LITERAL_CASES[-1]
    parser = new_parser(case)
    parser.stream_chunk('<|channel|>', [HARMONY_SPECIAL_TOKEN_IDS['<|channel|>']])
    parser.stream_chunk('final', TOKENIZER.encode('final'))
    parser.stream_chunk('<|message|>', [HARMONY_SPECIAL_TOKEN_IDS['<|message|>']])
    out = parser.stream_chunk('<|ret', TOKENIZER.encode('<|r') + TOKENIZER.encode('et'))
    assert [m.content for m, _ in out] == ['<|ret']
    assert parser.input_mode_in_use == 'text'


def test_without_ids_text_mode_reads_tag_text_as_tags() -> None:
    case = LITERAL_CASES[0]
    content, tool_calls, reasoning = new_parser(case, mode='text').parse_complete(text_of(case.text))
    assert tool_calls is not None and tool_calls[0].function.arguments == '{"q": "stop at '


def test_reasoning_tokens_with_literal_markers() -> None:
    case = LITERAL_CASES[3]
    parser = new_parser(case)
    stream_flagged(parser, grouped(case.text, [2]))
    body = '[[<|end|>]] ends a message; write [[<|end|>]] then [[<|start|>]] twice.'
    assert parser.reasoning_tokens == len(tokens_of(body))


