"""Construction + whole stream at 1/4/8/16/256-character chunks, for every registered fixture."""
from __future__ import annotations

import pytest

from bench.conftest import STREAM_RESULTS
from bench.fixtures import CHUNK_SIZES, BenchFixture, char_chunks, load_all
from bench.runner import describe_mismatch, lmparse_class, lmparse_request, make_stream_runner, reconstruct, time_once

FIXTURES = load_all()


def _rounds(seconds: float, budget: float = 0.25) -> int:
    return max(5, min(300, int(budget / max(seconds, 1e-7))))


@pytest.mark.parametrize('size', CHUNK_SIZES)
@pytest.mark.parametrize('fixture', FIXTURES, ids=lambda f: f.id)
def test_stream(benchmark, fixture: BenchFixture, size: int) -> None:
    cls, request = lmparse_class(fixture), lmparse_request(fixture)
    # Character chunks: tags may be cut anywhere (the harder case for lmparse).
    chunks = char_chunks(fixture.text, size)
    got = reconstruct(cls, request, chunks)
    assert got == fixture.expected, describe_mismatch(got, fixture.expected)

    run = make_stream_runner(cls, request, chunks)
    benchmark.group = fixture.id
    benchmark.extra_info.update(chunks=len(chunks), chars=len(fixture.text), chunk_size=size)
    benchmark.pedantic(run, rounds=_rounds(time_once(run)), iterations=1, warmup_rounds=1)
    if benchmark.stats is not None:  # None under --benchmark-disable
        stats = benchmark.stats.stats
        STREAM_RESULTS[(fixture.id, size)] = (len(chunks), stats.min, stats.median)
