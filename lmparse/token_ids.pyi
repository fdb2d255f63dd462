"""Type stub for the compiled ``lmparse.token_ids`` module."""
from typing import Any

__all__ = ["read_token_ids", "sum_token_ids"]

def read_token_ids(ids: Any) -> list[int]: ...
def sum_token_ids(ids: Any) -> int: ...
