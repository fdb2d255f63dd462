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

from collections.abc import Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lmparse.protocol import DeltaMessage, ToolCall
from lmparse.token_ids import read_token_ids

if TYPE_CHECKING:
    from lmparse.token_ids import TokenIdsLike

__all__ = ['ChatResult', 'ChatRunner', 'EngineChunk', 'StreamDelta', 'build_usage']


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
    """

    __slots__ = ('parser', 'emit_metadata_only', 'tool_emitted', 'finish_reason', 'completion_tokens',
                 '_finished')

    def __init__(self, parser: Any, *, emit_metadata_only: bool = False) -> None:
        self.parser = parser
        self.emit_metadata_only = emit_metadata_only
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
            pairs = [(DeltaMessage(role='assistant', content=''), False)]
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
        content, tool_calls, reasoning = self.parser.parse_complete(''.join(parts), token_ids)
        reason = finish_reason or 'stop'
        if tool_calls:
            self.tool_emitted = True
            if reason == 'stop':
                reason = 'tool_calls'
        self._finished = True
        self.finish_reason = reason
        self.completion_tokens = len(token_ids)
        return ChatResult(content, reasoning, tool_calls or None, reason, token_ids, logprobs,
                          len(token_ids), self.reasoning_tokens)
