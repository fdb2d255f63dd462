"""Microsoft Phi-4-mini: ``functools[{"name": ..., "arguments": {...}}, ...]``.

Syntax: Phi-4-mini's function-calling prompt as Microsoft publishes it
(microsoft/Foundry-Local ``samples/python/functioncalling/README.md``: "prefix
function calls with functools marker (no closing marker required) ... in a
single JSON list formatted as functools[{"name": [function name],
"arguments": [function arguments as JSON]}, ...]"), and vLLM 0.33's
``vllm/tool_parsers/phi4mini_tool_parser.py`` (``phi4_mini_json``: the list
after ``functools``; ``"parameters"`` is read as well as ``"arguments"``).

``functools`` is ordinary text (no special token), so the open tag is
``functools[`` with its bracket, the bracket right after the word as vLLM's
pattern reads it: ``import functools`` in prose stays content, and the tag
opens the list itself. The list's ``]`` ends the block, text after it is
content. Calls naming tools that were not offered are dropped (as for every
dialect), so are calls when no tools are offered. vLLM parses only the
complete response (its streaming path emits nothing); lmparse streams the
arguments.
"""
from __future__ import annotations

from lmparse.registry import ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['Phi4MiniJsonToolParser']


@ToolParserManager.register_module(['phi4-mini-json', 'phi4_mini_json'])
class Phi4MiniJsonToolParser(JsonToolParser):
    """``functools[{"name": ..., "arguments": {...}}, ...]``, no close marker."""

    tool_open_tag = 'functools['
    tool_close_tag = None
    envelope_array = True
    argument_field_aliases = ('parameters',)
