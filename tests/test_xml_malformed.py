"""Malformed outputs real models produce, in the XML-like and DSML families.

Each shape recovers the value or call the model clearly meant, ends it at the
next protocol tag that the text after it confirms (a missing close tag is
recovered only where no well-formed value could hold the same text within
that bounded lookahead; elsewhere the marker is value text, see
tests/test_xml_marker_text.py); streamed over every chunking, the result
equals ``parse_complete`` and the expected literal.
Sources: vllm-project/vllm#57699 and #23099 (Qwen3-Coder without
``</parameter>``), the GLM-4.5/4.7 chat templates, DeepSeek V3.2's DSML encoding.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import check_identity_first, chunkings, complete, stream, stream_flagged, tool_deltas

D = '\uff5cDSML\uff5c'
PROPS = {
    'get_weather': {'city': {'type': 'string'}, 'days': {'type': 'integer'}},
    'ThinQ_Connect': {'body': {'type': 'object'}},
    'get_time': {},
    'f': {'s': {'type': ['string', 'null']}, 'i': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]},
          'u': {'type': ['integer', 'string']}, 'o': {'oneOf': [{'type': 'string'}, {'type': 'null'}]},
          'b': {'type': ['boolean', 'string']}, 'n': {'type': ['number', 'null']}, 'r': {'type': ['string', 'integer']},
          'z': {'type': 'null'}},
}
REQUEST = {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}], 'tools': [
    {'type': 'function', 'function': {'name': n, 'parameters': {'type': 'object', 'properties': p}}}
    for n, p in PROPS.items()]}
TAGS = ('<tool_call>', '</tool_call>', '<function=', '</function>', '<parameter=', '</parameter>', '<arg_key>',
        '</arg_key>', '<arg_value>', '</arg_value>', f'<{D}invoke', '"/>', f'</{D}function_calls>')

CASES = [
    # Qwen3-Coder: the last </parameter> missing before </function> (vLLM #57699's raw output)
    ('qwen-no-param-close', 'qwen3coder',
     '<tool_call>\n<function=ThinQ_Connect>\n<parameter=body>\n{"airConJobMode": "AIR_CLEAN", "windStrength": "HIGH"}\n'
     '</function>\n</tool_call>after',
     'after', [('ThinQ_Connect', '{"body": {"airConJobMode": "AIR_CLEAN", "windStrength": "HIGH"}}')]),
    ('qwen-no-param-close-string', 'qwen3coder',
     'a<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n</tool_call>\nb',
     'a\nb', [('get_weather', '{"city": "Paris"}')]),
    ('qwen-no-param-close-end-of-output', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>',
     None, [('get_weather', '{"city": "Paris"}')]),
    ('qwen-no-param-close-next-call', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n<function=get_time>\n</function>\n'
     '</tool_call>',
     None, [('get_weather', '{"city": "Paris"}'), ('get_time', '{}')]),
    # ... before the next <parameter=: the same text as a value that contains a
    # parameter marker, which is what it is read as (no bounded lookahead tells them apart)
    ('qwen-no-param-close-next-param', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n<parameter=days>\n3\n</parameter>\n</function>\n'
     '</tool_call>x',
     'x', [('get_weather', '{"city": "Paris\\n<parameter=days>\\n3"}')]),
    # </function> missing too: the block's close tag ends the value when the output ends after it
    ('qwen-no-param-no-function-close', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</tool_call>\n',
     '\n', [('get_weather', '{"city": "Paris"}')]),
    ('qwen-no-param-no-function-close-next-block', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</tool_call>\n<tool_call>\n<function=get_time>\n'
     '</function>\n</tool_call>x',
     'x', [('get_weather', '{"city": "Paris"}'), ('get_time', '{}')]),
    # ... and text after it: the same text as a value that contains </tool_call>
    ('qwen-no-param-no-function-close-text-after', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</tool_call>x',
     None, [('get_weather', '{"city": "Paris\\n</tool_call>x"}')]),
    # a </function> inside a value that more value text follows is data
    ('qwen-function-close-as-data', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\nint f() {}</function> x\n</parameter>\n</function>\n'
     '</tool_call>',
     None, [('get_weather', '{"city": "int f() {}</function> x"}')]),
    # GLM: the last </arg_value> missing at the end of the output, or before the next block
    ('glm-no-value-close', 'glm47',
     '<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</tool_call>',
     None, [('get_weather', '{"city": "Paris"}')]),
    ('glm45-no-value-close-next-block', 'glm45',
     '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</tool_call>\n<tool_call>get_time\n'
     '</tool_call>after',
     'after', [('get_weather', '{"city": "Paris"}'), ('get_time', '{}')]),
    # ... with text after it, or before the next key: the same text as a value holding those markers
    ('glm-no-value-close-text-after', 'glm47',
     '<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</tool_call>after',
     None, [('get_weather', '{"city": "Paris</tool_call>after"}')]),
    ('glm45-no-value-close-next-key', 'glm45',
     '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris\n<arg_key>days</arg_key>\n<arg_value>3'
     '</arg_value>\n</tool_call>after',
     'after', [('get_weather', '{"city": "Paris\\n<arg_key>days</arg_key>\\n<arg_value>3"}')]),
    # DSML: a self-closing invoke is a call without arguments
    ('dsml-self-closing', 'deepseek-v32',
     f'hi\n\n<{D}function_calls>\n<{D}invoke name="get_time"/>\n</{D}function_calls>after',
     'hiafter', [('get_time', '{}')]),
    ('dsml-self-closing-then-call', 'deepseek-v4',
     f'\n\n<{D}tool_calls>\n<{D}invoke name="get_time" />\n<{D}invoke name="get_weather">\n'
     f'<{D}parameter name="city" string="true">P</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>',
     None, [('get_time', '{}'), ('get_weather', '{"city": "P"}')]),
    # output cut short inside a value held whole (typed or quoted): the value as written, as for a streamed one
    ('qwen-truncated-typed-value', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n12',
     None, [('get_weather', '{"city": "Paris", "days": 12}')]),
    ('qwen-truncated-quoted-value', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=city>\n"Par',
     None, [('get_weather', '{"city": "\\"Par"}')]),
    ('qwen-truncated-object-value', 'qwen3coder',
     '<tool_call>\n<function=ThinQ_Connect>\n<parameter=body>\n{"a": [1, ',
     None, [('ThinQ_Connect', '{"body": "{\\"a\\": [1, "}')]),
    ('glm-truncated-typed-value', 'glm47',
     '<tool_call>get_weather<arg_key>days</arg_key><arg_value>7',
     None, [('get_weather', '{"days": 7}')]),
    ('qwen-truncated-before-value', 'qwen3coder',
     '<tool_call>\n<function=get_weather>\n<parameter=days>\n',
     None, [('get_weather', '{}')]),
]


def parser(dialect: str) -> Any:
    return BaseResponseParser.with_parsers(None, dialect)(REQUEST)


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_malformed_shape(case: tuple[str, str, str, Any, Any]) -> None:
    _, dialect, text, content, calls = case
    expected = (content, None, calls)
    assert complete(parser(dialect), text).key() == expected
    for label, chunks in chunkings(text, TAGS):
        assert stream(parser(dialect), chunks).key() == expected, label
    check_identity_first(tool_deltas(stream_flagged(parser(dialect), list(text))))
    for _, arguments in calls:
        json.loads(arguments)


# ---- one conversion rule for nullable and union schemas ---------------------------------
# null / None (either case) -> JSON null when the schema admits null; else the
# non-string types in schema order; else a string; else the text as written.
UNIONS = [
    ('null', {'s': None, 'i': None, 'u': 'null', 'o': None, 'b': 'null', 'n': None, 'r': 'null', 'z': None}),
    ('None', {'s': None, 'i': None, 'u': 'None', 'o': None, 'b': 'None', 'n': None, 'r': 'None', 'z': None}),
    (' NULL ', {'s': None, 'i': None, 'u': ' NULL ', 'o': None, 'b': ' NULL ', 'n': None, 'r': ' NULL ', 'z': None}),
    ('3', {'s': '3', 'i': 3, 'u': 3, 'o': '3', 'b': '3', 'n': 3, 'r': 3, 'z': '3'}),
    ('2.5', {'s': '2.5', 'i': '2.5', 'u': '2.5', 'o': '2.5', 'b': '2.5', 'n': 2.5, 'r': '2.5', 'z': '2.5'}),
    ('true', {'s': 'true', 'i': 'true', 'u': 'true', 'o': 'true', 'b': True, 'n': 'true', 'r': 'true', 'z': 'true'}),
    ('"q"', {'s': 'q', 'i': '"q"', 'u': 'q', 'o': 'q', 'b': 'q', 'n': '"q"', 'r': 'q', 'z': '"q"'}),
    ('nullable', {k: 'nullable' for k in 'siuobnrz'}),
    ('nul', {k: 'nul' for k in 'siuobnrz'}),
    ('null x', {k: 'null x' for k in 'siuobnrz'}),
    ('nonesuch', {k: 'nonesuch' for k in 'siuobnrz'}),
]


@pytest.mark.parametrize('dialect', ['qwen3coder', 'glm47'])
@pytest.mark.parametrize('raw,expected', UNIONS, ids=[u[0] for u in UNIONS])
def test_union_conversion(dialect: str, raw: str, expected: dict[str, Any]) -> None:
    if dialect == 'qwen3coder':
        body = ''.join(f'<parameter={k}>\n{raw}\n</parameter>\n' for k in expected)
        text = f'<tool_call>\n<function=f>\n{body}</function>\n</tool_call>'
    else:
        body = ''.join(f'<arg_key>{k}</arg_key><arg_value>{raw}</arg_value>' for k in expected)
        text = f'<tool_call>f{body}</tool_call>'
    want = (None, None, [('f', json.dumps(expected, ensure_ascii=False))])
    assert complete(parser(dialect), text).key() == want
    for label, chunks in chunkings(text, TAGS, n_random=3):
        assert stream(parser(dialect), chunks).key() == want, label
