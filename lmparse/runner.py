"""Engine-agnostic chat runner: engine chunks in, parser deltas with transport metadata out.

One :class:`ChatRunner` serves one response. It feeds every engine chunk
through a response parser (any object with ``stream_chunk`` /
``parse_complete`` and optionally ``tool_parser`` / ``reasoning_tokens``) and

* attaches token ids, logprobs and the finish reason to the **last** delta
  produced from one engine chunk only (so transport metadata is never sent
  twice);
* turns a final ``stop`` into ``tool_calls`` once any tool call was emitted;
* keeps the counts the usage block needs (``reasoning_tokens`` when the parser
  knows it).

It is plain Python on purpose: it only moves references around, the parsing
work happens in the compiled parser.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lmparse.protocol import DeltaMessage, ToolCall
from lmparse.token_ids import read_token_ids

if TYPE_CHECKING:
    from lmparse.token_ids import TokenIdsLike

__all__ = ['ChatResult', 'ChatRunner', 'EngineChunk', 'StreamDelta', 'arguments_object', 'build_usage',
           'is_complete_call']


def arguments_object(arguments: str | None) -> dict[str, Any] | None:
    """A call's arguments as a JSON object, or None when they are not one (the call is incomplete).

    Empty arguments are incomplete (a complete call without arguments carries
    ``{}``); a JSON string holding an object (double-encoded arguments, as some
    models write them) is decoded once. Nothing else is repaired or wrapped.
    """
    if not arguments:
        return None
    try:
        value = json.loads(arguments)
        if isinstance(value, str):
            value = json.loads(value)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def is_complete_call(call: ToolCall) -> bool:
    """Whether a collected call's arguments are a complete JSON object."""
    return arguments_object(call.function.arguments) is not None


@dataclass(slots=True)
class EngineChunk:
    """One engine step: newly decoded text and the token ids behind it."""

    text: str = ''
    token_ids: Sequence[int] = ()
    logprobs: Any = None
    finish_reason: str | None = None


@dataclass(slots=True)
class StreamDelta:
    """One parser delta ready for an adapter.

    ``token_ids`` / ``logprobs`` / ``finish_reason`` are set on the last delta
    of an engine chunk only; ``is_last`` marks that delta.
    """

    message: DeltaMessage
    tool_emitted: bool
    token_ids: Sequence[int] = ()
    logprobs: Any = None
    finish_reason: str | None = None
    is_last: bool = True


@dataclass(slots=True)
class ChatResult:
    """A complete (non-streaming) response."""

    content: str | None
    reasoning_content: str | None
    tool_calls: list[ToolCall] | None
    finish_reason: str
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[Any] = field(default_factory=list)
    completion_tokens: int = 0
    reasoning_tokens: int | None = None
    # Calls removed by ``drop_incomplete_calls`` (their payload never closed).
    dropped_tool_calls: list[ToolCall] = field(default_factory=list)


def build_usage(prompt_tokens: int, completion_tokens: int, reasoning_tokens: int | None) -> dict[str, Any]:
    """OpenAI ``usage`` dict; reasoning tokens are reported only when known."""
    usage: dict[str, Any] = {
        'prompt_tokens': prompt_tokens,
        'completion_tokens': completion_tokens,
        'total_tokens': prompt_tokens + completion_tokens,
    }
    if reasoning_tokens is not None:
        usage['completion_tokens_details'] = {'reasoning_tokens': reasoning_tokens}
    return usage


