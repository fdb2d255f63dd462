"""vLLM 0.33 as bench/compare_engines.py measures it: its own parser vs lmparse's plugin, both in its stream processor.

Contract shared with the other ``bench/engine_<name>.py`` modules: ``ENGINE``, ``available()``,
``measure(fixture, chunk_size, budget) -> {'engine', 'plugin', 'lmparse'}`` (microseconds per
chunk) and ``construct(fixture, budget)`` (microseconds per parser construction, same keys).

Both vLLM sides run exactly the path ``OpenAIServingChat.chat_completion_stream_generator``
takes: ``ParserManager.get_parser(tool, reasoning, enable_auto_tools=True, tokenizer=...)``
composes the Parser class once; per request ``parser_cls(tokenizer, request.tools,
chat_template_kwargs=..., model_config=None)`` (``_make_parser``) wrapped in a
``ChatStreamProcessor``, whose ``step(delta_text, delta_token_ids, finish_reason,
prompt_token_ids)`` is called once per chunk, the last with finish_reason 'stop'. 'engine' is
vLLM's own parser (the names of ``bench.compare_peers.PEERS``), 'plugin' the same Parser
machinery composed from ``lmparse-<tool>`` / ``lmparse-<reasoning>``
(``lmparse.integrations.vllm``), 'lmparse' lmparse's ``stream_chunk`` alone. Token ids and
prompts as in bench/compare_peers.py (DeepSeek V3's tokenizer with the dialect's special
tokens added as single tokens). Timed: the per-chunk calls only, each parser built untimed
just before its stream; a stream slower than :data:`STREAM_LIMIT` seconds is reported as
``inf`` (not timed further).

Run it from the repository root with the peers' venv (tools/install_peers.sh)::

    /work/scratch/peers-venv/bin/python bench/compare_engines.py
"""
from __future__ import annotations

import dataclasses
import gc
import logging
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.chunking import fixture_chunks  # noqa: E402
from bench.compare_peers import (  # noqa: E402
    PeerRow,
    collect_vllm_deltas,
    hf_tokenizer,
    opening_marker,
    opens_reasoning_in_prompt,
    peer_row,
    thinking_kwargs,
    uses_reasoning,
)
from bench.fixtures import BenchFixture, Expected  # noqa: E402
from bench.runner import lmparse_class, lmparse_request  # noqa: E402

ENGINE = 'vLLM'
VERSION = '0.33.0'
STREAM_LIMIT = float(os.environ.get('LMPARSE_ENGINE_STREAM_LIMIT', '20'))

Triples = list[tuple[str, list[int], bool]]
# Why a side printed nan: (fixture id, chunk size or 'construct', side, reason); compare_engines prints them.
NOTES: list[tuple[str, int | str, str, str]] = []


def available() -> bool:
    """vLLM 0.33.0 and its parser layer import (tools/install_peers.sh builds such a venv)."""
    from importlib import metadata
    try:
        if metadata.version('vllm') != VERSION:
            return False
        logging.disable(logging.CRITICAL)
        warnings.filterwarnings('ignore')
        import lmparse.integrations.vllm  # noqa: F401
        from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor  # noqa: F401
    except Exception:
        return False
    return True


class NotShared(LookupError):
    """vLLM has no parser of its own for this fixture's format, or the plugin cannot serve it."""


def vllm_row(f: BenchFixture) -> PeerRow:
    row = peer_row(f)
    if row is None or (row.vllm_tool is None and row.vllm_reasoning is None):
        raise NotShared(f'{f.id}: vLLM has no parser for this format')
    if f.tool_parser is None:
        raise NotShared(f'{f.id}: response parser {f.response_parser!r} (vLLM builds its own HarmonyParser)')
    return row


def request_kwargs(f: BenchFixture) -> dict[str, Any] | None:
    """chat_template_kwargs the server hands the parser: the request's, with thinking on when the prompt opened it."""
    merged = dict(thinking_kwargs(f) or {})
    merged.update(f.request.get('chat_template_kwargs') or {})
    return merged or None


_tokenizers: dict[int, Any] = {}


def tokenizer_for(f: BenchFixture, row: PeerRow) -> Any:
    from vllm.tokenizers.hf import get_cached_tokenizer
    base = hf_tokenizer(row.specials if row.specials is not None else f.atomic_tags
                        if not f.extra.get('token_units') else ())
    tok = _tokenizers.get(id(base))
    if tok is None:
        tok = _tokenizers[id(base)] = get_cached_tokenizer(base)
    return tok


@dataclasses.dataclass
class Driver:
    """One configuration of vLLM's serving stream path, built once per fixture."""

    new: Callable[[], Any]          # a fresh ChatStreamProcessor (parser built as _make_parser does)
    prompt_ids: list[int]
    tokenizer: Any
    parser_cls: Any

    def feed(self, proc: Any, triples: Triples, out: list[Any] | None = None) -> None:
        step = proc.step
        prompt = self.prompt_ids
        if out is None:
            for text, ids, final in triples:
                step(text, ids, 'stop' if final else None, prompt)
        else:
            for text, ids, final in triples:
                out.append(step(text, ids, 'stop' if final else None, prompt))

    def run(self, triples: Triples) -> tuple[Expected, list[Any]]:
        proc = self.new()
        steps: list[Any] = []
        self.feed(proc, triples, steps)
        return collect(steps), steps


