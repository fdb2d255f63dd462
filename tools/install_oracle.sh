#!/usr/bin/env bash
# Install LMDeploy's parser layer (no torch) as the oracle for tests/oracle.
# Usage: PYTHON=/path/to/python tools/install_oracle.sh
set -euo pipefail
PY="${PYTHON:-python}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# lmdeploy and mmengine without their heavy dependency trees (torch, opencv, ...).
"$PY" -m pip install --no-deps lmdeploy==0.18.0 mmengine==0.10.7
# What the parser modules import: pydantic + shortuuid (protocol, tool ids);
# the rest is what `from mmengine import Registry` needs at import time.
"$PY" -m pip install \
    pydantic==2.14.4 shortuuid==1.0.13 \
    addict==2.4.0 numpy==2.4.6 PyYAML==6.0.4 rich==15.0.0 termcolor==3.3.0 yapf==0.43.0
# LMDeploy's gpt-oss parser; its vocabulary comes from tools/harmony_vocab.py (needs npm).
"$PY" -m pip install openai-harmony==0.0.8

# Verify: the stub loader imports the parsers and the request type, without torch.
cd "$ROOT"
"$PY" - <<'PY'
import sys
from tests.oracle.lmdeploy_loader import lmdeploy_chat_request_cls, load_lmdeploy_parsers
parsers = load_lmdeploy_parsers()
from lmdeploy.serve.parsers.tool_parser import ToolParserManager
need = {'qwen', 'qwen2d5', 'qwen3', 'internlm', 'intern-s1', 'llama3'}
missing = need - set(ToolParserManager.module_dict)
assert not missing, missing
assert parsers.ResponseParserManager.get('default') is not None
lmdeploy_chat_request_cls()(model='m', messages=[{'role': 'user', 'content': 'hi'}])
assert 'torch' not in sys.modules, 'torch was imported'
print('lmdeploy oracle OK:', parsers.__name__)
PY
