"""Type stub for the compiled ``lmparse.recipient_channels`` module."""
from typing import Any, ClassVar, Literal

from lmparse.tools.base import ToolParser

__all__ = ['KINDS', 'ChannelGrammar', 'ChannelToolParser']

Kind = Literal['content', 'reasoning', 'drop', 'tool']
KINDS: tuple[str, ...]
MAX_HEADER: int

class ChannelGrammar:
    """One recipient-channel dialect's syntax (immutable once built)."""

    start: str
    message: str
    channel: str | None
    ends: tuple[str, ...]
    in_body_headers: tuple[str, ...]
    recipients: dict[str, str]
    channels: dict[str, str]
    no_recipient: str
    unframed: str
    invoke: str | None
    invoke_close: str | None
    parameter: str
    parameter_close: str
    optional_parameter_close: bool
    value_newlines: bool
    keep_string_parameters: bool
    values: Literal['json_or_raw', 'schema']

    def __init__(self, *, ends: tuple[str, ...], recipients: dict[str, Kind], parameter: str, parameter_close: str,
                 no_recipient: Kind = ..., channels: dict[str, Kind] | None = ..., channel: str | None = ...,
                 start: str = ..., message: str = ..., in_body_headers: tuple[str, ...] = ..., unframed: Kind = ...,
                 invoke: str | None = ..., invoke_close: str | None = ..., optional_parameter_close: bool = ...,
                 value_newlines: bool = ..., values: Literal['json_or_raw', 'schema'] = ...,
                 keep_string_parameters: bool = ...) -> None: ...

class ChannelToolParser(ToolParser):
    """A recipient-channel dialect's tool half (identity, filtering, emission); the router reads the messages."""

    tool_open_tag: ClassVar[str]
    tool_close_tag: ClassVar[None]
    channel_grammar: ClassVar[ChannelGrammar | None]
    def feed_tool_block(self, text: str, deltas: list[Any], *, final: bool = ...) -> int: ...
