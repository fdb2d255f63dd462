"""Cohere Command (R7B, Command A: Command 3; Command A Reasoning and later: Command 4).

Syntax: the CohereLabs chat templates (c4ai-command-r7b-12-2024,
c4ai-command-a-03-2025, command-a-reasoning-08-2025 ``chat_template.jinja``)
and Cohere's own renderer and parser, ``cohere_melody`` (``render_cmd3`` /
``render_cmd4``, ``PyFilter.cmd3`` / ``cmd4``), which vLLM's
``cohere_command3`` / ``cohere_command4`` run; SGLang's ``cohere_command4``
(``cohere_command4_detector.py``) reads the same arrays. An assistant turn is
``<|START_THINKING|>plan<|END_THINKING|>`` then either
``<|START_ACTION|>[\n{"tool_call_id": "0", "tool_name": "NAME", "parameters": {...}}, ...\n]<|END_ACTION|>``
or the answer in ``<|START_RESPONSE|>`` ... ``<|END_RESPONSE|>`` (both
versions) or ``<|START_TEXT|>`` ... ``<|END_TEXT|>`` (Command 4). All markers
are special tokens.

- Tool calls: one JSON array per action block, each element's ``tool_name``
  the function and ``parameters`` its arguments (the JSON family with
  ``envelope_array``). The element's ``tool_call_id`` is positional
  (``"0"``, ``"1"`` ... per turn; the templates renumber calls by position
  when they render history), so it is not used as the OpenAI id: ids are
  generated, unique per response, as SGLang does (melody passes the digits on).
- Answer markers are content markers: dropped wherever they occur outside
  tool blocks (Command 3: the ``RESPONSE`` pair only, as melody's cmd3 filter).
- Reasoning, Command 3: the model writes ``<|START_THINKING|>`` itself (its
  tool plan), so output starts as content. Command 4: the Hugging Face
  template prefills ``<|START_THINKING|>`` unless its ``reasoning`` switch is
  False (it then prefills the empty pair); melody's renderer prefills nothing
  and the model opens thinking itself, or answers directly when
  ``reasoning_type`` is ``disabled`` (Cohere's v2 ``thinking: {"type":
  "disabled"}``). Output starts in reasoning unless one of those switches (or
  ``enable_thinking``) turns thinking off. melody and SGLang also end
  reasoning at an answer or action marker; lmparse ends it only at
  ``<|END_THINKING|>`` (an action block inside reasoning is still a call).
- Citations (``<co>`` ... ``</co: 0:[1]>`` in grounded answers, which melody
  turns into citation objects) are not interpreted: they stay answer text.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['COMMAND3_CONTENT_MARKERS', 'COMMAND4_CONTENT_MARKERS', 'CohereCommand3ReasoningParser', 'CohereCommand3ToolParser',
           'CohereCommand4ReasoningParser', 'CohereCommand4ToolParser']

COMMAND3_CONTENT_MARKERS: tuple[str, ...] = ('<|START_RESPONSE|>', '<|END_RESPONSE|>')
COMMAND4_CONTENT_MARKERS: tuple[str, ...] = COMMAND3_CONTENT_MARKERS + ('<|START_TEXT|>', '<|END_TEXT|>')


@ToolParserManager.register_module(['cohere_command3'])
class CohereCommand3ToolParser(JsonToolParser):
    """``<|START_ACTION|>[{"tool_call_id": "0", "tool_name": ..., "parameters": {...}}, ...]<|END_ACTION|>``."""

    tool_open_tag = '<|START_ACTION|>'
    tool_close_tag = '<|END_ACTION|>'
    envelope_array = True
    name_field = 'tool_name'
    argument_field = 'parameters'
    content_markers = COMMAND3_CONTENT_MARKERS
    # The markers are special tokens: keep them in the decoded text.
    request_settings = {'skip_special_tokens': False}


@ToolParserManager.register_module(['cohere_command4'])
class CohereCommand4ToolParser(CohereCommand3ToolParser):
    """The same action blocks; Command 4 also answers in ``<|START_TEXT|>`` ... ``<|END_TEXT|>``."""

    content_markers = COMMAND4_CONTENT_MARKERS


@ReasoningParserManager.register_module(['cohere_command3'])
class CohereCommand3ReasoningParser(ReasoningParser):
    """``<|START_THINKING|>`` ... ``<|END_THINKING|>``, written by the model: output starts as content."""

    reasoning_open_tag = '<|START_THINKING|>'
    reasoning_close_tag = '<|END_THINKING|>'
    open_tag_in_prompt = False
    content_markers = COMMAND3_CONTENT_MARKERS


@ReasoningParserManager.register_module(['cohere_command4'])
class CohereCommand4ReasoningParser(CohereCommand3ReasoningParser):
    """Starts in reasoning unless ``reasoning`` / ``enable_thinking`` is False or ``reasoning_type`` is ``disabled``."""

    open_tag_in_prompt = True
    content_markers = COMMAND4_CONTENT_MARKERS

    def starts_in_reasoning_mode(self) -> bool:
        kwargs = self.kwargs
        if kwargs.get('reasoning') is False or kwargs.get('enable_thinking') is False:
            return False
        thinking = kwargs.get('thinking')
        kind = kwargs.get('reasoning_type', thinking.get('type') if isinstance(thinking, dict) else thinking)
        return kind != 'disabled'
