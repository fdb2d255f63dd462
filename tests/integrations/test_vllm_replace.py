"""Opt-in (LMPARSE_VLLM=1, the peers venv): what lmparse's classes under vLLM's own names take from vLLM.

The classes are built as ``register(replace=True)`` builds them, without registering them (the
process's vLLM registry stays vLLM's for the other lanes). The vLLM suite lane
(``tools/run_vllm_suite.py``) runs vLLM's whole parser suite against them.
"""
from __future__ import annotations

import json
import os
from typing import Any

import pytest

if os.environ.get('LMPARSE_VLLM') != '1':
    pytest.skip('opt-in: set LMPARSE_VLLM=1 (needs vllm==0.33.0: tools/install_peers.sh)', allow_module_level=True)
pytest.importorskip('vllm')

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.tool_parsers import ToolParserManager  # noqa: E402

from lmparse.integrations import vllm as integ  # noqa: E402

TOOLS = [{'type': 'function', 'function': {'name': 'get_weather', 'parameters': {
    'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}}}]
CALL = '<tool_call>\n{"name": "%s", "arguments": {"city": "Paris"}}\n</tool_call>'


class Vocab:
    def __init__(self, tokens: dict[str, int]) -> None:
        self.tokens = tokens

    def get_vocab(self) -> dict[str, int]:
        return dict(self.tokens)


TOKENIZER = Vocab({'<tool_call>': 10, '</tool_call>': 11, '<think>': 12, '</think>': 13})


def request(**fields: Any) -> ChatCompletionRequest:
    return ChatCompletionRequest(model='m', messages=[], **fields)


def test_engine_class_takes_vllm_declarations() -> None:
    vllm_cls = ToolParserManager.get_tool_parser('hermes')
    if vllm_cls.__module__.startswith('lmparse.'):
        pytest.skip('vLLM names replaced in this process')
    cls = integ._tool_class('hermes', engine=True)
    assert cls.vllm_class is vllm_cls
    for attr in integ._TOOL_ENGINE_ATTRS:
        assert getattr(cls, attr) == getattr(vllm_cls, attr)
    own = integ._tool_class('hermes')
    assert own.vllm_class is None and own.structural_tag_model is None and own is not cls


def test_required_gets_vllms_structural_tag() -> None:
    cls = integ._tool_class('hermes', engine=True)
    parser = cls(TOKENIZER)
    req = request(tools=TOOLS, tool_choice='required')
    tag = parser.get_structural_tag(req)
    vllm_tag = ToolParserManager.get_tool_parser('hermes')(TOKENIZER).get_structural_tag(req)
    assert tag is not None
    assert json.dumps(tag.model_dump(), sort_keys=True) == json.dumps(vllm_tag.model_dump(), sort_keys=True)


def test_adjust_request_as_vllm() -> None:
    for engine in (True, False):
        parser = integ._tool_class('hermes', engine=engine)(TOKENIZER)
        req = parser.adjust_request(request(tools=TOOLS, tool_choice='auto'))
        assert req.skip_special_tokens is False
    vllm_req = ToolParserManager.get_tool_parser('hermes')(TOKENIZER).adjust_request(
        request(tools=TOOLS, tool_choice='auto'))
    assert vllm_req.skip_special_tokens is False


@pytest.mark.parametrize('engine,kept', [(True, True), (False, False)])
def test_undeclared_tool(engine: bool, kept: bool) -> None:
    cls = integ._tool_class('hermes', engine=engine)
    out = cls(TOKENIZER, TOOLS).extract_tool_calls(CALL % 'send_mail', request(tools=TOOLS))
    assert [c.function.name for c in out.tool_calls] == (['send_mail'] if kept else [])
    declared = cls(TOKENIZER, TOOLS).extract_tool_calls(CALL % 'get_weather', request(tools=TOOLS))
    assert [json.loads(c.function.arguments) for c in declared.tool_calls] == [{'city': 'Paris'}]


def test_tools_from_the_request() -> None:
    parser = integ._tool_class('hermes')(TOKENIZER)  # built without tools, as vLLM's tests build parsers
    out = parser.extract_tool_calls(CALL % 'get_weather', request(tools=TOOLS))
    assert [c.function.name for c in out.tool_calls] == ['get_weather']
    streamed = integ._tool_class('hermes')(TOKENIZER)
    names = []
    for piece in ('<tool_call>\n{"name": "get_', 'weather", "arguments": {"city": "Paris"}}\n</tool_call>'):
        delta = streamed.extract_tool_calls_streaming('', '', piece, [], [], [], request(tools=TOOLS))
        for tc in (delta.tool_calls if delta is not None else None) or ():
            if tc.function is not None and tc.function.name:
                names.append(tc.function.name)
    assert names == ['get_weather']


def test_extract_reasoning_reads_request_switches() -> None:
    cls = integ._reasoning_class('qwen3')
    text = 'plain answer'
    thinking = cls(TOKENIZER).extract_reasoning(text, request(chat_template_kwargs={'enable_thinking': True}))
    off = cls(TOKENIZER).extract_reasoning(text, request(chat_template_kwargs={'enable_thinking': False}))
    assert off == (None, 'plain answer')
    assert thinking == ('plain answer', None)


def test_deltas_built_as_vllm_constructs_them() -> None:
    """The plugin's compiled DeltaMessage equals what vLLM's own constructors build from the same fields."""
    import random

    from lmparse.integrations import vllm as plugin
    from lmparse.pydantic_state import same_instance
    from tests.test_engine_types import _public, _random_chunk
    from vllm.entrypoints.generate.base.protocol import DeltaMessage

    builder = plugin._DELTAS
    assert builder.fast and builder.DeltaMessage is DeltaMessage
    rng = random.Random(3)
    for _ in range(300):
        chunk = _random_chunk(rng)
        direct = builder.build(chunk)
        if direct is not None:
            assert same_instance(direct, _public(builder, chunk))


XML_TOOLS = [{'type': 'function', 'function': {'name': 'test_types', 'parameters': {'type': 'object', 'properties': {
    'f': {'type': 'float'}, 'i': {'type': 'int64'}, 'b': {'type': 'bool'}, 'd': {'type': 'dict'},
    's': {'type': 'str'}, 'code': {'type': 'string'}, 'n': {'type': ['Double', 'null']},
    'nested': {'type': 'object', 'properties': {'q': {'type': 'long'}}}}}}}]
XML_CALL = ('<tool_call>\n<function=test_types>\n<parameter=f>\n3.14\n</parameter>\n<parameter=i>\n42\n</parameter>\n'
            '<parameter=b>\ntrue\n</parameter>\n<parameter=d>\n{"k": 1}\n</parameter>\n<parameter=s>\n007\n'
            '</parameter>\n<parameter=code>\n1.50\n</parameter>\n<parameter=n>\n2.5\n</parameter>\n'
            '<parameter=nested>\n{"q": 5}\n</parameter>\n</function>\n</tool_call>')


@pytest.mark.parametrize('engine', [True, False])
def test_engine_type_names(engine: bool) -> None:
    """Replace mode reads the type names vLLM's schema conversion takes for JSON types ("float", "int64", ...);
    lmparse's own names keep LMDeploy's rule (an unknown type name: the text as written)."""
    cls = integ._tool_class('qwen3_coder', engine=engine)
    out = cls(TOKENIZER, XML_TOOLS).extract_tool_calls(XML_CALL, request(tools=XML_TOOLS))
    args = json.loads(out.tool_calls[0].function.arguments)
    # typed string: digits stay the string written
    assert args['s'] == '007' and args['code'] == '1.50'
    if engine:
        assert args == {'f': 3.14, 'i': 42, 'b': True, 'd': {'k': 1}, 's': '007', 'code': '1.50', 'n': 2.5,
                        'nested': {'q': 5}}
    else:
        assert args['f'] == '3.14' and args['i'] == '42' and args['b'] == 'true'
    # the request's own schemas are not changed
    assert XML_TOOLS[0]['function']['parameters']['properties']['f'] == {'type': 'float'}


def test_engine_type_names_streamed() -> None:
    from tests.streaming import chunkings

    cls = integ._tool_class('qwen3_coder', engine=True)
    expected = None
    for label, chunks in chunkings(XML_CALL, ('<tool_call>', '<function=', '<parameter=', '</parameter>',
                                              '</function>', '</tool_call>')):
        parser = cls(TOKENIZER, XML_TOOLS)
        args, prev = '', ''
        for piece in chunks:
            delta = parser.extract_tool_calls_streaming(prev, prev + piece, piece, [], [], [],
                                                        request(tools=XML_TOOLS))
            prev += piece
            for tc in (delta.tool_calls if delta is not None else None) or ():
                args += (tc.function.arguments or '') if tc.function is not None else ''
        tail = parser.finish_streaming()
        for tc in (tail.tool_calls if tail is not None else None) or ():
            args += (tc.function.arguments or '') if tc.function is not None else ''
        got = json.loads(args)
        assert got['f'] == 3.14 and got['s'] == '007', label
        expected = expected or got
        assert got == expected, label


def test_granite_text_opener_without_tools() -> None:
    """Granite 3.1's ``<tool_call>`` opens a call as ``<|tool_call|>`` does, with no tools in the request."""
    cls = integ._tool_class('granite', engine=True)
    out = cls(TOKENIZER).extract_tool_calls('<tool_call> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
                                            request())
    assert [(c.function.name, json.loads(c.function.arguments)) for c in out.tool_calls] == [
        ('get_weather', {'city': 'Tokyo'})]


def test_engine_resolves_local_refs() -> None:
    """Replace mode resolves a parameter schema's local $ref (vLLM's dots parser does); the request is unchanged."""
    params = {'type': 'object', 'properties': {'where': {'$ref': '#/$defs/Place'}, 'days': {'type': 'integer'},
                                               'loop': {'$ref': '#/$defs/Loop'}},
              '$defs': {'Place': {'type': 'object', 'properties': {'zip': {'type': 'string'}}},
                        'Loop': {'$ref': '#/$defs/Loop'}}}
    tools = [{'type': 'function', 'function': {'name': 'set_place', 'parameters': params}}]
    text = ('<dots_function_call><invoke name="set_place"><parameter name="where">{"zip": "018956"}</parameter>'
            '<parameter name="days">3</parameter><parameter name="loop">x</parameter></invoke></dots_function_call>')
    for engine, where in ((True, {'zip': '018956'}), (False, '{"zip": "018956"}')):
        out = integ._tool_class('dots', engine=engine)(TOKENIZER, tools).extract_tool_calls(text, request(tools=tools))
        assert json.loads(out.tool_calls[0].function.arguments) == {'where': where, 'days': 3, 'loop': 'x'}
    assert params['properties']['where'] == {'$ref': '#/$defs/Place'}


@pytest.mark.parametrize('kwargs,thinks', [
    (None, True), ({}, True), ({'thinking': False}, False), ({'enable_thinking': False}, False),
    ({'thinking': True}, True), ({'thinking': True, 'reasoning_effort': 'none'}, False)])
def test_deepseek_v4_starts_as_vllm_renders_it(kwargs: dict[str, Any] | None, thinks: bool) -> None:
    """vLLM renders DeepSeek V4 prompts in thinking mode unless a switch is off (its renderer and its own
    parser agree); replace mode starts there too. ``lmparse-deepseek_v4`` keeps LMDeploy's default (chat)."""
    text = 'step one</think>answer'
    fields = {} if kwargs is None else {'chat_template_kwargs': kwargs}
    engine = integ._reasoning_class('deepseek_v4', engine=True)(TOKENIZER)
    assert engine.extract_reasoning(text, request(**fields)) == (
        ('step one', 'answer') if thinks else (None, text))
    own = integ._reasoning_class('deepseek_v4')(TOKENIZER)
    if not (kwargs or {}).get('thinking'):
        assert own.extract_reasoning(text, request(**fields)) == (None, text)


def _composed(reasoning: str | None, tool: str) -> Any:
    """vLLM's DelegatingParser over lmparse's replace-mode classes, as ParserManager composes them."""
    from vllm.parser.abstract_parser import DelegatingParser

    return type('Composed', (DelegatingParser,), {
        'reasoning_parser_cls': integ._reasoning_class(reasoning, engine=True) if reasoning else None,
        'tool_parser_cls': integ._tool_class(tool, engine=True)})


@pytest.mark.parametrize('reasoning,choice', [(None, 'none'), (None, 'auto'), ('qwen3', 'auto'), ('qwen3', 'none')])
def test_tool_choice_none_keeps_the_call_text(reasoning: str | None, choice: str) -> None:
    """With tool_choice="none" beside tools vLLM's server drops parsed calls: the call text stays content, as
    vLLM's own engine parsers leave it (it was parsed, then dropped: lost)."""
    text = 'Sure.' + CALL % 'get_weather'
    req = request(tools=TOOLS, tool_choice=choice)
    prompt = [] if reasoning is None else None  # no reasoning parser: the prompt check passes at once
    parser = _composed(reasoning, 'hermes')(TOKENIZER, TOOLS, chat_template_kwargs={'enable_thinking': False})
    content, names = [], []
    for i in range(0, len(text), 3):
        delta = parser.parse_delta(text[i:i + 3], [], req, prompt_token_ids=prompt, finished=i + 3 >= len(text))
        prompt = None
        if delta is not None:
            content.append(delta.content or '')
            names += [tc.function.name for tc in delta.tool_calls or () if tc.function and tc.function.name]
    whole = parser.parse(text, req, enable_auto_tools=True)
    if choice == 'none':
        assert ''.join(content) == text and names == []
        assert whole[1] == text and not whole[2]
    else:
        assert ''.join(content) == 'Sure.' and names == ['get_weather']
        assert whole[1] == 'Sure.' and [c.name for c in whole[2]] == ['get_weather']


def test_unified_parsers_are_not_replaced() -> None:
    """Names whose vLLM classes select a unified response-template parser (Beam's, hf's: checkpoint metadata
    and an always-on grammar) keep vLLM's classes in replace mode."""
    from vllm.parser.response_template import response_template_parser_cls
    from vllm.reasoning import ReasoningParserManager

    unified = set()
    for manager, get in ((ToolParserManager, ToolParserManager.get_tool_parser),
                         (ReasoningParserManager, ReasoningParserManager.get_reasoning_parser)):
        for name in manager.list_registered():
            try:
                cls = get(name)
            except Exception:  # an optional dependency of that vLLM parser is missing
                continue
            if not cls.__module__.startswith('lmparse.') and response_template_parser_cls(cls) is not None:
                unified.add(name)
    assert 'beam' in unified
    assert unified <= integ.NOT_REPLACED


@pytest.mark.parametrize('name,kwargs,counted', [
    ('deepseek_v3', {'thinking': True}, 3), ('deepseek_v3', {'thinking': False}, 0),
    ('qwen3', {}, 3), ('qwen3', {'enable_thinking': False}, 0)])
def test_reasoning_tokens_counted_as_parsed(name: str, kwargs: dict[str, Any], counted: int) -> None:
    """Usage counts the reasoning the parser reads: none when the request turns thinking off (the tagged
    text is content then), as vLLM's delegate parsers count."""
    parser = integ._reasoning_class(name, engine=True)(TOKENIZER, chat_template_kwargs=kwargs)
    assert parser.count_reasoning_tokens([12, 1, 2, 3, 13, 4]) == counted


QWEN_CALL = '<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>'


@pytest.mark.parametrize('engine', [True, False])
def test_qwen3_reasoning_alone_ends_at_a_call(engine: bool) -> None:
    # vLLM's Qwen3 parser: <tool_call> inside reasoning ends it, so its tool parser gets the call
    cls = integ._reasoning_class('qwen3', engine=engine)
    for text in ('plan\n\n' + QWEN_CALL, '<think>plan\n\n' + QWEN_CALL):
        got = cls(TOKENIZER).extract_reasoning(text, request())
        assert got == (('plan\n\n', QWEN_CALL) if engine else ('plan\n\n' + QWEN_CALL, None))
    assert cls(TOKENIZER).extract_reasoning('r</think>a', request()) == ('r', 'a')


def test_qwen3_reasoning_alone_hands_the_call_over_when_streamed() -> None:
    parser = integ._reasoning_class('qwen3', engine=True)(TOKENIZER)
    pieces = ['plan', '\n\n<tool', '_call>\n<function=bash>', '\n</function>']
    reasoning, content, ended_at = '', '', None
    for i, piece in enumerate(pieces):
        delta = parser.extract_reasoning_streaming('', '', piece, [], [], [])
        reasoning += (delta.reasoning or '') if delta is not None else ''
        content += (delta.content or '') if delta is not None else ''
        if ended_at is None and parser.has_engine_confirmed_reasoning_end():
            ended_at = i  # vLLM's Parser hands every later chunk to its tool parser from here
    assert ended_at == 2
    assert (reasoning, content) == ('plan\n\n', '<tool_call>\n<function=bash>\n</function>')
    own = integ._reasoning_class('qwen3')(TOKENIZER)
    for piece in pieces:
        own.extract_reasoning_streaming('', '', piece, [], [], [])
        assert not own.has_engine_confirmed_reasoning_end()


def test_engine_adapter_adjust_request_reaches_its_engine() -> None:
    # vLLM's Mistral adapter adjusts through its parser engine: for a tokenizer without Mistral's
    # grammar it injects the tool schema for tool_choice="required" and clears response_format
    from unittest.mock import MagicMock

    tokenizer = MagicMock()
    tokenizer.get_vocab.return_value = {'[TOOL_CALLS]': 1}
    tokenizer.supports_grammar = False
    parser = integ._tool_class('mistral', engine=True)(tokenizer)
    req = parser.adjust_request(request(tools=TOOLS, tool_choice='required', response_format={'type': 'json_object'}))
    assert req.response_format is None
    assert req.structured_outputs is not None and req.structured_outputs.json is not None


DSML = '｜DSML｜'
DSML_TOOLS = [{'type': 'function', 'function': {'name': 'score', 'parameters': {'type': 'object', 'properties': {
    'value': {'type': 'integer'}, 'note': {'type': 'string'}}}}}]
DSML_CALL = (f'\n\n<{DSML}tool_calls>\n<{DSML}invoke name="score">\n'
             f'<{DSML}parameter name="arguments" string="false">{{"value": "7", "note": null}}</{DSML}parameter>\n'
             f'</{DSML}invoke>\n</{DSML}tool_calls>')
DSML_TYPED = (f'\n\n<{DSML}tool_calls>\n<{DSML}invoke name="score">\n'
              f'<{DSML}parameter name="value" string="true">42</{DSML}parameter>\n'
              f'<{DSML}parameter name="note" string="false">null</{DSML}parameter>\n'
              f'</{DSML}invoke>\n</{DSML}tool_calls>')


@pytest.mark.parametrize('engine', [True, False])
def test_dsml_values_as_vllm(engine: bool) -> None:
    """Replace mode: DSML values typed by the schema and a lone 'arguments' wrapper unwrapped, as vLLM's
    DeepSeek V4 parser gives them; lmparse-deepseek_v4 keeps LMDeploy's reading (the attribute types the value)."""
    cls = integ._tool_class('deepseek_v4', engine=engine)
    typed = json.loads(cls(TOKENIZER, DSML_TOOLS).extract_tool_calls(DSML_TYPED, request(tools=DSML_TOOLS))
                       .tool_calls[0].function.arguments)
    wrapped = json.loads(cls(TOKENIZER, DSML_TOOLS).extract_tool_calls(DSML_CALL, request(tools=DSML_TOOLS))
                         .tool_calls[0].function.arguments)
    if engine:
        assert typed == {'value': 42, 'note': 'null'}
        assert wrapped == {'value': 7, 'note': 'null'}  # unwrapped, then typed as any top-level value
    else:
        assert typed == {'value': '42', 'note': None}
        assert wrapped == {'arguments': {'value': '7', 'note': None}}
    vllm_cls = ToolParserManager.get_tool_parser('deepseek_v4')
    if engine and not vllm_cls.__module__.startswith('lmparse.'):
        for text, got in ((DSML_TYPED, typed), (DSML_CALL, wrapped)):
            theirs = vllm_cls(TOKENIZER, DSML_TOOLS).extract_tool_calls(text, request(tools=DSML_TOOLS))
            assert json.loads(theirs.tool_calls[0].function.arguments) == got


def test_engine_adapter_adjust_request() -> None:
    """vLLM's ParserEngine adapters set skip_special_tokens=False through their engine: replace mode too."""
    parser = integ._tool_class('deepseek_v32', engine=True)(TOKENIZER)
    req = parser.adjust_request(request(tools=DSML_TOOLS, tool_choice='auto'))
    assert req.skip_special_tokens is False


def test_tool_object_without_type() -> None:
    """A tool object of the tool's shape without a type string is read by its function's name and schema."""

    class Fn:
        name = 'score'
        parameters = DSML_TOOLS[0]['function']['parameters']
        description = None

    class Tool:
        function = Fn()

    assert integ._tool_dict(Tool()) == {'type': 'function', 'function': {
        'name': 'score', 'parameters': DSML_TOOLS[0]['function']['parameters']}}


@pytest.mark.parametrize('name,engine,on', [('deepseek_v32', True, True), ('deepseek_v4', True, True),
                                            ('deepseek_v41', True, True), ('deepseek_v4', False, False),
                                            ('minimax_m2', True, False)])
def test_dsml_value_rules_only_where_vllm_has_them(name: str, engine: bool, on: bool) -> None:
    """The switches follow the dialect's ``vllm_value_rules`` (vLLM's DeepSeek parsers), in replace mode only."""
    tool_parser = integ._Stream(None, name, DSML_TOOLS, None, engine).new_parser().tool_parser
    assert (tool_parser.coerce_values_to_schema, tool_parser.unwrap_wrapper_arguments) == (on, on)


# ---- tool_choice through vLLM's own driver (DelegatingParser.parse_delta / parse), linked and not ----

PY_CALL = '[get_weather(city="Paris")]'
JSON_LIST = '[{"name": "get_weather", "parameters": {"city": "Paris"}}]'
JSON_ARGS = '{"city": "Paris"}'
NAMED = {'type': 'function', 'function': {'name': 'get_weather'}}


def _calls(deltas: list[Any]) -> list[tuple[str, Any]]:
    """(name, arguments) of the calls streamed, fragments joined by index."""
    by_index: dict[int, list[str]] = {}
    for d in deltas:
        for tc in (d.tool_calls if d is not None else None) or ():
            entry = by_index.setdefault(tc.index, ['', ''])
            if tc.function is not None:
                entry[0] += tc.function.name or ''
                entry[1] += tc.function.arguments or ''
    return [(name, json.loads(args)) for name, args in (by_index[i] for i in sorted(by_index))]


def _stream(parser_cls: Any, text: str, req: Any, size: int, tools: Any = TOOLS, **kwargs: Any) -> tuple[str, str, Any]:
    parser = parser_cls(TOKENIZER, tools, **kwargs)
    deltas = []
    pieces = [text[i:i + size] for i in range(0, len(text), size)] or ['']
    for n, piece in enumerate(pieces):
        deltas.append(parser.parse_delta(piece, [], req, prompt_token_ids=[] if n == 0 else None,
                                         finished=n == len(pieces) - 1))
    reasoning = ''.join(d.reasoning or '' for d in deltas if d is not None)
    content = ''.join(d.content or '' for d in deltas if d is not None)
    return reasoning, content, _calls(deltas)


def _whole(parser_cls: Any, text: str, req: Any, tools: Any = TOOLS, **kwargs: Any) -> tuple[str, str, Any]:
    reasoning, content, calls = parser_cls(TOKENIZER, tools, **kwargs).parse(text, req, enable_auto_tools=True)
    return reasoning or '', content or '', [(c.name, json.loads(c.arguments)) for c in calls or ()]


SIZES = (1, 3, 16, 10_000)
THINK = '<think>Paris, then.</think>\n\n'


@pytest.mark.parametrize('reasoning', [None, 'qwen3'])
@pytest.mark.parametrize('choice,output,expected', [
    ('auto', PY_CALL, ('', [('get_weather', {'city': 'Paris'})])),
    ('none', PY_CALL, (PY_CALL, [])),
    ('required', JSON_LIST, ('', [('get_weather', {'city': 'Paris'})])),
    ('named', JSON_ARGS, ('', [('get_weather', {'city': 'Paris'})])),
])
def test_json_forced_class_tool_choice(reasoning: str | None, choice: str, output: str, expected: Any) -> None:
    """A class for which vLLM forces its JSON format for tool_choice="required" / a named tool (pythonic:
    supports_required_and_named): parsed as vLLM parses that format, streamed (1/3/16 chars, whole) and whole,
    with and without lmparse's reasoning parser (linked); "none" keeps the call text; "auto" the native format."""
    cls = _composed(reasoning, 'pythonic')
    assert integ._tool_class('pythonic', engine=True).supports_required_and_named  # vLLM's JSON-list path applies
    req = request(tools=TOOLS, tool_choice=NAMED if choice == 'named' else choice)
    text = (THINK if reasoning else '') + output
    want_reasoning = 'Paris, then.' if reasoning else ''
    for size in SIZES:
        r, content, calls = _stream(cls, text, req, size)
        assert (r, content.lstrip('\n'), calls) == (want_reasoning, *expected), size
    r, content, calls = _whole(cls, text, req)
    assert (r, content.lstrip('\n'), calls) == (want_reasoning, *expected)


@pytest.mark.parametrize('reasoning', [None, 'qwen3'])
@pytest.mark.parametrize('choice', ['auto', 'none', 'required', 'named'])
def test_native_class_tool_choice(reasoning: str | None, choice: str) -> None:
    """hermes (vLLM attaches its structural tag for required/named: the native format is parsed) under every
    tool_choice, linked and not; "none" keeps the call text as content."""
    cls = _composed(reasoning, 'hermes')
    req = request(tools=TOOLS, tool_choice=NAMED if choice == 'named' else choice)
    text = (THINK if reasoning else '') + 'Sure.' + CALL % 'get_weather'
    want = ('Sure.' + CALL % 'get_weather', []) if choice == 'none' else ('Sure.', [('get_weather', {'city': 'Paris'})])
    for size in SIZES:
        r, content, calls = _stream(cls, text, req, size)
        assert (r, content.lstrip('\n'), calls) == ('Paris, then.' if reasoning else '', *want), size
    r, content, calls = _whole(cls, text, req)
    assert (content.lstrip('\n'), calls) == want


@pytest.mark.parametrize('size', SIZES)
def test_linked_reasoning_reopens_after_handover(size: int) -> None:
    """After vLLM hands the linked stream to the tool adapter, reasoning that opens again still streams as
    reasoning, and a call after it is parsed (one lmparse parser for the request throughout)."""
    cls = _composed('qwen3', 'hermes')
    text = '<think>a</think>Sure.<think>b</think>' + CALL % 'get_weather'
    r, content, calls = _stream(cls, text, request(tools=TOOLS, tool_choice='auto'), size)
    assert (r, content, calls) == ('ab', 'Sure.', [('get_weather', {'city': 'Paris'})])


@pytest.mark.parametrize('size', SIZES + (len('<think>try ' + CALL % 'get_weather') + 1,))
def test_linked_call_in_reasoning_with_tool_choice_none(size: int) -> None:
    """A call opened inside unclosed reasoning ends vLLM's reasoning phase (the shared parser is in the call, or
    has just parsed it whole); with tool_choice="none" the chunk is read again without calls: the call text
    stays reasoning. With "auto" the call is parsed there and the reasoning goes on after it."""
    cls = _composed('qwen3', 'hermes')
    text = '<think>try ' + CALL % 'get_weather' + ' ok</think>Done.'
    r, content, calls = _stream(cls, text, request(tools=TOOLS, tool_choice='none'), size)
    assert (r, content, calls) == ('try ' + CALL % 'get_weather' + ' ok', 'Done.', [])
    r, content, calls = _stream(cls, text, request(tools=TOOLS, tool_choice='auto'), size)
    assert (r, content, calls) == ('try  ok', 'Done.', [('get_weather', {'city': 'Paris'})])


def test_forced_ids_follow_vllm() -> None:
    """tool_choice="required" ids as vLLM makes them (kimi_k2 ids count the history's calls)."""
    from types import SimpleNamespace

    config = SimpleNamespace(hf_config=SimpleNamespace(model_type='kimi_k2'), hf_text_config=None, hf_overrides=None)
    history = [{'role': 'user', 'content': 'x'}, {'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': 'functions.get_weather:0', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{}'}}]},
        {'role': 'tool', 'tool_call_id': 'functions.get_weather:0', 'content': 'sunny'}]
    req = ChatCompletionRequest(model='m', messages=history, tools=TOOLS, tool_choice='required')
    two = JSON_LIST[:-1] + ', ' + JSON_LIST[1:]
    cls = _composed(None, 'pythonic')
    for size in SIZES:
        parser = cls(TOKENIZER, TOOLS, model_config=config)
        ids = []
        for i in range(0, len(two), size):
            delta = parser.parse_delta(two[i:i + size], [], req, prompt_token_ids=[], finished=i + size >= len(two))
            ids += [tc.id for tc in (delta.tool_calls if delta is not None else None) or () if tc.id]
        assert ids == ['functions.get_weather:1', 'functions.get_weather:2'], size
    whole = cls(TOKENIZER, TOOLS, model_config=config).parse(two, req, enable_auto_tools=True)[2]
    assert [c.id for c in whole] == ['functions.get_weather:1', 'functions.get_weather:2']


def _vllm_own(reasoning: str | None, tool: str) -> Any:
    """vLLM's DelegatingParser over vLLM's own classes of those names."""
    from vllm.parser.abstract_parser import DelegatingParser
    from vllm.reasoning import ReasoningParserManager

    own_tool = integ._vllm_class(ToolParserManager, tool)
    own_reasoning = integ._vllm_class(ReasoningParserManager, reasoning) if reasoning else None
    if own_tool is None or (reasoning and own_reasoning is None):
        pytest.skip('vLLM replaced in this process')
    return type('VllmComposed', (DelegatingParser,), {'reasoning_parser_cls': own_reasoning,
                                                      'tool_parser_cls': own_tool})


def _served(parser_cls: Any, text: str, req: Any, size: int) -> tuple[str, str, Any, str | None]:
    """vLLM's serving stream path: one ChatStreamProcessor per choice, as OpenAIServingChat streams it (the
    server's tool_choice filter and finish_reason included)."""
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor

    parser = parser_cls(TOKENIZER, req.tools, chat_template_kwargs=None, model_config=None)
    proc = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=parser_cls)
    pieces = [text[i:i + size] for i in range(0, len(text), size)]
    steps = [proc.step(p, [], 'stop' if n == len(pieces) - 1 else None, [] if n == 0 else None)
             for n, p in enumerate(pieces)]
    deltas = [s.delta for s in steps]
    return (''.join(d.reasoning or '' for d in deltas if d is not None),
            ''.join(d.content or '' for d in deltas if d is not None), _calls(deltas), steps[-1].finish_reason)


@pytest.mark.parametrize('reasoning', [None, 'qwen3'])
@pytest.mark.parametrize('choice', ['auto', 'none', 'required', 'named'])
def test_served_stream_equals_vllms_parsers(reasoning: str | None, choice: str) -> None:
    """Through ChatStreamProcessor (vLLM's serving path), lmparse's replace classes (linked when both are
    lmparse's) give what vLLM's own qwen3 + pythonic give, for every tool_choice, at 1/3/16 chars and whole."""
    req = request(tools=TOOLS, tool_choice=NAMED if choice == 'named' else choice)
    output = {'required': JSON_LIST, 'named': JSON_ARGS}.get(choice, PY_CALL)
    text = ('<think>Paris, then.</think>' if reasoning else '') + output  # vLLM's pythonic: no space before '['
    ours, theirs = _composed(reasoning, 'pythonic'), _vllm_own(reasoning, 'pythonic')
    want = ('Paris, then.' if reasoning else '', output if choice == 'none' else '',
            [] if choice == 'none' else [('get_weather', {'city': 'Paris'})], 'tool_calls' if choice in ('auto', 'required') else 'stop')
    compared = 0
    for size in SIZES:
        r, content, calls, finish = _served(ours, text, req, size)
        assert (r, content.strip(), calls, finish) == want, size
        r, content, calls, finish = _served(theirs, text, req, size)
        if (r, content.strip(), calls, finish) == want:  # where vLLM's own parsers get it right
            compared += 1
    assert compared == len(SIZES)


@pytest.mark.parametrize('reasoning', [None, 'qwen3'])
def test_required_text_that_is_no_call_stays_content(reasoning: str | None) -> None:
    """tool_choice="required" whose output is no JSON call list (no grammar applied): vLLM's JSON path drops the
    text; lmparse keeps it as content, streamed (at the end) and whole."""
    cls = _composed(reasoning, 'pythonic')
    req = request(tools=TOOLS, tool_choice='required')
    text = (THINK if reasoning else '') + 'I cannot call it.'
    for size in SIZES:
        r, content, calls = _stream(cls, text, req, size)
        assert (content.strip(), calls) == ('I cannot call it.', []), size
    _, content, calls = _whole(cls, text, req)
    assert (content.strip(), calls) == ('I cannot call it.', [])
