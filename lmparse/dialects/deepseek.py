"""DeepSeek: DSML tool calls (V3.2, V4, V4.1) and the DeepSeek reasoning switches (V3, V3.2, V4).

Syntax: deepseek-ai/DeepSeek-V3.2's ``encoding/encoding_dsv32.py`` and chat
template (``\\n\\n<｜DSML｜function_calls>`` blocks of
``<｜DSML｜invoke name="NAME">`` / ``<｜DSML｜parameter name="KEY" string="true|false">``),
DeepSeek V4's template (the same grammar in ``<｜DSML｜tool_calls>`` blocks),
and LMDeploy 0.18's ``deepseek_v32_tool_parser`` / ``deepseek_v4_tool_parser``
and DeepSeek reasoning parsers. The templates write ``<think>`` into the
prompt only when a thinking switch is on.

DeepSeek V4.1 writes the same grammar with a space after the DSML token in
every tag (``<｜DSML｜ calls>``, ``<｜DSML｜ invoke name="X">``,
``<｜DSML｜ parameter name="K" string="true">``): vLLM 0.33's
``vllm/parser/deepseek_v41.py`` and SGLang 0.5.23's ``deepseekv41_detector.py``
(both: "the leading space ... is intentional"). Its reasoning is V4's
(vLLM's ``deepseek_v41`` reasoning adapter and SGLang's ``deepseek-v41``
both reuse V4's), so the V4 reasoning parser also answers to those names.
"""

from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.dsml import DsmlToolParser

__all__ = ['DeepSeekV3ReasoningParser', 'DeepSeekV32ReasoningParser', 'DeepSeekV32ToolParser',
           'DeepSeekV41ToolParser', 'DeepSeekV4ReasoningParser', 'DeepSeekV4ToolParser']


@ToolParserManager.register_module('deepseek-v32')
class DeepSeekV32ToolParser(DsmlToolParser):
    """``<｜DSML｜function_calls>`` blocks of ``invoke`` / ``parameter`` tags."""

    tool_calls_block_name = 'function_calls'
    structural_tag_model = 'deepseek_v3_2'


@ToolParserManager.register_module('deepseek-v4')
class DeepSeekV4ToolParser(DeepSeekV32ToolParser):
    """The V3.2 grammar in ``<｜DSML｜tool_calls>`` blocks."""

    tool_calls_block_name = 'tool_calls'
    structural_tag_model = 'deepseek_v4'


@ToolParserManager.register_module(['deepseek-v41', 'deepseek_v41', 'deepseekv41', 'deepseek-v4.1'])
class DeepSeekV41ToolParser(DeepSeekV4ToolParser):
    """The V4 grammar with a space after the DSML token: ``<｜DSML｜ calls>`` blocks.

    ``｜DSML｜`` is one token of DeepSeek's vocabulary, but ``<``, the space
    and element name and ``>`` are ordinary tokens, so a tag can end a chunk
    after any of them: every proper prefix of every tag is held back.
    """

    dsml_token = '\uff5cDSML\uff5c '  # the space is part of every V4.1 tag
    tool_calls_block_name = 'calls'
    structural_tag_model = 'deepseek_v4_1'


@ReasoningParserManager.register_module('deepseek-v3')
class DeepSeekV3ReasoningParser(ReasoningParser):
    """``<think>`` tags; output starts in reasoning only when ``enable_thinking`` is True.

    Without the switch the model usually answers directly; an explicit
    ``<think>`` it emits still opens reasoning.
    """

    thinking_switches = ('enable_thinking',)


@ReasoningParserManager.register_module(['deepseek-v32', 'deepseek-v3.2'])
class DeepSeekV32ReasoningParser(ReasoningParser):
    """V3.2 thinking mode: starts in reasoning when ``thinking`` or ``enable_thinking`` is True."""

    thinking_switches = ('thinking', 'enable_thinking')


@ReasoningParserManager.register_module(['deepseek-v4', 'deepseek-v41', 'deepseek_v41', 'deepseek-v4.1'])
class DeepSeekV4ReasoningParser(DeepSeekV32ReasoningParser):
    """V4 / V4.1 thinking mode: the same switches and tags as V3.2."""
