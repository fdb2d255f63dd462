"""MiniMax M2 (M2.1, M2.5) and M3 tool calls and the MiniMax reasoning modes.

Syntax: MiniMax-AI's tool-calling guide (``docs/tool_calling_guide.md`` of
MiniMax-AI/MiniMax-M2.5: "the same toolcall syntax as MiniMax-M2") and the
chat template, which renders a call as::

    <minimax:tool_call>
    <invoke name="NAME">
    <parameter name="KEY">VALUE</parameter>
    </invoke>
    </minimax:tool_call>

with string values written as they are and other values as JSON; also vLLM
0.33's ``vllm/parser/minimax_m2.py`` and SGLang 0.5.23's
``function_call/minimax_m2.py`` (which types values by the tool's JSON schema,
as lmparse does with the XML family's conversion). ``<minimax:tool_call>`` is
one added token; the other tags are ordinary text.

MiniMax M3 (vLLM 0.33's ``vllm/parser/minimax_m3.py``, SGLang 0.5.23's
``function_call/minimax_m3.py``) prefixes every tag with ``]<]minimax[>[``
(a non-special added token) and writes each argument as an element named
after it, nesting child elements for objects and ``<item>`` lists::

    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="NAME">
    ]<]minimax[>[<KEY>VALUE]<]minimax[>[</KEY>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

That is not attribute-named, so M3 sits on its own family (``ns_elements``).

Reasoning: the M2 template opens ``<think>`` in the prompt, so output starts
in reasoning (vLLM ``minimax_m2``, SGLang ``minimax`` = Qwen3 with
``force_reasoning``); a ``<think>`` the model writes itself is dropped, a
tool block inside reasoning ends it. MiniMax M3 marks reasoning with
``<mm:think>`` / ``</mm:think>`` and starts inside it only when
``thinking_mode="enabled"`` (vLLM ``vllm/reasoning/minimax_m3_reasoning_parser.py``,
SGLang ``MiniMaxM3Detector``).
"""
from __future__ import annotations

from typing import Any, ClassVar

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.dsml import DsmlToolParser
from lmparse.tools.ns_elements import NsElementToolParser

__all__ = ['MiniMaxM2AppendThinkReasoningParser', 'MiniMaxM2ReasoningParser', 'MiniMaxM2ToolParser',
           'MiniMaxM3ReasoningParser', 'MiniMaxM3ToolParser']


@ToolParserManager.register_module(['minimax-m2', 'minimax_m2'])
class MiniMaxM2ToolParser(DsmlToolParser):
    """``<minimax:tool_call>`` blocks of ``<invoke name=..>`` / ``<parameter name=..>`` tags, values typed by schema.

    A value whose schema type is only ``string`` (or that has no schema) is
    streamed as written; any other typed value is held to its
    ``</parameter>`` and converted once (a value that is not its type stays
    the string it was).
    """

    dsml_token = ''
    tool_calls_block_name = 'minimax:tool_call'
    block_lead = ''
    string_attribute = None
    schema_typed_values = True
    # <minimax:tool_call> is an added token: keep it in the decoded text.
    request_settings: ClassVar[dict[str, Any]] = {'skip_special_tokens': False}
    structural_tag_model = 'minimax'


@ToolParserManager.register_module(['minimax-m3', 'minimax_m3'])
class MiniMaxM3ToolParser(NsElementToolParser):
    """``]<]minimax[>[<tool_call>`` blocks; each argument an element named after it.

    A parameter whose schema type is only ``string`` streams as written; any
    other (typed, untyped or nested) is held to its close tag and converted
    by the schema: child elements make an object, or an array when the schema
    says so; an empty element of a container type is ``[]`` / ``{}``; a body
    that does not parse stays the string it was.
    """

    namespace = ']<]minimax[>['


@ReasoningParserManager.register_module(['minimax-m2', 'minimax_m2', 'minimax'])
class MiniMaxM2ReasoningParser(ReasoningParser):
    """``<think>`` … ``</think>``; output starts in reasoning (the template opened ``<think>``)."""


@ReasoningParserManager.register_module(['minimax_m2_append_think', 'minimax-append-think'])
class MiniMaxM2AppendThinkReasoningParser(MiniMaxM2ReasoningParser):
    """MiniMax M2 with reasoning kept inline: content is ``<think>…</think>answer``.

    vLLM's ``minimax_m2_append_think`` (``MiniMaxM2AppendThinkReasoningParser``) and
    SGLang's ``minimax-append-think`` (``MiniMaxAppendThinkDetector``) return the whole
    output as content with ``<think>`` put back in front, for clients that parse the
    tags themselves (MiniMax asks to keep the reasoning in the history). Here it is the
    router's ``inline_reasoning`` output option: the output starts in reasoning, the
    open tag the template put in the prompt is written before it, and tool calls are
    still extracted.
    """

    inline_reasoning = True


@ReasoningParserManager.register_module(['minimax-m3', 'minimax_m3'])
class MiniMaxM3ReasoningParser(ReasoningParser):
    """``<mm:think>`` … ``</mm:think>``; starts in reasoning when ``thinking_mode="enabled"``."""

    reasoning_open_tag = '<mm:think>'
    reasoning_close_tag = '</mm:think>'
    # The template prefills <mm:think> only for thinking_mode="enabled"; otherwise
    # an adaptive reply that thinks opens the tag itself.
    thinking_values = (('thinking_mode', 'enabled'),)
    # M3 may start a reply with a stray </mm:think> (vLLM's minimax_m3_reasoning_parser.py drops
    # that first one only; a later unmatched one stays content).
    drop_leading_close_tag = True
