"""Llama 3.x / Llama 4 tool calls: JSON (``llama3``, ``llama3_json``).

Syntax: Meta's llama-models prompt formats (Llama 3.1 ``prompt_format.md``:
``<|python_tag|>{"name": ..., "parameters": {...}}``, ended by ``<|eom_id|>`` /
``<|eot_id|>``, which the engine strips; Llama 3.2 / 3.3 "JSON based tool
calling": the same object with no ``<|python_tag|>``), LMDeploy 0.18's
``llama3_tool_parser``, vLLM's ``llama_tool_parser.py`` (``llama3_json`` /
``llama4_json``: a response starting with ``<|python_tag|>`` or ``{``,
``"arguments"`` or ``"parameters"``, calls separated by ``; ``) and SGLang's
``llama32_detector.py`` (its ``llama3``: ``<|python_tag|>`` anywhere or a
response starting with ``{``, ``;`` between calls).

Two dialects on purpose: ``llama3`` is LMDeploy's name and keeps LMDeploy
0.18's behaviour (only ``<|python_tag|>`` blocks, only ``"parameters"``), which
the oracle lane checks; ``llama3_json`` (vLLM's name) is the lenient reading of what Llama 3.3
really emits, and ``llama4_json`` the same with Llama 4's tags. SGLang's ``llama3`` is that
lenient reading too, but the name is LMDeploy's here.
"""
from __future__ import annotations

from lmparse.registry import ToolParserManager
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.pythonic import PythonicToolParser

__all__ = ['Llama3JsonToolParser', 'Llama3LenientJsonToolParser', 'Llama4JsonToolParser', 'PythonicCallsToolParser',
           'PythonicAfterTextToolParser']


@ToolParserManager.register_module('llama3')
class Llama3JsonToolParser(JsonToolParser):
    """``<|python_tag|>{"name": ..., "parameters": {...}}`` with no close tag."""

    tool_open_tag = '<|python_tag|>'
    tool_close_tag = None
    argument_field = 'parameters'


@ToolParserManager.register_module('llama3_json')
class Llama3LenientJsonToolParser(Llama3JsonToolParser):
    """Llama 3.1-3.3 / Llama 4 JSON calls as the models really write them.

    ``<|python_tag|>{...}`` as in ``llama3``, and also a bare
    ``{"name": ..., "parameters": {...}}`` at the start of the response (after
    whitespace, which is then dropped), with ``"arguments"`` accepted for
    ``"parameters"`` and ``{...}; {...}`` for several calls. A bare object is
    a call only when its first key is ``"name"``, the name is an offered tool
    and the next key is ``"parameters"`` or ``"arguments"`` (see
    ``lmparse.tools.json_bare``); anything else is content, byte for byte.
    Only that much is held before the name is emitted; arguments stream.
    """

    argument_field_aliases = ('arguments',)
    bare_call_open = '{'


@ToolParserManager.register_module('llama4_json')
class Llama4JsonToolParser(JsonToolParser):
    """Llama 4 JSON calls: ``llama3_json`` with Llama 4's ``<|python_start|>`` ... ``<|python_end|>``.

    Llama 4 has no ``<|python_tag|>``; it wraps a JSON call in these special
    tokens when it marks it at all (vllm-project/vllm#16214), and writes it
    bare otherwise. vLLM maps ``llama4_json`` to its ``llama3_json`` parser
    (``<|python_tag|>``), which leaves such a call as text: a deliberate
    difference.
    """

    tool_open_tag = '<|python_start|>'
    tool_close_tag = '<|python_end|>'
    argument_field = 'parameters'
    argument_field_aliases = ('arguments',)
    bare_call_open = '{'


@ToolParserManager.register_module(['pythonic', 'llama4_pythonic'])
class PythonicCallsToolParser(PythonicToolParser):
    """``[get_weather(city="Paris", days=3), other()]`` (Llama 3.2, Llama 4, ToolACE).

    The list at the start of the response, or inside Llama 4's
    ``<|python_start|>`` ... ``<|python_end|>`` (anywhere), which the models
    sometimes put around it. Python literals become JSON arguments; see
    ``lmparse.tools.pythonic`` for what streams, what is held and the
    best-effort rules for malformed lists.
    """

    tool_open_tag = '<|python_start|>'
    tool_close_tag = '<|python_end|>'
    bare_call_open = '['


@ToolParserManager.register_module('pythonic_after_text')
class PythonicAfterTextToolParser(PythonicCallsToolParser):
    """``pythonic`` that also reads a call list after text: ``Checking. [get_weather(city='Oslo')]``.

    SGLang's pythonic detector (``pythonic_detector.py``; its tests
    ``test_tool_call_with_leading_text`` / ``test_streaming_text_then_tool_call``)
    finds the list anywhere in the output, and the SGLang plugin maps SGLang's
    ``pythonic`` here. A ``[`` after text opens a list only when ``NAME(``
    follows it with NAME an offered tool (held until that is decided; a
    markdown link or a JSON array is content). vLLM's ``pythonic`` parser reads
    the list only at the start of the output, as lmparse's ``pythonic`` does.
    """

    bare_calls_after_text = True
