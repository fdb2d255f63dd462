"""OpenAI Responses API wire format: streaming events and the non-streaming ``Response`` object.

The shapes follow the official ``openai`` SDK's own models
(``openai.types.responses``: ``ResponseStreamEvent``, ``Response``,
``ResponseReasoningItem``, ``ResponseOutputMessage``,
``ResponseFunctionToolCall``, ``ResponseUsage``); the tests validate every
event and response against them.

Streaming (one :class:`ResponsesStream` per response)::

    stream = ResponsesStream(model, request=body)
    send(stream.start())                      # response.created, response.in_progress
    for d in runner.stream(engine_chunks):
        send(stream.events(d))                # output items and their deltas
    send(stream.close(usage=usage))           # open item done, response.completed / .incomplete

Contract:

* **Output items in the model's channel order.** One item is open at a time;
  a channel change finishes the open item and adds the next one at the next
  ``output_index``: ``reasoning`` (``rs_…``), ``message`` (``msg_…``, one
  ``output_text`` part) or ``function_call`` (``fc_…``; ``call_id`` is the
  parser's call id). Reasoning after a tool call (a tool block inside
  ``<think>``) opens a *new* reasoning item after the ``function_call``, and
  text after a call a new message, as Anthropic's interleaved thinking does.
* **Events per item** (``sequence_number`` counts from 0 over the stream):
  ``response.output_item.added``; for reasoning and messages
  ``response.content_part.added`` (``content_index`` 0), then
  ``response.reasoning_text.delta`` / ``response.output_text.delta``, then
  ``….done`` with the whole text, ``response.content_part.done``; for calls
  ``response.function_call_arguments.delta`` and ``….done`` (with ``name``);
  finally ``response.output_item.done`` with the finished item.
* **Reasoning** is sent as reasoning *text*, the way open-weight servers
  (vLLM, gpt-oss) do: a ``reasoning`` item with ``summary: []`` and
  ``content: [{"type": "reasoning_text", "text": …}]``, streamed as
  ``response.reasoning_text.delta``. lmparse writes no summaries and no
  ``encrypted_content``. It is sent whenever the model reasoned
  (``reasoning=False`` leaves it out); reasoning that is only whitespace
  never opens an item (leading whitespace is held until text follows).
* **Finish.** ``stop`` and ``tool_calls`` end with ``response.completed``
  (``status: "completed"``); ``length`` with ``response.incomplete``
  (``status: "incomplete"``, ``incomplete_details.reason:
  "max_output_tokens"``), ``content_filter`` likewise with reason
  ``"content_filter"``; the item open at the end is then ``incomplete``.
* **Incomplete calls** (arguments that are not a complete JSON object when
  the output ends): ``arguments`` stay exactly as generated (never repaired
  or wrapped, as in the chat-completions adapter) and the ``function_call``
  item's ``status`` is ``"incomplete"``. The check is
  :func:`lmparse.runner.arguments_object`, the one the other adapters use;
  ``ChatRunner(drop_incomplete_calls=True)`` removes such calls from complete
  responses that ended with ``length``.
* **The non-streaming response** (:func:`responses_response`) aggregates as
  ``parse_complete`` does: one reasoning item, one message, then the calls.
  ``response.completed`` of a stream carries the streamed items instead
  (same ids as the events).
* Usage: ``input_tokens`` / ``output_tokens`` / ``total_tokens`` with
  ``output_tokens_details.reasoning_tokens`` (0 when unknown), derived from
  :func:`lmparse.runner.build_usage`.
* Errors mid-stream: an ``error`` event, then ``response.failed`` with
  ``error: {"code": "server_error", "message": …}``.
"""
from __future__ import annotations

import json
import time
from typing import Any

from lmparse.adapters._reasoning import ReasoningHold
from lmparse.protocol import DeltaMessage, random_call_id
from lmparse.runner import ChatResult, StreamDelta, arguments_object, build_usage, is_complete_call

__all__ = ['ResponsesStream', 'chat_messages', 'chat_tool_choice', 'chat_tools', 'incomplete_reason',
           'responses_request_echo', 'responses_response', 'responses_usage']

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(',', ':')).encode

