"""Marker text inside XML-like values is text unless the grammar confirms it (issue #27).

A coding agent that writes about tool-call formats, or edits a file holding
them, produces argument values with the literal text of a dialect's markers.
For every registered dialect of the XML-like family, well-formed outputs whose
string values carry each of the dialect's own markers (followed by more value
text, at the value's start, before a newline, all of them at once, inside a
typed JSON value) parse to exactly the value written, over one chunk, every
split inside every marker, fixed and random chunkings, an empty final chunk,
special-token streams (each marker one chunk) and real Qwen token streams with
their ids. Then LMDeploy's named repros, the bounded hold, the recoveries of a
missing close tag that still hold, and the whitespace limit of the lookahead.
"""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import BaseResponseParser, ToolParserManager, XmlToolParser
from tests.streaming import (
    atomic_chunks,
    check_messages,
    chunkings,
    complete,
    fixed_chunks,
    reconstruct,
    run_case,
    split_at,
    stream_flagged,
    token_chunks,
    tool_deltas,
)

SCHEMA = {'type': 'object', 'properties': {'a': {'type': 'string'}, 'b': {'type': 'string'}, 'o': {'type': 'object'}}}
REQUEST = {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}],
           'tools': [{'type': 'function', 'function': {'name': 'f', 'parameters': SCHEMA}}]}


def _dialects() -> dict[str, type]:
    """One registered name per XML-like dialect class."""
    out: dict[str, type] = {}
    for name in sorted(ToolParserManager.names()):
        cls = ToolParserManager.get(name)
        if isinstance(cls, type) and issubclass(cls, XmlToolParser) and cls not in out.values():
            out[name] = cls
    return out


DIALECTS = _dialects()
_DECLARED = ('tool_open_tag', 'tool_close_tag', 'function_open', 'function_name_end', 'arg_open', 'arg_name_end',
             'value_open', 'arg_value_close_tag', 'function_close')


def markers(cls: type) -> list[str]:
    """Every marker the dialect declares."""
    found = [getattr(cls, attr, None) for attr in _DECLARED]
    return list(dict.fromkeys(m for m in found if isinstance(m, str) and m))


def render(cls: type, name: str, args: list[tuple[str, str]]) -> str:
    """A well-formed block in the dialect's syntax (the template's newlines around values where it strips them)."""
    nl = '\n' if cls.strip_value_newlines else ''
    body = ''.join(f'{cls.arg_open}{k}{cls.arg_name_end}{cls.value_open or ""}{nl}{v}{nl}{cls.arg_value_close_tag}'
                   for k, v in args)
    return (f'{cls.tool_open_tag}{cls.function_open}{name}{cls.function_name_end or ""}{body}'
            f'{cls.function_close or ""}{cls.tool_close_tag}')


def parser(tool: str) -> Any:
    return BaseResponseParser.with_parsers(None, tool)(REQUEST)


def value_shapes(cls: type) -> list[tuple[str, str]]:
    """(id, value) pairs: each marker followed by more text, at the start, before a newline; all at once."""
    shapes = []
    for i, m in enumerate(markers(cls)):
        shapes += [(f'm{i}-mid', f'before {m} after'), (f'm{i}-start', f'{m}x'), (f'm{i}-newline', f'a {m}\n b')]
    shapes.append(('all', ' y '.join(markers(cls)) + ' end'))
    return shapes


CASES = [pytest.param(tool, vid, value, id=f'{tool}-{vid}') for tool, cls in DIALECTS.items()
         for vid, value in value_shapes(cls)]


def expected(value: str, content: str | None = 'tail') -> tuple[Any, Any, Any]:
    return content, None, [('f', json.dumps({'a': value, 'b': 'second'}, ensure_ascii=False))]


def test_every_xml_dialect_is_covered() -> None:
    assert {'glm47', 'qwen3coder', 'minicpm5', 'hunyuan', 'k2_horizon', 'seed_oss'} <= {
        n for name in DIALECTS for n in ToolParserManager.names() if ToolParserManager.get(n) is DIALECTS[name]}
    assert len(DIALECTS) >= 14


