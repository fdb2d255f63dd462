"""XML-like tool-call dialects (qwen3coder / interns2-preview / glm47 / glm45) through BaseResponseParser.

Every case is checked three ways: streamed reconstruction over many chunkings
(one chunk, every split inside every tag, fixed sizes, random, hypothesis,
real Qwen tokens), ``parse_complete`` and a literal expected result. The
streamed arguments of every call must be valid JSON equal to the complete parse.
"""
from __future__ import annotations

import importlib.machinery
import json
import os
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lmparse
from lmparse import (
    BaseResponseParser,
    Glm47ToolParser,
    InternS2PreviewToolParser,
    Qwen3CoderToolParser,
    ToolParserManager,
    XmlToolParser,
)
from tests.streaming import (
    check_messages,
    chunkings,
    complete,
    fixed_chunks,
    make_request,
    reconstruct,
    split_at,
    stream_flagged,
    token_chunks,
    tool_deltas,
)

SCHEMAS: dict[str, dict[str, Any]] = {
    'get_weather': {'type': 'object', 'properties': {'city': {'type': 'string'}, 'unit': {'type': 'string'}}},
    'get_time': {'type': 'object', 'properties': {}},
    'search': {'type': 'object', 'properties': {'query': {'type': 'string'}, 'limit': {'type': 'integer'}}},
    'configure': {'type': 'object', 'properties': {
        'count': {'type': 'integer'}, 'ratio': {'type': 'number'}, 'enabled': {'type': 'boolean'},
        'nothing': {'type': 'null'}, 'tags': {'type': 'array'}, 'meta': {'type': 'object'},
        'label': {'type': 'string'}, 'maybe': {'type': ['integer', 'null']}, 'free': {},
        'opt': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]},
        'either': {'anyOf': [{'type': 'string'}, {'type': 'integer'}]}}},
}

QWEN_TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>', '<function=', '</function>', '<parameter=',
             '</parameter>')
GLM_TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>', '<arg_key>', '</arg_key>', '<arg_value>',
            '</arg_value>')
TAGS = {'qwen3coder': QWEN_TAGS, 'interns2-preview': QWEN_TAGS, 'glm47': GLM_TAGS, 'glm45': GLM_TAGS}
SLOW = os.environ.get('LMPARSE_SLOW') == '1'


def request(**fields: Any) -> dict[str, Any]:
    tools = [{'type': 'function', 'function': {'name': n, 'parameters': s}} for n, s in SCHEMAS.items()]
    return make_request(None, tools=tools, **fields)


_CLASSES: dict[tuple[Any, str], Any] = {}


def parser_for(reasoning: str | None, tool: str, **fields: Any) -> Any:
    cls = _CLASSES.get((reasoning, tool))
    if cls is None:
        cls = _CLASSES[(reasoning, tool)] = BaseResponseParser.with_parsers(reasoning, tool)
    return cls(request(**fields))


def qcall(name: str, *params: tuple[str, str], close_fn: bool = True) -> str:
    body = ''.join(f'<parameter={k}>\n{v}\n</parameter>\n' for k, v in params)
    return f'<tool_call>\n<function={name}>\n{body}' + ('</function>\n' if close_fn else '') + '</tool_call>'


def gcall(name: str, *params: tuple[str, str]) -> str:
    return '<tool_call>' + name + ''.join(f'<arg_key>{k}</arg_key><arg_value>{v}</arg_value>' for k, v in params) \
        + '</tool_call>'


Calls = list[tuple[str, str]]


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    reasoning: str | None = 'default'

    def parser(self) -> Any:
        return parser_for(self.reasoning, self.tool)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


TYPED = (('count', '42'), ('ratio', '-2.50'), ('enabled', 'True'), ('nothing', 'null'), ('tags', '["a", 1, null]'),
         ('meta', '{"k": {"n": [1, 2]}, "s": "x"}'), ('label', 'plain'), ('maybe', '7'), ('free', '{"a": 1}'))
TYPED_ARGS = ('{"count": 42, "ratio": -2.5, "enabled": true, "nothing": null, "tags": ["a", 1, null], '
              '"meta": {"k": {"n": [1, 2]}, "s": "x"}, "label": "plain", "maybe": 7, "free": "{\\"a\\": 1}"}')
