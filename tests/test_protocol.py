"""Tests for lmparse.protocol: pydantic/OpenAI parity of the delta and call types."""
from __future__ import annotations

import copy
import json
import pickle
import re
from types import SimpleNamespace
from typing import Literal, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from lmparse.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    FunctionCall,
    ToolCall,
    random_call_id,
)

ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
ID_RE = re.compile(r"chatcmpl-[" + ALPHABET + r"]{22}")
TOOL_ID_RE = re.compile(r"chatcmpl-tool-[" + ALPHABET + r"]{22}")


# Reference pydantic models, declared exactly like the OpenAI/LMDeploy ones.
class PDeltaFunctionCall(BaseModel):
    name: Optional[str] = None
    arguments: Optional[str] = None


class PDeltaToolCall(BaseModel):
    id: Optional[str] = None
    type: Optional[Literal["function"]] = "function"
    index: int
    function: Optional[PDeltaFunctionCall] = None


class PDeltaMessage(BaseModel):
    role: Optional[str] = None
    content: Optional[str] = None
    reasoning_content: Optional[str] = None
    tool_calls: Optional[list[PDeltaToolCall]] = None


class PFunctionCall(BaseModel):
    name: str
    arguments: str


class PToolCall(BaseModel):
    id: str = Field(default_factory=lambda: random_call_id("chatcmpl-"))
    type: Literal["function"] = "function"
    function: PFunctionCall


def pydantic_json(model: BaseModel, exclude_none: bool = False) -> str:
    return model.model_dump_json(exclude_none=exclude_none)


# ------------------------------------------------------------------ construction


def test_defaults() -> None:
    assert DeltaFunctionCall().name is None
    assert DeltaFunctionCall().arguments is None
    t = DeltaToolCall(index=3)
    assert (t.id, t.type, t.index, t.function) == (None, "function", 3, None)
    m = DeltaMessage()
    assert (m.role, m.content, m.reasoning_content, m.tool_calls) == (None, None, None, None)
    tc = ToolCall(function=FunctionCall(name="f", arguments="{}"))
    assert tc.type == "function"
    assert ID_RE.fullmatch(tc.id)


def test_positional_and_keyword_construction_agree() -> None:
    assert DeltaFunctionCall("a", "b") == DeltaFunctionCall(name="a", arguments="b")
    assert DeltaToolCall(1, "x", None) == DeltaToolCall(index=1, id="x", type=None)
    assert DeltaMessage("assistant", "c", "r") == DeltaMessage(
        role="assistant", content="c", reasoning_content="r"
    )
    assert FunctionCall("f", "{}") == FunctionCall(name="f", arguments="{}")


def test_function_from_dict() -> None:
    t = DeltaToolCall(index=0, function={"arguments": "x"})
    assert type(t.function) is DeltaFunctionCall
    assert t.function.name is None
    assert t.function.arguments == "x"
    t = DeltaToolCall(index=0, function={"name": "get", "arguments": None})
    assert t.function == DeltaFunctionCall(name="get")
    assert DeltaToolCall(index=0, function={}).function == DeltaFunctionCall()


def test_function_instance_is_kept() -> None:
    fn = DeltaFunctionCall(name="n")
    # pydantic keeps model instances of the right type as-is (revalidate_instances='never').
    assert DeltaToolCall(index=0, function=fn).function is fn
    call = FunctionCall(name="f", arguments="{}")
    assert ToolCall(function=call).function is call


