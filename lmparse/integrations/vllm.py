"""lmparse inside unmodified vLLM 0.33: tool and reasoning parsers for vLLM's own parser machinery.

Load it the way vLLM loads third-party parsers (any one of these)::

    vllm serve MODEL --enable-auto-tool-choice \\
        --tool-parser-plugin lmparse.integrations.vllm --tool-call-parser lmparse-qwen3 \\
        --reasoning-parser-plugin lmparse.integrations.vllm --reasoning-parser lmparse-qwen3

or rely on the ``vllm.general_plugins`` entry point this package declares (vLLM calls
:func:`register` in every process it starts, the engine core included). Every lmparse tool
dialect is registered as ``lmparse-<name>`` with vLLM's ``ToolParserManager`` and every
reasoning dialect as ``lmparse-<name>`` with its ``ReasoningParserManager``. With
``LMPARSE_VLLM_REPLACE=1`` (or ``register(replace=True)``) the lmparse classes also take the
vLLM names lmparse shares (``hermes``, ``qwen3_coder``, ``deepseek_r1``, ...), except the few
names for which vLLM's ``ParserManager`` builds a model-specific parser instead of composing
the registered classes (:data:`NOT_REPLACED`).

How vLLM drives them: ``ParserManager.get_parser(tool, reasoning)`` composes a
``DelegatingParser`` that builds one reasoning parser and one tool parser per request and
routes each chunk through ``parse_delta`` (``ChatStreamProcessor.step``): the reasoning
parser's ``extract_reasoning_streaming`` until it confirms the end of reasoning, then the tool
parser's ``extract_tool_calls_streaming`` (the only one vLLM gives the request). When both come
from here, the tool parser, built right after the reasoning parser in the same
``Parser.__init__``, links to it and the two share ONE lmparse response parser (reasoning and
tool dialect together, the request's tools and ``chat_template_kwargs``): the reasoning parser
feeds it until it is past reasoning (content settled, or a call opened, inside reasoning too),
then vLLM hands over and the tool parser feeds it, seeing the request; reasoning that opens
again later still streams as reasoning. Paired with one of vLLM's own parsers, each lmparse
class works alone (an lmparse parser with only its reasoning or only its tool dialect) and
hands over as vLLM expects.

``tool_choice`` (replace mode and ``lmparse-<name>``): ``"none"`` beside tools parses no calls, so
the call text stays content (vLLM's server drops parsed calls there; vLLM's engine parsers
suppress them); seen from the tool parser's first call, so in linked streaming from the hand-over
on: the hand-over chunk is read again without calls (a call opened inside reasoning hands over at
once, so its text stays reasoning). ``"required"`` / a named tool: for the classes whose vLLM class takes vLLM's JSON-list
path (``supports_required_and_named``: vLLM forces JSON-schema decoding, a list of
``{"name", "parameters"}`` or the named tool's arguments), each instance reports
``supports_required_and_named=False`` to vLLM's ``Parser`` (vLLM streams that path from
accumulated text, which it never gives engine-based parsers) and parses that JSON itself with
vLLM's own helpers (``extract_required_tool_call_streaming`` / ``extract_named_tool_call_streaming``,
vLLM's ``FunctionDefinition`` list whole) and vLLM's call ids; the request adjustment stays vLLM's.
Every other class parses the model's native format (vLLM's structural tag constrains it).

Both classes are ``engine_based_streaming`` (vLLM then passes only each chunk's text, never
the accumulated text), convert lmparse's deltas into vLLM's ``DeltaMessage`` /
``DeltaToolCall`` (one per chunk: vLLM's stream carries one delta per engine chunk) and
``ExtractedToolCallInformation`` for non-streaming responses. Under ``lmparse-<name>``,
``supports_required_and_named`` is False: for ``tool_choice="required"`` or a named tool the model's
native format is parsed (vLLM's JSON-list fallback does not apply to these formats).

Replace mode follows vLLM's parser of the name (its own test suite is the spec; the vLLM suite lane,
``tools/run_vllm_suite.py``, runs it, and ``tests/integrations/vllm_suite/differences.toml`` lists what
still differs): the class registered under a vLLM name is a separate class that takes the replaced
class's ``structural_tag_model``, ``default_tool_strict_level`` and ``supports_required_and_named``
(vLLM's ``Parser`` then attaches the same structural tag for ``tool_choice="required"``, a named tool,
or ``auto`` with ``response_format``), runs the replaced class's ``adjust_request``
(``skip_special_tokens=False`` where vLLM's parser sets it, JSON-schema decoding where it supports the
JSON-list path), and keeps calls to tools the request does not declare (under ``lmparse-<name>``
they are dropped, LMDeploy's rule); in the XML family a value whose close tag is missing ends at the
next parameter opener the grammar confirms (``next_arg_ends_value``: on its own line, naming a declared
parameter the call has not given), where vLLM ends it at any opener and LMDeploy at none. Both kinds take the tools from the request vLLM passes when the
parser was built without them, and ``extract_reasoning`` reads ``chat_template_kwargs`` from the request.

``lmparse-auto`` (tool and reasoning) is the dialect derived from the served model's chat template
(``lmparse.templates``; needs jinja2; ``LMPARSE_CHAT_TEMPLATE=FILE`` names another template), derived
when vLLM checks the parsers against the tokenizer at start-up: a template lmparse cannot derive
stops the server with the reason.

Not registered: lmparse's ``hf`` / ``response_template`` parsers (they need the served tokenizer's
``response_template`` metadata; vLLM's own parsers of that name read it). Not supported through
this module: gpt-oss (vLLM always builds its own ``HarmonyParser`` for
``model_type == "gpt_oss"``, whatever the registered names), and vLLM's ``ResponsesRequest``
streaming paths beyond what ``DelegatingParser`` does with the classes.
"""
from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Sequence
from typing import Any

import lmparse
from lmparse.registry import needs_tokenizer
from lmparse.integrations.vllm_types import DeltaBuilder
from lmparse.token_ids import ReasoningTagIds
from lmparse.tools.xml_parser import XmlToolParser
from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from openai.types.responses import ToolChoiceCustom, ToolChoiceFunction
from pydantic import TypeAdapter, ValidationError
from vllm.entrypoints.generate.base.protocol import FunctionDefinition
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionNamedToolChoiceParam
from vllm.parser.engine.adapters import ParserEngineToolAdapter
from vllm.parser.utils import count_history_tool_calls
from vllm.renderers.chat_utils import get_tool_call_id_type, make_tool_call_id
from vllm.tool_parsers.streaming import extract_named_tool_call_streaming, extract_required_tool_call_streaming
from vllm.reasoning import ReasoningParser as VllmReasoningParser
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParser as VllmToolParser
from vllm.tool_parsers import ToolParserManager

