"""IBM Granite: 20B-FunctionCalling, 3.x (JSON-array tool calls, "Here is my thought process:" reasoning), 4.x.

Syntax:

- Granite-20B-FunctionCalling (vLLM's ``examples/tool_chat_template_granite_20b_fc.jinja``:
  an assistant turn writes ``<function_call> {"name": ..., "arguments": {...}}`` per
  call, one after the other, no close tag; vLLM 0.33's
  ``granite_20b_fc_tool_parser.py``, ``granite-20b-fc``). The template asks for
  ``{"name": "no_function", ...}`` when no tool fits: not an offered tool, so
  no call (dropped like any unknown name).
- Granite 3.0-3.3 chat templates (ibm-granite/granite-3.x-*-instruct
  ``tokenizer_config.json``: "respond only with <|tool_call|> followed by a
  JSON list of tools used"): ``<|tool_call|>[{"name": "f", "arguments": {...}}, ...]``,
  ``<|tool_call|>`` a special token, no close tag; Granite 3.1 is also seen
  writing ``<tool_call>`` as text (vLLM's ``vllm/parser/granite.py`` accepts
  both: here ``<tool_call>`` is the dialect's second opener). Text after the
  array's ``]`` is content.
- Granite 3.2/3.3 reasoning (``thinking=True``): ``Here is my thought process:``
  ... ``Here is my response:`` (vLLM's ``granite_reasoning_parser.py``); output
  starts as content. vLLM also accepts ``Here's``: lmparse reads only the
  template's ``Here is`` spelling.
- Granite 4.0 (ibm-granite/granite-4.0-* chat template: "return a json object
  with function name and arguments within <tool_call></tool_call> XML tags"):
  the Hermes format, so ``granite4`` is an alias of ``hermes``
  (``lmparse.dialects.hermes``), as vLLM's ``granite4_tool_parser.py`` reads
  (JSON between ``<tool_call>`` / ``</tool_call>``, ``skip_special_tokens=False``
  when tools are offered, as ``hermes`` asks).
- Granite 4.2 thinking (vLLM's ``vllm/parser/granite_thinking.py`` behind
  ``vllm/reasoning/granite_thinking_engine_reasoning_parser.py``, registered as
  ``granite_thinking_parser`` in vLLM's and SGLang's reasoning names):
  ``<think>`` ... ``</think>``, starting in reasoning unless ``enable_thinking``
  is False: the ``default`` reasoning protocol. Its tool calls are the
  Nemotron V3 / Qwen3-Coder XML format (``qwen3coder``). The template writes
  ``\n</think>\n``, so the content's first character is the template's
  newline: the newlines right after ``</think>`` are dropped from the start of
  the content, as vLLM's parser does (``content_lead_strip``). As in vLLM's
  Nemotron V3 parser it inherits, a complete response with nothing after the
  reasoning answers with its reasoning as content when the request sets
  ``force_nonempty_content=True`` or ``enable_thinking=False``.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['Granite20bFcToolParser', 'GraniteReasoningParser', 'GraniteThinkingReasoningParser', 'GraniteToolParser']


@ToolParserManager.register_module('granite')
class GraniteToolParser(JsonToolParser):
    """``<|tool_call|>[{"name": ..., "arguments": {...}}, ...]`` (or ``<tool_call>[...]``), no close tag."""

    tool_open_tag = '<|tool_call|>'
    tool_close_tag = None
    envelope_array = True
    bare_call_open = '<tool_call>'
    # <|tool_call|> is a special token: keep it in the decoded text.
    request_settings_with_tools = {'skip_special_tokens': False}


@ToolParserManager.register_module('granite-20b-fc')
class Granite20bFcToolParser(JsonToolParser):
    """``<function_call> {"name": ..., "arguments": {...}}`` per call, no close tag."""

    tool_open_tag = '<function_call>'
    tool_close_tag = None


@ReasoningParserManager.register_module('granite')
class GraniteReasoningParser(ReasoningParser):
    """``Here is my thought process:`` ... ``Here is my response:``; output starts as content."""

    reasoning_open_tag = 'Here is my thought process:'
    reasoning_close_tag = 'Here is my response:'
    open_tag_in_prompt = False


@ReasoningParserManager.register_module('granite_thinking_parser')
class GraniteThinkingReasoningParser(ReasoningParser):
    """``<think>`` … ``</think>``, starts in reasoning; the template's newlines after ``</think>`` are dropped."""

    content_lead_strip = '\n'
    reasoning_as_missing_content = True
