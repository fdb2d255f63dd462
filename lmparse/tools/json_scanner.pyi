"""Type stub for the compiled ``lmparse.tools.json_scanner`` module."""
from typing_extensions import disjoint_base

__all__ = ['JsonValueScanner']

@disjoint_base
class JsonValueScanner:
    """Find the lexical end of one JSON value across chunks.

    Tracks only strings, escapes and container depth: no validation and no
    decoding.
    """

    complete: bool
    started: bool
    def __init__(self) -> None: ...
    def reset(self) -> None:
        """Forget all state and expect a new value."""
    @property
    def in_string(self) -> bool:
        """Whether the cursor is inside a string (protocol markers there are data)."""
    @property
    def depth(self) -> int: ...
    def feed(self, text: str, start: int = 0, end: int | None = None) -> int:
        """Scan ``text[start:end]`` and return where this value's prefix ends."""
    def feed_until(
        self, text: str, markers: tuple[str, ...], start: int = 0, end: int | None = None, *, final: bool = False
    ) -> tuple[int, bool]:
        """Scan ``text[start:end]`` up to the value's end or the first of ``markers`` outside strings."""
    def finish(self) -> None:
        """End a root scalar at an externally known boundary."""
    def finish_scalar(self) -> bool: ...
