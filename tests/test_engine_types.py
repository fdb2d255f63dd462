"""Engine result objects built in compiled code equal the ones the engines' public constructors build.

``lmparse.integrations.vllm_types.DeltaBuilder`` is checked here against pydantic
models declared like vLLM 0.33's ``DeltaMessage`` / ``DeltaToolCall`` /
``DeltaFunctionCall`` (the vLLM lane checks vLLM's own classes:
tests/integrations/test_vllm_replace.py): for random chunks of lmparse deltas, the
directly built message and the one the public constructor builds from the same
fields hold the same state and serialise alike; a model declared otherwise falls
back to the constructor.
"""
from __future__ import annotations

import random
from typing import Any, ClassVar, Literal

import pytest

pydantic = pytest.importorskip('pydantic')

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator  # noqa: E402

from lmparse.integrations.vllm_types import DeltaBuilder  # noqa: E402
from lmparse.protocol import DeltaFunctionCall as LpFunction  # noqa: E402
from lmparse.protocol import DeltaMessage as LpMessage  # noqa: E402
from lmparse.protocol import DeltaToolCall as LpToolCall  # noqa: E402
from lmparse.pydantic_state import same_instance  # noqa: E402


class AllowExtra(BaseModel):
    model_config = ConfigDict(extra='allow')
    seen: ClassVar[int] = 0

    @model_validator(mode='wrap')
    @classmethod
    def _count(cls, data: Any, handler: Any) -> Any:
        AllowExtra.seen += 1  # a Python-level validator, as vLLM's OpenAIBaseModel has
        return handler(data)


class FunctionDelta(BaseModel):
    name: str | None = None
    arguments: str | None = None


class ToolDelta(AllowExtra):
    id: str | None = None
    type: Literal['function'] | None = None
    index: int
    function: FunctionDelta | None = None


class MessageDelta(AllowExtra):
    role: str | None = None
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolDelta] = Field(default_factory=list)

    @model_serializer(mode='wrap')
    def _serialize(self, handler: Any) -> Any:
        data = handler(self)
        if not data.get('tool_calls'):
            data.pop('tool_calls', None)
        return data


class OtherMessage(AllowExtra):
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolDelta] = Field(default_factory=list)
    role: str | None = None


def _random_chunk(rng: random.Random) -> list[tuple[LpMessage, bool]]:
    out = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(('content', 'reasoning', 'call', 'args', 'both'))
        if kind == 'content':
            out.append((LpMessage(content=rng.choice(('', 'a', 'ünï "x"'))), True))
        elif kind == 'reasoning':
            out.append((LpMessage(reasoning_content=rng.choice(('', 'r', 'think\n'))), True))
        elif kind == 'both':
            out.append((LpMessage(content='c', reasoning_content='r'), True))
        else:
            index = rng.randint(0, 2)
            if kind == 'call':
                tc = LpToolCall(index=index, id=f'call_{index}', type='function',
                                function=LpFunction(name=f'f{index}', arguments=rng.choice((None, '', '{"a"'))))
            else:
                tc = LpToolCall(index=index, id=None, type=rng.choice(('function', None)),
                                function=rng.choice((LpFunction(arguments=rng.choice((': 1', '}'))), None)))
            out.append((LpMessage(tool_calls=[tc]), True))
    return out


def _public(builder: DeltaBuilder, chunk: list[tuple[LpMessage, bool]]) -> Any:
    """What the public constructor builds from the fields the direct path sets."""
    direct = builder.build(chunk)
    if direct is None:
        return None
    kwargs: dict[str, Any] = {}
    for key in direct.model_fields_set:
        value = getattr(direct, key)
        kwargs[key] = ([tc.model_dump(exclude_unset=True) for tc in value] if key == 'tool_calls' else value)
    return type(direct)(**kwargs)


def test_direct_instances_equal_the_constructors() -> None:
    builder = DeltaBuilder(MessageDelta, ToolDelta, FunctionDelta)
    assert builder.fast
    rng = random.Random(7)
    built = 0
    for _ in range(500):
        chunk = _random_chunk(rng)
        seen = AllowExtra.seen
        direct = builder.build(chunk)
        assert AllowExtra.seen == seen  # no Python-level validation ran
        if direct is None:
            continue
        built += 1
        assert same_instance(direct, _public(builder, chunk))
        assert direct.model_dump_json(exclude_unset=True) == _public(builder, chunk).model_dump_json(exclude_unset=True)
    assert built > 300


def test_fragments_of_one_call_are_joined() -> None:
    builder = DeltaBuilder(MessageDelta, ToolDelta, FunctionDelta)
    chunk = [(LpMessage(tool_calls=[LpToolCall(index=0, id='call_0', function=LpFunction(name='f', arguments='{"a'))]),
              True),
             (LpMessage(tool_calls=[LpToolCall(index=0, id=None, type=None, function=LpFunction(arguments='": 1}'))]),
              True),
             (LpMessage(content='tail'), True)]
    msg = builder.build(chunk)
    assert msg.model_dump(exclude_unset=True) == {
        'content': 'tail',
        'tool_calls': [{'id': 'call_0', 'type': 'function', 'index': 0,
                        'function': {'name': 'f', 'arguments': '{"a": 1}'}}]}
    assert builder.build([]) is None
    assert builder.build([(LpMessage(content=''), True)]) is None


def test_other_declarations_fall_back_to_the_constructor() -> None:
    builder = DeltaBuilder(OtherMessage, ToolDelta, FunctionDelta)
    assert not builder.fast
    seen = AllowExtra.seen
    msg = builder.build([(LpMessage(content='x', reasoning_content='r'), True)])
    assert AllowExtra.seen > seen  # built by the public constructor
    assert type(msg) is OtherMessage and msg.model_fields_set == {'content', 'reasoning'}
    assert msg.content == 'x' and msg.reasoning == 'r'