BAD_TYPED = (('count', '4.5'), ('ratio', 'abc'), ('enabled', 'yes'), ('nothing', 'nil'), ('tags', '[1,'),
             ('meta', '[1]'), ('count', '007'), ('count', 'true'))
BAD_TYPED_ARGS = ('{"count": "4.5", "ratio": "abc", "enabled": "yes", "nothing": "nil", "tags": "[1,", '
                  '"meta": "[1]", "count": "007", "count": "true"}')
LOOKALIKES = 'a < b </para </parameter x </ <arg_value> </arg_key> <function=x> </function'
# A whole <arg_key> (a special token in GLM's vocabulary) ends a value that lacks
# </arg_value> (tests/test_xml_malformed.py); its prefixes are data.
LOOKALIKES_GLM = 'a < b </arg_val </arg_value x </ <parameter=y> </parameter> </function> <arg_key k <arg_ke'


def both(tool: str) -> list[Case]:
    """The design's case list, rendered in one dialect's syntax."""
    glm = tool.startswith('glm')
    c = gcall if glm else qcall
    look = LOOKALIKES_GLM if glm else LOOKALIKES
    t = tool
    return [
        Case(f'{t}-basic', t, 'Think.\n</think>\n\nSure.\n' + c('get_weather', ('city', 'Beijing'), ('unit', 'c')),
             '\n\nSure.\n', 'Think.\n', [('get_weather', '{"city": "Beijing", "unit": "c"}')]),
        Case(f'{t}-no-args', t, 'r</think>' + c('get_time'), None, 'r', [('get_time', '{}')]),
        Case(f'{t}-typed', t, 'r</think>' + c('configure', *TYPED), None, 'r', [('configure', TYPED_ARGS)]),
        Case(f'{t}-typed-unconvertible', t, 'r</think>' + c('configure', *BAD_TYPED), None, 'r',
             [('configure', BAD_TYPED_ARGS)]),
        Case(f'{t}-unions', t, 'r</think>' + c('configure', ('maybe', 'null'), ('opt', '3'), ('opt', 'null'),
                                               ('opt', 'x'), ('either', '5')),
             # the one conversion rule (xml_values._coerce_arg): non-string types first, then string
             None, 'r', [('configure', '{"maybe": null, "opt": 3, "opt": null, "opt": "x", "either": 5}')]),
        Case(f'{t}-non-finite', t, 'r</think>' + c('configure', ('ratio', 'NaN'), ('ratio', '1e999'),
                                                   ('tags', '[1, Infinity]'), ('count', '1' * 5000)),
             None, 'r', [('configure', '{"ratio": "NaN", "ratio": "1e999", "tags": "[1, Infinity]", '
                                       '"count": "' + '1' * 5000 + '"}')]),
        Case(f'{t}-no-schema', t, 'r</think>' + c('get_time', ('x', '1'), ('y', 'true'), ('z', '"quoted"')),
             None, 'r', [('get_time', '{"x": "1", "y": "true", "z": "\\"quoted\\""}')]),
        Case(f'{t}-quoted-string', t, 'r</think>' + c('search', ('query', '"a \\"b\\" c"'), ('limit', '"3"')),
             None, 'r', [('search', '{"query": "a \\"b\\" c", "limit": "\\"3\\""}')]),
        Case(f'{t}-duplicates', t, 'r</think>' + c('search', ('query', 'a'), ('query', 'b'), ('limit', '1')),
             None, 'r', [('search', '{"query": "a", "query": "b", "limit": 1}')]),
        Case(f'{t}-lookalikes-in-value', t, 'r</think>' + c('search', ('query', look)), None, 'r',
             [('search', json.dumps({'query': look}, ensure_ascii=False))]),
        Case(f'{t}-escapes', t, 'r</think>' + c('search', ('query', 'tab\there "q" back\\slash \x01 é 😀')),
             None, 'r', [('search', '{"query": "tab\\there \\"q\\" back\\\\slash \\u0001 é 😀"}')]),
        Case(f'{t}-empty-values', t, 'r</think>' + c('search', ('query', ''), ('limit', '')),
             None, 'r', [('search', '{"query": "", "limit": ""}')]),
        Case(f'{t}-space-values', t, 'r</think>' + c('search', ('query', '   '), ('limit', ' 5 ')),
             None, 'r', [('search', '{"query": "   ", "limit": 5}')]),
        Case(f'{t}-cjk', t, '思考😀\n</think>\n\n好的' + c('get_weather', ('city', '北京 🌧️')) + '\n完成',
             '\n\n好的\n完成', '思考😀\n', [('get_weather', '{"city": "北京 🌧️"}')]),
        Case(f'{t}-two-blocks', t, 'r</think>\n' + c('get_weather', ('city', 'A')) + '\n' + c('search', ('query', 'q')),
             '\n', 'r', [('get_weather', '{"city": "A"}'), ('search', '{"query": "q"}')]),
        Case(f'{t}-unknown-names', t, 'r</think>' + c('delete_all', ('path', '/')) + '\n' + c('get_time')
             + c('rm', ('x', '1')) + c('search', ('query', 'z')),
             None, 'r', [('get_time', '{}'), ('search', '{"query": "z"}')]),
        Case(f'{t}-text-after', t, 'r</think>' + c('get_time') + '\nThe tool will answer.',
             '\nThe tool will answer.', 'r', [('get_time', '{}')]),
        Case(f'{t}-in-reasoning', t, 'I need it.\n' + c('get_weather', ('city', 'Lima')) + '\nmore</think>\n\nDone.',
             '\n\nDone.', 'I need it.\n\nmore', [('get_weather', '{"city": "Lima"}')]),
        Case(f'{t}-filtered-in-reasoning', t, 'Hmm.' + c('browse', ('url', 'x')) + '\nno</think>ok',
             'ok', 'Hmm.\nno', []),
        Case(f'{t}-missing-think-close', t, 'thinking ' + c('search', ('query', 'deep')) + '\nstill',
             None, 'thinking \nstill', [('search', '{"query": "deep"}')]),
        Case(f'{t}-content-lookalikes', t, 'r</think>a < b, <tool or <function=x> and </parameter> <arg_key>',
             'a < b, <tool or <function=x> and </parameter> <arg_key>', 'r', []),
        Case(f'{t}-truncated-after-open', t, 'r</think>text<tool_call>', 'text', 'r', []),
        Case(f'{t}-no-reasoning-parser', t, c('get_time') + 'x', 'x', None, [('get_time', '{}')], reasoning=None),
    ]


