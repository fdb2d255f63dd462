"""NVIDIA Nemotron 3 (Nano / Super) reasoning: ``<think>`` ... ``</think>``.

Syntax: vLLM 0.33's ``parser/nemotron_v3.py`` ("the same tool call and
reasoning format as Qwen3": ``<think>`` reasoning, on unless
``enable_thinking`` is False, ``<tool_call>`` Qwen3-Coder XML calls) and SGLang
0.5.23's ``Nemotron3Detector`` (``<think>`` / ``</think>``, default from
``enable_thinking``). That is lmparse's ``default`` reasoning: the class
below only names it for both engines' names. vLLM's swap of reasoning into
content when the answer is empty (``enable_thinking=False`` or
``force_nonempty_content=True``) is done for complete responses
(``reasoning_as_missing_content``), not in streaming: a streamed reasoning delta
cannot be taken back; with ``enable_thinking=False`` lmparse starts in content anyway.
Nemotron 3's tool calls are the Qwen3-Coder XML grammar (``qwen3coder``).
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager

__all__ = ['Nemotron3ReasoningParser']


@ReasoningParserManager.register_module(['nemotron_v3', 'nemotron_3'])
class Nemotron3ReasoningParser(ReasoningParser):
    """``<think>`` ... ``</think>``, in reasoning from the start unless ``enable_thinking`` is False."""

    reasoning_as_missing_content = True
