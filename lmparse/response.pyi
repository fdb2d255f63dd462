"""Type stub for the compiled ``lmparse.response`` module.

Requests are typed ``Any``: the parsers accept lmparse's
``ChatCompletionRequest``, a plain ``dict`` or any pydantic request with the
same fields (see ``lmparse.request``).
"""
import logging
from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal

from typing_extensions import Self, disjoint_base

from lmparse.protocol import DeltaMessage, DeltaToolCall, ToolCall
from lmparse.reasoning import ReasoningParser
from lmparse.tools.base import ToolParser

__all__ = ['ResponseParserCore', 'ResponseParser', 'BaseResponseParser', 'aggregate_deltas']

MAX_BLOCK_HEADER: int


def aggregate_deltas(messages: list[tuple[DeltaMessage, bool]]) -> tuple[str, str, list[DeltaToolCall]]: ...

logger: logging.Logger

_Mode = Literal["plain", "reasoning", "tool"]

@disjoint_base
class ResponseParserCore:
    """Streaming state machine shared by the default response parser.

    Reads ``reasoning_parser_cls``, ``tool_parser_cls``, ``tokenizer`` and
    ``chat_template_kwargs_from_request`` from the concrete class when present.
    """

    _pending: str
    _kwargs: dict[str, Any]
    request: Any
    reasoning_parser: ReasoningParser | None
    tool_parser: ToolParser | None
    enable_thinking: bool | None
    reasoning_enabled: bool
    def __init__(self, request: Any) -> None: ...
    @property
    def reasoning_tokens(self) -> int | None:
        """Tokens inside the reasoning tags so far, or None without a tokenizer."""
    @reasoning_tokens.setter
    def reasoning_tokens(self, value: int | None) -> None: ...
    @property
    def mode(self) -> _Mode: ...
    def stream_chunk(
        self,
        delta_text: str | None,
        delta_token_ids: Sequence[int] | None = None,
        final: bool = False,
        **kwargs: Any,
    ) -> list[tuple[DeltaMessage, bool]]:
        """Route one engine chunk; returns ``[(DeltaMessage, tool_calls_emitted), ...]``."""
    def parse_complete(
        self, text: str, token_ids: Sequence[int] | None = None, **kwargs: Any
    ) -> tuple[str | None, list[ToolCall] | None, str | None]:
        """Parse a whole response: ``(content or None, [ToolCall] or None, reasoning or None)``."""

class ResponseParser:
    """Interface of every response parser (one instance per response)."""

    supports_required_tool_choice: ClassVar[bool]
    request: Any
    reasoning_tokens: int | None
    @classmethod
    def set_parsers(
        cls,
        reasoning_parser_name: str | None = None,
        tool_parser_name: str | None = None,
        tokenizer: Any = None,
    ) -> None: ...
    def __init__(self, request: Any) -> None: ...
    def stream_chunk(
        self,
        delta_text: str | None,
        delta_token_ids: Sequence[int] | None = None,
        final: bool = False,
        **kwargs: Any,
    ) -> list[tuple[DeltaMessage, bool]]: ...
    def parse_complete(
        self, text: str, token_ids: Sequence[int] | None = None, **kwargs: Any
    ) -> tuple[str | None, list[ToolCall] | None, str | None]: ...

class BaseResponseParser(ResponseParserCore, ResponseParser):
    """Default response parser: content, reasoning and tool calls.

    Configure it with ``set_parsers`` (process-wide, like LMDeploy) or get an
    independent configured subclass with ``with_parsers``.
    """

    reasoning_parser_cls: ClassVar[type[ReasoningParser] | None]
    tool_parser_cls: ClassVar[type[ToolParser] | None]
    tokenizer: ClassVar[Any]
    supports_required_tool_choice: ClassVar[bool]
    # With a tokenizer and token ids: a reasoning / tool-open tag held as one token is
    # structure only when it arrived as that token (False: the text alone decides).
    confirm_tags_by_token_id: ClassVar[bool]
    # True: calls to tools the request does not declare are kept (vLLM's parsers keep them; SGLang
    # with SGLANG_FORWARD_UNKNOWN_TOOLS); False (default): dropped, LMDeploy's rule.
    keep_undeclared_tool_calls: ClassVar[bool]
    # True: with no tool parser, the reasoning dialect's ``call_open_tag`` inside reasoning ends it; the
    # tag and all that follows are content as written (vLLM replace mode); False (default): reasoning text.
    call_ends_reasoning: ClassVar[bool]
    MODE_PLAIN: Final = "plain"
    MODE_REASONING: Final = "reasoning"
    MODE_TOOL: Final = "tool"
    def __init__(self, request: Any) -> None: ...
    @classmethod
    def set_parsers(
        cls,
        reasoning_parser_name: str | None = None,
        tool_parser_name: str | None = None,
        tokenizer: Any = None,
    ) -> None:
        """Configure this class by registry name; unset names clear earlier settings."""
    @classmethod
    def with_parsers(
        cls,
        reasoning_parser_name: str | None = None,
        tool_parser_name: str | None = None,
        tokenizer: Any = None,
    ) -> type[Self]:
        """Return a new subclass configured independently of ``cls`` (one per served model).

        Engine names that stand for a whole response parser (vLLM's ``openai`` /
        ``openai_gptoss``, SGLang's ``gpt-oss``) return that parser's class instead.
        """
    @classmethod
    def chat_template_kwargs_from_request(cls, request: Any) -> dict[str, Any]: ...