QWEN_ONLY = [
    Case('q-multiline', 'qwen3coder', 'r</think>' + qcall('search', ('query', 'line1\nline2\n\n  indented\n')),
         None, 'r', [('search', '{"query": "line1\\nline2\\n\\n  indented\\n"}')]),
    Case('q-crlf', 'qwen3coder', 'r</think>' + qcall('search', ('query', '\r\nwin\r\n')),
         None, 'r', [('search', '{"query": "\\r\\nwin\\r\\n"}')]),
    Case('q-trailing-cr', 'qwen3coder', 'r</think><tool_call><function=search><parameter=query>a\r</parameter>'
         '</function></tool_call>', None, 'r', [('search', '{"query": "a\\r"}')]),
    Case('q-compact', 'qwen3coder', 'r</think><tool_call><function=search><parameter=query>x</parameter>'
         '<parameter=limit>2</parameter></function></tool_call>', None, 'r', [('search', '{"query": "x", "limit": 2}')]),
    Case('q-name-spaces', 'qwen3coder', 'r</think><tool_call>\n<function= get_time >\n<parameter= x >\n1\n'
         '</parameter>\n</function>\n</tool_call>', None, 'r', [('get_time', '{"x": "1"}')]),
    Case('q-junk-before-function', 'qwen3coder',
         'r</think><tool_call>\nsure: <b> <function=get_time>\n</function>\n</tool_call>', None, 'r',
         [('get_time', '{}')]),
    Case('q-missing-function-close', 'qwen3coder',
         'r</think>' + qcall('search', ('query', 'a'), close_fn=False) + '\nafter', '\nafter', 'r',
         [('search', '{"query": "a"}')]),
    Case('q-two-functions-one-block', 'qwen3coder',
         'r</think><tool_call>\n<function=get_time>\n</function>\n<function=nope>\n</function>\n'
         '<function=search>\n<parameter=query>\nq\n</parameter>\n</function>\n</tool_call>', None, 'r',
         [('get_time', '{}'), ('search', '{"query": "q"}')]),
    Case('q-function-without-close-then-function', 'qwen3coder',
         'r</think><tool_call>\n<function=search>\n<parameter=query>\nq\n</parameter>\n<function=get_time>\n'
         '</function>\n</tool_call>', None, 'r', [('search', '{"query": "q"}'), ('get_time', '{}')]),
    Case('q-empty-block', 'qwen3coder', 'r</think><tool_call>\n</tool_call>\nafter', '\nafter', 'r', []),
    Case('q-garbage-block', 'qwen3coder', 'r</think><tool_call>\nnot a call\n</tool_call>\nafter', '\nafter', 'r', []),
    Case('q-truncated-in-name', 'qwen3coder', 'r</think><tool_call>\n<function=get_ti', None, 'r', []),
    Case('q-truncated-in-param-name', 'qwen3coder', 'r</think><tool_call>\n<function=search>\n<parameter=que',
         None, 'r', [('search', '{}')]),
    Case('q-truncated-after-param', 'qwen3coder',
         'r</think><tool_call>\n<function=search>\n<parameter=query>\nq\n</parameter>\n', None, 'r',
         [('search', '{"query": "q"}')]),
    Case('q-truncated-typed', 'qwen3coder', 'r</think><tool_call>\n<function=search>\n<parameter=query>\nq\n'
         '</parameter>\n<parameter=limit>\n12', None, 'r', [('search', '{"query": "q", "limit": 12}')]),
    Case('q-truncated-string', 'qwen3coder', 'r</think><tool_call>\n<function=search>\n<parameter=query>\nab\n',
         None, 'r', [('search', '{"query": "ab"}')]),
    Case('q-truncated-partial-close', 'qwen3coder',
         'r</think><tool_call>\n<function=search>\n<parameter=query>\nq</para', None, 'r',
         [('search', '{"query": "q</para"}')]),
    Case('q-interns2', 'interns2-preview', 'r</think>' + qcall('search', ('query', 'x'), ('limit', '3')),
         None, 'r', [('search', '{"query": "x", "limit": 3}')]),
]

