"""Meituan LongCat-Flash: Hermes-style JSON calls in ``<longcat_tool_call>`` and ``<longcat_think>`` reasoning.

Syntax: meituan-longcat/LongCat-Flash-Chat's chat template ("For each
function call, return a json object with function name and arguments within
<longcat_tool_call></longcat_tool_call> XML tags":
``<longcat_tool_call>\\n{"name": ..., "arguments": {...}}\\n</longcat_tool_call>``),
read by vLLM's ``longcat`` tool parser (``vllm/tool_parsers/longcat_tool_parser.py``:
its Hermes parser with these tags). LongCat-Flash-Thinking reasons in
``<longcat_think>`` ... ``</longcat_think>``; with thinking on the template ends
the prompt with ``/think_on`` and an open ``<longcat_think>\\n``, so output starts
inside reasoning. Neither engine registers a LongCat reasoning parser: the
reasoning dialect is lmparse's ``longcat`` only.
"""
from __future__ import annotations

from lmparse.dialects.hermes import HermesToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['LongcatReasoningParser', 'LongcatToolParser']


@ToolParserManager.register_module(['longcat'])
class LongcatToolParser(HermesToolParser):
    """``<longcat_tool_call>{"name": ..., "arguments": {...}}</longcat_tool_call>``; one call per block."""

    tool_open_tag = '<longcat_tool_call>'
    tool_close_tag = '</longcat_tool_call>'
    # xgrammar has no LongCat structural tag; Qwen's would force <tool_call>.
    structural_tag_model = None  # type: ignore[assignment]


@ReasoningParserManager.register_module(['longcat'])
class LongcatReasoningParser(ReasoningParser):
    """``<longcat_think>`` ... ``</longcat_think>``; starts in reasoning unless ``enable_thinking`` is False."""

    reasoning_open_tag = '<longcat_think>'
    reasoning_close_tag = '</longcat_think>'
