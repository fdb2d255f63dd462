"""Cohere Command (R7B, Command A, Command A Reasoning and later): ``<|START_ACTION|>`` JSON arrays.

Syntax: the CohereLabs chat templates (c4ai-command-r7b-12-2024,
c4ai-command-a-03-2025, command-a-reasoning-08-2025 ``chat_template.jinja``):
an assistant turn is ``<|START_THINKING|>plan<|END_THINKING|>`` then either
``<|START_ACTION|>[\\n{"tool_call_id": "0", "tool_name": "NAME", "parameters": {...}}, ...\\n]<|END_ACTION|>``
or the answer in ``<|START_RESPONSE|>`` ... ``<|END_RESPONSE|>`` (Command 3:
R7B, Command A) or ``<|START_TEXT|>`` ... ``<|END_TEXT|>`` (Command 4:
Command A Reasoning's successors, Cohere2 MoE / Vision; SGLang's
``cohere_command4`` detector). All markers are special tokens. vLLM's
``cohere_command3`` / ``cohere_command4`` hand the text to the
``cohere_melody`` filter with the ``cmd3`` / ``cmd4`` preset; SGLang reads
the same array in ``cohere_command4_detector.py``.

- Tool calls: one JSON array per action block, each element's ``tool_name``
  the function and ``parameters`` its arguments (the JSON family with
  ``envelope_array``). The element's ``tool_call_id`` (``"0"``, ``"1"`` ...
  per turn) is not used as the OpenAI call id: ids are generated, unique per
  response, as SGLang does.
- The answer markers are content markers: dropped wherever they occur
  outside tool blocks, their text is content.
- Reasoning, Command 3: the model writes ``<|START_THINKING|>`` itself (its
  tool plan), so output starts as content. Command 4: the template prefills
  ``<|START_THINKING|>`` unless the ``reasoning`` template switch is False
  (it then prefills ``<|START_THINKING|><|END_THINKING|>``), so output starts
  inside reasoning unless ``reasoning`` (or ``enable_thinking``) is False.
- Citations (``<co>`` ... ``</co: 0:[1]>`` in grounded answers, which melody
  turns into citation objects) are not interpreted: they stay answer text.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['COHERE_CONTENT_MARKERS', 'CohereCommand3ReasoningParser', 'CohereCommand3ToolParser',
           'CohereCommand4ReasoningParser', 'CohereCommand4ToolParser']

COHERE_CONTENT_MARKERS = ('<|START_RESPONSE|>', '<|END_RESPONSE|>', '<|START_TEXT|>', '<|END_TEXT|>')


@ToolParserManager.register_module(['cohere_command3'])
class CohereCommand3ToolParser(JsonToolParser):
    """``<|START_ACTION|>[{"tool_call_id": "0", "tool_name": ..., "parameters": {...}}, ...]<|END_ACTION|>``."""

    tool_open_tag = '<|START_ACTION|>'
    tool_close_tag = '<|END_ACTION|>'
    envelope_array = True
    name_field = 'tool_name'
    argument_field = 'parameters'
    content_markers = COHERE_CONTENT_MARKERS
    # The markers are special tokens: keep them in the decoded text.
    request_settings = {'skip_special_tokens': False}


@ToolParserManager.register_module(['cohere_command4'])
class CohereCommand4ToolParser(CohereCommand3ToolParser):
    """The same action blocks; Command 4 answers in ``<|START_TEXT|>`` (a content marker of both)."""


@ReasoningParserManager.register_module(['cohere_command3'])
class CohereCommand3ReasoningParser(ReasoningParser):
    """``<|START_THINKING|>`` ... ``<|END_THINKING|>``, written by the model: output starts as content."""

    reasoning_open_tag = '<|START_THINKING|>'
    reasoning_close_tag = '<|END_THINKING|>'
    open_tag_in_prompt = False
    content_markers = COHERE_CONTENT_MARKERS


@ReasoningParserManager.register_module(['cohere_command4'])
class CohereCommand4ReasoningParser(CohereCommand3ReasoningParser):
    """Prefilled ``<|START_THINKING|>``: starts in reasoning unless ``reasoning`` / ``enable_thinking`` is False."""

    open_tag_in_prompt = True

    def starts_in_reasoning_mode(self) -> bool:
        reasoning = self.kwargs.get('reasoning')
        if reasoning is None:
            reasoning = self.kwargs.get('enable_thinking', True)
        return reasoning is not False
