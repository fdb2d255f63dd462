"""lmparse.integrations.sglang_types: SGLang's result objects built in compiled code, checked at start-up.

Runs without SGLang: the classes here have the shapes of SGLang 0.5.23's
(``sglang.srt.parser.reasoning_parser.StreamingParseResult``, a plain class;
``sglang.srt.function_call.core_types.StreamingParseResult`` / ``ToolCallItem``,
pydantic models). Built directly, an object must be indistinguishable from the
public constructor's; where a class differs, the start-up check must fall back
to the public constructor, and the objects must still be right.
"""
from __future__ import annotations

from typing import Any, Optional

import pytest

pydantic = pytest.importorskip('pydantic')

from lmparse.integrations.sglang_types import Results  # noqa: E402
from lmparse.protocol import DeltaFunctionCall, DeltaMessage, DeltaToolCall  # noqa: E402


class ReasoningResult:
    def __init__(self, normal_text: Optional[str] = None, reasoning_text: Optional[str] = None):
        self.normal_text = normal_text or ''
        self.reasoning_text = reasoning_text or ''


class ToolCallItem(pydantic.BaseModel):
    tool_index: int
    name: Optional[str] = None
    parameters: str


class StreamingParseResult(pydantic.BaseModel):
    normal_text: str = ''
    calls: list[ToolCallItem] = []


# Classes whose public constructors leave other state than a direct build would.
class CountingReasoning:
    def __init__(self, normal_text: Optional[str] = None, reasoning_text: Optional[str] = None):
        self.normal_text = normal_text or ''
        self.reasoning_text = reasoning_text or ''
        self.length = len(self.normal_text) + len(self.reasoning_text)


class ItemWithId(pydantic.BaseModel):
    tool_index: int
    name: Optional[str] = None
    parameters: str
    id: str = 'x'


class StrictResult(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra='allow')
    normal_text: str = ''
    calls: list[Any] = []

    @pydantic.model_validator(mode='after')
    def _mark(self) -> 'StrictResult':
        self.__pydantic_extra__['checked'] = True  # type: ignore[index]
        return self


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, pydantic.BaseModel):
        return (type(a) is type(b) and a == b and a.model_dump_json() == b.model_dump_json()
                and a.model_fields_set == b.model_fields_set and list(a.__dict__) == list(b.__dict__))
    return type(a) is type(b) and vars(a) == vars(b)


def test_fast_with_sglang_shapes() -> None:
    r = Results(ReasoningResult, StreamingParseResult, ToolCallItem)
    assert (r.fast_reasoning, r.fast_result, r.fast_item) == (True, True, True)
    assert _same(r.reasoning('a', 'b'), ReasoningResult(normal_text='a', reasoning_text='b'))
    item = r.item(1, 'f', '{}')
    assert _same(item, ToolCallItem(tool_index=1, name='f', parameters='{}'))
    assert _same(r.item(0, None, '{"a"'), ToolCallItem(tool_index=0, name=None, parameters='{"a"'))
    got = r.result('x', [item])
    assert _same(got, StreamingParseResult(normal_text='x', calls=[item]))
    assert got.model_dump() == {'normal_text': 'x', 'calls': [{'tool_index': 1, 'name': 'f', 'parameters': '{}'}]}


def test_falls_back_to_the_public_constructors_where_they_differ() -> None:
    r = Results(CountingReasoning, StrictResult, ItemWithId)
    assert (r.fast_reasoning, r.fast_result, r.fast_item) == (False, False, False)
    assert _same(r.reasoning('ab', 'c'), CountingReasoning(normal_text='ab', reasoning_text='c'))
    assert r.reasoning('ab', 'c').length == 3
    item = r.item(2, 'g', '{"k": 1}')
    assert _same(item, ItemWithId(tool_index=2, name='g', parameters='{"k": 1}'))
    res = r.result('t', [item])
    assert _same(res, StrictResult(normal_text='t', calls=[item])) and res.__pydantic_extra__ == {'checked': True}


def test_falls_back_when_the_constructor_raises() -> None:
    class Broken:
        def __init__(self, **kwargs: Any) -> None:
            raise TypeError('no')
    r = Results(Broken, StreamingParseResult, ToolCallItem)
    assert not r.fast_reasoning and r.fast_result and r.fast_item
    with pytest.raises(TypeError):
        r.reasoning('a', '')


def test_split_joins_the_fragments_of_one_call() -> None:
    r = Results(ReasoningResult, StreamingParseResult, ToolCallItem)
    out = [
        (DeltaMessage(reasoning_content='think '), False),
        (DeltaMessage(content='Hello'), False),
        (DeltaMessage(tool_calls=[DeltaToolCall(index=0, id='a', type='function',
                                                function=DeltaFunctionCall(name='f'))]), True),
        (DeltaMessage(tool_calls=[DeltaToolCall(index=0, function=DeltaFunctionCall(arguments='{"x": '))]), True),
        (DeltaMessage(tool_calls=[DeltaToolCall(index=0, function=DeltaFunctionCall(arguments='1}'))]), True),
        (DeltaMessage(tool_calls=[DeltaToolCall(index=1, id='b', type='function',
                                                function=DeltaFunctionCall(name='g', arguments='{}'))]), True),
        (DeltaMessage(content=' world', reasoning_content='more'), False),
    ]
    reasoning, content, calls = r.split(out)
    assert (reasoning, content) == ('think more', 'Hello world')
    assert [(c.tool_index, c.name, c.parameters) for c in calls] == [(0, 'f', '{"x": 1}'), (1, 'g', '{}')]
    assert r.split([]) == ('', '', [])
