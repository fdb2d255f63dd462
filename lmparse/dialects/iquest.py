"""IQuest Q1: ``<iquest_tool_call>`` GLM-style XML tool calls and ``<think>`` reasoning.

Syntax: SGLang 0.5.23's ``iquest_q1`` parsers (vLLM 0.33 has none):
``function_call/iquest_q1_detector.py`` is the GLM-4.7 grammar inside its own
tags, ``<iquest_tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>...</iquest_tool_call>``,
one call per block; ``IQuestQ1ReasoningDetector`` is ``<think>`` ... ``</think>``,
in reasoning from the start (the detector's ``thinks_internally``: the open
tag is in the prompt) unless the request sets ``thinking`` /
``enable_thinking`` and neither is True. The chat template itself could not
be read here; the engine's parsers are the source.
Values are typed by the tool's JSON schema, as for GLM. SGLang builds no
structural tag for this format, and neither does lmparse
(``tool_choice="required"`` is refused).
"""
from __future__ import annotations

from lmparse.dialects.glm import Glm47ToolParser
from lmparse.dialects.holo import Holo2ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['IQuestQ1ReasoningParser', 'IQuestQ1ToolParser']


@ToolParserManager.register_module('iquest_q1')
class IQuestQ1ToolParser(Glm47ToolParser):
    """``<iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</iquest_tool_call>``."""

    tool_open_tag = '<iquest_tool_call>'
    tool_close_tag = '</iquest_tool_call>'
    # Keep the tags in the decoded text should the tokenizer make them special tokens.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}
    structural_tag_model = None  # type: ignore[assignment]  # the base's is a str, the family's str | None


@ReasoningParserManager.register_module('iquest_q1')
class IQuestQ1ReasoningParser(Holo2ReasoningParser):
    """``<think>`` ... ``</think>``; starts in reasoning unless ``thinking`` / ``enable_thinking`` turn it off.

    The same rule as Holo2's (both engines' DeepSeek-V3 "with thinking" reading).
    """
