"""BaseResponseParser routing: channels, modes, configuration and reasoning tokens."""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import logging
import sys
from typing import Any

import pytest

import lmparse
from lmparse import (
    BaseResponseParser,
    ChatCompletionRequest,
    DeltaMessage,
    Internlm2ToolParser,
    JsonToolParser,
    JsonValueScanner,
    Llama3JsonToolParser,
    Qwen3ToolParser,
    ReasoningParser,
    ResponseParserManager,
    ToolCall,
    ToolParser,
    validate_parser_names,
)
from lmparse.registry import LEGACY_REASONING_PARSER_NAMES
from tests.streaming import (
    check_messages,
    make_request,
    reconstruct,
    stream,
    stream_flagged,
    token_chunks,
    tool_deltas,
)

TOOL_TIME = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'


def summary(flagged: list[tuple[Any, bool]]) -> list[tuple[str, Any, bool]]:
    """(channel, payload, tool_emitted) for each message; tool payload is (index, name, arguments) per delta."""
    out = []
    for message, emitted in flagged:
        if message.tool_calls is not None:
            payload = [(d.index, d.function.name, d.function.arguments) for d in message.tool_calls]
            out.append(('tool_calls', payload, emitted))
        elif message.reasoning_content is not None:
            out.append(('reasoning', message.reasoning_content, emitted))
        else:
            out.append(('content', message.content, emitted))
    return out


# ---- several messages per engine chunk, in channel order ------------------------


def test_reasoning_content_and_tool_in_one_chunk(make_parser: Any) -> None:
    parser = make_parser('default', 'qwen3')
    assert summary(parser.stream_chunk('Thinking', [])) == [('reasoning', 'Thinking', False)]
    out = parser.stream_chunk(' more.</think>Answer: ' + TOOL_TIME, [])
    check_messages(out)
    assert summary(out) == [
        ('reasoning', ' more.', False),
        ('content', 'Answer: ', False),
        ('tool_calls', [(0, 'get_time', None), (0, None, '{}')], True),
    ]
    assert summary(parser.stream_chunk('\nDone', [], final=True)) == [('content', '\nDone', False)]


def test_reasoning_tool_reasoning_order_in_one_chunk(make_parser: Any) -> None:
    text = '<think>A<tool_call>{"name": "get_time"}</tool_call>B</think>C'
    out = make_parser('default', 'qwen3').stream_chunk(text, [], final=True)
    check_messages(out)
    assert summary(out) == [
        ('reasoning', 'A', False),
        ('tool_calls', [(0, 'get_time', None), (0, None, '{}')], True),
        ('reasoning', 'B', False),
        ('content', 'C', False),
    ]
    # The complete response aggregates the reasoning around the tool.
    content, calls, reasoning = make_parser('default', 'qwen3').parse_complete(text)
    assert (content, reasoning) == ('C', 'AB')
    assert [(c.function.name, c.function.arguments) for c in calls] == [('get_time', '{}')]


def test_two_tool_blocks_in_one_chunk_are_two_messages(make_parser: Any) -> None:
    out = make_parser(None, 'qwen3').stream_chunk(
        'x' + TOOL_TIME + '\n' + TOOL_TIME.replace('get_time', 'search'), [], final=True)
    assert summary(out) == [
        ('content', 'x', False),
        ('tool_calls', [(0, 'get_time', None), (0, None, '{}')], True),
        ('tool_calls', [(1, 'search', None), (1, None, '{}')], True),
    ]


# ---- holding and releasing ---------------------------------------------------------


def test_possible_tag_prefix_is_held_then_resolved(make_parser: Any) -> None:
    parser = make_parser(None, 'qwen3')
    assert summary(parser.stream_chunk('Hello <tool', [])) == [('content', 'Hello ', False)]
    assert parser.stream_chunk('_c', []) == []
    assert parser.stream_chunk('all>', []) == []
    assert summary(parser.stream_chunk('\n{"name": "get_time"', [])) == [('tool_calls', [(0, 'get_time', None)], True)]
    assert summary(parser.stream_chunk('}\n</tool_call>', [], final=True)) == [('tool_calls', [(0, None, '{}')], True)]


