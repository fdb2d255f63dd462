"""Arcee Trinity tool calls: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

Syntax: SGLang 0.5.23's ``trinity`` parser (``function_call/trinity_detector.py``),
the Qwen 2.5 format (``<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>``,
its reference is Qwen2.5's chat template), for Arcee's Trinity reasoning models
(arcee-ai/Trinity-Mini, Trinity-Nano). vLLM 0.33 has no ``trinity`` parser.

SGLang's detector removes every ``<think>`` / ``</think>`` from the text so that a
call written inside the reasoning is still parsed. lmparse does not drop text: a
call inside ``<think>`` is a call whenever a reasoning parser is configured
(``default``: Trinity's reasoning is ``<think>`` ... ``</think>``), and without
one the tags stay in the content.
"""
from __future__ import annotations

from lmparse.dialects.qwen import Qwen3ToolParser
from lmparse.registry import ToolParserManager

__all__ = ['TrinityToolParser']


@ToolParserManager.register_module('trinity')
class TrinityToolParser(Qwen3ToolParser):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (the Qwen 2.5 / 3 JSON dialect)."""