__all__ = ['AUTO', 'LmparseAutoReasoningParser', 'LmparseAutoToolParser', 'LmparseReasoningParser',
           'LmparseToolParser', 'NOT_REPLACED', 'PREFIX', 'register', 'registered_names', 'to_vllm_delta']

PREFIX = 'lmparse-'
# vLLM names whose ParserManager composition is model-specific (Harmony, Kimi K3's wrapper,
# Cohere, MiniCPM-V, and the response-template parsers: hf / response_template and Beam, whose
# registered classes select a unified parser that reads the checkpoint's response_template and always
# constrains decoding with a grammar derived from it): lmparse classes registered under them would
# not be driven as composed, and would drop vLLM's constraints.
NOT_REPLACED = frozenset({'openai', 'openai_gptoss', 'kimi_k3', 'cohere_command3', 'cohere_command4', 'minicpmv',
                          'response_template', 'hf', 'beam'})

_configured: dict[tuple[str | None, str | None, bool], type] = {}
# Checked once here against vLLM's constructors (falls back to them if anything differs).
_DELTAS = DeltaBuilder(DeltaMessage, DeltaToolCall, DeltaFunctionCall)


def _configured_class(reasoning: str | None, tool: str | None, call_ends: bool = False) -> type:
    """lmparse's response parser configured for (reasoning, tool), one subclass per pair (process-wide);
    ``call_ends`` (replace mode): a reasoning dialect's ``call_open_tag`` ends reasoning when no tool parser runs."""
    key = (reasoning, tool, call_ends)
    cls = _configured.get(key)
    if cls is None:
        cls = lmparse.BaseResponseParser.with_parsers(reasoning, tool)
        cls.call_ends_reasoning = call_ends
        _configured[key] = cls
    return cls


_FUNCTION_FIELDS = (('description', str), ('parameters', dict), ('strict', bool))


def _function_dict(obj: Any) -> dict[str, Any]:
    fn: dict[str, Any] = {'name': obj.name}
    for key, kind in _FUNCTION_FIELDS:
        value = getattr(obj, key, None)
        if isinstance(value, kind):
            fn[key] = value
    return fn


def _tool_dict(tool: Any) -> dict[str, Any] | None:
    """An OpenAI chat tool dict from vLLM's ChatCompletionToolsParam or a Responses FunctionTool.

    Read field by field: pydantic's model_dump of vLLM's tool models costs ~50 us a tool.
    """
    if isinstance(tool, dict):
        data = tool
    elif getattr(tool, 'type', None) == 'function':
        fn = getattr(tool, 'function', None)
        if fn is not None and getattr(fn, 'name', None) is not None:
            return {'type': 'function', 'function': _function_dict(fn)}
        if getattr(tool, 'name', None) is not None:  # Responses API FunctionTool: flat
            return {'type': 'function', 'function': _function_dict(tool)}
        return None
    elif not isinstance(getattr(tool, 'type', None), str):
        # an object of the tool's shape without a type string (vLLM reads tool.function.name alone)
        fn = getattr(tool, 'function', None)
        if isinstance(getattr(fn, 'name', None), str):
            return {'type': 'function', 'function': _function_dict(fn)}
        return None
    else:
        return None
    if isinstance(data.get('function'), dict):
        return data
    if data.get('type') == 'function' and 'name' in data:
        fn = {k: data[k] for k in ('name', 'description', 'parameters') if k in data}
        return {'type': 'function', 'function': fn}
    return None


# Type names outside JSON Schema that vLLM's schema conversion (vllm/tool_parsers/utils.py,
# coerce_to_schema_type) reads as JSON types; its tests pin "float" (test_qwen3coder_tool_parser.py).
_ENGINE_TYPE_NAMES: dict[str, str] = {
    **dict.fromkeys(('str', 'text', 'varchar', 'char', 'enum'), 'string'),
    **dict.fromkeys(('int', 'int32', 'int64', 'uint', 'uint32', 'uint64', 'long', 'short', 'unsigned'),
                    'integer'),
    **dict.fromkeys(('float', 'float32', 'float64', 'double'), 'number'),
    'bool': 'boolean', 'dict': 'object',
    **dict.fromkeys(('arr', 'list', 'sequence'), 'array'),
}
_JSON_TYPE_NAMES = frozenset(('string', 'integer', 'number', 'boolean', 'object', 'array', 'null'))


def _json_type_name(name: Any) -> Any:
    if not isinstance(name, str) or name in _JSON_TYPE_NAMES:
        return name
    key = name.strip().lower()
    return _ENGINE_TYPE_NAMES.get(key, key if key in _JSON_TYPE_NAMES else name)


def _engine_schema(schema: Any, depth: int = 0) -> Any:
    """``schema`` with the type names vLLM reads as JSON types written as those (a copy where one changes)."""
    if depth > 32:
        return schema
    if isinstance(schema, list):
        items = [_engine_schema(s, depth + 1) for s in schema]
        return schema if all(a is b for a, b in zip(items, schema)) else items
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] | None = None
    for key, value in schema.items():
        if key == 'type':
            new = [_json_type_name(t) for t in value] if isinstance(value, list) else _json_type_name(value)
            changed = new != value
        elif isinstance(value, (dict, list)) and key not in ('enum', 'const', 'default', 'examples'):
            new = _engine_schema(value, depth + 1)
            changed = new is not value
        else:
            continue
        if changed:
            if out is None:
                out = dict(schema)
            out[key] = new
    return schema if out is None else out