class ChatRunner:
    """Drive one response parser with engine chunks.

    ``emit_metadata_only``: when an engine chunk produces no visible delta but
    carries token ids, still yield an empty-content delta for them (clients
    that asked for token ids or logprobs need every step). A chunk that
    carries a finish reason always yields at least one delta.

    ``drop_incomplete_calls``: in a complete response (:meth:`collect`) that
    ended with ``finish_reason="length"``, remove the calls whose payload never
    closed (arguments that are not a complete JSON object, and a last call the
    output ended inside); they are listed in ``ChatResult.dropped_tool_calls``.
    Streams are not affected (what was sent cannot be taken back).
    """

    __slots__ = ('parser', 'emit_metadata_only', 'drop_incomplete_calls', 'tool_emitted', 'finish_reason',
                 'completion_tokens', '_finished')

    def __init__(self, parser: Any, *, emit_metadata_only: bool = False, drop_incomplete_calls: bool = False) -> None:
        self.parser = parser
        self.emit_metadata_only = emit_metadata_only
        self.drop_incomplete_calls = drop_incomplete_calls
        self.tool_emitted = False
        self.finish_reason: str | None = None
        self.completion_tokens = 0
        self._finished = False

    @property
    def reasoning_tokens(self) -> int | None:
        value = getattr(self.parser, 'reasoning_tokens', None)
        return value if isinstance(value, int) else None

    @property
    def finished(self) -> bool:
        return self._finished

    def feed(self, text: str | None, token_ids: TokenIdsLike | None = None, logprobs: Any = None,
             finish_reason: str | None = None) -> list[StreamDelta]:
        """Parse one engine chunk; ``finish_reason`` set means it is the last one."""
        if self._finished:
            raise RuntimeError('ChatRunner.feed() called after the finishing chunk')
        ids: Any = token_ids if token_ids is not None else ()
        if not isinstance(ids, Sized):  # an iterator: read it once
            ids = read_token_ids(ids)
        n_ids = len(ids)
        self.completion_tokens += n_ids
        final = finish_reason is not None
        pairs = self.parser.stream_chunk(text or '', ids, final=final)
        if not pairs:
            if not final and not (self.emit_metadata_only and n_ids):
                return []
            pairs = [(DeltaMessage(role='assistant'), False)]
        out: list[StreamDelta] = []
        last = len(pairs) - 1
        for i, (message, emitted) in enumerate(pairs):
            if emitted:
                self.tool_emitted = True
            if i < last:
                out.append(StreamDelta(message, emitted, (), None, None, False))
            else:
                reason = finish_reason
                if reason == 'stop' and self.tool_emitted:
                    reason = 'tool_calls'
                out.append(StreamDelta(message, emitted, ids, logprobs, reason, True))
        if final:
            self._finished = True
            self.finish_reason = out[-1].finish_reason
        return out

    def finish(self, finish_reason: str = 'stop') -> list[StreamDelta]:
        """End a stream whose engine stopped without a finishing chunk (no-op when finished)."""
        if self._finished:
            return []
        return self.feed('', (), None, finish_reason)

    def stream(self, chunks: Iterable[EngineChunk]) -> Iterator[StreamDelta]:
        """Deltas for every chunk; the stream is finished with ``stop`` if the engine did not say."""
        for chunk in chunks:
            yield from self.feed(chunk.text, chunk.token_ids, chunk.logprobs, chunk.finish_reason)
            if self._finished:
                return
        yield from self.finish()

    def collect(self, chunks: Iterable[EngineChunk]) -> ChatResult:
        """Non-streaming: concatenate the engine text and parse it once with ``parse_complete``."""
        if self._finished:
            raise RuntimeError('ChatRunner.collect() on a finished runner')
        parts: list[str] = []
        token_ids: list[int] = []
        logprobs: list[Any] = []
        finish_reason: str | None = None
        for chunk in chunks:
            parts.append(chunk.text or '')
            if chunk.token_ids is not None:
                token_ids.extend(read_token_ids(chunk.token_ids))
            if chunk.logprobs:
                logprobs.extend(chunk.logprobs)
            if chunk.finish_reason is not None:
                finish_reason = chunk.finish_reason
                break
        text = ''.join(parts)
        reason = finish_reason or 'stop'
        dropped: list[ToolCall] = []
        if self.drop_incomplete_calls and reason == 'length' and hasattr(self.parser, 'mode'):
            content, tool_calls, reasoning, open_at_end = self._parse_probing_end(text, token_ids)
            if tool_calls:
                kept: list[ToolCall] = []
                for i, call in enumerate(tool_calls):
                    last_open = open_at_end and i == len(tool_calls) - 1
                    (dropped if last_open or not is_complete_call(call) else kept).append(call)
                tool_calls = kept
        else:
            content, tool_calls, reasoning = self.parser.parse_complete(text, token_ids)
        if tool_calls:
            self.tool_emitted = True
            if reason == 'stop':
                reason = 'tool_calls'
        self._finished = True
        self.finish_reason = reason
        self.completion_tokens = len(token_ids)
        return ChatResult(content, reasoning, tool_calls or None, reason, token_ids, logprobs,
                          len(token_ids), self.reasoning_tokens, dropped)

    def _parse_probing_end(self, text: str, token_ids: list[int]) -> tuple[Any, Any, Any, bool]:
        """``parse_complete`` as two chunks (text, then the end), noting whether the text ended inside a call.

        Any chunking gives the same result (the parsers' contract). A family
        that builds the arguments JSON itself (XML-like, DSML) closes the
        object at the end of input, so for those the open block is the only
        sign that the model never closed the call; a JSON-envelope or Kimi
        call with a complete envelope stays complete.
        """
        pairs = list(self.parser.stream_chunk(text, token_ids, final=False))
        open_block = self.parser.mode == 'tool'
        pairs.extend(self.parser.stream_chunk('', [], final=True))
        content: list[str] = []
        reasoning: list[str] = []
        deltas: list[Any] = []
        for message, _ in pairs:
            content.append(message.content or '')
            reasoning.append(message.reasoning_content or '')
            deltas.extend(message.tool_calls or ())
        tool = getattr(self.parser, 'tool_parser', None)
        calls = tool.build_tool_calls(deltas) if tool is not None and deltas else []
        return (''.join(content) or None, calls or None, ''.join(reasoning) or None,
                open_block and _builds_arguments(tool))


def _builds_arguments(tool: Any) -> bool:
    # The families that write the arguments JSON from the model's markup (and close it at the end).
    try:
        from lmparse.tools.dsml import DsmlToolParser
        from lmparse.tools.xml_parser import XmlToolParser
    except ImportError:  # pragma: no cover - always compiled together
        return False
    return isinstance(tool, (XmlToolParser, DsmlToolParser))
