"""DeepSeek: V3/R1/V3.1 special-token sections, DSML tool calls (V3.2, V4, V4.1) and the reasoning switches.

Syntax sources:

- V3 / R1 / R1-0528: the chat template in deepseek-ai/DeepSeek-V3's
  ``tokenizer_config.json``
  (``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>``,
  calls separated by a line break, then ``<｜tool▁calls▁end｜>``). Every marker is
  one special token of the DeepSeek V3 tokenizer (ids 128806-128809 and 128814),
  so these are the Kimi K2 section family with other markers and header layouts.
- V3.1: deepseek-ai/DeepSeek-V3.1's template
  (``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``; the generation
  prompt ends in ``<think>`` when the ``thinking`` switch is on), and the vLLM /
  SGLang DeepSeek V3 and V3.1 parsers.
- V3.2: deepseek-ai/DeepSeek-V3.2's ``encoding/encoding_dsv32.py`` and chat
  template (``\\n\\n<｜DSML｜function_calls>`` blocks of ``<｜DSML｜invoke name="NAME">`` /
  ``<｜DSML｜parameter name="KEY" string="true|false">``); V4's template (the same
  grammar in ``<｜DSML｜tool_calls>`` blocks); LMDeploy 0.18's
  ``deepseek_v32_tool_parser`` / ``deepseek_v4_tool_parser`` and DeepSeek reasoning
  parsers. The templates write ``<think>`` into the prompt only when a thinking
  switch is on.
- SGLang's DeepSeek V3.2 / V4 detector tests also write a zero-argument call as a
  self-closing ``<｜DSML｜invoke name="X"/>`` in a block opened without the blank
  line (``<｜DSML｜tool_calls>`` at the start of the answer): the family takes the
  open tag without its ``block_lead`` there (a bare opener anchored at the start
  of the answer) when an invoke open tag follows it (else it is content, as
  LMDeploy keeps it); mid-answer the tag still needs its blank line.
- ``string="false"`` values that are not JSON are the raw text as a JSON string
  (vLLM's ``deepseekv32_tool_parser`` coerces with a string fallback, SGLang's
  detector keeps the text when ``json.loads`` fails); a parameter close tag
  written inside a value is text unless the next tag or the end follows it.
- V4.1 writes the V4 grammar with a space after the DSML token in every tag
  (``<｜DSML｜ calls>``, ``<｜DSML｜ invoke name="X">``): vLLM 0.33's
  ``vllm/parser/deepseek_v41.py`` and SGLang 0.5.23's ``deepseekv41_detector.py``
  (both: "the leading space ... is intentional"). Its reasoning tags are V4's; it
  thinks unless switched off (vLLM renders V4.1 prompts in thinking mode when the
  request sets no switch, and in chat mode for ``reasoning_effort="none"``).
"""
from __future__ import annotations

from typing import ClassVar

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.dsml import DsmlToolParser
from lmparse.tools.sections import SectionToolParser

__all__ = ['DeepSeekV31ReasoningParser', 'DeepSeekV31ToolParser', 'DeepSeekV3ReasoningParser',
           'DeepSeekV3ToolParser', 'DeepSeekV32ReasoningParser', 'DeepSeekV32ToolParser',
           'DeepSeekV41ReasoningParser', 'DeepSeekV41ToolParser', 'DeepSeekV4ReasoningParser', 'DeepSeekV4ToolParser']


@ToolParserManager.register_module(['deepseek-v3', 'deepseek_v3', 'deepseekv3'])
class DeepSeekV3ToolParser(SectionToolParser):
    """V3 / R1: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`` + a fenced JSON block per call.

    The header is the call type; the name is the line after the separator and
    the arguments sit in a ```` ```json ```` fence, never part of them.
    """

    section_begin = '<｜tool▁calls▁begin｜>'
    section_end = '<｜tool▁calls▁end｜>'
    call_begin = '<｜tool▁call▁begin｜>'
    argument_begin = '<｜tool▁sep｜>'
    call_end = '<｜tool▁call▁end｜>'
    header_layout = 'type'
    argument_fence: ClassVar[str | None] = '```'
    # The markers are special tokens: keep them in the decoded text.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}
    structural_tag_model = 'deepseek_r1'


