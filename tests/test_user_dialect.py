"""User dialects written in pure Python on top of the compiled parser classes."""
from __future__ import annotations

import contextlib
import importlib.machinery
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from lmparse import (
    BaseResponseParser,
    JsonToolParser,
    JsonValueScanner,
    Qwen3ToolParser,
    ToolParser,
    ToolParserManager,
)
from lmparse.request import update_request
from tests.streaming import (
    check_messages,
    chunkings,
    complete,
    fixed_chunks,
    make_request,
    reconstruct,
    stream_flagged,
    token_chunks,
    tool_deltas,
)

EXAMPLE_NAME = 'example-json--test-user-dialect'


# The design's minimal JSON dialect, verbatim apart from the registry name.
@ToolParserManager.register_module(EXAMPLE_NAME)
class ExampleJsonToolParser(JsonToolParser):
    argument_field = "arguments"

    @classmethod
    def get_tool_open_tag(cls) -> str:
        return "<tool_call>"

    @classmethod
    def get_tool_close_tag(cls) -> str:
        return "</tool_call>"


@pytest.fixture(scope='module', autouse=True)
def _unregister_example() -> Iterator[None]:
    yield
    ToolParserManager.module_dict.pop(EXAMPLE_NAME, None)


@contextlib.contextmanager
def registered(name: str, cls: type) -> Iterator[type]:
    assert name not in ToolParserManager
    ToolParserManager.register_module(name, module=cls)
    try:
        yield cls
    finally:
        ToolParserManager.module_dict.pop(name, None)
    assert name not in ToolParserManager


def run_all(cls: type, text: str, tags: tuple[str, ...], request: dict[str, Any] | None = None) -> set[Any]:
    """Distinct normalized results over parse_complete and every chunking."""
    results = {repr(complete(cls(request or make_request()), text).key())}
    for _, chunks in chunkings(text, tags):
        parser = cls(request or make_request())
        flagged = stream_flagged(parser, chunks)
        check_messages(flagged)
        results.add(repr(reconstruct(parser, flagged).key()))
    return results


# ---- the design's ExampleJsonToolParser -------------------------------------------------

QWEN_TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>')


def test_example_dialect_is_registered_python_subclass() -> None:
    assert ToolParserManager.get(EXAMPLE_NAME) is ExampleJsonToolParser
    assert issubclass(ExampleJsonToolParser, JsonToolParser) and issubclass(ExampleJsonToolParser, ToolParser)
    module_file = getattr(sys.modules[ExampleJsonToolParser.__module__], '__file__', '') or ''
    assert module_file.endswith('.py')
    assert not module_file.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


@pytest.mark.parametrize('reasoning,text,expected', [
    (None,
     'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>',
     ('Let me check.\n', None, [('get_weather', '{"city": "Beijing"}')])),
    ('default',
     '<think>\nplan\n</think>\n\n<tool_call>\n{"arguments": {"q": "</tool_call>"}, "name": "search"}\n</tool_call>\n'
     '<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>\n\n<tool_call>\n{"name": "get_time"}\n</tool_call>'
     '\nbye',
     ('\n\n\nbye', '\nplan\n', [('search', '{"q": "</tool_call>"}'), ('get_time', '{}')])),
    ('default',
     '<think>\nA\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\nB\n</think>\n\nC',
     ('\n\nC', '\nA\n\nB\n', [('get_time', '{}')])),
    (None,
     '<tool_call>\n{"name": "search", "arguments": {"query": "中文 \\"x\\" \\\\", "query": "dup"',
     (None, None, [('search', '{"query": "中文 \\"x\\" \\\\", "query": "dup"')])),
    (None, '<tool_call>\n{"name": "sea', (None, None, [])),
])
def test_example_dialect_parses(reasoning: str | None, text: str, expected: tuple[Any, Any, Any]) -> None:
    cls = BaseResponseParser.with_parsers(reasoning, EXAMPLE_NAME)
    assert type(cls(make_request()).tool_parser) is ExampleJsonToolParser
    assert run_all(cls, text, QWEN_TAGS) == {repr(expected)}


