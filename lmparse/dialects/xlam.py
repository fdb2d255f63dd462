"""Salesforce xLAM-2 (Llama-xLAM-2-*-fc-r, xLAM-2-*-fc-r): a bare JSON array of calls.

Syntax: vLLM's ``examples/tool_chat_template_xlam_llama.jinja`` /
``tool_chat_template_xlam_qwen.jinja`` (the templates vLLM's docs pair with
``--tool-call-parser xlam``): "make calls in a single JSON array:
[{"name": "tool_call_name", "arguments": {"arg1": "value1", ...}}, ...]",
and an assistant turn with calls renders as exactly that array. vLLM 0.33's
``vllm/tool_parsers/xlam_tool_parser.py`` reads it when the output starts
with ``[``.

lmparse reads the array only at the start of the response (after whitespace,
or after a reasoning block) and only when its first envelope names an offered
tool, decided before anything is emitted; any other output, a JSON answer
included, is content byte for byte (README "Bare calls"). vLLM's parser also
searches markdown fences, ``[TOOL_CALLS]`` and ``<tool_call>`` blocks anywhere
in the text for JSON. Of those, ``<tool_call>`` … ``</tool_call>`` (the
block of Qwen-based xLAM's base model) is read here too, holding an envelope
or an array of them; markdown fences and ``[TOOL_CALLS]`` are heuristics for
other models' syntax and are not read.
"""
from __future__ import annotations

from lmparse.registry import ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['XlamToolParser']


@ToolParserManager.register_module('xlam')
class XlamToolParser(JsonToolParser):
    """``[{"name": ..., "arguments": {...}}, ...]`` at the start of the response, or in ``<tool_call>`` blocks."""

    tool_open_tag = '<tool_call>'
    tool_close_tag = '</tool_call>'
    envelope_array = True
    bare_call_open = '['