GLM_ONLY = [
    Case('g-newlines', 'glm47', 'r</think><tool_call>search\n<arg_key>query</arg_key>\n<arg_value>x y</arg_value>\n'
         '<arg_key>limit</arg_key>\n<arg_value>3</arg_value>\n</tool_call>', None, 'r',
         [('search', '{"query": "x y", "limit": 3}')]),
    Case('g-glm45-alias', 'glm45', 'r</think><tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo'
         '</arg_value>\n</tool_call>', None, 'r', [('get_weather', '{"city": "Oslo"}')]),
    Case('g-value-newlines-kept', 'glm47', 'r</think>' + gcall('search', ('query', '\nx\n')), None, 'r',
         [('search', '{"query": "\\nx\\n"}')]),
    Case('g-empty-name', 'glm47', 'r</think><tool_call></tool_call>after', 'after', 'r', []),
    Case('g-truncated-name', 'glm47', 'r</think><tool_call>get_time', None, 'r', [('get_time', '{}')]),
    Case('g-truncated-in-key', 'glm47', 'r</think><tool_call>search<arg_key>que', None, 'r', [('search', '{}')]),
    Case('g-truncated-in-value', 'glm47', 'r</think><tool_call>search<arg_key>query</arg_key><arg_value>ab</arg_v',
         None, 'r', [('search', '{"query": "ab</arg_v"}')]),
]

CASES = [*both('qwen3coder'), *both('glm47'), *QWEN_ONLY, *GLM_ONLY]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _stream(case: Case, chunks: list[Any], flush: bool = False) -> Any:
    parser = case.parser()
    flagged = stream_flagged(parser, chunks, flush=flush)
    check_messages(flagged)
    rec = reconstruct(parser, flagged)
    for _name, args in rec.calls:
        json.loads(args)  # streamed arguments of every accepted call are valid JSON
    return rec.key()


# ---- the three-way comparison ---------------------------------------------------


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_parse_complete(case: Case) -> None:
    assert complete(case.parser(), case.text).key() == case.expected


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_chunkings(case: Case) -> None:
    for label, chunks in chunkings(case.text, TAGS[case.tool]):
        assert _stream(case, chunks) == case.expected, label
    for size in (1, 7, len(case.text)):
        assert _stream(case, fixed_chunks(case.text, size), flush=True) == case.expected, size


