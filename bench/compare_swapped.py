"""Swapped mode vs LMDeploy: µs per chunk of lmparse producing LMDeploy's pydantic types.

Needs LMDeploy 0.18.0's parser modules (``tools/install_oracle.sh``). For every
benchmark fixture LMDeploy 0.18 supports (every dialect it registers, the four
shapes: mixed, args10k, many_strings, long_text) and every chunk size, the same
token-aligned chunks go through LMDeploy's own response parser and through
``lmparse.compat.lmdeploy``'s swapped one, both fed LMDeploy's pydantic request
and configured by name as LMDeploy's server does. Both results are checked
against the fixture's expected result first (a difference of LMDeploy's is
noted), then timed alternately as in ``compare_lmdeploy.py``: a timed run is
parser construction plus the whole stream. Also printed: construction alone::

    PYTHONPATH=. python bench/compare_swapped.py [--sizes 1,4,16,256] [--only qwen3]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.compare_lmdeploy import LMDeploy, measure, ratio_of, stat  # noqa: E402
from bench.fixtures import BenchFixture, load_all  # noqa: E402
from bench.runner import describe_mismatch, make_stream_runner, reconstruct  # noqa: E402

SIZES = (1, 4, 16, 256)


def swapped_class(compat: Any, f: BenchFixture) -> type:
    """The swapped response parser for ``f``, configured through LMDeploy's API (a fresh subclass)."""
    base = compat.ResponseParserManager.get(f.response_parser)
    cls: Any = type(f'Swapped[{f.id}]', (base,), {})
    if f.response_parser != 'gpt-oss':
        cls.reasoning_parser_cls = cls.tool_parser_cls = cls.tokenizer = None
        cls.set_parsers(f.reasoning_parser, f.tool_parser)
    elif 'input_mode' in f.extra:
        cls.input_mode = f.extra['input_mode']
    return cls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sizes', default=','.join(map(str, SIZES)))
    ap.add_argument('--only', default='', help='substring filter on fixture ids (comma separated: any of them)')
    ap.add_argument('--budget', type=float, default=0.3, help='seconds of LMDeploy time per cell')
    ap.add_argument('--min-rounds', type=int, default=3)
    ap.add_argument('--max-rounds', type=int, default=30)
    ap.add_argument('--stat', choices=('paired', 'min', 'median'), default='paired')
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(',') if s]

    lmd = LMDeploy()
    from lmparse.compat import lmdeploy as compat

    only = [o for o in args.only.split(',') if o] or ['']
    fixtures = [f for f in load_all() if any(o in f.id for o in only) and not f.id.split('/')[1].startswith('scaling')]
    fixtures = [f for f in fixtures if lmd.supports(f)]
    print(f'python {sys.version.split()[0]}; swapped lmparse vs lmdeploy 0.18.0; statistic: {args.stat}; '
          'chunks token-aligned (tags whole); a run = construction + whole stream')
    for fid, why in lmd.unsupported.items():
        print(f'  not run: {fid}: {why}')
    header = f'{"fixture":<26}{"chunk":>6}{"chunks":>8}{"swapped µs/chunk":>18}{"LMDeploy µs/chunk":>19}{"ratio":>9}'
    print('\n' + header + '\n' + '-' * len(header))
    ratios: dict[tuple[str, int], float] = {}
    failures: list[str] = []
    construct_rows: list[tuple[str, float, float, float]] = []
    for f in fixtures:
        theirs_cls = lmd.configured(f)
        ours_cls = swapped_class(compat, f)
        req = lmd.request(f)
        for size in sizes:
            chunks = lmd.chunks(f, size)
            ids = lmd.token_ids(f, chunks)
            got = reconstruct(ours_cls, req, chunks, ids)
            if got != f.expected:
                failures.append(f'swapped {f.id}@{size}: {describe_mismatch(got, f.expected)}')
                print(f'{f.id:<26}{size:>6}  swapped result differs from the expected one', flush=True)
                continue
            note = ''
            if reconstruct(theirs_cls, req, chunks, ids) != f.expected:
                note = '  (LMDeploy result differs)'
            a, b = measure(make_stream_runner(ours_cls, req, chunks, ids),
                           make_stream_runner(theirs_cls, req, chunks, ids),
                           args.budget, args.min_rounds, args.max_rounds)
            ta = stat([t for r in a for t in r], args.stat) / len(chunks) * 1e6
            tb = stat(b, args.stat) / len(chunks) * 1e6
            ratios[(f.id, size)] = r = ratio_of(a, b, args.stat)
            print(f'{f.id:<26}{size:>6}{len(chunks):>8}{ta:>18.3f}{tb:>19.3f}{r:>8.1f}x{note}', flush=True)
        a, b = measure(lambda: ours_cls(req), lambda: theirs_cls(req), 0.05, 20, 2000)
        construct_rows.append((f.id, stat([t for r in a for t in r], args.stat) * 1e6, stat(b, args.stat) * 1e6,
                               ratio_of(a, b, args.stat)))

    if ratios:
        ids_ = list(dict.fromkeys(k[0] for k in ratios))
        print('\nratio (LMDeploy time / swapped time), per chunk size')
        print(f'{"fixture":<26}' + ''.join(f'{s:>9}' for s in sizes))
        for fid in ids_:
            print(f'{fid:<26}' + ''.join(f'{ratios[(fid, s)]:>8.1f}x' if (fid, s) in ratios else f'{"-":>9}'
                                         for s in sizes))
        worst = min(ratios.items(), key=lambda kv: kv[1])
        print(f'min ratio {worst[1]:.1f}x at {worst[0][0]} / {worst[0][1]}; geometric mean '
              f'{math.exp(statistics.fmean(math.log(r) for r in ratios.values())):.1f}x')
    if construct_rows:
        print('\nparser construction alone (prebuilt LMDeploy request), µs')
        for fid, ta, tb, r in construct_rows:
            print(f'  {fid:<26}swapped {ta:7.2f}   LMDeploy {tb:7.2f}   ratio {r:5.1f}x')
    for line in failures:
        print('FAILED', line)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