def _resolve_refs(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """``schema`` with its local references (``#/$defs/NAME``, ``#/definitions/NAME``) into ``root`` written
    out, as vLLM's dots parser reads them (a copy where one changes; a reference cycle stops at depth 16)."""
    if depth > 16:
        return schema
    if isinstance(schema, list):
        items = [_resolve_refs(s, root, depth + 1) for s in schema]
        return schema if all(a is b for a, b in zip(items, schema)) else items
    if not isinstance(schema, dict):
        return schema
    ref = schema.get('$ref')
    if isinstance(ref, str):
        section, _, name = ref.removeprefix('#/').partition('/')
        table = root.get(section) if ref.startswith('#/') and section in ('$defs', 'definitions') else None
        target = table.get(name) if isinstance(table, dict) and '/' not in name else None
        if isinstance(target, dict):
            merged = {**target, **{k: v for k, v in schema.items() if k != '$ref'}}
            return _resolve_refs(merged, root, depth + 1)
    out: dict[str, Any] | None = None
    for key, value in schema.items():
        if isinstance(value, (dict, list)) and key not in ('$defs', 'definitions', 'enum', 'const', 'default',
                                                           'examples'):
            new = _resolve_refs(value, root, depth + 1)
            if new is not value:
                if out is None:
                    out = dict(schema)
                out[key] = new
    return schema if out is None else out


def _engine_tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get('function')
    if not isinstance(fn, dict) or not isinstance(fn.get('parameters'), dict):
        return tool
    root = fn['parameters']
    params = _engine_schema(_resolve_refs(root, root) if ('$defs' in root or 'definitions' in root) else root)
    if params is fn['parameters']:
        return tool
    return {**tool, 'function': {**fn, 'parameters': params}}


def _lmparse_request(tools: Sequence[Any] | None, chat_template_kwargs: Any,
                     engine_types: bool = False, no_calls: bool = False) -> dict[str, Any]:
    """lmparse's request for these tools; ``engine_types`` (replace mode): the tools' schemas read as
    vLLM reads them (its extra type names ``"float"``, ``"int"``, ... as JSON types; local ``$ref``s resolved)."""
    dicts = [d for d in map(_tool_dict, tools or ()) if d is not None]
    if engine_types:
        dicts = [_engine_tool(d) for d in dicts]
    request: dict[str, Any] = {'model': 'vllm', 'messages': []}
    if dicts:
        request['tools'] = dicts
    if isinstance(chat_template_kwargs, dict) and chat_template_kwargs:
        request['chat_template_kwargs'] = chat_template_kwargs
    if no_calls:
        request['tool_choice'] = 'none'
    return request


def _no_calls(request: Any) -> bool:
    """``tool_choice="none"`` beside tools: vLLM's server drops the calls a parser returns, so the call text
    stays content, as vLLM's engine parsers suppress calls. (Without tools vLLM's request defaults to "none"
    and its parsers still read calls.)"""
    return getattr(request, 'tool_choice', None) == 'none' and bool(getattr(request, 'tools', None))


def _request_kwargs(kwargs: Any, request: Any) -> Any:
    """``kwargs`` (the construction's chat_template_kwargs) with the request's own over them; ``kwargs``
    itself when the request adds nothing."""
    ctk = getattr(request, 'chat_template_kwargs', None) if request is not None else None
    if not isinstance(ctk, dict) or not ctk or ctk == kwargs:
        return kwargs
    return dict(kwargs or {}) | ctk if isinstance(kwargs, dict) else dict(ctk)


def _forced_choice(request: Any) -> tuple[str, str | None] | None:
    """``('required', None)`` / ``('named', NAME)`` when ``tool_choice`` forces a call, else None (as vLLM's
    ``DelegatingParser._get_function_name`` reads the three named-choice types)."""
    choice = getattr(request, 'tool_choice', None)
    if choice == 'required':
        return 'required', None
    if isinstance(choice, ChatCompletionNamedToolChoiceParam):
        return 'named', choice.function.name
    if isinstance(choice, (ToolChoiceFunction, ToolChoiceCustom)):
        return 'named', choice.name
    return None


def _request_tools(request: Any) -> Sequence[Any] | None:
    return getattr(request, 'tools', None) if request is not None else None


def _engine_adjust(vllm_cls: Any, parser: Any, request: Any) -> Any:
    """``request`` adjusted as the vLLM parser class lmparse stands in for adjusts it (replace mode).

    vLLM's ``adjust_request`` implementations read the request and class attributes only (JSON-schema
    decoding for required/named tools where the class supports it, ``skip_special_tokens=False`` where
    the format's markers are special tokens): they run on a bare instance of that class carrying the
    parser's tokenizer. ``request`` unchanged when the class needs more of its own constructor's state.
    """
    if vllm_cls is None:
        return request
    state = {'model_tokenizer': parser.model_tokenizer, 'vocab': getattr(parser, 'vocab', {})}
    proxy: Any = object.__new__(vllm_cls)
    proxy.__dict__.update(state)
    if hasattr(parser, '_json_forced'):
        # The JSON-list forcing follows the flag the adapter parses by (the instance reports False to vLLM).
        proxy.supports_required_and_named = parser._json_forced
    engine_cls = getattr(vllm_cls, '_parser_engine_cls', None)
    if isinstance(engine_cls, type):
        # vLLM's parser-engine adapters hand the request to their engine's adjust_request (Mistral's
        # guided schema for a non-grammar tokenizer), which reads the tokenizer and the request too.
        engine: Any = object.__new__(engine_cls)
        engine.__dict__.update(state)
        proxy.__dict__['_parser_engine'] = engine
    try:
        return vllm_cls.adjust_request(proxy, request)
    except Exception:  # the class needs its own constructor's state: lmparse's declarations alone
        return request


def to_vllm_delta(messages: Sequence[tuple[Any, bool]]) -> DeltaMessage | None:
    """lmparse's deltas of one chunk as one vLLM DeltaMessage (None when they carry nothing).

    Built with only the fields that are set, as vLLM's own parsers' ``DeltaMessage(content=...)``
    (the server dumps with ``exclude_unset``); consecutive fragments of one call are joined into
    one DeltaToolCall. Compiled: :class:`lmparse.integrations.vllm_types.DeltaBuilder`.
    """
    return _DELTAS.build(list(messages))


class _Stream:
    """One lmparse response parser for one request (built by the tool adapter when the request has tools, else
    on first use); fed by one or both adapters."""

    __slots__ = ('reasoning', 'tool', 'tools', 'chat_template_kwargs', 'parser', 'finished', 'complete_calls',
                 'keep_undeclared', 'call_ends', 'fed', 'last_ids', 'last_delta', 'no_calls', 'last_text', 'held',
                 'held_mode')

    def __init__(self, reasoning: str | None, tool: str | None, tools: Sequence[Any] | None,
                 chat_template_kwargs: Any, keep_undeclared: bool = False, call_ends: bool = False) -> None:
        self.reasoning = reasoning
        self.tool = tool
        self.tools = tools
        self.chat_template_kwargs = chat_template_kwargs
        # Under vLLM's own parser names (replace mode) calls to tools the request does not declare are
        # kept, as vLLM's parsers keep them; under lmparse-<name>, lmparse's (LMDeploy's) rule drops them.
        self.keep_undeclared = keep_undeclared
        # Replace mode, reasoning parser alone: a call-open tag inside reasoning ends it (vLLM's Qwen3 parser
        # reads <tool_call> so), handing the call to vLLM's tool parser; lmparse-<name> keeps it reasoning text.
        self.call_ends = call_ends
        self.parser: Any = None
        self.finished = False
        # Tool calls of the last complete parse (non-streaming), read by the linked tool parser.
        self.complete_calls: list[Any] | None = None
        # Characters fed so far, and the last chunk's ids and delta (the reasoning parser's token helpers).
        self.fed = 0
        self.last_ids: Any = None
        self.last_delta: DeltaMessage | None = None
        self.no_calls = False  # the request's tool_choice is "none" (or forces vLLM's JSON format)
        # The last chunk's text, and what the parser held (and its mode) before it: a linked handover
        # re-reads that chunk when the request turns calls off (see handover).
        self.last_text = ''
        self.held = ''
        self.held_mode: str | None = None

    def new_parser(self) -> Any:
        cls = _configured_class(self.reasoning, self.tool, self.call_ends)
        parser = cls(_lmparse_request(self.tools, self.chat_template_kwargs, self.keep_undeclared, self.no_calls))
        if self.keep_undeclared:
            tool_parser = parser.tool_parser
            if tool_parser is not None:
                # No name filter (the schemas still type the values).
                tool_parser.keep_undeclared_calls = True
                if isinstance(tool_parser, XmlToolParser):
                    # vLLM's XML parsers end a value at the next parameter opener: lmparse only at one the
                    # grammar confirms (a declared parameter not given yet, on its own line).
                    tool_parser.next_arg_ends_value = True
                if getattr(type(tool_parser), 'vllm_value_rules', False):
                    # vLLM's DeepSeek DSML parsers convert each value to its parameter's schema type and read
                    # a lone undeclared 'arguments' / 'input' object as the arguments (lmparse.tools.dsml_values).
                    tool_parser.coerce_values_to_schema = True
                    tool_parser.unwrap_wrapper_arguments = True
        return parser

    def feed(self, text: str, token_ids: Sequence[int]) -> DeltaMessage | None:
        parser = self.parser
        if parser is None:
            parser = self.parser = self.new_parser()
        self.fed += len(text)
        self.last_ids = token_ids
        self.last_text = text
        delta = self.last_delta = _DELTAS.feed(parser, text, token_ids)
        return delta

    def finish(self) -> DeltaMessage | None:
        """Release what lmparse still holds (final=True), once."""
        if self.finished or self.parser is None:
            return None
        self.finished = True
        return to_vllm_delta(self.parser.stream_chunk('', (), final=True))

    @property
    def in_reasoning(self) -> bool:
        return self.parser is not None and self.parser.mode == 'reasoning'

    @property
    def reasoning_over(self) -> bool:
        """Past the reasoning phase: out of reasoning with some text settled (a leading close tag
        dropped, content emitted), not only holding what may still open reasoning."""
        parser = self.parser
        return parser is not None and parser.mode != 'reasoning' and self.fed > len(parser._pending)

    def parse_complete(self, text: str) -> tuple[str | None, list[Any] | None, str | None]:
        return self.new_parser().parse_complete(text)

    def handover(self, content: str | None, no_calls: bool) -> DeltaMessage | None:
        """The tool adapter's share of the chunk the linked reasoning adapter just fed (vLLM's hand-over from the
        reasoning phase, ``DelegatingParser.parse_delta``): vLLM keeps that chunk's reasoning, moves its content
        here (``content``) and replaces the rest of the delta by what this returns. ``no_calls``: from here on
        the request wants no native calls: the chunk is read again, from the state before it, by a parser
        that parses none, which goes on in the shared one's place."""
        if not no_calls:
            last = self.last_delta
            if last is None:
                return DeltaMessage(content=content) if content else None
            if content:
                last.content = content  # the delta vLLM took it from (it set content=None there)
            return last
        self.no_calls = True
        parser = self.parser = self.new_parser()
        if self.held_mode == 'reasoning' and parser.mode != 'reasoning':
            rcls = parser.reasoning_parser
            opener = rcls.get_reasoning_open_tag() if rcls is not None else None
            if opener:
                parser.stream_chunk(opener, None)  # back inside reasoning (the text before was reasoning)
        # Its reasoning for the chunk supersedes the shared parser's (a call opened in reasoning is text now).
        return to_vllm_delta(parser.stream_chunk(self.held + self.last_text, None))

    def without_calls(self) -> None:
        """Parse no calls from here on (tool_choice="none"); the parser built ahead is replaced before it reads."""
        if not self.no_calls:
            self.no_calls = True
            if self.fed == 0:
                self.parser = None


# The reasoning parser a composed vLLM Parser built last in this thread, offered to the tool parser
# it builds next (DelegatingParser builds the two back to back in Parser.__init__).
_offer = threading.local()


def _special_tokens(tokenizer: Any) -> set[str]:
    found: set[str] = set()
    for attr in ('all_special_tokens', 'additional_special_tokens'):
        found.update(getattr(tokenizer, attr, None) or ())
    added = getattr(tokenizer, 'get_added_vocab', None)
    if callable(added):
        try:
            found.update(added())
        except Exception:  # a tokenizer without added tokens: nothing to add
            pass
    return found


# (id(tokenizer), tags) -> (tokenizer, ReasoningTagIds): encoding the tags per request would cost more
# than the request's parsing. Entries hold the tokenizer itself, checked on every read.
_tag_ids_cache: dict[tuple[int, str | None, str | None, str | None], tuple[Any, ReasoningTagIds]] = {}


def _encoded(tokenizer: Any, tag: str) -> list[int] | None:
    encode = getattr(tokenizer, 'encode', None)
    if encode is None:
        return None
    try:
        try:
            return list(encode(tag, add_special_tokens=False))
        except TypeError:  # an encode without that keyword
            return list(encode(tag))
    except Exception:  # an encode that cannot take this text alone: the vocab entry only
        return None


def _reasoning_tag_ids(tokenizer: Any, open_token: str | None, open_tag: str | None,
                       close_tag: str | None) -> ReasoningTagIds:
    """The reasoning tags as token-id sequences: each tag's vocab entry and what it encodes to."""
    key = (id(tokenizer), open_token, open_tag, close_tag)
    entry = _tag_ids_cache.get(key)
    if entry is not None and entry[0] is tokenizer:
        return entry[1]
    vocab = tokenizer.get_vocab() if tokenizer is not None and hasattr(tokenizer, 'get_vocab') else {}
    seqs: list[list[list[int]]] = [[], []]
    for kind, tags in ((0, (open_token, open_tag)), (1, (close_tag,))):
        for tag in dict.fromkeys(t for t in tags if t):
            if isinstance(vocab.get(tag), int):
                seqs[kind].append([vocab[tag]])
            ids = _encoded(tokenizer, tag) if tokenizer is not None else None
            if ids and all(isinstance(i, int) for i in ids):
                seqs[kind].append(ids)
    tag_ids = ReasoningTagIds(seqs[0], seqs[1])
    if len(_tag_ids_cache) > 64:
        _tag_ids_cache.clear()
    _tag_ids_cache[key] = (tokenizer, tag_ids)
    return tag_ids


class LmparseReasoningParser(VllmReasoningParser):
    """vLLM ReasoningParser backed by lmparse; concrete classes set ``lmparse_reasoning``."""

    lmparse_reasoning: str = 'default'
    engine_based_streaming = True
    # Replace mode: the vLLM class this one stands in for (its request adjustment applies).
    vllm_class: type | None = None

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._chat_template_kwargs = kwargs.get('chat_template_kwargs')
        self._ctor_kwargs = kwargs
        self._linked: LmparseToolParser | None = None
        self._stream = self._own_stream()
        # Set by the first call vLLM's Parser makes on it: a linked tool parser whose reasoning parser was
        # never called before the tool parser's own first call was linked to a stale one (see _check_link).
        self._touched = False
        rcls = lmparse.ReasoningParserManager.get(self.lmparse_reasoning)
        ctk = self._chat_template_kwargs
        if isinstance(ctk, dict) and ctk and all(isinstance(k, str) for k in ctk):
            # The dialect's check of its switches (K2 Horizon's reasoning_effort) at construction, as vLLM's
            # parsers raise there; lmparse would otherwise raise only on the first chunk.
            rcls(**ctk)
        self._open_tag = rcls.reasoning_open_token or rcls.get_reasoning_open_tag()
        self._close_tag = rcls.get_reasoning_close_tag()
        self._tags = _reasoning_tag_ids(tokenizer, self._open_tag, rcls.get_reasoning_open_tag(), self._close_tag)
        # Replace mode: a call-open tag ends reasoning (call_open_tag), in the token helpers too.
        call_tag = rcls.call_open_tag if self.vllm_class is not None else None
        self._call_tags = _reasoning_tag_ids(tokenizer, None, None, call_tag) if call_tag else None
        self._inside: bool | None = None  # _starts_in_reasoning, once
        self._reads: bool | None = None  # _reads_reasoning, once
        self._handed = False  # linked: vLLM's reasoning phase ended, the tool adapter streams the rest
        _offer.reasoning = self

    # -- linking (see the module docstring) --

    def _link(self, tool: LmparseToolParser) -> None:
        self._linked = tool
        self._stream = tool._stream = _Stream(self.lmparse_reasoning, tool.lmparse_tool, tool._tools,
                                              self._chat_template_kwargs, tool.vllm_class is not None)

    def _unlink(self) -> None:
        self._linked = None
        self._stream = self._own_stream()

    def _own_stream(self) -> _Stream:
        return _Stream(self.lmparse_reasoning, None, None, self._chat_template_kwargs,
                       call_ends=self.vllm_class is not None)

    # -- token ids (prompt state, structured outputs, usage) --

    @property
    def reasoning_start_str(self) -> str | None:
        return self._open_tag

    @property
    def reasoning_end_str(self) -> str | None:
        return self._close_tag

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._touched = True

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """True when the last reasoning tag in ``input_ids`` is the close tag (each tag as its vocab
        entry or as the ids it encodes to: MiniMax M3's ``</mm:think>`` may come as several tokens)."""
        self._touched = True
        kind, end = self._tags.last(input_ids)
        if self._call_tags is not None and self._call_tags.last(input_ids)[1] > end:
            return True  # a call opened after the last reasoning tag (vLLM's K2 Horizon / Qwen3 parsers)
        return kind == 2

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Any) -> bool:
        """Once this parser has streamed text: whether the stream is past reasoning (content began, or
        the close tag or a leading stray one was read). Else (vLLM's structured-output reasoner, fed
        ids only) whether a close tag ends in ``delta_ids`` (one begun in the ids before counts)."""
        stream = self._stream
        if stream.fed:
            return stream.reasoning_over
        tags = self._tags
        if not tags.has_close:
            return False
        n = len(delta_ids)
        return n > 0 and tags.close_in_tail(input_ids, n + tags.longest_close - 1)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        """The content ids of ``input_ids``: those after the last close tag; with no tag, all of them
        when output starts as content, none when it starts in reasoning. The chunk this parser
        just streamed: the ids its content decodes from (a close tag split over tokens is not content),
        except at a linked hand-over, where vLLM passes them to the linked tool adapter, which does not read
        them (the shared parser has the chunk): the tags decide, without decoding."""
        stream = self._stream
        if not self._handed and stream.fed and stream.last_ids is not None and stream.reasoning_over and (
                stream.last_ids is input_ids or list(stream.last_ids) == list(input_ids)):
            found = self._streamed_content_ids(list(input_ids), stream.last_delta)
            if found is not None:
                return found
        kind, end = self._tags.last(input_ids)
        if kind == 2:
            return list(input_ids[end:])
        if kind == 1 or self._starts_in_reasoning():
            return []
        return list(input_ids)

    def _streamed_content_ids(self, ids: list[int], delta: DeltaMessage | None) -> list[int] | None:
        content = delta.content if delta is not None else None
        if not content:
            return []
        decode = getattr(self.model_tokenizer, 'decode', None)
        if decode is None:
            return None
        for k in range(len(ids), -1, -1):  # the shortest suffix that decodes to the content
            try:
                text = decode(ids[k:])
            except Exception:  # a tokenizer that cannot decode these ids alone
                return None
            if text == content:
                return ids[k:]
            if len(text) > len(content):
                break
        return None

    def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
        """Tokens between the reasoning tags, the tags' own not counted (generation may start inside reasoning);
        none when the request turns thinking off (the parser then reads no reasoning, as vLLM's delegate)."""
        if not self._tags.has_close or not self._reads_reasoning():
            return 0
        return self._tags.count_inside(token_ids, self._starts_in_reasoning())

    def _reads_reasoning(self) -> bool:
        """Whether this request's parser reads a tagged block as reasoning (not when a switch turns thinking
        off: the tags' text is content then), once."""
        reads = self._reads
        if reads is None:
            block = (self._open_tag or '') + 'x' + self._close_tag
            _, _, reasoning = self._own_stream().parse_complete(block)
            reads = self._reads = reasoning is not None
        return reads

    def _starts_in_reasoning(self) -> bool:
        inside = self._inside
        if inside is None:
            rcls = lmparse.ReasoningParserManager.get(self.lmparse_reasoning)
            ctk = self._chat_template_kwargs if isinstance(self._chat_template_kwargs, dict) else {}
            inside = self._inside = bool(rcls(**ctk).starts_in_reasoning_mode()) and ctk.get('enable_thinking') is not False
        return inside

    # -- request --

    def adjust_request(self, request: Any) -> Any:
        if (hasattr(request, 'skip_special_tokens')
                and {self._open_tag, self._close_tag} & _special_tokens(self.model_tokenizer)):
            request.skip_special_tokens = False  # the tags reach the parser only as text
        return _engine_adjust(self.vllm_class, self, request)

    # -- parsing --

    def has_engine_confirmed_reasoning_end(self) -> bool:
        stream = self._stream
        parser = stream.parser
        if parser is None:
            return False
        if self._linked is None:
            return parser.mode != 'reasoning'
        # Linked: vLLM's reasoning phase ends once the shared parser is past reasoning (reasoning_over), so
        # that the later chunks reach the tool adapter, which vLLM gives the request (tool_choice). The shared
        # parser still routes every chunk: reasoning re-opened later streams as reasoning from there.
        mode = parser.mode
        pending = parser._pending
        if (mode != 'reasoning' and stream.fed > len(pending)) or (
                (last := stream.last_delta) is not None and last.tool_calls):
            # (a call opened and closed inside reasoning in this chunk: the tool adapter, with the request, has it)
            self._handed = True
            return True
        stream.held = pending
        stream.held_mode = mode
        return False

    def extract_reasoning_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                    previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                    delta_token_ids: Sequence[int]) -> DeltaMessage | None:
        self._touched = True
        return self._stream.feed(delta_text, delta_token_ids)

    def finish_streaming(self) -> DeltaMessage | None:
        if self._handed:
            return None  # vLLM's hand-over: the shared parser goes on with the tool adapter
        return self._stream.finish()

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        self._touched = True
        stream = self._stream
        # The request's switches (enable_thinking=False, ...) decide where this response starts.
        kwargs = _request_kwargs(stream.chat_template_kwargs, request)
        linked = self._linked
        no_calls = stream.tool is not None and (_no_calls(request) or (
            linked is not None and linked._json_forced and _forced_choice(request) is not None))
        if no_calls or kwargs is not stream.chat_template_kwargs:
            stream = _Stream(stream.reasoning, stream.tool, stream.tools, kwargs, stream.keep_undeclared,
                             stream.call_ends)
            stream.no_calls = no_calls
        content, calls, reasoning = stream.parse_complete(model_output)
        self._stream.complete_calls = calls
        return reasoning, content


