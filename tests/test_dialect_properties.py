"""Chunking invariance for every registered dialect and reasoning configuration.

Configurations come from the registries (``tests/dialect_corpus.py``): each
tool dialect x {no reasoning, each reasoning parser with and without
``enable_thinking=False`` (and ``True`` where it has switches)}, each
reasoning parser alone, and each response parser other than ``default``
(gpt-oss in text mode and in token-id mode). A dialect registered later joins
with no test code.

For each, generated outputs — marker soup (every marker, every proper prefix,
near-misses, JSON escapes, astral characters, CJK), valid outputs built from
the dialect's markers (tool blocks outside and inside reasoning, unknown tool
names, payloads with escapes), and their truncations at any position — are
cut at random positions with empty chunks anywhere, the final call on the
last chunk or on an extra empty chunk. Asserted: chunked == one chunk ==
``parse_complete``; each message carries one channel and the tool flag marks
exactly the tool deltas; identity first with contiguous indices; no exception;
for the valid outputs also the exact calls and the text (content and
reasoning in stream order). Harmony in id mode: any grouping of tokens with a
tokenizer == one token per step == ``parse_complete`` == text mode with the
same ids (the ids decide which pieces are special).

Default run: a fixed number of derandomized examples (repeatable in CI),
each tool dialect with no reasoning, ``default``, its own family's reasoning
parsers and one rotating foreign one (linear in the dialects);
``LMPARSE_SLOW=1`` runs every tool x reasoning pair and many more examples
with random seeds.
"""
from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import dialect_corpus as dc

SLOW = bool(os.environ.get('LMPARSE_SLOW'))
CONFIGS = dc.configs(full=SLOW)
ROUTER = [c for c in CONFIGS if c.kind == 'router']
HARMONY = [c for c in CONFIGS if c.is_harmony]
RESPONSE_TEXT = [c for c in CONFIGS if c.kind == 'response' and c.input_mode != 'ids']
HARMONY_IDS = [c for c in HARMONY if c.input_mode == 'ids']
TEXT_CONFIGS = ROUTER + RESPONSE_TEXT


def _settings(examples: int, slow_examples: int):
    return settings(max_examples=slow_examples if SLOW else examples, deadline=None, derandomize=not SLOW,
                    database=None, suppress_health_check=list(HealthCheck), print_blob=True)


def _ids(configs):
    return [c.id for c in configs]


@st.composite
def chunking(draw, text: str) -> tuple[list[str], bool]:
    n = len(text)
    mode = draw(st.sampled_from(['random', 'random', 'fixed', 'chars']))
    if mode == 'fixed':
        size = draw(st.sampled_from([1, 2, 3, 7, 16]))
        cuts = list(range(size, n, size))
    elif mode == 'chars':
        cuts = list(range(1, n))
    else:
        cuts = draw(st.lists(st.integers(0, n), max_size=min(24, n + 2)))
    empties = draw(st.lists(st.integers(0, len(cuts) + 1), max_size=3))
    flush = draw(st.booleans())
    return dc.split(text, cuts, empties), flush


def _built(cfg: dc.Config, seed: int) -> dc.Built:
    rng = random.Random(seed)
    if cfg.is_harmony:
        return dc.build_harmony_output(rng)
    return dc.build_router_output(cfg, rng)


@pytest.mark.parametrize('cfg', TEXT_CONFIGS, ids=_ids(TEXT_CONFIGS))
def test_marker_soup(cfg: dc.Config) -> None:
    """Markers, every prefix, near-misses and escapes in any order and any chunking."""
    pieces = dc.soup_pieces(cfg)

    @_settings(30, 600)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        text = ''.join(data.draw(st.lists(st.sampled_from(pieces), max_size=30), label='pieces'))
        chunks, flush = data.draw(chunking(text), label='chunking')
        dc.check_text(cfg, text, chunks, flush)

    check()


@pytest.mark.parametrize('cfg', TEXT_CONFIGS, ids=_ids(TEXT_CONFIGS))
def test_valid_outputs(cfg: dc.Config) -> None:
    """Outputs built from the dialect's markers parse to exactly the generated calls and text, in any chunking."""

    @_settings(25, 400)
    @given(seed=st.integers(0, 2**32 - 1), data=st.data())
    def check(seed: int, data: st.DataObject) -> None:
        built = _built(cfg, seed)
        chunks, flush = data.draw(chunking(built.text), label='chunking')
        dc.check_text(cfg, built.text, chunks, flush, built)

    check()


@pytest.mark.parametrize('cfg', ROUTER, ids=_ids(ROUTER))
def test_marker_text_in_values_and_reasoning(cfg: dc.Config) -> None:
    """Issue 27: the dialect's own markers written inside values, content and reasoning stay text."""
    vocab = dc.marker_text_vocabulary(cfg)

    @_settings(25, 400)
    @given(seed=st.integers(0, 2**32 - 1), data=st.data())
    def check(seed: int, data: st.DataObject) -> None:
        built = dc.build_router_output(cfg, random.Random(seed), vocab)
        chunks, flush = data.draw(chunking(built.text), label='chunking')
        dc.check_text(cfg, built.text, chunks, flush, built)

    check()


