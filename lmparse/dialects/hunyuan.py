"""Tencent Hunyuan: Hunyuan-A13B (JSON arrays in ``<tool_calls>``) and HY v3 / HY v4 (suffixed XML-like tokens).

Syntax:

- Hunyuan-A13B (tencent/Hunyuan-A13B-Instruct chat template; vLLM's
  ``hunyuan_a13b`` parsers, ``vllm/tool_parsers/hunyuan_a13b_tool_parser.py``,
  ``vllm/reasoning/hunyuan_a13b_reasoning_parser.py``): the model writes
  ``<think>\\nreasoning\\n</think>\\n<answer>\\nanswer\\n</answer>``, and tool
  calls as ``<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>``
  (one JSON array per block). ``<answer>`` / ``</answer>`` are content
  markers; the model opens ``<think>`` itself, so output starts as content.
  The newlines the template writes inside the tags stay text (reasoning or
  content): vLLM matches them as part of its token sequences, lmparse drops
  only the tags, so no chunking can change which text is kept. vLLM also
  deletes a ``助手：`` ("Assistant:") the template may leave in a tool-less
  answer; lmparse keeps the model's text.
- HY v3 (tencent/Hy3; vLLM's ``hy_v3``, SGLang's ``hunyuan``:
  ``sglang/srt/function_call/hunyuan_detector.py``, whose docstring names the
  HYV3 format): ``<tool_calls>\\n<tool_call>NAME<tool_sep>\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>\\n</tool_calls>``,
  reasoning in ``<think>`` ... ``</think>``. So SGLang's ``hunyuan`` is an
  alias of ``hy_v3`` (tool and reasoning), not of A13B's format.
- HY v4 (vLLM's ``hy_v4``): the same without ``<tool_sep>`` (the name runs to
  the first ``<arg_key>`` or ``</tool_call>``); SGLang's ``hunyuan`` reads it
  too when the vocabulary has no ``<tool_sep>``.

HY's structural tokens carry a per-checkpoint suffix (``token_suffix`` in the
tokenizer config; both engines read it from the vocabulary): the released
checkpoints write ``<think:opensource>``, ``<tool_calls:opensource>``,
``<tool_call:opensource>``, ``<tool_sep:opensource>``,
``<arg_key:opensource>``, ``<arg_value:opensource>`` and their closers. The
registered dialects use the ``:opensource`` suffix; :func:`hy_markers` and
:func:`hy_think_markers` build the markers for another suffix (``''`` for
the unsuffixed preview tokenizers), for a subclass to declare. Values are typed by the request's
JSON schema (the XML family), as both engines do.

Reasoning switch (HY v3 / v4): the template reads ``reasoning_effort`` from
the chat template kwargs (default ``high``; ``no_think`` turns thinking off,
SGLang also maps ``none``); with thinking on it prefills ``<think>``, so
output starts in reasoning unless ``reasoning_effort`` is ``no_think`` /
``none`` (or ``enable_thinking`` is False). vLLM's ``hy_v3`` defaults to
``no_think`` when the request names no effort; lmparse follows the template
and SGLang.
"""
from __future__ import annotations

from typing import ClassVar

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.xml_parser import XmlToolParser

__all__ = ['HY_TOKEN_SUFFIX', 'HunyuanA13BReasoningParser', 'HunyuanA13BToolParser', 'HYV3ReasoningParser',
           'HYV3ToolParser', 'HYV4ReasoningParser', 'HYV4ToolParser', 'hy_markers', 'hy_think_markers']

# The suffix of the released HY checkpoints' structural tokens.
HY_TOKEN_SUFFIX = ':opensource'


