"""Type stub for the compiled ``lmparse.tools.json_parser`` module."""
from typing import Any, ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser
from lmparse.tools.json_scanner import JsonValueScanner

__all__ = ['JsonToolParser']

@disjoint_base
class JsonToolParser(ToolParser):
    """Tool parser for one JSON envelope per outer block.

    A dialect declares ``tool_open_tag`` / ``tool_close_tag`` (None: the block
    ends with the envelope) and, when they differ from the defaults,
    ``name_field`` / ``argument_field``.
    """

    tool_open_tag: ClassVar[str | None]
    tool_close_tag: ClassVar[str | None]
    name_field: ClassVar[str]
    argument_field: ClassVar[str]
    envelope_array: ClassVar[bool]
    argument_field_aliases: ClassVar[tuple[str, ...]]
    name_as_key: ClassVar[bool]
    call_tags: ClassVar[tuple[str, str] | None]
    _json_key: str | None
    _arguments_seen: bool
    _envelope_broken: bool
    _value_scanner: JsonValueScanner
    @property
    def _phase_name(self) -> str: ...
