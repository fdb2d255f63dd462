"""``lmparse-auto`` in the vLLM and SGLang plugins: the served model's chat template derives the parsers.

Runs where vLLM 0.33.0 / SGLang 0.5.23 import (tools/install_peers.sh builds such a venv; run this
file with that venv's python and PYTHONPATH set to this checkout); skipped elsewhere.
"""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip('jinja2')

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / 'tests' / 'data' / 'templates'
TEXT = ('<|reason|>Two cities.<|/reason|>On it.<|fn|>{"function": "get_weather", "args": {"city": "Paris"}}<|/fn|>'
        '<|fn|>{"function": "get_weather", "args": {"city": "北京"}}<|/fn|>')
WANT = ('On it.', 'Two cities.', (('get_weather', {'city': 'Paris'}), ('get_weather', {'city': '北京'})))
TOOLS = [{'type': 'function', 'function': {'name': 'get_weather', 'parameters': {
    'type': 'object', 'properties': {'city': {'type': 'string'}}}}}]


def _vllm() -> None:
    from bench import engine_vllm as ev
    if not ev.available():
        pytest.skip('vllm==0.33.0 is not importable here (tools/install_peers.sh VENV; run VENV/bin/python)')


@pytest.fixture
def vllm_tokenizer() -> object:
    _vllm()
    from bench.compare_peers import Unsupported, hf_tokenizer
    try:
        base = hf_tokenizer(['<|fn|>', '<|/fn|>', '<|reason|>', '<|/reason|>'])
    except Unsupported as err:
        pytest.skip(str(err))
    return copy.copy(base)


def test_vllm_auto_parses_as_the_template_writes(vllm_tokenizer: object) -> None:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser import ParserManager
    from vllm.tokenizers.hf import get_cached_tokenizer

    from bench import engine_vllm as ev
    from lmparse.integrations import vllm as plugin

    vllm_tokenizer.chat_template = (TEMPLATES / 'json_invented_markers.jinja').read_text(encoding='utf-8')
    tok = get_cached_tokenizer(vllm_tokenizer)
    # get_parser builds the parser once with the tokenizer: the start-up check
    cls = ParserManager.get_parser(tool_parser_name=plugin.AUTO, reasoning_parser_name=plugin.AUTO,
                                   enable_auto_tools=True, tokenizer=tok)
    request = ChatCompletionRequest(model='m', messages=[{'role': 'user', 'content': 'hi'}], tools=TOOLS)
    prompt = tok.encode('hi', add_special_tokens=False)
    for size in (1, 4, 16, len(TEXT)):
        proc = ChatStreamProcessor(request, cls(tok, request.tools, chat_template_kwargs=None, model_config=None),
                                   enable_auto_tools=True, parser_cls=cls)
        chunks = [TEXT[i:i + size] for i in range(0, len(TEXT), size)]
        steps = [proc.step(c, tok.encode(c, add_special_tokens=False), 'stop' if i == len(chunks) - 1 else None,
                           prompt) for i, c in enumerate(chunks)]
        got = ev.collect(steps)
        assert (got.content, got.reasoning, tuple((n, json.loads(a)) for n, a in got.calls)) == WANT, size


def test_vllm_auto_refuses_at_start_up(vllm_tokenizer: object) -> None:
    from vllm.parser import ParserManager
    from vllm.tokenizers.hf import get_cached_tokenizer

    from lmparse.integrations import vllm as plugin

    vllm_tokenizer.chat_template = (TEMPLATES / 'bare_json.jinja').read_text(encoding='utf-8')
    with pytest.raises(TypeError) as info:
        ParserManager.get_parser(tool_parser_name=plugin.AUTO, enable_auto_tools=True,
                                 tokenizer=get_cached_tokenizer(vllm_tokenizer), model_name='acme')
    message = str(info.value)
    assert '--tool-call-parser lmparse-auto' in message and "'acme'" in message
    assert 'cannot derive a dialect from the chat template (tool_calls)' in message


SGLANG_SCRIPT = '''
import json, sys
from bench import engine_sglang as es
sys.argv = ['sglang', '--model-path', MODEL, '--tool-call-parser', 'lmparse-auto', '--reasoning-parser=lmparse-auto']
es.setup()
from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
out = []
for size in (1, 4, 16, len(TEXT)):
    rp = ReasoningParser('lmparse-auto', True, False)
    fp = FunctionCallParser([Tool(**t) for t in TOOLS], 'lmparse-auto')
    reasoning, content, calls = [], [], {}
    for i in range(0, len(TEXT), size):
        r, normal = rp.parse_stream_chunk(TEXT[i:i + size])
        reasoning.append(r or '')
        if normal:
            n, items = fp.parse_stream_chunk(normal)
            content.append(n or '')
            for item in items:
                name, args = calls.get(len(calls) - 1 if item.name is None else len(calls), ('', ''))
                calls[len(calls) - 1 if item.name is None else len(calls)] = (item.name or name,
                                                                            args + (item.parameters or ''))
    out.append([''.join(content), ''.join(reasoning), [[n, json.loads(a)] for n, a in calls.values()]])
print(json.dumps(out, ensure_ascii=False))
'''


def _sglang(model: Path) -> subprocess.CompletedProcess[str]:
    from bench import engine_sglang as es
    if not es.available():
        pytest.skip('sglang==0.5.23 is not installed here (tools/install_peers.sh VENV; run VENV/bin/python)')
    script = (f'MODEL = {str(model)!r}\nTEXT = {TEXT!r}\nTOOLS = {TOOLS!r}\n' + SGLANG_SCRIPT)
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT), *sys.path])}
    env.pop('LMPARSE_CHAT_TEMPLATE', None)
    return subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)


def test_sglang_auto_parses_as_the_template_writes(tmp_path: Path) -> None:
    model = tmp_path / 'acme'
    model.mkdir()
    (model / 'chat_template.jinja').write_text((TEMPLATES / 'json_invented_markers.jinja').read_text('utf-8'))
    done = _sglang(model)
    assert done.returncode == 0, done.stderr[-2000:]
    for content, reasoning, calls in json.loads(done.stdout.strip().splitlines()[-1]):
        assert (content, reasoning, tuple((n, a) for n, a in calls)) == WANT


def test_sglang_auto_refuses_at_start_up(tmp_path: Path) -> None:
    model = tmp_path / 'acme'
    model.mkdir()
    (model / 'chat_template.jinja').write_text((TEMPLATES / 'pythonic_bare.jinja').read_text('utf-8'))
    done = _sglang(model)
    assert done.returncode != 0
    assert 'lmparse-auto: cannot derive a dialect from the chat template (tool_calls)' in done.stderr
