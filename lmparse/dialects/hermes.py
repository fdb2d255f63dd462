"""Hermes-style JSON tool calls: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

Syntax: NousResearch/Hermes-2-Pro's and Hermes 3's chat templates ("For each
function call return a json object with function name and arguments within
<tool_call></tool_call> XML tags"), the same as Qwen 2.5 / Qwen 3
(``lmparse.dialects.qwen``) and IBM Granite 4.0. vLLM's ``hermes`` parser
(also registered as ``qwen3_json``; ``granite4`` reads the same) asks the
engine to keep special tokens because some of these models make
``<tool_call>`` one: that request setting is the only difference from
``qwen``. SGLang's ``qwen25`` (its ``qwen`` too) is exactly ``qwen``.
"""
from __future__ import annotations

from lmparse.dialects.qwen import Qwen3ToolParser
from lmparse.registry import ToolParserManager

__all__ = ['HermesToolParser']


@ToolParserManager.register_module(['hermes', 'qwen3_json', 'granite4'])
class HermesToolParser(Qwen3ToolParser):
    """The Qwen JSON grammar; the engine keeps special tokens when tools are offered."""

    request_settings_with_tools = {'skip_special_tokens': False}


ToolParserManager.register_module('qwen25', module=Qwen3ToolParser)
