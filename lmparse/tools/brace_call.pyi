"""Type stub for the compiled ``lmparse.tools.brace_call`` module."""
from typing import ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser

__all__ = ['BraceCallToolParser']

@disjoint_base
class BraceCallToolParser(ToolParser):
    """``call:NAME{key:value,...}`` calls; a dialect declares its markers and call prefixes."""

    tool_open_tag: ClassVar[str | None]
    tool_close_tag: ClassVar[str | None]
    string_delimiter: ClassVar[str | None]
    call_prefixes: ClassVar[tuple[str, ...]]
    @property
    def _phase_name(self) -> str: ...
