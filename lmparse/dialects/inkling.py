"""Inkling: typed message blocks, every marker a special token.

Syntax from vLLM 0.33's ``vllm/parser/inkling.py`` (``inkling`` tool and
reasoning parsers) and SGLang 0.5.23's ``sglang/srt/function_call/inkling_detector.py``
/ ``sglang/srt/parser/inkling_tokenizer.py`` (the special-token table)::

    <|content_thinking|>...reasoning...<|end_message|>
    <|message_model|><|content_text|>...answer...<|end_message|>
    <|message_model|>NAME<|content_invoke_tool_json|>{"name": "NAME", "args": {...}}<|end_message|>

The prompt ends with ``<|message_model|>``, so output starts inside a block
header; the text between ``<|message_model|>`` and the block-kind marker (an
optional function name) is metadata (``header_markers`` / ``header_ends``:
a header that ends otherwise, or runs past 256 characters, is text, as vLLM
emits it). Blocks repeat in any order.

Families: the reasoning block on :class:`ReasoningParser` (the model opens it),
tool blocks on :class:`JsonToolParser` (the envelope's ``args`` is the
arguments; vLLM also reads ``arguments`` / ``parameters``). Where the engines
differ: ``<|content_invoke_tool_text|>`` and ``<|content_tool_error|>`` blocks
are visible text as vLLM renders them (SGLang makes the first a call with an
empty name: lmparse never invents a name); a tool name not offered is dropped
(SGLang surfaces it); a thinking block left without its ``<|end_message|>``
stays open across a tool block, as the router does for every dialect (vLLM
ends it at the tool block); the tool parser configured without the reasoning
parser shows a thinking block's text as content without its marker, as
SGLang's detector does (vLLM drops the block).
"""
from __future__ import annotations

from typing import ClassVar

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser

__all__ = ['InklingReasoningParser', 'InklingToolParser']

MESSAGE_MODEL = '<|message_model|>'
CONTENT_TEXT = '<|content_text|>'
CONTENT_THINKING = '<|content_thinking|>'
CONTENT_INVOKE_TOOL_JSON = '<|content_invoke_tool_json|>'
CONTENT_INVOKE_TOOL_TEXT = '<|content_invoke_tool_text|>'
CONTENT_TOOL_ERROR = '<|content_tool_error|>'
CONTENT_MODEL_END_SAMPLING = '<|content_model_end_sampling|>'
END_MESSAGE = '<|end_message|>'

# Framing that is never text: block openers, text-kind markers and block ends.
_MARKERS = (MESSAGE_MODEL, CONTENT_TEXT, CONTENT_INVOKE_TOOL_TEXT, CONTENT_TOOL_ERROR, CONTENT_MODEL_END_SAMPLING,
            END_MESSAGE)
# The block-kind markers that end a header.
_KINDS = (CONTENT_TEXT, CONTENT_THINKING, CONTENT_INVOKE_TOOL_JSON, CONTENT_INVOKE_TOOL_TEXT, CONTENT_TOOL_ERROR)


@ReasoningParserManager.register_module(['inkling'])
class InklingReasoningParser(ReasoningParser):
    """``<|content_thinking|>`` … ``<|end_message|>``, written by the model after the prompt's ``<|message_model|>``."""

    reasoning_open_tag = CONTENT_THINKING
    reasoning_close_tag = END_MESSAGE
    open_tag_in_prompt = False
    # The block framing: both parsers declare it, as either may be configured alone.
    content_markers: ClassVar[tuple[str, ...]] = _MARKERS
    header_markers: ClassVar[tuple[str, ...]] = (MESSAGE_MODEL,)
    header_ends: ClassVar[tuple[str, ...]] = _KINDS
    header_at_start: ClassVar[bool] = True


@ToolParserManager.register_module(['inkling'])
class InklingToolParser(JsonToolParser):
    """``<|content_invoke_tool_json|>{"name": ..., "args": {...}}<|end_message|>``."""

    tool_open_tag = CONTENT_INVOKE_TOOL_JSON
    tool_close_tag = END_MESSAGE
    argument_field = 'args'
    argument_field_aliases = ('arguments', 'parameters')
    request_settings = {'skip_special_tokens': False}
    # Alone (no reasoning parser) the thinking block's marker is framing too: its text stays visible as
    # SGLang's detector shows it (vLLM drops the block); with the reasoning parser it is that parser's tag.
    content_markers = _MARKERS + (CONTENT_THINKING,)
    header_markers = (MESSAGE_MODEL,)
    header_ends = _KINDS
    header_at_start = True
