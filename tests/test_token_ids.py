"""``delta_token_ids`` as engines hold them: lists, tuples, ``array.array``, numpy arrays, memoryviews, ranges.

Every parser that reads ids (Harmony's segmentation and reasoning counts, the
router's reasoning-token counting) gets the same result from every
representation as from a list, over every chunking; non-integer ids and
multi-dimensional buffers are a ``TypeError``.
"""
from __future__ import annotations

import array
import random
from collections.abc import Callable
from typing import Any

import pytest

import lmparse.token_ids as token_ids_module
from lmparse import BaseResponseParser, GptOssResponseParser, ResponseParserManager
from lmparse.token_ids import read_token_ids
from tests.conftest import THINK_CLOSE_ID, THINK_OPEN_ID
from tests.streaming import calls_of, make_request, reconstruct, stream_flagged
from tests.test_harmony import CASES, TOKENIZER, id_chunks, text_chunks, token_groups
from tests.test_harmony_literal_markers import LITERAL_CASES, grouped, ids_of, lagged, text_of

np = pytest.importorskip('numpy')

Converter = Callable[[list[int]], Any]


class Ids:
    """A generic sequence of ints (no buffer, not a list): converted once."""

    def __init__(self, ids: list[int]) -> None:
        self._ids = ids

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i: int) -> int:
        return self._ids[i]


def _strided(ids: list[int]) -> Any:
    wide = np.zeros(2 * len(ids), dtype=np.int64)
    wide[::2] = ids
    return wide[::2]  # a non-contiguous view


CONVERTERS: dict[str, Converter] = {
    'list': list,
    'tuple': tuple,
    'generic-sequence': Ids,
    'iterator': iter,
    'numpy-int64': lambda ids: np.array(ids, dtype=np.int64),
    'numpy-int32': lambda ids: np.array(ids, dtype=np.int32),
    'numpy-uint32': lambda ids: np.array(ids, dtype=np.uint32),
    'numpy-big-endian': lambda ids: np.array(ids, dtype='>i4'),
    'numpy-strided': _strided,
    'numpy-reversed-twice': lambda ids: np.array(ids[::-1], dtype=np.int64)[::-1],
    'numpy-tolist': lambda ids: np.array(ids, dtype=np.int64).tolist(),
    'numpy-scalars-in-list': lambda ids: list(np.array(ids, dtype=np.int64)),
    'memoryview': lambda ids: memoryview(array.array('q', ids)),
    **{f'array-{code}': (lambda code: lambda ids: array.array(code, ids))(code) for code in 'ilqILQ'},
}
SMALL_CONVERTERS: dict[str, Converter] = {  # ids that fit 8 and 16 bits
    **{f'array-{code}': (lambda code: lambda ids: array.array(code, ids))(code) for code in 'hHbB'},
    'numpy-uint8': lambda ids: np.array(ids, dtype=np.uint8),
    'numpy-int16-big-endian': lambda ids: np.array(ids, dtype='>i2'),
    'bytes': bytes,
}


def test_compiled_module_loaded() -> None:
    assert token_ids_module.__file__.endswith(('.so', '.pyd'))


@pytest.mark.parametrize('name', list(CONVERTERS))
def test_reader_reads_every_representation(name: str) -> None:
    ids = [200005, 17196, 200008, 1100, 200007, 0, 7]
    assert read_token_ids(CONVERTERS[name](ids)) == ids
    assert read_token_ids(CONVERTERS[name]([])) == []


@pytest.mark.parametrize('name', list(SMALL_CONVERTERS))
def test_reader_reads_narrow_integers(name: str) -> None:
    ids = [0, 1, 100, 127]
    assert read_token_ids(SMALL_CONVERTERS[name](ids)) == ids


def test_reader_signs_and_widths() -> None:
    assert read_token_ids(array.array('b', [-1, -128])) == [-1, -128]
    assert read_token_ids(np.array([-2, 70000], dtype='>i4')) == [-2, 70000]
    assert read_token_ids(np.array([-3], dtype='>i2')) == [-3]
    assert read_token_ids(np.array([2**63 - 1], dtype=np.uint64)) == [2**63 - 1]
    assert read_token_ids(range(3)) == [0, 1, 2]
    assert read_token_ids(None) == []
    assert read_token_ids([True, np.int32(5)]) == [1, 5]


