"""Baidu ERNIE 4.5: Hermes-style JSON calls, ``<think>`` reasoning and a ``<response>`` answer wrapper.

Syntax: vLLM's ``ernie45`` parsers (``vllm/tool_parsers/ernie45_tool_parser.py``,
``vllm/reasoning/ernie45_reasoning_parser.py``) for baidu/ERNIE-4.5-21B-A3B-Thinking:
``reasoning\\n</think>\\n\\n<response>\\nanswer\\n</response>\\n`` or
``reasoning\\n</think>\\nanswer``, tool calls as
``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`` (the Hermes /
Qwen JSON envelope). The template opens ``<think>`` in the prompt and the
Thinking model has no off switch (FastDeploy's ERNIE docs), so output starts
inside reasoning (a ``<think>`` the model writes itself is dropped);
``enable_thinking=False`` still starts it as content.

``<response>`` / ``</response>`` wrap the answer and are never part of it:
they are content markers, dropped wherever they occur outside tool blocks.
The newlines around them stay content: lmparse never drops text that is not
a marker, where vLLM trims the newlines after ``</think>`` and ``<response>``.
"""
from __future__ import annotations

from lmparse.dialects.hermes import HermesToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['ERNIE_CONTENT_MARKERS', 'Ernie45ReasoningParser', 'Ernie45ToolParser']

# The answer wrapper. Only the tags: a spelling with the template's newline
# would have the bare tag as its prefix, and which one matched would depend
# on where a chunk ended.
ERNIE_CONTENT_MARKERS = ('<response>', '</response>')


@ToolParserManager.register_module(['ernie45'])
class Ernie45ToolParser(HermesToolParser):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``; ``<response>`` markers dropped."""

    content_markers = ERNIE_CONTENT_MARKERS


@ReasoningParserManager.register_module(['ernie45'])
class Ernie45ReasoningParser(ReasoningParser):
    """``<think>`` ... ``</think>``, starting in reasoning; ``<response>`` ... ``</response>`` is content."""

    content_markers = ERNIE_CONTENT_MARKERS