def test_function_from_other_objects() -> None:
    from_fc = DeltaToolCall(index=0, function=FunctionCall(name="f", arguments="{}")).function
    assert type(from_fc) is DeltaFunctionCall
    assert from_fc == DeltaFunctionCall(name="f", arguments="{}")

    from_pyd = DeltaToolCall(index=0, function=PDeltaFunctionCall(arguments='{"a"')).function
    assert type(from_pyd) is DeltaFunctionCall
    assert from_pyd == DeltaFunctionCall(arguments='{"a"')

    from_ns = DeltaToolCall(index=0, function=SimpleNamespace(name="x", arguments=None)).function
    assert from_ns == DeltaFunctionCall(name="x")

    tc = ToolCall(function=PFunctionCall(name="f", arguments="{}"))
    assert type(tc.function) is FunctionCall
    assert tc.function == FunctionCall(name="f", arguments="{}")
    assert ToolCall(function=DeltaFunctionCall(name="f", arguments="1")).function == FunctionCall(
        name="f", arguments="1"
    )
    assert ToolCall(function={"name": "f", "arguments": "{}"}).function == FunctionCall(
        name="f", arguments="{}"
    )


def test_tool_calls_conversion() -> None:
    existing = DeltaToolCall(index=0, id="call_0", function=DeltaFunctionCall(name="a"))
    source = [
        existing,
        {"index": 1, "id": "call_1", "type": "function", "function": {"name": "b", "arguments": ""}},
        {"index": 2, "function": {"arguments": "{}"}},
        PDeltaToolCall(index=3, type=None, function=PDeltaFunctionCall(arguments="]")),
    ]
    m = DeltaMessage(tool_calls=source)
    assert m.tool_calls is not source
    assert all(type(c) is DeltaToolCall for c in m.tool_calls)
    assert m.tool_calls[0] is existing
    assert m.tool_calls[1] == DeltaToolCall(
        index=1, id="call_1", function=DeltaFunctionCall(name="b", arguments="")
    )
    assert m.tool_calls[2] == DeltaToolCall(index=2, function=DeltaFunctionCall(arguments="{}"))
    assert m.tool_calls[3] == DeltaToolCall(index=3, type=None, function=DeltaFunctionCall(arguments="]"))
    assert DeltaMessage(tool_calls=(existing,)).tool_calls == [existing]
    assert DeltaMessage(tool_calls=[]).tool_calls == []


def test_index_accepts_int_like() -> None:
    class IntLike:
        def __index__(self) -> int:
            return 7

    assert DeltaToolCall(index=IntLike()).index == 7
    assert DeltaToolCall(index=True).index == 1  # pydantic also coerces bool


def test_fields_are_assignable() -> None:
    t = DeltaToolCall(index=0)
    t.id = "call"
    t.index = 5
    t.function = DeltaFunctionCall(arguments="a")
    assert t.model_dump() == {
        "id": "call",
        "type": "function",
        "index": 5,
        "function": {"name": None, "arguments": "a"},
    }
    with pytest.raises(TypeError):
        t.index = "5"  # type: ignore[assignment]
    m = DeltaMessage()
    m.content = "hi"
    m.tool_calls = [t]
    assert m.model_dump(exclude_none=True) == {
        "content": "hi",
        "tool_calls": [{"id": "call", "type": "function", "index": 5, "function": {"arguments": "a"}}],
    }


# ------------------------------------------------------------------ validation errors