def test_held_prefix_that_is_not_a_tag_is_released(make_parser: Any) -> None:
    parser = make_parser(None, 'qwen3')
    assert summary(parser.stream_chunk('if a <', [])) == [('content', 'if a ', False)]
    assert summary(parser.stream_chunk(' b', [])) == [('content', '< b', False)]


@pytest.mark.parametrize('reasoning,tool,first,held,channel', [
    (None, 'qwen3', 'x <tool_cal', '<tool_cal', 'content'),
    ('default', 'qwen3', 'x </thi', '</thi', 'reasoning'),
    ('default', 'qwen3', 'x <tool_cal', '<tool_cal', 'reasoning'),
    (None, 'internlm', 'x <|action_start|><|plu', '<|action_start|><|plu', 'content'),
    (None, 'llama3', 'x <|python_ta', '<|python_ta', 'content'),
])
def test_final_releases_ambiguous_suffix(reasoning: str | None, tool: str, first: str, held: str, channel: str,
                                         make_parser: Any) -> None:
    parser = make_parser(reasoning, tool)
    assert summary(parser.stream_chunk(first, [])) == [(channel, 'x ', False)]
    assert summary(parser.stream_chunk('', [], final=True)) == [(channel, held, False)]


def test_newlines_between_blocks_wait_for_the_next_tag(make_parser: Any) -> None:
    parser = make_parser(None, 'qwen3')
    assert summary(parser.stream_chunk(TOOL_TIME, []))[0][0] == 'tool_calls'
    assert parser.stream_chunk('\n', []) == []
    assert parser.stream_chunk('\n', []) == []
    assert parser.stream_chunk('<tool_', []) == []
    out = parser.stream_chunk('call>\n{"name": "search"}\n</tool_call>', [], final=True)
    assert summary(out) == [('tool_calls', [(1, 'search', None), (1, None, '{}')], True)]


@pytest.mark.parametrize('reasoning,prefix,channel', [
    (None, '', 'content'),
    ('default', '<think>\n', 'reasoning'),
])
def test_newlines_after_block_belong_to_suspended_channel(reasoning: str | None, prefix: str, channel: str,
                                                          make_parser: Any) -> None:
    parser = make_parser(reasoning, 'qwen3')
    parser.stream_chunk(prefix + TOOL_TIME, [])
    assert parser.stream_chunk('\n', []) == []
    assert summary(parser.stream_chunk('\nNext', [])) == [(channel, '\n\nNext', False)]


def test_newline_then_partial_tag_at_end_is_released(make_parser: Any) -> None:
    parser = make_parser(None, 'qwen3')
    parser.stream_chunk(TOOL_TIME, [])
    assert parser.stream_chunk('\n<tool_ca', []) == []
    assert summary(parser.stream_chunk('', [], final=True)) == [('content', '\n<tool_ca', False)]


# ---- leading empty delta and pass-through ----------------------------------------


@pytest.mark.parametrize('reasoning,tool', [(None, None), ('default', None), ('default', 'qwen3'), (None, 'llama3')])
def test_leading_empty_chunk_is_no_delta(reasoning: str | None, tool: str | None, make_parser: Any) -> None:
    parser = make_parser(reasoning, tool)
    assert parser.stream_chunk('', []) == []
    assert parser.stream_chunk('', None) == []
    # Parsing continues normally afterwards.
    assert summary(parser.stream_chunk('Hi', [])) == [('reasoning' if reasoning else 'content', 'Hi', False)]


def test_first_step_with_tokens_but_no_text_is_not_an_empty_delta(make_parser: Any) -> None:
    parser = make_parser(None, 'qwen3')
    assert parser.stream_chunk('', [12345]) == []
    assert summary(parser.stream_chunk('Hi', [1])) == [('content', 'Hi', False)]