def test_example_dialect_matches_builtin_qwen() -> None:
    text = ('<think>\nx\n</think>\n\nHi\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n'
            '</tool_call>\n<tool_call>\n{"arguments": {}, "name": "get_time"}\n</tool_call>')
    ours = run_all(BaseResponseParser.with_parsers('default', EXAMPLE_NAME), text, QWEN_TAGS)
    builtin = run_all(BaseResponseParser.with_parsers('default', 'qwen3'), text, QWEN_TAGS)
    assert ours == builtin == {repr(('\n\nHi\n', '\nx\n', [('get_weather', '{"city": "Oslo"}'), ('get_time', '{}')]))}


class ParametersJsonToolParser(JsonToolParser):
    """A Python dialect that only changes the argument field and the tags."""

    argument_field = 'parameters'

    @classmethod
    def get_tool_open_tag(cls) -> str:
        return '<function_call>'

    @classmethod
    def get_tool_close_tag(cls) -> str:
        return '</function_call>'

    def adjust_request(self, request: Any) -> Any:
        return super().adjust_request(update_request(request, skip_special_tokens=False))


def test_python_dialect_argument_field_and_adjust_request() -> None:
    text = ('<function_call>{"name": "search", "arguments": {"a": 1}, "parameters": {"query": "q"}}</function_call>'
            '<function_call>{"name": "rm", "parameters": {}}</function_call> done')
    with registered('params-json--test-user-dialect', ParametersJsonToolParser):
        cls = BaseResponseParser.with_parsers(None, 'params-json--test-user-dialect')
        parser = cls(make_request())
        # super().adjust_request still ran: tools recorded, special tokens kept.
        assert parser.request.skip_special_tokens is False
        assert run_all(cls, text, ('<function_call>', '</function_call>')) == \
            {repr((' done', None, [('search', '{"query": "q"}')]))}


# ---- a pure-Python ToolParser with its own payload grammar --------------------------------


class ToyToolParser(ToolParser):
    """``[[CALL name|{json}]]``: identity first, then the JSON value's source text."""

    tool_close_prefixes = (']',)

    def __init__(self) -> None:
        super().__init__()
        self.blocks_begun = 0
        self.calls_begun = 0
        self.feeds: list[tuple[int, str, int]] = []  # (block number, text, consumed)
        self._phase = 'name'
        self._scanner = JsonValueScanner()

    @classmethod
    def get_tool_open_tag(cls) -> str:
        return '[[CALL '

    @classmethod
    def get_tool_close_tag(cls) -> str:
        return ']]'

    def begin_tool_block(self) -> None:
        super().begin_tool_block()
        assert self._payload_closed is False and self.block_closed is False
        self.blocks_begun += 1
        self._phase = 'name'
        self._scanner.reset()

    def _consume_stream_payload(self, text: str, deltas: list, *, final: bool = False) -> int:
        pos = 0
        if self._phase == 'name':
            bar = text.find('|')
            if bar < 0:
                self.feeds.append((self.blocks_begun, text, 0))
                return 0  # the name is not complete yet; on final nothing is invented
            self._begin_call(f'toy-{self.calls_begun}')
            self.calls_begun += 1
            self._emit_delta(deltas, name=text[:bar].strip())
            pos = bar + 1
            self._phase = 'arguments'
        start = pos
        pos = self._scanner.feed(text, pos)
        if pos > start:
            self._emit_delta(deltas, arguments=text[start:pos])
        if self._scanner.complete:
            self._payload_closed = True
        self.feeds.append((self.blocks_begun, text, pos))
        return pos


TOY_TAGS = ('[[CALL ', ']]')
TOY_TEXT = ('Running tools. [[CALL get_weather|{"city": "Paris", "note": "]] inside"}]]\n'
            '[[CALL not_allowed|{"x": [[1]]}]]\n\n[[CALL search|{"query": "a|b", "n": [1, [2]]}]] Done.')
TOY_EXPECTED = ('Running tools.  Done.', None, [
    ('get_weather', '{"city": "Paris", "note": "]] inside"}'),
    ('search', '{"query": "a|b", "n": [1, [2]]}'),
])


def test_toy_dialect_over_chunkings() -> None:
    with registered('toy--test-user-dialect', ToyToolParser):
        cls = BaseResponseParser.with_parsers(None, 'toy--test-user-dialect')
        assert run_all(cls, TOY_TEXT, TOY_TAGS) == {repr(TOY_EXPECTED)}


