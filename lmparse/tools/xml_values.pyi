"""Type stub for the compiled ``lmparse.tools.xml_values`` module."""
from typing import Any

__all__ = ['schema_types', 'coerce_value']

def schema_types(schema: dict[str, Any], depth: int = 0) -> tuple[str, ...]:
    """Candidate JSON types of a parameter schema: non-null types in order, then ``null``."""
def coerce_value(raw: str, schema_type: str | None = None, quoted_numbers: bool = False) -> Any:
    """``raw`` converted to ``schema_type``; the original text when it is not one."""