@pytest.mark.parametrize('bad,message', [
    ([1.5], 'integers, got float'),
    ([1, 'a'], 'integers, got str'),
    ('abc', 'not str'),
    (5, 'not int'),
    (np.array([1.0, 2.0]), "format 'd'"),
    (np.array([True]), "format '?'"),
    (np.zeros((2, 2), dtype=np.int32), '2-dimensional'),
    (np.array(3), '0-dimensional'),
])
def test_reader_rejects_non_integer_ids(bad: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        read_token_ids(bad)


def test_reader_rejects_ids_out_of_range() -> None:
    with pytest.raises(OverflowError):
        read_token_ids(np.array([2**64 - 1], dtype=np.uint64))
    with pytest.raises(OverflowError):
        read_token_ids([2**70])


# ---- Harmony ------------------------------------------------------------------------------------


def test_issue_repro_numpy_ids_in_gpt_oss() -> None:
    parser = ResponseParserManager.get('gpt-oss')(make_request())
    out = parser.stream_chunk('', np.array([200005, 17196, 200008, 1100, 200007]), final=True)
    assert out == [] and parser.input_mode_in_use == 'ids'


def _harmony(mode: str = 'auto', tokenizer: Any = None) -> Any:
    return GptOssResponseParser.with_parsers(tokenizer=tokenizer, input_mode=mode)(make_request())


def _converted(chunks: list[tuple[str, list[int]]], convert: Converter) -> list[tuple[str, Any]]:
    return [(text, convert(ids)) for text, ids in chunks]


def _streamed(parser: Any, chunks: list[tuple[str, Any]]) -> tuple[Any, Any, Any]:
    return reconstruct(parser, stream_flagged(parser, chunks)).key()


HARMONY_CASES = [c for c in CASES if c.id in ('several-tools', 'specials-inside-body', 'truncated-arguments')]


@pytest.mark.parametrize('name', list(CONVERTERS))
@pytest.mark.parametrize('case', HARMONY_CASES, ids=[c.id for c in HARMONY_CASES])
def test_harmony_every_representation_every_grouping(case: Any, name: str) -> None:
    convert = CONVERTERS[name]
    rng = random.Random(name)
    for builder, mode, tokenizer in ((id_chunks, 'ids', TOKENIZER), (text_chunks, 'auto', None)):
        for sizes in ([1], [3], [256], [rng.randint(1, 9) for _ in range(12)]):
            chunks = builder(token_groups(case.text, sizes))
            expected_parser = _harmony(mode, tokenizer)
            expected = _streamed(expected_parser, chunks)
            assert expected == case.expected
            parser = _harmony(mode, tokenizer)
            assert _streamed(parser, _converted(chunks, convert)) == expected, (builder.__name__, sizes)
            assert parser.reasoning_tokens == expected_parser.reasoning_tokens
    full = TOKENIZER.encode(case.text)
    reference = _harmony()
    content, calls, reasoning = reference.parse_complete(case.text, full)
    assert (content, reasoning, calls_of(calls)) == case.expected
    parser = _harmony()
    content, calls, reasoning = parser.parse_complete(case.text, convert(full))
    assert (content, reasoning, calls_of(calls)) == case.expected
    assert parser.reasoning_tokens == reference.reasoning_tokens


@pytest.mark.parametrize('name', ['numpy-int64', 'numpy-strided', 'memoryview', 'array-I', 'tuple', 'iterator'])
@pytest.mark.parametrize('case', LITERAL_CASES, ids=[c.id for c in LITERAL_CASES])
def test_literal_markers_with_every_representation(case: Any, name: str) -> None:
    convert = CONVERTERS[name]
    rng = random.Random(case.id + name)
    for chunks in (grouped(case.text, [2]), grouped(case.text, [256]), lagged(case.text, rng), lagged(case.text, rng)):
        assert _streamed(_harmony(), _converted(chunks, convert)) == case.expected
    content, calls, reasoning = _harmony().parse_complete(text_of(case.text), convert(ids_of(case.text)))
    assert (content, reasoning, calls_of(calls)) == case.expected


def test_harmony_rejects_non_integer_ids() -> None:
    for bad in ([1.5], np.array([200005.0]), np.zeros((1, 2), dtype=np.int64), 'abc'):
        with pytest.raises(TypeError):
            _harmony().stream_chunk('x', bad)
    parser = _harmony()  # a parser that raised keeps working on valid input
    with pytest.raises(TypeError):
        parser.stream_chunk('', [200005, 'x'])
    assert parser.stream_chunk('', np.array([], dtype=np.int64)) is not None


# ---- reasoning-token counting in the router ------------------------------------------------------


def _reasoning_parser(fake_tokenizer: Any) -> Any:
    return BaseResponseParser.with_parsers('default', 'qwen3', tokenizer=fake_tokenizer)(make_request())


STEPS = [
    ('<think>', [THINK_OPEN_ID]),
    ('\nabc', [10, 11]),
    ('<tool_call>', [151657]),
    ('\n{"name": "get_time"}\n', [12, 13, 14]),
    ('</tool_call>', [151658]),
    ('\nmore', [15]),
    ('</think>', [THINK_CLOSE_ID]),
    ('\n\nanswer', [16, 17]),
]


@pytest.mark.parametrize('name', list(CONVERTERS))
def test_reasoning_tokens_from_every_representation(fake_tokenizer: Any, name: str) -> None:
    convert = CONVERTERS[name]
    expected_parser = _reasoning_parser(fake_tokenizer)
    expected = reconstruct(expected_parser, stream_flagged(expected_parser, STEPS)).key()
    assert expected_parser.reasoning_tokens == 8
    parser = _reasoning_parser(fake_tokenizer)
    assert reconstruct(parser, stream_flagged(parser, _converted(STEPS, convert))).key() == expected
    assert parser.reasoning_tokens == 8
    # Every regrouping of the same (text, ids) stream, and one chunk through parse_complete.
    text = ''.join(t for t, _ in STEPS)
    ids = [i for _, g in STEPS for i in g]
    for size in (1, 2, 3, 5):
        chunks = [(''.join(t for t, _ in STEPS[k:k + size]), [i for _, g in STEPS[k:k + size] for i in g])
                  for k in range(0, len(STEPS), size)]
        parser = _reasoning_parser(fake_tokenizer)
        assert reconstruct(parser, stream_flagged(parser, _converted(chunks, convert))).key() == expected
        assert parser.reasoning_tokens == 8
    parser = _reasoning_parser(fake_tokenizer)
    parser.parse_complete(text, convert(ids))
    assert parser.reasoning_tokens == 8


def test_reasoning_counting_rejects_non_integer_ids(fake_tokenizer: Any) -> None:
    with pytest.raises(TypeError):
        _reasoning_parser(fake_tokenizer).stream_chunk('a', [1.0])
    with pytest.raises(TypeError):
        _reasoning_parser(fake_tokenizer).stream_chunk('a', np.ones((2, 2), dtype=np.int64))


def test_empty_arrays_are_no_ids(fake_tokenizer: Any) -> None:
    parser = _reasoning_parser(fake_tokenizer)
    assert parser.stream_chunk('', np.array([], dtype=np.int32)) == []  # no delta, as for []
    assert _harmony().stream_chunk('', np.array([], dtype=np.int64)) == []


def test_chat_runner_accepts_any_id_representation() -> None:
    from lmparse.runner import ChatRunner
    cls = BaseResponseParser.with_parsers('default', 'qwen3')
    runner = ChatRunner(cls({'model': 'm', 'messages': []}), emit_metadata_only=True)
    assert runner.feed("a", np.array([1, 2, 3]))
    assert runner.feed('b', iter([4, 5]), finish_reason='stop')[-1].finish_reason == 'stop'
    assert runner.completion_tokens == 5


def test_reasoning_token_count_for_python_callers() -> None:
    """The vLLM plugin's reasoning-token count: ids between the tags, from lists and buffers."""
    import array

    from lmparse.token_ids import reasoning_token_count

    assert reasoning_token_count([1, 5, 6, 2, 7], 1, 2) == 2
    assert reasoning_token_count([5, 6, 2, 7, 1, 8], 1, 2, True) == 3  # starts inside, opens again
    assert reasoning_token_count([5, 6, 2], None, 2, True) == 2
    assert reasoning_token_count([5, 6], 1, None, True) == 0  # no close id: nothing is counted
    assert reasoning_token_count(array.array('q', [1, 5, 2]), 1, 2) == 1