def _one_token_tags(cfg: dc.Config) -> bool:
    """Reasoning parsers whose tags are several special tokens (Gemma 4's ``<|channel>thought``,
    Kimi K3's ``<|open|>think<|sep|>``) reject a tokenizer holding each tag as one token: ids
    confirm only one-token tags, so those run in the text lanes only."""
    if cfg.reasoning_cls is None:
        return True
    try:
        cfg.reasoning_cls.validate_tokenizer(dc.tag_tokenizer(cfg))
    except RuntimeError:
        return False
    return True


MARKER_ID_CONFIGS = [c for c in ROUTER if dc._grammar(c.tool_cls) is None and dc._grammar(c.reasoning_cls) is None
                     and _one_token_tags(c)]


@pytest.mark.parametrize('cfg', MARKER_ID_CONFIGS, ids=_ids(MARKER_ID_CONFIGS))
def test_marker_text_with_token_ids(cfg: dc.Config) -> None:
    """Issue 27 with token ids: the reasoning tags and the tool-open tag written as ordinary tokens
    (not their special token) in content and reasoning stay text; structural ones arrive as ids."""
    tok = dc.tag_tokenizer(cfg)
    vocab = dc.marker_text_vocabulary(cfg, quoted_tags=tok.tags)

    @_settings(15, 300)
    @given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(0, 9), min_size=1, max_size=8),
           flush=st.booleans())
    def check(seed: int, sizes: list[int], flush: bool) -> None:
        dc.check_tag_ids(cfg, dc.build_router_output(cfg, random.Random(seed), vocab), sizes, flush)

    check()


@pytest.mark.parametrize('cfg', TEXT_CONFIGS, ids=_ids(TEXT_CONFIGS))
def test_truncations(cfg: dc.Config) -> None:
    """A valid output cut at any position (end of input inside any marker or value)."""

    @_settings(20, 400)
    @given(seed=st.integers(0, 2**32 - 1), data=st.data())
    def check(seed: int, data: st.DataObject) -> None:
        text = _built(cfg, seed).text
        text = text[:data.draw(st.integers(0, len(text)), label='cut')]
        chunks, flush = data.draw(chunking(text), label='chunking')
        dc.check_text(cfg, text, chunks, flush)

    check()


@pytest.mark.parametrize('cfg', TEXT_CONFIGS, ids=_ids(TEXT_CONFIGS))
def test_every_truncation_of_one_output(cfg: dc.Config) -> None:
    """Deterministic sweep: one valid output per config, cut at every position, one chunk vs 1-char chunks."""
    built = _built(cfg, 20)
    for cut in range(len(built.text) + 1):
        text = built.text[:cut]
        dc.check_text(cfg, text, list(text) or [''], flush=cut % 2 == 1)


@pytest.mark.parametrize('cfg', ROUTER, ids=_ids(ROUTER))
def test_marker_free_text_is_kept(cfg: dc.Config) -> None:
    """Text with no marker character is returned whole (content, or reasoning when output starts in it)."""

    @_settings(10, 200)
    @given(text=st.text(st.characters(blacklist_characters='<>|｜[]\\{}"', blacklist_categories=('Cs',)),
                        min_size=1, max_size=40), data=st.data())
    def check(text: str, data: st.DataObject) -> None:
        chunks, flush = data.draw(chunking(text))
        dc.check_text(cfg, text, chunks, flush)
        parser = dc.new_parser(cfg)
        want = text
        if getattr(cfg.reasoning_cls, 'inline_reasoning', False) and parser.mode == 'reasoning':
            want = cfg.reasoning_cls.get_reasoning_open_tag() + text  # inline: the prompt's open tag, written
        got = dc.run_stream(parser, [(c, []) for c in chunks], flush)
        assert got.visible == want, (cfg.id, text, chunks)

    check()


@pytest.mark.parametrize('cfg', HARMONY_IDS, ids=_ids(HARMONY_IDS))
def test_harmony_token_ids(cfg: dc.Config) -> None:
    """Harmony id mode: any token grouping (empty steps included), ids decide what is special."""

    @_settings(80, 1500)
    @given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(0, 9), min_size=1, max_size=12),
           flush=st.booleans(), truncate=st.booleans(), data=st.data())
    def check(seed, sizes, flush, truncate, data) -> None:
        built = dc.build_harmony_output(random.Random(seed))
        tokens = built.tokens
        if truncate:
            tokens = tokens[:data.draw(st.integers(0, len(tokens)))]
        dc.check_harmony_ids(cfg, tokens, sizes, flush, None if truncate else built)

    check()