class LmparseToolParser(ParserEngineToolAdapter):
    """vLLM ToolParser backed by lmparse; concrete classes set ``lmparse_tool``.

    A ``ParserEngineToolAdapter`` subclass only so that vLLM's ``Parser`` passes it the same
    construction arguments as the reasoning parser (``chat_template_kwargs``, ``model_config``);
    it runs no vLLM parser engine.
    """

    lmparse_tool: str = 'hermes'
    engine_based_streaming = True
    # The class's flag (replace mode: vLLM's class's) says whether vLLM's JSON-list format applies to
    # tool_choice="required" / a named tool; each instance reports False to vLLM's Parser so that those
    # requests reach this adapter with the request (see _forced_delta), and keeps the flag as _json_forced.
    supports_required_and_named = False
    vllm_class: type | None = None

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None, **kwargs: Any) -> None:
        VllmToolParser.__init__(self, tokenizer, tools)
        self._json_forced = bool(type(self).supports_required_and_named)
        self.supports_required_and_named = False
        model_config = kwargs.get('model_config')
        self._id_type = get_tool_call_id_type(model_config) if model_config is not None else 'random'
        self._forced: str | None = None  # 'required' / 'named' once a request forcing vLLM's JSON format is seen
        self._forced_name: str | None = None
        self._forced_text = ''
        self._name_sent = False  # a forced call announced (its name sent)
        self._call_idx = 0
        self._tools = tools
        self._chat_template_kwargs = kwargs.get('chat_template_kwargs')
        self._skip_reasoning = False
        self._stream = _Stream(None, self.lmparse_tool, tools, self._chat_template_kwargs,
                               self.vllm_class is not None)
        self._linked: LmparseReasoningParser | None = None
        offered = getattr(_offer, 'reasoning', None)
        _offer.reasoning = None
        # The offered reasoning parser belongs to this tool parser's Parser when both got the very
        # same construction arguments (vLLM passes one kwargs set to both); a stale offer does not.
        if (offered is not None and offered._linked is None and offered._stream.parser is None
                and offered._ctor_kwargs.keys() == kwargs.keys()
                and all(offered._ctor_kwargs[k] is kwargs[k] for k in kwargs)):
            offered._link(self)
            self._linked = offered
        self._link_checked = False
        if self._stream.tools:
            # Built here, as vLLM's parsers do their set-up in the constructor (the server's "parser
            # creation" step), not in the first chunk; _check_link may still replace it.
            self._stream.parser = self._stream.new_parser()

    @property
    def skip_reasoning_parsing(self) -> bool:
        return self._skip_reasoning

    @skip_reasoning_parsing.setter
    def skip_reasoning_parsing(self, value: bool) -> None:
        # vLLM sets it when its Parser has no reasoning parser: then no offered one belongs to us.
        self._skip_reasoning = value
        if value:
            self._unlink()

    def _unlink(self) -> None:
        if self._linked is not None:
            self._linked._unlink()
            self._linked = None
            self._stream = _Stream(None, self.lmparse_tool, self._tools, self._chat_template_kwargs,
                                   self.vllm_class is not None)

    def _check_link(self) -> None:
        # vLLM's Parser calls its reasoning parser (set_prompt_token_ids / is_reasoning_end /
        # extract_reasoning*) before it first calls the tool parser; a linked reasoning parser that
        # was never called is not this Parser's (its own is one of vLLM's): parse alone.
        linked = self._linked
        if linked is not None and not linked._touched:
            self._unlink()

    def adjust_request(self, request: Any) -> Any:
        tcls = lmparse.ToolParserManager.get(self.lmparse_tool)
        # The dialect's own check of the request (a template switch it cannot serve), before generation as
        # vLLM's parsers raise from adjust_request: _engine_adjust below swallows the vLLM class's errors.
        validate = getattr(tcls, 'validate_request', None)
        if validate is not None:
            validate(request)
        settings = dict(tcls.request_settings or {})
        if request.tools and getattr(request, 'tool_choice', None) != 'none':
            settings.update(tcls.request_settings_with_tools or {})
        for name, value in settings.items():
            if hasattr(request, name):
                setattr(request, name, value)
        return _engine_adjust(self.vllm_class, self, request)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> DeltaMessage | None:
        if not self._link_checked:
            return self._first_delta(delta_text, delta_token_ids, request)
        if self._forced is None:
            return self._stream.feed(delta_text, delta_token_ids)
        return self._forced_delta(self._stream.feed(delta_text, delta_token_ids))

    def _first_delta(self, delta_text: str, delta_token_ids: Sequence[int], request: Any) -> DeltaMessage | None:
        """The first call: the request is seen (tool_choice, tools)."""
        self._link_checked = True
        self._check_link()
        stream = self._stream
        if stream.parser is None and not stream.tools:
            stream.tools = _request_tools(request)  # vLLM passes the request's tools per call
        kwargs = _request_kwargs(stream.chat_template_kwargs, request)
        if kwargs is not stream.chat_template_kwargs and not stream.fed:
            # the request's template switches (K2 Horizon's tool_call_format) pick the layout
            stream.chat_template_kwargs = kwargs
            if stream.parser is not None:
                stream.parser = stream.new_parser()
        forced = _forced_choice(request) if self._json_forced else None
        no_calls = forced is not None or _no_calls(request)
        linked = self._linked
        if linked is not None and linked._handed and stream.fed:
            # vLLM's hand-over: the linked reasoning adapter fed this chunk already; delta_text is its content.
            delta = stream.handover(delta_text, no_calls)
        else:
            if no_calls:
                stream.without_calls()
            delta = stream.feed(delta_text, delta_token_ids)
        if forced is None:
            return delta
        self._forced, self._forced_name = forced
        if self._id_type == 'kimi_k2':
            self._call_idx = count_history_tool_calls(request)
        return self._forced_delta(delta)

    def _forced_delta(self, delta: DeltaMessage | None) -> DeltaMessage | None:
        """The content lmparse streamed (reasoning kept) read as vLLM reads the output it forces for
        tool_choice="required" (a JSON list of ``{"name", "parameters"}``) or a named tool (the arguments):
        by vLLM's own helpers (vllm/tool_parsers/streaming.py), as ``DelegatingParser._extract_tool_calls_streaming``
        calls them with the accumulated text, with vLLM's call ids (``tool_call_id_type``, the history count)."""
        if delta is None:
            return None
        content = delta.content
        reasoning = delta.reasoning
        out: DeltaMessage | None = None
        if content:
            if self._forced == 'required':
                previous = self._forced_text
                current = self._forced_text = previous + content
                out, announced = extract_required_tool_call_streaming(
                    previous_text=previous, current_text=current, tool_call_idx=self._call_idx,
                    tool_call_id_type=self._id_type)
                self._name_sent = self._name_sent or announced
            else:
                out, self._name_sent = extract_named_tool_call_streaming(
                    delta_text=content, function_name=self._forced_name or '', function_name_returned=self._name_sent,
                    tool_call_idx=self._call_idx, tool_call_id_type=self._id_type, tokenizer=self.model_tokenizer)
            if out is not None and out.tool_calls:
                self._call_idx += sum(tc.id is not None for tc in out.tool_calls)
        if reasoning:
            if out is None:
                return DeltaMessage(reasoning=reasoning)
            out.reasoning = reasoning
        return out

    def finish_streaming(self) -> DeltaMessage | None:
        if self._forced is None:
            return self._stream.finish()
        delta = self._forced_delta(self._stream.finish())
        if self._forced == 'required' and not self._name_sent and self._forced_text.strip():
            # No call in the text (vLLM's JSON path drops it): it stays content, as the whole response's parse keeps it.
            if delta is None:
                return DeltaMessage(content=self._forced_text)
            delta.content = self._forced_text
        return delta

    def get_remaining_unstreamed_args(self) -> str:
        return ''  # lmparse streams every argument fragment it parsed

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        self._check_link()
        stream = self._stream
        forced = _forced_choice(request) if self._json_forced else None
        if forced is not None:
            stream.complete_calls = None
            return self._forced_calls(model_output, request, forced)
        calls: list[Any] | None
        content: str | None
        if self._linked is not None and stream.complete_calls is not None:
            calls, content = stream.complete_calls, model_output  # parsed with the reasoning, in one pass
            stream.complete_calls = None
        else:
            stream = _Stream(None, self.lmparse_tool, self._tools or _request_tools(request),
                             _request_kwargs(self._chat_template_kwargs, request), self.vllm_class is not None)
            stream.no_calls = _no_calls(request)
            content, calls, _ = stream.parse_complete(model_output)
        tool_calls = [ToolCall(id=c.id, type='function',
                               function=FunctionCall(name=c.function.name, arguments=c.function.arguments))
                      for c in calls or ()]
        return ExtractedToolCallInformation(tools_called=bool(tool_calls), tool_calls=tool_calls,
                                            content=content or None)


    def _forced_calls(self, model_output: str, request: Any,
                      forced: tuple[str, str | None]) -> ExtractedToolCallInformation:
        """A whole response in the format vLLM forces for tool_choice="required" / a named tool, parsed as
        ``DelegatingParser._extract_tool_calls`` parses it (vLLM's ``FunctionDefinition`` list; the named tool's
        arguments); text that parses as no call stays content (vLLM drops it for "required")."""
        named: list[tuple[str, str]] = []
        if forced[0] == 'named':
            if model_output.strip():
                named.append((forced[1] or '', model_output))
        else:
            with contextlib.suppress(ValidationError):
                named = [(d.name, json.dumps(d.parameters, ensure_ascii=False))
                         for d in _FUNCTION_LIST.validate_json(model_output or '[]')]
        if not named:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output or None)
        if self._id_type == 'kimi_k2':
            idx = count_history_tool_calls(request)
            calls = [ToolCall(id=make_tool_call_id(self._id_type, name, idx + i), type='function',
                              function=FunctionCall(name=name, arguments=args)) for i, (name, args) in enumerate(named)]
        else:
            # Random ids deferred, as vLLM's JSON path leaves them: the server makes them
            # (message_assembly._to_tool_calls: ``tc.id or make_tool_call_id()``).
            calls = [ToolCall.model_construct(id=None, type='function', function=FunctionCall(name=name, arguments=args))
                     for name, args in named]
        return ExtractedToolCallInformation(tools_called=True, tool_calls=calls, content=None)