@ToolParserManager.register_module(['deepseek-v31', 'deepseek_v31', 'deepseekv31'])
class DeepSeekV31ToolParser(DeepSeekV3ToolParser):
    """V3.1: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``, no fence."""

    header_layout = 'name'
    argument_fence = None
    structural_tag_model = 'deepseek_v3_1'
    # a call written without <｜tool▁calls▁begin｜> (SGLang's detector reads one) is a call when
    # its grammar confirms it (see SectionToolParser.confirm_call)
    bare_call_open = '<｜tool▁call▁begin｜>'


@ToolParserManager.register_module(['deepseek-v32', 'deepseek_v32', 'deepseekv32'])
class DeepSeekV32ToolParser(DsmlToolParser):
    """``<｜DSML｜function_calls>`` blocks of ``invoke`` / ``parameter`` tags."""

    tool_calls_block_name = 'function_calls'
    structural_tag_model = 'deepseek_v3_2'
    # vLLM's DeepSeek V3.2 / V4 / V4.1 parsers type values by the schema and unwrap a lone 'arguments' /
    # 'input' wrapper (vllm/parser/deepseek_v4.py): lmparse.integrations.vllm switches that on in replace mode
    # (DsmlToolParser.coerce_values_to_schema / unwrap_wrapper_arguments, lmparse.tools.dsml_values).
    vllm_value_rules = True
    # an invoke written without its block (SGLang's detector tests: V4 often does) is a call
    # when its grammar confirms it (see DsmlToolParser.confirm_invoke)
    bare_call_open = '<\uff5cDSML\uff5cinvoke'


@ToolParserManager.register_module(['deepseek-v4', 'deepseek_v4', 'deepseekv4'])
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
    bare_call_open = '<\uff5cDSML\uff5c invoke'
    structural_tag_model = 'deepseek_v4_1'


# vLLM's ``deepseek_r1``: output starts in reasoning, an explicit ``<think>`` is dropped,
# exactly lmparse's 'default' (SGLang's ``deepseek-r1`` is the legacy name for it).
ReasoningParserManager.register_module('deepseek_r1', module=ReasoningParser)


@ReasoningParserManager.register_module('deepseek-v3')
class DeepSeekV3ReasoningParser(ReasoningParser):
    """``<think>`` tags; output starts in reasoning only when ``enable_thinking`` is True.

    Without the switch the model usually answers directly; an explicit
    ``<think>`` it emits still opens reasoning.
    """

    thinking_switches = ('enable_thinking',)


@ReasoningParserManager.register_module(['deepseek-v31', 'deepseek-v3.1', 'deepseek_v3'])
class DeepSeekV31ReasoningParser(ReasoningParser):
    """V3.1 hybrid thinking: starts in reasoning when ``thinking`` (or ``enable_thinking``) is True.

    The V3.1 template reads ``thinking`` and falls back to ``enable_thinking``;
    vLLM's ``deepseek_v3`` reasoning parser reads both.
    """

    thinking_switches = ('thinking', 'enable_thinking')


@ReasoningParserManager.register_module(['deepseek-v32', 'deepseek-v3.2'])
class DeepSeekV32ReasoningParser(ReasoningParser):
    """V3.2 thinking mode: starts in reasoning when ``thinking`` or ``enable_thinking`` is True."""

    thinking_switches = ('thinking', 'enable_thinking')


@ReasoningParserManager.register_module(['deepseek-v4', 'deepseek_v4'])
class DeepSeekV4ReasoningParser(DeepSeekV32ReasoningParser):
    """V4 thinking mode: the same switches and tags as V3.2."""


@ReasoningParserManager.register_module(['deepseek-v41', 'deepseek_v41', 'deepseek-v4.1'])
class DeepSeekV41ReasoningParser(DeepSeekV4ReasoningParser):
    """``<think>`` … ``</think>``, starts in reasoning unless a switch is off or ``reasoning_effort="none"``.

    Starts in reasoning when the request sets neither ``thinking`` nor ``enable_thinking``. vLLM 0.33 renders V4.1 prompts itself (``vllm/tokenizers/deepseek_v41.py``: thinking mode when
    the request sets neither switch, chat mode for ``reasoning_effort="none"``) and its
    ``deepseek_v41`` parser starts accordingly (``vllm/parser/deepseek_v4.py``).
    """

    def starts_in_reasoning_mode(self) -> bool:
        kwargs = self.kwargs
        if kwargs.get('reasoning_effort') == 'none':
            return False
        if 'thinking' not in kwargs and 'enable_thinking' not in kwargs:
            return True
        return bool(kwargs.get('thinking') or kwargs.get('enable_thinking'))
