"""Type stub for the compiled ``lmparse.tools.xml_grammar`` module."""
from typing import final

__all__ = ['ValueEnds', 'XmlGrammar', 'clear_grammar_cache']

PHASE_NAMES: tuple[str, ...]

@final
class ValueEnds:
    """What ends a value in one kind of block, and what confirms each end (read-only).

    A value ends at its close tag, or with that missing at ``function_close``
    or the block's close tag; each only when what comes next (after at most
    64 whitespace characters) is one of its follow markers or the end of the
    output: ``close_follow`` plus the block's close tag after the close tag
    (only whitespace confirms it too), ``fc_follow`` plus the block's close tag
    after ``function_close``, ``block_follow`` after the block's close tag.
    Otherwise the marker is value text. ``confirm_close`` False: a Python hook
    decides what follows a value, and the close tag ends it unconfirmed.
    ``drift``: a drifted close tag (the close tag without its '>', up to 32
    name characters, an optional '>': '</parameter1>', a bare '</parameter')
    ends the value too when ``close_follow`` or the block's close tag confirms
    it (whitespace alone does not); otherwise it is value text.
    """

    @property
    def close(self) -> str | None: ...
    @property
    def function_close(self) -> str | None: ...
    @property
    def block(self) -> str | None: ...
    @property
    def close_follow(self) -> tuple[str, ...]: ...
    @property
    def drift(self) -> bool: ...
    @property
    def fc_follow(self) -> tuple[str, ...]: ...
    @property
    def block_follow(self) -> tuple[str, ...]: ...
    @property
    def confirm_close(self) -> bool: ...
    @property
    def leads(self) -> str: ...

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
    def quoted_numbers(self) -> bool: ...
    @property
    def value_ends(self) -> ValueEnds:
        """What ends a value in a block closed by the class's close tag."""
    @property
    def bare_open(self) -> str | None: ...
    @property
    def python_hooks(self) -> tuple[str, ...]:
        """The hooks this class overrides in Python (the rest run compiled)."""

def clear_grammar_cache() -> None:
    """Forget every compiled grammar (after changing a dialect class's declarations)."""