_FUNCTION_LIST = TypeAdapter(list[FunctionDefinition])


def _class_name(kind: str, name: str) -> str:
    return 'Lmparse' + ''.join(p.capitalize() for p in name.replace('-', '_').replace('.', '_').split('_')) + kind


_tool_classes: dict[tuple[str, bool], type[LmparseToolParser]] = {}
_reasoning_classes: dict[tuple[str, bool], type[LmparseReasoningParser]] = {}
# What an lmparse class standing in for a vLLM tool parser takes from it: how vLLM's Parser constrains
# decoding for it (the structural-tag model of vLLM's registry, the strict level, whether vLLM's
# JSON-list path handles tool_choice="required"/named for it).
_TOOL_ENGINE_ATTRS = ('structural_tag_model', 'default_tool_strict_level', 'supports_required_and_named')


def _vllm_class(manager: Any, name: str) -> type | None:
    """vLLM's own class for ``name`` (before lmparse registers over it), or None when it does not import."""
    try:
        cls = manager.get_tool_parser(name) if manager is ToolParserManager else manager.get_reasoning_parser(name)
    except Exception:  # an optional dependency of that vLLM parser is missing
        return None
    return None if cls.__module__.startswith('lmparse.') else cls


def _tool_class(name: str, engine: bool = False) -> type[LmparseToolParser]:
    """lmparse's class for tool dialect ``name``; ``engine``: the one registered under vLLM's name."""
    cls = _tool_classes.get((name, engine))
    if cls is None:
        attrs: dict[str, Any] = {'lmparse_tool': name, '__module__': __name__}
        if engine:
            vllm_cls = _vllm_class(ToolParserManager, name)
            attrs['vllm_class'] = vllm_cls
            if vllm_cls is not None:
                attrs.update({a: getattr(vllm_cls, a) for a in _TOOL_ENGINE_ATTRS})
        suffix = 'ToolParser' if not engine else 'VllmToolParser'
        cls = _tool_classes[(name, engine)] = type(_class_name(suffix, name), (LmparseToolParser,), attrs)
    return cls


