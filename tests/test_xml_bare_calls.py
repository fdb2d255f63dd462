"""Qwen3-Coder calls written without ``<tool_call>`` (bare ``<function=NAME>...</function>``).

A bare call in plain text is a call when NAME is an offered tool and an
argument or ``</function>`` follows the name; consecutive bare calls are
separate calls, an orphan ``</tool_call>`` after one is consumed, and
anything else (an unknown name, prose, a truncated name) stays content,
byte for byte. Streamed over every chunking the result equals
``parse_complete`` and the expected literal. Sources: vLLM's qwen3 parser
(content ``<function=`` transition) and SGLang's ``qwen3_coder_detector``.
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import check_identity_first, chunkings, complete, fixed_chunks, stream, stream_flagged, tool_deltas

PROPS = {'get_weather': {'city': {'type': 'string'}, 'days': {'type': 'integer'}}, 'get_time': {}}
TOOLS = [{'type': 'function', 'function': {'name': n, 'parameters': {'type': 'object', 'properties': p}}}
         for n, p in PROPS.items()]
REQUEST = {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}], 'tools': TOOLS}
NO_TOOLS = {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}]}
TAGS = ('<tool_call>', '</tool_call>', '<function=', '</function>', '<parameter=', '</parameter>', '<think>',
        '</think>')

W = '<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>'
W_CALL = ('get_weather', '{"city": "Paris", "days": 3}')
T = '<function=get_time>\n</function>'
T_CALL = ('get_time', '{}')

# (id, text, expected content, expected calls); reasoning parser None, tools offered
CASES = [
    ('at-start', W, None, [W_CALL]),
    ('after-text', 'Let me check.\n' + W, 'Let me check.\n', [W_CALL]),
    ('orphan-close', W + '\n</tool_call>', None, [W_CALL]),
    ('orphan-close-then-text', 'a' + W + '\n</tool_call>\nb', 'a\nb', [W_CALL]),
    ('followed-by-text', W + '\nIt is sunny.', '\nIt is sunny.', [W_CALL]),
    ('several', W + '\n' + T + '\n' + W, None, [W_CALL, T_CALL, W_CALL]),
    ('several-orphan-each', W + '\n</tool_call>\n' + T + '\n</tool_call>', '\n', [W_CALL, T_CALL]),
    ('no-arguments', T + 'x', 'x', [T_CALL]),
    ('name-spaces', '<function= get_time >\n</function>', None, [T_CALL]),
    ('missing-param-close', '<function=get_weather>\n<parameter=city>\nParis\n</function>\n</tool_call>z',
     'z', [('get_weather', '{"city": "Paris"}')]),
    ('missing-function-close', '<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</tool_call>z',
     'z', [('get_weather', '{"city": "Paris"}')]),
    ('mixed-block-then-bare', '<tool_call>\n' + T + '\n</tool_call>\n' + W, '\n', [T_CALL, W_CALL]),
    ('mixed-bare-then-block', W + '\n<tool_call>\n' + T + '\n</tool_call>', None, [W_CALL, T_CALL]),
    ('mixed-bare-text-block', W + ' ok <tool_call>\n' + T + '\n</tool_call>!', ' ok !', [W_CALL, T_CALL]),
    # unknown names and prose stay content, byte for byte
    # a tag right after a rejected name is read as a tag for every chunking (found by the fuzzer)
    ('rejected-then-block', '<function=\x00<tool_call>\n' + T + '\n</tool_call>', '<function=\x00', [T_CALL]),
    ('rejected-prefix-then-block', '<function=get_x<tool_call>\n' + T + '\n</tool_call>', '<function=get_x',
     [T_CALL]),
    ('rejected-then-bare', '<function=zz<function=get_time>\n</function>', '<function=zz', [T_CALL]),
    ('rejected-at-space-then-block', '<function=get w<tool_call>\n' + T + '\n</tool_call>', '<function=get w',
     [T_CALL]),
    ('unknown-name', 'Use <function=lookup>\n<parameter=q>\nx\n</parameter>\n</function> here.',
     'Use <function=lookup>\n<parameter=q>\nx\n</parameter>\n</function> here.', []),
    ('unknown-then-known', '<function=nope>\n</function>\n' + T, '<function=nope>\n</function>\n', [T_CALL]),
    ('known-then-unknown', T + '\n<function=nope>\n</function>z', '\n<function=nope>\n</function>z', [T_CALL]),
    ('prose-known-name', 'Write <function=get_weather> to ask for the weather.',
     'Write <function=get_weather> to ask for the weather.', []),
    ('prose-name-prefix', 'the <function=get_ tag', 'the <function=get_ tag', []),
    ('prose-unterminated', 'see <function=get_weather and more', 'see <function=get_weather and more', []),
    ('empty-name', '<function=>\n</function>', '<function=>\n</function>', []),
    # truncations
    ('truncated-opener', 'a <function', 'a <function', []),
    ('truncated-after-opener', 'a <function=', 'a <function=', []),
    ('truncated-name', 'a <function=get_wea', 'a <function=get_wea', []),
    ('truncated-after-name', 'a <function=get_weather>\n', 'a <function=get_weather>\n', []),
    ('truncated-in-value', 'a <function=get_weather>\n<parameter=city>\nPar', 'a ', [('get_weather', '{"city": "Par"}')]),
    ('truncated-after-call', 'a ' + T + '\n</tool', 'a \n</tool', [T_CALL]),
    # near-misses of the opener
    ('near-miss-function', 'a <function b <functions=get_time> <Function=get_time>',
     'a <function b <functions=get_time> <Function=get_time>', []),
    ('near-miss-lt', '1 < 2 <f <fun <function_x', '1 < 2 <f <fun <function_x', []),
]


def parser(reasoning: str | None = None, request: dict[str, Any] = REQUEST, tool: str = 'qwen3coder') -> Any:
    return BaseResponseParser.with_parsers(reasoning, tool)(request)


def check_every_chunking(make: Any, text: str, expected: tuple[Any, ...]) -> None:
    assert complete(make(), text).key() == expected
    for label, chunks in chunkings(text, TAGS):
        flagged = stream_flagged(make(), chunks)
        check_identity_first(tool_deltas(flagged))
        assert stream(make(), chunks).key() == expected, label
        assert stream(make(), chunks + ['']).key() == expected, label + '+empty'


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize('tool', ['qwen3coder', 'interns2-preview'])
def test_bare_calls_any_chunking(case: tuple[Any, ...], tool: str) -> None:
    _, text, content, calls = case
    check_every_chunking(lambda: parser(tool=tool), text, (content, None, calls))


def test_after_reasoning_close() -> None:
    text = 'I should look it up.</think>\n\n' + W + '\nDone.'
    check_every_chunking(lambda: parser('default'), text, ('\n\n\nDone.', 'I should look it up.', [W_CALL]))


def test_inside_reasoning_is_reasoning() -> None:
    # Bare calls are recognised in content only: thinking drafts and quotes them.
    text = 'Maybe ' + T + ' then.</think>ok'
    check_every_chunking(lambda: parser('default'), text, ('ok', 'Maybe ' + T + ' then.', []))


def test_regular_block_inside_reasoning_still_a_call() -> None:
    text = 'x<tool_call>\n' + T + '\n</tool_call></think>ok'
    check_every_chunking(lambda: parser('default'), text, ('ok', 'x', [T_CALL]))


@pytest.mark.parametrize('text', [W, 'a' + W + '\n</tool_call>b'])
def test_no_tools_offered_is_content(text: str) -> None:
    check_every_chunking(lambda: parser(request=NO_TOOLS), text, (text, None, []))


def test_tool_choice_none_is_content() -> None:
    request = dict(REQUEST, tool_choice='none')
    check_every_chunking(lambda: parser(request=request), W, (W, None, []))


def test_json_dialect_has_no_bare_calls() -> None:
    text = 'a<function=get_time>\n</function>'
    check_every_chunking(lambda: parser(tool='qwen3'), text, (text, None, []))


def test_indices_contiguous_across_rejected_and_regular() -> None:
    text = T + '\n<function=nope>\n</function>\n<tool_call>\n<function=nope>\n</function>\n</tool_call>' + W
    flagged = stream_flagged(parser(), fixed_chunks(text, 3))
    deltas = tool_deltas(flagged)
    check_identity_first(deltas)
    assert sorted({d.index for d in deltas}) == [0, 1]


def test_identity_waits_for_confirmation() -> None:
    # The name alone is not a call: no tool delta until an argument or </function> follows.
    p = parser()
    assert tool_deltas(p.stream_chunk('<function=get_weather>\n', [])) == []
    deltas = tool_deltas(p.stream_chunk('<parameter=city>\nP', []))
    assert deltas and deltas[0].function.name == 'get_weather' and deltas[0].id


@pytest.mark.parametrize('size', [1, 16])
def test_long_unknown_name_is_released_early(size: int) -> None:
    # A name that can no longer be an offered one is content at once, not held to the end.
    name = 'x' * 5000
    p = parser()
    out = []
    text = 'a <function=' + name
    for chunk in fixed_chunks(text, size):
        out.extend(p.stream_chunk(chunk, []))
        assert len(p._pending) <= 16
    content = ''.join(m.content or '' for m, _ in out)
    assert content == text[:len(content)] and len(content) >= len(text) - 16
    assert stream(parser(), fixed_chunks(text, size)).key() == (text, None, [])


@pytest.mark.parametrize('size', [1, 16])
def test_held_name_keeps_router_buffer_bounded(size: int) -> None:
    # An offered name held across chunks sits in the family's buffer, not the router's.
    text = '<function=' + ' ' * 3000 + 'get_time' + ' ' * 3000 + '>\n</function>'
    p = parser()
    for chunk in fixed_chunks(text, size)[:-1]:
        p.stream_chunk(chunk, [])
        assert len(p._pending) <= 16
    assert stream(parser(), fixed_chunks(text, size)).key() == (None, None, [T_CALL])
