"""GPT-OSS: OpenAI's Harmony response format.

Syntax: OpenAI's Harmony format (the ``openai/harmony`` repository and the
cookbook "OpenAI Harmony Response Format": ``<|channel|>analysis`` ->
reasoning, ``final`` -> content, ``commentary to=functions.NAME`` -> tool calls)
and LMDeploy 0.18's ``gpt-oss`` response parser. Harmony has its own channels,
so it is a response parser of its own family (``lmparse.harmony``), not a
reasoning/tool pair.
"""
from __future__ import annotations

from lmparse.harmony import HarmonyResponseParser
from lmparse.registry import ResponseParserManager

__all__ = ['GptOssResponseParser']


@ResponseParserManager.register_module('gpt-oss')
class GptOssResponseParser(HarmonyResponseParser):
    """GPT-OSS (Harmony): analysis -> reasoning, final -> content, functions -> tool calls.

    ``input_mode`` chooses how special tokens arrive: 'text' (in ``delta_text``,
    the engine detokenizes with ``skip_special_tokens=False``; ``adjust_request``
    asks for that), 'ids' (only in ``delta_token_ids``), or 'auto' (decided at
    the first chunk carrying a Harmony special-token id).
    """
