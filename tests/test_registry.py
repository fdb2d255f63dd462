"""Tests for lmparse.registry and lmparse.reasoning."""
from __future__ import annotations

import logging

import pytest

from lmparse.reasoning import LEGACY_REASONING_PARSER_NAMES as REEXPORTED_LEGACY
from lmparse.reasoning import ReasoningParser
from lmparse.registry import (
    LEGACY_REASONING_PARSER_NAMES,
    ReasoningParserManager,
    Registry,
    ResponseParserManager,
    ToolParserManager,
    UnknownParserError,
    validate_parser_names,
)

# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------


class A:
    pass


class B:
    pass


def test_register_as_decorator_and_call() -> None:
    reg = Registry('tool_parser')

    @reg.register_module('a')
    class Decorated:
        pass

    assert reg.register_module(['b', 'c'])(A) is A
    assert reg.register_module('d', module=B) is B
    assert reg.register_module(module=A) is A  # name from __name__
    assert reg.register_module(('e',))(B) is B

    assert reg.module_dict == {'a': Decorated, 'b': A, 'c': A, 'd': B, 'A': A, 'e': B}
    assert list(reg.module_dict) == ['a', 'b', 'c', 'd', 'A', 'e']
    assert list(reg) == ['a', 'b', 'c', 'd', 'A', 'e']
    assert reg.names() == ['A', 'a', 'b', 'c', 'd', 'e']
    assert len(reg) == 6
    assert 'b' in reg and 'zz' not in reg and ['unhashable'] not in reg
    assert reg.get('c') is A
    assert repr(reg) == "Registry(name='tool_parser', items=['a', 'b', 'c', 'd', 'A', 'e'])"


def test_register_decorator_without_name() -> None:
    reg = Registry('x')

    @reg.register_module()
    class Named:
        pass

    assert reg.get('Named') is Named


def test_reregister_rules() -> None:
    reg = Registry('reasoning_parser')
    reg.register_module('a', module=A)
    reg.register_module('a', module=A)  # same class: no-op
    assert reg.module_dict == {'a': A}

    with pytest.raises(KeyError, match="'a' is already registered in the reasoning_parser registry"):
        reg.register_module('a', module=B)
    assert reg.get('a') is A

    # A failing list registration leaves nothing half-registered.
    with pytest.raises(KeyError):
        reg.register_module(['new', 'a'], module=B)
    assert 'new' not in reg

    assert reg.register_module('a', force=True, module=B) is B
    assert reg.get('a') is B
    assert reg.register_module(['a', 'b'], force=True)(A) is A
    assert reg.module_dict == {'a': A, 'b': A}


@pytest.mark.parametrize('name', [3, ['a', 1], {'a'}])
def test_register_bad_name(name: object) -> None:
    reg = Registry('x')
    with pytest.raises(TypeError, match='name must be None, a str or a list/tuple of str'):
        reg.register_module(name, module=A)  # type: ignore[arg-type]
    assert len(reg) == 0


def test_register_bad_module() -> None:
    with pytest.raises(TypeError, match='module must be a class or callable, got int'):
        Registry('x').register_module('a', module=3)


def test_unknown_parser_error() -> None:
    reg = Registry('tool_parser')
    reg.register_module('qwen3', module=A)
    reg.register_module('internlm', module=B)
    with pytest.raises(UnknownParserError) as info:
        reg.get('nope')
    err = info.value
    assert isinstance(err, KeyError)
    assert isinstance(err, ValueError)
    assert str(err) == "The tool parser 'nope' is not in the parser list: ['internlm', 'qwen3']"
    assert err.name == 'nope'
    assert err.registry == 'tool_parser'
    assert err.known == ['internlm', 'qwen3']
    # Callers catching either base class see it.
    with pytest.raises(KeyError):
        reg.get('nope')
    with pytest.raises(ValueError):
        reg.get(None)  # type: ignore[arg-type]
    with pytest.raises(UnknownParserError):
        reg.get(['x'])  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Managers and validate_parser_names
# ---------------------------------------------------------------------------


def test_managers() -> None:
    assert ResponseParserManager.name == 'response_parser'
    assert ReasoningParserManager.name == 'reasoning_parser'
    assert ToolParserManager.name == 'tool_parser'
    assert ReasoningParserManager.get('default') is ReasoningParser
    assert LEGACY_REASONING_PARSER_NAMES == ('qwen-qwq', 'intern-s1', 'deepseek-r1')
    assert REEXPORTED_LEGACY is LEGACY_REASONING_PARSER_NAMES


def test_validate_parser_names_none() -> None:
    assert validate_parser_names() == (None, None)
    assert validate_parser_names('default') == ('default', None)


@pytest.mark.parametrize('legacy', ['qwen-qwq', 'intern-s1', 'deepseek-r1'])
def test_validate_parser_names_legacy(legacy: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger='lmparse'):
        assert validate_parser_names(legacy) == ('default', None)
    messages = [r.getMessage() for r in caplog.records if r.name == 'lmparse']
    assert messages == [f"The reasoning parser '{legacy}' is deprecated; "
                        "using the 'default' reasoning parser instead."]

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger='lmparse'):
        assert validate_parser_names(legacy, warn_legacy=False) == ('default', None)
    assert [r for r in caplog.records if r.name == 'lmparse'] == []