def test_no_parsers_pass_through(make_parser: Any) -> None:
    text = '<think>\nr\n</think>\n\n' + TOOL_TIME + ' <|python_tag|>{}'
    parser = make_parser(None, None)
    assert parser.reasoning_parser is None and parser.tool_parser is None
    chunks = [text[i:i + 5] for i in range(0, len(text), 5)]
    out = [parser.stream_chunk(c, [], final=i == len(chunks) - 1) for i, c in enumerate(chunks)]
    # Every chunk comes straight back as content, one message per chunk.
    assert [summary(o) for o in out] == [[('content', c, False)] for c in chunks]
    assert make_parser(None, None).parse_complete(text) == (text, None, None)


# ---- parse_complete ------------------------------------------------------------------


@pytest.mark.parametrize('reasoning,text,expected', [
    ('default', '', (None, None, None)),
    (None, '', (None, None, None)),
    (None, 'plain', ('plain', None, None)),
    ('default', 'only reasoning', (None, None, 'only reasoning')),
    ('default', 'r</think>', (None, None, 'r')),
    ('default', '</think>c', ('c', None, None)),
    ('default', '<think></think>', (None, None, None)),
])
def test_parse_complete_shape_without_calls(reasoning: str | None, text: str, expected: tuple[Any, Any, Any],
                                            make_parser: Any) -> None:
    assert make_parser(reasoning, 'qwen3').parse_complete(text) == expected


def test_parse_complete_shape_with_calls(make_parser: Any) -> None:
    text = '<think>r</think>c' + TOOL_TIME
    result = make_parser('default', 'qwen3').parse_complete(text)
    assert isinstance(result, tuple) and len(result) == 3
    content, calls, reasoning = result
    assert content == 'c' and reasoning == 'r'
    assert isinstance(calls, list) and len(calls) == 1
    call = calls[0]
    assert isinstance(call, ToolCall)
    assert call.type == 'function' and isinstance(call.id, str) and call.id
    assert (call.function.name, call.function.arguments) == ('get_time', '{}')
    assert call.model_dump()['function'] == {'name': 'get_time', 'arguments': '{}'}


def test_parse_complete_only_filtered_calls_gives_none(make_parser: Any) -> None:
    text = TOOL_TIME.replace('get_time', 'unknown_tool')
    assert make_parser(None, 'qwen3').parse_complete(text) == (None, None, None)


# ---- modes, thinking switches and multiple think blocks -------------------------------


def test_multiple_think_blocks(make_parser: Any) -> None:
    text = '<think>a</think>b<think>c</think>d'
    assert complete_key(make_parser('default', 'qwen3'), text) == ('bd', 'ac', [])
    for size in (1, 3):
        chunks = [text[i:i + size] for i in range(0, len(text), size)]
        assert stream(make_parser('default', 'qwen3'), chunks).key() == ('bd', 'ac', [])


def complete_key(parser: Any, text: str) -> tuple[Any, Any, Any]:
    content, calls, reasoning = parser.parse_complete(text)
    return content, reasoning, [(c.function.name, c.function.arguments) for c in calls or []]


@pytest.mark.parametrize('fields,thinking', [
    ({}, True),
    ({'chat_template_kwargs': {'enable_thinking': True}}, True),
    ({'chat_template_kwargs': {'enable_thinking': False}}, False),
    ({'enable_thinking': False}, False),
    ({'enable_thinking': True}, True),
    ({'enable_thinking': False, 'chat_template_kwargs': {'enable_thinking': True}}, True),
    ({'enable_thinking': True, 'chat_template_kwargs': {'enable_thinking': False}}, False),
])
def test_enable_thinking_switches(fields: dict[str, Any], thinking: bool, make_parser: Any,
                                  caplog: pytest.LogCaptureFixture) -> None:
    text = '<think>\nstep one\n</think>\n\nanswer ' + TOOL_TIME
    with caplog.at_level(logging.WARNING, logger='lmparse'):
        parser = make_parser('default', 'qwen3', **fields)
    expected: tuple[Any, Any, Any]
    if thinking:
        expected = ('\n\nanswer ', '\nstep one\n', [('get_time', '{}')])
    else:
        expected = ('\nstep one\n\n\nanswer ', None, [('get_time', '{}')])
    assert complete_key(parser, text) == expected
    assert stream(make_parser('default', 'qwen3', **fields), list(text)).key() == expected
    if 'enable_thinking' in fields:
        assert any('enable_thinking' in r.getMessage() for r in caplog.records)


