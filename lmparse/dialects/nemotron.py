"""NVIDIA Nemotron 3 (Nano / Super) reasoning: ``<think>`` ... ``</think>``.

Syntax: the chat template of nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B (thinking on
by default: the generation prompt ends in ``<think>\\n``; ``enable_thinking=False``
writes an empty ``<think></think>`` into the prompt), vLLM 0.33's
``parser/nemotron_v3.py`` ("the same tool call and reasoning format as Qwen3")
and SGLang 0.5.23's ``Nemotron3Detector`` (``<think>`` / ``</think>``, default
from ``enable_thinking``). That is lmparse's ``default`` reasoning, so both
engine names are aliases of it. Not provided: vLLM's swap of reasoning into
content when the answer is empty (``enable_thinking=False`` or
``force_nonempty_content=True``) — a streamed reasoning delta cannot be taken
back; with ``enable_thinking=False`` lmparse starts in content anyway.
Nemotron 3's tool calls are the Qwen3-Coder XML grammar (``qwen3coder``).
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager

__all__ = ['Nemotron3ReasoningParser']


@ReasoningParserManager.register_module(['nemotron_v3', 'nemotron_3'])
class Nemotron3ReasoningParser(ReasoningParser):
    """``<think>`` ... ``</think>``, in reasoning from the start unless ``enable_thinking`` is False."""
