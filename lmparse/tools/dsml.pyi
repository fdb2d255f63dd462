"""Type stub for the compiled ``lmparse.tools.dsml`` module."""
from typing import ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser

__all__ = ['DSML_TOKEN', 'DsmlToolParser']

DSML_TOKEN: str

@disjoint_base
class DsmlToolParser(ToolParser):
    """The DSML grammar: ``<TOKEN BLOCK>`` blocks of ``<TOKEN invoke>`` calls and ``<TOKEN parameter>`` values.

    A dialect declares ``tool_calls_block_name`` and, when they differ,
    ``dsml_token``, the element names and ``block_lead`` (the text before the
    block's open tag); the markers are built from them once per class.
    """

    dsml_token: ClassVar[str]
    tool_calls_block_name: ClassVar[str | None]
    invoke_element: ClassVar[str]
    parameter_element: ClassVar[str]
    block_lead: ClassVar[str]
    @classmethod
    def get_tool_open_tag(cls) -> str: ...
    @classmethod
    def get_tool_close_tag(cls) -> str: ...
    @property
    def _phase_name(self) -> str: ...
    @property
    def _emitted_param_count(self) -> int: ...