@pytest.mark.parametrize(('tool', 'vid', 'value'), CASES)
def test_marker_text_in_value_every_chunking(tool: str, vid: str, value: str) -> None:
    cls = ToolParserManager.get(tool)
    text = 'ok ' + render(cls, 'f', [('a', value), ('b', 'second')]) + 'tail'
    want = expected(value, 'ok tail')
    assert complete(parser(tool), text).key() == want
    for label, chunks in chunkings(text, markers(cls), n_random=3):
        assert run_case(parser(tool), chunks) == want, label
    for size in (1, 3):
        assert run_case(parser(tool), fixed_chunks(text, size), flush=True) == want, size
        # special-token streams: every marker arrives whole
        assert run_case(parser(tool), atomic_chunks(text, markers(cls), size)) == want, size


@pytest.mark.parametrize('tool', list(DIALECTS))
def test_marker_text_in_typed_value(tool: str) -> None:
    """A JSON object value whose strings hold every marker is converted whole."""
    cls = ToolParserManager.get(tool)
    obj = {'k': ' y '.join(markers(cls)), 'n': [1, f'{cls.arg_value_close_tag}\n']}
    value = json.dumps(obj, ensure_ascii=False)
    text = render(cls, 'f', [('o', value), ('a', 'x')])
    want = (None, None, [('f', json.dumps({'o': obj, 'a': 'x'}, ensure_ascii=False))])
    assert complete(parser(tool), text).key() == want
    for label, chunks in chunkings(text, markers(cls), n_random=3):
        assert run_case(parser(tool), chunks) == want, label


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_marker_soup_values_any_split(data: Any) -> None:
    """Values of markers and text in any order (each marker followed by text, maybe after whitespace), cut anywhere."""
    tool = data.draw(st.sampled_from(sorted(DIALECTS)), label='tool')
    cls = DIALECTS[tool]
    piece = st.one_of(st.sampled_from(markers(cls)).map(lambda m: (m, True)),
                      st.text(st.characters(blacklist_characters='<'), min_size=1, max_size=6).map(lambda t: (t, False)))
    parts = data.draw(st.lists(piece, max_size=8), label='parts')
    value = ''
    for text, is_marker in parts:
        value += text + (data.draw(st.sampled_from(['', ' ', '\n ', '\t']), label='space') + 'x' if is_marker else '')
    if cls.strip_value_newlines and value:
        value = 'v' + value + 'v'  # the template's newline around a value is not part of it
    text = render(cls, 'f', [('a', value), ('b', 'second')]) + 'tail'
    cuts = data.draw(st.lists(st.integers(1, len(text) - 1), max_size=20), label='cuts')
    flush = data.draw(st.booleans(), label='empty final chunk')
    assert run_case(parser(tool), split_at(text, cuts), flush=flush) == expected(value), (tool, value)


QWEN_FAMILY = [t for t, c in DIALECTS.items() if c.tool_open_tag == '<tool_call>' and c.function_open == '<function=']


@pytest.mark.parametrize('tool', QWEN_FAMILY)
def test_marker_text_in_value_qwen_token_stream_with_ids(tool: str, qwen_tokenizer: Any) -> None:
    """Token by token with the ids the engine passes (``<tool_call>`` / ``</tool_call>`` are single tokens)."""
    cls = ToolParserManager.get(tool)
    value = ' y '.join(markers(cls)) + ' end'
    text = 'ok ' + render(cls, 'f', [('a', value), ('b', 'second')]) + 'tail'
    chunks = token_chunks(qwen_tokenizer, text)
    assert run_case(parser(tool), chunks) == expected(value, 'ok tail')
    assert run_case(parser(tool), chunks, flush=True) == expected(value, 'ok tail')


# ---- LMDeploy's cases (tests/test_lmdeploy/.../test_*_parser.py in LMDeploy 0.18) ------------------------

