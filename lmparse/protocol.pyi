"""Type stub for the compiled ``lmparse.protocol`` module."""
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from typing_extensions import disjoint_base

__all__ = [
    "DeltaFunctionCall",
    "DeltaToolCall",
    "DeltaMessage",
    "FunctionCall",
    "ToolCall",
    "random_call_id",
]

ID_ALPHABET: str

_Self = TypeVar("_Self")

class _FunctionLike(Protocol):
    @property
    def name(self) -> str | None: ...
    @property
    def arguments(self) -> str | None: ...

class _FunctionCallLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str: ...

class _ToolCallLike(Protocol):
    @property
    def index(self) -> int: ...
    @property
    def id(self) -> str | None: ...
    @property
    def type(self) -> str | None: ...
    @property
    def function(self) -> Any: ...

def random_call_id(prefix: str = "") -> str:
    """``prefix`` followed by 22 random characters from ``ID_ALPHABET``."""

@disjoint_base
class DeltaFunctionCall:
    model_fields: ClassVar[tuple[str, ...]]
    __match_args__: ClassVar[tuple[str, str]]
    name: str | None
    arguments: str | None
    def __init__(self, name: str | None = None, arguments: str | None = None) -> None: ...
    def model_dump(
        self, *, exclude_none: bool = False, mode: str = "python", **ignored: Any
    ) -> dict[str, Any]: ...
    def model_dump_json(self, *, exclude_none: bool = False, indent: int | None = None, **ignored: Any) -> str: ...
    def model_copy(self: _Self, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Self: ...
    def __eq__(self, other: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@disjoint_base
class DeltaToolCall:
    model_fields: ClassVar[tuple[str, ...]]
    __match_args__: ClassVar[tuple[str, str, str, str]]
    id: str | None
    type: Literal["function"] | None
    index: int
    function: DeltaFunctionCall | None
    def __init__(
        self,
        index: int,
        id: str | None = None,
        type: Literal["function"] | None = "function",
        function: DeltaFunctionCall | FunctionCall | Mapping[str, str | None] | _FunctionLike | None = None,
    ) -> None: ...
    def model_dump(
        self, *, exclude_none: bool = False, mode: str = "python", **ignored: Any
    ) -> dict[str, Any]: ...
    def model_dump_json(self, *, exclude_none: bool = False, indent: int | None = None, **ignored: Any) -> str: ...
    def model_copy(self: _Self, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Self: ...
    def __eq__(self, other: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@disjoint_base
class DeltaMessage:
    model_fields: ClassVar[tuple[str, ...]]
    __match_args__: ClassVar[tuple[str, str, str, str]]
    role: str | None
    content: str | None
    reasoning_content: str | None
    tool_calls: list[DeltaToolCall] | None
    def __init__(
        self,
        role: str | None = None,
        content: str | None = None,
        reasoning_content: str | None = None,
        tool_calls: Sequence[DeltaToolCall | Mapping[str, Any] | _ToolCallLike] | None = None,
    ) -> None: ...
    def model_dump(
        self, *, exclude_none: bool = False, mode: str = "python", **ignored: Any
    ) -> dict[str, Any]: ...
    def model_dump_json(self, *, exclude_none: bool = False, indent: int | None = None, **ignored: Any) -> str: ...
    def model_copy(self: _Self, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Self: ...
    def __eq__(self, other: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@disjoint_base
class FunctionCall:
    model_fields: ClassVar[tuple[str, ...]]
    __match_args__: ClassVar[tuple[str, str]]
    name: str
    arguments: str
    def __init__(self, name: str, arguments: str) -> None: ...
    def model_dump(
        self, *, exclude_none: bool = False, mode: str = "python", **ignored: Any
    ) -> dict[str, Any]: ...
    def model_dump_json(self, *, exclude_none: bool = False, indent: int | None = None, **ignored: Any) -> str: ...
    def model_copy(self: _Self, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Self: ...
    def __eq__(self, other: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@disjoint_base
class ToolCall:
    model_fields: ClassVar[tuple[str, ...]]
    __match_args__: ClassVar[tuple[str, str, str]]
    id: str
    type: Literal["function"]
    function: FunctionCall
    def __init__(
        self,
        function: FunctionCall | Mapping[str, str] | _FunctionCallLike,
        id: str | None = None,
        type: Literal["function"] = "function",
    ) -> None: ...
    def model_dump(
        self, *, exclude_none: bool = False, mode: str = "python", **ignored: Any
    ) -> dict[str, Any]: ...
    def model_dump_json(self, *, exclude_none: bool = False, indent: int | None = None, **ignored: Any) -> str: ...
    def model_copy(self: _Self, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Self: ...
    def __eq__(self, other: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]