@pytest.mark.parametrize(
    "factory, exc",
    [
        (lambda: DeltaToolCall(), TypeError),  # index required
        (lambda: DeltaToolCall(index="0"), TypeError),
        (lambda: DeltaToolCall(index=1.0), TypeError),
        (lambda: DeltaToolCall(index=None), TypeError),
        (lambda: DeltaToolCall(index=0, type="tool"), ValueError),
        (lambda: DeltaToolCall(index=0, id=1), TypeError),
        (lambda: DeltaToolCall(index=0, function="f"), TypeError),
        (lambda: DeltaToolCall(index=0, function={"name": 1}), TypeError),
        (lambda: DeltaToolCall(index=0, function={"nme": "x"}), ValueError),
        (lambda: DeltaToolCall(index=0, bogus=1), TypeError),
        (lambda: DeltaFunctionCall(name=b"x"), TypeError),
        (lambda: DeltaFunctionCall(arguments={"a": 1}), TypeError),
        (lambda: DeltaMessage(role=1), TypeError),
        (lambda: DeltaMessage(content=["x"]), TypeError),
        (lambda: DeltaMessage(reasoning_content=0), TypeError),
        (lambda: DeltaMessage(tool_calls="x"), TypeError),
        (lambda: DeltaMessage(tool_calls={"index": 0}), TypeError),
        (lambda: DeltaMessage(tool_calls=[1]), TypeError),
        (lambda: DeltaMessage(tool_calls=[{"function": {}}]), ValueError),
        (lambda: DeltaMessage(tool_calls=[{"index": 0, "extra": 1}]), ValueError),
        (lambda: DeltaMessage(tool_calls=[{"index": "0"}]), TypeError),
        (lambda: FunctionCall(name="f"), TypeError),
        (lambda: FunctionCall(name=None, arguments="{}"), TypeError),
        (lambda: FunctionCall(name="f", arguments=None), TypeError),
        (lambda: ToolCall(), TypeError),
        (lambda: ToolCall(function=None), TypeError),
        (lambda: ToolCall(function=1), TypeError),
        (lambda: ToolCall(function={"name": "f"}), ValueError),
        (lambda: ToolCall(function={"name": "f", "arguments": {}}), TypeError),
        (lambda: ToolCall(function=DeltaFunctionCall(name="f")), TypeError),
        (lambda: ToolCall(function={"name": "f", "arguments": ""}, type=None), ValueError),
        (lambda: ToolCall(function={"name": "f", "arguments": ""}, id=5), TypeError),
    ],
)
def test_invalid_input(factory, exc) -> None:
    with pytest.raises(exc):
        factory()


def test_error_messages_name_the_field() -> None:
    with pytest.raises(TypeError, match=r"DeltaMessage\.content must be str or None, got int"):
        DeltaMessage(content=1)
    with pytest.raises(TypeError, match=r"DeltaToolCall\.index must be int, got str"):
        DeltaToolCall(index="1")
    with pytest.raises(ValueError, match=r"DeltaToolCall\.type must be 'function' or None"):
        DeltaToolCall(index=0, type="x")
    with pytest.raises(ValueError, match=r"unexpected field 'nme'"):
        DeltaToolCall(index=0, function={"nme": "x"})


# ------------------------------------------------------------------ serialization