def test_toy_dialect_call_ids_indices_and_hooks() -> None:
    with registered('toy--test-user-dialect', ToyToolParser):
        parser = BaseResponseParser.with_parsers(None, 'toy--test-user-dialect')(make_request())
        flagged = stream_flagged(parser, fixed_chunks(TOY_TEXT, 3))
        deltas = tool_deltas(flagged)
        identities = [(d.index, d.id, d.function.name) for d in deltas if d.id is not None]
        # The call ids come from _begin_call; the rejected call consumed id toy-1 but no index.
        assert identities == [(0, 'toy-0', 'get_weather'), (1, 'toy-2', 'search')]
        toy = parser.tool_parser
        assert isinstance(toy, ToyToolParser)
        assert (toy.blocks_begun, toy.calls_begun) == (3, 3)
        assert toy.block_closed is True


def test_toy_dialect_consumed_prefix_contract() -> None:
    """Each feed starts where the previous one stopped: the caller keeps the unconsumed suffix."""
    with registered('toy--test-user-dialect', ToyToolParser):
        parser = BaseResponseParser.with_parsers(None, 'toy--test-user-dialect')(make_request())
        stream_flagged(parser, fixed_chunks(TOY_TEXT, 2))
        toy = parser.tool_parser
        assert isinstance(toy, ToyToolParser)
        feeds = toy.feeds
        assert feeds
        for (block_a, text_a, consumed_a), (block_b, text_b, _) in zip(feeds, feeds[1:]):
            assert 0 <= consumed_a <= len(text_a)
            if block_a == block_b:
                assert text_b.startswith(text_a[consumed_a:]), (text_a, consumed_a, text_b)
        # The payload never includes the outer open tag.
        assert not any(text.startswith('[[CALL') for _, text, _ in feeds)


@pytest.mark.parametrize('text,expected', [
    ('x [[CALL get_time|{"a": [1, "]', ('x ', None, [('get_time', '{"a": [1, "]')])),
    ('x [[CALL get_ti', ('x ', None, [])),
    ('x [[CALL get_time|{}', ('x ', None, [('get_time', '{}')])),
    ('x [[CALL get_time|{}]', ('x ', None, [('get_time', '{}')])),
    ('x [[CALL get_time|{}]]\n', ('x \n', None, [('get_time', '{}')])),
])
def test_toy_dialect_final_chunk(text: str, expected: tuple[Any, Any, Any]) -> None:
    with registered('toy--test-user-dialect', ToyToolParser):
        cls = BaseResponseParser.with_parsers(None, 'toy--test-user-dialect')
        assert run_all(cls, text, TOY_TAGS) == {repr(expected)}


def test_toy_dialect_inside_reasoning() -> None:
    text = '<think>\nneed data [[CALL search|{"query": "x"}]]\nok\n</think>\n\nanswer'
    with registered('toy--test-user-dialect', ToyToolParser):
        cls = BaseResponseParser.with_parsers('default', 'toy--test-user-dialect')
        assert run_all(cls, text, TOY_TAGS + ('<think>', '</think>')) == \
            {repr(('\n\nanswer', '\nneed data \nok\n', [('search', '{"query": "x"}')]))}


class ArgumentsFirstToyParser(ToyToolParser):
    """``[[CALL {json}=>name]]``: arguments are emitted before the name is known."""

    def _consume_stream_payload(self, text: str, deltas: list, *, final: bool = False) -> int:
        pos = 0
        if self._phase == 'name':  # start of a call: arguments come first here
            self._begin_call()
            self.calls_begun += 1
            self._phase = 'arguments'
        if self._phase == 'arguments':
            start = pos
            pos = self._scanner.feed(text, pos)
            if pos > start:
                self._emit_delta(deltas, arguments=text[start:pos])
            if not self._scanner.complete:
                return pos
            self._phase = 'arrow'
        if self._phase == 'arrow':
            end = text.find(']', pos)
            if end < 0:
                return pos
            name = text[pos:end].strip()
            if not name.startswith('=>'):
                return pos
            self._emit_delta(deltas, name=name[2:].strip())
            self._payload_closed = True
            return end
        return pos


