"""Type stub for the compiled ``lmparse.tools.xml_parser`` module."""
from typing import Any, ClassVar, Literal

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser
from lmparse.tools.xml_grammar import XmlGrammar

__all__ = ['XmlToolParser']

@disjoint_base
class XmlToolParser(ToolParser):
    """Shared driver for sequential, function-first, tag-delimited tool calls."""

    # Declarations, compiled once per class (None: not part of the dialect).
    function_open: ClassVar[str | None]  # '': the name starts the call
    function_name_end: ClassVar[str | None]
    arg_open: ClassVar[str | None]
    arg_name_end: ClassVar[str | None]
    value_open: ClassVar[str | None]
    arg_value_close_tag: ClassVar[str | None]
    function_close: ClassVar[str | None]
    multiple_calls: ClassVar[bool]
    # Token-aligned proper prefixes; None: hold back every proper prefix.
    function_open_prefixes: ClassVar[tuple[str, ...] | None]
    arg_open_prefixes: ClassVar[tuple[str, ...] | None]
    function_close_prefixes: ClassVar[tuple[str, ...] | None]
    arg_value_close_prefixes: ClassVar[tuple[str, ...] | None]
    strip_value_newlines: ClassVar[bool]
    cdata_values: ClassVar[bool]
    quoted_numbers: ClassVar[bool]
    # replace mode (the vLLM integration sets it): a declared, not yet given parameter's opener on a line of
    # its own, then a newline, ends a value whose close tag is missing
    next_arg_ends_value: bool
    _func_name: str | None
    _arg_name: str | None
    @property
    def _phase_name(self) -> str: ...
    @classmethod
    def _xml_grammar(cls) -> XmlGrammar:
        """The compiled grammar of this class's declarations (for inspection)."""
    def _consume_function(
        self, payload: str, pos: int, final: bool = False,
    ) -> tuple[int, str | None, Literal['arg_start', 'done']] | None:
        """``(pos, name, "arg_start" | "done")`` or None; name None with "done" = empty block."""
    def _consume_arg_start(self, payload: str, pos: int) -> tuple[int, Literal['arg_name', 'done']] | None:
        """``(pos, "arg_name" | "done")`` or None."""
    def _consume_arg_name(self, payload: str, pos: int) -> tuple[int, str] | None:
        """``(value_start, argument_name)`` or None."""
    def _consume_call_end(
        self, payload: str, pos: int, final: bool = False,
    ) -> tuple[int, Literal['function', 'done']] | None:
        """After a call: ``(pos, "function")`` when another call follows in this block, ``(pos, "done")`` otherwise."""
    def _get_param_schema(self, func_name: str | None, param_name: str) -> dict[str, Any] | None:
        """The request's JSON schema of one parameter, or None."""
    @staticmethod
    def _schema_types(schema: dict[str, Any]) -> tuple[str, ...]:
        """Candidate JSON types of a schema."""
    @staticmethod
    def _resolve_schema_type(schema: dict[str, Any]) -> str | None:
        """The first candidate type of a schema, or None."""
    @staticmethod
    def _coerce_value(raw_value: str, schema_type: str | None = None) -> Any:
        """``raw_value`` converted to ``schema_type``; the original text when it is not one."""
