"""Nanbeige tool calls (Qwen3-Coder XML grammar) and ``<think>`` reasoning.

Syntax: SGLang 0.5.23 maps ``nanbeige`` tool calls to its ``Qwen3CoderDetector``
(``<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>``)
and ``nanbeige`` reasoning to its ``Qwen3Detector`` (``<think>`` ... ``</think>``,
on unless ``enable_thinking`` is False: lmparse's ``default``). vLLM 0.33 has
neither name. The Nanbeige chat template itself could not be read here, so the
grammar is the engine's: Nanbeige4.2 (the agentic, code-tool release) is what
SGLang's mapping targets. Earlier Nanbeige4 checkpoints write the Qwen 2.5
JSON form (``<tool_call>{"name": ..., "arguments": ...}</tool_call>``, as the
BFCL handler for them parses it): serve those with ``qwen3`` / ``hermes``.
"""
from __future__ import annotations

from lmparse.dialects.qwen import Qwen3CoderToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['NanbeigeToolParser']


@ToolParserManager.register_module('nanbeige')
class NanbeigeToolParser(Qwen3CoderToolParser):
    """``<tool_call><function=NAME><parameter=KEY>V</parameter></function></tool_call>`` (the Qwen3-Coder dialect)."""


ReasoningParserManager.register_module('nanbeige', module=ReasoningParser)