def test_stray_close_tag_in_plain_mode_is_text(make_parser: Any) -> None:
    # Plain mode only leaves on an open tag: a close tag there is ordinary text.
    off = {'chat_template_kwargs': {'enable_thinking': False}}
    assert complete_key(make_parser('default', 'qwen3', **off), 'a</think>b') == ('a</think>b', None, [])
    assert complete_key(make_parser('default', 'qwen3'), 'r</think>a</think>b') == ('a</think>b', 'r', [])


def test_thinking_disabled_tool_inside_think_tags(make_parser: Any) -> None:
    text = '<think>A' + TOOL_TIME + '\nB</think>C'
    fields = {'chat_template_kwargs': {'enable_thinking': False}}
    assert complete_key(make_parser('default', 'qwen3', **fields), text) == ('A\nBC', None, [('get_time', '{}')])


def test_request_object_types(make_parser: Any) -> None:
    """lmparse's own request type works like the plain dict."""
    cls = BaseResponseParser.with_parsers('default', 'qwen3')
    text = 'r</think>c' + TOOL_TIME
    for request in (make_request(), ChatCompletionRequest.from_dict(make_request())):
        assert complete_key(cls(request), text) == ('c', 'r', [('get_time', '{}')])
    no_time = make_request(('search',))
    assert complete_key(cls(ChatCompletionRequest.from_dict(no_time)), text) == ('c', 'r', [])


def test_parsers_are_per_response(make_parser: Any) -> None:
    """Two instances of one class interleaved: no shared state."""
    a = make_parser('default', 'qwen3')
    b = make_parser('default', 'qwen3')
    text_a = 'ra</think>' + TOOL_TIME
    text_b = 'rb</think>plain only'
    flagged_a: list[Any] = []
    flagged_b: list[Any] = []
    n = max(len(text_a), len(text_b))
    for i in range(0, n, 3):
        flagged_a += a.stream_chunk(text_a[i:i + 3], [], final=i + 3 >= n)
        flagged_b += b.stream_chunk(text_b[i:i + 3], [], final=i + 3 >= n)
    assert reconstruct(a, flagged_a).key() == (None, 'ra', [('get_time', '{}')])
    assert reconstruct(b, flagged_b).key() == ('plain only', 'rb', [])
    assert a.tool_parser is not b.tool_parser


# ---- reasoning-token accounting ---------------------------------------------------------


def _ids(fake: Any) -> tuple[int, int, int, int]:
    vocab = fake.get_vocab()
    return vocab['<think>'], vocab['</think>'], vocab['<tool_call>'], vocab['</tool_call>']


def test_reasoning_tokens_counted_over_tag_interval(fake_tokenizer: Any) -> None:
    t_open, t_close, c_open, c_close = _ids(fake_tokenizer)
    cls = BaseResponseParser.with_parsers('default', 'qwen3', tokenizer=fake_tokenizer)
    parser = cls(make_request())
    steps = [
        ('<think>', [t_open]),
        ('\nabc', [10, 11]),
        ('<tool_call>', [c_open]),                # tool tokens inside <think> count
        ('\n{"name": "get_time"}\n', [12, 13, 14]),
        ('</tool_call>', [c_close]),
        ('\nmore', [15]),
        ('</think>', [t_close]),
        ('\n\nanswer', [16, 17]),                  # after the close tag: not counted
    ]
    flagged = stream_flagged(parser, steps)
    assert parser.reasoning_tokens == 2 + 1 + 3 + 1 + 1
    assert reconstruct(parser, flagged).key() == ('\n\nanswer', '\nabc\nmore', [('get_time', '{}')])


