"""MBZUAI IFM's K2 Horizon: ``<ifm|tool_calls>`` XML-KV tool calls and effort-selected ``<ifm|think...>`` reasoning.

Not Moonshot's Kimi K2: K2 Horizon (SGLang's "K2-v3") is the Institute of
Foundation Models' K2 line, whose markers are all ``<ifm|...>`` special tokens.
Syntax: vLLM 0.33's ``tool_parsers/k2_horizon_tool_parser.py`` and
``reasoning/k2_horizon_reasoning_parser.py``, SGLang 0.5.23's
``function_call/k2_v3_detector.py`` and ``K2V3Detector`` reasoning (the model's
chat templates are not public here; both engines describe the release
templates' output)::

    <ifm|tool_calls>
    <ifm|tool_call>NAME
    <ifm|arg_key>KEY</ifm|arg_key>
    <ifm|arg_value>VALUE</ifm|arg_value>
    </ifm|tool_call>
    </ifm|tool_calls>

one group per turn, any number of calls in it, values typed by the tool's
JSON schema. The template's ``tool_call_format`` (``chat_template_kwargs``)
picks the layout, per request: ``xml`` (the default) is the above;
``xml_typed`` adds ``<ifm|arg_type>TYPE</ifm|arg_type>`` between key and
value, which the XML family drops as markup between the name and the value
(values are typed by the schema, not by that tag; an ``xml`` request reading
a typed call, or the reverse, still gets the call, where vLLM returns the
group as text); ``json`` writes a JSON envelope inside each call tag::

    <ifm|tool_calls><ifm|tool_call>{"name": NAME, "arguments": {...}}</ifm|tool_call>...</ifm|tool_calls>

read by the JSON family (``call_tags``), its arguments forwarded as the
model wrote them (vLLM coerces each value to the schema's type). The parser
class for a request is chosen from its ``chat_template_kwargs``
(``for_template_kwargs``); any other format is a ``ValueError`` before
generation (``validate_request``, also run by the vLLM plugin's
``adjust_request``), as vLLM raises. A ``<ifm|tool_call>`` outside a group
stays content (vLLM's reading; SGLang also parses it); a closed group holding
text but no call is content as written (vLLM's reading:
``no_call_block_is_content``, ``lmparse/tools/no_call.pxd``), as is one whose
call has no name (a JSON envelope under the ``xml`` layout; vLLM's name check
refuses it), an empty one is dropped, and one cut by the end of the output
follows the truncation rule.

Reasoning: the template prefills the open token, so output starts in
reasoning; ``reasoning_effort`` (``chat_template_kwargs``, as vLLM reads it)
selects the pair: ``high`` (default) ``<ifm|think>`` / ``</ifm|think>``,
``medium`` ``<ifm|think_fast>`` / ``</ifm|think_fast>``, ``low``
``<ifm|think_faster>`` / ``</ifm|think_faster>``; any other value is a
``ValueError`` (vLLM; SGLang falls back to ``medium``), ``None`` reads as the
default. A tool group inside an unclosed reasoning block is a tool call and
the reasoning resumes after it (vLLM and SGLang end the reasoning there);
``call_open_tag`` declares the group's tag for the vLLM plugin's reasoning
parser used alone, which ends the reasoning there as vLLM does.
"""
from __future__ import annotations

from typing import Any

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.request import get_field
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.xml_parser import XmlToolParser

__all__ = ['K2HorizonJsonToolParser', 'K2HorizonReasoningParser', 'K2HorizonToolParser']

TOOL_CALL_FORMATS = ('xml', 'xml_typed', 'json')


def _tool_call_format(kwargs: Any) -> Any:
    return kwargs.get('tool_call_format', 'xml') if isinstance(kwargs, dict) else 'xml'


def _validate(request: Any) -> None:
    """``chat_template_kwargs.tool_call_format`` must name a layout the template writes (vLLM's check)."""
    fmt = _tool_call_format(get_field(request, 'chat_template_kwargs') or {})
    if not isinstance(fmt, str) or fmt not in TOOL_CALL_FORMATS:
        raise ValueError(f'Unsupported tool_call_format {fmt!r}; K2 Horizon writes one of {TOOL_CALL_FORMATS}.')


class _ToolCallFormatChecked:
    """The request's ``tool_call_format`` checked before generation (vLLM raises in ``adjust_request``)."""

    @classmethod
    def validate_request(cls, request: Any) -> None:
        _validate(request)

    def adjust_request(self, request: Any) -> Any:
        _validate(request)
        return super().adjust_request(request)  # type: ignore[misc]