LMDEPLOY_CASES = [
    # test_outer_close_text_inside_argument_is_not_a_block_boundary (GLM-4.7)
    ('glm47', '<tool_call>f<arg_key>a</arg_key><arg_value>before </tool_call> after</arg_value></tool_call>tail'),
    # GLM-4.5's newlines between tags
    ('glm45', '<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>before </tool_call> after</arg_value>\n</tool_call>tail'),
    # test_xml_outer_close_text_inside_parameter_value_is_not_a_block_boundary (Qwen3-Coder)
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\nbefore </tool_call> after\n</parameter>\n</function>\n'
                   '</tool_call>tail'),
    ('interns2-preview', '<tool_call>\n<function=f>\n<parameter=a>\nbefore </tool_call> after\n</parameter>\n'
                         '</function>\n</tool_call>tail'),
]


@pytest.mark.parametrize(('tool', 'text'), LMDEPLOY_CASES, ids=[c[0] for c in LMDEPLOY_CASES])
def test_outer_close_text_inside_value_is_not_a_block_boundary(tool: str, text: str) -> None:
    want = ('tail', None, [('f', '{"a": "before </tool_call> after"}')])
    assert complete(parser(tool), text).key() == want
    tags = markers(ToolParserManager.get(tool))
    for label, chunks in chunkings(text, tags, n_random=10):
        assert run_case(parser(tool), chunks) == want, label
    for cut in range(1, len(text)):
        assert run_case(parser(tool), [text[:cut], text[cut:]]) == want, cut


def _streamed_args(p: Any, chunks: list[str]) -> str:
    return ''.join(d.function.arguments or '' for c in chunks for d in tool_deltas(p.stream_chunk(c, [])))


@pytest.mark.parametrize(('tool', 'head'), [
    ('glm47', '<tool_call>f<arg_key>a</arg_key><arg_value>'),
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\n'),
])
def test_marker_is_held_only_until_what_follows_decides(tool: str, head: str) -> None:
    p = parser(tool)
    assert _streamed_args(p, [head, 'before ']) == '{"a": "before '
    assert _streamed_args(p, ['</tool_call>']) == ''  # may end the value: held
    assert _streamed_args(p, [' ']) == ''  # whitespace does not decide
    assert _streamed_args(p, ['a']) == '</tool_call> a'  # text: the marker was text
    p = parser(tool)
    close = ToolParserManager.get(tool).arg_value_close_tag
    assert _streamed_args(p, [head, 'v', close]) == '{"a": "v'
    assert _streamed_args(p, ['\n']) == ''
    assert _streamed_args(p, ['x']) == f'{close}\\nx'


# ---- recoveries of a missing close tag that still hold ----------------------------------

RECOVERIES = [
    # Qwen3-Coder: </parameter> missing before a </function> that the block's end, another call or the end confirms
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\nv\n</function>\n</tool_call>tail', 'tail',
     ['{"a": "v"}']),
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\nv\n</function>\n<function=f>\n</function>\n</tool_call>',
     None, ['{"a": "v"}', '{}']),
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\nv\n</function>', None, ['{"a": "v"}']),
    # ... </function> missing too: the block's close tag at the end of the output or before another block
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\nv\n</tool_call>', None, ['{"a": "v"}']),
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\nv\n</tool_call>\n<tool_call>\n<function=f>\n</function>\n'
                   '</tool_call>tail', 'tail', ['{"a": "v"}', '{}']),
    # GLM: a missing </arg_value> at the end of the output or before another block
    ('glm47', '<tool_call>f<arg_key>a</arg_key><arg_value>v</tool_call>', None, ['{"a": "v"}']),
    ('glm47', '<tool_call>f<arg_key>a</arg_key><arg_value>v</tool_call>\n<tool_call>f</tool_call>tail', 'tail',
     ['{"a": "v"}', '{}']),
    # HY v3: the call's close before the block's close
    ('hunyuan', '<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource><arg_key:opensource>a'
                '</arg_key:opensource><arg_value:opensource>v</tool_call:opensource></tool_calls:opensource>tail',
     'tail', ['{"a": "v"}']),
    # MiniCPM 5: the block's close tag at the end of the output
    ('minicpm5', '<function name="f"><param name="a">v</function>', None, ['{"a": "v"}']),
]


@pytest.mark.parametrize(('tool', 'text', 'content', 'args'), RECOVERIES, ids=[f'{r[0]}-{i}' for i, r in
                                                                              enumerate(RECOVERIES)])