_REASONING, _MESSAGE, _CALL = 1, 2, 3
_INCOMPLETE_REASONS = {'length': 'max_output_tokens', 'content_filter': 'content_filter'}
# Request fields a Response echoes back (the rest of the object is the result).
_ECHOED = ('instructions', 'max_output_tokens', 'metadata', 'previous_response_id', 'reasoning', 'temperature',
           'text', 'top_p', 'truncation', 'user', 'parallel_tool_calls', 'tool_choice', 'tools', 'store')


def incomplete_reason(finish_reason: str | None) -> str | None:
    """``incomplete_details.reason`` for an engine finish reason (None: the response completed)."""
    return _INCOMPLETE_REASONS.get(finish_reason or 'stop')


def responses_usage(input_tokens: int, output_tokens: int, reasoning_tokens: int | None) -> dict[str, Any]:
    """The Responses ``usage`` object (the same counts as the chat adapter's ``usage``)."""
    u = build_usage(input_tokens, output_tokens, reasoning_tokens)
    return {'input_tokens': u['prompt_tokens'],
            'input_tokens_details': {'cached_tokens': 0, 'cache_write_tokens': 0},
            'output_tokens': u['completion_tokens'],
            'output_tokens_details': {'reasoning_tokens': reasoning_tokens or 0},
            'total_tokens': u['total_tokens']}


def _echo(request: dict[str, Any] | None) -> dict[str, Any]:
    request = request or {}
    echoed: dict[str, Any] = {k: request.get(k) for k in _ECHOED}
    echoed['metadata'] = echoed['metadata'] or {}
    echoed['parallel_tool_calls'] = True if echoed['parallel_tool_calls'] is None else echoed['parallel_tool_calls']
    echoed['tool_choice'] = echoed['tool_choice'] if echoed['tool_choice'] is not None else 'auto'
    echoed['tools'] = echoed['tools'] or []
    echoed['text'] = echoed['text'] or {'format': {'type': 'text'}}
    echoed['truncation'] = echoed['truncation'] or 'disabled'
    echoed['store'] = bool(echoed['store'])
    return echoed


def _response_object(id: str, model: str, created_at: int, status: str, output: list[dict[str, Any]],
                     echoed: dict[str, Any], usage: dict[str, Any] | None = None,
                     finish_reason: str | None = None, error: dict[str, Any] | None = None) -> dict[str, Any]:
    reason = incomplete_reason(finish_reason) if status == 'incomplete' else None
    return {'id': id, 'object': 'response', 'created_at': created_at, 'status': status,
            'completed_at': int(time.time()) if status == 'completed' else None,
            'background': False, 'error': error,
            'incomplete_details': {'reason': reason} if reason else None,
            'model': model, 'output': output, 'usage': usage, **echoed}


def _reasoning_item(id: str, text: str | None, status: str) -> dict[str, Any]:
    return {'id': id, 'type': 'reasoning', 'summary': [],
            'content': [] if text is None else [{'type': 'reasoning_text', 'text': text}], 'status': status}


def _message_item(id: str, text: str | None, status: str) -> dict[str, Any]:
    return {'id': id, 'type': 'message', 'role': 'assistant', 'status': status,
            'content': [] if text is None else [_text_part(text)]}


def _text_part(text: str) -> dict[str, Any]:
    return {'type': 'output_text', 'text': text, 'annotations': [], 'logprobs': []}


