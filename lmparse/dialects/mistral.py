"""Mistral: ``[TOOL_CALLS]`` tool calls (every tokenizer version) and Magistral's ``[THINK]`` reasoning.

Syntax: mistral-common's instruct tokenizers (``mistral_common/tokens/tokenizers/instruct.py``):

- before v11 (``InstructTokenizerV3`` / ``V7``: Mistral 7B v0.3, Mixtral 8x22B,
  Nemo, Large 2): ``[TOOL_CALLS]`` then one JSON array of envelopes,
  ``[{"name": "f", "arguments": {...}, "id": "abc123XYZ"}, ...]`` (the
  sentencepiece tokenizers decode it as ``[TOOL_CALLS] [{...}]``);
- v11 (``InstructTokenizerV11``: Mistral Small 3.1/3.2, Magistral 2506):
  ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}`` per call, ``[CALL_ID]ID`` only
  when the call has an id; the id is used as the call's id;
- v13+ (``InstructTokenizerV13`` / ``V15``: Magistral 2507+, Devstral 2,
  Mistral Small 4): ``[TOOL_CALLS]NAME[ARGS]{...}`` per call, and reasoning as
  ``[THINK]...[/THINK]`` special tokens (``encode_think``).

Every marker is a special token (``SpecialTokens``), so the engine must keep
them in the decoded text. The layout is told from the text after
``[TOOL_CALLS]`` (``[``/``{``: JSON envelopes; a name: the v11+ header), as
vLLM's ``mistral`` parser (``vllm/parser/mistral.py``) and SGLang's
``MistralDetector`` accept both. Calls get 9-character alphanumeric ids
(mistral-common's validator rejects any other id in the next request) unless
the model wrote ``[CALL_ID]``.

Reasoning: Magistral writes ``[THINK]`` itself (output starts as content,
as in vLLM's and SGLang's ``mistral`` reasoning parsers). Mistral models never
call tools inside reasoning: mistral-common encodes an assistant message as
its content chunks (a ``ThinkChunk`` first, ``[THINK]...[/THINK]``) and then
its tool calls (``InstructTokenizerV13.encode_assistant_message``), and the
OpenAI conversion closes every think chunk; so both parsers declare
``calls_in_reasoning = False`` and a ``[TOOL_CALLS]`` written inside
``[THINK]`` stays reasoning text (as vLLM's and SGLang's reasoning-first
routing reads it). Magistral 2506 (v11 tokenizer, system prompt "Your
thinking process must follow the template below: <think> ... </think>") writes
``<think>`` / ``</think>`` as plain text, and Magistral 2509 still follows that
legacy format when prompted for it: the reasoning parser declares them as
``text_reasoning_tags``, so an output that starts with ``<think>`` (after
whitespace) has its reasoning up to ``</think>``; anywhere else ``<think>`` is
text. (``deepseek-v3``, ``<think>`` only, also reads Magistral 2506.)
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_header import JsonHeaderToolParser

__all__ = ['MistralReasoningParser', 'MistralToolParser']


@ToolParserManager.register_module('mistral')
class MistralToolParser(JsonHeaderToolParser):
    """``[TOOL_CALLS][{"name": ..., "arguments": ...}, ...]`` and ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}``."""

    tool_open_tag = '[TOOL_CALLS]'
    tool_close_tag = None
    argument_marker = '[ARGS]'
    call_id_marker = '[CALL_ID]'
    # ``NAME{...}`` without [ARGS] (vLLM reads it too)
    brace_starts_arguments = True
    envelope_array = True
    random_call_id_length = 9
    # [TOOL_CALLS], [ARGS], [CALL_ID], [THINK] are special tokens: keep them in the
    # decoded text (with or without tools: the reasoning tags need it too).
    request_settings = {'skip_special_tokens': False}
    calls_in_reasoning = False


@ReasoningParserManager.register_module('mistral')
class MistralReasoningParser(ReasoningParser):
    """``[THINK]`` ... ``[/THINK]`` special tokens; output starts as content (the model opens reasoning)."""

    reasoning_open_tag = '[THINK]'
    reasoning_close_tag = '[/THINK]'
    open_tag_in_prompt = False
    calls_in_reasoning = False
    text_reasoning_tags = ('<think>', '</think>')
