"""GLM-4.5 / GLM-4.6 / GLM-4.7 XML-like tool calls.

Syntax: the chat templates of zai-org/GLM-4.5 and zai-org/GLM-4.7
(``<tool_call>NAME\\n<arg_key>KEY</arg_key>\\n<arg_value>VALUE</arg_value>\\n...</tool_call>``)
and LMDeploy 0.18's ``glm47_tool_parser``. GLM-4.5's newlines between tags
are skipped by the grammar.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.xml_parser import XmlToolParser

__all__ = ['Glm47ToolParser', 'GlmQuotedNumbersToolParser']


@ToolParserManager.register_module(['glm47', 'glm45', 'glm'])
class Glm47ToolParser(XmlToolParser):
    """``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>``."""

    tool_open_tag = '<tool_call>'
    tool_close_tag = '</tool_call>'
    function_open = ''  # the name is the text up to the first <arg_key>
    arg_open = '<arg_key>'
    arg_name_end = '</arg_key>'
    value_open = '<arg_value>'
    arg_value_close_tag = '</arg_value>'
    structural_tag_model = 'glm_4_7'


@ToolParserManager.register_module('glm_quoted_numbers')
class GlmQuotedNumbersToolParser(Glm47ToolParser):
    """``glm47`` reading a quoted number for a number-typed parameter as that number.

    SGLang's ``glm4_moe_detector.py`` / ``glm47_moe_detector.py``
    (``parse_arguments``; its test ``test_schema_type_coercion``) read
    ``<arg_value>"42"</arg_value>`` for a parameter typed number as 42; the
    SGLang plugin maps SGLang's ``glm`` / ``glm45`` / ``glm47`` here. LMDeploy's
    ``glm47`` parser (lmparse's ``glm47``, the oracle lane) keeps the string
    ``"42"`` as written. Integer-typed parameters take a quoted integer too;
    only a string that is exactly one JSON number counts (``" 42"`` stays a string).
    """

    quoted_numbers = True


# vLLM's ``glm45`` / ``glm47`` and SGLang's ``glm45`` reasoning: ``<think>`` … ``</think>``, in reasoning
# from the start unless thinking is switched off: lmparse's 'default'.
ReasoningParserManager.register_module(['glm45', 'glm47'], module=ReasoningParser)
