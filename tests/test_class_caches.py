"""Per-class construction caches follow runtime changes to the classes they were derived from.

Construction caches what it derives from a parser's classes (tags, hooks, the
built-in reasoning fast path). Assigning or monkeypatching any of those class
attributes after parsers were built must take effect on the next construction,
exactly as if nothing had been cached.
"""
from __future__ import annotations

import threading
from typing import Any

import pytest

from lmparse import BaseResponseParser, ChatCompletionRequest
from lmparse.dialects.deepseek import DeepSeekV3ReasoningParser, DeepSeekV32ReasoningParser
from lmparse.reasoning import ReasoningParser
from lmparse.dialects.qwen import Qwen3ToolParser
from lmparse.dialects.qwen import Qwen3CoderToolParser
from tests.streaming import make_request

CALL = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'


def parse(cls: Any, text: str, **fields: Any) -> tuple[Any, Any, Any]:
    content, calls, reasoning = cls(make_request(**fields)).parse_complete(text)
    return content, [(c.function.name, c.function.arguments) for c in calls or ()], reasoning


def test_reasoning_class_swapped_on_the_parser_class(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = BaseResponseParser.with_parsers('default', 'qwen3')
    assert parse(cls, 'r</think>a') == ('a', [], 'r')
    monkeypatch.setattr(cls, 'reasoning_parser_cls', DeepSeekV3ReasoningParser)
    assert parse(cls, 'r</think>a') == ('r</think>a', [], None)  # V3 starts in reasoning only when asked
    monkeypatch.setattr(cls, 'reasoning_parser_cls', None)
    assert parse(cls, '<think>r</think>a') == ('<think>r</think>a', [], None)
    monkeypatch.setattr(cls, 'tool_parser_cls', None)
    assert parse(cls, CALL) == (CALL, [], None)


def test_base_class_assignment_reaches_a_subclass_without_its_own_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ('reasoning_parser_cls', 'tool_parser_cls', 'tokenizer'):
        monkeypatch.setattr(BaseResponseParser, name, getattr(BaseResponseParser, name))

    class Sub(BaseResponseParser):
        pass

    BaseResponseParser.set_parsers(None, 'qwen3')
    assert parse(Sub, CALL) == (None, [('get_time', '{}')], None)
    BaseResponseParser.set_parsers('default', None)
    assert parse(Sub, 'r</think>' + CALL) == (CALL, [], 'r')


def test_kwargs_hook_assigned_later(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = BaseResponseParser.with_parsers('deepseek-v3', None)
    assert parse(cls, 'r</think>a') == ('r</think>a', [], None)
    monkeypatch.setattr(cls, 'chat_template_kwargs_from_request',
                        classmethod(lambda klass, request: {'enable_thinking': True}))
    assert parse(cls, 'r</think>a') == ('a', [], 'r')


@pytest.mark.parametrize('rcls', [ReasoningParser, DeepSeekV3ReasoningParser, DeepSeekV32ReasoningParser])
def test_patched_builtin_reasoning_methods_are_called(monkeypatch: pytest.MonkeyPatch, rcls: type) -> None:
    """The fast path that skips calling built-in reasoning parsers turns off once they are patched."""
    name = {ReasoningParser: 'default', DeepSeekV3ReasoningParser: 'deepseek-v3',
            DeepSeekV32ReasoningParser: 'deepseek-v32'}[rcls]
    cls = BaseResponseParser.with_parsers(name, None)
    on = {'chat_template_kwargs': {'enable_thinking': True}}
    assert parse(cls, 'r</think>a', **on) == ('a', [], 'r')
    monkeypatch.setattr(rcls, 'starts_in_reasoning_mode', lambda self: False)
    assert parse(cls, 'r</think>a', **on) == ('r</think>a', [], None)
    monkeypatch.undo()
    assert parse(cls, 'r</think>a', **on) == ('a', [], 'r')

    seen: list[dict[str, Any]] = []
    original = ReasoningParser.__init__

    def init(self: Any, **kwargs: Any) -> None:
        seen.append(kwargs)
        original(self, **kwargs)
        self.extra = 1

    # The root of every built-in __init__ chain.
    monkeypatch.setattr(ReasoningParser, '__init__', init)
    parser = cls(make_request(**on))
    assert seen == [{'enable_thinking': True}]
    assert parser.reasoning_parser.extra == 1
    monkeypatch.setattr(rcls, 'get_reasoning_close_tag', classmethod(lambda klass: '</t>'))
    assert parse(cls, 'r</t>a', **on) == ('a', [], 'r')


def test_patched_hook_on_python_tool_class(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []

    class Sub(Qwen3ToolParser):
        pass

    cls = BaseResponseParser.with_parsers(None, 'qwen3')
    monkeypatch.setattr(cls, 'tool_parser_cls', Sub)
    assert parse(cls, CALL) == (None, [('get_time', '{}')], None)

    def begin_tool_block(self: Any) -> None:
        events.append('block')
        Qwen3ToolParser.begin_tool_block(self)

    monkeypatch.setattr(Sub, 'begin_tool_block', begin_tool_block, raising=False)
    assert parse(cls, CALL) == (None, [('get_time', '{}')], None)
    assert events == ['block']
    monkeypatch.undo()
    monkeypatch.setattr(cls, 'tool_parser_cls', Sub)
    assert parse(cls, CALL) == (None, [('get_time', '{}')], None)
    assert events == ['block']


def test_xml_hook_assigned_on_python_subclass_later() -> None:
    calls: list[int] = []

    class Sub(Qwen3CoderToolParser):
        pass

    text = '<tool_call>\n<function=get_time>\n</function>\n</tool_call>'
    cls = BaseResponseParser.with_parsers(None, 'qwen3coder')
    cls.tool_parser_cls = Sub
    assert parse(cls, text)[1] == [('get_time', '{}')]

    def hook(self: Any, *args: Any) -> Any:
        calls.append(1)
        return Qwen3CoderToolParser._consume_function(self, *args)

    Sub._consume_function = hook
    assert parse(cls, text)[1] == [('get_time', '{}')]
    assert calls


def test_own_request_without_init_takes_the_general_path() -> None:
    """A request whose slots are unset is not read in C: the general path reports it."""
    request = ChatCompletionRequest.__new__(ChatCompletionRequest)
    with pytest.raises(AttributeError):
        BaseResponseParser.with_parsers('default', 'qwen3')(request)


def test_concurrent_construction_matches_sequential() -> None:
    """Threads building parsers of classes that another thread reconfigures never see a torn plan."""
    text = 'r</think>' + CALL
    classes = [BaseResponseParser.with_parsers(r, t) for r in ('default', 'deepseek-v3', None)
               for t in ('qwen3', None)]
    want = {cls: parse(cls, text) for cls in classes}
    errors: list[Any] = []

    def work() -> None:
        try:
            for _ in range(200):
                for cls in classes:
                    got = parse(cls, text)
                    if got != want[cls]:
                        errors.append((cls, got))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
