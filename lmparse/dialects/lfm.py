"""Liquid AI LFM2 / LFM2.5: pythonic tool calls between special tokens.

Syntax: LiquidAI's LFM2 chat template and model card ("the model writes a
Pythonic function call list between ``<|tool_call_start|>`` and
``<|tool_call_end|>``"), vLLM 0.33's ``vllm/tool_parsers/lfm2_tool_parser.py``
and SGLang 0.5.23's ``function_call/lfm2_detector.py``::

    <|tool_call_start|>[get_weather(location="Paris"), get_time()]<|tool_call_end|>Checking.

Both markers are special tokens (vLLM forces ``skip_special_tokens=False``
when tools are offered; so does this dialect). The list is the pythonic
family's: keyword arguments, Python literals converted to JSON. SGLang also
reads a JSON list (``[{"name": ..., "arguments": ...}]``) inside the
markers; the template never writes one, so lmparse does not: a block whose
list does not start with ``NAME(`` of an offered tool stays content byte for
byte (see ``lmparse.tools.pythonic``). vLLM
suppresses LFM2's occasional echo of the call text after the block; lmparse
keeps text after the block as content (it is what the model wrote).
"""
from __future__ import annotations

from typing import Any, ClassVar

from lmparse.registry import ToolParserManager
from lmparse.tools.pythonic import PythonicToolParser

__all__ = ['Lfm2ToolParser']


@ToolParserManager.register_module(['lfm2'])
class Lfm2ToolParser(PythonicToolParser):
    """``<|tool_call_start|>[f(a=1), g()]<|tool_call_end|>``."""

    tool_open_tag = '<|tool_call_start|>'
    tool_close_tag = '<|tool_call_end|>'
    request_settings_with_tools: ClassVar[dict[str, Any]] = {'skip_special_tokens': False}
