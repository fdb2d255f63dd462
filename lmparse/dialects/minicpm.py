"""OpenBMB MiniCPM 5 XML tool calls and MiniCPM-V reasoning.

MiniCPM 5 (SGLang 0.5.23 ``function_call/minicpm5_detector.py``, vLLM 0.33
``vllm/tool_parsers/minicpm5xml_tool_parser.py``) writes each call as one
element, several one after another, with no wrapper::

    <function name="get_weather"><param name="city">北京</param><param name="date">2024-06-27</param></function>

String values are raw text, other values JSON (or Python literals), typed
back by the tool's schema: the XML-like family with ``<function name="`` as
the block's open tag (the name follows it, up to ``">``) and ``</function>``
as its close. Prose such as ``<function>`` or ``<function foo>`` is not the
open tag and stays content. A value written as one CDATA section,
``<param name="code"><![CDATA[...]]></param>``, is the section's inner text,
as vLLM's and SGLang's parsers read it (the section is XML markup; the value
is held until its close tag). Not read, on purpose: vLLM's and SGLang's lxml
fallbacks for single-quoted attributes, vLLM's ``Ġ``/``Ċ`` byte-level
repairs and its table of tau-bench alias tool names rewritten to offered
ones (lmparse never invents names or values).

MiniCPM-V (vLLM ``vllm/parser/minicpmv.py``; reasoning only, its calls are
Qwen3-Coder's ``qwen3_coder``): ``<think>`` … ``</think>``, inside reasoning
unless ``enable_thinking`` is False (the template writes ``<think>``
otherwise); ``<|im_end|>`` and the reserved markers ``<reserved_12>`` …
``<reserved_15>`` / ``<|reserved_12|>`` … ``<|reserved_15|>`` are never
text (content markers). vLLM also rewrites the two characters ``\\n`` the
tokenizer sometimes decodes into a newline outside code spans; lmparse does
not rewrite model text (README "Dialects beyond LMDeploy's").
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.tools.xml_parser import XmlToolParser

__all__ = ['MiniCPM5ToolParser', 'MiniCPMVReasoningParser']


@ToolParserManager.register_module(['minicpm5'])
class MiniCPM5ToolParser(XmlToolParser):
    """``<function name="NAME"><param name="K">V</param>...</function>``, values typed by schema."""

    tool_open_tag = '<function name="'
    tool_close_tag = '</function>'
    function_open = ''  # the block's open tag leads into the name ...
    function_name_end = '">'  # ... which ends at the attribute's closing quote
    arg_open = '<param name="'
    arg_name_end = '">'
    arg_value_close_tag = '</param>'
    cdata_values = True


_RESERVED = tuple(f'<reserved_{i}>' for i in range(12, 16)) + tuple(f'<|reserved_{i}|>' for i in range(12, 16))


@ReasoningParserManager.register_module(['minicpmv'])
class MiniCPMVReasoningParser(ReasoningParser):
    """``<think>`` … ``</think>``; ``<|im_end|>`` and the reserved markers are dropped from the text."""

    content_markers = ('<|im_end|>', *_RESERVED)
