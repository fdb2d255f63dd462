"""Stub for the compiled ``lmparse.pydantic_state``."""
__all__ = ['same_instance']


def same_instance(a: object, b: object) -> bool: ...
