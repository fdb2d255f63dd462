"""Anthropic Messages wire format: streaming events and the non-streaming message.

Streaming (one :class:`AnthropicStream` per response)::

    stream = AnthropicStream(model, input_tokens=n)
    send(stream.start())                          # message_start
    for d in runner.stream(engine_chunks):
        send(stream.events(d))                    # content_block_* events
    send(stream.close(output_tokens=m))           # content_block_stop, message_delta, message_stop

Contract:

* One content block is open at a time; block indices are 0, 1, 2... in start
  order. A channel change closes the open block and starts a new one:
  ``thinking`` (``"thinking": "", "signature": ""``; lmparse has no signature
  to give), ``text``, or ``tool_use`` (``"input": {}``).
* **Reasoning after a tool call** (a tool block inside ``<think>`` followed by
  more reasoning) starts a *new* thinking block after the ``tool_use`` block:
  the stream keeps the model's order (thinking, tool_use, thinking, ...), like
  Anthropic's interleaved thinking. The non-streaming message aggregates, as
  the parser's ``parse_complete`` does: one thinking block, one text block,
  then the tool_use blocks.
* ``input_json_delta.partial_json``: the concatenation sent for a block is
  always a valid prefix of a JSON object (clients re-parse it after every
  delta) and never starts with a whitespace-only fragment (leading whitespace
  is held and sent with the first significant character). If a model's
  arguments stop being valid JSON, nothing more is sent for that block and
  the unsent rest is reported on its ``content_block_stop`` event as
  ``"lmparse_unsent_json"`` (a documented extension field clients ignore),
  so no text is lost silently.
* **Thinking** blocks are sent only when the request enabled thinking
  (``thinking=True`` here; the replay server sets it from the request's
  ``"thinking": {"type": "enabled"}``); otherwise reasoning is omitted.
  Reasoning that is only whitespace never opens a thinking block (leading
  whitespace is held until reasoning text follows).
* **Incomplete calls** (arguments that are not a complete JSON object when
  the output ends: cut by ``max_tokens``, or malformed). A stream sends what
  was generated (the ``tool_use`` block and the valid JSON prefix; it cannot
  be taken back; ``stop_reason`` says why the output ended) and marks the
  block's ``content_block_stop`` with ``"lmparse_incomplete": true``. The
  non-streaming message never presents one as a valid call: it is left out
  of ``content`` and listed in the extension field
  ``"lmparse_incomplete_tool_calls"`` (``id``, ``name``, ``partial_json``:
  the arguments as generated); nothing is invented. A stop reason
  ``tool_use`` needs a complete call. A JSON string holding an object
  (double-encoded arguments) is decoded once; other non-object values are
  incomplete.
* Empty fragments open no block. Finish reasons map ``stop`` -> ``end_turn``,
  ``length`` -> ``max_tokens``, ``tool_calls`` -> ``tool_use``; anything else
  -> ``end_turn``.
"""
from __future__ import annotations

import json
from typing import Any

from lmparse.adapters._jsonprefix import JsonObjectPrefix
from lmparse.adapters._reasoning import ReasoningHold
from lmparse.protocol import DeltaMessage, random_call_id
from lmparse.runner import ChatResult, StreamDelta, arguments_object

__all__ = ['AnthropicStream', 'anthropic_error', 'anthropic_message', 'map_stop_reason', 'tool_input']

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(',', ':')).encode

_STOP_REASONS = {'stop': 'end_turn', 'length': 'max_tokens', 'tool_calls': 'tool_use'}

_THINKING, _TEXT, _TOOL = 1, 2, 3


def map_stop_reason(finish_reason: str | None) -> str:
    """OpenAI/engine finish reason -> Anthropic ``stop_reason``."""
    return _STOP_REASONS.get(finish_reason or 'stop', 'end_turn')


def _event(kind: str, data: str) -> str:
    return f'event: {kind}\ndata: {data}\n\n'


def anthropic_error(message: str, type: str = 'api_error') -> dict[str, Any]:
    """Anthropic's error object (also the body of 4xx/5xx responses)."""
    return {'type': 'error', 'error': {'type': type, 'message': message}}


