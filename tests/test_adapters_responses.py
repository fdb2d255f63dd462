"""Responses API adapter: streaming events, the non-streaming Response, and the request conversions."""
from __future__ import annotations

import json
from typing import Any

import pytest

from lmparse import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from lmparse.adapters.responses import (
    ResponsesStream,
    chat_messages,
    chat_tool_choice,
    chat_tools,
    responses_request_echo,
    responses_response,
    responses_usage,
)
from lmparse.runner import ChatRunner, EngineChunk, StreamDelta
from tests.conftest import build_parser
from tests.streaming import chunkings

TEXT = ('<think>\nplan\n</think>\n\nSure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>')
NESTED = ('<think>\nfirst\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
          'second\n</think>\n\nanswer')
TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>')


def _events(text: str, chunks: list[str] | None = None, finish: str = 'stop', **kw: Any) -> list[dict[str, Any]]:
    runner = ChatRunner(build_parser('default', 'qwen3'))
    stream = ResponsesStream('m', id='resp_1', created_at=7, **kw)
    engine = [EngineChunk(c) for c in (chunks if chunks is not None else [text])]
    engine[-1].finish_reason = finish
    out = stream.start_events()
    for d in runner.stream(engine):
        out.extend(stream.event_dicts(d))
    out.extend(stream.close_dicts(runner.finish_reason, responses_usage(2, 9, runner.reasoning_tokens)))
    return out


