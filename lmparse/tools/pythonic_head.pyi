"""Type stub for the compiled ``lmparse.tools.pythonic_head`` module (C-level functions only)."""

__all__: list[str] = []