def test_recoveries_that_still_hold(tool: str, text: str, content: str | None, args: list[str]) -> None:
    want = (content, None, [('f', a) for a in args])
    assert complete(parser(tool), text).key() == want
    for label, chunks in chunkings(text, markers(ToolParserManager.get(tool)), n_random=5):
        assert run_case(parser(tool), chunks) == want, label


@pytest.mark.parametrize(('tool', 'text', 'value'), [
    # the same text as a value that holds the marker: read as that value
    ('glm47', '<tool_call>f<arg_key>a</arg_key><arg_value>v</tool_call>after', 'v</tool_call>after'),
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\nv\n</tool_call>after', 'v\n</tool_call>after'),
    ('qwen3coder', '<tool_call>\n<function=f>\n<parameter=a>\nv\n<parameter=b>\nw\n</parameter>\n</function>\n'
                   '</tool_call>', 'v\n<parameter=b>\nw'),
    ('glm47', '<tool_call>f<arg_key>a</arg_key><arg_value>v<arg_key>b</arg_key><arg_value>w</arg_value></tool_call>',
     'v<arg_key>b</arg_key><arg_value>w'),
])
def test_unconfirmed_markers_stay_in_the_value(tool: str, text: str, value: str) -> None:
    want = (None, None, [('f', json.dumps({'a': value}))])
    assert complete(parser(tool), text).key() == want
    for label, chunks in chunkings(text, markers(ToolParserManager.get(tool)), n_random=5):
        assert run_case(parser(tool), chunks) == want, label


def test_lookahead_reads_at_most_64_whitespace_characters() -> None:
    head = '<tool_call>\n<function=f>\n<parameter=a>\nv\n'
    # a recovered </function> needs its confirmation within the limit
    far = head + '</function>' + ' ' * 65 + '</tool_call>x'
    assert complete(parser('qwen3coder'), far).key() == (
        None, None, [('f', json.dumps({'a': 'v\n</function>' + ' ' * 65 + '</tool_call>x'}))])
    near = head + '</function>' + ' ' * 64 + '</tool_call>'
    assert complete(parser('qwen3coder'), near).key() == (None, None, [('f', '{"a": "v"}')])
    # the close tag followed by only whitespace past the limit ends the value
    glm = ('<tool_call>f<arg_key>a</arg_key><arg_value>v</arg_value>' + ' ' * 80
           + '<arg_key>b</arg_key><arg_value>w</arg_value></tool_call>')
    for label, chunks in chunkings(glm, markers(ToolParserManager.get('glm47')), n_random=3):
        assert run_case(parser('glm47'), chunks) == (None, None, [('f', '{"a": "v", "b": "w"}')]), label


# ---- the rule is the family's: a declared dialect, and one whose markers start differently ----------------


class Semi(XmlToolParser):
    """``<call>[NAME](KEY=VALUE;)...</call>``: the value close tag starts unlike the block's close tag."""

    tool_open_tag = '<call>'
    tool_close_tag = '</call>'
    function_open = '['
    function_name_end = ']'
    arg_open = '('
    arg_name_end = '='
    arg_value_close_tag = ';'
    multiple_calls = True


def test_declared_dialect_with_other_leads() -> None:
    cls = BaseResponseParser.with_parsers(None, None)
    cls.tool_parser_cls = Semi
    text = 'x <call>[f](a=p;q </call> r ( s [t;(b=second;</call> y'
    want = ('x  y', None, [('f', '{"a": "p;q </call> r ( s [t", "b": "second"}')])
    assert complete(cls(REQUEST), text).key() == want
    for label, chunks in chunkings(text, ('<call>', '</call>', ';', '(', '[', ']', '='), n_random=5):
        p = cls(REQUEST)
        flagged = stream_flagged(p, chunks)
        check_messages(flagged)
        assert reconstruct(p, flagged).key() == want, label


@pytest.mark.parametrize('attr', ['value_end_tags', 'value_ends_at_function_close'])
def test_removed_value_end_declarations_are_type_errors(attr: str) -> None:
    bad = type('Bad', (Semi,), {attr: ('(',) if attr == 'value_end_tags' else True})
    with pytest.raises(TypeError, match=attr):
        bad()
