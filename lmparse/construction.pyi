"""Type stub for the compiled ``lmparse.construction`` module.

Internal to :mod:`lmparse.response` (per-class construction plans, the
built-in reasoning fast path, reads of lmparse's own request type); it has no
Python-level API.
"""

__all__: list[str]
