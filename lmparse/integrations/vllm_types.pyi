"""Stub for the compiled ``lmparse.integrations.vllm_types``."""
from typing import Any

__all__ = ['DeltaBuilder']


class DeltaBuilder:
    """lmparse's ``stream_chunk`` output -> one vLLM ``DeltaMessage`` (instance state as vLLM's constructor sets it)."""

    DeltaMessage: Any
    DeltaToolCall: Any
    DeltaFunctionCall: Any
    fast: bool

    def __init__(self, delta_message: Any, delta_tool_call: Any, delta_function_call: Any) -> None: ...
    def build(self, out: list[tuple[Any, bool]]) -> Any: ...
    def feed(self, parser: Any, delta_text: str, delta_token_ids: Any) -> Any: ...
