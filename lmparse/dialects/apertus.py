"""Swiss AI Apertus (2509): ``<|tools_prefix|>[{"NAME": {arguments}}, ...]<|tools_suffix|>`` and inner reasoning.

Syntax: the Apertus format specification (swiss-ai/apertus_format
``docs/format.md``, "Chat Template and Tokens": an assistant turn
``<|inner_prefix|>thoughts<|inner_suffix|><|tools_prefix|>[{"calculator":
{"expr": "2+2"}}]<|tools_suffix|>`` then the answer); vLLM 0.33's
``vllm/tool_parsers/apertus_tool_parser.py`` (``apertus``) and SGLang
0.5.23's ``function_call/apertus2509_detector.py`` / ``Apertus2509Detector``
reasoning (``apertus2509``). Each list element is a one-key object, the key
the tool's name and its value the arguments (the JSON family's
``name_as_key``). All four markers are special tokens.

Reasoning: ``<|inner_prefix|>`` … ``<|inner_suffix|>``, written by the model
(the generation prompt ends at ``<|assistant_start|>``), so output starts as
content; a turn may hold several inner blocks. A tools block inside an inner
block is a call (SGLang routes it out of the reasoning too).
"""
from __future__ import annotations

from typing import Any, ClassVar

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['ApertusReasoningParser', 'ApertusToolParser']


@ToolParserManager.register_module(['apertus', 'apertus2509'])
class ApertusToolParser(JsonToolParser):
    """``<|tools_prefix|>[{"NAME": {...}}, ...]<|tools_suffix|>``."""

    tool_open_tag = '<|tools_prefix|>'
    tool_close_tag = '<|tools_suffix|>'
    envelope_array = True
    name_as_key = True
    request_settings_with_tools: ClassVar[dict[str, Any]] = {'skip_special_tokens': False}


@ReasoningParserManager.register_module('apertus2509')
class ApertusReasoningParser(ReasoningParser):
    """``<|inner_prefix|>`` … ``<|inner_suffix|>``; output starts as content."""

    reasoning_open_tag = '<|inner_prefix|>'
    reasoning_close_tag = '<|inner_suffix|>'
    open_tag_in_prompt = False
