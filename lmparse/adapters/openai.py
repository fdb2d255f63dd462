"""OpenAI chat completions wire format: ``chat.completion.chunk`` SSE and ``chat.completion``.

Streaming (one :class:`OpenAIStream` per response)::

    stream = OpenAIStream(model, include_usage=True)
    for d in runner.stream(engine_chunks):
        send(stream.event(d))                # 'data: {...}\\n\\n'
    send(stream.close(usage))                # finish chunk if missing, usage chunk, 'data: [DONE]\\n\\n'

* ``id``, ``object``, ``created`` and ``model`` are identical on every chunk;
  ``role`` appears on the first delta only.
* Reasoning goes to ``reasoning_content`` (LMDeploy, vLLM, DeepSeek), to
  ``reasoning`` (newer vLLM / OpenRouter) or to both (``reasoning_field``).
* Tool-call fragments of one call that arrive in one delta are merged into one
  entry; the first entry of a call carries ``id``, ``type``, ``name`` and
  ``arguments: ""`` (what the official SDK's accumulator expects), later ones
  only ``index`` and ``function.arguments``.
* ``logprobs`` given to the runner are passed through: a list becomes
  ``{"content": [...]}``, a dict is sent as is.
* Reasoning that is only whitespace is not sent: in a stream, whitespace-only
  reasoning is held until reasoning text follows (and dropped when content or
  a call comes first); ``chat.completion`` omits a whitespace-only reasoning.
* Incomplete calls (arguments that are not a complete JSON object when the
  output ends) keep ``arguments`` exactly as generated, in the stream and in
  ``chat.completion`` alike: a string a client's JSON parser rejects, never a
  repaired or wrapped value (``ChatRunner(drop_incomplete_calls=True)``
  removes them from complete responses that ended with ``length``).
* Errors mid-stream are sent as ``data: {"error": {...}}`` (the SDK raises
  ``APIError`` for them); :meth:`OpenAIStream.close` still ends with ``[DONE]``.
"""
from __future__ import annotations

import json
import time
from typing import Any, Literal

from lmparse.adapters._reasoning import ReasoningHold
from lmparse.protocol import DeltaMessage, ToolCall, random_call_id
from lmparse.runner import ChatResult, StreamDelta, build_usage

__all__ = ['DONE', 'OpenAIStream', 'ReasoningField', 'error_body', 'openai_completion', 'tool_call_entries']

ReasoningField = Literal['reasoning_content', 'reasoning', 'both']
_REASONING_FIELDS = ('reasoning_content', 'reasoning', 'both')

DONE = 'data: [DONE]\n\n'

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(',', ':')).encode


def _check_reasoning_field(value: str) -> None:
    if value not in _REASONING_FIELDS:
        raise ValueError(f'reasoning_field must be one of {_REASONING_FIELDS}, got {value!r}')


def tool_call_entries(message: DeltaMessage) -> list[dict[str, Any]]:
    """OpenAI ``delta.tool_calls`` for one message, consecutive fragments of a call merged."""
    entries: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for tc in message.tool_calls or ():
        fn = tc.function
        name = fn.name if fn is not None else None
        args = fn.arguments if fn is not None else None
        if cur is not None and cur['index'] == tc.index and tc.id is None and name is None:
            if args:
                f = cur.setdefault('function', {})
                f['arguments'] = f.get('arguments', '') + args
            continue
        cur = {'index': tc.index}
        if tc.id is not None:
            cur['id'] = tc.id
            cur['type'] = 'function'
            cur['function'] = {'name': name or '', 'arguments': args or ''}
        elif name is not None or args is not None:
            f2: dict[str, str] = {}
            if name is not None:
                f2['name'] = name
            if args is not None:
                f2['arguments'] = args
            cur['function'] = f2
        entries.append(cur)
    return entries


def error_body(message: str, type: str = 'internal_error', code: int | str | None = None,
               param: str | None = None) -> dict[str, Any]:
    """The ``{"error": {...}}`` object OpenAI-compatible servers return."""
    return {'error': {'message': message, 'type': type, 'param': param, 'code': code}}


