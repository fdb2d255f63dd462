"""``pip install -e .`` (the README's quick start) exposes the stubs: ``mypy --strict`` passes on a user script.

Slow lane (LMPARSE_SLOW=1): it installs a copy of the checkout into a fresh
virtual environment. The build reuses this interpreter's setuptools, Cython
and mypy (``--no-build-isolation``), so no network is needed.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

USER_SCRIPT = '''\
from lmparse import BaseResponseParser
from lmparse.adapters import OpenAIStream
from lmparse.runner import ChatRunner, EngineChunk

Parser = BaseResponseParser.with_parsers('default', 'qwen3')
content, calls, reasoning = Parser({'model': 'm', 'messages': []}).parse_complete('<think>r</think>hi')
n: int = len(calls or [])
stream = OpenAIStream('m')
for d in ChatRunner(Parser({'model': 'm', 'messages': []})).stream([EngineChunk('hi', finish_reason='stop')]):
    text: str = stream.event(d)
'''

pytestmark = pytest.mark.skipif(os.environ.get('LMPARSE_SLOW') != '1', reason='slow lane: LMPARSE_SLOW=1')


def test_mypy_strict_after_editable_install(tmp_path: Path) -> None:
    if not (ROOT / 'setup.py').exists() or not (ROOT / '.git').exists():
        pytest.skip('needs a checkout (tests run from an installed wheel)')
    pytest.importorskip('mypy')
    pytest.importorskip('Cython')
    src = tmp_path / 'src'
    files = subprocess.run(['git', 'ls-files'], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        if (ROOT / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True)
    py = venv / 'bin' / 'python'
    purelib = subprocess.run([str(py), '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                             capture_output=True, text=True, check=True).stdout.strip()
    # pip, setuptools, Cython and mypy from this interpreter, after the new venv's own site-packages.
    Path(purelib, 'outer.pth').write_text(sysconfig.get_paths()['purelib'] + '\n')
    proc = subprocess.run([str(py), '-m', 'pip', 'install', '-q', '--no-deps', '--no-build-isolation', '-e', str(src)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    script = tmp_path / 'user.py'
    script.write_text(USER_SCRIPT)
    # Away from the checkout, so only the editable install can provide lmparse.
    proc = subprocess.run([str(py), '-m', 'mypy', '--strict', '--no-incremental', str(script)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([str(py), '-c', 'import lmparse, sys; print(lmparse.__file__)'], cwd=tmp_path,
                          capture_output=True, text=True, check=True)
    assert proc.stdout.startswith(str(src))
