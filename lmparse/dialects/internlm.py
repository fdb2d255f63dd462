"""InternLM 2 / 2.5 / 3 and Intern-S1 (JSON action blocks), InternS2-preview (Qwen3-Coder XML).

Syntax: the chat templates of internlm/internlm2_5-7b-chat and
internlm/Intern-S1 (``<|action_start|><|plugin|>\\n{"name": ..., "parameters": ...}<|action_end|>``;
the markers are special tokens), and LMDeploy 0.18's ``internlm2_tool_parser``
and ``interns2_preview_tool_parser``.
"""
from __future__ import annotations

from typing import Any

from lmparse.dialects.qwen import Qwen3CoderToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['InternS2PreviewToolParser', 'Internlm2ToolParser']


@ToolParserManager.register_module(['internlm', 'intern-s1', 'interns1'])
class Internlm2ToolParser(JsonToolParser):
    """``<|action_start|><|plugin|>{"name": ..., "parameters": {...}}<|action_end|>``."""

    tool_open_tag = '<|action_start|><|plugin|>'
    tool_close_tag = '<|action_end|>'
    argument_field = 'parameters'
    # The action markers are special tokens: keep them in the decoded text.
    request_settings = {'spaces_between_special_tokens': False}
    request_settings_with_tools = {'skip_special_tokens': False}

    @classmethod
    def build_required_response_format(cls, tools: Any, *, reasoning: bool) -> dict[str, Any]:
        """Action blocks whose parameters follow each tool's JSON schema (xgrammar has no built-in format)."""
        from lmparse.structural_tags import internlm2_required_response_format
        return internlm2_required_response_format(
            tools, reasoning=reasoning, open_tag=cls.tool_open_tag, close_tag=cls.tool_close_tag,
            name_field=cls.name_field, argument_field=cls.argument_field)


@ToolParserManager.register_module('interns2-preview')
class InternS2PreviewToolParser(Qwen3CoderToolParser):
    """The Qwen3-Coder grammar; special tokens are rendered without spaces between them."""

    request_settings = {'spaces_between_special_tokens': False}


# SGLang's ``interns1`` reasoning is ``<think>`` … ``</think>`` (LMDeploy's legacy ``intern-s1``): 'default'.
ReasoningParserManager.register_module('interns1', module=ReasoningParser)
