"""Xiaomi MiMo: Qwen3-Coder-style XML tool calls with verbatim values and ``<think>`` reasoning.

Syntax: SGLang's ``mimo`` detector (``sglang/srt/function_call/mimo_detector.py``:
``<tool_call>\\n<function=NAME>\\n<parameter=KEY>VALUE</parameter>\\n</function>\\n</tool_call>``)
and vLLM's ``mimo`` parser (``vllm/parser/mimo.py``: the Qwen3 XML grammar
whose "compact XML parameters contain verbatim string values", so no newline
around a value is trimmed). The MiMo template tells the model that "the value
enclosed between parameter tags is preserved exactly as-is, including newlines
and spaces": lmparse keeps every character of a value.

Values are typed by the request's JSON schema as the XML family does (as
SGLang's detector); vLLM's converter keeps every value a JSON string. SGLang
also HTML-unescapes values (``&amp;`` becomes ``&``); lmparse keeps them as
written, as vLLM and the template's "as-is" do.

Reasoning: ``<think>`` ... ``</think>``. MiMo-V2-Flash's template thinks only
when ``enable_thinking`` is True (its default is off), as SGLang's ``mimo``
reasoning parser reads it; vLLM's assumes True when the switch is absent.
lmparse follows the template: output starts in reasoning only when
``enable_thinking`` is True; a ``<think>`` the model writes still opens it.
"""
from __future__ import annotations

from lmparse.dialects.qwen import Qwen3CoderToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['MiMoReasoningParser', 'MiMoToolParser']


@ToolParserManager.register_module(['mimo'])
class MiMoToolParser(Qwen3CoderToolParser):
    """``<tool_call><function=NAME><parameter=KEY>V</parameter></function></tool_call>``, values verbatim."""

    strip_value_newlines = False
    # xgrammar's qwen_3_coder tag writes newlines around values that MiMo
    # would keep as part of them; there is no MiMo structural tag.
    structural_tag_model = None  # type: ignore[assignment]
    reasoning_structural_tag_model = None  # type: ignore[assignment]


@ReasoningParserManager.register_module(['mimo'])
class MiMoReasoningParser(ReasoningParser):
    """``<think>`` ... ``</think>``; starts in reasoning only when ``enable_thinking`` is True."""

    thinking_switches = ('enable_thinking',)
