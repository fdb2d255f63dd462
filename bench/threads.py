"""Many-threads stress run and thread scaling (free-threaded CPython is the point).

Every thread streams its share of ``--responses`` whole responses: each one
looks its configured class up through the shared class caches
(``with_parsers``), builds its own parser and request, streams the fixture's
text in 16-character chunks and checks the rebuilt (content, reasoning, calls)
against the fixture's known result. What threads share is module state only
(class caches, registries, interned markers), as in a server.

On a free-threaded build the run fails unless the GIL is still off after
importing lmparse and every module of the package that imports without its
engine (vLLM, SGLang, LMDeploy), and still off after the run.

    python bench/threads.py                          # 10^5 responses on 1 and 2 threads
    python bench/threads.py --threads 1,2,4,8 --responses 20000

The scaling figure is throughput(N threads) / throughput(1 thread) for the
same number of responses; on a GIL build it stays near 1 or below.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import sysconfig
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ''):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fixtures import BenchFixture, char_chunks, load_all  # noqa: E402
from bench.runner import lmparse_class, lmparse_request, reconstruct  # noqa: E402

CHUNK = 16
# Short fixtures: many responses of a realistic size rather than a few huge ones.
MAX_TEXT = 3_000
# The engines lmparse plugs into: a module that fails to import for want of one is skipped.
ENGINES = ('vllm', 'sglang', 'lmdeploy', 'xgrammar', 'torch', 'transformers')


def free_threaded() -> bool:
    return bool(sysconfig.get_config_var('Py_GIL_DISABLED'))


def gil_enabled() -> bool:
    return sys._is_gil_enabled() if hasattr(sys, '_is_gil_enabled') else True


def import_everything() -> tuple[list[str], dict[str, str]]:
    """Import lmparse and every submodule; returns (imported, {skipped: missing engine}).

    A module may be skipped only when what it lacks is one of ENGINES.
    """
    import lmparse

    imported, skipped = ['lmparse'], {}
    for info in pkgutil.walk_packages(lmparse.__path__, 'lmparse.'):
        if info.name == 'lmparse.__main__':  # runs the CLI on import
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as err:
            missing = (err.name or '').split('.')[0]
            if missing not in ENGINES:
                raise
            skipped[info.name] = missing
        else:
            imported.append(info.name)
    return imported, skipped


@dataclass
class Work:
    fixture: BenchFixture
    chunks: list[str]


def workload() -> list[Work]:
    return [Work(f, char_chunks(f.text, CHUNK)) for f in load_all() if len(f.text) <= MAX_TEXT]


@dataclass
class Result:
    threads: int
    responses: int
    seconds: float
    cpu_seconds: float           # the process's CPU time over the run: cpu/wall = cores kept busy
    chunks: int
    mismatches: list[str]

    @property
    def per_second(self) -> float:
        return self.responses / self.seconds


def run(work: Sequence[Work], threads: int, responses: int) -> Result:
    """Stream ``responses`` responses split over ``threads`` threads; every result is checked."""
    barrier = threading.Barrier(threads + 1)
    errors: list[BaseException] = []
    mismatches: list[str] = []
    counts = [0] * threads

    def worker(k: int) -> None:
        try:
            # Each thread its own requests (built once, as a server builds one per response).
            requests: dict[str, Any] = {w.fixture.id: lmparse_request(w.fixture) for w in work}
            mine = range(k, responses, threads)
            barrier.wait()
            n_chunks = 0
            for i in mine:
                w = work[i % len(work)]
                cls = lmparse_class(w.fixture)  # the shared class cache, looked up per response
                got = reconstruct(cls, requests[w.fixture.id], w.chunks)
                n_chunks += len(w.chunks)
                if got != w.fixture.expected:
                    mismatches.append(f'thread {k} response {i}: {w.fixture.id}')
                    return
            counts[k] = n_chunks
        except BaseException as err:  # reported by the caller
            errors.append(err)
            barrier.abort()

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    t0, c0 = time.perf_counter(), time.process_time()
    for t in pool:
        t.join()
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    if errors:
        raise errors[0]
    return Result(threads, responses, seconds, cpu, sum(counts), mismatches)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--responses', type=int, default=100_000)
    ap.add_argument('--threads', default='1,2', help='comma-separated thread counts (default: 1,2)')
    ap.add_argument('--require-free-threaded', action='store_true',
                    help='fail unless this is a free-threaded build')
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.threads.split(',')]

    ft = free_threaded()
    if args.require_free_threaded and not ft:
        print('not a free-threaded build', file=sys.stderr)
        return 2
    imported, skipped = import_everything()
    print(f'{sys.version.splitlines()[0]} ({"free-threaded" if ft else "GIL"} build, '
          f'{len(imported)} lmparse modules imported'
          + (f'; without their engine: {", ".join(f"{m} ({e})" for m, e in sorted(skipped.items()))}' if skipped else '')
          + ')')
    if ft and gil_enabled():
        print('FAILED: the GIL is enabled after importing lmparse', file=sys.stderr)
        return 1

    work = workload()
    print(f'{len(work)} fixtures (<= {MAX_TEXT} characters) in {CHUNK}-character chunks; '
          f'{args.responses} responses per run')
    run(work, 1, min(len(work), args.responses))  # warm the class caches and lazy imports
    results = []
    for n in counts:
        r = run(work, n, args.responses)
        results.append(r)
        base = results[0].per_second
        print(f'threads={n:<3} {r.seconds:8.2f} s  {r.per_second:10.0f} responses/s  '
              f'{r.chunks / r.seconds:11.0f} chunks/s  cpu/wall {r.cpu_seconds / r.seconds:4.2f}  '
              f'x{r.per_second / base:.2f} vs {counts[0]} thread(s)'
              + (f'  MISMATCHES: {r.mismatches[:3]}' if r.mismatches else ''))
    failed = any(r.mismatches for r in results)
    if ft and gil_enabled():
        print('FAILED: the GIL was enabled during the run', file=sys.stderr)
        failed = True
    if ft:
        print('GIL still disabled after the run')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
