"""inclusionAI Ling 3: GLM-4.7 XML-like tool calls and ``<think>`` reasoning.

Syntax: vLLM 0.33's ``vllm/parser/ling3.py`` ("the same XML tool-call format
as GLM-4.7 ... GLM-style ``<think>`` / ``</think>`` reasoning", thinking on
unless ``thinking`` / ``enable_thinking`` is false) and SGLang 0.5.23's
``function_call/ling3_detector.py`` (the GLM-4.5 grammar; the model may put
a newline after the name, write the first ``<arg_key>`` right after it, or
close a call with no arguments at once) and ``Ling3Detector`` reasoning
(``enable_thinking`` defaults on; a tool call ends unclosed reasoning)::

    <tool_call>NAME
    <arg_key>KEY</arg_key>
    <arg_value>VALUE</arg_value>
    </tool_call>

All three name layouts are the GLM family's grammar already (the name runs to
the first ``<arg_key>`` or ``</tool_call>``, newlines around it are skipped).
SGLang moves a reasoning-only complete answer into the content; lmparse keeps
what the model wrote where it wrote it.
"""
from __future__ import annotations

from lmparse.dialects.glm import Glm47ToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['Ling3ToolParser']


@ToolParserManager.register_module(['ling3'])
class Ling3ToolParser(Glm47ToolParser):
    """``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>`` (the GLM-4.7 grammar)."""


# ``<think>`` … ``</think>``, in reasoning from the start unless thinking is switched off: lmparse's 'default'.
ReasoningParserManager.register_module(['ling3'], module=ReasoningParser)
