"""Type stub for the compiled ``lmparse.tools.json_parser`` module."""
from typing import Any, ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser
from lmparse.tools.json_scanner import JsonValueScanner

__all__ = ['JsonToolParser', 'Qwen3ToolParser', 'Internlm2ToolParser', 'Llama3JsonToolParser']

@disjoint_base
class JsonToolParser(ToolParser):
    """Tool parser for one JSON envelope per outer block.

    Subclasses set ``name_field`` / ``argument_field`` and the outer tags.
    """

    name_field: ClassVar[str]
    argument_field: ClassVar[str]
    _json_key: str | None
    _arguments_seen: bool
    _value_scanner: JsonValueScanner
    @property
    def _phase_name(self) -> str: ...

class Qwen3ToolParser(JsonToolParser):
    """Qwen 2.5 / Qwen 3: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``."""

    @classmethod
    def get_tool_open_tag(cls) -> str: ...
    @classmethod
    def get_tool_close_tag(cls) -> str: ...

class Internlm2ToolParser(JsonToolParser):
    """InternLM 2/3 and Intern-S1: ``<|action_start|><|plugin|>{"name": ..., "parameters": ...}<|action_end|>``."""

    @classmethod
    def get_tool_open_tag(cls) -> str: ...
    @classmethod
    def get_tool_close_tag(cls) -> str: ...
    def adjust_request(self, request: Any) -> Any: ...

class Llama3JsonToolParser(JsonToolParser):
    """Llama 3: ``<|python_tag|>{"name": ..., "parameters": {...}}`` with no close tag."""

    @classmethod
    def get_tool_open_tag(cls) -> str: ...
    @classmethod
    def get_tool_close_tag(cls) -> None: ...
