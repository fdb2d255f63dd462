"""rednote dots.llm1: ``<dots_function_call>`` blocks of ``<invoke name=..>`` / ``<parameter name=..>``.

Syntax: vLLM 0.33's ``vllm/tool_parsers/dots_tool_parser.py`` and SGLang
0.5.23's ``function_call/dots_detector.py`` (``dots``)::

    <dots_function_call>
    <invoke name="search">
    <parameter name="query">weather in Shanghai</parameter>
    </invoke>
    </dots_function_call>

one or more invokes per block, several blocks per response; values typed by
the tool's JSON schema (a string streams as written, other types are
converted at their close tag): the DSML family without a DSML token, as
MiniMax M2. Both engines also accept a JSON ``{"name", "arguments"}`` object
inside the block as a fallback, and an unquoted ``name=`` attribute; neither
is the model's format and lmparse reads neither (the block then gives no
call, its text is content). Text inside a block that is not markup
(``<dots_function_call>garbage</dots_function_call>``, text between invokes)
is content, as vLLM's parser returns it (``block_text_is_content``). A block
close tag outside any block is text, as every dialect's stray close tag is in
lmparse (vLLM's dots parser strips it). Reasoning (SGLang ``dots`` = its Qwen3
detector): ``<think>`` …
``</think>``, the ``default`` reasoning parser.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.dsml import DsmlToolParser

__all__ = ['DotsToolParser']


@ToolParserManager.register_module('dots')
class DotsToolParser(DsmlToolParser):
    """``<dots_function_call>`` blocks of ``<invoke name="NAME">`` / ``<parameter name="KEY">``, typed by schema."""

    dsml_token = ''
    tool_calls_block_name = 'dots_function_call'
    block_lead = ''
    string_attribute = None
    schema_typed_values = True
    block_text_is_content = True


ReasoningParserManager.register_module('dots', module=ReasoningParser)