def test_model_dump_literals() -> None:
    m = DeltaMessage(
        role="assistant",
        content=None,
        reasoning_content="think",
        tool_calls=[
            DeltaToolCall(index=0, id="call_1", function=DeltaFunctionCall(name="get_weather")),
            DeltaToolCall(index=0, type=None, function=DeltaFunctionCall(arguments='{"city": "东京"}')),
        ],
    )
    assert m.model_dump() == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "think",
        "tool_calls": [
            {"id": "call_1", "type": "function", "index": 0, "function": {"name": "get_weather", "arguments": None}},
            {"id": None, "type": None, "index": 0, "function": {"name": None, "arguments": '{"city": "东京"}'}},
        ],
    }
    assert m.model_dump(exclude_none=True) == {
        "role": "assistant",
        "reasoning_content": "think",
        "tool_calls": [
            {"id": "call_1", "type": "function", "index": 0, "function": {"name": "get_weather"}},
            {"index": 0, "function": {"arguments": '{"city": "东京"}'}},
        ],
    }
    assert m.model_dump(mode="json") == m.model_dump()
    assert m.model_dump_json(exclude_none=True) == (
        '{"role":"assistant","reasoning_content":"think","tool_calls":['
        '{"id":"call_1","type":"function","index":0,"function":{"name":"get_weather"}},'
        '{"index":0,"function":{"arguments":"{\\"city\\": \\"东京\\"}"}}]}'
    )
    assert DeltaMessage().model_dump_json() == (
        '{"role":null,"content":null,"reasoning_content":null,"tool_calls":null}'
    )
    assert DeltaMessage().model_dump(exclude_none=True) == {}
    tc = ToolCall(id="call_9", function={"name": "f", "arguments": "{}"})
    assert tc.model_dump() == {"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert tc.model_dump_json() == '{"id":"call_9","type":"function","function":{"name":"f","arguments":"{}"}}'
    assert FunctionCall(name="f", arguments="").model_dump(exclude_none=True) == {"name": "f", "arguments": ""}


def test_model_dump_key_order_matches_pydantic() -> None:
    ours = DeltaMessage(role="assistant", tool_calls=[DeltaToolCall(index=0, function={"name": "f"})])
    ref = PDeltaMessage(role="assistant", tool_calls=[PDeltaToolCall(index=0, function={"name": "f"})])
    assert list(ours.model_dump()) == list(ref.model_dump())
    assert list(ours.model_dump()["tool_calls"][0]) == list(ref.model_dump()["tool_calls"][0])
    assert ours.model_dump_json() == ref.model_dump_json()
    assert list(ToolCall(function={"name": "f", "arguments": ""}).model_dump()) == ["id", "type", "function"]
    for ours_cls, ref_cls in [
        (DeltaFunctionCall, PDeltaFunctionCall),
        (DeltaToolCall, PDeltaToolCall),
        (DeltaMessage, PDeltaMessage),
        (FunctionCall, PFunctionCall),
        (ToolCall, PToolCall),
    ]:
        assert tuple(ours_cls.model_fields) == tuple(ref_cls.model_fields)


def test_model_dump_json_indent_matches_pydantic() -> None:
    ours = DeltaToolCall(index=1, function={"arguments": "x"})
    ref = PDeltaToolCall(index=1, function={"arguments": "x"})
    assert ours.model_dump_json(indent=2) == ref.model_dump_json(indent=2)


# Hypothesis-driven parity with pydantic for arbitrary field values.
opt_text = st.none() | st.text(max_size=12)
function_kwargs = st.fixed_dictionaries({}, optional={"name": opt_text, "arguments": opt_text})
tool_call_kwargs = st.fixed_dictionaries(
    {"index": st.integers(min_value=0, max_value=2**40)},
    optional={
        "id": opt_text,
        "type": st.sampled_from(["function", None]),
        "function": st.none() | function_kwargs,
    },
)
message_kwargs = st.fixed_dictionaries(
    {},
    optional={
        "role": st.none() | st.sampled_from(["assistant", "user"]),
        "content": opt_text,
        "reasoning_content": opt_text,
        "tool_calls": st.none() | st.lists(tool_call_kwargs, max_size=3),
    },
)


@settings(max_examples=300, deadline=None)
@given(message_kwargs)
def test_delta_message_matches_pydantic(kwargs) -> None:
    ours = DeltaMessage(**kwargs)
    ref = PDeltaMessage(**kwargs)
    for exclude_none in (False, True):
        assert ours.model_dump(exclude_none=exclude_none) == ref.model_dump(exclude_none=exclude_none)
        assert ours.model_dump_json(exclude_none=exclude_none) == pydantic_json(ref, exclude_none)
    assert repr(ours) == repr(ref).replace("PDelta", "Delta")
    assert json.loads(ours.model_dump_json()) == ours.model_dump()


@settings(max_examples=200, deadline=None)
@given(tool_call_kwargs)
def test_delta_tool_call_matches_pydantic(kwargs) -> None:
    ours = DeltaToolCall(**kwargs)
    ref = PDeltaToolCall(**kwargs)
    for exclude_none in (False, True):
        assert ours.model_dump(exclude_none=exclude_none) == ref.model_dump(exclude_none=exclude_none)
        assert ours.model_dump_json(exclude_none=exclude_none) == pydantic_json(ref, exclude_none)
    assert repr(ours) == repr(ref).replace("PDelta", "Delta")
    # Converting a pydantic instance gives the same object as converting the kwargs.
    assert DeltaMessage(tool_calls=[ref]).tool_calls == [ours]


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=10), st.text(max_size=30), st.text(min_size=1, max_size=10))
def test_tool_call_matches_pydantic(name, arguments, call_id) -> None:
    ours = ToolCall(id=call_id, function={"name": name, "arguments": arguments})
    ref = PToolCall(id=call_id, function={"name": name, "arguments": arguments})
    for exclude_none in (False, True):
        assert ours.model_dump(exclude_none=exclude_none) == ref.model_dump(exclude_none=exclude_none)
        assert ours.model_dump_json(exclude_none=exclude_none) == pydantic_json(ref, exclude_none)
    assert repr(ours) == repr(ref).replace("PToolCall", "ToolCall").replace("PFunctionCall", "FunctionCall")