@pytest.mark.parametrize('case', [c for c in CASES if len(c.text) < 400], ids=lambda c: c.id)
def test_every_two_way_split(case: Case) -> None:
    text = case.text
    for cut in range(1, len(text)):
        assert _stream(case, [text[:cut], text[cut:]]) == case.expected, cut


@settings(max_examples=1500 if SLOW else 300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    n = len(case.text)
    cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=30), label='cuts')
    assert _stream(case, split_at(case.text, cuts)) == case.expected, case.id


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_qwen_token_streams(case: Case, qwen_tokenizer: Any) -> None:
    chunks = token_chunks(qwen_tokenizer, case.text)
    assert _stream(case, chunks) == case.expected
    assert _stream(case, [text for text, _ids in chunks], flush=True) == case.expected


def test_which_xml_tags_are_single_qwen_tokens(qwen_tokenizer: Any) -> None:
    single = {tag for tag in set(QWEN_TAGS + GLM_TAGS) if len(qwen_tokenizer.encode(tag)) == 1}
    assert single == {'<think>', '</think>', '<tool_call>', '</tool_call>'}
    pieces = [qwen_tokenizer.decode([i]) for i in qwen_tokenizer.encode('x</parameter>')]
    assert pieces == ['x', '</', 'parameter', '>']


# ---- streaming behaviour ---------------------------------------------------------


def _args(deltas: list[Any]) -> list[str]:
    return [d.function.arguments for d in deltas if d.function is not None and d.function.arguments is not None]


def test_string_value_streams_before_its_close_tag() -> None:
    parser = parser_for(None, 'qwen3coder')
    first = tool_deltas(parser.stream_chunk('<tool_call>\n<function=search>\n<parameter=query>\nhello wor', []))
    assert [(d.index, d.function.name) for d in first[:1]] == [(0, 'search')] and first[0].id
    assert _args(first) == ['{"query": "hello wor']
    second = tool_deltas(parser.stream_chunk('ld\n</parameter>\n<parameter=limit>\n1', []))
    assert _args(second) == ['ld"']  # the typed value is held
    third = tool_deltas(parser.stream_chunk('0\n</parameter>\n</function>\n</tool_call>', [], final=True))
    assert _args(third) == [', "limit": 10}']


def test_closing_newline_is_held_not_lost() -> None:
    parser = parser_for(None, 'qwen3coder')
    out = tool_deltas(parser.stream_chunk('<tool_call>\n<function=search>\n<parameter=query>\na\n', []))
    assert _args(out) == ['{"query": "a']
    out = tool_deltas(parser.stream_chunk('b\n', []))  # the held newline was data
    assert _args(out) == ['\\nb']
    out = tool_deltas(parser.stream_chunk('</parameter>\n</function>\n</tool_call>', [], final=True))
    assert _args(out) == ['"}']


def test_quoted_value_is_held_until_close() -> None:
    parser = parser_for(None, 'qwen3coder')
    out = tool_deltas(parser.stream_chunk('<tool_call>\n<function=search>\n<parameter=query>\n"a', []))
    assert _args(out) == []
    out = tool_deltas(parser.stream_chunk('\\nb"\n</parameter>\n', []))
    assert _args(out) == []  # a </parameter> is the value's end once what follows confirms it
    out = tool_deltas(parser.stream_chunk('<parameter=', []))
    assert _args(out) == ['{"query": "a\\nb"']


@pytest.mark.parametrize('tool', ['qwen3coder', 'glm47'])
def test_streamed_arguments_equal_complete_parse_for_every_chunking(tool: str) -> None:
    c = gcall if tool == 'glm47' else qcall
    text = 'r</think>' + c('configure', *TYPED, ('label', 'multi\nline "x"')) + c('search', ('query', 'q'),
                                                                               ('limit', '2'))
    expected = [json.loads(a) for _n, a in complete(parser_for('default', tool), text).calls]
    assert expected[0]['count'] == 42 and expected[0]['tags'] == ['a', 1, None] and expected[1]['limit'] == 2
    for label, chunks in chunkings(text, TAGS[tool], n_random=20):
        parser = parser_for('default', tool)
        rec = reconstruct(parser, stream_flagged(parser, chunks))
        assert [json.loads(a) for _n, a in rec.calls] == expected, label


