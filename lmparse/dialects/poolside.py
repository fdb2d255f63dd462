"""poolside v1 (Laguna-XS.2): GLM-4 XML-like tool calls and opt-in ``<think>`` reasoning.

Syntax: SGLang 0.5.23's ``function_call/poolside_v1_detector.py`` ("Wire
format: ``<tool_call>{name}\\n<arg_key>{key}</arg_key>\\n<arg_value>{val}</arg_value>\\n...</tool_call>``;
string values are raw text, non-strings JSON-encoded by the chat template",
typed back by the tool's schema) and vLLM 0.33's
``vllm/tool_parsers/poolside_v1_tool_parser.py`` (the same grammar, string
values streamed): the GLM family's grammar and schema typing unchanged.

Reasoning: ``<think>`` … ``</think>``, opt-in: vLLM's ``poolside_v1`` is
DeepSeek V3's (thinking when ``thinking`` or ``enable_thinking`` is true),
SGLang's starts in reasoning only with ``enable_thinking=True`` ("the HF chat
template defaults ``enable_thinking=False``"). lmparse takes either switch,
as vLLM does; a ``<think>`` the model writes opens reasoning either way.
"""
from __future__ import annotations

from lmparse.dialects.glm import Glm47ToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['PoolsideV1ReasoningParser', 'PoolsideV1ToolParser']


@ToolParserManager.register_module(['poolside_v1'])
class PoolsideV1ToolParser(Glm47ToolParser):
    """``<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n...</tool_call>``, typed by schema."""


@ReasoningParserManager.register_module(['poolside_v1'])
class PoolsideV1ReasoningParser(ReasoningParser):
    """``<think>`` … ``</think>``; starts in reasoning only when ``enable_thinking`` or ``thinking`` is True."""

    thinking_switches = ('enable_thinking', 'thinking')