def test_reasoning_tokens_start_in_reasoning_mode(fake_tokenizer: Any) -> None:
    t_open, t_close, _, _ = _ids(fake_tokenizer)
    cls = BaseResponseParser.with_parsers('default', 'qwen3', tokenizer=fake_tokenizer)
    parser = cls(make_request())
    parser.stream_chunk('a b', [1, 2])
    parser.stream_chunk('</think>', [t_close])
    parser.stream_chunk('x', [3])
    assert parser.reasoning_tokens == 2
    # A second think block counts again.
    parser.stream_chunk('<think>', [t_open])
    parser.stream_chunk('y', [4])
    parser.stream_chunk('</think>', [t_close], final=True)
    assert parser.reasoning_tokens == 3


def test_reasoning_tokens_parse_complete(fake_tokenizer: Any) -> None:
    t_open, t_close, c_open, c_close = _ids(fake_tokenizer)
    cls = BaseResponseParser.with_parsers('default', 'qwen3', tokenizer=fake_tokenizer)
    parser = cls(make_request())
    text = '<think>ab<tool_call>{"name": "get_time"}</tool_call></think>c'
    ids = [t_open, 1, 2, c_open, 3, 4, c_close, t_close, 5]
    assert complete_key(parser, text) == ('c', 'ab', [('get_time', '{}')])
    assert parser.reasoning_tokens == 0  # no token ids given
    parser = cls(make_request())
    content, calls, reasoning = parser.parse_complete(text, ids)
    assert (content, reasoning) == ('c', 'ab')
    assert parser.reasoning_tokens == 6  # 1, 2, <tool_call>, 3, 4, </tool_call>


@pytest.mark.parametrize('fields', [{'chat_template_kwargs': {'enable_thinking': False}}, {'enable_thinking': False}])
def test_reasoning_tokens_not_counted_when_thinking_disabled(fields: dict[str, Any], fake_tokenizer: Any) -> None:
    t_open, t_close, _, _ = _ids(fake_tokenizer)
    cls = BaseResponseParser.with_parsers('default', 'qwen3', tokenizer=fake_tokenizer)
    parser = cls(make_request(**fields))
    parser.stream_chunk('<think>', [t_open])
    parser.stream_chunk('a b c', [1, 2, 3])
    parser.stream_chunk('</think>', [t_close])
    parser.stream_chunk('d', [4], final=True)
    assert parser.reasoning_tokens in (0, None)


def test_reasoning_tokens_none_without_tokenizer(make_parser: Any) -> None:
    parser = make_parser('default', 'qwen3')
    parser.stream_chunk('a', [1, 2, 3], final=True)
    assert parser.reasoning_tokens is None
    parser = make_parser(None, 'qwen3')
    parser.stream_chunk('a', [1], final=True)
    assert parser.reasoning_tokens is None


