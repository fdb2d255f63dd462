"""Spark 2.5 tool calls: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``.

Syntax: SGLang 0.5.23's ``spark25`` parser (``function_call/spark25_detector.py``,
"Spark2_5's XML-KV tool-call format")::

    <tool_call>function_name
    <arg_key>key</arg_key><arg_value>value</arg_value>
    </tool_call>

one call per block, values typed by the tool's JSON schema (strings raw,
integers, numbers, booleans, anything else JSON, falling back to the text).
That is the GLM-4.7 grammar (``Glm47ToolParser``) exactly. vLLM 0.33 has no
``spark25``. Where SGLang differs: it turns a value ``null`` into JSON null
even for a string parameter (lmparse keeps the string ``"null"``, as GLM),
and it emits each call whole when its close tag arrives (lmparse streams
string values). SGLang builds no structural tag for it; neither does lmparse.
"""
from __future__ import annotations

from lmparse.dialects.glm import Glm47ToolParser
from lmparse.registry import ToolParserManager

__all__ = ['Spark25ToolParser']


@ToolParserManager.register_module('spark25')
class Spark25ToolParser(Glm47ToolParser):
    """``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>`` (the GLM-4.7 dialect)."""

    structural_tag_model = None  # type: ignore[assignment]  # the base's is a str, the family's str | None
