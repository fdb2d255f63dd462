"""StepFun Step-3, Step-3.5 / 3.7 and Step-5: tool calls and ``<think>`` reasoning.

Step-3 (stepfun-ai/step3; vLLM 0.33 ``vllm/tool_parsers/step3_tool_parser.py``,
SGLang 0.5.23 ``function_call/step3_detector.py`` and its tests) writes a
special-token section of steptml calls::

    <｜tool_calls_begin｜>
    <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
    <steptml:parameter name="KEY">VALUE</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

String values are written as they are, other values as JSON (``true``,
``3``, ``{...}``); both engines type them by the tool's JSON schema, as the
attribute-named family does with ``schema_typed_values`` (the MiniMax M2
reading). The section markers are special tokens; ``<steptml:...>`` tags are
ordinary text. The ``function<｜tool_sep｜>`` call header between calls is
skipped, as SGLang does (vLLM's streaming path never reads it either).
vLLM strips whitespace around string values; lmparse keeps a value as
written (SGLang's reading), since the template writes none.

Step-3.5 / Step-3.7 (vLLM ``vllm/parser/step3p5.py``, SGLang ``step3p5`` =
``Qwen3CoderDetector``) and Step-5 (vLLM ``vllm/tool_parsers/step5_tool_parser.py``:
the Qwen Coder grammar) write Qwen3-Coder XML calls,
``<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nV\\n</parameter>\\n</function>\\n</tool_call>``.

Reasoning: every Step template puts ``<think>`` in the prompt, so output
starts inside reasoning and ``</think>`` ends it (vLLM ``step3``: text before
``</think>`` is reasoning; ``step3p5``: thinking always on; ``step5``:
DeepSeek-R1's parser; SGLang ``step3`` / ``step3p5``: DeepSeek-R1's detector).
lmparse's router still honours an explicit ``enable_thinking=False`` (then
output starts as content; vLLM's ``step3p5`` ignores the switch).
"""
from __future__ import annotations

from typing import Any, ClassVar

from lmparse.dialects.qwen import Qwen3CoderToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.dsml import DsmlToolParser

__all__ = ['Step3ToolParser', 'Step3p5ToolParser', 'StepReasoningParser']

STEP3_CALLS_BEGIN = '<\uff5ctool_calls_begin\uff5c>'
STEP3_CALLS_END = '<\uff5ctool_calls_end\uff5c>'


@ToolParserManager.register_module(['step3'])
class Step3ToolParser(DsmlToolParser):
    """``<｜tool_calls_begin｜>`` sections of ``<steptml:invoke name=..>`` calls, values typed by schema.

    The per-call ``<｜tool_call_begin｜>function<｜tool_sep｜>`` header and
    ``<｜tool_call_end｜>`` are skipped like any text between calls.
    """

    dsml_token = 'steptml:'
    tool_calls_block_name = ''  # the block is the special-token section below
    block_open_tag = STEP3_CALLS_BEGIN
    block_close_tag = STEP3_CALLS_END
    block_lead = ''
    string_attribute = None
    schema_typed_values = True
    # The section markers are special tokens: keep them when tools are offered (as vLLM does).
    request_settings_with_tools: ClassVar[dict[str, Any]] = {'skip_special_tokens': False}


@ToolParserManager.register_module(['step3p5', 'step5'])
class Step3p5ToolParser(Qwen3CoderToolParser):
    """Step-3.5 / 3.7 / Step-5: the Qwen3-Coder grammar unchanged (see ``Qwen3CoderToolParser``)."""


@ReasoningParserManager.register_module(['step3', 'step3p5', 'step5'])
class StepReasoningParser(ReasoningParser):
    """``<think>`` … ``</think>``; output starts inside reasoning (the template opens it)."""