def test_arguments_before_name_held_by_the_base_class() -> None:
    text = 'a [[CALL {"city": "Rome"}=>get_weather]] b [[CALL {"x": 1}=>bad]] c [[CALL {}=>get_time]]'
    with registered('toy-args-first--test-user-dialect', ArgumentsFirstToyParser):
        cls = BaseResponseParser.with_parsers(None, 'toy-args-first--test-user-dialect')
        assert run_all(cls, text, TOY_TAGS) == \
            {repr(('a  b  c ', None, [('get_weather', '{"city": "Rome"}'), ('get_time', '{}')]))}
        parser = cls(make_request())
        deltas = tool_deltas(stream_flagged(parser, list(text)))
        assert deltas[0].function.name == 'get_weather' and deltas[0].id and deltas[0].index == 0
        first_args = [d.function.arguments for d in deltas if d.index == 0 and d.function.arguments is not None]
        assert len(first_args) == len('{"city": "Rome"}')  # one held fragment per character, released in order
        assert ''.join(first_args) == '{"city": "Rome"}'
        assert [d.index for d in deltas if d.id is not None] == [0, 1]


# ---- token-aligned close-tag prefixes declared by a Python dialect ---------------------------


class PipeJsonToolParser(JsonToolParser):
    """JSON envelope inside ``<|call|>`` ... ``<|/call|>``.

    Its tokenizer encodes the close tag as ``<|`` ``/`` ``call`` ``|>``, so
    only these proper prefixes can end a decoded chunk.
    """

    argument_field = 'arguments'
    tool_close_prefixes = ('<|', '<|/call', '<|/')  # any order: the base sorts longest first

    @classmethod
    def get_tool_open_tag(cls) -> str:
        return '<|call|>'

    @classmethod
    def get_tool_close_tag(cls) -> str:
        return '<|/call|>'


CLOSE_TOKENS = ['<|', '/', 'call', '|>']


def _token_aligned_splits(text: str) -> Iterator[list[str]]:
    """Every split of the text at a token boundary inside each close tag."""
    close = ''.join(CLOSE_TOKENS)
    bounds = [len(''.join(CLOSE_TOKENS[:i])) for i in range(1, len(CLOSE_TOKENS))]
    start = text.find(close)
    while start >= 0:
        for b in bounds:
            yield [text[:start + b], text[start + b:]]
        start = text.find(close, start + 1)
    # and all close-tag tokens as separate chunks
    pieces, rest = [], text
    while close in rest:
        head, rest = rest.split(close, 1)
        pieces.append(head)
        pieces.extend(CLOSE_TOKENS)
    pieces.append(rest)
    yield [p for p in pieces if p]


def test_declared_close_prefixes_token_aligned() -> None:
    text = ('Go.<|call|>{"name": "search", "arguments": {"query": "<|/call|> is data"}}<|/call|>\n'
            '<|call|>{"arguments": {"query": "q"}, "name": "get_time"}<|/call|> done')
    expected = ('Go. done', None, [('search', '{"query": "<|/call|> is data"}'), ('get_time', '{"query": "q"}')])
    with registered('pipe-json--test-user-dialect', PipeJsonToolParser):
        cls = BaseResponseParser.with_parsers(None, 'pipe-json--test-user-dialect')
        assert repr(complete(cls(make_request()), text).key()) == repr(expected)
        for chunks in _token_aligned_splits(text):
            parser = cls(make_request())
            flagged = stream_flagged(parser, chunks)
            check_messages(flagged)
            assert reconstruct(parser, flagged).key() == expected, chunks


def test_declared_close_prefix_is_held_not_emitted() -> None:
    with registered('pipe-json--test-user-dialect', PipeJsonToolParser):
        parser = BaseResponseParser.with_parsers(None, 'pipe-json--test-user-dialect')(make_request())
        out = parser.stream_chunk('<|call|>{"name": "search", "arguments": {"query": 1}}<|/', [])
        assert [(d.function.name, d.function.arguments) for d in tool_deltas(out)] == \
            [('search', None), (None, '{"query": 1}')]
        assert parser.stream_chunk('call', []) == []
        out = parser.stream_chunk('|>tail', [], final=True)
        assert [(m.content, e) for m, e in out] == [('tail', False)]


