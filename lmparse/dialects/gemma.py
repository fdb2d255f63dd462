"""Gemma 4: ``<|tool_call>call:NAME{...}<tool_call|>`` tool calls and the ``<|channel>`` thinking channel.

Syntax: the chat template of google/gemma-4 (``chat_template.jinja``): an
assistant call is rendered as ``<|tool_call>call:NAME{KEY:VALUE,...}<tool_call|>``
with keys bare and sorted, values by its ``format_argument`` macro (strings
between ``<|"|>`` tokens, ``true``/``false``, numbers as written, ``{...}`` and
``[...]`` nested); several calls are consecutive blocks, and generation stops
at ``<|tool_response>``. Thinking is switched on by ``enable_thinking``, which
puts ``<|think|>`` in the system turn; the model then opens the channel itself:
``<|channel>thought\\n...<channel|>`` (the template writes past thoughts the same
way, and with thinking off may append an empty ``<|channel>thought\\n<channel|>``
to the prompt). Every marker is a special token. Cross-checked with vLLM's
``parser/gemma4.py`` (also the bare ``<|tool_call>:NAME{...}`` opener some
checkpoints write) and SGLang's ``Gemma4Detector`` (tool and reasoning).
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.brace_call import BraceCallToolParser

__all__ = ['Gemma4ReasoningParser', 'Gemma4ToolParser']


@ToolParserManager.register_module('gemma4')
class Gemma4ToolParser(BraceCallToolParser):
    """``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>``, arguments converted to JSON."""

    tool_open_tag = '<|tool_call>'
    tool_close_tag = '<tool_call|>'
    string_delimiter = '<|"|>'
    # ``call:`` as the template writes it; some checkpoints write only ``:``.
    call_prefixes = ('call:', ':')
    # The markers are special tokens: keep them in the decoded text.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}


@ReasoningParserManager.register_module('gemma4')
class Gemma4ReasoningParser(ReasoningParser):
    """``<|channel>thought\\n`` ... ``<channel|>``; the model opens the channel itself.

    The ``thought\\n`` channel label is part of the open tag, so it never
    reaches ``reasoning_content``; ``<|channel>`` is the token counted.
    """

    reasoning_open_tag = '<|channel>thought\n'
    reasoning_close_tag = '<channel|>'
    reasoning_open_token = '<|channel>'
    open_tag_in_prompt = False
