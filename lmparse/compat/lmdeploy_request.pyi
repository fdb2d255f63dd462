"""Stub for the compiled ``lmparse.compat.lmdeploy_request``."""
from typing import Any

__all__ = ['LmdeployRequests']


class LmdeployRequests:
    """Compiled ``prepare_tools`` / ``normalize`` for LMDeploy 0.18's request type."""

    request_type: Any
    tool_type: Any
    function_type: Any
    tool_choice_type: Any
    fast: bool

    def __init__(self, protocol: Any) -> None: ...
    def prepare_tools(self, request: Any, updates: dict[str, Any] | None
                      ) -> tuple[Any, set[str], dict[str, dict[str, Any]]] | None: ...
    def normalize(self, request: Any) -> Any | None: ...
    def fields(self, request: Any) -> tuple[Any, Any, Any, Any] | None: ...
