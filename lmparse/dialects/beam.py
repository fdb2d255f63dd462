"""Beam: Harmony-style channel messages whose calls are ``<rfl:parameter>`` lists.

Source: SGLang 0.5.23's built-in ``BEAM_RESPONSE_TEMPLATE``
(``sglang/srt/parser/beam.py``, read by ``function_call/beam_detector.py`` and
the ``beam`` reasoning detector through the generic response-template parser);
vLLM 0.33's ``vllm/parser/beam.py`` parses the same grammar from the
checkpoint's ``response_template`` metadata (``vllm/parser/response_template.py``)::

    <|channel|>analysis<|message|>...reasoning...<|end|><|start|>assistant
     to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name="city">
    Paris
    </rfl:parameter><|call|>
    <|start|>assistant<|channel|>final<|message|>...answer...<|return|>

The prompt ends with ``<|start|>assistant``. A header with a recipient
(`` to=NAME``) is a call named NAME whose body is its parameters; otherwise the
channel decides: ``analysis`` reasoning, ``final`` content, any other channel
dropped. Messages end at ``<|end|>``, ``<|return|>`` or ``<|call|>`` (the call
closers are ``<|call|>`` and ``<|end|><|start|>assistant``; a header written
inside an unterminated message also ends it). A value sits between one newline
after the tag and one before ``</rfl:parameter>``; the close tag may be missing
before the next ``<rfl:parameter name=`` (the template's ``tag_pattern``);
values are text typed by the tool's schema (the engines' ``_coerce_tool_calls``;
lmparse types them as its XML family does), not stripped beyond those two
newlines. The template's ``reasoning_default = "always"`` changes nothing here:
the output's own headers say which channel is reasoning.

Why a recipient-channel declaration, not ``response_template``: lmparse's
``hf`` / ``response_template`` dialect maps templates onto the tag families,
which cannot scope calls to a header's recipient nor close a call on either of
two markers; the channel family reads exactly this grammar.

Differences from the engines' regex reading: text outside any message is
content (the engines drop it); a value without the two newlines is still read
(the engines' pattern skips it); ``<|end|>`` alone ends reasoning (the
template's close is ``<|end|><|start|>assistant``; what follows the lone
``<|end|>`` is read as the next message or content rather than reasoning); a
`` to=NAME<|channel|>`` header inside unterminated reasoning starts the call
(the engines keep it as reasoning, and the call is lost). Checked black-box
against SGLang's detectors on tests/test_beam.py's cases: those two and a call
cut off by the end of output (SGLang emits it with empty arguments, lmparse
with the parameters written so far) are the only differences; vLLM's needs
the checkpoint's template metadata, which no public checkpoint provides.
"""
from __future__ import annotations

from lmparse.reasoning import ReasoningParser
from lmparse.recipient_channels import ChannelGrammar, ChannelToolParser
from lmparse.registry import ReasoningParserManager, ToolParserManager

__all__ = ['BEAM', 'BeamReasoningParser', 'BeamToolParser']

BEAM = ChannelGrammar(
    ends=('<|end|>', '<|return|>', '<|call|>'), channel='<|channel|>', recipients={},
    channels={'analysis': 'reasoning', 'final': 'content'}, no_recipient='drop', in_body_headers=('<|channel|>',),
    parameter='<rfl:parameter', parameter_close='</rfl:parameter>', optional_parameter_close=True,
    value_newlines=True, values='schema')


@ToolParserManager.register_module(['beam'])
class BeamToolParser(ChannelToolParser):
    """Beam: a `` to=NAME`` message is one call; its ``<rfl:parameter>`` values are typed by the schema."""

    channel_grammar = BEAM
    request_settings = {'skip_special_tokens': False}


@ReasoningParserManager.register_module(['beam'])
class BeamReasoningParser(ReasoningParser):
    """Beam: ``<|channel|>analysis`` messages without a recipient are reasoning."""

    channel_grammar = BEAM
    reasoning_open_tag = '<|message|>'
    reasoning_close_tag = '<|end|>'
    open_tag_in_prompt = False
