"""The SGLang integration imports without SGLang (it imports it lazily): checked in the default test run."""
from __future__ import annotations

import os
import subprocess
import sys

import lmparse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_imports_without_importing_sglang() -> None:
    code = ('import sys, lmparse.integrations.sglang as m; '
            'assert m.PREFIX == "lmparse-" and callable(m.register) and callable(m.main); '
            'print(sorted(k for k in sys.modules if k.split(".")[0] == "sglang"))')
    out = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[]'


def test_replace_maps_to_names_lmparse_registers() -> None:
    from lmparse.integrations.sglang import SGLANG_REASONING_NAMES, SGLANG_TOOL_NAMES
    for ours in SGLANG_TOOL_NAMES.values():
        assert ours in lmparse.ToolParserManager
    for ours in SGLANG_REASONING_NAMES.values():
        assert ours in lmparse.ReasoningParserManager
