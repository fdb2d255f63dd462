"""Opt-in lane: lmparse's vLLM plugin driven as vLLM 0.33's server drives it (LMPARSE_VLLM=1).

    tools/install_peers.sh /work/scratch/peers-venv        # vLLM 0.33.0 --no-deps + what its parsers import
    python setup.py build_ext --inplace -j2                 # lmparse, in this checkout
    LMPARSE_VLLM=1 /work/scratch/peers-venv/bin/python -m pytest -q tests/integrations/test_vllm_stream.py

Every benchmark fixture whose format vLLM also parses goes through vLLM's own serving stream
path: ``ParserManager.get_parser`` composes the Parser from ``lmparse-<tool>`` /
``lmparse-<reasoning>``, one instance per request built as ``OpenAIServingChat._make_parser``
does, fed by ``ChatStreamProcessor.step(delta_text, delta_token_ids, finish_reason,
prompt_token_ids)`` with real token ids (bench/engine_vllm.py). Chunkings: 1, 4, 16 and 256
units (characters with special tokens whole, or real DeepSeek tokens), special tokens split
across chunks (3-character chunks; each token id goes with the chunk holding its first
character, as when vLLM's detokenizer holds text back: a token's text never arrives before its
id), and the whole output as one chunk. The plugin's result must equal lmparse's own
exactly, and equal vLLM's own parser's (arguments as parsed JSON) wherever vLLM's parser gets
the fixture right; each case where it does not is reported as a warning
(``VllmParserWrong``), with vLLM's output beside the expected one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from typing import Any

import pytest

if os.environ.get('LMPARSE_VLLM') != '1':
    pytest.skip('opt-in: set LMPARSE_VLLM=1 (needs vllm==0.33.0: tools/install_peers.sh)', allow_module_level=True)

from bench import engine_vllm as ev  # noqa: E402

if not ev.available():
    pytest.skip('vllm==0.33.0 is not importable here (tools/install_peers.sh VENV; run VENV/bin/python)',
                allow_module_level=True)

from bench.chunking import fixture_chunks  # noqa: E402
from bench.compare_peers import verdict  # noqa: E402
from bench.fixtures import BenchFixture, load_all  # noqa: E402
from bench.runner import describe_mismatch, lmparse_class, lmparse_request, reconstruct  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENGINE_TIMEOUT = float(os.environ.get('LMPARSE_VLLM_TIMEOUT', '10'))
SMALL = 4000  # characters: below this every chunking runs, above it 16 / 256 / split / whole


class VllmParserWrong(UserWarning):
    """vLLM's own parser did not reproduce a fixture's expected result (the plugin is not compared to it)."""


def _shared(f: BenchFixture) -> bool:
    try:
        ev.vllm_row(f)
    except ev.NotShared:
        return False
    return True


FIXTURES = [f for f in load_all() if _shared(f)]
CASES = [(f, c) for f in FIXTURES
         for c in ((1, 4, 16, 256, 'split', 'whole') if len(f.text) < SMALL else (16, 256, 'split', 'whole'))]


def chunked(f: BenchFixture, chunking: int | str, tok: Any) -> tuple[list[str], ev.Triples]:
    if chunking == 'whole':
        chunks = [f.text]
    elif chunking == 'split':
        chunks = [f.text[i:i + 3] for i in range(0, len(f.text), 3)]
    else:
        chunks = fixture_chunks(f, int(chunking))
    if chunking != 'split':
        return chunks, ev.triples_for(chunks, tok)
    enc = tok(f.text, add_special_tokens=False, return_offsets_mapping=True)
    ids: list[list[int]] = [[] for _ in chunks]
    for token_id, (start, _) in zip(enc['input_ids'], enc['offset_mapping']):
        ids[min(start // 3, len(chunks) - 1)].append(token_id)
    last = len(chunks) - 1
    return chunks, [(c, ids[i], i == last) for i, c in enumerate(chunks)]


_drivers: dict[tuple[str, str], ev.Driver] = {}


def driver(f: BenchFixture, which: str) -> ev.Driver:
    key = (f.id, which)
    if key not in _drivers:
        _drivers[key] = ev.driver(f, which)
    return _drivers[key]


@pytest.mark.parametrize(('fixture', 'chunking'), CASES, ids=[f'{f.id}@{c}' for f, c in CASES])
def test_plugin_in_vllm_stream(fixture: BenchFixture, chunking: int | str) -> None:
    plugin = driver(fixture, 'plugin')
    chunks, triples = chunked(fixture, chunking, plugin.tokenizer)
    got, steps = plugin.run(triples)
    own = reconstruct(lmparse_class(fixture), lmparse_request(fixture), chunks)
    assert own == fixture.expected, describe_mismatch(own, fixture.expected)
    assert got == own, describe_mismatch(got, own)
    # The server's finish_reason: tool_calls once a call was streamed.
    assert steps[-1].finish_reason == ('tool_calls' if own.calls else 'stop')

    try:
        engine = driver(fixture, 'engine')
    except ev.NotShared:
        return
    except Exception as err:  # e.g. vLLM's parser needs a token the stand-in vocabulary lacks
        warnings.warn(VllmParserWrong(f'{fixture.id}: vLLM own parser not run: cannot be built here: '
                                      f'{type(err).__name__}: {str(err)[:200]}'))
        return
    try:
        theirs = ev.run_limited(engine, chunked(fixture, chunking, engine.tokenizer)[1], ENGINE_TIMEOUT)
    except ev.StreamTimeout:
        warnings.warn(VllmParserWrong(f'{fixture.id}@{chunking}: vLLM own parser slower than {ENGINE_TIMEOUT}s '
                                      '(not compared)'))
        return
    except Exception as err:  # vLLM's parser raising is a finding about vLLM, not about the plugin
        warnings.warn(VllmParserWrong(f'{fixture.id}@{chunking}: vLLM own parser raised {type(err).__name__}: '
                                      f'{str(err)[:160]}'))
        return
    their_verdict = verdict(theirs, fixture.expected)
    if their_verdict != 'ok':
        warnings.warn(VllmParserWrong(f'{fixture.id}@{chunking}: vLLM own parser {their_verdict}; '
                                      + describe_mismatch(theirs, fixture.expected)))
        return
    assert verdict(got, theirs) == 'ok', describe_mismatch(got, theirs)


def _mixed(name: str) -> BenchFixture:
    return next(f for f in FIXTURES if f.id == name)


def test_deltas_serialise_as_the_server_sends_them() -> None:
    """Each plugin delta goes into vLLM's ChatCompletionStreamResponse and dumps as the server dumps it."""
    from vllm.entrypoints.openai.chat_completion.protocol import (
        ChatCompletionResponseStreamChoice,
        ChatCompletionStreamResponse,
    )
    f = _mixed('qwen3/mixed')
    plugin = driver(f, 'plugin')
    _, steps = plugin.run(chunked(f, 4, plugin.tokenizer)[1])
    names, content = [], []
    for st in steps:
        if st.delta is None:
            continue
        chunk = ChatCompletionStreamResponse(id='x', object='chat.completion.chunk', created=0, model='m',
                                             choices=[ChatCompletionResponseStreamChoice(index=0, delta=st.delta)])
        data = json.loads(chunk.model_dump_json(exclude_unset=True, exclude_none=True))
        delta = data['choices'][0]['delta']
        assert set(delta) <= {'content', 'reasoning', 'tool_calls'}, delta
        content.append(delta.get('content', ''))
        names += [tc['function']['name'] for tc in delta.get('tool_calls', []) if 'name' in tc.get('function', {})]
    assert ''.join(content) == f.expected.content
    assert names == [name for name, _ in f.expected.calls]


