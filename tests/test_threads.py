"""Many threads, each with its own parsers, give exactly the single-threaded results.

Parsers are per response and never shared; what threads do share is module
state (per-class caches, registries, interned markers). On a free-threaded
CPython build this runs truly in parallel; on a GIL build a tiny switch
interval interleaves the threads inside every parser call.
"""
from __future__ import annotations

import os
import random
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bench.fixtures import BenchFixture, char_chunks, load_all
from bench.runner import lmparse_class, lmparse_request, reconstruct

THREADS = 8
ROUNDS = 4


def _fixtures() -> list[BenchFixture]:
    # Short fixtures only: the point is interleaving, not volume.
    return [f for f in load_all() if len(f.text) <= 3_000]


def _chunkings(text: str, rng: random.Random) -> Iterator[list[str]]:
    for size in (1, 7, 256):
        yield char_chunks(text, size)
    cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, 12)))
    yield [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]  # empty chunks included


def _run_all(fixtures: list[BenchFixture], seed: int) -> list[Any]:
    rng = random.Random(seed)
    out = []
    for fixture in fixtures:
        # Each thread builds its own configured classes too (class creation races with construction).
        cls = lmparse_class(fixture)
        request = lmparse_request(fixture)
        for chunks in _chunkings(fixture.text, rng):
            out.append((fixture.id, reconstruct(cls, request, chunks)))
    return out


def test_threads_match_single_threaded() -> None:
    fixtures = _fixtures()
    assert fixtures
    expected = {seed: _run_all(fixtures, seed) for seed in range(THREADS)}
    by_id = {f.id: f for f in fixtures}
    for results in expected.values():
        for fid, got in results:
            assert got == by_id[fid].expected, fid

    errors: list[BaseException] = []
    mismatches: list[str] = []
    barrier = threading.Barrier(THREADS)

    def worker(seed: int) -> None:
        try:
            barrier.wait()
            for _ in range(ROUNDS):
                got = _run_all(fixtures, seed)
                if got != expected[seed]:
                    bad = next(i for i, (a, b) in enumerate(zip(got, expected[seed])) if a != b)
                    mismatches.append(f'thread {seed}: {got[bad][0]} differs')
                    return
        except BaseException as err:  # reported below, with the thread's seed
            errors.append(err)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert not any(t.is_alive() for t in threads), 'a worker thread hung'
    finally:
        sys.setswitchinterval(old)
    if errors:
        raise errors[0]
    assert not mismatches, mismatches


@pytest.mark.skipif(not hasattr(sys, '_is_gil_enabled'), reason='CPython < 3.13 has no free-threaded build')
def test_gil_stays_off_when_free_threaded() -> None:
    """Importing lmparse must not re-enable the GIL on a free-threaded build (every extension declares it).

    Every module of the package is imported, integrations included; only one whose
    engine (vLLM, SGLang, LMDeploy) is not installed may fail, and only for that.
    """
    import sysconfig

    if not sysconfig.get_config_var('Py_GIL_DISABLED'):
        pytest.skip('not a free-threaded build')
    from bench.threads import import_everything

    imported, _ = import_everything()
    assert 'lmparse.compat.lmdeploy' in imported
    assert not sys._is_gil_enabled()


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get('LMPARSE_SLOW'), reason='10^5-response thread stress run: LMPARSE_SLOW=1')
def test_stress_many_threads() -> None:
    """10^5 responses over 8 threads, each with its own parsers and requests, sharing the class caches.

    bench/threads.py is the same run from the command line, with the 1 -> N thread scaling figure.
    """
    from bench.threads import free_threaded, gil_enabled, import_everything, run, workload

    import_everything()
    work = workload()
    assert len(work) >= 50
    result = run(work, THREADS, 100_000)
    assert not result.mismatches, result.mismatches[:5]
    if free_threaded():
        assert not gil_enabled()
