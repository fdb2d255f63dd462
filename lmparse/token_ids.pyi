"""Type stub for the compiled ``lmparse.token_ids`` module."""
from collections.abc import Iterable

from typing_extensions import Buffer, TypeAlias, disjoint_base

__all__ = ["ReasoningTagIds", "read_token_ids", "reasoning_token_count"]

# What ``delta_token_ids`` / ``token_ids`` accept: any iterable of ints or a 1-D integer buffer.
TokenIdsLike: TypeAlias = Iterable[int] | Buffer

def read_token_ids(ids: TokenIdsLike | None) -> list[int]: ...
def reasoning_token_count(token_ids: TokenIdsLike, open_id: int | None, close_id: int | None,
                          inside: bool = False) -> int: ...

@disjoint_base
class ReasoningTagIds:
    """Reasoning open / close tags as the token-id sequences they may arrive as."""

    longest_close: int
    def __init__(self, open_seqs: Iterable[TokenIdsLike], close_seqs: Iterable[TokenIdsLike]) -> None: ...
    @property
    def has_close(self) -> bool: ...
    def last(self, token_ids: TokenIdsLike) -> tuple[int, int]: ...
    def close_in_tail(self, token_ids: TokenIdsLike, tail: int) -> bool: ...
    def count_inside(self, token_ids: TokenIdsLike, inside: bool = False) -> int: ...
