"""Preferred Networks PLaMo 3: special-marker tool requests and think blocks.

Syntax: vLLM 0.33's ``vllm/parser/plamo3.py`` (``plamo3`` tool and reasoning
parsers; SGLang 0.5.23 has none) and its tests' complete outputs::

    <|plamo:begin_think:plamo|>REASONING<|plamo:end_think:plamo|>
    <|plamo:begin_tool_requests:plamo|>
    <|plamo:begin_tool_request:plamo|>
    <|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>
    <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{JSON}<|plamo:end_tool_arguments:plamo|>
    <|plamo:end_tool_request:plamo|>
    <|plamo:end_tool_requests:plamo|>

(written without the line breaks). The special-token section family reads it
with the name as the call header: ``<|plamo:end_tool_name:plamo|>`` and the
argument preamble after it are one argument marker, as vLLM's grammar takes
them (one terminal, nothing between); the request markers between calls are
skipped. The markers are not single tokens (the tokenizer splits them into
``<|plamo:begin_`` / ``<|plamo:end_`` + word + ``:plamo|>``, vLLM's
``PLAMO_MARKER_TOKENS``), so every proper prefix is held, and the pieces are
special tokens: with tools offered the dialect asks for
``skip_special_tokens=False``. A piece cannot be written as text, so a
marker prefix that the end of the output cuts after its first piece
(``visible<|plamo:end_``, ``<|plamo:end_think``) is a cut marker and dropped
(``split_marker_pieces``; vLLM strips it too), while a shorter one
(``<|plamo:``) is text. A second ``<|plamo:end_think:plamo|>`` in the answer
is dropped like the end-of-turn marker (vLLM drops it too).
``<|plamo:tag|>`` (end of turn; normally a stop token) is dropped from the
text as a content marker (vLLM drops it too; after it vLLM also leaves
reasoning, lmparse does not).

Reasoning starts inside the think block unless ``enable_thinking`` is False
(the template opens it; vLLM ``plamo3``): lmparse's default behaviour.
"""
from __future__ import annotations

from typing import Any, ClassVar

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.sections import SectionToolParser

__all__ = ['Plamo3ReasoningParser', 'Plamo3ToolParser']

PLAMO_EOT = '<|plamo:tag|>'
# The special tokens every marker starts with (vLLM's PLAMO_MARKER_TOKENS): a marker prefix at the end of
# the output that holds one is a marker the output cut, not text (see split_marker_pieces).
PLAMO_PIECES = ('<|plamo:begin_', '<|plamo:end_')


@ToolParserManager.register_module(['plamo3'])
class Plamo3ToolParser(SectionToolParser):
    """``<|plamo:begin_tool_requests:plamo|>`` sections; each call a name header and one JSON value."""

    section_begin = '<|plamo:begin_tool_requests:plamo|>'
    section_end = '<|plamo:end_tool_requests:plamo|>'
    call_begin = '<|plamo:begin_tool_name:plamo|>'
    argument_begin = '<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>'
    call_end = '<|plamo:end_tool_arguments:plamo|>'
    header_layout = 'name'
    content_markers = (PLAMO_EOT,)
    split_marker_pieces = PLAMO_PIECES
    # The marker pieces (<|plamo:begin_, :plamo|>, <|plamo:msg|>) are special tokens: keep them.
    request_settings_with_tools: ClassVar[dict[str, Any]] = {'skip_special_tokens': False}


@ReasoningParserManager.register_module(['plamo3'])
class Plamo3ReasoningParser(ReasoningParser):
    """``<|plamo:begin_think:plamo|>`` … ``<|plamo:end_think:plamo|>``; starts inside unless thinking is off."""

    reasoning_open_tag = '<|plamo:begin_think:plamo|>'
    reasoning_close_tag = '<|plamo:end_think:plamo|>'
    # A second end-think marker in the answer is a marker, never the answer's text (vLLM drops it too).
    content_markers = (PLAMO_EOT, '<|plamo:end_think:plamo|>')
    split_marker_pieces = PLAMO_PIECES
