"""H Company Holo2 reasoning: ``<think>`` ... ``</think>``, thinking on unless switched off.

Syntax: Hcompany/Holo2 models are Qwen3-VL based thinking models; vLLM 0.33
registers ``holo2`` as ``DeepSeekV3ReasoningWithThinkingParser``
(``vllm/reasoning/deepseek_v3_reasoning_parser.py``): the DeepSeek V3.1
``<think>`` parser with ``thinking`` and ``enable_thinking`` defaulting to
True when the request sets neither. Output starts in reasoning (the open tag
is optional; one the model writes is dropped) unless one of the switches is
given and neither is True.
"""
from __future__ import annotations

from lmparse.dialects.deepseek import DeepSeekV31ReasoningParser
from lmparse.registry import ReasoningParserManager

__all__ = ['Holo2ReasoningParser']


@ReasoningParserManager.register_module('holo2')
class Holo2ReasoningParser(DeepSeekV31ReasoningParser):
    """``<think>`` ... ``</think>``; starts in reasoning unless ``thinking`` / ``enable_thinking`` turn it off."""

    def starts_in_reasoning_mode(self) -> bool:
        thinking = self.kwargs.get('thinking')
        enable_thinking = self.kwargs.get('enable_thinking')
        if thinking is None and enable_thinking is None:
            return True
        return bool(thinking or enable_thinking)