class _ToolBlock:
    __slots__ = ('block', 'check', 'held', 'unsent')

    def __init__(self, block: int) -> None:
        self.block = block
        self.check = JsonObjectPrefix()
        self.held = ''          # leading whitespace not sent yet
        self.unsent: list[str] = []  # text after the arguments stopped being valid JSON


class AnthropicStream:
    """Formats one streamed response as Anthropic Messages SSE events."""

    __slots__ = ('id', 'model', 'input_tokens', 'thinking', 'finish_reason', '_next_block', '_kind', '_block',
                 '_tool_key', '_tools', '_hold', '_started', '_closed')

    def __init__(self, model: str, *, id: str | None = None, input_tokens: int = 0, thinking: bool = True) -> None:
        self.id = id if id is not None else random_call_id('msg_')
        self.model = model
        self.input_tokens = input_tokens
        self.thinking = thinking    # send thinking blocks (False: reasoning is omitted)
        self._hold = ReasoningHold()  # whitespace-only reasoning not sent yet
        self.finish_reason: str | None = None
        self._next_block = 0
        self._kind = 0             # kind of the open block, 0 when none
        self._block = -1           # index of the open block
        self._tool_key = -1        # tool-call index of the open tool_use block
        self._tools: dict[int, _ToolBlock] = {}
        self._started = False
        self._closed = False

    # ---- framing ---------------------------------------------------------------

    def start(self) -> str:
        """The ``message_start`` event."""
        self._started = True
        message: dict[str, Any] = {'id': self.id, 'type': 'message', 'role': 'assistant', 'model': self.model, 'content': [],
                   'stop_reason': None, 'stop_sequence': None,
                   'usage': {'input_tokens': self.input_tokens, 'output_tokens': 0}}
        return _event('message_start', _dumps({'type': 'message_start', 'message': message}))

    def _stop_open_block(self, out: list[str]) -> None:
        if not self._kind:
            return
        stop: dict[str, Any] = {'type': 'content_block_stop', 'index': self._block}
        if self._kind == _TOOL:
            tb = self._tools[self._tool_key]
            if tb.unsent:
                stop['lmparse_unsent_json'] = tb.held + ''.join(tb.unsent)
                tb.unsent.clear()
                tb.held = ''
            if not tb.check.complete:
                # The arguments sent so far are not a whole JSON object (see "Incomplete calls").
                stop['lmparse_incomplete'] = True
        out.append(_event('content_block_stop', _dumps(stop)))
        self._kind = 0
        self._block = -1

    def _open(self, out: list[str], kind: int, content_block: str) -> int:
        self._stop_open_block(out)
        index = self._next_block
        self._next_block += 1
        self._kind = kind
        self._block = index
        out.append(_event('content_block_start',
                          f'{{"type":"content_block_start","index":{index},"content_block":{content_block}}}'))
        return index

    def _text(self, out: list[str], kind: int, text: str) -> None:
        if self._kind != kind:
            self._open(out, kind, '{"type":"thinking","thinking":"","signature":""}' if kind == _THINKING
                       else '{"type":"text","text":""}')
        if kind == _THINKING:
            delta = f'{{"type":"thinking_delta","thinking":{_dumps(text)}}}'
        else:
            delta = f'{{"type":"text_delta","text":{_dumps(text)}}}'
        out.append(_event('content_block_delta',
                          f'{{"type":"content_block_delta","index":{self._block},"delta":{delta}}}'))

    def _tool(self, out: list[str], key: int, call_id: str | None, name: str | None, args: str | None) -> None:
        tb = self._tools.get(key)
        if tb is None:
            block = {'type': 'tool_use', 'id': call_id or random_call_id('toolu_'), 'name': name or '', 'input': {}}
            tb = _ToolBlock(self._open(out, _TOOL, _dumps(block)))
            self._tools[key] = tb
            self._tool_key = key
        elif self._kind != _TOOL or self._tool_key != key:
            # A conforming parser finishes a call before the next one starts, so
            # this is best-effort: the late fragment goes to the call's own block.
            pass
        if not args:
            return
        if tb.check.broken:
            tb.unsent.append(args)
            return
        n = tb.check.feed(args)
        good = args if n == len(args) else args[:n]
        if n < len(args):
            tb.unsent.append(args[n:])
        if not tb.check.started:
            tb.held += good
            return
        if tb.held:
            good = tb.held + good
            tb.held = ''
        if good:
            out.append(_event('content_block_delta',
                              f'{{"type":"content_block_delta","index":{tb.block},'
                              f'"delta":{{"type":"input_json_delta","partial_json":{_dumps(good)}}}}}'))

    # ---- public API --------------------------------------------------------------

    def events(self, d: StreamDelta) -> str:
        """SSE events for one runner delta ('' when it shows nothing)."""
        if self._closed:
            raise RuntimeError('AnthropicStream is closed')
        out: list[str] = []
        if not self._started:
            out.append(self.start())
        self.message_events(d.message, out)
        if d.finish_reason is not None:
            self.finish_reason = d.finish_reason
        return ''.join(out)

    def message_events(self, message: DeltaMessage, out: list[str]) -> None:
        """Append the events of one parser message to ``out``."""
        reasoning = message.reasoning_content
        if reasoning and self.thinking:
            reasoning = self._hold.take(reasoning, self._kind == _THINKING)
            if reasoning is not None:
                self._text(out, _THINKING, reasoning)
        if message.content:
            self._hold.drop()
            self._text(out, _TEXT, message.content)
        if message.tool_calls:
            self._hold.drop()
            for tc in message.tool_calls:
                fn = tc.function
                self._tool(out, tc.index, tc.id, fn.name if fn is not None else None,
                           fn.arguments if fn is not None else None)

    def close(self, finish_reason: str | None = None, output_tokens: int = 0) -> str:
        """Stop the open block, then ``message_delta`` (stop reason, usage) and ``message_stop``."""
        if self._closed:
            return ''
        out: list[str] = []
        if not self._started:
            out.append(self.start())
        self._stop_open_block(out)
        reason = map_stop_reason(finish_reason if finish_reason is not None else self.finish_reason)
        out.append(_event('message_delta', _dumps({
            'type': 'message_delta', 'delta': {'stop_reason': reason, 'stop_sequence': None},
            'usage': {'output_tokens': output_tokens}})))
        out.append(_event('message_stop', '{"type":"message_stop"}'))
        self._closed = True
        return ''.join(out)

    def error(self, message: str, type: str = 'api_error') -> str:
        """Stop the open block and send an ``error`` event; the stream is closed afterwards."""
        if self._closed:
            return ''
        out: list[str] = []
        self._stop_open_block(out)
        out.append(_event('error', _dumps(anthropic_error(message, type))))
        self._closed = True
        return ''.join(out)


