#!/usr/bin/env python3
"""The vLLM suite lane: vLLM 0.33.0's own parser tests, run twice — vLLM's parsers, then lmparse in replace mode.

No vLLM test file is in this repository: the sdist is fetched with pip at run time into a cache
(``$LMPARSE_VLLM_CACHE``, default ``~/.cache/lmparse/vllm-sdist``) and its ``tests/`` tree extracted
beside it (without vLLM's root ``tests/conftest.py``, which starts the GPU engine stack; the parser
tests use none of its fixtures). The runs load ``tests/integrations/vllm_suite/lmparse_vllm_lane.py``
(``-p lmparse_vllm_lane``), which puts lmparse's classes in place in lmparse mode, serves the hub
tokenizers the tests name from offline copies where one fits, and marks the tests listed in
``tests/integrations/vllm_suite/differences.toml`` xfail(strict) in lmparse mode.

Run it with the peers venv (``tools/install_peers.sh /work/venvs/peers``), from anywhere::

    /work/venvs/peers/bin/python tools/run_vllm_suite.py            # both runs, then the table
    /work/venvs/peers/bin/python tools/run_vllm_suite.py --compare  # the table from the last runs

Exit status 1 when a test that passes with vLLM's parsers fails with lmparse and is not listed, or when a
listed test passes (strict xfail), else 0. ``tests/integrations/test_vllm_suite.py`` runs this under
``LMPARSE_VLLM_TESTS=1``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANE = ROOT / 'tests' / 'integrations' / 'vllm_suite'
VERSION = '0.33.0'
# The sdist's sha256 as published on the package index (pip checks it: --require-hashes).
SDIST_SHA256 = 'f4c33c2503d52bb411146afa9618a4f48bed68912f617e6803ac8d76e4c74112'
# vLLM's parser-level test directories in 0.33.0. tests/tool_use and tests/entrypoints/openai start
# an OpenAI server on a real model (GPU): not part of the lane.
TEST_PATHS = ('tests/tool_parsers', 'tests/reasoning', 'tests/parser', 'tests/entrypoints/tool_parsers')
PYTEST_INI = """[pytest]
addopts = -p no:cacheprovider
asyncio_default_fixture_loop_scope = function
markers =
    slow_test
    skip_global_cleanup
    core_model
    hybrid_model
    cpu_model
    cpu_test
    split
    distributed
    optional