def test_validate_parser_names_unknown() -> None:
    known = ReasoningParserManager.names()
    assert 'default' in known
    with pytest.raises(ValueError) as info:
        validate_parser_names('nope')
    assert isinstance(info.value, UnknownParserError)
    assert str(info.value) == f"The reasoning parser 'nope' is not in the parser list: {known}"

    with pytest.raises(ValueError) as info:
        validate_parser_names(None, '__no_such_tool_parser__')
    assert str(info.value).startswith("The tool parser '__no_such_tool_parser__' is not in the parser list: [")


def test_validate_parser_names_known_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ToolParserManager.module_dict, '__test_tool__', A)
    assert validate_parser_names('deepseek-r1', '__test_tool__', warn_legacy=False) == ('default', '__test_tool__')


# ---------------------------------------------------------------------------
# ReasoningParser
# ---------------------------------------------------------------------------


class FakeTokenizer:
    def __init__(self, vocab: dict[str, int]) -> None:
        self._vocab = vocab

    def get_vocab(self) -> dict[str, int]:
        return self._vocab


def test_reasoning_parser_descriptor() -> None:
    parser = ReasoningParser(enable_thinking=False, foo=1)
    assert parser.kwargs == {'enable_thinking': False, 'foo': 1}
    assert ReasoningParser().kwargs == {}
    assert ReasoningParser.get_reasoning_open_tag() == '<think>'
    assert ReasoningParser.get_reasoning_close_tag() == '</think>'
    assert parser.starts_in_reasoning_mode() is True


def test_reasoning_validate_tokenizer() -> None:
    ReasoningParser.validate_tokenizer(FakeTokenizer({'<think>': 5, '</think>': 6, 'a': 1}))
    with pytest.raises(RuntimeError) as info:
        ReasoningParser.validate_tokenizer(FakeTokenizer({'<think>': 5}))
    assert str(info.value) == ("ReasoningParser reasoning parser: reasoning tag(s) ['</think>'] "
                               "not found in the tokenizer vocabulary")
    with pytest.raises(RuntimeError, match=r"\['<think>', '</think>'\]"):
        ReasoningParser.validate_tokenizer(FakeTokenizer({}))


def test_reasoning_token_ids() -> None:
    assert ReasoningParser.token_ids(FakeTokenizer({'<think>': 5, '</think>': 6})) == (5, 6)
    assert ReasoningParser.token_ids(FakeTokenizer({'</think>': 0})) == (None, 0)
    assert ReasoningParser.token_ids(FakeTokenizer({})) == (None, None)


def test_subclass_overrides_tags() -> None:
    class Custom(ReasoningParser):
        @classmethod
        def get_reasoning_open_tag(cls) -> str:
            return '<seed:think>'

        @classmethod
        def get_reasoning_close_tag(cls) -> str:
            return '</seed:think>'

    tok = FakeTokenizer({'<seed:think>': 1, '</seed:think>': 2})
    Custom.validate_tokenizer(tok)
    assert Custom.token_ids(tok) == (1, 2)
    with pytest.raises(RuntimeError, match="^Custom reasoning parser"):
        Custom.validate_tokenizer(FakeTokenizer({'<think>': 1, '</think>': 2}))


# ---- names that stand for a whole response parser (issue #27 item 5) -------------------------


def test_response_parser_names_pair_only_with_each_other() -> None:
    from lmparse import BaseResponseParser, ResponseParserManager
    from lmparse.registry import response_parser_for, validate_parser_names

    gpt_oss = ResponseParserManager.get('gpt-oss')
    assert response_parser_for(None, 'qwen3') is None and response_parser_for(None, None) is None
    assert response_parser_for('openai_gptoss', 'openai') == 'gpt-oss'
    assert response_parser_for('gpt-oss', None) == response_parser_for(None, 'gpt-oss') == 'gpt-oss'
    assert validate_parser_names('openai_gptoss', 'openai') == ('openai_gptoss', 'openai')
    for pair in (('qwen3', 'openai'), ('openai_gptoss', 'hermes')):
        with pytest.raises(ValueError, match='gpt-oss'):
            validate_parser_names(*pair)
        with pytest.raises(ValueError, match='gpt-oss'):
            BaseResponseParser.with_parsers(*pair)
    configured = BaseResponseParser.with_parsers('openai_gptoss', 'openai')
    assert issubclass(configured, gpt_oss) and configured is not gpt_oss
    text = '<|channel|>final<|message|>Hi<|return|>'
    assert configured({'messages': []}).parse_complete(text)[0] == 'Hi'
    # the process-wide configuration cannot become another class: a clear error, nothing changed
    cls = BaseResponseParser.with_parsers(None, 'qwen3')
    with pytest.raises(ValueError, match="ResponseParserManager.get\\('gpt-oss'\\)"):
        cls.set_parsers(None, 'openai')
    assert cls.tool_parser_cls is ToolParserManager.get('qwen3')
    # unknown names still fail as unknown
    with pytest.raises(UnknownParserError):
        validate_parser_names(None, 'openai_x')
