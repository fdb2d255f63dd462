"""MiniMax M2 tool calls (``<minimax:tool_call>``) and the MiniMax M2 / M3 reasoning modes.

Cases use the chat template's shape (``\\n<minimax:tool_call>\\n<invoke name="X">\\n
<parameter name="K">V</parameter>\\n</invoke>\\n</minimax:tool_call>``) and are
checked three ways: streamed reconstruction over many chunkings (and a stream
where ``<minimax:tool_call>``, ``<think>`` and ``</think>`` are atomic, as
tokens), ``parse_complete`` and the literal expected result. Values are typed
by the request's JSON schema. The newline the template writes before
``<minimax:tool_call>`` stays in the content (the open tag has no lead, so a
block written right after other text is still found).
"""
from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import (
    MiniMaxM2ReasoningParser,
    MiniMaxM2ToolParser,
    MiniMaxM3ReasoningParser,
    ReasoningParserManager,
    ToolParserManager,
)
from tests.attr_cases import (
    Case,
    check_chunkings,
    check_complete,
    check_every_two_way_split,
    check_fragments,
    marker_atomic_chunks,
    stream_key,
)
from tests.streaming import split_at, tool

OPEN, CLOSE = '<minimax:tool_call>', '</minimax:tool_call>'
TAGS = ('<think>', '</think>', OPEN, CLOSE, '<invoke', '</invoke>', '<parameter', '</parameter>', '">')
ATOMIC = ('<think>', '</think>', OPEN, CLOSE)

BOOK = {'type': 'function', 'function': {'name': 'book', 'parameters': {'type': 'object', 'properties': {
    'n': {'type': 'integer'}, 'price': {'type': 'number'}, 'ok': {'type': 'boolean'},
    'tags': {'type': 'array', 'items': {'type': 'string'}}, 'opts': {'type': 'object'},
    'note': {'type': ['string', 'null']}, 'free': {}, 'text': {'type': 'string'},
    'either': {'anyOf': [{'type': 'integer'}, {'type': 'string'}]}}}}}
TOOLS = {'tools': [tool('get_weather'), tool('get_time'), tool('search'), BOOK]}
M2 = 'minimax_m2'


def blk(*invokes: str) -> str:
    return f'\n{OPEN}\n' + ''.join(i + '\n' for i in invokes) + CLOSE


def inv(fn: str, *params: str) -> str:
    return f'<invoke name="{fn}">\n' + ''.join(p + '\n' for p in params) + '</invoke>'


def par(name: str, value: str) -> str:
    return f'<parameter name="{name}">{value}</parameter>'


def case(id: str, text: str, content: str | None, reasoning: str | None, calls: list[tuple[str, str]],
         reasoning_parser: str | None = M2, invalid_json: bool = False, **request: Any) -> Case:
    return Case(id, text, content, reasoning, calls, M2, reasoning_parser, {**TOOLS, **request}, invalid_json)