def test_repr_literals() -> None:
    assert repr(DeltaMessage(role="assistant", content="x")) == (
        "DeltaMessage(role='assistant', content='x', reasoning_content=None, tool_calls=None)"
    )
    assert repr(DeltaToolCall(index=2, function={"name": "f"})) == (
        "DeltaToolCall(id=None, type='function', index=2, "
        "function=DeltaFunctionCall(name='f', arguments=None))"
    )
    assert repr(ToolCall(id="i", function={"name": "f", "arguments": "{}"})) == (
        "ToolCall(id='i', type='function', function=FunctionCall(name='f', arguments='{}'))"
    )


# ------------------------------------------------------------------ equality, copy, pickle


def sample_objects() -> list[object]:
    return [
        DeltaFunctionCall(name="f", arguments="{}"),
        DeltaToolCall(index=1, id="c", function={"name": "f", "arguments": "{"}),
        DeltaMessage(
            role="assistant",
            content="hello",
            reasoning_content="hm",
            tool_calls=[DeltaToolCall(index=0, type=None, function={"arguments": "1"})],
        ),
        FunctionCall(name="f", arguments="{}"),
        ToolCall(function={"name": "f", "arguments": "{}"}),
    ]


def test_equality() -> None:
    assert DeltaMessage(content="a") == DeltaMessage(content="a")
    assert DeltaMessage(content="a") != DeltaMessage(content="b")
    assert DeltaMessage(content="a") != DeltaMessage(content="a", role="assistant")
    assert DeltaToolCall(index=0) != DeltaToolCall(index=1)
    assert DeltaToolCall(index=0, function={"name": "f"}) == DeltaToolCall(index=0, function={"name": "f"})
    assert DeltaToolCall(index=0, function={"name": "f"}) != DeltaToolCall(index=0, function={"name": "g"})
    assert DeltaToolCall(index=0) != DeltaToolCall(index=0, type=None)
    assert DeltaMessage(tool_calls=[{"index": 0}]) == DeltaMessage(tool_calls=[DeltaToolCall(index=0)])
    # Same-shaped but different classes never compare equal.
    assert DeltaFunctionCall(name="f", arguments="a") != FunctionCall(name="f", arguments="a")
    assert ToolCall(id="x", function={"name": "f", "arguments": ""}) == ToolCall(
        id="x", function={"name": "f", "arguments": ""}
    )
    assert ToolCall(function={"name": "f", "arguments": ""}) != ToolCall(function={"name": "f", "arguments": ""})


def test_eq_with_foreign_objects_returns_not_implemented() -> None:
    m = DeltaMessage(content="a")
    assert m.__eq__({"content": "a"}) is NotImplemented
    assert m != {"content": "a"}
    assert m != PDeltaMessage(content="a")
    assert (m == None) is False  # noqa: E711

    class Sub(DeltaMessage):
        pass

    assert Sub(content="a") != m
    assert Sub(content="a") == Sub(content="a")


@pytest.mark.parametrize("obj", sample_objects(), ids=lambda o: type(o).__name__)
def test_unhashable(obj) -> None:
    with pytest.raises(TypeError):
        hash(obj)
    assert type(obj).__hash__ is None


