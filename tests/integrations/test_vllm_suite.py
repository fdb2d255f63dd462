"""The vLLM suite lane (opt-in: ``LMPARSE_VLLM_TESTS=1``, in the peers venv, tools/install_peers.sh).

Runs ``tools/run_vllm_suite.py``: vLLM 0.33.0's own parser tests from its sdist (fetched with pip into a
cache outside the repository), once with vLLM's parsers and once with lmparse in replace mode. Passes when
every test that passes with vLLM's parsers passes with lmparse or is listed, with its reason, in
``tests/integrations/vllm_suite/differences.toml`` (and no listed test passes).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

if os.environ.get('LMPARSE_VLLM_TESTS') != '1':
    pytest.skip('the vLLM suite lane runs only with LMPARSE_VLLM_TESTS=1', allow_module_level=True)
pytest.importorskip('vllm', reason='vLLM is not installed (tools/install_peers.sh)')

ROOT = Path(__file__).resolve().parents[2]


def test_vllm_suite_agrees_with_vllm() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / 'tools' / 'run_vllm_suite.py')], capture_output=True,
                          text=True)
    tail = '\n'.join(proc.stdout.splitlines()[-60:])
    assert proc.returncode == 0, tail