class OpenAIStream:
    """Formats one streamed response as ``chat.completion.chunk`` events."""

    __slots__ = ('id', 'model', 'created', 'reasoning_field', 'include_usage', '_prefix', '_suffix',
                 '_role_sent', '_finished', '_closed', '_reasoning_open', '_hold')

    def __init__(self, model: str, *, id: str | None = None, created: int | None = None,
                 reasoning_field: ReasoningField = 'reasoning_content', include_usage: bool = False) -> None:
        _check_reasoning_field(reasoning_field)
        self.id = id if id is not None else random_call_id('chatcmpl-')
        self.model = model
        self.created = int(time.time()) if created is None else created
        self.reasoning_field = reasoning_field
        self.include_usage = include_usage
        # Every chunk shares these bytes; only the delta and finish differ.
        self._prefix = (f'{{"id":{_dumps(self.id)},"object":"chat.completion.chunk","created":{self.created},'
                        f'"model":{_dumps(model)},"choices":[{{"index":0,"delta":')
        self._suffix = ',"usage":null}' if include_usage else '}'
        self._role_sent = False
        self._finished = False
        self._closed = False
        self._reasoning_open = False  # reasoning text was sent since the last content / call
        self._hold = ReasoningHold()  # whitespace-only reasoning not sent yet

    @property
    def finished(self) -> bool:
        """True once a chunk with a finish reason was produced."""
        return self._finished

    def delta_dict(self, message: DeltaMessage) -> dict[str, Any]:
        """The ``delta`` object of one chunk (``role`` on the first one only)."""
        delta: dict[str, Any] = {}
        if not self._role_sent:
            delta['role'] = 'assistant'
            self._role_sent = True
        if message.content is not None:
            delta['content'] = message.content
        reasoning = message.reasoning_content
        if reasoning:
            reasoning = self._hold.take(reasoning, self._reasoning_open)
            if reasoning is not None:
                self._reasoning_open = True
        if message.content or message.tool_calls:
            self._reasoning_open = False
            self._hold.drop()
        if reasoning is not None:
            if self.reasoning_field != 'reasoning':
                delta['reasoning_content'] = reasoning
            if self.reasoning_field != 'reasoning_content':
                delta['reasoning'] = reasoning
        if message.tool_calls:
            delta['tool_calls'] = tool_call_entries(message)
        return delta

    def chunk_json(self, d: StreamDelta) -> str:
        """One ``chat.completion.chunk`` as compact JSON."""
        if self._closed:
            raise RuntimeError('OpenAIStream is closed')
        delta = _dumps(self.delta_dict(d.message))
        logprobs = 'null' if d.logprobs is None else _dumps(
            {'content': d.logprobs} if isinstance(d.logprobs, list) else d.logprobs)
        if d.finish_reason is None:
            finish = 'null'
        else:
            finish = _dumps(d.finish_reason)
            self._finished = True
        return f'{self._prefix}{delta},"logprobs":{logprobs},"finish_reason":{finish}}}]{self._suffix}'

    def event(self, d: StreamDelta) -> str:
        """One SSE event (``data: {...}\\n\\n``)."""
        return f'data: {self.chunk_json(d)}\n\n'

    def finish_chunk_json(self, finish_reason: str = 'stop') -> str:
        """An empty-delta chunk carrying only a finish reason."""
        self._finished = True
        delta = _dumps(self.delta_dict(DeltaMessage()))
        return f'{self._prefix}{delta},"logprobs":null,"finish_reason":{_dumps(finish_reason)}}}]{self._suffix}'

    def usage_chunk_json(self, usage: dict[str, Any]) -> str:
        """The final ``choices: []`` chunk of ``stream_options.include_usage``."""
        return _dumps({'id': self.id, 'object': 'chat.completion.chunk', 'created': self.created,
                       'model': self.model, 'choices': [], 'usage': usage})

    def close_chunks(self, usage: dict[str, Any] | None = None, finish_reason: str = 'stop') -> list[str]:
        """Chunks that end the stream: a finish chunk if none was sent, then usage if requested."""
        if self._closed:
            return []
        out: list[str] = []
        if not self._finished:
            out.append(self.finish_chunk_json(finish_reason))
        if self.include_usage and usage is not None:
            out.append(self.usage_chunk_json(usage))
        self._closed = True
        return out

    def close(self, usage: dict[str, Any] | None = None, finish_reason: str = 'stop') -> str:
        """SSE text that ends the stream, ``data: [DONE]`` last."""
        if self._closed:
            return ''
        return ''.join(f'data: {c}\n\n' for c in self.close_chunks(usage, finish_reason)) + DONE

    def error(self, message: str, type: str = 'internal_error', code: int | str | None = 500) -> str:
        """A mid-stream error event followed by ``[DONE]``; the stream is closed afterwards."""
        self._closed = True
        return f'data: {_dumps(error_body(message, type, code))}\n\n{DONE}'


def _tool_call_dicts(calls: list[ToolCall] | None) -> list[dict[str, Any]]:
    return [{'id': c.id, 'type': 'function',
             'function': {'name': c.function.name, 'arguments': c.function.arguments}} for c in calls or ()]


def openai_completion(result: ChatResult, model: str, *, id: str | None = None, created: int | None = None,
                      prompt_tokens: int = 0, completion_tokens: int | None = None,
                      reasoning_field: ReasoningField = 'reasoning_content') -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object for a collected result."""
    _check_reasoning_field(reasoning_field)
    message: dict[str, Any] = {'role': 'assistant', 'content': result.content}
    if result.reasoning_content is not None and not result.reasoning_content.isspace():
        if reasoning_field != 'reasoning':
            message['reasoning_content'] = result.reasoning_content
        if reasoning_field != 'reasoning_content':
            message['reasoning'] = result.reasoning_content
    if result.tool_calls:
        message['tool_calls'] = _tool_call_dicts(result.tool_calls)
    n = result.completion_tokens if completion_tokens is None else completion_tokens
    return {
        'id': id if id is not None else random_call_id('chatcmpl-'),
        'object': 'chat.completion',
        'created': int(time.time()) if created is None else created,
        'model': model,
        'choices': [{
            'index': 0,
            'message': message,
            'logprobs': {'content': result.logprobs} if result.logprobs else None,
            'finish_reason': result.finish_reason,
        }],
        'usage': build_usage(prompt_tokens, n, result.reasoning_tokens),
    }
