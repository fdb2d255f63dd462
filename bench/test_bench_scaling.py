"""Linear cost: 10 KB, 100 KB and 1 MB arguments at 16-character chunks."""
from __future__ import annotations

import pytest

from bench.conftest import SCALING_RESULTS
from bench.fixtures import SCALING, SCALING_CHUNK, SCALING_SIZES, char_chunks, load_all
from bench.runner import describe_mismatch, lmparse_class, lmparse_request, make_stream_runner, reconstruct, time_once

load_all()


@pytest.mark.parametrize('n_chars', SCALING_SIZES)
@pytest.mark.parametrize('label', sorted(SCALING))
def test_scaling(benchmark, label: str, n_chars: int) -> None:
    fixture = SCALING[label](n_chars)
    cls, request = lmparse_class(fixture), lmparse_request(fixture)
    chunks = char_chunks(fixture.text, SCALING_CHUNK)
    got = reconstruct(cls, request, chunks)
    assert got == fixture.expected, describe_mismatch(got, fixture.expected)

    run = make_stream_runner(cls, request, chunks)
    benchmark.group = f'scaling {label}'
    benchmark.extra_info.update(chunks=len(chunks), chars=len(fixture.text))
    rounds = max(3, min(50, int(0.5 / max(time_once(run), 1e-7))))
    benchmark.pedantic(run, rounds=rounds, iterations=1)
    if benchmark.stats is not None:  # None under --benchmark-disable
        SCALING_RESULTS[(label, n_chars)] = (len(fixture.text), benchmark.stats.stats.min)
