"""Stub for the compiled ``lmparse.integrations.sglang_types``."""
from typing import Any

from typing_extensions import disjoint_base

__all__ = ['Results']


@disjoint_base
class Results:
    """lmparse deltas -> SGLang's streaming result objects (state as SGLang's public constructors leave it)."""

    ReasoningResult: Any
    StreamingParseResult: Any
    ToolCallItem: Any
    fast_reasoning: bool
    fast_result: bool
    fast_item: bool

    def __init__(self, reasoning_cls: Any, result_cls: Any, item_cls: Any) -> None: ...
    def reasoning(self, normal: str, reasoning: str) -> Any: ...
    def result(self, normal: str, calls: list[Any]) -> Any: ...
    def item(self, index: int, name: str | None, parameters: str) -> Any: ...
    def stream(self, parser: Any, text: str, final: bool = False) -> tuple[str, str, list[Any], bool]: ...
    def split(self, out: list[tuple[Any, bool]]) -> tuple[str, str, list[Any]]: ...