def hy_markers(suffix: str = HY_TOKEN_SUFFIX, *, tool_sep: bool = True) -> dict[str, object]:
    """The HY tool-dialect marker declarations for one token suffix (HY v4: ``tool_sep=False``).

    A checkpoint with another suffix is a subclass:
    ``type('MyHy', (HYV3ToolParser,), hy_markers(':abc'))``, registered like any dialect.
    """
    def tag(name: str) -> str:
        return f'<{name}{suffix}>'

    def close(name: str) -> str:
        return f'</{name}{suffix}>'

    return {
        'tool_open_tag': tag('tool_calls'),
        'tool_close_tag': close('tool_calls'),
        'function_open': tag('tool_call'),
        'function_name_end': tag('tool_sep') if tool_sep else None,
        'arg_open': tag('arg_key'),
        'arg_name_end': close('arg_key'),
        'value_open': tag('arg_value'),
        'arg_value_close_tag': close('arg_value'),
        'function_close': close('tool_call'),
    }


def hy_think_markers(suffix: str = HY_TOKEN_SUFFIX) -> dict[str, object]:
    """The HY reasoning-dialect tags for one token suffix, for a subclass of :class:`HYV3ReasoningParser`."""
    return {'reasoning_open_tag': f'<think{suffix}>', 'reasoning_close_tag': f'</think{suffix}>'}


# ---- Hunyuan-A13B ----

A13B_CONTENT_MARKERS = ('<answer>', '</answer>')


@ToolParserManager.register_module(['hunyuan_a13b'])
class HunyuanA13BToolParser(JsonToolParser):
    """``<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>``."""

    tool_open_tag = '<tool_calls>'
    tool_close_tag = '</tool_calls>'
    envelope_array = True
    content_markers = A13B_CONTENT_MARKERS


@ReasoningParserManager.register_module(['hunyuan_a13b'])
class HunyuanA13BReasoningParser(ReasoningParser):
    """``<think>`` ... ``</think>`` opened by the model; ``<answer>`` ... ``</answer>`` is content."""

    open_tag_in_prompt = False
    content_markers = A13B_CONTENT_MARKERS


# ---- HY v3 / HY v4 ----

@ToolParserManager.register_module(['hy_v3', 'hunyuan'])
class HYV3ToolParser(XmlToolParser):
    """``<tool_calls:S><tool_call:S>NAME<tool_sep:S><arg_key:S>K</arg_key:S><arg_value:S>V</arg_value:S></tool_call:S></tool_calls:S>``."""

    tool_open_tag = '<tool_calls:opensource>'
    tool_close_tag = '</tool_calls:opensource>'
    function_open = '<tool_call:opensource>'
    function_name_end: ClassVar[str | None] = '<tool_sep:opensource>'  # HY v4: None
    arg_open = '<arg_key:opensource>'
    arg_name_end = '</arg_key:opensource>'
    value_open = '<arg_value:opensource>'
    arg_value_close_tag = '</arg_value:opensource>'
    function_close = '</tool_call:opensource>'
    multiple_calls = True
    # The structural tokens are special tokens: keep them, unspaced.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}
    structural_tag_model = None  # xgrammar has no HY structural tag


@ToolParserManager.register_module(['hy_v4'])
class HYV4ToolParser(HYV3ToolParser):
    """HY v3's calls without ``<tool_sep>``: the name runs to the first ``<arg_key>``."""

    function_name_end = None


class _HYReasoning(ReasoningParser):
    """Starts in reasoning unless ``reasoning_effort`` is ``no_think`` / ``none``."""

    def starts_in_reasoning_mode(self) -> bool:
        return self.kwargs.get('reasoning_effort') not in ('no_think', 'none')


@ReasoningParserManager.register_module(['hy_v3', 'hunyuan'])
class HYV3ReasoningParser(_HYReasoning):
    """``<think:opensource>`` ... ``</think:opensource>``, prefilled unless ``reasoning_effort`` is ``no_think``."""

    reasoning_open_tag = '<think:opensource>'
    reasoning_close_tag = '</think:opensource>'


@ReasoningParserManager.register_module(['hy_v4'])
class HYV4ReasoningParser(HYV3ReasoningParser):
    """HY v4 thinks as HY v3 does (vLLM's ``hy_v4``: ``reasoning_effort`` default ``high``)."""