# Reasoning names whose start vLLM's own prompt renderer decides differently from LMDeploy's (lmparse's
# default): vLLM renders DeepSeek V4 prompts in thinking mode unless a switch is off or reasoning_effort is
# "none" (vllm/tokenizers/deepseek_v4.py, vllm/parser/deepseek_v4.py), which lmparse's deepseek_v41 reasoning
# dialect (the same tags) reads; LMDeploy and SGLang render V4 in chat mode unless thinking is asked for.
VLLM_REASONING_NAMES = {'deepseek_v4': 'deepseek_v41'}


def _reasoning_class(name: str, engine: bool = False) -> type[LmparseReasoningParser]:
    cls = _reasoning_classes.get((name, engine))
    if cls is None:
        dialect = VLLM_REASONING_NAMES.get(name, name) if engine else name
        attrs: dict[str, Any] = {'lmparse_reasoning': dialect, '__module__': __name__}
        if engine:
            attrs['vllm_class'] = _vllm_class(ReasoningParserManager, name)
        suffix = 'ReasoningParser' if not engine else 'VllmReasoningParser'
        cls = _reasoning_classes[(name, engine)] = type(_class_name(suffix, name), (LmparseReasoningParser,), attrs)
    return cls


# ---- lmparse-auto: the dialect derived from the served model's chat template (lmparse.templates) ----

