"""Type stub for the compiled ``lmparse.tools.ns_elements`` module."""
from typing import ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser

__all__ = ['MINIMAX_NAMESPACE', 'NsElementToolParser']

MINIMAX_NAMESPACE: str

@disjoint_base
class NsElementToolParser(ToolParser):
    """``NS<BLOCK>`` blocks of ``NS<invoke name="..">`` calls whose parameters are elements named by the key.

    A dialect declares ``namespace`` (the marker before every tag) and, where
    they differ, ``tool_calls_element``, ``invoke_element`` and
    ``call_name_attribute``.
    """

    namespace: ClassVar[str]
    tool_calls_element: ClassVar[str]
    invoke_element: ClassVar[str]
    call_name_attribute: ClassVar[str]
    @classmethod
    def get_tool_open_tag(cls) -> str: ...
    @classmethod
    def get_tool_close_tag(cls) -> str: ...
    @property
    def _phase_name(self) -> str: ...
