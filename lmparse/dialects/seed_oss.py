"""ByteDance Seed-OSS: ``<seed:think>`` reasoning and ``<seed:tool_call>`` XML-like tool calls.

Syntax: ByteDance-Seed/Seed-OSS-36B-Instruct's ``chat_template.jinja``
(``<seed:tool_call>\\n<function=NAME>\\n<parameter=KEY>VALUE</parameter>\\n</function>\\n</seed:tool_call>``,
one call per block, blocks one after another; reasoning in
``<seed:think>...</seed:think>``; with ``thinking_budget`` the model writes
``<seed:cot_budget_reflect>...</seed:cot_budget_reflect>`` notes inside its
reasoning, which are reasoning text) and vLLM's ``seed_oss`` parser (the
Qwen3-Coder grammar with other outer tags). ``<seed:think>``,
``</seed:think>``, ``<seed:tool_call>``, ``</seed:tool_call>`` and the budget
tags are special tokens of the Seed-OSS tokenizer; ``<function=`` and
``<parameter=`` are ordinary text, split by the tokenizer, so every proper
prefix of those markers is held (the XML family's default).
"""
from __future__ import annotations

from lmparse.dialects.qwen import Qwen3CoderToolParser
from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['SeedOssReasoningParser', 'SeedOssToolParser']


@ToolParserManager.register_module(['seed-oss', 'seed_oss'])
class SeedOssToolParser(Qwen3CoderToolParser):
    """``<seed:tool_call><function=NAME><parameter=KEY>V</parameter></function></seed:tool_call>``.

    The Qwen3-Coder grammar: one newline around a value is the template's,
    and a bare ``<function=NAME>`` call naming an offered tool is a call
    (vLLM's ``seed_oss`` inherits both from its Qwen3 parser).
    """

    tool_open_tag = '<seed:tool_call>'
    tool_close_tag = '</seed:tool_call>'
    # The outer tags are special tokens: keep them in the decoded text.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}
    # xgrammar has no built-in Seed-OSS structural tag (vLLM declares none
    # either); Qwen3-Coder's would force the wrong outer tags.
    structural_tag_model = None  # type: ignore[assignment]  # the base's is a str, the family's str | None
    reasoning_structural_tag_model = None  # type: ignore[assignment]


@ReasoningParserManager.register_module(['seed-oss', 'seed_oss'])
class SeedOssReasoningParser(ReasoningParser):
    """``<seed:think>...</seed:think>``; output starts in reasoning.

    The model opens its reasoning itself (the open tag is dropped), and with
    ``thinking_budget`` 0 the template puts ``<seed:think>`` in the prompt, so
    starting inside reasoning is right either way (as vLLM's ``seed_oss``).
    ``<seed:cot_budget_reflect>`` notes stay in the reasoning text.
    """

    reasoning_open_tag = '<seed:think>'
    reasoning_close_tag = '</seed:think>'
