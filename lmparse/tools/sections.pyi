"""Type stub for the compiled ``lmparse.tools.sections`` module."""
from typing import ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser

__all__ = ['SectionToolParser']

def _function_name(raw_id: str) -> str: ...

@disjoint_base
class SectionToolParser(ToolParser):
    """Special-token sections of calls; a dialect declares the five markers, the header layout and the argument fence."""

    section_begin: ClassVar[str | None]
    section_end: ClassVar[str | None]
    call_begin: ClassVar[str | None]
    argument_begin: ClassVar[str | None]
    call_end: ClassVar[str | None]
    header_layout: ClassVar[str]
    argument_fence: ClassVar[str | None]
    @classmethod
    def get_tool_open_tag(cls) -> str | None: ...
    @classmethod
    def get_tool_close_tag(cls) -> str | None: ...
    @staticmethod
    def _resolve_function_name(raw_id: str) -> str: ...
    @property
    def _phase_name(self) -> str: ...