def test_filtered_calls_have_contiguous_indices() -> None:
    case = next(c for c in CASES if c.id == 'qwen3coder-unknown-names')
    for label, chunks in chunkings(case.text, QWEN_TAGS):
        deltas = tool_deltas(stream_flagged(case.parser(), chunks))
        assert sorted({d.index for d in deltas}) == [0, 1], label
        ids = [d.id for d in deltas if d.id]
        assert len(ids) == 2 and len(set(ids)) == 2


def test_tool_choice_none_leaves_text_alone() -> None:
    parser = parser_for('default', 'qwen3coder', tool_choice='none')
    text = 'r</think>' + qcall('get_time')
    assert complete(parser, text).key() == (text[len('r</think>'):], 'r', [])


# ---- registry, request, hooks -------------------------------------------------------


def test_registry_and_exports() -> None:
    assert ToolParserManager.get('qwen3coder') is Qwen3CoderToolParser
    assert ToolParserManager.get('interns2-preview') is InternS2PreviewToolParser
    assert ToolParserManager.get('glm47') is Glm47ToolParser
    assert ToolParserManager.get('glm45') is Glm47ToolParser
    assert issubclass(InternS2PreviewToolParser, Qwen3CoderToolParser)
    assert {'XmlToolParser', 'Qwen3CoderToolParser', 'InternS2PreviewToolParser', 'Glm47ToolParser'} <= set(
        lmparse.__all__)
    assert Qwen3CoderToolParser.structural_tag_model == 'qwen_3_coder'
    assert Qwen3CoderToolParser.reasoning_structural_tag_model == 'qwen_3_5'
    assert Glm47ToolParser.structural_tag_model == 'glm_4_7'


def test_compiled_module_is_loaded() -> None:
    import lmparse.tools.xml_parser as mod
    assert mod.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_interns2_request_adjustment() -> None:
    parser = InternS2PreviewToolParser()
    adjusted = parser.adjust_request(request(spaces_between_special_tokens=True))
    assert adjusted.spaces_between_special_tokens is False
    assert parser._allowed_tool_names == set(SCHEMAS)
    assert Qwen3CoderToolParser().adjust_request(request()).spaces_between_special_tokens is not False


def test_python_hook_wrappers() -> None:
    p = Qwen3CoderToolParser()
    p.begin_tool_block()  # the outer close tag is known once a block is open
    assert p._consume_function('x <function= f >rest', 0) == (16, 'f', 'arg_start')
    assert p._consume_function('<function=f', 0) is None
    assert p._consume_function('</tool_call>', 0) == (0, None, 'done')
    assert p._consume_arg_start('\n<parameter=a>', 0) == (12, 'arg_name')
    assert p._consume_arg_start('\n</function>', 0) == (12, 'done')
    assert p._consume_arg_start('\n</funct', 0) is None
    assert p._consume_arg_name('a >v', 0) == (3, 'a')
    assert p._consume_call_end('\n<function=g>', 0) == (1, 'function')
    assert p._consume_call_end('\n</tool_call>', 0) == (1, 'done')
    g = Glm47ToolParser()
    g.begin_tool_block()
    assert g._consume_function('f\n<arg_key>', 0) == (2, 'f', 'arg_start')
    assert g._consume_function('f</tool_call>', 0) == (1, 'f', 'done')
    assert g._consume_function('f', 0) is None and g._consume_function('f', 0, True) == (1, 'f', 'done')
    assert g._consume_arg_name('k</arg_key>\n<arg_value>v', 0) == (23, 'k')
    assert XmlToolParser._coerce_value(' 12 ', 'integer') == 12
    assert XmlToolParser._coerce_value('1.5', 'integer') == '1.5'
    assert XmlToolParser._coerce_value('NaN', 'number') == 'NaN'
    assert XmlToolParser._coerce_value('"a"', 'string') == 'a'
    assert XmlToolParser._coerce_value('FALSE', 'boolean') is False
    assert XmlToolParser._schema_types({'anyOf': [{'type': 'null'}, {'type': ['integer', 'string']}]}) == \
        ('integer', 'string', 'null')
    assert XmlToolParser._resolve_schema_type({'type': ['null', 'number']}) == 'number'