def _call_item(id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {'id': id, 'type': 'function_call', 'call_id': call_id, 'name': name, 'arguments': arguments,
            'status': status}


class _Item:
    __slots__ = ('kind', 'index', 'id', 'parts', 'call_id', 'name', 'item')

    def __init__(self, kind: int, index: int, id: str, call_id: str = '', name: str = '') -> None:
        self.kind = kind
        self.index = index
        self.id = id
        self.parts: list[str] = []
        self.call_id = call_id
        self.name = name
        self.item: dict[str, Any] | None = None  # the finished item


class ResponsesStream:
    """Formats one streamed response as Responses API server-sent events."""

    __slots__ = ('id', 'model', 'created_at', 'reasoning', 'input_tokens', 'finish_reason', 'final', '_echo', '_seq',
                 '_items', '_open', '_calls', '_hold', '_started', '_closed')

    def __init__(self, model: str, *, id: str | None = None, created_at: int | None = None,
                 request: dict[str, Any] | None = None, reasoning: bool = True, input_tokens: int = 0) -> None:
        self.id = id if id is not None else random_call_id('resp_')
        self.model = model
        self.created_at = int(time.time()) if created_at is None else created_at
        self.reasoning = reasoning      # False: reasoning is left out
        self.input_tokens = input_tokens
        self.finish_reason: str | None = None
        self.final: dict[str, Any] | None = None  # the Response the closing event carried
        self._echo = _echo(request)
        self._seq = 0
        self._items: list[_Item] = []
        self._open: _Item | None = None
        self._calls: dict[int, _Item] = {}  # tool-call index -> its item
        self._hold = ReasoningHold()        # whitespace-only reasoning not sent yet
        self._started = False
        self._closed = False

    # ---- event plumbing -----------------------------------------------------------

    def _event(self, out: list[dict[str, Any]], kind: str, **fields: Any) -> None:
        out.append({'type': kind, 'sequence_number': self._seq, **fields})
        self._seq += 1

    def response(self, status: str, usage: dict[str, Any] | None = None,
                 error: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``Response`` object as of now: the finished items (with ``status``)."""
        output = [it.item for it in self._items if it.item is not None]
        return _response_object(self.id, self.model, self.created_at, status, output, self._echo, usage,
                                 self.finish_reason, error)

    def start_events(self) -> list[dict[str, Any]]:
        """``response.created`` and ``response.in_progress``."""
        out: list[dict[str, Any]] = []
        if not self._started:
            self._started = True
            snapshot = self.response('in_progress')
            self._event(out, 'response.created', response=snapshot)
            self._event(out, 'response.in_progress', response=snapshot)
        return out

    def _finish_open(self, out: list[dict[str, Any]], status: str = 'completed') -> None:
        it = self._open
        if it is None:
            return
        self._open = None
        text = ''.join(it.parts)
        base = {'item_id': it.id, 'output_index': it.index}
        if it.kind == _CALL:
            if status == 'completed' and arguments_object(text) is None:
                status = 'incomplete'
            self._event(out, 'response.function_call_arguments.done', **base, name=it.name, arguments=text)
            it.item = _call_item(it.id, it.call_id, it.name, text, status)
        elif it.kind == _REASONING:
            part = {'type': 'reasoning_text', 'text': text}
            self._event(out, 'response.reasoning_text.done', **base, content_index=0, text=text)
            self._event(out, 'response.content_part.done', **base, content_index=0, part=part)
            it.item = _reasoning_item(it.id, text, status)
        else:
            self._event(out, 'response.output_text.done', **base, content_index=0, text=text, logprobs=[])
            self._event(out, 'response.content_part.done', **base, content_index=0, part=_text_part(text))
            it.item = _message_item(it.id, text, status)
        self._event(out, 'response.output_item.done', output_index=it.index, item=it.item)

    def _add(self, out: list[dict[str, Any]], kind: int, call_id: str = '', name: str = '') -> _Item:
        self._finish_open(out)
        prefix = 'rs_' if kind == _REASONING else 'msg_' if kind == _MESSAGE else 'fc_'
        it = _Item(kind, len(self._items), random_call_id(prefix), call_id, name)
        self._items.append(it)
        self._open = it
        if kind == _CALL:
            item = _call_item(it.id, call_id, name, '', 'in_progress')
            self._event(out, 'response.output_item.added', output_index=it.index, item=item)
            return it
        if kind == _REASONING:
            item, part = _reasoning_item(it.id, None, 'in_progress'), {'type': 'reasoning_text', 'text': ''}
        else:
            item, part = _message_item(it.id, None, 'in_progress'), _text_part('')
        self._event(out, 'response.output_item.added', output_index=it.index, item=item)
        self._event(out, 'response.content_part.added', item_id=it.id, output_index=it.index, content_index=0,
                    part=part)
        return it

    def _text(self, out: list[dict[str, Any]], kind: int, text: str) -> None:
        it = self._open
        if it is None or it.kind != kind:
            it = self._add(out, kind)
        it.parts.append(text)
        if kind == _REASONING:
            self._event(out, 'response.reasoning_text.delta', item_id=it.id, output_index=it.index,
                        content_index=0, delta=text)
        else:
            self._event(out, 'response.output_text.delta', item_id=it.id, output_index=it.index,
                        content_index=0, delta=text, logprobs=[])

    def _call(self, out: list[dict[str, Any]], key: int, call_id: str | None, name: str | None,
              args: str | None) -> None:
        it = self._calls.get(key)
        if it is None:
            it = self._add(out, _CALL, call_id or random_call_id('call_'), name or '')
            self._calls[key] = it
        elif it is not self._open:
            # A conforming parser finishes a call before the next one starts; a late
            # fragment of a finished item cannot be sent any more.
            return
        if args:
            it.parts.append(args)
            self._event(out, 'response.function_call_arguments.delta', item_id=it.id, output_index=it.index,
                        delta=args)

    # ---- public API ----------------------------------------------------------------

    def message_events(self, message: DeltaMessage, out: list[dict[str, Any]]) -> None:
        """Append the events of one parser message to ``out``."""
        reasoning = message.reasoning_content
        if reasoning and self.reasoning:
            reasoning = self._hold.take(reasoning, self._open is not None and self._open.kind == _REASONING)
            if reasoning is not None:
                self._text(out, _REASONING, reasoning)
        if message.content:
            self._hold.drop()
            self._text(out, _MESSAGE, message.content)
        if message.tool_calls:
            self._hold.drop()
            for tc in message.tool_calls:
                fn = tc.function
                self._call(out, tc.index, tc.id, fn.name if fn is not None else None,
                           fn.arguments if fn is not None else None)

    def event_dicts(self, d: StreamDelta) -> list[dict[str, Any]]:
        """The events of one runner delta as dicts (the start events first, on the first call)."""
        if self._closed:
            raise RuntimeError('ResponsesStream is closed')
        out = self.start_events()
        self.message_events(d.message, out)
        if d.finish_reason is not None:
            self.finish_reason = d.finish_reason
        return out

    def close_dicts(self, finish_reason: str | None = None, usage: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Finish the open item, then ``response.completed`` or ``response.incomplete``."""
        if self._closed:
            return []
        out = self.start_events()
        if finish_reason is not None:
            self.finish_reason = finish_reason
        incomplete = incomplete_reason(self.finish_reason) is not None
        self._finish_open(out, 'incomplete' if incomplete else 'completed')
        status = 'incomplete' if incomplete else 'completed'
        self.final = self.response(status, usage)
        self._event(out, f'response.{status}', response=self.final)
        self._closed = True
        return out

    def error_dicts(self, message: str) -> list[dict[str, Any]]:
        """An ``error`` event and ``response.failed``; the stream is closed afterwards."""
        if self._closed:
            return []
        out = self.start_events()
        self._finish_open(out, 'incomplete')
        self._event(out, 'error', code='server_error', message=message, param=None)
        self.final = self.response('failed', error={'code': 'server_error', 'message': message})
        self._event(out, 'response.failed', response=self.final)
        self._closed = True
        return out

    def start(self) -> str:
        """SSE text of the start events."""
        return _sse(self.start_events())

    def events(self, d: StreamDelta) -> str:
        """SSE text for one runner delta ('' when it shows nothing)."""
        return _sse(self.event_dicts(d))

    def close(self, finish_reason: str | None = None, usage: dict[str, Any] | None = None) -> str:
        """SSE text that ends the stream."""
        return _sse(self.close_dicts(finish_reason, usage))

    def error(self, message: str) -> str:
        """SSE text of a mid-stream failure."""
        return _sse(self.error_dicts(message))


def _sse(events: list[dict[str, Any]]) -> str:
    return ''.join(f'event: {e["type"]}\ndata: {_dumps(e)}\n\n' for e in events)


def responses_response(result: ChatResult, model: str, *, id: str | None = None, created_at: int | None = None,
                       request: dict[str, Any] | None = None, input_tokens: int = 0,
                       output_tokens: int | None = None, reasoning: bool = True) -> dict[str, Any]:
    """The non-streaming ``Response`` for a collected result: reasoning, message, then function calls."""
    reason = result.finish_reason
    if reason == 'tool_calls' and not result.tool_calls:
        reason = 'stop'
    incomplete = incomplete_reason(reason) is not None
    output: list[dict[str, Any]] = []
    if reasoning and result.reasoning_content and not result.reasoning_content.isspace():
        output.append(_reasoning_item(random_call_id('rs_'), result.reasoning_content, 'completed'))
    if result.content:
        output.append(_message_item(random_call_id('msg_'), result.content, 'completed'))
    for call in result.tool_calls or ():
        status = 'completed' if is_complete_call(call) else 'incomplete'
        output.append(_call_item(random_call_id('fc_'), call.id or random_call_id('call_'), call.function.name,
                                 call.function.arguments or '', status))
    if incomplete and output:
        output[-1]['status'] = 'incomplete'  # the item the output ended in
    n = result.completion_tokens if output_tokens is None else output_tokens
    return _response_object(id if id is not None else random_call_id('resp_'), model,
                            int(time.time()) if created_at is None else created_at,
                            'incomplete' if incomplete else 'completed', output, _echo(request),
                            responses_usage(input_tokens, n, result.reasoning_tokens), reason)


# ---- requests: Responses shapes -> the chat shapes the parsers read -----------------------


def chat_tools(tools: Any) -> list[dict[str, Any]] | None:
    """Responses function tools (flat ``{"type": "function", "name", "parameters"}``) in the chat shape.

    The parsers filter calls by these names and type values by these schemas.
    Raises ValueError for anything but a list of function tools.
    """
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise ValueError('tools: expected a list')
    out = []
    for i, t in enumerate(tools):
        if not isinstance(t, dict) or t.get('type') != 'function':
            kind = t.get('type') if isinstance(t, dict) else None
            raise ValueError(f'tools[{i}]: only function tools can be replayed (got type {kind!r})')
        if not isinstance(t.get('name'), str):
            hint = ' (the Responses shape is flat: {"type": "function", "name": ..., "parameters": ...})' \
                if isinstance(t.get('function'), dict) else ''
            raise ValueError(f'tools[{i}]: expected a string "name"{hint}')
        fn: dict[str, Any] = {'name': t['name'], 'parameters': t.get('parameters') or {}}
        if isinstance(t.get('description'), str):
            fn['description'] = t['description']
        if isinstance(t.get('strict'), bool):
            fn['strict'] = t['strict']
        out.append({'type': 'function', 'function': fn})
    return out


def chat_tool_choice(choice: Any, tools: list[dict[str, Any]] | None) -> tuple[Any, list[dict[str, Any]] | None]:
    """A Responses ``tool_choice`` as the chat ``tool_choice``, with the tools it leaves allowed.

    ``{"type": "allowed_tools", "mode", "tools"}`` narrows the tools to the
    listed functions (mode ``auto`` or ``required``).
    """
    if choice is None or choice in ('auto', 'none', 'required'):
        return choice if choice is not None else 'auto', tools
    if isinstance(choice, dict):
        kind = choice.get('type')
        if kind == 'function' and isinstance(choice.get('name'), str):
            return {'type': 'function', 'function': {'name': choice['name']}}, tools
        if kind == 'allowed_tools' and choice.get('mode') in ('auto', 'required') and isinstance(
                choice.get('tools'), list):
            names = {t.get('name') for t in choice['tools'] if isinstance(t, dict) and t.get('type') == 'function'}
            kept = [t for t in tools or () if t['function']['name'] in names]
            return choice['mode'], kept
    raise ValueError('tool_choice: expected "auto", "none", "required", {"type": "function", "name": ...} '
                     'or {"type": "allowed_tools", "mode": "auto" | "required", "tools": [...]}')


def responses_request_echo(request: dict[str, Any]) -> dict[str, Any]:
    """The fields a Response echoes, from a chat-shaped request (``lmparse parse --request``).

    Chat tools (``{"type": "function", "function": {...}}``) become flat
    Responses function tools; a forced function choice becomes
    ``{"type": "function", "name": ...}``.
    """
    tools = []
    for t in request.get('tools') or ():
        fn = t.get('function') if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get('name'), str):
            flat = {'type': 'function', 'name': fn['name'], 'parameters': fn.get('parameters') or {},
                    'strict': fn.get('strict', False)}
            if isinstance(fn.get('description'), str):
                flat['description'] = fn['description']
            tools.append(flat)
    choice = request.get('tool_choice')
    if isinstance(choice, dict):
        name = (choice.get('function') or {}).get('name') if isinstance(choice.get('function'), dict) else None
        choice = {'type': 'function', 'name': name} if isinstance(name, str) else None
    elif choice not in ('auto', 'none', 'required'):
        choice = None
    echo: dict[str, Any] = {'tools': tools, 'tool_choice': choice}
    for key in ('temperature', 'top_p', 'user', 'parallel_tool_calls', 'metadata'):
        if key in request:
            echo[key] = request[key]
    return echo


def _text_of(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f'{where}: content must be a string or a list of parts')
    texts = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get('text'), str) and part.get('type') in (
                'input_text', 'output_text', 'text', 'summary_text', 'reasoning_text'):
            texts.append(part['text'])
    return ''.join(texts)


