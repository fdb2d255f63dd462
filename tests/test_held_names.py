"""Unterminated names are held by the XML / DSML parsers, not by the router's buffer.

While a function name, parameter name (``<parameter=NAME>``, GLM ``<arg_key>``)
or DSML invoke / parameter header is still open, each chunk's text is consumed
into the parser's own state: the router's pending text stays bounded by a
marker's length, so work is linear in the name's length. The result is the
same for every chunking.
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import chunkings, complete, fixed_chunks, stream

D = '\uff5cDSML\uff5c'
LONG = 'w' * 3000 + ' x\U0001f600y '  # a space inside, an astral character, spaces around

REQUEST = {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}]}

# (dialect, text before the name, the name's terminator and the rest of the output)
SHAPES = {
    'qwen-function': ('qwen3coder', 'a<tool_call>\n<function=',
                      '>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>b'),
    'qwen-parameter': ('qwen3coder', 'a<tool_call>\n<function=get_weather>\n<parameter=',
                       '>\nParis\n</parameter>\n</function>\n</tool_call>b'),
    'glm-name': ('glm47', 'a<tool_call>', '\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>b'),
    'glm-name-then-close': ('glm47', 'a<tool_call>', '</tool_call>b'),
    'glm-arg-key': ('glm47', 'a<tool_call>get_weather\n<arg_key>',
                    '</arg_key>\n\n  <arg_value>Paris</arg_value>\n</tool_call>b'),
    'dsml-invoke': ('deepseek-v32', f'a\n\n<{D}function_calls>\n<{D}invoke name="',
                    f'">\n<{D}parameter name="city" string="true">Paris</{D}parameter>\n</{D}invoke>\n'
                    f'</{D}function_calls>b'),
    'dsml-parameter': ('deepseek-v32', f'a\n\n<{D}function_calls>\n<{D}invoke name="get_weather">\n<{D}parameter name="',
                       f'" string="true">Paris</{D}parameter>\n</{D}invoke>\n</{D}function_calls>b'),
}
TAGS = ('<tool_call>', '</tool_call>', '<function=', '<parameter=', '</parameter>', '<arg_key>', '</arg_key>',
        '<arg_value>', '</arg_value>', f'<{D}invoke', f'<{D}parameter', f'</{D}parameter>')


def parser(dialect: str) -> Any:
    return BaseResponseParser.with_parsers(None, dialect)(REQUEST)


@pytest.mark.parametrize('shape', list(SHAPES))
@pytest.mark.parametrize('name', ['get_weather', ' get_weather\n', LONG, 'a<b</c'])
def test_held_name_any_chunking(shape: str, name: str) -> None:
    dialect, head, tail = SHAPES[shape]
    text = head + name + tail
    expected = complete(parser(dialect), text).key()
    assert expected[0] == 'ab'
    for label, chunks in chunkings(text, TAGS, n_random=3):
        assert stream(parser(dialect), chunks).key() == expected, label


@pytest.mark.parametrize('shape', list(SHAPES))
@pytest.mark.parametrize('size', [1, 16])
def test_router_buffer_stays_bounded(shape: str, size: int) -> None:
    dialect, head, tail = SHAPES[shape]
    p = parser(dialect)
    p.stream_chunk(head, [])
    for chunk in fixed_chunks('n' * 20000, size):
        p.stream_chunk(chunk, [])
        assert len(p._pending) < 16
    rest = stream(p, [tail])
    one = complete(parser(dialect), head + 'n' * 20000 + tail)
    assert rest.calls == one.calls


@pytest.mark.parametrize('shape', list(SHAPES))
def test_unterminated_name_at_the_end(shape: str) -> None:
    dialect, head, _ = SHAPES[shape]
    text = head + 'get_weather'
    expected = complete(parser(dialect), text).key()
    for label, chunks in chunkings(text, TAGS, n_random=3):
        assert stream(parser(dialect), chunks).key() == expected, label
    for chunks in (list(text), [text, '']):
        assert stream(parser(dialect), chunks).key() == expected
