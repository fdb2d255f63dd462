"""Kimi K2 tool-call sections and Kimi K3 XTML tool channels.

Syntax: moonshotai/Kimi-K2-Instruct's chat template and ``docs/tool_call_guidance.md``
(``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|>``;
every marker is a special token) and LMDeploy 0.18's ``kimi_k2_tool_parser``.
The header ``functions.NAME:IDX`` is the model's own call id.

Kimi K3 (XTML): vLLM 0.33's ``vllm/tool_parsers/kimi_k3_tool_parser.py`` and
``vllm/reasoning/kimi_k3_reasoning_parser.py``, SGLang 0.5.23's
``function_call/kimik3_format.py`` / ``kimik3_detector.py``::

    <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
    <|open|>argument key="K" type="string"<|sep|>VALUE<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|>

on the attribute-named family (``DsmlToolParser``) with XTML delimiters;
reasoning is the ``<|open|>think<|sep|>`` channel. The answer is the ``response``
channel, ``<|open|>response<|sep|>...<|close|>response<|sep|>`` (its opener often
prefilled by the serving layer), and a message ends with ``<|close|>message<|sep|>``
(the same sources' ``RESPONSE_OPEN`` / ``RESPONSE_CLOSE`` / ``MESSAGE_CLOSE``): both
parsers declare these as ``content_markers``, which the router drops.

Kimi-VL-Thinking / Kimi thinking models (moonshotai/Kimi-VL-A3B-Thinking): the
model opens its reasoning itself with ``◁think▷`` and closes it with
``◁/think▷``, the answer follows (SGLang 0.5.23's ``kimi`` reasoning,
``KimiDetector``: not forced into reasoning). vLLM 0.33 has no such parser.
"""
from __future__ import annotations

from typing import Any

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.dsml import DsmlToolParser
from lmparse.tools.sections import SectionToolParser

__all__ = ['KimiK2ToolParser', 'KimiK3ReasoningParser', 'KimiK3ToolParser', 'KimiThinkReasoningParser']

# XTML channel syntax around the answer: never part of it.
K3_CONTENT_MARKERS = ('<|open|>response<|sep|>', '<|close|>response<|sep|>', '<|close|>message<|sep|>')


@ToolParserManager.register_module(['kimi_k2', 'kimi-k2'])
class KimiK2ToolParser(SectionToolParser):
    """``<|tool_calls_section_begin|>`` sections of ``<|tool_call_begin|>`` calls."""

    section_begin = '<|tool_calls_section_begin|>'
    section_end = '<|tool_calls_section_end|>'
    call_begin = '<|tool_call_begin|>'
    argument_begin = '<|tool_call_argument_begin|>'
    call_end = '<|tool_call_end|>'
    # The markers are special tokens: keep them in the decoded text.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}
    structural_tag_model = 'kimi'


@ToolParserManager.register_module(['kimi_k3', 'kimi-k3'])
class KimiK3ToolParser(DsmlToolParser):
    """XTML ``tools`` channels: ``<|open|>call tool=".."<|sep|>`` calls of ``<|open|>argument key=".."<|sep|>`` values.

    ``type="string"`` values (and arguments without ``type``) are raw text
    streamed as written; other types are JSON text, held to their end and
    written as they are (their raw text as a string when it is not JSON).
    ``<|close|>argument<|sep|>`` written inside a value is text unless the
    next tag (or the end of the output) follows it: the family's confirmed
    close tag. Attribute values decode ``&quot;`` and ``&amp;``. ``<|open|>``,
    ``<|close|>`` and ``<|sep|>`` are special tokens, the element names
    ordinary words; every proper prefix of every tag is held back.
    """

    dsml_token = ''
    tag_open = '<|open|>'
    end_tag_open = '<|close|>'
    tag_close = '<|sep|>'
    tool_calls_block_name = 'tools'
    invoke_element = 'call'
    parameter_element = 'argument'
    block_lead = ''
    call_name_attribute = 'tool'
    parameter_key_attribute = 'key'
    string_attribute = 'type'
    string_attribute_values = ('string',)
    string_by_default = True
    attribute_entities = (('&quot;', '"'), ('&amp;', '&'))
    # The markers are special tokens: keep them, unspaced, in the decoded text.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}
    structural_tag_model = 'kimi_k3'
    content_markers = K3_CONTENT_MARKERS


@ReasoningParserManager.register_module(['kimi_k3', 'kimi-k3'])
class KimiK3ReasoningParser(ReasoningParser):
    """The XTML ``think`` channel; output starts in it unless ``thinking`` (or ``enable_thinking``) is False.

    In thinking mode the serving layer prefills ``<|open|>think<|sep|>``;
    a channel the model opens itself is dropped.
    """

    reasoning_open_tag = '<|open|>think<|sep|>'
    reasoning_close_tag = '<|close|>think<|sep|>'
    # Only an answer carries the response / message channel markers: a recorded output that holds one
    # before any think tag was written with thinking off (the replay tools start it as content).
    answer_markers = K3_CONTENT_MARKERS
    content_markers = K3_CONTENT_MARKERS

    def starts_in_reasoning_mode(self) -> bool:
        thinking = self.kwargs.get('thinking')
        if thinking is None:
            thinking = self.kwargs.get('enable_thinking', True)
        return bool(thinking)

    @classmethod
    def validate_tokenizer(cls, tokenizer: Any) -> None:
        """The channel markers are three tokens each: check the special ones."""
        vocab = tokenizer.get_vocab()
        missing = [tag for tag in ('<|open|>', '<|close|>', '<|sep|>') if tag not in vocab]
        if missing:
            raise RuntimeError(f'{cls.__name__} reasoning parser: XTML token(s) {missing!r} '
                               f'not found in the tokenizer vocabulary')


# vLLM's and SGLang's ``kimi_k2`` reasoning (Kimi K2 Thinking): ``<think>`` … ``</think>``: 'default'.
ReasoningParserManager.register_module('kimi_k2', module=ReasoningParser)


@ReasoningParserManager.register_module(['kimi', 'kimi-vl'])
class KimiThinkReasoningParser(ReasoningParser):
    """``◁think▷`` ... ``◁/think▷``, opened by the model; output starts as content."""

    reasoning_open_tag = '◁think▷'
    reasoning_close_tag = '◁/think▷'
    open_tag_in_prompt = False
