"""AllenAI OLMo 3: ``<think>`` reasoning.

Syntax: the OLMo 3 chat template (the generation prompt ends in
``<|im_start|>assistant\\n<think>``, so output starts inside reasoning and
``</think>`` ends it; ``<think>`` / ``</think>`` are ordinary text, split by
the tokenizer) and vLLM 0.33's ``vllm/reasoning/olmo3_reasoning_parser.py``
(starts in reasoning "to support cases where we hardcode ``<think>``"): the
default reasoning protocol, under vLLM's name.

Not registered: vLLM's ``olmo3`` tool parser. OLMo 3 writes
``<function_calls>get_weather(city="SF")\\nget_time()</function_calls>``:
newline-separated pythonic calls without list brackets, with JSON literals
(``true`` / ``null``) among Python ones. The pythonic family reads a
bracketed list and turns a bare ``true`` into the string ``"true"``; reading
OLMo's form needs a family declaration for bracket-less, newline-separated
lists and JSON literals, not written yet.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager

__all__ = ['Olmo3ReasoningParser']


@ReasoningParserManager.register_module(['olmo3'])
class Olmo3ReasoningParser(ReasoningParser):
    """``<think>`` … ``</think>``; output starts inside reasoning unless thinking is switched off."""
