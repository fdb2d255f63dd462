"""Stub for the compiled ``lmparse.compat.lmdeploy_types``."""
from typing import Any

__all__ = ['Converter', 'SwappedStream']


class Converter:
    """lmparse output -> LMDeploy's pydantic types (instance state as ``model_construct`` sets it)."""

    DeltaMessage: Any
    DeltaToolCall: Any
    DeltaFunctionCall: Any
    ToolCall: Any
    FunctionCall: Any
    fast_message: bool
    fast_tool_delta: bool
    fast_function_delta: bool
    fast_call: bool
    fast_function: bool

    def __init__(self, protocol: Any) -> None: ...
    def message(self, m: Any) -> Any: ...
    def pairs(self, out: list[tuple[Any, bool]]) -> list[tuple[Any, bool]]: ...
    def tool_call(self, c: Any) -> Any: ...
    def complete(self, result: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]: ...


class SwappedStream:
    """Compiled ``stream_chunk`` / ``parse_complete`` forwarding to a wrapped lmparse parser."""

    _inner: Any

    def _attach(self, inner: Any, converter: Converter) -> None: ...
    def stream_chunk(self, delta_text: str | None, delta_token_ids: Any = None, final: bool = False,
                     **kwargs: Any) -> list[tuple[Any, bool]]: ...
    def parse_complete(self, text: str, token_ids: Any = None, **kwargs: Any) -> tuple[Any, Any, Any]: ...