@ToolParserManager.register_module('k2_horizon')
class K2HorizonToolParser(_ToolCallFormatChecked, XmlToolParser):
    """``<ifm|tool_calls>`` groups of ``<ifm|tool_call>NAME<ifm|arg_key>K</ifm|arg_key><ifm|arg_value>V</ifm|arg_value></ifm|tool_call>``.

    ``tool_call_format="json"`` requests get :class:`K2HorizonJsonToolParser` (``for_template_kwargs``).
    """

    tool_open_tag = '<ifm|tool_calls>'
    tool_close_tag = '</ifm|tool_calls>'
    function_open = '<ifm|tool_call>'  # the name runs to the first <ifm|arg_key> or </ifm|tool_call>
    function_close = '</ifm|tool_call>'
    multiple_calls = True
    arg_open = '<ifm|arg_key>'
    arg_name_end = '</ifm|arg_key>'
    value_open = '<ifm|arg_value>'
    arg_value_close_tag = '</ifm|arg_value>'
    # The markers are special tokens: keep them in the decoded text.
    request_settings = {'skip_special_tokens': False, 'spaces_between_special_tokens': False}
    structural_tag_model = None  # neither engine builds one for this format
    no_call_block_is_content = True  # a group of junk is text, as vLLM returns it

    @classmethod
    def for_template_kwargs(cls, kwargs: dict[str, Any]) -> type:
        """The parser class for a request's ``chat_template_kwargs``: the JSON layout's for ``json``."""
        return K2HorizonJsonToolParser if _tool_call_format(kwargs) == 'json' else cls


class K2HorizonJsonToolParser(_ToolCallFormatChecked, JsonToolParser):
    """``tool_call_format="json"``: ``<ifm|tool_calls>`` groups of ``<ifm|tool_call>{"name": .., "arguments": {..}}</ifm|tool_call>``."""

    tool_open_tag = '<ifm|tool_calls>'
    tool_close_tag = '</ifm|tool_calls>'
    call_tags = ('<ifm|tool_call>', '</ifm|tool_call>')
    request_settings = K2HorizonToolParser.request_settings
    structural_tag_model = None


@ReasoningParserManager.register_module('k2_horizon')
class K2HorizonReasoningParser(ReasoningParser):
    """``<ifm|think>`` ... ``</ifm|think>`` (``reasoning_effort`` high); output starts in reasoning.

    Constructing it returns the class of the requested effort (below), so the
    tags stay class declarations.
    """

    reasoning_open_tag = '<ifm|think>'
    reasoning_close_tag = '</ifm|think>'
    # The reasoning parser alone (vLLM replace mode): a tool group ends the reasoning and is content,
    # as vLLM's parser reads it (read by the call_ends_reasoning mechanism of the Qwen3 work).
    call_open_tag = '<ifm|tool_calls>'

    def __new__(cls, **kwargs: Any) -> K2HorizonReasoningParser:
        effort = kwargs.get('reasoning_effort', 'high')
        if effort is None:
            effort = 'high'
        chosen = _BY_EFFORT.get(effort) if isinstance(effort, str) else None
        if chosen is None:
            raise ValueError(f'Unsupported reasoning_effort {effort!r} for k2_horizon; '
                             f'supported: {", ".join(_BY_EFFORT)}.')
        # A user subclass keeps its own declarations.
        return object.__new__(chosen if issubclass(chosen, cls) else cls)


class K2HorizonMediumReasoningParser(K2HorizonReasoningParser):
    """``reasoning_effort="medium"``: ``<ifm|think_fast>`` ... ``</ifm|think_fast>``."""

    reasoning_open_tag = '<ifm|think_fast>'
    reasoning_close_tag = '</ifm|think_fast>'


class K2HorizonLowReasoningParser(K2HorizonReasoningParser):
    """``reasoning_effort="low"``: ``<ifm|think_faster>`` ... ``</ifm|think_faster>``."""

    reasoning_open_tag = '<ifm|think_faster>'
    reasoning_close_tag = '</ifm|think_faster>'


_BY_EFFORT: dict[str, type[K2HorizonReasoningParser]] = {
    'high': K2HorizonReasoningParser,
    'medium': K2HorizonMediumReasoningParser,
    'low': K2HorizonLowReasoningParser,
}