class BracketXml(XmlToolParser):
    """A pure Python dialect: ``<call>[NAME](KEY=VALUE;)...</call>``."""

    arg_value_close_tag = ';'

    @classmethod
    def get_tool_open_tag(cls) -> str:
        return '<call>'

    @classmethod
    def get_tool_close_tag(cls) -> str:
        return '</call>'

    def _consume_function(self, payload: str, pos: int, final: bool) -> Any:
        end = payload.find(']', pos)
        if end < 0:
            return None
        return end + 1, payload[pos:end].strip().lstrip('['), 'arg_start'

    def _consume_arg_start(self, payload: str, pos: int) -> Any:
        if payload.startswith('(', pos):
            return pos + 1, 'arg_name'
        rest = payload[pos:pos + len('</call>')]
        if len(rest) < len('</call>') and '</call>'.startswith(rest):
            return None
        return pos, 'done'

    def _consume_arg_name(self, payload: str, pos: int) -> Any:
        end = payload.find('=', pos)
        return None if end < 0 else (end + 1, payload[pos:end])


class QwenUpperKeys(Qwen3CoderToolParser):
    """A Python override of one hook of a built-in dialect; the others stay in C."""

    def _consume_arg_name(self, payload: str, pos: int) -> Any:
        result = super()._consume_arg_name(payload, pos)
        return None if result is None else (result[0], result[1].upper())


def test_python_dialects_on_the_driver() -> None:
    text = 'x <call>[search](query=a b;(limit=3;</call> y'
    cls = BaseResponseParser.with_parsers(None, None)
    cls.tool_parser_cls = BracketXml
    for label, chunks in chunkings(text, ('<call>', '</call>')):
        parser = cls(request())
        assert reconstruct(parser, stream_flagged(parser, chunks)).key() == \
            ('x  y', None, [('search', '{"query": "a b", "limit": 3}')]), label
    cls.tool_parser_cls = QwenUpperKeys
    text = qcall('search', ('query', 'q'))
    for label, chunks in chunkings(text, QWEN_TAGS):
        parser = cls(request())
        assert reconstruct(parser, stream_flagged(parser, chunks)).key() == \
            (None, None, [('search', '{"QUERY": "q"}')]), label


class BadHook(Qwen3CoderToolParser):
    def _consume_arg_start(self, payload: str, pos: int) -> Any:
        return pos - 1, 'arg_name'


class NoProgress(Qwen3CoderToolParser):
    def _consume_function(self, payload: str, pos: int, final: bool) -> Any:
        return pos, 'f', 'done'

    def _consume_call_end(self, payload: str, pos: int, final: bool = False) -> Any:
        return pos, 'function'


@pytest.mark.parametrize('cls,message', [(BadHook, 'returned position'), (NoProgress, 'no progress')])
def test_bad_python_hooks_raise_typed_errors(cls: type, message: str) -> None:
    parser = cls()
    parser.adjust_request(request())
    parser.begin_tool_block()
    with pytest.raises(ValueError, match=message):
        parser.feed_tool_block('<function=get_time>\n<parameter=x>1</parameter></function>', [], final=True)


def test_dialect_without_value_close_tag_is_a_type_error() -> None:
    class Broken(XmlToolParser):
        pass

    with pytest.raises(TypeError, match='arg_value_close_tag'):
        Broken().begin_tool_block()


def test_long_value_is_linear() -> None:
    """A 200 kB value fed in 4-char chunks: every chunk is consumed, nothing rescanned."""
    value = 'abc </ de <x ' * 16000
    text = qcall('search', ('query', value))
    parser = parser_for(None, 'qwen3coder')
    flagged = stream_flagged(parser, fixed_chunks(text, 4))
    assert json.loads(reconstruct(parser, flagged).calls[0][1]) == {'query': value}


# ---- value fast paths: plain chunks, held buffers, close tags split anywhere -------