def test_non_streaming_parse_equals_lmparse() -> None:
    """OpenAIServingChat's full (non-streaming) path: Parser.parse, one lmparse parse of reasoning and calls."""
    for f in FIXTURES:
        plugin = driver(f, 'plugin')
        parser = plugin.parser_cls(plugin.tokenizer, plugin.new().request.tools,
                                   chat_template_kwargs=ev.request_kwargs(f), model_config=None)
        request = plugin.new().request
        reasoning, content, calls = parser.parse(f.text, request, enable_auto_tools=True)
        own_content, own_calls, own_reasoning = lmparse_class(f)(lmparse_request(f)).parse_complete(f.text)
        if own_calls and own_content is not None and not own_content.strip():
            own_content = None  # vLLM's Parser.parse drops whitespace-only content beside tool calls
        assert (reasoning, content) == (own_reasoning, own_content), f.id
        assert [(c.name, c.arguments) for c in calls or ()] == \
            [(c.function.name, c.function.arguments) for c in own_calls or ()], f.id


THINK_TOOL = ('Let me check.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
              'Done.</think>It is sunny.')


@pytest.mark.parametrize('size', [1, 5, len(THINK_TOOL)])
def test_one_lmparse_parser_sees_tool_calls_inside_reasoning(size: int) -> None:
    """Composed from lmparse-qwen3 twice, the pair shares one lmparse parser: a call inside <think> is a call."""
    import dataclasses
    f = dataclasses.replace(_mixed('qwen3/mixed'), text=THINK_TOOL)
    plugin = ev.driver(f, 'plugin')
    chunks = [THINK_TOOL[i:i + size] for i in range(0, len(THINK_TOOL), size)]
    got, _ = plugin.run(ev.triples_for(chunks, plugin.tokenizer))
    own = reconstruct(lmparse_class(f), lmparse_request(f), chunks)
    assert own.calls == (('get_weather', '{"city": "Paris"}'),)
    assert got == own