CODE = 'def f(a, b):\n    return a < b and "</param" + \'</invoke>\'  # 北京 😀\n'
CASES = [
    case('m2-basic', 'The user wants the weather in Paris.\n</think>\n\nLet me check.'
         + blk(inv('get_weather', par('city', 'Paris'), par('unit', 'celsius'))),
         '\n\nLet me check.\n', 'The user wants the weather in Paris.\n',
         [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    case('m2-model-opens-think', '<think>\nPlan.\n</think>\n\nDone.', '\n\nDone.', '\nPlan.\n', []),
    case('m2-typed-values', '</think>' + blk(inv('book', par('n', '3'), par('price', '9.5'), par('ok', 'true'),
                                                 par('tags', '["a", "b"]'), par('opts', '{"x": {"y": [1]}}'),
                                                 par('note', 'null'), par('free', '{"raw": 1}'),
                                                 par('text', '42'), par('either', '7'))),
         '\n', None, [('book', '{"n": 3, "price": 9.5, "ok": true, "tags": ["a", "b"], "opts": {"x": {"y": [1]}}, '
                               '"note": null, "free": "{\\"raw\\": 1}", "text": "42", "either": 7}')]),
    case('m2-value-not-of-its-type', '</think>' + blk(inv('book', par('n', 'many'), par('ok', 'maybe'),
                                                          par('note', 'a note'))),
         '\n', None, [('book', '{"n": "many", "ok": "maybe", "note": "a note"}')]),
    case('m2-raw-code-value', '</think>' + blk(inv('search', par('query', CODE), par('limit', ' 10 '))),
         '\n', None, [('search', '{"query": "def f(a, b):\\n    return a < b and \\"</param\\" + \'</invoke>\'  '
                                 '# 北京 😀\\n", "limit": 10}')]),
    case('m2-several-with-unknown', 'Hmm.</think>Three.'
         + blk(inv('get_weather', par('city', 'A')), inv('rm_rf', par('path', '/')), inv('search', par('query', 'q'))),
         'Three.\n', 'Hmm.', [('get_weather', '{"city": "A"}'), ('search', '{"query": "q"}')]),
    case('m2-unknown-parameter-is-text', '</think>' + blk(inv('search', par('query', 'q'), par('extra', '5'))),
         '\n', None, [('search', '{"query": "q", "extra": "5"}')]),
    case('m2-text-after-block', '</think>Checking.' + blk(inv('get_time')) + '\nThe tool will answer.',
         'Checking.\n\nThe tool will answer.', None, [('get_time', '{}')]),
    case('m2-two-blocks', '</think>' + blk(inv('get_time')) + blk(inv('search', par('query', 'x'))),
         '\n', None, [('get_time', '{}'), ('search', '{"query": "x"}')]),
    case('m2-tool-in-reasoning', 'I need the time.' + blk(inv('get_time')) + '\nNow answer.</think>Noon.',
         'Noon.', 'I need the time.\n\nNow answer.', [('get_time', '{}')]),
    case('m2-no-reasoning-parser', 'Hi.' + blk(inv('get_time')), 'Hi.\n', None, [('get_time', '{}')], None),
    case('m2-tool-choice-none', '</think>x' + blk(inv('get_time')), 'x' + blk(inv('get_time')), None, [],
         tool_choice='none'),
    case('m2-lookalikes', '</think>a <minimax:tool b <invoke name="x"> <parameter',
         'a <minimax:tool b <invoke name="x"> <parameter', None, []),
    # malformed and truncated payloads
    case('m2-self-closing-invoke', '</think>' + blk('<invoke name="get_time"/>', inv('search', par('query', 'q'))),
         '\n', None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
    case('m2-parameter-without-name', '</think>' + blk(inv('search', '<parameter>x</parameter>', par('query', 'q'))),
         '\n', None, [('search', '{"": "x", "query": "q"}')]),
    case('m2-invoke-without-name', '</think>' + blk('<invoke>\n</invoke>', inv('get_time')),
         '\n', None, [('get_time', '{}')]),
    case('m2-missing-invoke-close', '</think>' + f'\n{OPEN}\n<invoke name="search">\n{par("query", "q")}\n{CLOSE}ok',
         '\nok', None, [('search', '{"query": "q"}')]),
    case('m2-truncated-in-string', '</think>Sure.' + f'\n{OPEN}\n<invoke name="get_weather">\n<parameter name="city">Par',
         'Sure.\n', None, [('get_weather', '{"city": "Par"}')]),
    case('m2-truncated-in-typed-value', '</think>' + f'\n{OPEN}\n<invoke name="search">\n<parameter name="limit">4',
         '\n', None, [('search', '{"limit": 4}')]),
    case('m2-truncated-in-header', '</think>' + f'\n{OPEN}\n<invoke name="search">\n<parameter name="li',
         '\n', None, [('search', '{}')]),
    case('m2-truncated-in-invoke-header', '</think>ok' + f'\n{OPEN}\n<invoke name="get_wea', 'ok\n', None, []),
    case('m2-missing-parameter-close-at-end', '</think>' + f'\n{OPEN}\n<invoke name="search">\n<parameter name="query">q'
         f'\n</invoke>\n{CLOSE}', '\n', None, [('search', '{"query": "q\\n</invoke>\\n</minimax:tool_call>"}')]),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_parse_complete(case: Case, make_parser: Any) -> None:
    check_complete(case, make_parser)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_chunkings(case: Case, make_parser: Any) -> None:
    check_chunkings(case, make_parser, TAGS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_atomic_markers(case: Case, make_parser: Any) -> None:
    assert stream_key(case, make_parser, marker_atomic_chunks(case.text, ATOMIC)) == case.expected


@pytest.mark.parametrize('case', CASES[:3], ids=CASE_IDS[:3])
def test_every_two_way_split(case: Case, make_parser: Any) -> None:
    check_every_two_way_split(case, make_parser)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_streamed_arguments_match_complete(case: Case, make_parser: Any) -> None:
    check_fragments(case, make_parser)


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '1000' if os.environ.get('LMPARSE_SLOW') else '100')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    cuts = data.draw(st.lists(st.integers(1, max(1, len(case.text) - 1)), max_size=30), label='cuts')
    assert stream_key(case, make_parser, split_at(case.text, cuts)) == case.expected, case.id


def test_string_value_streams_and_typed_value_is_held(make_parser: Any) -> None:
    parser = make_parser(M2, M2, **TOOLS)
    head = f'</think>\n{OPEN}\n<invoke name="search">\n<parameter name="query">long text '
    out = [d.function.arguments for m, _ in parser.stream_chunk(head, []) for d in (m.tool_calls or [])]
    assert out == [None, '{"query": "', 'long text ']
    out = [d.function.arguments for m, _ in parser.stream_chunk('more</parameter>\n<parameter name="limit">1', [])
           for d in (m.tool_calls or [])]
    assert out == ['more"', ', "limit": ']  # the integer waits for its close tag
    out = [d.function.arguments for m, _ in parser.stream_chunk('2</parameter>', []) for d in (m.tool_calls or [])]
    assert out == []  # a close tag ends the value once what follows it confirms it
    out = [d.function.arguments for m, _ in parser.stream_chunk('\n</invoke>', []) for d in (m.tool_calls or [])]
    assert out == ['12', '}']


def test_registry() -> None:
    for name in ('minimax_m2', 'minimax-m2'):
        assert ToolParserManager.get(name) is MiniMaxM2ToolParser
    for name in ('minimax_m2', 'minimax-m2', 'minimax'):
        assert ReasoningParserManager.get(name) is MiniMaxM2ReasoningParser
    for name in ('minimax_m3', 'minimax-m3'):
        assert ReasoningParserManager.get(name) is MiniMaxM3ReasoningParser
    assert MiniMaxM2ToolParser.get_tool_open_tag() == OPEN and MiniMaxM2ToolParser.get_tool_close_tag() == CLOSE


M3 = [
    Case('m3-thinking-enabled', 'Plan.</mm:think>Answer.', 'Answer.', 'Plan.', [], M2, 'minimax_m3',
         {'chat_template_kwargs': {'thinking_mode': 'enabled'}}),
    Case('m3-adaptive-opens-tag', 'Hi <mm:think>Plan.</mm:think>Answer.', 'Hi Answer.', 'Plan.', [], M2, 'minimax_m3'),
    Case('m3-no-thinking', 'Answer <think>not a tag</think>.', 'Answer <think>not a tag</think>.', None, [], M2,
         'minimax_m3'),
]


@pytest.mark.parametrize('case', M3, ids=[c.id for c in M3])
def test_m3_reasoning(case: Case, make_parser: Any) -> None:
    check_complete(case, make_parser)
    check_chunkings(case, make_parser, ('<mm:think>', '</mm:think>'))


# ---- MiniMax M3: namespace-marked elements ------------------------------------------

NS = ']<]minimax[>['
M3_TAGS = (NS, f'{NS}<tool_call>', f'{NS}</tool_call>', f'{NS}<invoke', f'{NS}</invoke>', '">')
ORDER = {'type': 'function', 'function': {'name': 'create_order', 'parameters': {'type': 'object', 'properties': {
    'user_id': {'type': 'integer'}, 'note': {'type': 'string'}, 'meta': {'type': 'object'}, 'tags': {'type': 'array'},
    'items': {'type': 'array', 'items': {'type': 'object', 'properties': {'sku': {'type': 'string'},
                                                                           'qty': {'type': 'integer'}}}},
    'flag': {'type': 'boolean'}, 'maybe': {'type': ['string', 'null']}}}}}
M3_TOOLS = {'tools': [tool('get_weather'), tool('get_time'), tool('search'), ORDER]}


def m3_blk(*invokes: str) -> str:
    return f'\n{NS}<tool_call>\n' + ''.join(i + '\n' for i in invokes) + f'{NS}</tool_call>'


def m3_inv(fn: str, *params: str) -> str:
    return f'{NS}<invoke name="{fn}">\n' + ''.join(p + '\n' for p in params) + f'{NS}</invoke>'


def el(name: str, *body: str) -> str:
    return f'{NS}<{name}>' + ''.join(body) + f'{NS}</{name}>'


def m3(id: str, text: str, content: str | None, reasoning: str | None, calls: list[tuple[str, str]],
       invalid_json: bool = False, **request: Any) -> Case:
    return Case(id, text, content, reasoning, calls, 'minimax_m3', 'minimax_m3', {**M3_TOOLS, **request}, invalid_json)


ENABLED = {'chat_template_kwargs': {'thinking_mode': 'enabled'}}
M3_CASES = [
    m3('m3-order', 'Plan the order.</mm:think>Placing it.' + m3_blk(m3_inv(
        'create_order', el('user_id', '42'), el('note', 'gift <wrap> "now" 北京'),
        el('items', '\n', el('item', el('sku', 'book-001'), el('qty', '2')), '\n', el('item', el('sku', 'pen')), '\n'),
        el('meta', el('a', '1'), el('a', '2')), el('tags'), el('flag', 'true'), el('maybe', 'null'))),
       'Placing it.\n', 'Plan the order.',
       [('create_order', '{"user_id": 42, "note": "gift <wrap> \\"now\\" 北京", "items": [{"sku": "book-001", "qty": 2}, '
                         '{"sku": "pen"}], "meta": {"a": ["1", "2"]}, "tags": [], "flag": true, "maybe": null}')],
       **ENABLED),
    m3('m3-several-with-unknown', m3_blk(m3_inv('get_weather', el('city', 'Paris')), m3_inv('rm', el('p', '/')),
                                         m3_inv('search', el('query', 'q'), el('limit', '5'))),
       '\n', None, [('get_weather', '{"city": "Paris"}'), ('search', '{"query": "q", "limit": 5}')]),
    m3('m3-untyped-and-mixed', m3_blk(m3_inv('create_order', el('extra', 'free'), el('obj', 'text ', el('k', 'v')),
                                             el('invoke_id', '7'))),
       '\n', None, [('create_order', '{"extra": "free", "obj": {"k": "v", "$text": "text "}, "invoke_id": "7"}')]),
    m3('m3-in-reasoning', 'Need time.' + m3_blk(m3_inv('get_time')) + 'More.</mm:think>Noon.', 'Noon.',
       'Need time.\nMore.', [('get_time', '{}')], **ENABLED),
    m3('m3-text-after', 'a' + m3_blk(m3_inv('get_time')) + '\nb', 'a\n\nb', None, [('get_time', '{}')]),
    m3('m3-not-markup', 'a <tool_call> <invoke name="x"> ]<]mini', 'a <tool_call> <invoke name="x"> ]<]mini', None, []),
    # malformed and truncated
    m3('m3-invoke-without-name', m3_blk(f'{NS}<invoke>\n{NS}</invoke>', m3_inv('get_time')), '\n', None,
       [('get_time', '{}')]),
    m3('m3-stray-close-and-missing-invoke-close', m3_blk(f'{NS}<invoke name="search">\n{NS}</x>' + el('query', 'q')),
       '\n', None, [('search', '{"query": "q"}')]),
    m3('m3-missing-parameter-close', m3_blk(f'{NS}<invoke name="search">\n{NS}<limit>5\n{NS}</invoke>'), '\n', None,
       [('search', '{"limit": 5}')]),
    m3('m3-truncated-in-string', f'\n{NS}<tool_call>\n{NS}<invoke name="get_weather">\n{NS}<city>Par', '\n', None,
       [('get_weather', '{"city": "Par"}')]),
    m3('m3-truncated-in-nested', f'\n{NS}<tool_call>\n{NS}<invoke name="create_order">\n{NS}<items>{NS}<item>{NS}<sku>p',
       '\n', None, [('create_order', '{"items": "]<]minimax[>[<item>]<]minimax[>[<sku>p"}')]),
    m3('m3-truncated-in-header', f'\n{NS}<tool_call>\n{NS}<invoke name="search">\n{NS}<lim', '\n', None,
       [('search', '{}')]),
    m3('m3-truncated-in-invoke-header', f'ok\n{NS}<tool_call>\n{NS}<invoke name="get_t', 'ok\n', None, []),
]
M3_IDS = [c.id for c in M3_CASES]


@pytest.mark.parametrize('case', M3_CASES, ids=M3_IDS)
def test_m3_parse_complete(case: Case, make_parser: Any) -> None:
    check_complete(case, make_parser)


@pytest.mark.parametrize('case', M3_CASES, ids=M3_IDS)
def test_m3_stream_chunkings(case: Case, make_parser: Any) -> None:
    check_chunkings(case, make_parser, M3_TAGS)
    assert stream_key(case, make_parser, marker_atomic_chunks(case.text, (NS, '<mm:think>', '</mm:think>'))) \
        == case.expected


@pytest.mark.parametrize('case', M3_CASES[:2], ids=M3_IDS[:2])
def test_m3_every_two_way_split(case: Case, make_parser: Any) -> None:
    check_every_two_way_split(case, make_parser)


@pytest.mark.parametrize('case', M3_CASES, ids=M3_IDS)
def test_m3_streamed_arguments_match_complete(case: Case, make_parser: Any) -> None:
    check_fragments(case, make_parser)


def test_m3_every_truncation_streams_like_complete(make_parser: Any) -> None:
    text = M3_CASES[0].text
    for n in range(1, len(text) + 1):
        cut = Case('cut', text[:n], None, None, [], 'minimax_m3', 'minimax_m3', {**M3_TOOLS, **ENABLED})
        want = stream_key(cut, make_parser, [cut.text])
        assert stream_key(cut, make_parser, marker_atomic_chunks(cut.text, (NS,))) == want, n


def test_m3_string_streams_and_registry(make_parser: Any) -> None:
    from lmparse import MiniMaxM3ToolParser
    for name in ('minimax_m3', 'minimax-m3'):
        assert ToolParserManager.get(name) is MiniMaxM3ToolParser
    assert MiniMaxM3ToolParser.get_tool_open_tag() == f'{NS}<tool_call>'
    parser = make_parser('minimax_m3', 'minimax_m3', **M3_TOOLS)
    head = f'x{NS}<tool_call>\n{NS}<invoke name="search">\n{NS}<query>long '
    out = [d.function.arguments for m, _ in parser.stream_chunk(head, []) for d in (m.tool_calls or [])]
    assert out == [None, '{"query": "', 'long ']


# ---- minimax_m2_append_think / minimax-append-think: reasoning inline in content -------------

APPEND_THINK_CASES = [
    # (output, request fields, content, call names)
    ('Let me check.</think>Sure.\n<minimax:tool_call>\n<invoke name="get_weather">\n'
     '<parameter name="city">Oslo</parameter>\n</invoke>\n</minimax:tool_call>', {},
     '<think>Let me check.</think>Sure.\n', ['get_weather']),
    ('</think>Answer.', {}, '<think></think>Answer.', []),
    ('<think>x</think>y', {}, '<think>x</think>y', []),  # the model's own open tag is the prompt's
    ('still thinking', {}, '<think>still thinking', []),
    ('<think>a</think>b', {'chat_template_kwargs': {'enable_thinking': False}}, '<think>a</think>b', []),
    ('plain', {'chat_template_kwargs': {'enable_thinking': False}}, 'plain', []),
]


@pytest.mark.parametrize('name', ['minimax_m2_append_think', 'minimax-append-think'])
@pytest.mark.parametrize('case', APPEND_THINK_CASES, ids=[str(i) for i in range(len(APPEND_THINK_CASES))])
def test_append_think_keeps_reasoning_inline(name: str, case: Any, make_parser: Any) -> None:
    from tests.streaming import chunkings, reconstruct, stream_flagged
    text, fields, content, names = case
    assert ReasoningParserManager.get(name).inline_reasoning is True
    done = make_parser(name, 'minimax-m2', **fields).parse_complete(text)
    assert (done[0], done[2], [c.function.name for c in done[1] or ()]) == (content, None, names)
    for label, chunks in chunkings(text, ('<think>', '</think>', '<minimax:tool_call>', '</minimax:tool_call>')):
        parser = make_parser(name, 'minimax-m2', **fields)
        flagged = stream_flagged(parser, chunks, flush=True)
        assert all(m.reasoning_content is None for m, _ in flagged), label
        got = reconstruct(parser, flagged)
        assert (got.content, [n for n, _ in got.calls]) == (content, names), label
