"""The engines' real OpenAI streaming paths with a stub engine: no parser, the engine's parsers, lmparse's plugin.

For every available engine (``bench/serving_vllm.py``, ``bench/serving_sglang.py``,
``bench/serving_lmdeploy.py``), scenario (:data:`bench.serving_common.SCENARIOS`) and
step size (1, 4 and 16 tokens per engine step), the three configurations of
:mod:`bench.serving_common` stream the same steps of real token ids. Every case's
SSE output is checked first (the floor carries the whole text as content; both parser
configurations carry exactly the scenario's reasoning, content and call). Then the
configurations run in turns, in a new random order each round, and the table reports
per configuration the median over rounds of:

- ``µs/step``: streaming time (from the serving code's first pull of engine output to
  the last SSE frame) divided by the number of engine steps; the serving thread's CPU
  time (``time.thread_time``) unless ``--clock wall``, so that time the thread spends
  descheduled on a busy machine does not count;
- ``above floor``: that minus the floor's, measured in the same round;
- ``setup µs``: from the call into the serving code to its first pull (request set-up
  and parser construction).

and the plugin's ratios to the engine's parsers (``plugin / engine`` per step and above
the floor; below 1 means the plugin is cheaper).

Run from the repository root; vLLM and SGLang with the peers' venv (tools/install_peers.sh),
LMDeploy with its own (tools/install_lmdeploy_serving.sh, whose pydantic/fastapi pins differ)::

    VENV/bin/python bench/serving.py [--engines vllm,sglang] [--rounds 30] [--json out.json]
    LMDEPLOY_VENV/bin/python bench/serving.py --engines lmdeploy

An engine whose packages are missing is reported as skipped, with the reason.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import random
import statistics
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.serving_common import CLOCKS, CONFIGS, SCENARIOS, STEP_SIZES, Case, use_clock  # noqa: E402

ENGINES = ('vllm', 'sglang', 'lmdeploy')


def _engine_module(name: str) -> Any:
    return importlib.import_module(f'bench.serving_{name}')


def measure(module: Any, scenario: str, tokens_per_step: int, rounds: int, rng: random.Random) -> dict[str, Any]:
    cases: dict[str, Case] = {c: module.prepare(scenario, c, tokens_per_step) for c in CONFIGS}
    for case in cases.values():
        case.run()  # warm: first request imports and caches
        case.run()
    steps = cases['none'].steps
    gc.collect()  # once: a collection inside the rounds would leave the next request's caches cold
    per_step: dict[str, list[float]] = {c: [] for c in CONFIGS}
    above: dict[str, list[float]] = {c: [] for c in CONFIGS if c != 'none'}
    setup: dict[str, list[float]] = {c: [] for c in CONFIGS}
    for _ in range(rounds):
        order = list(CONFIGS)
        rng.shuffle(order)
        got = {c: cases[c].run() for c in order}
        floor = got['none'].streaming / steps
        for c, t in got.items():
            per_step[c].append(t.streaming / steps * 1e6)
            setup[c].append(t.setup * 1e6)
            if c != 'none':
                above[c].append((t.streaming / steps - floor) * 1e6)
    med = statistics.median
    row: dict[str, Any] = {'scenario': scenario, 'tokens_per_step': tokens_per_step, 'steps': steps}
    for c in CONFIGS:
        row[c] = {'per_step': med(per_step[c]), 'setup': med(setup[c])}
        if c != 'none':
            row[c]['above_floor'] = med(above[c])
    row['ratio_per_step'] = med(p / e for p, e in zip(per_step['plugin'], per_step['engine']))
    e_above, p_above = med(above['engine']), med(above['plugin'])
    row['ratio_above_floor'] = p_above / e_above if e_above > 0 else float('inf')
    return row


def table(engine: str, rows: list[dict[str, Any]]) -> str:
    head = (f'\n### {engine}\n\n'
            '| scenario | tokens/step | steps | none µs/step | engine µs/step | plugin µs/step '
            '| engine above floor | plugin above floor | plugin/engine per step | plugin/engine above floor '
            '| setup µs none / engine / plugin |\n'
            '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n')
    lines = []
    for r in rows:
        lines.append(
            f"| {r['scenario']} | {r['tokens_per_step']} | {r['steps']} | {r['none']['per_step']:.2f} "
            f"| {r['engine']['per_step']:.2f} | {r['plugin']['per_step']:.2f} "
            f"| {r['engine']['above_floor']:.2f} | {r['plugin']['above_floor']:.2f} "
            f"| {r['ratio_per_step']:.2f} | {r['ratio_above_floor']:.2f} "
            f"| {r['none']['setup']:.0f} / {r['engine']['setup']:.0f} / {r['plugin']['setup']:.0f} |")
    return head + '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--engines', default=','.join(ENGINES))
    ap.add_argument('--scenarios', default=','.join(SCENARIOS))
    ap.add_argument('--steps', default=','.join(map(str, STEP_SIZES)))
    ap.add_argument('--rounds', type=int, default=30)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--clock', choices=sorted(CLOCKS), default='cpu',
                    help="the serving thread's CPU time (default) or wall time")
    ap.add_argument('--json', help='also write the rows here')
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    use_clock(args.clock)
    results: dict[str, list[dict[str, Any]]] = {}
    for engine in args.engines.split(','):
        module = _engine_module(engine)
        why = module.available()
        if why is not None:
            print(f'\n### {module.ENGINE}: skipped ({why})')
            continue
        rows = [measure(module, s, int(n), args.rounds, rng)
                for s in args.scenarios.split(',') for n in args.steps.split(',')]
        results[engine] = rows
        print(table(f'{module.ENGINE} {module.VERSION}', rows), flush=True)
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
