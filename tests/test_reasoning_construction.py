"""The response parser builds built-in reasoning parsers without calling them (lmparse.reasoning's
tables describe their __init__ and starts_in_reasoning_mode): the result must equal a real call."""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser, ChatCompletionRequest, ReasoningParserManager

KWARGS: list[dict[str, Any]] = [
    {},
    {'enable_thinking': True},
    {'enable_thinking': False},
    {'thinking': True},
    {'thinking': False, 'enable_thinking': True},
    {'thinking': 1},
    {'enable_thinking': 'yes'},
    {'reasoning_effort': 'high'},
    {'other': [1, 2]},
]


# 'hf' / 'response_template' resolve to a class only for a tokenizer's template (tests/test_response_template.py).
@pytest.mark.parametrize('name', sorted(n for n, c in ReasoningParserManager.module_dict.items()
                                        if not getattr(c, 'from_tokenizer', False)))
@pytest.mark.parametrize('kwargs', KWARGS, ids=repr)
def test_fast_construction_equals_a_real_call(name: str, kwargs: dict[str, Any]) -> None:
    rcls = ReasoningParserManager.get(name)
    cls = BaseResponseParser.with_parsers(name, None)
    request = ChatCompletionRequest.from_dict(
        {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}], 'chat_template_kwargs': dict(kwargs)})
    for _ in range(2):  # the first construction builds the per-class plan, the second uses it
        parser = cls(request)
        real = rcls(**parser._kwargs)
        got = parser.reasoning_parser
        assert type(got) is type(real)
        assert vars(got) == vars(real)
        assert vars(got)['kwargs'] is not parser._kwargs  # `**kwargs` gives __init__ its own dict
        want = bool(real.starts_in_reasoning_mode()) and parser.enable_thinking is not False
        assert parser.reasoning_enabled == want