@pytest.mark.parametrize('cfg', HARMONY_IDS, ids=_ids(HARMONY_IDS))
def test_harmony_token_ids_soup(cfg: dc.Config) -> None:
    """Harmony id mode over marker soup tokenized by its specials."""
    pieces = dc.soup_pieces(cfg)

    @_settings(60, 1000)
    @given(parts=st.lists(st.sampled_from(pieces), max_size=30), seed=st.integers(0, 1000),
           sizes=st.lists(st.integers(0, 9), min_size=1, max_size=12), flush=st.booleans())
    def check(parts, seed, sizes, flush) -> None:
        tokens = dc.harmony_tokens(''.join(parts), random.Random(seed))
        dc.check_harmony_ids(cfg, tokens, sizes, flush)

    check()


# Issue 20 item 3: with token ids present, a body or argument whose text spells a
# special token as ordinary tokens must stay text (the ids decide).
@pytest.mark.parametrize('cfg', HARMONY_IDS, ids=_ids(HARMONY_IDS))
def test_harmony_literal_specials_with_ids(cfg: dc.Config) -> None:
    @_settings(40, 800)
    @given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12),
           flush=st.booleans())
    def check(seed, sizes, flush) -> None:
        built = dc.build_harmony_output(random.Random(seed), literal_specials=True)
        dc.check_harmony_ids(cfg, built.tokens, sizes, flush, built)

    check()


BLOCK_TOOLS = [c for c in ROUTER if c.reasoning is None and c.tool and c.tool_cls.get_tool_close_tag()]


@pytest.mark.parametrize('cfg', BLOCK_TOOLS, ids=_ids(BLOCK_TOOLS))
def test_newline_between_two_blocks_is_dropped(cfg: dc.Config) -> None:
    """BRIEF: newlines between two tool blocks are dropped once the next open tag is confirmed."""
    block = None
    for seed in range(50):
        built = dc.build_block(cfg.tool_cls, random.Random(seed))
        if built and any(n in dc.OFFERED for n, _ in built[1]):
            block = built[0]
            break
    assert block is not None
    for sep in ('\n', '\n\n'):
        got = dc.run_complete(dc.new_parser(cfg), block + sep + block)
        assert got.content is None, (cfg.id, sep, got.key())


def test_every_registered_dialect_is_covered() -> None:
    """The lane really discovers by registration (and would fail if a registry went missing)."""
    from lmparse import ReasoningParserManager, ResponseParserManager, ToolParserManager

    def shipped(manager):  # other test modules register their own example dialects at run time
        # 'hf' / 'response_template' are dialects only once a tokenizer's template configures them
        return {manager.get(n) for n in manager.names() if manager.get(n).__module__.startswith('lmparse.')
                and not getattr(manager.get(n), 'from_tokenizer', False)}

    tools = {c.tool_cls for c in ROUTER if c.tool}
    assert tools >= shipped(ToolParserManager)
    reasonings = {c.reasoning_cls for c in ROUTER if c.reasoning}
    assert reasonings >= shipped(ReasoningParserManager)
    assert {c.response for c in CONFIGS if c.kind == 'response'} == set(ResponseParserManager.names()) - {'default'}
    assert any(c.input_mode == 'ids' for c in HARMONY) and any(c.input_mode == 'text' for c in HARMONY)


def test_invariant_checker_can_fail() -> None:
    """The checker rejects a wrong tool flag, a missing identity and a chunking difference."""
    from lmparse.protocol import DeltaFunctionCall, DeltaMessage, DeltaToolCall

    with pytest.raises(dc.InvariantError):
        dc._check_messages([(DeltaMessage(role='assistant', content='x'), True)])
    with pytest.raises(dc.InvariantError):
        dc._check_identity([DeltaToolCall(index=0, function=DeltaFunctionCall(arguments='{}'))])
    with pytest.raises(dc.InvariantError):
        dc._check_identity([DeltaToolCall(index=1, id='a', type='function', function=DeltaFunctionCall(name='f'))])

    cfg = ROUTER[0]
    built = dc.Built('x', calls=[], visible='y')
    with pytest.raises(dc.InvariantError):
        dc.check_oracle(cfg, dc.Result('x', None, [], 'x'), built)


@pytest.mark.parametrize('cfg', HARMONY_IDS, ids=_ids(HARMONY_IDS))
def test_harmony_replacement_character_with_tokenizer(cfg: dc.Config) -> None:
    """Text that really holds U+FFFD is placed by the tokenizer like any other (found by this lane)."""
    S = dc.HARMONY_SPECIAL_TOKEN_IDS
    tokens = [('l', -1, False), ('<|start|>', S['<|start|>'], True), ('\ufffd', -1, False),
              ('<|message|>', S['<|message|>'], True), ('o', -1, False)]
    dc.check_harmony_ids(cfg, tokens, [1], False)
