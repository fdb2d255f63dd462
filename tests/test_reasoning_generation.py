"""Reasoning classes renew a generation token when patched (lmparse.reasoning.ReasoningMeta).

Construction trusts its cached view of a declared reasoning class while the
token is unchanged, so every way of changing what the class resolves its
methods and declarations to must take effect on the next construction --
including through a base class that does not renew the token.
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser
from lmparse.reasoning import ReasoningMeta, ReasoningParser
from tests.streaming import make_request


def parse(cls: Any, text: str) -> tuple[Any, Any]:
    content, _calls, reasoning = cls(make_request()).parse_complete(text)
    return content, reasoning


def configured(rcls: type) -> Any:
    cls = BaseResponseParser.with_parsers(None, None)
    cls.reasoning_parser_cls = rcls
    return cls


def test_every_reasoning_class_has_the_metaclass() -> None:
    class Declared(ReasoningParser):
        reasoning_close_tag = '</r>'

    made = type('Made', (Declared,), {})
    assert type(ReasoningParser) is ReasoningMeta
    assert type(Declared) is ReasoningMeta and type(made) is ReasoningMeta
    assert isinstance(Declared, type)


def test_declaration_assigned_and_deleted_on_a_subclass() -> None:
    class Declared(ReasoningParser):
        reasoning_close_tag = '</r>'

    cls = configured(Declared)
    for _ in range(2):
        assert parse(cls, 'x</r>y') == ('y', 'x')
    Declared.reasoning_close_tag = '</s>'
    assert parse(cls, 'x</s>y') == ('y', 'x')
    del Declared.reasoning_close_tag  # back to ReasoningParser's
    assert parse(cls, 'x</think>y') == ('y', 'x')
    Declared.thinking_switches = ('enable_thinking',)  # no switch on: starts in plain text
    assert parse(cls, 'x</think>y') == ('x</think>y', None)


def test_method_patched_on_the_root_class(monkeypatch: pytest.MonkeyPatch) -> None:
    class Declared(ReasoningParser):
        pass

    cls = configured(Declared)
    assert parse(cls, 'x</think>y') == ('y', 'x')
    monkeypatch.setattr(ReasoningParser, 'starts_in_reasoning_mode', lambda self: False)
    assert parse(cls, 'x</think>y') == ('x</think>y', None)
    monkeypatch.undo()
    assert parse(cls, 'x</think>y') == ('y', 'x')


def test_patch_through_a_plain_mixin() -> None:
    """A base without the metaclass does not renew the token: such classes are compared attribute by attribute."""
    class Mixin:
        pass

    class Mixed(Mixin, ReasoningParser):
        pass

    cls = configured(Mixed)
    for _ in range(2):
        assert parse(cls, 'x</think>y') == ('y', 'x')
    Mixin.reasoning_close_tag = '</m>'  # type: ignore[attr-defined]
    assert parse(cls, 'x</m>y') == ('y', 'x')
    Mixin.starts_in_reasoning_mode = lambda self: False  # type: ignore[attr-defined]
    assert parse(cls, 'x</m>y') == ('x</m>y', None)
    del Mixin.starts_in_reasoning_mode  # type: ignore[attr-defined]
    assert parse(cls, 'x</m>y') == ('y', 'x')


def test_metaclass_setattr_overridden_by_a_derived_metaclass() -> None:
    """A derived metaclass that skips ReasoningMeta's hooks is compared attribute by attribute too."""
    class Quiet(ReasoningMeta):
        def __setattr__(cls, name: str, value: Any) -> None:
            type.__setattr__(cls, name, value)

    class Declared(ReasoningParser, metaclass=Quiet):
        pass

    cls = configured(Declared)
    for _ in range(2):
        assert parse(cls, 'x</think>y') == ('y', 'x')
    Declared.reasoning_close_tag = '</q>'
    assert parse(cls, 'x</q>y') == ('y', 'x')