TRICKY_VALUES = (
    ('query', 'a < b <= c </ d </para x</parameter_ </arg_value_ <'),  # '<' that is no close tag
    ('query', 'ends with lt <'),
    ('query', 'crlf\r\nin\r\nvalue\r'),
    ('query', '\r\r\n\n'),
    ('query', 'wide é then 😀 then ascii ' + 'x' * 40),
    ('query', '  \n  leading blanks'),
    ('limit', '\n\n 12 \n'),
    ('tags', '["é", "😀", "' + 'q\\"' * 12 + '", "\\u0001 \\n", "' + 'long plain text ' * 3 + '"]'),
    ('meta', '{"a": [1, 2.5, -0.5e-7], "b": {"c": null}, "d": "<x>"}'),
)


@pytest.mark.parametrize('tool', ['qwen3coder', 'glm47'])
def test_value_fast_paths_equal_complete_parse(tool: str) -> None:
    c = gcall if tool == 'glm47' else qcall
    text = 'r</think>' + ''.join(c('search' if k in ('query', 'limit') else 'configure', (k, v))
                                 for k, v in TRICKY_VALUES)
    expected = complete(parser_for('default', tool), text).key()
    assert len(expected[2]) == len(TRICKY_VALUES)
    cases = list(chunkings(text, TAGS[tool], n_random=10))
    cases += [(f'split@{i}', [text[:i], text[i:]]) for i in range(1, len(text))]
    for label, chunks in cases:
        parser = parser_for('default', tool)
        assert reconstruct(parser, stream_flagged(parser, chunks)).key() == expected, label


def test_truncated_value_at_every_length() -> None:
    """The final chunk may end anywhere in a value: inside '<', a partial close tag or a CR LF."""
    text = 'r</think>' + qcall('search', ('query', 'a <b \r\n</para c'), ('limit', '3'))
    for end in range(len('r</think>'), len(text)):
        head = text[:end]
        expected = complete(parser_for('default', 'qwen3coder'), head).key()
        for size in (1, 3, 7):
            parser = parser_for('default', 'qwen3coder')
            rec = reconstruct(parser, stream_flagged(parser, fixed_chunks(head, size)))
            assert rec.key() == expected, (end, size)


def test_held_value_buffer_widens_and_is_reused() -> None:
    """A held (typed) value fed char by char through ASCII, Latin-1, BMP and astral text;
    then a value larger than the kept buffer, then a small one on the same parser."""
    big = '[' + ', '.join(f'"{i:05d}"' for i in range(20000)) + ']'
    values = ['["a", "é", "€", "😀", "b"]', big, '["z"]']
    text = qcall('configure', *(('tags', v) for v in values))
    parser = parser_for(None, 'qwen3coder')
    chunks = fixed_chunks(text[:200], 1) + fixed_chunks(text[200:], 256)
    args = reconstruct(parser, stream_flagged(parser, chunks)).calls[0][1]
    assert args == '{' + ', '.join('"tags": ' + json.dumps(json.loads(v), ensure_ascii=False) for v in values) + '}'


@settings(max_examples=400, deadline=None)
@given(items=st.lists(st.text(alphabet=st.sampled_from('ab é😀"\\\x01\t/<>\x7f'), max_size=20), max_size=4),
       ascii_only=st.booleans(), mangle=st.integers(0, 3))
def test_typed_array_canonical_check(items: list[str], ascii_only: bool, mangle: int) -> None:
    """The C canonical check of held arrays agrees with json.loads / json.dumps."""
    raw = json.dumps(items, ensure_ascii=ascii_only)
    if mangle == 1:
        raw = raw.replace('a', '\\u0061', 1)  # an escape json.dumps would not write
    elif mangle == 2:
        raw = raw.replace(', ', ',', 1)
    expected_value: Any = json.loads(raw)
    text = qcall('configure', ('tags', raw))
    parser = parser_for(None, 'qwen3coder')
    args = reconstruct(parser, stream_flagged(parser, fixed_chunks(text, 5))).calls[0][1]
    assert args == '{"tags": ' + json.dumps(expected_value, ensure_ascii=False) + '}'


def test_interns2_request_adjustment_copies() -> None:
    original = lmparse.ChatCompletionRequest.from_dict(request(spaces_between_special_tokens=True))
    parser = InternS2PreviewToolParser()
    adjusted = parser.adjust_request(original)
    assert adjusted is not original and original.spaces_between_special_tokens is True
    assert adjusted.spaces_between_special_tokens is False
    assert adjusted.model_dump() == {**Qwen3CoderToolParser().adjust_request(original).model_dump(),
                                     'spaces_between_special_tokens': False}
