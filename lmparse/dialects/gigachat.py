"""Sber GigaChat 3 / 3.1 (JSON calls) and GigaChat 3.5 (GCML markup).

Syntax:

- GigaChat 3 (ai-sage/GigaChat3-10B-A1.8B chat template): the answer, then
  ``<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": ..., "arguments": {...}}``;
  GigaChat 3.1 writes ``<|function_call|>{...}`` instead. One call per
  response. vLLM 0.33's ``vllm/tool_parsers/gigachat3_tool_parser.py`` and
  SGLang 0.5.23's ``function_call/gigachat3_detector.py`` read both openers
  and end the content at ``<|message_sep|>`` (``skip_special_tokens=False``
  when tools are offered). Here ``function call<|role_sep|>`` opens the
  block, ``<|function_call|>`` is the second opener (a call only when ``{``
  follows), and ``<|message_sep|>`` with the ``\\n\\n`` the template writes
  after it is a content marker: dropped, as both engines drop it (they end
  the content at ``<|message_sep|>``).
- GigaChat 3.5 (SGLang 0.5.23's ``function_call/gigachat35_detector.py``,
  ``gigachat35``): DeepSeek's DSML markup with the ``｜GCML｜`` token:
  ``<｜GCML｜tool_calls>`` of ``<｜GCML｜invoke name="NAME">`` /
  ``<｜GCML｜parameter name="KEY" string="true|false">VALUE</｜GCML｜parameter>``
  (the DSML family). Its reasoning (SGLang ``gigachat35``, the DeepSeek-R1
  detector) is ``<think>`` … ``</think>`` starting in reasoning: the
  ``default`` reasoning parser.
"""
from __future__ import annotations

from typing import Any, ClassVar

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.dsml import DsmlToolParser
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['GigaChat35ToolParser', 'GigaChat3ToolParser']


@ToolParserManager.register_module('gigachat3')
class GigaChat3ToolParser(JsonToolParser):
    """``function call<|role_sep|>\\n{"name": ..., "arguments": {...}}`` (or ``<|function_call|>{...}``)."""

    tool_open_tag = 'function call<|role_sep|>'
    tool_close_tag = None
    bare_call_open = '<|function_call|>'
    # The template writes '<|message_sep|>\n\n' after the answer: the blank line is the separator's too.
    content_markers: ClassVar[tuple[str, ...]] = ('<|message_sep|>\n\n', '<|message_sep|>')
    # <|role_sep|>, <|function_call|> and <|message_sep|> are special tokens.
    request_settings_with_tools: ClassVar[dict[str, Any]] = {'skip_special_tokens': False}


@ToolParserManager.register_module('gigachat35')
class GigaChat35ToolParser(DsmlToolParser):
    """``<｜GCML｜tool_calls>`` blocks of ``<｜GCML｜invoke>`` / ``<｜GCML｜parameter string=..>``."""

    dsml_token = '\uff5cGCML\uff5c'
    tool_calls_block_name = 'tool_calls'
    block_lead = ''


ReasoningParserManager.register_module('gigachat35', module=ReasoningParser)