"""


def cache_dir() -> Path:
    return Path(os.environ.get('LMPARSE_VLLM_CACHE', Path.home() / '.cache' / 'lmparse' / 'vllm-sdist'))


def fetch_sdist(cache: Path) -> Path:
    """vllm-0.33.0.tar.gz through pip (hash-checked). pip prepares the sdist's metadata to check its
    version; vLLM's setup.py does that without a GPU toolchain when VLLM_TARGET_DEVICE=empty (its
    'empty' build), with VLLM_VERSION_OVERRIDE so the version reads 0.33.0 rather than 0.33.0+empty,
    and --no-build-isolation (its isolated build requirements would pull CUDA torch)."""
    sdist = cache / f'vllm-{VERSION}.tar.gz'
    if sdist.exists():
        return sdist
    cache.mkdir(parents=True, exist_ok=True)
    req = cache / 'requirements.txt'
    req.write_text(f'vllm=={VERSION} --hash=sha256:{SDIST_SHA256}\n')
    env = dict(os.environ, VLLM_TARGET_DEVICE='empty', VLLM_VERSION_OVERRIDE=VERSION)
    subprocess.run([sys.executable, '-m', 'pip', 'download', '--no-deps', '--no-binary', ':all:',
                    '--no-build-isolation', '--require-hashes', '-r', str(req), '-d', str(cache)],
                   env=env, check=True)
    return sdist


def extract_tests(cache: Path, sdist: Path) -> Path:
    suite = cache / 'suite'
    stamp = suite / '.extracted'
    if stamp.exists() and stamp.read_text() == SDIST_SHA256:
        return suite
    prefix = f'vllm-{VERSION}/'
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers()
                   if m.name.startswith(prefix + 'tests/') and m.name != prefix + 'tests/conftest.py']
        for m in members:
            m.name = m.name[len(prefix):]
        tar.extractall(suite, members=members, filter='data')
    (suite / 'pytest.ini').write_text(PYTEST_INI)
    stamp.write_text(SDIST_SHA256)
    return suite


def run_mode(suite: Path, mode: str, paths: list[str], extra: list[str]) -> Path:
    out = suite / f'results-{mode}.xml'
    env = dict(os.environ, LMPARSE_VLLM_SUITE_MODE=mode, HF_HUB_OFFLINE='1', TRANSFORMERS_OFFLINE='1',
               PYTHONPATH=os.pathsep.join([str(ROOT), str(LANE)]))
    env.pop('LMPARSE_VLLM_REPLACE', None)
    cmd = [sys.executable, '-m', 'pytest', '-p', 'lmparse_vllm_lane', '--continue-on-collection-errors',
           '-q', '-rN', '--tb=line', f'--junitxml={out}', *paths, *extra]
    print(f'== {mode}: {" ".join(cmd)}', flush=True)
    subprocess.run(cmd, cwd=suite, env=env)
    return out


def outcomes(xml: Path) -> dict[str, str]:
    """test id -> passed / failed / error / skipped / xfailed / xpassed."""
    res: dict[str, str] = {}
    for case in ET.parse(xml).getroot().iter('testcase'):
        classname, name = case.get('classname', ''), case.get('name', '')
        parts = classname.split('.')
        # junit classname: tests.tool_parsers.test_x[.TestClass]; rebuild the pytest node id.
        path_parts: list[str] = []
        cls_parts: list[str] = []
        for p in parts:
            (cls_parts if cls_parts or (p[:1].isupper()) else path_parts).append(p)
        node = '/'.join(path_parts) + '.py'
        if cls_parts:
            node += '::' + '::'.join(cls_parts)
        node += '::' + name
        outcome = 'passed'
        for child in case:
            tag = child.tag
            if tag == 'failure':
                outcome = 'xpassed' if 'XPASS' in (child.get('message') or '') else 'failed'
            elif tag == 'error':
                outcome = 'error'
            elif tag == 'skipped':
                outcome = 'xfailed' if child.get('type') == 'pytest.xfail' else 'skipped'
        res[node] = outcome
    return res


def listed() -> set[str]:
    import tomllib
    path = LANE / 'differences.toml'
    if not path.exists():
        return set()
    return {test_id for section in tomllib.loads(path.read_text(encoding='utf-8')).values() for test_id in section}


def compare(own: dict[str, str], lm: dict[str, str]) -> tuple[list[tuple], list[str], list[str]]:
    """Per-file rows, unlisted differences, listed tests that passed."""
    table_ids = listed()
    per_file: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    unlisted: list[str] = []
    stale: list[str] = []
    for node in sorted(own.keys() | lm.keys()):
        f = node.split('::', 1)[0]
        o, l = own.get(node, 'missing'), lm.get(node, 'missing')
        row = per_file[f]
        row[0] += 1
        row[1] += o == 'passed'
        row[2] += l == 'passed'
        if o == 'passed' and l != 'passed':
            if l == 'xfailed':
                row[3] += 1
            else:
                row[4] += 1
                unlisted.append(f'{node}  ({l})')
        if node in table_ids and l in ('passed', 'xpassed'):
            stale.append(node)
    rows = [(f, *v) for f, v in sorted(per_file.items())]
    return rows, unlisted, stale


def table(rows: list[tuple]) -> str:
    lines = ['| test file | tests | pass, vLLM parsers | pass, lmparse | listed differences | unlisted |',
             '|---|---:|---:|---:|---:|---:|']
    tot = [0, 0, 0, 0, 0]
    for f, n, o, l, listed, unl in rows:
        lines.append(f'| {f} | {n} | {o} | {l} | {listed} | {unl} |')
        for i, v in enumerate((n, o, l, listed, unl)):
            tot[i] += v
    lines.append(f'| **total** | {tot[0]} | {tot[1]} | {tot[2]} | {tot[3]} | {tot[4]} |')
    return '\n'.join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--compare', action='store_true', help='only compare the last two runs')
    ap.add_argument('--mode', choices=('own', 'lmparse', 'both'), default='both')
    ap.add_argument('--table', type=Path, help='write the Markdown table here as well')
    ap.add_argument('paths', nargs='*', help=f'test paths inside the sdist (default: {" ".join(TEST_PATHS)})')
    args, extra = ap.parse_known_args()
    cache = cache_dir()
    suite = extract_tests(cache, fetch_sdist(cache))
    paths = args.paths or list(TEST_PATHS)
    if not args.compare:
        for mode in (('own', 'lmparse') if args.mode == 'both' else (args.mode,)):
            run_mode(suite, mode, paths, extra)
    own = outcomes(suite / 'results-own.xml')
    lm = outcomes(suite / 'results-lmparse.xml')
    rows, unlisted, stale = compare(own, lm)
    text = table(rows)
    print(text)
    if args.table:
        args.table.write_text(text + '\n')
    for node in unlisted:
        print('UNLISTED DIFFERENCE', node)
    for node in stale:
        print('LISTED BUT PASSES', node)
    print(f'{len(unlisted)} unlisted differences, {len(stale)} listed tests that pass')
    return 1 if unlisted or stale else 0


if __name__ == '__main__':
    sys.exit(main())
