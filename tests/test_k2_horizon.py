"""MBZUAI IFM K2 Horizon tool calls and reasoning (vLLM's and SGLang's ``k2_horizon``).

The release templates' output as both engines parse it::

    <ifm|think>...</ifm|think>            (prefilled open token; effort picks the pair)
    <ifm|tool_calls>
    <ifm|tool_call>NAME
    <ifm|arg_key>KEY</ifm|arg_key>
    <ifm|arg_value>VALUE</ifm|arg_value>
    </ifm|tool_call>
    </ifm|tool_calls>

(``xml_typed`` adds ``<ifm|arg_type>T</ifm|arg_type>`` before each value).
Every marker is a special token. Literal results over every chunking
(``tests/catalogue.py``).
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import K2HorizonReasoningParser, K2HorizonToolParser, ReasoningParserManager, ToolParserManager
from tests.catalogue import Case, dialect_suite, request_field

GO, GC, CO, CC = '<ifm|tool_calls>', '</ifm|tool_calls>', '<ifm|tool_call>', '</ifm|tool_call>'
KO, KC, TO_, TC_, VO, VC = ('<ifm|arg_key>', '</ifm|arg_key>', '<ifm|arg_type>', '</ifm|arg_type>',
                            '<ifm|arg_value>', '</ifm|arg_value>')
THINK = {'high': ('<ifm|think>', '</ifm|think>'), 'medium': ('<ifm|think_fast>', '</ifm|think_fast>'),
         'low': ('<ifm|think_faster>', '</ifm|think_faster>')}
SPECIAL = (GO, GC, CO, CC, KO, KC, TO_, TC_, VO, VC, *(t for pair in THINK.values() for t in pair))
TAGS = SPECIAL
END = THINK['high'][1]


def call(name: str, typed: bool = False, **args: tuple[str, str] | str) -> str:
    body = ''
    for k, v in args.items():
        kind, value = v if isinstance(v, tuple) else ('string', v)
        body += f'\n{KO}{k}{KC}' + (f'\n{TO_}{kind}{TC_}' if typed else '') + f'\n{VO}{value}{VC}'
    return f'{CO}{name}{body}\n{CC}'


def group(*calls: str) -> str:
    return GO + '\n' + '\n'.join(calls) + '\n' + GC


def case(id: str, text: str, content: str | None, reasoning: str | None, calls: Any = (),
         reasoning_parser: str | None = 'k2_horizon', **kwargs: Any) -> Case:
    request = {'chat_template_kwargs': kwargs} if kwargs else {}
    return Case(id, text, content, reasoning, list(calls), reasoning_parser, 'k2_horizon', request)


W = '{"city": "Paris", "unit": "celsius"}'
CASES = [
    case('basic', f'The user wants weather.{END}\nChecking.\n' + group(call('get_weather', city='Paris',
         unit='celsius')), '\nChecking.\n', 'The user wants weather.', [('get_weather', W)]),
    case('generated-open-token-dropped', f'{THINK["high"][0]}x{END}y', 'y', 'x'),
    case('several-calls-one-group', f'x{END}\n' + group(call('search', query='q', limit='3'), call('rm_rf', p='/'),
         f'{CO}get_time{CC}'), '\n', 'x', [('search', '{"query": "q", "limit": 3}'), ('get_time', '{}')]),
    case('typed-arguments', f'x{END}' + group(call('search', typed=True, query=('string', '42'),
         limit=('integer', '5'))), None, 'x', [('search', '{"query": "42", "limit": 5}')], tool_call_format='xml_typed'),
    case('multiline-value', f'x{END}' + group(call('search', query='line 1\nline 2 <ifm|x> "q"')), None, 'x',
         [('search', '{"query": "line 1\\nline 2 <ifm|x> \\"q\\""}')]),
    case('effort-medium', f'x{THINK["medium"][1]}y' + group(call('get_time')), 'y', 'x', [('get_time', '{}')],
         reasoning_effort='medium'),
    case('effort-low', f'x{THINK["low"][1]}y', 'y', 'x', reasoning_effort='low'),
    case('other-effort-close-is-reasoning', f'x{THINK["low"][1]}y', None, f'x{THINK["low"][1]}y'),
    case('text-after-group', f'x{END}' + group(call('get_time')) + '\n\nDone.', '\n\nDone.', 'x',
         [('get_time', '{}')]),
    case('group-inside-reasoning', 'Look.' + group(call('get_time')) + f'more{END}Done.', 'Done.', 'Look.more',
         [('get_time', '{}')]),
    case('call-outside-group-is-text', f'x{END}ok {CO}get_time{CC}', f'ok {CO}get_time{CC}', 'x'),
    case('no-reasoning-parser', 'ok' + group(call('get_time')), 'ok', None, [('get_time', '{}')],
         reasoning_parser=None),
    # truncated / malformed (best effort, the same for every chunking)
    case('missing-value-close', f'x{END}{GO}{CO}search{KO}query{KC}{VO}abc{CC}{GC}tail', 'tail', 'x',
         [('search', '{"query": "abc"}')]),
    # a key marker inside a value cannot be told from a missing close tag: it is text
    case('key-marker-in-value', f'x{END}{GO}{CO}search{KO}query{KC}{VO}abc{KO}limit{KC}{VO}2{VC}{CC}{GC}tail',
         'tail', 'x', [('search', '{"query": "abc<ifm|arg_key>limit</ifm|arg_key><ifm|arg_value>2"}')]),
    case('markers-in-value', f'x{END}{GO}{CO}search{KO}query{KC}{VO}a{VC}b{CC}c{GC}d {CO}e{VC}\n{VC}{CC}{GC}tail',
         'tail', 'x', [('search', '{"query": "a</ifm|arg_value>b</ifm|tool_call>c</ifm|tool_calls>d '
                                  '<ifm|tool_call>e</ifm|arg_value>\\n"}')]),
    case('truncated-in-value', f'x{END}{GO}\n{CO}search\n{KO}query{KC}\n{VO}ab', None, 'x',
         [('search', '{"query": "ab"}')]),
    case('truncated-in-name', f'x{END}ok{GO}\n{CO}sea', 'ok', 'x'),
    case('truncated-in-reasoning', 'still thinking', None, 'still thinking'),
    # a group holding text but no call is not lost: it is content as written (vLLM's reading)
    case('junk-group-is-content', f'x{END}a{GO}junk{GC}b', f'a{GO}junk{GC}b', 'x'),
    case('junk-group-then-group', f'x{END}{GO}\njunk\n{GC}\n' + group(call('get_time')), f'{GO}\njunk\n{GC}\n', 'x',
         [('get_time', '{}')]),
    # cut by the end of the output: the truncation rule (the cut group is dropped)
    case('junk-group-truncated', f'x{END}a{GO}junk <ifm|tool', 'a', 'x'),
    case('json-cut-after-open', f'x{END}a{GO}\n{CO[:6]}', 'a', 'x', tool_call_format='json'),
    case('json-junk-group-truncated', f'x{END}a{GO}junk', f'a{GO}junk', 'x', tool_call_format='json'),
    case('junk-group-in-reasoning', f'a{GO}junk{GC}b{END}c', 'c', f'a{GO}junk{GC}b'),
    case('empty-group-dropped', f'x{END}a{GO}\n{GC}b', 'ab', 'x'),
    # a JSON envelope under the xml layout: no name (vLLM refuses it by its shape): the group is content
    case('json-envelope-under-xml', f'x{END}a{GO}{CO}' + '{"name": "ping", "arguments": {}}' + f'{CC}{GC}b',
         f'a{GO}{CO}' + '{"name": "ping", "arguments": {}}' + f'{CC}{GC}b', 'x'),
    case('json-envelope-under-xml-in-reasoning', f'a{GO}{CO}' + '{"n": 1}' + f'{CC}{GC}b{END}c', 'c',
         f'a{GO}{CO}' + '{"n": 1}' + f'{CC}{GC}b'),
    # a value quoting braces and quotes is a value; the name beside it is a name
    case('json-text-in-value', f'x{END}' + group(call('search', query='{"name": "ping"} [x]')), None, 'x',
         [('search', '{"query": "{\\"name\\": \\"ping\\"} [x]"}')]),
    # junk before the first call of a group is still skipped (the group holds a call)
    case('junk-before-call', f'x{END}{GO}junk{CO}get_time{CC}{GC}', None, 'x', [('get_time', '{}')]),
    # tool_call_format="json": a JSON envelope in each call tag (the JSON family, call_tags)
    case('json-calls', f'x{END}a' + GO + '\n' + CO + '{"name": "get_weather", "arguments": {"city": "Paris"}}' + CC
         + '\n' + CO + '{"name": "get_time", "arguments": {}}' + CC + '\n' + GC + 'b', 'ab', 'x',
         [('get_weather', '{"city": "Paris"}'), ('get_time', '{}')], tool_call_format='json'),
    case('json-markers-in-value', f'x{END}' + GO + CO + '{"name": "search", "arguments": {"query": "'
         + f'{CC}{GC}{CO}' + '"}}' + CC + GC, None, 'x', [('search', '{"query": "' + f'{CC}{GC}{CO}' + '"}')],
         tool_call_format='json'),
    case('json-junk-group-is-content', f'x{END}a{GO}junk{GC}b', f'a{GO}junk{GC}b', 'x', tool_call_format='json'),
    case('json-xml-call-is-content', f'x{END}{GO}{CO}get_time{CC}{GC}', f'{GO}{CO}get_time{CC}{GC}', 'x',
         tool_call_format='json'),
    case('json-empty-group-dropped', f'x{END}a{GO}\n{GC}b', 'ab', 'x', tool_call_format='json'),
    case('json-junk-group-in-reasoning', f'a{GO}junk{GC}b{END}c', 'c', f'a{GO}junk{GC}b', tool_call_format='json'),
    # the same markers as text inside a well-formed value
    case('group-markers-in-value', f'x{END}' + group(call('search', query=f'{GO}junk{GC}')), None, 'x',
         [('search', '{"query": "<ifm|tool_calls>junk</ifm|tool_calls>"}')]),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered_and_declared(make_parser: Any) -> None:
    assert ToolParserManager.get('k2_horizon') is K2HorizonToolParser
    assert ReasoningParserManager.get('k2_horizon') is K2HorizonReasoningParser
    assert (K2HorizonToolParser.get_tool_open_tag(), K2HorizonToolParser.get_tool_close_tag()) == (GO, GC)
    assert request_field(make_parser(None, 'k2_horizon'), 'skip_special_tokens') is False


@pytest.mark.parametrize('effort', sorted(THINK))
def test_effort_selects_the_tags(effort: str) -> None:
    parser = K2HorizonReasoningParser(reasoning_effort=effort)
    assert (parser.get_reasoning_open_tag(), parser.get_reasoning_close_tag()) == THINK[effort]
    assert isinstance(parser, K2HorizonReasoningParser) and parser.starts_in_reasoning_mode() is True


def test_unknown_effort_is_an_error(make_parser: Any) -> None:
    with pytest.raises(ValueError, match='reasoning_effort'):
        make_parser('k2_horizon', 'k2_horizon', chat_template_kwargs={'reasoning_effort': 'extreme'})


def test_json_format_picks_the_json_layout(make_parser: Any) -> None:
    from lmparse.dialects.k2 import K2HorizonJsonToolParser
    parser = make_parser(None, 'k2_horizon', chat_template_kwargs={'tool_call_format': 'json'})
    assert type(parser.tool_parser) is K2HorizonJsonToolParser
    assert type(make_parser(None, 'k2_horizon').tool_parser) is K2HorizonToolParser


@pytest.mark.parametrize('fmt', ['yaml', 'xml_untyped'])
def test_unsupported_tool_call_format_is_an_error(make_parser: Any, fmt: str) -> None:
    with pytest.raises(ValueError, match='tool_call_format'):
        make_parser(None, 'k2_horizon', chat_template_kwargs={'tool_call_format': fmt})


@pytest.mark.parametrize('fmt', ['yaml', 'python', 'xml_untyped', '', None, 1])
def test_validate_request_refuses_unknown_formats(fmt: Any) -> None:
    request = {'chat_template_kwargs': {'tool_call_format': fmt}}
    with pytest.raises(ValueError, match='tool_call_format'):
        K2HorizonToolParser.validate_request(request)


@pytest.mark.parametrize('fmt', ['xml', 'xml_typed', 'json', None])
def test_validate_request_accepts_the_formats(fmt: Any) -> None:
    kwargs = {'tool_call_format': fmt} if fmt is not None else {}
    assert K2HorizonToolParser.validate_request({'chat_template_kwargs': kwargs}) is None
    assert K2HorizonToolParser.validate_request({}) is None


def test_required_tool_choice_is_refused(make_parser: Any) -> None:
    with pytest.raises(ValueError, match='does not support'):
        make_parser(None, 'k2_horizon', tool_choice='required')
