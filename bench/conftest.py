"""pytest-benchmark suites for lmparse (run: ``pytest bench/``; not part of the default test run).

Each benchmark first checks the streamed reconstruction against the
fixture's expected result, then times parser construction plus the whole
stream. A summary (microseconds per chunk, scaling, memory) is printed at the end.
"""
from __future__ import annotations

from typing import Any

import pytest

# (fixture id, chunk size) -> (chunks, best seconds, median seconds)
STREAM_RESULTS: dict[tuple[str, int], tuple[int, float, float]] = {}
# (dialect, size) -> (chars, best seconds)
SCALING_RESULTS: dict[tuple[str, int], tuple[int, float]] = {}
MEMORY_LINES: list[str] = []
MISSING_DIALECTS: list[str] = []
# bench/test_bench_adversarial.py: one line per (row, chunk size)
ADVERSARIAL_LINES: list[str] = []
# bench/test_compare_peers.py: peer results that differ from a fixture's expected result, or could not run
PEER_LINES: list[str] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    tr = terminalreporter
    if STREAM_RESULTS:
        sizes = sorted({s for _, s in STREAM_RESULTS})
        tr.section('lmparse: microseconds per chunk (construction + stream, best round)')
        tr.write_line(f'{"fixture":<28}' + ''.join(f'{s:>10}' for s in sizes))
        for fid in dict.fromkeys(k[0] for k in STREAM_RESULTS):
            cells = []
            for s in sizes:
                r = STREAM_RESULTS.get((fid, s))
                cells.append(f'{r[1] / r[0] * 1e6:>10.3f}' if r else f'{"-":>10}')
            tr.write_line(f'{fid:<28}' + ''.join(cells))
    if SCALING_RESULTS:
        tr.section('lmparse scaling: ns per character at 16-character chunks')
        for label in dict.fromkeys(k[0] for k in SCALING_RESULTS):
            rows = sorted((n, v) for (lab, n), v in SCALING_RESULTS.items() if lab == label)
            base = rows[0][1][1] / rows[0][1][0]
            for n, (chars, best) in rows:
                per = best / chars
                tr.write_line(f'{label:<14}{chars:>10} chars {per * 1e9:8.2f} ns/char  ({per / base:.2f}x of smallest)')
    if MEMORY_LINES:
        tr.section('lmparse memory')
        for line in MEMORY_LINES:
            tr.write_line(line)
    if ADVERSARIAL_LINES:
        tr.section('lmparse adversarial inputs: CPU ns per character, 10 KB vs 100 KB (full table: python -m bench.adversarial)')
        for line in ADVERSARIAL_LINES:
            tr.write_line(line)
    if PEER_LINES:
        tr.section('vLLM 0.33 / SGLang 0.5.23 vs the expected results (recorded, not failures)')
        for line in PEER_LINES:
            tr.write_line(line)
    if MISSING_DIALECTS:
        tr.section('registered tool / response parsers without benchmark fixtures')
        tr.write_line(', '.join(MISSING_DIALECTS))