AUTO = PREFIX + 'auto'


def _auto_names(tokenizer: Any) -> tuple[str | None, str | None]:
    """(reasoning, tool) lmparse names of the dialect derived from the tokenizer's chat template.

    vLLM builds the composed parser once with the served tokenizer at start-up
    (``ParserManager.validate_parser_tokenizer``), so a template lmparse cannot
    derive stops the server there, with the reason.
    """
    from lmparse.templates import TemplateDerivationError, register_derived

    try:
        return register_derived(tokenizer)
    except (TemplateDerivationError, ImportError) as err:
        raise ValueError(f'{AUTO}: {err}') from None


class LmparseAutoReasoningParser(LmparseReasoningParser):
    """``lmparse-auto``: the reasoning markers derived from the served model's chat template."""

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        reasoning, _ = _auto_names(tokenizer)
        if reasoning is None:
            raise ValueError(f'{AUTO}: the chat template renders no reasoning; drop --reasoning-parser {AUTO}')
        self.lmparse_reasoning = reasoning
        super().__init__(tokenizer, *args, **kwargs)


class LmparseAutoToolParser(LmparseToolParser):
    """``lmparse-auto``: the tool-call syntax derived from the served model's chat template."""

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None, **kwargs: Any) -> None:
        _, tool = _auto_names(tokenizer)
        if tool is None:
            raise ValueError(f'{AUTO}: the chat template renders no tool calls; drop --tool-call-parser {AUTO}')
        self.lmparse_tool = tool
        super().__init__(tokenizer, tools, **kwargs)


