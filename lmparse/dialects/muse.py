"""Muse Spark / Muse Glimmer: recipient-framed messages with ATEM tool calls.

Sources: vLLM 0.33's ``vllm/tool_parsers/muse_tool_parser.py`` (a port of the
``response_schema`` of the Hugging Face Muse Glimmer export,
``MUSE_GLIMMER_RESPONSE_SCHEMA`` in ``convert_muse_glimmer_weights_to_hf.py``,
which Muse Spark shares), ``muse_glimmer_tool_parser.py``,
``vllm/reasoning/muse_reasoning_parser.py`` / ``muse_glimmer_reasoning_parser.py``;
SGLang 0.5.23's ``function_call/muse_glimmer_format.py``,
``muse_glimmer_detector.py`` and the ``muse`` reasoning detector
(``parser/reasoning_parser.py``, ``MuseGlimmerDetector``). The checkpoint's own
template and schema are not public; the engines agree on the syntax::

    to=self<|message|>...reasoning...<|eom|>
    <|start|>assistant to=get_weather<|message|><atem:function_calls>
    <atem:invoke name="get_weather"><atem:parameter name="city">Paris</atem:parameter></atem:invoke>
    </atem:function_calls><|eom|>
    <|start|>assistant to=user<|message|>...answer...<|eot|>

The first header has no ``<|start|>assistant`` (the prompt ends with it). Any
recipient that is not a channel below is a tool channel; only there are
``<atem:invoke>`` elements calls (the name is the invoke's ``name``; the chat
template renders a bare tool NAME's recipient as ``NAME.*``, so an emitted
``NAME.NAME`` not offered is read as NAME when NAME is, as both engines do;
SGLang's further leaf-name match is not copied, vLLM calls it unsafe).
Values: the value's JSON when all of it is JSON, else its raw text as a string.

- ``muse`` (vLLM ``muse`` / ``musespark1x``, the Spark profile; also SGLang's
  ``muse`` name): ``to=self`` and a recipient-less ``<|message|>`` are reasoning,
  ``to=user`` / ``to=commentary`` content, ``to=developer`` dropped; a parameter
  the tool's schema types exactly ``"string"`` keeps its raw text (vLLM's
  ``_preserve_string_parameters``). SGLang's detector reads a recipient-less
  message as content, ``to=developer`` as a tool channel and decodes every
  value: for those outputs use ``muse_glimmer``, which is SGLang's reading
  except ``to=commentary``.
- ``muse_glimmer`` (vLLM ``muse_glimmer``): ``to=self`` reasoning, ``to=user``
  and recipient-less messages content, every other recipient (``commentary``,
  ``developer`` included) a tool channel whose prose is dropped; values always
  JSON-or-raw.

Both: reasoning of several messages is joined as written (vLLM's Glimmer
profile and SGLang insert ``\\n`` between them; lmparse adds no text). A
``to=NAME<|message|>`` header written inside an unterminated message ends it
(vLLM's ``_STRIP_OPEN_REASONING_RE`` rule), so the call after it is kept.
Without an active tool parser a tool message is text (framing included, as a
tag dialect's tool block); with only the tool parser, ``to=self`` stays
reasoning (as vLLM's tool parser streams it).

Checked black-box against both engines on tests/test_muse.py's cases (peers
venv): they agree except where lmparse's contracts differ -- an invoke cut off
by the end of output is a call with the parameters written so far (vLLM and
SGLang drop it), unoffered names are filtered (vLLM passes them through), a
value like ``1e999`` stays text (both engines emit ``Infinity``, not JSON),
text outside any message is content (vLLM drops it) -- and where SGLang's
detector goes wrong: a recipient-less first message leaks ``<|message|>`` into
the content, a ``to=NAME<|message|>`` header after unterminated reasoning (and
a ``<|start|>`` header there) stays reasoning and the call is lost, a header
cut off by the end of output is content. ``muse_glimmer`` against vLLM's
``muse_glimmer`` (its streaming path, one chunk): vLLM loses a call after
reasoning, the call in a ``to=developer`` message and a recipient-less answer,
and drops an answer that quotes ATEM markup (on purpose); lmparse keeps them.
"""
from __future__ import annotations

from typing import Literal

from lmparse.reasoning import ReasoningParser
from lmparse.recipient_channels import ChannelGrammar, ChannelToolParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

Kind = Literal['content', 'reasoning', 'drop', 'tool']

__all__ = ['MUSE_GLIMMER', 'MUSE_SPARK', 'MuseGlimmerReasoningParser', 'MuseGlimmerToolParser',
           'MuseReasoningParser', 'MuseToolParser']


def _atem(recipients: dict[str, Kind], no_recipient: Kind, keep_string_parameters: bool) -> ChannelGrammar:
    """A Muse profile: ``<|eom|>`` / ``<|eot|>`` messages with ATEM calls."""
    return ChannelGrammar(
        ends=('<|eom|>', '<|eot|>'), recipients=recipients, no_recipient=no_recipient, in_body_headers=('<|message|>',),
        invoke='<atem:invoke', invoke_close='</atem:invoke>', parameter='<atem:parameter',
        parameter_close='</atem:parameter>', keep_string_parameters=keep_string_parameters)


MUSE_SPARK = _atem({'self': 'reasoning', 'user': 'content', 'commentary': 'content', 'developer': 'drop'},
                   'reasoning', True)
MUSE_GLIMMER = _atem({'self': 'reasoning', 'user': 'content'}, 'content', False)


@ToolParserManager.register_module(['muse', 'musespark1x'])
class MuseToolParser(ChannelToolParser):
    """Muse Spark: calls in ``<atem:invoke>`` elements of tool-recipient messages."""

    channel_grammar = MUSE_SPARK
    # the framing markers are special tokens: keep them in the decoded text
    request_settings = {'skip_special_tokens': False}


@ReasoningParserManager.register_module(['muse', 'musespark1x'])
class MuseReasoningParser(ReasoningParser):
    """Muse Spark: ``to=self`` and recipient-less messages are reasoning (the header decides)."""

    channel_grammar = MUSE_SPARK
    reasoning_open_tag = '<|message|>'
    reasoning_close_tag = '<|eom|>'
    open_tag_in_prompt = False


@ToolParserManager.register_module(['muse_glimmer'])
class MuseGlimmerToolParser(ChannelToolParser):
    """Muse Glimmer: the same calls; ``commentary`` / ``developer`` are tool channels."""

    channel_grammar = MUSE_GLIMMER
    request_settings = {'skip_special_tokens': False}


@ReasoningParserManager.register_module(['muse_glimmer'])
class MuseGlimmerReasoningParser(ReasoningParser):
    """Muse Glimmer: only ``to=self`` messages are reasoning."""

    channel_grammar = MUSE_GLIMMER
    reasoning_open_tag = '<|message|>'
    reasoning_close_tag = '<|eom|>'
    open_tag_in_prompt = False
