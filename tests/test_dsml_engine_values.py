"""DSML values as vLLM's DeepSeek V3.2 / V4 parsers give them (the replace-mode switches of ``DsmlToolParser``).

``coerce_values_to_schema``: a value is converted to its parameter's schema type where it is a value of that
type (``string="true"`` ``42`` of an integer parameter is 42, a JSON object text of an object parameter is
the object); a JSON scalar that is not a value of the parameter's types is its text when the schema admits a
string (``null`` of a string parameter is ``"null"``); an integral number of a number parameter is written as
an integer. ``unwrap_wrapper_arguments``: a call whose only parameter is an undeclared ``arguments`` /
``input`` holding an object of declared keys has that object as its arguments. Sources: vLLM 0.33's
``vllm/parser/deepseek_v4.py`` (``_unwrap_wrapper_args``), ``ParserEngine._fix_arg_types`` and
``coerce_to_schema_type`` (``vllm/tool_parsers/utils.py``). lmparse's vLLM integration sets both in replace
mode; off (the default, LMDeploy's reading) every value is as the attribute types it.

Each case: ``parse_complete``, every chunking (one chunk, every split inside every tag, fixed 1/4/8/16/256,
random sizes, random sizes with empty chunks anywhere), every two-way split, streamed fragments that
concatenate to the complete arguments, and real DeepSeek token streams.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import chunkings, complete, random_chunks, run_case, stream_flagged, token_chunks, tool_deltas
from tests.streaming import with_empty_chunks
from tests.test_dsml import DSML_TOKEN as D
from tests.test_dsml import deepseek_tokenizer  # noqa: F401  (fixture)

PC, IC = f'</{D}parameter>', f'</{D}invoke>'
TAGS = (f'<{D}invoke', f'<{D}parameter', PC, IC, f'</{D}tool_calls>', f'</{D}function_calls>',
        f'<{D}tool_calls>', f'<{D}function_calls>')

SCHEMAS: dict[str, dict[str, Any]] = {
    'score': {'value': {'type': 'integer'}},
    'set_timer': {'wait': {'anyOf': [{'type': 'object'}, {'type': 'null'}]}},
    'echo': {'text': {'type': 'string'}},
    'measure': {'ratio': {'type': 'number'}, 'whole': {'type': 'number'}, 'count': {'type': 'integer'}},
    'coerce': {'union_value': {'type': ['null', 'string']}, 'bad_int': {'type': 'integer'},
               'nullable_string': {'type': ['null', 'string']}, 'null_string': {'type': 'string'},
               'whole_number': {'type': 'number'}, 'flag': {'type': ['integer', 'string']}},
    'get_weather': {'location': {'type': 'string'}, 'unit': {'type': 'string'}},
    'get_time': {},
}
REQUEST = {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}],
           'tools': [{'type': 'function', 'function': {'name': n, 'parameters': {'type': 'object', 'properties': p}}}
                     for n, p in SCHEMAS.items()]}
BLOCK = {'deepseek-v32': 'function_calls', 'deepseek-v4': 'tool_calls'}


def param(name: str, value: str, string: bool = True) -> str:
    return f'<{D}parameter name="{name}" string="{"true" if string else "false"}">{value}{PC}'


def invoke(fn: str, *params: str) -> str:
    return f'<{D}invoke name="{fn}">\n' + ''.join(p + '\n' for p in params) + IC


def block(tool: str, *invokes: str) -> str:
    name = BLOCK[tool]
    return f'\n\n<{D}{name}>\n' + ''.join(i + '\n' for i in invokes) + f'</{D}{name}>'


@dataclass(frozen=True)
class Case:
    id: str
    prefix: str
    invokes: tuple[str, ...]
    content: str | None
    engine: list[tuple[str, Any]]  # (name, arguments) with the replace-mode switches on
    default: list[tuple[str, Any]]  # and off

    def text(self, tool: str) -> str:
        return self.prefix + block(tool, *self.invokes)


OBJ = '{"type":"for","minutes":2880}'
CASES = [
    Case('int_in_raw_text', '', (invoke('score', param('value', '42')),), None,
         [('score', {'value': 42})], [('score', {'value': '42'})]),
    Case('object_in_raw_text', 'Setting it. ', (invoke('set_timer', param('wait', OBJ)),), 'Setting it. ',
         [('set_timer', {'wait': json.loads(OBJ)})], [('set_timer', {'wait': OBJ})]),
    # marker text in a typed value: not an integer, so the text as written
    Case('marker_text_not_int', '', (invoke('score', param('value', f'4{PC}2')),), None,
         [('score', {'value': f'4{PC}2'})], [('score', {'value': f'4{PC}2'})]),
    Case('null_of_string', '', (invoke('echo', param('text', 'null', False)),), None,
         [('echo', {'text': 'null'})], [('echo', {'text': None})]),
    Case('string_streams', '', (invoke('echo', param('text', f'a {IC} b')),), None,
         [('echo', {'text': f'a {IC} b'})], [('echo', {'text': f'a {IC} b'})]),
    Case('numbers', '', (invoke('measure', param('ratio', '3.14', False), param('whole', '5.0', False),
                                param('count', '7.0', False)),), None,
         [('measure', {'ratio': 3.14, 'whole': 5, 'count': 7.0})],
         [('measure', {'ratio': 3.14, 'whole': 5.0, 'count': 7.0})]),
    Case('fallbacks', '', (invoke('coerce', param('union_value', 'hello', False), param('bad_int', 'abc', False),
                                  param('nullable_string', 'null', False), param('null_string', 'null', False),
                                  param('whole_number', '3.0', False), param('flag', 'true', False)),), None,
         [('coerce', {'union_value': 'hello', 'bad_int': 'abc', 'nullable_string': None, 'null_string': 'null',
                      'whole_number': 3, 'flag': 'true'})],
         [('coerce', {'union_value': 'hello', 'bad_int': 'abc', 'nullable_string': None, 'null_string': None,
                      'whole_number': 3.0, 'flag': True})]),
    Case('arguments_wrapper', '', (invoke('get_weather', param('arguments', '{"location": "Beijing"}', False)),), None,
         [('get_weather', {'location': 'Beijing'})], [('get_weather', {'arguments': {'location': 'Beijing'}})]),
    Case('input_wrapper_raw_text', 'x', (invoke('get_weather', param('input', '{"location":"Beijing"}')),), 'x',
         [('get_weather', {'location': 'Beijing'})], [('get_weather', {'input': '{"location":"Beijing"}'})]),
    # the wrapper's value quotes markup: text of the value, unwrapped with it
    Case('wrapper_quoting_markers', '', (invoke('get_weather', param('input', f'{{"location": "{IC}{PC} x"}}')),),
         None, [('get_weather', {'location': f'{IC}{PC} x'})],
         [('get_weather', {'input': f'{{"location": "{IC}{PC} x"}}'})]),
    # unwrapped values are then typed like any top-level value
    Case('wrapper_values_typed', '', (invoke('measure', param('arguments', '{"count": "5", "ratio": 2.0}', False)),),
         None, [('measure', {'count': 5, 'ratio': 2})], [('measure', {'arguments': {'count': '5', 'ratio': 2.0}})]),
    Case('wrapper_undeclared_key', '', (invoke('get_weather', param('arguments', '{"city": "Paris"}', False)),), None,
         [('get_weather', {'arguments': {'city': 'Paris'}})], [('get_weather', {'arguments': {'city': 'Paris'}})]),
    Case('wrapper_then_parameter', '', (invoke('get_weather', param('arguments', '{"location": "A"}', False),
                                               param('unit', 'C')),), None,
         [('get_weather', {'arguments': {'location': 'A'}, 'unit': 'C'})],
         [('get_weather', {'arguments': {'location': 'A'}, 'unit': 'C'})]),
    Case('wrapper_not_an_object', '', (invoke('get_weather', param('input', 'Beijing')),), None,
         [('get_weather', {'input': 'Beijing'})], [('get_weather', {'input': 'Beijing'})]),
    Case('wrapper_tool_without_properties', '', (invoke('get_time', param('arguments', '{}', False)),), None,
         [('get_time', {'arguments': {}})], [('get_time', {'arguments': {}})]),
    Case('two_calls', '', (invoke('get_weather', param('arguments', '{"location": "A"}', False)),
                           invoke('score', param('value', '1'))), None,
         [('get_weather', {'location': 'A'}), ('score', {'value': 1})],
         [('get_weather', {'arguments': {'location': 'A'}}), ('score', {'value': '1'})]),
]
TOOLS = tuple(BLOCK)
PARAMS = [(c, t) for c in CASES for t in TOOLS]
IDS = [f'{c.id}-{t}' for c, t in PARAMS]

_CLASSES = {tool: BaseResponseParser.with_parsers(None, tool) for tool in TOOLS}


def make(tool: str, engine: bool) -> Any:
    parser = _CLASSES[tool](REQUEST)
    if engine:
        parser.tool_parser.coerce_values_to_schema = True
        parser.tool_parser.unwrap_wrapper_arguments = True
    return parser


def typed(value: Any) -> Any:
    """``value`` with each scalar tagged by its type (5 and 5.0, 1 and True compare equal in Python)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return type(value).__name__, value


