"""How long deriving a dialect from a chat template takes (server start-up cost), and that it is deterministic.

    python bench/derive_templates.py [--rounds N] [--json] [TEMPLATE ...]

Default templates: tests/data/templates/*.jinja and channels/*.jinja (written
for the tests in the families' shapes). Each is derived ``--rounds`` times from scratch (no cache:
compile, render every synthetic turn under every thinking setting, infer,
prove at 1, 4, 16 characters and whole); reported are the best and median
wall time, the renderings proved, and whether every round gave the same
declarations and the same printed module. Refused templates report the part
and the reason.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lmparse.templates import TemplateDerivationError, load_chat_template  # noqa: E402
from lmparse.templates import _derive  # noqa: E402

TEMPLATES = ROOT / 'tests' / 'data' / 'templates'


def measure(path: Path, rounds: int) -> dict[str, Any]:
    times: list[float] = []
    outcomes: set[str] = set()
    row: dict[str, Any] = {'template': path.name}
    for _ in range(rounds):
        tpl = load_chat_template(path)  # a fresh ChatTemplate: compiled again, nothing cached
        t0 = time.perf_counter()
        try:
            dialect = _derive.derive_dialect(tpl)
        except TemplateDerivationError as err:
            times.append(time.perf_counter() - t0)
            outcomes.add(f'refused ({err.part}): {err.reason}')
            continue
        times.append(time.perf_counter() - t0)
        summary = dialect.summary()
        outcomes.add(json.dumps(summary, sort_keys=True, ensure_ascii=False) + dialect.python_source('x'))
        row['family'] = summary['tool_calls']['family'] if summary['tool_calls'] else '-'
        row['reasoning'] = (f"{summary['reasoning']['open']}…{summary['reasoning']['close']}".replace('\n', '\\n')
                            if summary['reasoning'] else '-')
        row['renderings'] = summary['proved_on']['renderings']
    only = next(iter(outcomes))
    if only.startswith('refused'):
        row['refused'] = only
    row.update({'best_ms': min(times) * 1e3, 'median_ms': statistics.median(times) * 1e3,
                'deterministic': len(outcomes) == 1})
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('templates', nargs='*', type=Path,
                    help='templates (default: tests/data/templates/*.jinja and channels/*.jinja)')
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--json', action='store_true')
    args = ap.parse_args(argv)
    paths = args.templates or sorted(TEMPLATES.glob('*.jinja')) + sorted((TEMPLATES / 'channels').glob('*.jinja'))
    rows = [measure(p, args.rounds) for p in paths]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
    else:
        print(f'{"template":34} {"best ms":>8} {"median":>8}  {"det.":4}  {"proved":6}  result')
        for r in rows:
            result = r.get('refused') or f"{r['family']}, reasoning {r['reasoning']}"
            print(f"{r['template']:34} {r['best_ms']:8.1f} {r['median_ms']:8.1f}  "
                  f"{'yes' if r['deterministic'] else 'NO':4}  {r.get('renderings', '-'):>6}  {result[:110]}")
    return 0 if all(r['deterministic'] for r in rows) else 1


if __name__ == '__main__':
    sys.exit(main())