def _items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check the event grammar and rebuild the items from the deltas alone."""
    assert [e['sequence_number'] for e in events] == list(range(len(events)))
    assert [e['type'] for e in events[:2]] == ['response.created', 'response.in_progress']
    assert events[-1]['type'] in ('response.completed', 'response.incomplete')
    items: list[dict[str, Any]] = []
    open_item: dict[str, Any] | None = None
    for e in events[2:-1]:
        kind = e['type']
        if kind == 'response.output_item.added':
            assert open_item is None and e['output_index'] == len(items)
            open_item = dict(e['item'], text='')
            items.append(open_item)
        elif kind == 'response.output_item.done':
            assert open_item is not None and e['item']['id'] == open_item['id']
            item = e['item']
            whole = item['arguments'] if item['type'] == 'function_call' else ''.join(
                p['text'] for p in item['content'])
            assert whole == open_item['text']
            open_item['done'] = item
            open_item = None
        else:
            assert open_item is not None and e['item_id'] == open_item['id'] and e['output_index'] == len(items) - 1
            if kind.endswith('.delta'):
                assert e['delta']
                open_item['text'] += e['delta']
    assert open_item is None
    final = events[-1]['response']
    assert [i['done'] for i in items] == final['output']
    return items


def _summary(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(i['type'] if i['type'] != 'function_call' else f'call:{i["name"]}', i['text']) for i in items]


def test_every_chunking_gives_the_same_items() -> None:
    expected = [('reasoning', '\nplan\n'), ('message', '\n\nSure.\n'),
                ('call:get_weather', '{"city": "Paris"}'), ('call:get_time', '{}')]
    for label, chunks in chunkings(TEXT, TAGS):
        events = _events(TEXT, chunks)
        assert _summary(_items(events)) == expected, label
        final = events[-1]['response']
        assert final['status'] == 'completed' and final['incomplete_details'] is None
        assert final['usage'] == {'input_tokens': 2, 'input_tokens_details': {'cached_tokens': 0,
                                                                             'cache_write_tokens': 0},
                                  'output_tokens': 9, 'output_tokens_details': {'reasoning_tokens': 0},
                                  'total_tokens': 11}
        assert {(e.get('response') or {}).get('id', 'resp_1') for e in events} == {'resp_1'}


def test_interleaved_reasoning_opens_a_new_item() -> None:
    for label, chunks in chunkings(NESTED, TAGS):
        items = _items(_events(NESTED, chunks))
        assert _summary(items) == [('reasoning', '\nfirst\n'), ('call:get_weather', '{"city": "Paris"}'),
                                   ('reasoning', '\nsecond\n'), ('message', '\n\nanswer')], label
        assert len({i['id'] for i in items}) == 4
        call = items[1]['done']
        assert call['call_id'] and call['id'].startswith('fc_') and call['status'] == 'completed'


def test_item_shapes() -> None:
    events = _events(TEXT)
    added = {e['item']['type']: e['item'] for e in events if e['type'] == 'response.output_item.added'}
    assert added['reasoning'] == {'id': added['reasoning']['id'], 'type': 'reasoning', 'summary': [], 'content': [],
                                  'status': 'in_progress'}
    assert added['message']['content'] == [] and added['message']['role'] == 'assistant'
    assert added['function_call']['arguments'] == '' and added['function_call']['status'] == 'in_progress'
    parts = [e['part'] for e in events if e['type'] == 'response.content_part.added']
    assert parts == [{'type': 'reasoning_text', 'text': ''},
                     {'type': 'output_text', 'text': '', 'annotations': [], 'logprobs': []}]
    done = [e for e in events if e['type'] == 'response.function_call_arguments.done']
    assert [(e['name'], e['arguments']) for e in done] == [('get_weather', '{"city": "Paris"}'), ('get_time', '{}')]
    assert [e['text'] for e in events if e['type'] == 'response.reasoning_text.done'] == ['\nplan\n']


def test_reasoning_can_be_left_out_and_whitespace_reasoning_opens_nothing() -> None:
    assert _summary(_items(_events(TEXT, reasoning=False)))[0] == ('message', '\n\nSure.\n')
    text = '<think>\n\n</think>\n\nHi.'
    for label, chunks in chunkings(text, TAGS):
        assert _summary(_items(_events(text, chunks))) == [('message', '\n\nHi.')], label
    # Leading whitespace is held, then sent with the first reasoning text.
    text = '<think>\n\nthought</think>answer'
    for label, chunks in chunkings(text, TAGS):
        assert _summary(_items(_events(text, chunks))) == [('reasoning', '\n\nthought'), ('message', 'answer')], label


@pytest.mark.parametrize('finish,reason', [('length', 'max_output_tokens'), ('content_filter', 'content_filter')])
def test_incomplete_response_and_incomplete_call(finish: str, reason: str) -> None:
    text = '<think>r</think>Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Bei'
    for label, chunks in chunkings(text, TAGS):
        events = _events(text, chunks, finish=finish)
        items = _items(events)
        assert events[-1]['type'] == 'response.incomplete', label
        final = events[-1]['response']
        assert final['status'] == 'incomplete' and final['incomplete_details'] == {'reason': reason}
        call = items[-1]['done']
        # As generated: never repaired, never wrapped; the item says it is incomplete.
        assert (call['name'], call['arguments'], call['status']) == ('get_weather', '{"city": "Bei', 'incomplete')
        assert [i['done']['status'] for i in items[:-1]] == ['completed', 'completed']


def test_malformed_call_in_a_completed_response_is_marked() -> None:
    stream = ResponsesStream('m')
    out = stream.start_events()
    calls = [DeltaToolCall(index=0, id='call_1', type='function', function=DeltaFunctionCall(name='f', arguments='{')),
             DeltaToolCall(index=0, function=DeltaFunctionCall(arguments='"a": tru'))]
    out += stream.event_dicts(StreamDelta(DeltaMessage(tool_calls=calls), True, finish_reason='tool_calls'))
    out += stream.close_dicts()
    final = out[-1]['response']
    assert out[-1]['type'] == 'response.completed'
    assert [(i['call_id'], i['arguments'], i['status']) for i in final['output']] == [('call_1', '{"a": tru',
                                                                                        'incomplete')]


def test_error_mid_stream() -> None:
    stream = ResponsesStream('m')
    out = stream.start_events() + stream.event_dicts(StreamDelta(DeltaMessage(content='Hel'), False))
    out += stream.error_dicts('boom')
    assert [e['type'] for e in out][-5:] == ['response.output_text.done', 'response.content_part.done',
                                             'response.output_item.done', 'error', 'response.failed']
    assert out[-2] == {'type': 'error', 'sequence_number': out[-2]['sequence_number'], 'code': 'server_error',
                       'message': 'boom', 'param': None}
    failed = out[-1]['response']
    assert failed['status'] == 'failed' and failed['error'] == {'code': 'server_error', 'message': 'boom'}
    assert failed['output'][0]['status'] == 'incomplete' and failed['output'][0]['content'][0]['text'] == 'Hel'
    assert stream.close_dicts() == [] and stream.error_dicts('again') == []
    with pytest.raises(RuntimeError):
        stream.event_dicts(StreamDelta(DeltaMessage(content='x'), False))


def test_sse_text_and_empty_stream() -> None:
    stream = ResponsesStream('m', id='resp_e')
    sse = stream.start() + stream.close('stop')
    blocks = sse[:-2].split('\n\n')
    assert [b.split('\n')[0] for b in blocks] == ['event: response.created', 'event: response.in_progress',
                                                  'event: response.completed']
    assert json.loads(blocks[-1].split('\n')[1][len('data: '):])['response']['output'] == []


def test_non_streaming_response_aggregates() -> None:
    for text, expected in ((TEXT, [('reasoning', '\nplan\n'), ('message', '\n\nSure.\n'),
                                   ('function_call', '{"city": "Paris"}'), ('function_call', '{}')]),
                           (NESTED, [('reasoning', '\nfirst\n\nsecond\n'), ('message', '\n\nanswer'),
                                     ('function_call', '{"city": "Paris"}')])):
        result = ChatRunner(build_parser('default', 'qwen3')).collect([EngineChunk(text, finish_reason='stop')])
        doc = responses_response(result, 'm', id='resp_x', created_at=3, input_tokens=4, output_tokens=5)
        got = [(i['type'], i['arguments'] if i['type'] == 'function_call' else i['content'][0]['text'])
               for i in doc['output']]
        assert got == expected
        assert doc['status'] == 'completed' and doc['usage']['total_tokens'] == 9 and doc['id'] == 'resp_x'
        assert all(i['status'] == 'completed' for i in doc['output'])
    result = ChatRunner(build_parser('default', 'qwen3')).collect(
        [EngineChunk('r</think>Hi <tool_call>\n{"name": "get_weather", "arguments": {"ci', finish_reason='length')])
    doc = responses_response(result, 'm')
    assert doc['status'] == 'incomplete' and doc['incomplete_details'] == {'reason': 'max_output_tokens'}
    assert [(i['type'], i['status']) for i in doc['output']] == [('reasoning', 'completed'), ('message', 'completed'),
                                                                 ('function_call', 'incomplete')]
    assert doc['output'][2]['arguments'] == '{"ci'
    # drop_incomplete_calls (the shared runner policy) removes it from the complete response.
    result = ChatRunner(build_parser('default', 'qwen3'), drop_incomplete_calls=True).collect(
        [EngineChunk('r</think>Hi <tool_call>\n{"name": "get_weather", "arguments": {"ci', finish_reason='length')])
    assert [i['type'] for i in responses_response(result, 'm')['output']] == ['reasoning', 'message']


def test_sdk_models_accept_the_shapes() -> None:
    types = pytest.importorskip('openai.types.responses')
    from openai._models import validate_type

    for text in (TEXT, NESTED):
        for finish in ('stop', 'length'):
            for e in _events(text, [text[i:i + 3] for i in range(0, len(text), 3)], finish=finish):
                validate_type(type_=types.ResponseStreamEvent, value=e)
    stream = ResponsesStream('m')
    for e in stream.start_events() + stream.error_dicts('x'):
        validate_type(type_=types.ResponseStreamEvent, value=e)
    result = ChatRunner(build_parser('default', 'qwen3')).collect([EngineChunk(TEXT, finish_reason='stop')])
    echo = responses_request_echo({'tools': [{'type': 'function', 'function': {'name': 'f', 'parameters': {}}}],
                                   'tool_choice': {'type': 'function', 'function': {'name': 'f'}}})
    doc = types.Response.model_validate(responses_response(result, 'm', request=echo))
    assert doc.tools[0].name == 'f' and doc.tool_choice.name == 'f'


def test_chat_tools() -> None:
    assert chat_tools(None) is None
    assert chat_tools([{'type': 'function', 'name': 'f', 'description': 'd', 'parameters': {'type': 'object'},
                        'strict': True}]) == [{'type': 'function', 'function': {
                            'name': 'f', 'parameters': {'type': 'object'}, 'description': 'd', 'strict': True}}]
    for bad, needle in (({}, 'expected a list'), ([{'type': 'web_search'}], "only function tools"),
                        ([{'type': 'function', 'function': {'name': 'f'}}], 'the Responses shape is flat'),
                        ([{'type': 'function'}], 'string "name"')):
        with pytest.raises(ValueError, match=needle):
            chat_tools(bad)


def test_chat_tool_choice() -> None:
    tools = chat_tools([{'type': 'function', 'name': 'a'}, {'type': 'function', 'name': 'b'}])
    assert chat_tool_choice(None, tools) == ('auto', tools)
    assert chat_tool_choice('required', tools) == ('required', tools)
    assert chat_tool_choice({'type': 'function', 'name': 'b'}, tools)[0] == {'type': 'function',
                                                                              'function': {'name': 'b'}}
    mode, kept = chat_tool_choice({'type': 'allowed_tools', 'mode': 'required',
                                   'tools': [{'type': 'function', 'name': 'b'}]}, tools)
    assert mode == 'required' and [t['function']['name'] for t in kept or ()] == ['b']
    with pytest.raises(ValueError, match='tool_choice'):
        chat_tool_choice({'type': 'file_search'}, tools)


def test_chat_messages() -> None:
    assert chat_messages('hi', 'be brief') == [{'role': 'system', 'content': 'be brief'},
                                               {'role': 'user', 'content': 'hi'}]
    items: Any = [
        {'role': 'user', 'content': [{'type': 'input_text', 'text': 'Weather?'}]},
        {'type': 'reasoning', 'id': 'rs_1', 'summary': [], 'content': [{'type': 'reasoning_text', 'text': 'r'}]},
        {'type': 'message', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': 'Checking.'}]},
        {'type': 'function_call', 'call_id': 'c1', 'name': 'get_weather', 'arguments': '{"city": "Paris"}'},
        {'type': 'function_call', 'call_id': 'c2', 'name': 'get_time', 'arguments': ''},
        {'type': 'function_call_output', 'call_id': 'c1', 'output': 'sunny'},
        {'type': 'function_call_output', 'call_id': 'c2', 'output': [{'type': 'input_text', 'text': 'noon'}]},
        {'type': 'message', 'role': 'developer', 'content': 'go on'},
    ]
    assert chat_messages(items) == [
        {'role': 'user', 'content': 'Weather?'},
        {'role': 'assistant', 'content': 'Checking.', 'reasoning_content': 'r', 'tool_calls': [
            {'id': 'c1', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city": "Paris"}'}},
            {'id': 'c2', 'type': 'function', 'function': {'name': 'get_time', 'arguments': '{}'}}]},
        {'role': 'tool', 'tool_call_id': 'c1', 'content': 'sunny'},
        {'role': 'tool', 'tool_call_id': 'c2', 'content': 'noon'},
        {'role': 'developer', 'content': 'go on'},
    ]
    for bad, needle in ((3, 'a string or a list'), ([3], r'input\[0\]: expected an object'),
                        ([{'type': 'function_call', 'name': 'f'}], 'call_id'),
                        ([{'type': 'item_reference', 'id': 'x'}], 'serve --store'),
                        ([{'role': 'tool', 'content': 'x'}], 'role must be'),
                        ([{'type': 'web_search_call'}], "'web_search_call' cannot be replayed")):
        with pytest.raises(ValueError, match=needle):
            chat_messages(bad)
