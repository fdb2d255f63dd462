"""Type stub for the compiled ``lmparse.harmony`` module."""
from typing import Any, ClassVar, Literal

from lmparse.protocol import DeltaMessage, ToolCall
from lmparse.response import ResponseParser
from lmparse.token_ids import TokenIdsLike
from lmparse.tools.base import ToolParser

__all__ = [
    "CALL_ID",
    "CHANNEL_ID",
    "CONSTRAIN_ID",
    "END_ID",
    "HarmonyResponseParser",
    "HARMONY_SPECIAL_TOKEN_IDS",
    "HarmonyParserCore",
    "HarmonyToolParser",
    "MESSAGE_ID",
    "RETURN_ID",
    "START_ID",
    "parse_header",
]

RETURN_ID: int
CONSTRAIN_ID: int
CHANNEL_ID: int
START_ID: int
END_ID: int
MESSAGE_ID: int
CALL_ID: int
HARMONY_SPECIAL_TOKEN_IDS: dict[str, int]

def parse_header(
    header: str, explicit_start: bool = False
) -> tuple[Literal["tool", "reasoning", "content", "drop"], str | None]: ...

class HarmonyToolParser(ToolParser):
    structural_tag_model: ClassVar[str | None]

class HarmonyParserCore:
    _pending: str
    request: Any
    tool_parser: HarmonyToolParser
    def __init__(self, request: Any) -> None: ...
    @property
    def reasoning_tokens(self) -> int: ...
    @property
    def input_mode_in_use(self) -> Literal["auto", "text", "ids"]: ...
    @property
    def state(self) -> Literal["header", "content", "between"]: ...
    def stream_chunk(
        self, delta_text: str | None, delta_token_ids: TokenIdsLike | None = None, final: bool = False, **kwargs: Any
    ) -> list[tuple[DeltaMessage, bool]]: ...
    def parse_complete(
        self, text: str, token_ids: TokenIdsLike | None = None, **kwargs: Any
    ) -> tuple[str | None, list[ToolCall] | None, str | None]: ...

class HarmonyResponseParser(HarmonyParserCore, ResponseParser):  # type: ignore[misc]
    tool_parser_cls: ClassVar[type[HarmonyToolParser]]
    reasoning_parser_cls: ClassVar[None]
    tokenizer: ClassVar[Any]
    input_mode: ClassVar[Literal["auto", "text", "ids"]]
    supports_required_tool_choice: ClassVar[bool]
    def __init__(self, request: Any) -> None: ...
    @classmethod
    def set_parsers(
        cls, reasoning_parser_name: str | None = None, tool_parser_name: str | None = None, tokenizer: Any = None
    ) -> None: ...
    @classmethod
    def with_parsers(
        cls,
        reasoning_parser_name: str | None = None,
        tool_parser_name: str | None = None,
        tokenizer: Any = None,
        input_mode: Literal["auto", "text", "ids"] | None = None,
    ) -> type[HarmonyResponseParser]: ...