class VocabFromEncode:
    """Wrap the real Qwen tokenizer with the get_vocab() the counter needs."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def get_vocab(self) -> dict[str, int]:
        vocab = {}
        for tag in ('<think>', '</think>', '<tool_call>', '</tool_call>'):
            (token_id,) = self.tokenizer.encode(tag)
            vocab[tag] = token_id
        return vocab


def test_reasoning_tokens_real_tokenizer_token_by_token(qwen_tokenizer: Any) -> None:
    inner = '\nI should check the weather in 北京 first.\n' + TOOL_TIME + '\nGot it 🙂.\n'
    text = '<think>' + inner + '</think>\n\nIt is sunny.'
    cls = BaseResponseParser.with_parsers('default', 'qwen3', tokenizer=VocabFromEncode(qwen_tokenizer))
    parser = cls(make_request())
    chunks = token_chunks(qwen_tokenizer, text)
    flagged = stream_flagged(parser, chunks)
    check_messages(flagged)
    assert reconstruct(parser, flagged).key() == (
        '\n\nIt is sunny.', '\nI should check the weather in 北京 first.\n\nGot it 🙂.\n', [('get_time', '{}')])
    assert parser.reasoning_tokens == len(qwen_tokenizer.encode(inner))


# ---- class-level configuration ------------------------------------------------------------


def test_set_parsers_then_clear(fake_tokenizer: Any) -> None:
    cls = BaseResponseParser.with_parsers(None, None)
    cls.set_parsers('default', 'qwen3', tokenizer=fake_tokenizer)
    assert (cls.reasoning_parser_cls, cls.tool_parser_cls, cls.tokenizer) == \
        (ReasoningParser, Qwen3ToolParser, fake_tokenizer)
    parser = cls(make_request())
    assert isinstance(parser.tool_parser, Qwen3ToolParser)
    assert complete_key(parser, 'r</think>' + TOOL_TIME) == (None, 'r', [('get_time', '{}')])
    assert parser.reasoning_tokens == 0

    cls.set_parsers(None, None)
    assert (cls.reasoning_parser_cls, cls.tool_parser_cls, cls.tokenizer) == (None, None, None)
    parser = cls(make_request())
    assert parser.reasoning_parser is None and parser.tool_parser is None
    assert parser.reasoning_tokens is None
    assert parser.parse_complete('r</think>' + TOOL_TIME) == ('r</think>' + TOOL_TIME, None, None)
    assert summary(parser.stream_chunk('<think>x', [])) == [('content', '<think>x', False)]


def test_set_parsers_replaces_one_with_none() -> None:
    cls = BaseResponseParser.with_parsers('default', 'qwen3')
    cls.set_parsers(None, 'internlm')
    assert cls.reasoning_parser_cls is None and cls.tool_parser_cls is Internlm2ToolParser


def test_with_parsers_classes_are_independent() -> None:
    base = (BaseResponseParser.reasoning_parser_cls, BaseResponseParser.tool_parser_cls, BaseResponseParser.tokenizer)
    a = BaseResponseParser.with_parsers('default', 'qwen3')
    b = BaseResponseParser.with_parsers(None, 'internlm')
    c = BaseResponseParser.with_parsers('default', 'qwen3')
    assert a is not c and issubclass(a, BaseResponseParser) and issubclass(b, BaseResponseParser)
    assert (a.reasoning_parser_cls, a.tool_parser_cls) == (ReasoningParser, Qwen3ToolParser)
    assert (b.reasoning_parser_cls, b.tool_parser_cls) == (None, Internlm2ToolParser)
    a.set_parsers(None, 'llama3')
    assert (a.reasoning_parser_cls, a.tool_parser_cls) == (None, Llama3JsonToolParser)
    assert (c.reasoning_parser_cls, c.tool_parser_cls) == (ReasoningParser, Qwen3ToolParser)
    assert (b.reasoning_parser_cls, b.tool_parser_cls) == (None, Internlm2ToolParser)
    assert (BaseResponseParser.reasoning_parser_cls, BaseResponseParser.tool_parser_cls,
            BaseResponseParser.tokenizer) == base
    # A configured class can itself be specialised without touching its parent.
    d = c.with_parsers(None, 'llama3')
    assert issubclass(d, c) and c.tool_parser_cls is Qwen3ToolParser and d.tool_parser_cls is Llama3JsonToolParser


def test_base_response_parser_class_attributes_writable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ResponseParserManager.get('default') is BaseResponseParser
    monkeypatch.setattr(BaseResponseParser, 'reasoning_parser_cls', ReasoningParser)
    monkeypatch.setattr(BaseResponseParser, 'tool_parser_cls', Qwen3ToolParser)
    parser = BaseResponseParser(make_request())
    assert complete_key(parser, 'r</think>' + TOOL_TIME) == (None, 'r', [('get_time', '{}')])
    # Subclasses created afterwards inherit; changing the base later does not reach their own settings.
    sub = BaseResponseParser.with_parsers(None, 'llama3')
    monkeypatch.setattr(BaseResponseParser, 'tool_parser_cls', Internlm2ToolParser)
    assert sub.tool_parser_cls is Llama3JsonToolParser
    assert isinstance(BaseResponseParser(make_request()).tool_parser, Internlm2ToolParser)
    for name in ('MODE_PLAIN', 'MODE_REASONING', 'MODE_TOOL'):
        monkeypatch.setattr(BaseResponseParser, name, getattr(BaseResponseParser, name))
    assert (BaseResponseParser.MODE_PLAIN, BaseResponseParser.MODE_REASONING, BaseResponseParser.MODE_TOOL) == \
        ('plain', 'reasoning', 'tool')


def test_process_wide_set_parsers_on_base(monkeypatch: pytest.MonkeyPatch) -> None:
    """LMDeploy configures BaseResponseParser itself once per server."""
    for name in ('reasoning_parser_cls', 'tool_parser_cls', 'tokenizer'):
        monkeypatch.setattr(BaseResponseParser, name, getattr(BaseResponseParser, name))
    BaseResponseParser.set_parsers('deepseek-r1', 'llama3')
    assert (BaseResponseParser.reasoning_parser_cls, BaseResponseParser.tool_parser_cls) == \
        (ReasoningParser, Llama3JsonToolParser)
    parser = BaseResponseParser(make_request())
    assert complete_key(parser, 'r</think><|python_tag|>{"name": "get_time"}') == (None, 'r', [('get_time', '{}')])


@pytest.mark.parametrize('legacy', LEGACY_REASONING_PARSER_NAMES)
def test_legacy_reasoning_names(legacy: str) -> None:
    assert legacy in ('qwen-qwq', 'intern-s1', 'deepseek-r1')
    assert validate_parser_names(legacy, 'qwen3', warn_legacy=False) == ('default', 'qwen3')
    cls = BaseResponseParser.with_parsers(legacy, 'qwen3')
    assert cls.reasoning_parser_cls is ReasoningParser


def test_intern_s1_is_both_reasoning_and_tool_name() -> None:
    assert validate_parser_names('intern-s1', 'intern-s1', warn_legacy=False) == ('default', 'intern-s1')
    cls = BaseResponseParser.with_parsers('intern-s1', 'intern-s1')
    assert (cls.reasoning_parser_cls, cls.tool_parser_cls) == (ReasoningParser, Internlm2ToolParser)


@pytest.mark.parametrize('name,cls', [
    ('qwen', Qwen3ToolParser), ('qwen2d5', Qwen3ToolParser), ('qwen3', Qwen3ToolParser),
    ('internlm', Internlm2ToolParser), ('intern-s1', Internlm2ToolParser), ('llama3', Llama3JsonToolParser),
])
def test_registered_dialect_names(name: str, cls: type) -> None:
    assert lmparse.ToolParserManager.get(name) is cls
    assert issubclass(cls, JsonToolParser) and issubclass(cls, ToolParser)
    assert BaseResponseParser.with_parsers(None, name).tool_parser_cls is cls


def test_dialect_tags_and_fields() -> None:
    assert (Qwen3ToolParser.get_tool_open_tag(), Qwen3ToolParser.get_tool_close_tag(), Qwen3ToolParser.argument_field) \
        == ('<tool_call>', '</tool_call>', 'arguments')
    assert (Internlm2ToolParser.get_tool_open_tag(), Internlm2ToolParser.get_tool_close_tag(),
            Internlm2ToolParser.argument_field) == ('<|action_start|><|plugin|>', '<|action_end|>', 'parameters')
    assert (Llama3JsonToolParser.get_tool_open_tag(), Llama3JsonToolParser.get_tool_close_tag(),
            Llama3JsonToolParser.argument_field) == ('<|python_tag|>', None, 'parameters')


def test_unknown_parser_names_fail_fast() -> None:
    with pytest.raises(ValueError):
        BaseResponseParser.with_parsers('no-such-reasoning', 'qwen3')
    with pytest.raises(KeyError):
        BaseResponseParser.with_parsers(None, 'no-such-tool')


# ---- compiled modules ------------------------------------------------------------------------


@pytest.mark.parametrize('obj', [
    BaseResponseParser, ToolParser, JsonToolParser, Qwen3ToolParser, Internlm2ToolParser, Llama3JsonToolParser,
    JsonValueScanner, DeltaMessage,
], ids=lambda o: o.__name__)
def test_classes_come_from_extension_modules(obj: type) -> None:
    # A dialect is a Python declaration; the family it declares itself on is compiled.
    if obj.__module__.startswith('lmparse.dialects.'):
        obj = next(k for k in obj.__mro__ if not k.__module__.startswith('lmparse.dialects.'))
    module = sys.modules[obj.__module__]
    assert module.__file__ is not None
    assert module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), module.__file__
    spec = importlib.util.find_spec(obj.__module__)
    assert spec is not None
    assert isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)


def test_tool_parser_instances_are_extension_types(make_parser: Any) -> None:
    parser = make_parser('default', 'qwen3')
    assert type(parser.tool_parser) is Qwen3ToolParser
    # The dialect declares itself on a compiled family (a cdef class).
    assert isinstance(parser.tool_parser, JsonToolParser)
    assert not hasattr(JsonToolParser(), '__dict__')


def test_tool_deltas_helper_guard(make_parser: Any) -> None:
    """Guard for the helpers: a wrong expectation fails."""
    flagged = make_parser(None, 'qwen3').stream_chunk(TOOL_TIME, [], final=True)
    assert [d.function.name for d in tool_deltas(flagged)] == ['get_time', None]
    with pytest.raises(AssertionError):
        check_messages([(DeltaMessage(content='x', reasoning_content='y'), False)])


# ---- text full of '<': tags are checked at each '<' in place, then searched ---------

# More '<' than the router checks one by one in a chunk, near-miss tags among them.
ANGLE_NOISE = 'if a<b and c<<d: x = [<i>] </thin <thinking> <tool_cal <\uff5cDSML <\n\n< ' * 3


@pytest.mark.parametrize('dialect', ['qwen3', 'deepseek-v4'])
def test_text_full_of_angle_brackets(dialect: str, make_parser: Any) -> None:
    from tests.streaming import chunkings, complete, stream
    from tests.test_dsml import THINK, block, invoke, param, tags

    if dialect == 'qwen3':
        text = f'<think>{ANGLE_NOISE}</think>{ANGLE_NOISE}{TOOL_TIME}{ANGLE_NOISE}'
        request: dict[str, Any] = {}
        expected = (ANGLE_NOISE * 2, ANGLE_NOISE, [('get_time', '{}')])
        split_tags: tuple[str, ...] = ('<think>', '</think>', '<tool_call>', '</tool_call>')
    else:
        call = block(dialect, invoke('get_time', param('zone', 'UTC')))
        text = f'{ANGLE_NOISE}</think>{ANGLE_NOISE}{call}'
        request = THINK
        expected = (ANGLE_NOISE, ANGLE_NOISE, [('get_time', '{"zone": "UTC"}')])
        split_tags = tags(dialect)
    reasoning = 'default' if dialect == 'qwen3' else dialect
    assert complete(make_parser(reasoning, dialect, **request), text).key() == expected
    for label, chunks in chunkings(text, split_tags):
        assert stream(make_parser(reasoning, dialect, **request), chunks).key() == expected, label
