"""Type stub for the compiled ``lmparse.tools.xml_grammar`` module."""
from typing import final

__all__ = ['XmlGrammar', 'clear_grammar_cache']

PHASE_NAMES: tuple[str, ...]

@final
class XmlGrammar:
    """One dialect's markers, compiled; shared by every parser of its class (read-only)."""

    @property
    def function_open(self) -> str | None: ...
    @property
    def function_name_end(self) -> str | None: ...
    @property
    def arg_open(self) -> str | None: ...
    @property
    def arg_name_end(self) -> str | None: ...
    @property
    def value_open(self) -> str | None: ...
    @property
    def function_close(self) -> str | None: ...
    @property
    def multiple_calls(self) -> bool: ...
    @property
    def function_open_prefixes(self) -> tuple[str, ...] | None: ...
    @property
    def arg_open_prefixes(self) -> tuple[str, ...] | None: ...
    @property
    def function_close_prefixes(self) -> tuple[str, ...] | None: ...
    @property
    def value_close(self) -> str | None: ...
    @property
    def strip_newlines(self) -> bool: ...
    @property
    def python_hooks(self) -> tuple[str, ...]:
        """The hooks this class overrides in Python (the rest run compiled)."""

def clear_grammar_cache() -> None:
    """Forget every compiled grammar (after changing a dialect class's declarations)."""