@pytest.mark.parametrize(('tool', 'reasoning'), [('lmparse-qwen3', 'qwen3'), ('hermes', 'lmparse-qwen3'),
                                                 ('lmparse-qwen3', None)])
def test_paired_with_a_vllm_parser(tool: str, reasoning: str | None) -> None:
    """An lmparse class composed with one of vLLM's own works alone and hands over as vLLM expects.

    A lone lmparse reasoning parser built just before (as vLLM's engine core builds one for structured
    outputs), with the same construction arguments, must not be taken for the Parser's own.
    """
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser import ParserManager
    from vllm.reasoning import ReasoningParserManager

    from lmparse import BaseResponseParser
    f = _mixed('qwen3/mixed')
    base = driver(f, 'plugin')
    tok = base.tokenizer
    parser_cls = ParserManager.get_parser(tool_parser_name=tool, reasoning_parser_name=reasoning,
                                          enable_auto_tools=True, tokenizer=tok)
    request = base.new().request
    lone = ReasoningParserManager.get_reasoning_parser('lmparse-qwen3')
    for size in (1, 16, 10_000):
        lone(tok, chat_template_kwargs=None, model_config=None)
        parser = parser_cls(tok, request.tools, chat_template_kwargs=None, model_config=None)
        proc = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=parser_cls)
        triples = ev.triples_for(fixture_chunks(f, size), tok)
        steps = [proc.step(t, ids, 'stop' if final else None, base.prompt_ids) for t, ids, final in triples]
        got = ev.collect(steps)
        if reasoning is None:  # no reasoning parser: the reasoning block is content, as in vLLM
            want = reconstruct(BaseResponseParser.with_parsers(None, f.tool_parser), lmparse_request(f),
                               fixture_chunks(f, size))
        else:
            want = f.expected
        assert verdict(got, want) == 'ok', (size, describe_mismatch(got, want))


def test_loads_through_vllms_plugin_flags_and_replaces_names_on_request() -> None:
    """A fresh interpreter: --tool-parser-plugin / --reasoning-parser-plugin's import path registers every
    lmparse-<name>; LMPARSE_VLLM_REPLACE=1 makes vLLM's shared names resolve to lmparse."""
    script = r'''
import json, logging, sys
logging.disable(logging.CRITICAL)
from vllm.tool_parsers import ToolParserManager
from vllm.reasoning import ReasoningParserManager
ToolParserManager.import_tool_parser("lmparse.integrations.vllm")
ReasoningParserManager.import_reasoning_parser("lmparse.integrations.vllm")
import lmparse
from lmparse.integrations.vllm import registered_names, LmparseToolParser, LmparseReasoningParser
tools, reasonings = registered_names()
ok_t = all(issubclass(ToolParserManager.get_tool_parser(n), LmparseToolParser) for n in tools)
ok_r = all(issubclass(ReasoningParserManager.get_reasoning_parser(n), LmparseReasoningParser) for n in reasonings)
print(json.dumps({"tools": len(tools), "reasoning": len(reasonings), "ok": ok_t and ok_r,
                  "hermes": ToolParserManager.get_tool_parser("hermes").__module__,
                  "deepseek_r1": ReasoningParserManager.get_reasoning_parser("deepseek_r1").__module__,
                  "kimi_k3": ToolParserManager.get_tool_parser("kimi_k3").__module__}))
'''
    import lmparse
    for replace in ('0', '1'):
        env = {**os.environ, 'LMPARSE_VLLM_REPLACE': replace, 'PYTHONPATH': ROOT}
        out = subprocess.run([sys.executable, '-c', script], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        data = json.loads(out.stdout.strip().splitlines()[-1])
        assert data['ok']
        assert data['tools'] == len(set(lmparse.ToolParserManager.names()) - {'hf', 'response_template'})
        assert data['reasoning'] == len(set(lmparse.ReasoningParserManager.names()) - {'hf', 'response_template'})
        expect = 'lmparse.integrations.vllm' if replace == '1' else 'vllm.'
        assert data['hermes'].startswith(expect) and data['deepseek_r1'].startswith(expect), data
        assert data['kimi_k3'].startswith('vllm.'), data  # vLLM composes its own KimiK3Parser for that name
