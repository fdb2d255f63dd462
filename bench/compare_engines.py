"""Engines' own parsers vs their lmparse-backed plugins, inside each engine's own stream processor (opt-in).

    tools/install_peers.sh /work/scratch/peers-venv      # vLLM 0.33 / SGLang 0.5.23 parser layers, CPU torch
    python setup.py build_ext --inplace -j2              # lmparse, in this checkout
    /work/scratch/peers-venv/bin/python bench/compare_engines.py [--only qwen3,glm47] [--sizes 1,4,16,256]
        [--scaling 10000,100000,1000000] [--budget 0.3] [--no-scaling]

Every ``bench/engine_<name>.py`` whose ``available()`` is true is measured (the contract:
``ENGINE``, ``available()``, ``measure(fixture, chunk_size, budget)`` and
``construct(fixture, budget)``, each returning microseconds for 'engine' = the engine's own
parser in its stream processor, 'plugin' = the lmparse-backed plugin in the same processor,
'lmparse' = bare lmparse). Printed per engine: microseconds per chunk at 1, 4, 16 and 256
characters on each dialect's 'mixed' fixture; the scaling table (10 KB / 100 KB / 1 MB
argument payloads at 16-character chunks, ``bench.fixtures.SCALING``); construction per
request; and the plugin's overhead over bare lmparse. 'nan' = that side does not parse the
format, 'inf' = one stream took longer than the engine module's limit (not timed further).
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from collections.abc import Sequence
from types import ModuleType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.fixtures import SCALING, SCALING_CHUNK, SCALING_SIZES, BenchFixture, load_all  # noqa: E402

ENGINE_MODULES = ('bench.engine_vllm', 'bench.engine_sglang')
KEYS = ('engine', 'plugin', 'lmparse')


def engines() -> tuple[list[ModuleType], list[str]]:
    found, notes = [], []
    for name in ENGINE_MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError as err:
            notes.append(f'{name}: not importable ({err})')
            continue
        if mod.available():
            found.append(mod)
        else:
            notes.append(f'{mod.ENGINE}: not installed at the pinned version (tools/install_peers.sh)')
    return found, notes


def fmt(v: float | None, width: int = 10) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return f'{"-":>{width}}'
    if math.isinf(v):
        return f'{"timeout":>{width}}'
    return f'{v:>{width}.2f}' if v < 1000 else f'{v:>{width}.0f}'


def ratio(a: float, b: float) -> str:
    if any(math.isnan(x) or math.isinf(x) for x in (a, b)) or b <= 0:
        return f'{"-":>9}'
    return f'{a / b:>8.1f}x'


def safe(fn, *args) -> dict[str, float] | str:  # type: ignore[no-untyped-def]
    try:
        return fn(*args)
    except Exception as err:  # an engine that cannot run this fixture says why; the table goes on
        return f'{type(err).__name__}: {str(err)[:120]}'


HEADER = (f'{"":<30}{"chunk":>7}{"engine us":>10}{"plugin us":>10}{"lmparse us":>11}'
          f'{"eng/plugin":>11}{"plugin-lmp":>11}')


def row(label: str, size: int | str, r: dict[str, float]) -> str:
    over = r['plugin'] - r['lmparse'] if not any(math.isnan(r[k]) or math.isinf(r[k]) for k in ('plugin', 'lmparse')) \
        else float('nan')
    return (f'{label:<30}{size:>7}' + fmt(r['engine']) + fmt(r['plugin']) + fmt(r['lmparse'], 11)
            + f'{ratio(r["engine"], r["plugin"]):>11}' + fmt(over, 11))


def per_chunk(mod: ModuleType, fixtures: Sequence[BenchFixture], sizes: Sequence[int], budget: float) -> list[str]:
    notes = []
    print(f'\n{mod.ENGINE}: microseconds per chunk inside its stream processor (best stream; parsers built untimed)')
    print(HEADER)
    overheads: list[float] = []
    for f in fixtures:
        for size in sizes:
            r = safe(mod.measure, f, size, budget)
            if isinstance(r, str):
                notes.append(f'{f.id}@{size}: {r}')
                break
            if all(math.isnan(r[k]) for k in ('engine', 'plugin')) and math.isnan(r['plugin']):
                break
            if not math.isnan(r['plugin']) and not math.isinf(r['plugin']):
                overheads.append(r['plugin'] - r['lmparse'])
            print(row(f.id, size, r), flush=True)
    if overheads:
        overheads.sort()
        print(f'  plugin overhead over bare lmparse, us per chunk: median {overheads[len(overheads) // 2]:.2f}, '
              f'min {overheads[0]:.2f}, max {overheads[-1]:.2f}')
    return notes


def scaling(mod: ModuleType, labels: Sequence[str], sizes: Sequence[int], budget: float) -> list[str]:
    notes = []
    print(f'\n{mod.ENGINE}: scaling, microseconds per {SCALING_CHUNK}-character chunk by argument payload size')
    print(HEADER.replace('chunk', ' chars'))
    for label in labels:
        for n in sizes:
            f = SCALING[label](n)
            r = safe(mod.measure, f, SCALING_CHUNK, budget)
            if isinstance(r, str):
                notes.append(f'{f.id}: {r}')
                break
            if all(math.isnan(r[k]) for k in ('engine', 'plugin')):
                break
            print(row(label, f'{len(f.text) // 1000}k', r), flush=True)
    return notes


def construction(mod: ModuleType, fixtures: Sequence[BenchFixture], budget: float) -> list[str]:
    notes = []
    print(f'\n{mod.ENGINE}: microseconds per request to build its parser (+ stream processor for the engine sides)')
    print(f'{"":<30}{"engine":>10}{"plugin":>10}{"lmparse":>11}')
    for f in fixtures:
        r = safe(mod.construct, f, budget)
        if isinstance(r, str):
            notes.append(f'{f.id} construction: {r}')
            continue
        if all(math.isnan(r[k]) for k in ('engine', 'plugin')):
            continue
        print(f'{f.id:<30}' + fmt(r['engine']) + fmt(r['plugin']) + fmt(r['lmparse'], 11), flush=True)
    return notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--only', default='', help='dialect labels (fixture id prefixes), comma separated')
    ap.add_argument('--kind', default='mixed', help="fixture kind for the per-chunk table (default 'mixed')")
    ap.add_argument('--sizes', default='1,4,16,256')
    ap.add_argument('--scaling', default=','.join(map(str, SCALING_SIZES)))
    ap.add_argument('--no-scaling', action='store_true')
    ap.add_argument('--budget', type=float, default=0.3, help='seconds per measurement (split over the three sides)')
    args = ap.parse_args(argv)
    only = [o for o in args.only.split(',') if o]
    mods, notes = engines()
    for line in notes:
        print(line)
    if not mods:
        print('compare_engines: no engine available; nothing measured')
        return 0
    fixtures = [f for f in load_all() if f.kind == args.kind and (not only or f.id.split('/')[0] in only)]
    labels = [k for k in SCALING if not only or k in only]
    sizes = [int(s) for s in args.sizes.split(',') if s]
    scaling_sizes = [int(s) for s in args.scaling.split(',') if s]
    print(f'python {sys.version.split()[0]}; engines: ' + ', '.join(m.ENGINE for m in mods))
    for mod in mods:
        problems = per_chunk(mod, fixtures, sizes, args.budget)
        if not args.no_scaling:
            problems += scaling(mod, labels, scaling_sizes, args.budget)
        problems += construction(mod, fixtures, args.budget)
        for line in problems:
            print(f'  {mod.ENGINE} not run: {line}')
        seen = set()
        for fid, size, side, why in getattr(mod, 'NOTES', ()):
            if (fid, side, why) not in seen:
                seen.add((fid, side, why))
                print(f'  {mod.ENGINE} {side} not timed on {fid} (first at {size}): {why}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