def tool_input(arguments: str | None) -> dict[str, Any] | None:
    """A tool call's ``input`` object from its argument text; None when the call is incomplete.

    See "Incomplete calls" above: no ``raw_arguments`` / ``value`` wrappers.
    """
    return arguments_object(arguments)


def anthropic_message(result: ChatResult, model: str, *, id: str | None = None, input_tokens: int = 0,
                      output_tokens: int | None = None, thinking: bool = True) -> dict[str, Any]:
    """The non-streaming Messages response for a collected result (``thinking``: include reasoning)."""
    content: list[dict[str, Any]] = []
    if thinking and result.reasoning_content and not result.reasoning_content.isspace():
        content.append({'type': 'thinking', 'thinking': result.reasoning_content, 'signature': ''})
    if result.content:
        content.append({'type': 'text', 'text': result.content})
    incomplete: list[dict[str, Any]] = []
    for call in result.tool_calls or ():
        value = tool_input(call.function.arguments)
        if value is None:
            incomplete.append({'id': call.id, 'name': call.function.name,
                               'partial_json': call.function.arguments or ''})
        else:
            content.append({'type': 'tool_use', 'id': call.id, 'name': call.function.name, 'input': value})
    reason = result.finish_reason
    if reason == 'tool_calls' and not any(b['type'] == 'tool_use' for b in content):
        reason = 'stop'
    message: dict[str, Any] = {
        'id': id if id is not None else random_call_id('msg_'),
        'type': 'message',
        'role': 'assistant',
        'model': model,
        'content': content,
        'stop_reason': map_stop_reason(reason),
        'stop_sequence': None,
        'usage': {'input_tokens': input_tokens,
                  'output_tokens': result.completion_tokens if output_tokens is None else output_tokens},
    }
    if incomplete:
        message['lmparse_incomplete_tool_calls'] = incomplete
    return message