def chat_messages(input: Any, instructions: Any = None) -> list[dict[str, Any]]:
    """Responses ``input`` (a string or input items) as chat messages.

    Messages keep their role and text; consecutive output items of one
    assistant turn (``reasoning``, assistant ``message``, ``function_call``)
    become one assistant message with ``tool_calls``; ``function_call_output``
    becomes a ``tool`` message. Other item types raise ValueError.
    """
    messages: list[dict[str, Any]] = []
    if isinstance(instructions, str):
        messages.append({'role': 'system', 'content': instructions})
    if isinstance(input, str):
        messages.append({'role': 'user', 'content': input})
        return messages
    if not isinstance(input, list):
        raise ValueError('input: expected a string or a list of input items')
    turn: dict[str, Any] | None = None  # the assistant message being built
    for i, item in enumerate(input):
        where = f'input[{i}]'
        if not isinstance(item, dict):
            raise ValueError(f'{where}: expected an object')
        kind = item.get('type', 'message' if 'role' in item else None)
        if kind == 'message' and item.get('role') == 'assistant' or kind in ('reasoning', 'function_call'):
            if turn is None:
                turn = {'role': 'assistant', 'content': None}
                messages.append(turn)
            if kind == 'message':
                text = _text_of(item.get('content'), where)
                turn['content'] = (turn['content'] or '') + text
            elif kind == 'reasoning':
                text = _text_of(item.get('content') or item.get('summary') or [], where)
                if text:
                    turn['reasoning_content'] = turn.get('reasoning_content', '') + text
            else:
                if not isinstance(item.get('name'), str) or not isinstance(item.get('call_id'), str):
                    raise ValueError(f'{where}: a function_call needs string "name" and "call_id"')
                turn.setdefault('tool_calls', []).append({
                    'id': item['call_id'], 'type': 'function',
                    'function': {'name': item['name'], 'arguments': item.get('arguments') or '{}'}})
            continue
        turn = None
        if kind == 'message':
            role = item.get('role')
            if role not in ('user', 'system', 'developer'):
                raise ValueError(f'{where}: role must be user, assistant, system or developer')
            messages.append({'role': role, 'content': _text_of(item.get('content'), where)})
        elif kind == 'function_call_output':
            output = item.get('output')
            if not isinstance(item.get('call_id'), str):
                raise ValueError(f'{where}: a function_call_output needs a string "call_id"')
            messages.append({'role': 'tool', 'tool_call_id': item['call_id'],
                             'content': output if isinstance(output, str) else _text_of(output, where)})
        elif kind == 'item_reference':
            raise ValueError(f'{where}: item references need stored responses (serve --store)')
        else:
            raise ValueError(f'{where}: input items of type {kind!r} cannot be replayed')
    return messages
