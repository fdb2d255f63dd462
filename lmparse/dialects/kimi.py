"""Kimi K2 tool-call sections.

Syntax: moonshotai/Kimi-K2-Instruct's chat template and ``docs/tool_call_guidance.md``
(``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|>``;
every marker is a special token) and LMDeploy 0.18's ``kimi_k2_tool_parser``.
The header ``functions.NAME:IDX`` is the model's own call id.
"""
from __future__ import annotations

from lmparse.registry import ToolParserManager
from lmparse.tools.sections import SectionToolParser

__all__ = ['KimiK2ToolParser']


@ToolParserManager.register_module(['kimi_k2', 'kimi-k2'])
class KimiK2ToolParser(SectionToolParser):
    """``<|tool_calls_section_begin|>`` sections of ``<|tool_call_begin|>`` calls."""

    section_begin = '<|tool_calls_section_begin|>'
    section_end = '<|tool_calls_section_end|>'
    call_begin = '<|tool_call_begin|>'
    argument_begin = '<|tool_call_argument_begin|>'
    call_end = '<|tool_call_end|>'
    # The markers are special tokens: keep them in the decoded text.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}
    structural_tag_model = 'kimi'
