"""Type stub for the compiled ``lmparse.tools.base`` module.

Concrete parsers subclass :class:`ToolParser` and implement
``_consume_stream_payload``; requests are typed ``Any`` (see ``lmparse.request``).
"""
from collections.abc import Iterable, Set as AbstractSet
from typing import Any, ClassVar

from typing_extensions import disjoint_base

from lmparse.protocol import DeltaToolCall, ToolCall

__all__ = ['ToolParser']

@disjoint_base
class ToolParser:
    """Base class for model-specific tool-call extractors.

    ``_payload_closed`` means the dialect's inner payload ended;
    ``block_closed`` means the whole outer block was consumed (or the final
    chunk forced it closed).
    """

    structural_tag_model: ClassVar[str | None]
    reasoning_structural_tag_model: ClassVar[str | None]
    # None: hold back every proper prefix of the close tag. A tuple: only
    # these token-aligned prefixes (any order; longest is tried first).
    tool_close_prefixes: ClassVar[tuple[str, ...] | None]
    # The opener of a call written without the block's open tag (None: none; XML family).
    bare_call_open: ClassVar[str | None]
    calls_in_reasoning: ClassVar[bool]
    # Request fields the dialect needs set (e.g. special tokens kept in the
    # decoded text); the second only when tools are offered and tool_choice is not "none".
    request_settings: ClassVar[dict[str, Any] | None]
    request_settings_with_tools: ClassVar[dict[str, Any] | None]

    _close_tag: str | None
    _active_tool_call_id: str
    _name_emitted: bool
    _allowed_tool_names: AbstractSet[str] | None
    # True: a call to a tool the request does not declare is kept (default False: dropped).
    # Bare calls (bare_call_open) still need an offered name to be read as calls.
    keep_undeclared_calls: bool
    _tool_schemas: dict[str, dict[str, Any]] | None
    _output_index: int
    _next_output_index: int
    _pending_arguments: list[str]
    _payload_closed: bool
    block_closed: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

    # ---- request ----
    def adjust_request(self, request: Any) -> Any:
        """Dump tools for the chat template and record the allowed names."""
    @classmethod
    def build_required_response_format(cls, tools: Iterable[Any] | None, *, reasoning: bool) -> dict[str, Any]:
        """XGrammar structural tag forcing at least one tool call."""
    @staticmethod
    def _get_allowed_tool_names(request: Any) -> set[str]: ...

    # ---- tags ----
    @classmethod
    def get_tool_open_tag(cls) -> str | None: ...
    @classmethod
    def get_tool_close_tag(cls) -> str | None: ...

    # ---- block and call lifecycle ----
    def begin_tool_block(self) -> None:
        """Start one outer block right after its open tag."""
    def _begin_call(self, call_id: str | None = None) -> None:
        """Reset per-call state; ``call_id`` is the model's own id when it has one."""
    def _close_tool_block(self) -> None: ...

    # ---- feeding ----
    def feed_tool_block(self, text: str, deltas: list[DeltaToolCall], *, final: bool = False) -> int:
        """Consume a prefix of an open block; return how many leading chars to drop."""
    def _consume_stream_payload(self, text: str, deltas: list[DeltaToolCall], *, final: bool = False) -> int:
        """Consume the dialect's inner payload (never the outer close tag)."""
    @staticmethod
    def _stable_prefix_end(text: str, marker_prefixes: tuple[str, ...], start: int = 0) -> int:
        """End of ``text`` minus the first listed marker prefix it ends with (list longest first)."""

    # ---- output ----
    def _emit_delta(self, deltas: list[DeltaToolCall], *, name: str | None = None, arguments: str | None = None) -> None:
        """Emit one fragment under the identity-first contract."""
    @staticmethod
    def build_tool_calls(deltas: Iterable[DeltaToolCall]) -> list[ToolCall]:
        """Group ordered deltas by index into complete calls (first id and name win)."""