def registered_names() -> tuple[list[str], list[str]]:
    """(tool names, reasoning names) this module registers with vLLM without replacing: lmparse-<name>."""
    # Not registered: classes the served tokenizer decides (lmparse's hf / response_template read its
    # response_template metadata, which this module does not hand to lmparse).
    return ([PREFIX + n for n in lmparse.ToolParserManager.names()
             if not needs_tokenizer(lmparse.ToolParserManager.get(n))],
            [PREFIX + n for n in lmparse.ReasoningParserManager.names()
             if not needs_tokenizer(lmparse.ReasoningParserManager.get(n))])


def register(replace: bool | None = None) -> None:
    """Register every lmparse dialect with vLLM as ``lmparse-<name>``; with ``replace`` also under the
    vLLM names lmparse shares (default: the ``LMPARSE_VLLM_REPLACE`` environment variable is ``1``).

    Idempotent. This is the ``vllm.general_plugins`` entry point and runs on import of this module.
    """
    if replace is None:
        replace = os.environ.get('LMPARSE_VLLM_REPLACE', '') == '1'
    tools, reasonings = registered_names()
    for name in tools:
        ToolParserManager.register_module(name, force=True, module=_tool_class(name[len(PREFIX):]))
    for name in reasonings:
        ReasoningParserManager.register_module(name, force=True, module=_reasoning_class(name[len(PREFIX):]))
    ToolParserManager.register_module(AUTO, force=True, module=LmparseAutoToolParser)
    ReasoningParserManager.register_module(AUTO, force=True, module=LmparseAutoReasoningParser)
    if replace:
        vllm_tools = set(ToolParserManager.list_registered())
        vllm_reasoning = set(ReasoningParserManager.list_registered())
        for name in lmparse.ToolParserManager.names():
            if name in vllm_tools and name not in NOT_REPLACED:
                ToolParserManager.register_module(name, force=True, module=_tool_class(name, engine=True))
        for name in lmparse.ReasoningParserManager.names():
            if name in vllm_reasoning and name not in NOT_REPLACED:
                ReasoningParserManager.register_module(name, force=True,
                                                       module=_reasoning_class(name, engine=True))


register()
