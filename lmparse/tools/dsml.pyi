"""Type stub for the compiled ``lmparse.tools.dsml`` module."""
from typing import ClassVar

from typing_extensions import disjoint_base

from lmparse.tools.base import ToolParser

__all__ = ['DSML_TOKEN', 'DsmlToolParser']

DSML_TOKEN: str

@disjoint_base
class DsmlToolParser(ToolParser):
    """Blocks of attribute-named calls: ``<TOKEN BLOCK>`` of ``<TOKEN invoke name=..>`` and ``<TOKEN parameter name=..>``.

    A dialect declares ``tool_calls_block_name`` and, where they differ from
    DeepSeek's DSML: ``dsml_token`` (text right after each tag opener), the
    element names, ``block_lead`` (text before the block's open tag), the tag
    delimiters ``tag_open`` / ``end_tag_open`` / ``tag_close``, the attributes
    naming the call and the parameter (``call_name_attribute``,
    ``parameter_key_attribute``), how a value is typed
    (``string_attribute`` with ``string_attribute_values`` marking raw text,
    ``string_by_default`` when it is absent, or ``schema_typed_values``: by the
    request's JSON schema), ``attribute_entities`` decoded in names and
    keys, and ``block_open_tag`` / ``block_close_tag`` for a block written as
    tags of another markup. The markers are built from them once per class.
    """

    dsml_token: ClassVar[str]
    tool_calls_block_name: ClassVar[str | None]
    invoke_element: ClassVar[str]
    parameter_element: ClassVar[str]
    block_lead: ClassVar[str]
    tag_open: ClassVar[str]
    end_tag_open: ClassVar[str]
    tag_close: ClassVar[str]
    call_name_attribute: ClassVar[str]
    parameter_key_attribute: ClassVar[str]
    string_attribute: ClassVar[str | None]
    string_attribute_values: ClassVar[tuple[str, ...]]
    string_by_default: ClassVar[bool]
    schema_typed_values: ClassVar[bool]
    block_text_is_content: ClassVar[bool]
    attribute_entities: ClassVar[tuple[tuple[str, str], ...]]
    block_open_tag: ClassVar[str | None]
    block_close_tag: ClassVar[str | None]
    # Replace mode (lmparse.integrations.vllm sets both, as vLLM's DeepSeek parsers read values): a value
    # converted to its parameter's schema type where it is a value of that type; a call whose only
    # parameter is an undeclared 'arguments' / 'input' object of declared keys has that object as arguments.
    coerce_values_to_schema: bool
    unwrap_wrapper_arguments: bool
    @classmethod
    def get_tool_open_tag(cls) -> str: ...
    @classmethod
    def get_tool_close_tag(cls) -> str: ...
    @classmethod
    def _family_markers(cls) -> tuple[str, str, str, str, str]: ...
    @property
    def _phase_name(self) -> str: ...
    @property
    def _emitted_param_count(self) -> int: ...
