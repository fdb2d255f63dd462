"""Gemma 4 and FunctionGemma: ``call:NAME{...}`` brace calls, and Gemma 4's ``<|channel>`` thinking channel.

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

FunctionGemma (google/functiongemma-270m-it, Gemma 3 based): the same call
grammar with its own special tokens, per Google's "FunctionGemma formatting
and best practices" guide and the model's chat template:
``<start_function_call>call:NAME{key:<escape>text<escape>,n:3}<end_function_call>``,
every string value between two ``<escape>`` tokens, several calls as
consecutive blocks (parallel calls), ``<start_function_response>`` a stop
sequence. vLLM 0.33's ``functiongemma`` parser reads only ``<escape>``-delimited
values and ``json.loads`` each of them (so ``<escape>3<escape>`` becomes
``3``); lmparse follows the template: types come from the syntax, a delimited
value is a string and a bare ``3`` / ``true`` is a number / boolean, as for
Gemma 4. FunctionGemma has no thinking mode.
"""
from __future__ import annotations

from typing import Any, ClassVar

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.brace_call import BraceCallToolParser

__all__ = ['FunctionGemmaToolParser', 'Gemma4ReasoningParser', 'Gemma4ToolParser']


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


@ToolParserManager.register_module('functiongemma')
class FunctionGemmaToolParser(BraceCallToolParser):
    """``<start_function_call>call:NAME{key:<escape>text<escape>,n:3}<end_function_call>``, converted to JSON."""

    tool_open_tag = '<start_function_call>'
    tool_close_tag = '<end_function_call>'
    string_delimiter = '<escape>'
    call_prefixes = ('call:',)
    # The markers are special tokens: keep them in the decoded text when calls are parsed, as vLLM's
    # adjust_request does; with no tools or tool_choice="none" they are skipped, not leaked as text.
    request_settings = {'spaces_between_special_tokens': False}
    request_settings_with_tools: ClassVar[dict[str, Any]] = {'skip_special_tokens': False}


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
