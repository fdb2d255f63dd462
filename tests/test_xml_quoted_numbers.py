"""``quoted_numbers``: a number the model quoted (``"42"`` for a number-typed parameter) is that number.

SGLang's GLM detectors (glm4_moe_detector.py / glm47_moe_detector.py,
``parse_arguments``; test_glm4_moe_detector.py ``test_schema_type_coercion``)
read it so; LMDeploy's glm47 parser keeps the string as written, which
lmparse's ``glm47`` / ``glm45`` follow (the oracle lane). The SGLang plugin maps
SGLang's GLM names to ``glm_quoted_numbers``. Only a JSON string that is exactly
one JSON number counts. Each case: one chunk, every split inside every tag,
fixed 1/4/8/16/256 and random chunkings, random chunkings with empty chunks, an
empty final chunk, every two-way split.
"""
from __future__ import annotations

import json
import random
from typing import Any

import pytest

from lmparse import BaseResponseParser, ToolParserManager
from lmparse.tools.xml_values import coerce_value
from tests.streaming import chunkings, complete, fixed_chunks, random_chunks, run_case, with_empty_chunks

SCHEMA = {'type': 'object', 'properties': {
    'city': {'type': 'string'}, 'count': {'type': 'number'}, 'days': {'type': 'integer'},
    'either': {'type': ['number', 'string']}, 'maybe': {'type': ['integer', 'null']}, 'free': {}}}
REQUEST = {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}],
           'tools': [{'type': 'function', 'function': {'name': 'f', 'parameters': SCHEMA}}]}
TAGS = ('<tool_call>', '</tool_call>', '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>')


def glm(*pairs: tuple[str, str]) -> str:
    return '<tool_call>f\n' + ''.join(f'<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n' for k, v in pairs) \
        + '</tool_call>'


def parser(tool: str) -> Any:
    return BaseResponseParser.with_parsers(None, tool)(REQUEST)


def check(tool: str, text: str, want: tuple[Any, Any, Any]) -> None:
    assert complete(parser(tool), text).key() == want
    for label, chunks in chunkings(text, TAGS):
        assert run_case(parser(tool), chunks) == want, label
    rng = random.Random(text)
    for i in range(5):
        assert run_case(parser(tool), with_empty_chunks(random_chunks(text, rng), rng)) == want, i
    for size in (1, 4):
        assert run_case(parser(tool), fixed_chunks(text, size), flush=True) == want, size
    for cut in range(1, len(text)):
        assert run_case(parser(tool), [text[:cut], text[cut:]]) == want, cut


# (key, raw value, glm_quoted_numbers' value, glm47's value)
VALUES = [
    ('count', '"42"', 42, '"42"'),
    ('count', '"4.5"', 4.5, '"4.5"'),
    ('count', '"-1e3"', -1000.0, '"-1e3"'),
    ('count', ' "0" ', 0, ' "0" '),
    ('days', '"7"', 7, '"7"'),
    ('maybe', '"7"', 7, '"7"'),
    ('either', '"42"', 42, '42'),  # number is tried before string
    # not one JSON number: the text as written (a string decoded where string is allowed)
    ('days', '"7.5"', '"7.5"', '"7.5"'),
    ('count', '" 42"', '" 42"', '" 42"'),
    ('count', '"4_2"', '"4_2"', '"4_2"'),
    ('count', '"+1"', '"+1"', '"+1"'),
    ('count', '"0x1F"', '"0x1F"', '"0x1F"'),
    ('count', '"NaN"', '"NaN"', '"NaN"'),
    ('count', '"1e999"', '"1e999"', '"1e999"'),
    ('count', '"forty"', '"forty"', '"forty"'),
    ('count', '""', '""', '""'),
    ('count', '"42', '"42', '"42'),
    ('either', '"4x"', '4x', '4x'),
    # string-typed and untyped values are unchanged
    ('city', '"42"', '42', '42'),
    ('free', '"42"', '42', '42'),  # a schema with no type: a quoted string is decoded
    # a plain number is a number either way
    ('count', '42', 42, 42),
]


@pytest.mark.parametrize(('key', 'raw', 'sglang', 'lmdeploy'), VALUES, ids=[f'{v[0]}={v[1]}' for v in VALUES])
def test_quoted_number_every_chunking(key: str, raw: str, sglang: Any, lmdeploy: Any) -> None:
    text = glm(('city', 'Oslo'), (key, raw)) if key != 'city' else glm((key, raw))
    for tool, value in (('glm_quoted_numbers', sglang), ('glm47', lmdeploy), ('glm45', lmdeploy)):
        args = {'city': 'Oslo', key: value} if key != 'city' else {key: value}
        check(tool, text, (None, None, [('f', json.dumps(args, ensure_ascii=False))]))


def test_marker_text_in_quoted_number_slot_is_text() -> None:
    """A close-tag-like text inside a quoted number-typed value is no number and no structure."""
    raw = '"4</arg_value>2"'
    text = glm(('count', raw), ('city', 'x'))
    check('glm_quoted_numbers', text, (None, None, [('f', json.dumps({'count': raw, 'city': 'x'}))]))


def test_coerce_value() -> None:
    assert coerce_value('"42"', 'number', True) == 42
    assert coerce_value('"42"', 'number') == '"42"'
    assert coerce_value('"42"', 'integer', True) == 42 and type(coerce_value('"42"', 'integer', True)) is int
    assert coerce_value('"4.5"', 'integer', True) == '"4.5"'


def test_registration() -> None:
    cls = ToolParserManager.get('glm_quoted_numbers')
    assert cls.quoted_numbers and cls._xml_grammar().quoted_numbers
    assert not ToolParserManager.get('glm47').quoted_numbers
    assert issubclass(cls, ToolParserManager.get('glm47'))