def test_stable_prefix_end() -> None:
    prefixes = ('</parameter', '</')
    assert ToolParser._stable_prefix_end('abc</', prefixes) == 3
    assert ToolParser._stable_prefix_end('abc</parameter', prefixes) == 3
    assert ToolParser._stable_prefix_end('abc</para', prefixes) == 9  # not a token boundary: nothing held
    assert ToolParser._stable_prefix_end('abc<', prefixes) == 4
    assert ToolParser._stable_prefix_end('</', prefixes, 1) == 2
    assert ToolParser._stable_prefix_end('abc</', (), 0) == 5


class TokenAlignedQwenToolParser(Qwen3ToolParser):
    """Qwen's tokenizer encodes ``</tool_call>`` as one token: no prefix can end a chunk."""

    tool_close_prefixes = ()


def test_python_subclass_of_builtin_with_empty_prefixes(qwen_tokenizer: Any) -> None:
    text = ('<think>\nCheck 北京.\n</think>\n\nOK.\n<tool_call>\n{"name": "get_weather", "arguments": '
            '{"city": "北京", "s": "a</tool_call>b\\\\"}}\n</tool_call>\n<tool_call>\n{"name": "get_time"}\n</tool_call>')
    expected = ('\n\nOK.\n', '\nCheck 北京.\n',
                [('get_weather', '{"city": "北京", "s": "a</tool_call>b\\\\"}'), ('get_time', '{}')])
    with registered('qwen-token-aligned--test-user-dialect', TokenAlignedQwenToolParser):
        cls = BaseResponseParser.with_parsers('default', 'qwen-token-aligned--test-user-dialect')
        parser = cls(make_request())
        assert type(parser.tool_parser) is TokenAlignedQwenToolParser
        flagged = stream_flagged(parser, token_chunks(qwen_tokenizer, text))
        check_messages(flagged)
        assert reconstruct(parser, flagged).key() == expected
        assert complete(cls(make_request()), text).key() == expected


def test_python_hooks_on_builtin_subclass_are_called() -> None:
    """Overriding begin_tool_block / _begin_call on a compiled dialect dispatches to Python."""
    events: list[str] = []

    class Traced(Qwen3ToolParser):
        def begin_tool_block(self) -> None:
            events.append('block')
            super().begin_tool_block()

        def _begin_call(self, call_id: Any = None) -> None:
            events.append('call')
            super()._begin_call(call_id)

    text = ('<tool_call>\n{"name": "get_time"}\n</tool_call>\n'
            '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call>')
    with registered('traced-qwen--test-user-dialect', Traced):
        cls = BaseResponseParser.with_parsers(None, 'traced-qwen--test-user-dialect')
        assert complete(cls(make_request()), text).key() == \
            (None, None, [('get_time', '{}'), ('search', '{"query": "x"}')])
    assert events == ['block', 'call', 'block', 'call']


class RecordingQwenToolParser(Qwen3ToolParser):
    """Wraps the compiled feed_tool_block from Python (the outer-block hook)."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, int, bool]] = []

    def feed_tool_block(self, text: str, deltas: list, *, final: bool = False) -> int:
        consumed = super().feed_tool_block(text, deltas, final=final)
        self.log.append((text, consumed, self.block_closed))
        return consumed


def test_python_feed_tool_block_override() -> None:
    text = 'a<tool_call>\n{"name": "search", "arguments": {"query": "q"}}\n</tool_call>b'
    with registered('recording-qwen--test-user-dialect', RecordingQwenToolParser):
        cls = BaseResponseParser.with_parsers(None, 'recording-qwen--test-user-dialect')
        assert run_all(cls, text, QWEN_TAGS) == {repr(('ab', None, [('search', '{"query": "q"}')]))}
        parser = cls(make_request())
        assert complete(parser, text).key() == ('ab', None, [('search', '{"query": "q"}')])
        # One feed saw the whole rest of the response and stopped right after the close tag.
        payload = text[len('a<tool_call>'):]
        recorder = parser.tool_parser
        assert isinstance(recorder, RecordingQwenToolParser)
        assert recorder.log == [(payload, len(payload) - 1, True)]


def test_registry_cleanup_helper() -> None:
    with registered('tmp--test-user-dialect', ToyToolParser):
        assert ToolParserManager.get('tmp--test-user-dialect') is ToyToolParser
    assert 'tmp--test-user-dialect' not in ToolParserManager
