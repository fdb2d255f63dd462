"""Qwen 2.5 / Qwen 3 (JSON tool calls) and Qwen3-Coder / Qwen3.5 (XML-like tool calls).

Syntax: the chat templates in the models' ``tokenizer_config.json``
(Qwen/Qwen2.5-7B-Instruct, Qwen/Qwen3-8B: ``<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>``;
Qwen/Qwen3-Coder-30B-A3B-Instruct ``chat_template.jinja``:
``<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>``),
and LMDeploy 0.18's ``qwen3_tool_parser`` / ``qwen3coder_tool_parser``.
Reasoning: the ``default`` ``<think>`` parser.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.xml_parser import XmlToolParser

__all__ = ['Qwen3CoderToolParser', 'Qwen3ReasoningParser', 'Qwen3ToolParser']


@ToolParserManager.register_module(['qwen', 'qwen2d5', 'qwen3'])
class Qwen3ToolParser(JsonToolParser):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``."""

    tool_open_tag = '<tool_call>'
    tool_close_tag = '</tool_call>'
    argument_field = 'arguments'
    structural_tag_model = 'qwen_3'


@ToolParserManager.register_module(['qwen3coder', 'qwen3_coder', 'qwen3_xml'])
class Qwen3CoderToolParser(XmlToolParser):
    """``<tool_call><function=NAME><parameter=KEY>V</parameter></function></tool_call>``.

    Several ``<function=...>`` calls in one block are separate calls; the
    template's newline around each value is not part of it. A
    ``<function=NAME>`` call written without ``<tool_call>`` outside reasoning
    is a call when NAME is an offered tool (``bare_call_open``).
    """

    tool_open_tag = '<tool_call>'
    tool_close_tag = '</tool_call>'
    function_open = '<function='
    function_name_end = '>'
    arg_open = '<parameter='
    arg_name_end = '>'
    arg_value_close_tag = '</parameter>'
    function_close = '</function>'
    multiple_calls = True
    strip_value_newlines = True
    # The models sometimes drop <tool_call> and write <function=...>...</function>
    # (maybe with an orphan </tool_call>) in plain text; vLLM's and SGLang's
    # qwen3_coder parsers accept it. A call only when it names an offered tool.
    bare_call_open = '<function='
    # Marker prefixes: every proper prefix is held (the default), which is
    # right for any chunking; Qwen's tokenizer splits these markers.
    structural_tag_model = 'qwen_3_coder'
    reasoning_structural_tag_model = 'qwen_3_5'


@ReasoningParserManager.register_module(['qwen3', 'qwen3-thinking'])
class Qwen3ReasoningParser(ReasoningParser):
    """``<think>`` … ``</think>``, starts in reasoning; vLLM replace mode, no tool parser: ``<tool_call>`` ends it.

    vLLM's and SGLang's ``qwen3`` / ``qwen3-thinking``: lmparse's 'default' (in reasoning from the start
    unless ``enable_thinking`` is False) plus ``call_open_tag``. Qwen3.5 and Qwen3-Coder models call tools straight from their reasoning, without ``</think>``:
    vLLM 0.33's ``vllm/parser/qwen3.py`` reads ``<tool_call>`` there as an implicit end of reasoning
    (its ``(REASONING, TOOL_START)`` transition), so its reasoning parser alone hands the call to the
    tool parser. ``call_open_tag`` declares it; it applies where the response class asks for it
    (``call_ends_reasoning``, the vLLM plugin's replace mode). With a tool parser the call is parsed
    inside reasoning, as for every dialect.
    """

    call_open_tag = '<tool_call>'
