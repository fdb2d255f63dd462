"""Type stub for the compiled ``lmparse.tools.pythonic`` module."""
from typing import ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser

__all__ = ['PythonicToolParser']

@disjoint_base
class PythonicToolParser(ToolParser):
    """Tool parser for a pythonic call list: ``[get_weather(city="Paris"), other()]``.

    A dialect declares ``tool_open_tag`` / ``tool_close_tag`` and, to take a
    list written without them at the start of the response, ``bare_call_open = '['``.
    ``call_list_brackets = False``: calls without ``[`` ``]``, separated by
    commas or whitespace, ended by the close tag; ``json_literals``: ``true`` /
    ``false`` / ``null`` are JSON values too; ``bare_calls_after_text``: a bare
    list may also start at a ``[`` after text (confirmed by ``[NAME(`` with NAME
    an offered tool; held while undecided, content when refuted).
    """

    tool_open_tag: ClassVar[str | None]
    tool_close_tag: ClassVar[str | None]
    call_list_brackets: ClassVar[bool]
    json_literals: ClassVar[bool]
    bare_calls_after_text: ClassVar[bool]
    @property
    def _state_name(self) -> str: ...
