"""AI21 Jamba 1.5 / 1.6 / 1.7: ``<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>``.

Syntax: vLLM 0.33's ``vllm/tool_parsers/jamba_tool_parser.py`` (``jamba``,
listed in vLLM's tool-calling docs for AI21 Jamba-1.5): a JSON list of
``{"name", "arguments"}`` envelopes between ``<tool_calls>`` and
``</tool_calls>``, both tokens of the Jamba vocabulary (the parser refuses a
tokenizer without them) and special, so ``skip_special_tokens=False`` when
tools are offered. Jamba has no reasoning markers.
"""
from __future__ import annotations

from typing import Any, ClassVar

from lmparse.registry import ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['JambaToolParser']


@ToolParserManager.register_module('jamba')
class JambaToolParser(JsonToolParser):
    """``<tool_calls>[{...}, ...]</tool_calls>``."""

    tool_open_tag = '<tool_calls>'
    tool_close_tag = '</tool_calls>'
    envelope_array = True
    # <tool_calls> / </tool_calls> are special tokens: keep them in the decoded text.
    request_settings_with_tools: ClassVar[dict[str, Any]] = {'skip_special_tokens': False}