def key(result: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
    content, reasoning, calls = result
    return content, reasoning, [(n, typed(json.loads(a))) for n, a in calls]


def expected(case: Case, engine: bool) -> tuple[Any, Any, Any]:
    return case.content, None, [(n, typed(a)) for n, a in (case.engine if engine else case.default)]


@pytest.mark.parametrize('engine', [True, False], ids=['replace', 'default'])
@pytest.mark.parametrize(('case', 'tool'), PARAMS, ids=IDS)
def test_complete_and_chunkings(case: Case, tool: str, engine: bool) -> None:
    text = case.text(tool)
    want = expected(case, engine)
    assert key(complete(make(tool, engine), text).key()) == want
    for label, chunks in chunkings(text, TAGS):
        assert key(run_case(make(tool, engine), chunks)) == want, label
    rng = random.Random(7)
    for i in range(4):
        chunks = with_empty_chunks(random_chunks(text, rng), rng)
        assert key(run_case(make(tool, engine), chunks)) == want, f'empty{i}'
        assert key(run_case(make(tool, engine), chunks, flush=True)) == want, f'empty{i}+flush'


@pytest.mark.parametrize(('case', 'tool'), PARAMS, ids=IDS)
def test_every_two_way_split(case: Case, tool: str) -> None:
    text = case.text(tool)
    want = expected(case, True)
    for cut in range(1, len(text)):
        assert key(run_case(make(tool, True), [text[:cut], text[cut:]])) == want, cut


@pytest.mark.parametrize(('case', 'tool'), PARAMS, ids=IDS)
def test_fragments_concatenate_to_complete(case: Case, tool: str) -> None:
    text = case.text(tool)
    whole = [a for _n, a in complete(make(tool, True), text).calls]
    for label, chunks in chunkings(text, (), n_random=3):
        per: dict[int, str] = {}
        for d in tool_deltas(stream_flagged(make(tool, True), chunks)):
            per[d.index] = per.get(d.index, '') + (d.function.arguments or '')
        assert [per[i] for i in sorted(per)] == whole, label
    for args in whole:
        json.loads(args)


@pytest.mark.parametrize(('case', 'tool'), PARAMS, ids=IDS)
def test_deepseek_token_by_token(case: Case, tool: str, deepseek_tokenizer: Any) -> None:  # noqa: F811
    chunks = token_chunks(deepseek_tokenizer, case.text(tool))
    for engine in (True, False):
        assert key(run_case(make(tool, engine), chunks)) == expected(case, engine)
        assert key(run_case(make(tool, engine), chunks, flush=True)) == expected(case, engine)


def test_string_parameter_still_streams() -> None:
    """A value of a string-only parameter streams before its close tag; a typed one is held to it."""
    head = f'\n\n<{D}tool_calls>\n<{D}invoke name="echo">\n<{D}parameter name="text" string="true">hel'
    out = [d.function.arguments for m, _ in make('deepseek-v4', True).stream_chunk(head, [])
           for d in (m.tool_calls or [])]
    assert ''.join(a for a in out if a) == '{"text": "hel'
    head = f'\n\n<{D}tool_calls>\n<{D}invoke name="score">\n<{D}parameter name="value" string="true">4'
    out = [d.function.arguments for m, _ in make('deepseek-v4', True).stream_chunk(head, [])
           for d in (m.tool_calls or [])]
    assert ''.join(a for a in out if a) == '{"value": '


def test_wrapper_held_until_the_call_shows_it_alone() -> None:
    """The wrapper parameter's fragments wait for the next tag; the call's name goes out first."""
    parser = make('deepseek-v4', True)
    head = f'\n\n<{D}tool_calls>\n<{D}invoke name="get_weather">\n' + param('arguments', '{"location": "A"}', False)
    first = [d for m, _ in parser.stream_chunk(head, []) for d in (m.tool_calls or [])]
    assert [(d.function.name, d.function.arguments) for d in first] == [('get_weather', None)]
    rest = [d for m, _ in parser.stream_chunk(f'\n{IC}', [], final=True) for d in (m.tool_calls or [])]
    assert ''.join(d.function.arguments or '' for d in rest) == '{"location": "A"}'


def test_output_cut_inside_a_wrapper() -> None:
    """The output ends inside the wrapper's value: released as written, unwrapped when it is whole JSON."""
    text = f'\n\n<{D}tool_calls>\n<{D}invoke name="get_weather">\n<{D}parameter name="input" string="true">{{"loc'
    _, calls, _ = make('deepseek-v4', True).parse_complete(text)
    assert json.loads(calls[0].function.arguments) == {'input': '{"loc'}
    text = (f'\n\n<{D}tool_calls>\n<{D}invoke name="get_weather">\n'
            f'<{D}parameter name="arguments" string="false">{{"location": "B"}}')
    _, calls, _ = make('deepseek-v4', True).parse_complete(text)
    assert json.loads(calls[0].function.arguments) == {'location': 'B'}