@pytest.mark.parametrize("obj", sample_objects(), ids=lambda o: type(o).__name__)
def test_pickle_round_trip(obj) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        clone = pickle.loads(pickle.dumps(obj, protocol))
        assert type(clone) is type(obj)
        assert clone == obj
        assert clone.model_dump() == obj.model_dump()


@pytest.mark.parametrize("obj", sample_objects(), ids=lambda o: type(o).__name__)
def test_copy_module(obj) -> None:
    assert copy.copy(obj) == obj
    assert copy.deepcopy(obj) == obj
    assert copy.copy(obj) is not obj


def test_model_copy_shallow_and_deep() -> None:
    m = DeltaMessage(role="assistant", tool_calls=[DeltaToolCall(index=0, function={"arguments": "a"})])
    shallow = m.model_copy()
    assert shallow == m and shallow is not m
    assert shallow.tool_calls is m.tool_calls
    deep = m.model_copy(deep=True)
    assert deep == m
    assert deep.tool_calls is not m.tool_calls
    assert deep.tool_calls[0] is not m.tool_calls[0]
    assert deep.tool_calls[0].function is not m.tool_calls[0].function
    deep.tool_calls[0].function.arguments = "b"
    assert m.tool_calls[0].function.arguments == "a"

    t = DeltaToolCall(index=0, function={"name": "f"})
    assert t.model_copy().function is t.function
    assert t.model_copy(deep=True).function is not t.function
    tc = ToolCall(function={"name": "f", "arguments": ""})
    assert tc.model_copy(deep=True) == tc


def test_model_copy_update() -> None:
    m = DeltaMessage(role="assistant", content="a")
    updated = m.model_copy(update={"content": "b", "reasoning_content": "r"})
    assert updated == DeltaMessage(role="assistant", content="b", reasoning_content="r")
    assert m.content == "a"
    assert DeltaToolCall(index=0).model_copy(update={"index": 4}).index == 4
    assert DeltaFunctionCall(name="f").model_copy(update={"arguments": "x"}) == DeltaFunctionCall(
        name="f", arguments="x"
    )
    assert FunctionCall(name="f", arguments="").model_copy(update={"name": "g"}).name == "g"
    assert ToolCall(id="a", function={"name": "f", "arguments": ""}).model_copy(update={"id": "b"}).id == "b"
    with pytest.raises(ValueError):
        m.model_copy(update={"nope": 1})


def test_match_args() -> None:
    match DeltaToolCall(index=2, id="c", function={"name": "f"}):
        case DeltaToolCall(call_id, call_type, idx, DeltaFunctionCall(name)):
            assert (call_id, call_type, idx, name) == ("c", "function", 2, "f")
        case _:
            pytest.fail("pattern did not match")


# ------------------------------------------------------------------ ids


def test_random_call_id_format() -> None:
    ids = {random_call_id("chatcmpl-tool-") for _ in range(2000)}
    assert len(ids) == 2000
    assert all(TOOL_ID_RE.fullmatch(i) for i in ids)
    assert re.fullmatch("[" + ALPHABET + "]{22}", random_call_id(""))
    assert re.fullmatch("[" + ALPHABET + "]{22}", random_call_id())


def test_random_call_id_uses_whole_alphabet() -> None:
    chars = "".join(random_call_id("") for _ in range(2000))
    assert set(chars) == set(ALPHABET)
    # 44k draws over 57 symbols: every symbol should be near 772 occurrences.
    counts = [chars.count(c) for c in ALPHABET]
    assert min(counts) > 550 and max(counts) < 1000


def test_tool_call_default_ids_are_unique() -> None:
    fn = {"name": "f", "arguments": "{}"}
    ids = [ToolCall(function=fn).id for _ in range(500)]
    assert len(set(ids)) == 500
    assert all(ID_RE.fullmatch(i) for i in ids)
    assert ToolCall(function=fn, id="call_custom").id == "call_custom"
    assert ID_RE.fullmatch(ToolCall(function=fn, id=None).id)
