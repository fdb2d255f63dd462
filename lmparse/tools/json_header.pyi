"""Type stub for the compiled ``lmparse.tools.json_header`` module."""
from typing import ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.json_parser import JsonToolParser

__all__ = ['JsonHeaderToolParser']

@disjoint_base
class JsonHeaderToolParser(JsonToolParser):
    """``OPEN NAME [CALL_ID_MARKER ID] ARGUMENT_MARKER {json}`` calls, or JSON envelopes (see the module docs)."""

    argument_marker: ClassVar[str | None]
    call_id_marker: ClassVar[str | None]
    brace_starts_arguments: ClassVar[bool]
    random_call_id_length: ClassVar[int]
    @property
    def _layout_name(self) -> str: ...
