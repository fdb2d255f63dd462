"""Type stub for the compiled ``lmparse.tools.kimi`` module."""
from typing import Any, ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser

__all__ = ['KimiK2ToolParser']

def _function_name(raw_id: str) -> str: ...

@disjoint_base
class KimiK2ToolParser(ToolParser):
    """Kimi K2: ``<|tool_calls_section_begin|>`` sections of ``<|tool_call_begin|>`` calls."""

    section_begin: ClassVar[str]
    section_end: ClassVar[str]
    call_begin: ClassVar[str]
    argument_begin: ClassVar[str]
    call_end: ClassVar[str]
    def adjust_request(self, request: Any) -> Any: ...
    @classmethod
    def get_tool_open_tag(cls) -> str: ...
    @classmethod
    def get_tool_close_tag(cls) -> str: ...
    @staticmethod
    def _resolve_function_name(raw_id: str) -> str: ...
    @property
    def _phase_name(self) -> str: ...