def collect(steps: Sequence[Any]) -> Expected:
    return collect_vllm_deltas(st.delta for st in steps)


def driver(f: BenchFixture, which: str) -> Driver:
    """``which``: 'engine' (vLLM's own parser names) or 'plugin' (lmparse-<name>)."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser import ParserManager
    row = vllm_row(f)
    tok = tokenizer_for(f, row)
    if which == 'engine':
        tool, reasoning = row.vllm_tool_for(f), row.vllm_reasoning if uses_reasoning(f) else None
        if tool is None:
            raise NotShared(f'{f.id}: vLLM has no tool parser for this format')
    else:
        tool = 'lmparse-' + f.tool_parser if f.tool_parser else None
        reasoning = 'lmparse-' + (f.reasoning_parser or 'default') if uses_reasoning(f) else None
    parser_cls = ParserManager.get_parser(tool_parser_name=tool, reasoning_parser_name=reasoning,
                                          enable_auto_tools=True, tokenizer=tok)
    request = ChatCompletionRequest(**f.request)
    prompt = 'User: What is the weather?\nAssistant: ' + (opening_marker(f) + '\n' if opens_reasoning_in_prompt(f)
                                                          else '')
    prompt_ids = tok.encode(prompt, add_special_tokens=False)
    kwargs = request_kwargs(f)

    def new() -> Any:
        parser = parser_cls(tok, request.tools, chat_template_kwargs=kwargs, model_config=None)
        return ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=parser_cls)

    return Driver(new, prompt_ids, tok, parser_cls)


def triples_for(chunks: Sequence[str], tok: Any) -> Triples:
    last = len(chunks) - 1
    return [(c, tok.encode(c, add_special_tokens=False), i == last) for i, c in enumerate(chunks)]


class StreamTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise StreamTimeout


def timed(run: Callable[[], Any], limit: float = 0.0) -> float:
    """Seconds of ``run()``; with ``limit`` (main thread), StreamTimeout past it."""
    if limit > 0:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        t0 = time.perf_counter()
        run()
        return time.perf_counter() - t0
    finally:
        if limit > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def run_limited(d: Driver, triples: Triples, limit: float) -> Expected:
    """One stream's reconstruction; StreamTimeout when it takes longer than ``limit`` seconds."""
    proc = d.new()
    steps: list[Any] = []
    timed(lambda: d.feed(proc, triples, steps), limit)
    return collect(steps)


def best_stream(new: Callable[[], Any], feed: Callable[[Any], None], budget: float) -> float:
    """Best seconds of one stream (state built untimed before each), within ``budget`` seconds; inf if too slow."""
    try:
        first = timed(lambda: feed(new()), STREAM_LIMIT)
    except StreamTimeout:
        return float('inf')
    best = first
    spent = first
    gc.collect()
    while spent < budget:
        state = new()
        t = timed(lambda: feed(state))
        best = min(best, t)
        spent += t
    return best


def _feeder(d: Driver, triples: Triples) -> Callable[[Any], None]:
    def feed(proc: Any) -> None:
        d.feed(proc, triples)
    return feed


def measure(fixture: BenchFixture, chunk_size: int, budget: float) -> dict[str, float]:
    """Microseconds per chunk: vLLM's own parser and the lmparse plugin in ChatStreamProcessor, and bare lmparse."""
    chunks = fixture_chunks(fixture, chunk_size)
    n = len(chunks)
    out: dict[str, float] = {}
    for which in ('engine', 'plugin'):
        try:
            d = driver(fixture, which)
            out[which] = best_stream(d.new, _feeder(d, triples_for(chunks, d.tokenizer)), budget / 3) / n * 1e6
        except NotShared:
            out[which] = float('nan')
        except Exception as err:  # vLLM's own parser raising (or not constructible here) is a finding, not a stop
            out[which] = float('nan')
            NOTES.append((fixture.id, chunk_size, which, f'{type(err).__name__}: {str(err)[:160]}'))
    cls, request = lmparse_class(fixture), lmparse_request(fixture)
    bare = [(c, i == n - 1) for i, c in enumerate(chunks)]

    def feed_bare(parser: Any) -> None:
        step = parser.stream_chunk
        for text, final in bare:
            step(text, [], final=final)

    out['lmparse'] = best_stream(lambda: cls(request), feed_bare, budget / 3) / n * 1e6
    return out


def _construction_us(new: Callable[[], Any], budget: float) -> float:
    first = timed(new)
    rounds = max(3, min(500, int(budget / max(first, 1e-7))))
    return min([first] + [timed(new) for _ in range(rounds)]) * 1e6


def construct(fixture: BenchFixture, budget: float) -> dict[str, float]:
    """Microseconds per construction of one request's parser (+ its ChatStreamProcessor for the vLLM sides)."""
    out: dict[str, float] = {}
    for which in ('engine', 'plugin'):
        try:
            out[which] = _construction_us(driver(fixture, which).new, budget / 3)
        except NotShared:
            out[which] = float('nan')
        except Exception as err:
            out[which] = float('nan')
            NOTES.append((fixture.id, 'construct', which, f'{type(err).__name__}: {str(err)[:160]}'))
    cls, request = lmparse_class(fixture), lmparse_request(fixture)
    out['lmparse'] = _construction_us(lambda: cls(request), budget / 3)
    return out
