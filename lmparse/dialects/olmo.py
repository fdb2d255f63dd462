"""AllenAI OLMo 3: ``<function_calls>`` pythonic tool calls, one per line, and ``<think>`` reasoning.

Syntax: the OLMo 3 chat template (tools are described in ``<functions>``;
an assistant's calls are written as ``<function_calls>`` … ``</function_calls>``
holding pythonic calls, one per line; the generation prompt ends in
``<|im_start|>assistant\\n<think>``) and vLLM 0.33's
``vllm/tool_parsers/olmo3_tool_parser.py`` ("newline-separated pythonic
strings", "argument values being null/true/false instead of Pythonic
literals")::

    <function_calls>get_weather(city="SF", days=3)
    get_time(exact=true)</function_calls>

The pythonic family with ``call_list_brackets = False`` (calls separated by
newlines, or commas, ended by the close tag) and ``json_literals`` (``true``
/ ``false`` / ``null`` beside ``True`` / ``False`` / ``None``). The tags are
ordinary text (every proper prefix is held). The first call must name an
offered tool, else the block is content byte for byte; vLLM instead drops
the text around a block in a complete response, lmparse keeps it.

Reasoning: ``<think>`` / ``</think>`` are ordinary text; output starts inside
reasoning (vLLM's ``olmo3`` reasoning parser starts there "to support cases
where we hardcode ``<think>``"): the default reasoning protocol, under
vLLM's name.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.pythonic import PythonicToolParser

__all__ = ['Olmo3ReasoningParser', 'Olmo3ToolParser']


@ToolParserManager.register_module(['olmo3'])
class Olmo3ToolParser(PythonicToolParser):
    """``<function_calls>f(a=1)\\ng(b=true)</function_calls>``: pythonic calls one per line."""

    tool_open_tag = '<function_calls>'
    tool_close_tag = '</function_calls>'
    call_list_brackets = False
    json_literals = True


@ReasoningParserManager.register_module(['olmo3'])
class Olmo3ReasoningParser(ReasoningParser):
    """``<think>`` … ``</think>``; output starts inside reasoning unless thinking is switched off."""
