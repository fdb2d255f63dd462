"""Llama 3.x JSON tool calls after ``<|python_tag|>``.

Syntax: Meta's Llama 3.1 prompt format (llama-models ``prompt_format.md``:
``<|python_tag|>{"name": ..., "parameters": {...}}``, ended by ``<|eom_id|>`` /
``<|eot_id|>``, which the engine strips) and LMDeploy 0.18's ``llama3_tool_parser``.
"""
from __future__ import annotations

from lmparse.registry import ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['Llama3JsonToolParser']


@ToolParserManager.register_module('llama3')
class Llama3JsonToolParser(JsonToolParser):
    """``<|python_tag|>{"name": ..., "parameters": {...}}`` with no close tag."""

    tool_open_tag = '<|python_tag|>'
    tool_close_tag = None
    argument_field = 'parameters'
