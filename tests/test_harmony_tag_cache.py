"""gpt-oss: the Harmony structural tag is built once per distinct tool set, never shared between requests.

The tag is built only for a request that forces a call (``tool_choice="required"`` here).
"""
from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from lmparse import harmony_request
from lmparse.dialects.gpt_oss import GptOssResponseParser
from tests.streaming import make_request as _make_request
from tests.streaming import tool


def make_request(**fields: Any) -> dict[str, Any]:
    fields.setdefault('tool_choice', 'required')
    return _make_request(**fields)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A fake xgrammar whose tag records what it was built from."""
    calls: list[Any] = []

    class Tag:
        def __init__(self, payload: dict[str, Any]) -> None:
            self.payload = payload

        def model_dump(self, mode: str = 'python') -> dict[str, Any]:
            return self.payload

    def get_model_structural_tag(model: str, tools: Any, tool_choice: Any, reasoning: bool) -> Tag:
        calls.append((tools, tool_choice))
        return Tag({'type': 'structural_tag', 'tools': [t['function'] for t in tools], 'choice': tool_choice})

    fake = types.ModuleType('xgrammar')
    builtin = types.ModuleType('xgrammar.builtin_structural_tag')
    builtin.get_model_structural_tag = get_model_structural_tag  # type: ignore[attr-defined]
    fake.builtin_structural_tag = builtin  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, 'xgrammar', fake)
    monkeypatch.setitem(sys.modules, 'xgrammar.builtin_structural_tag', builtin)
    monkeypatch.setattr(harmony_request, '_xgrammar_builder', harmony_request._UNRESOLVED)
    return calls


def test_same_tools_build_once_and_each_request_owns_its_tag(builds: list[Any]) -> None:
    first = GptOssResponseParser(make_request()).request.response_format
    second = GptOssResponseParser(make_request()).request.response_format
    assert len(builds) == 1
    assert first == second and first is not second
    first['tools'][0]['name'] = 'changed'
    assert GptOssResponseParser(make_request()).request.response_format == second


def test_different_tools_or_choice_build_different_tags(builds: list[Any]) -> None:
    base = GptOssResponseParser(make_request()).request.response_format
    fewer = GptOssResponseParser(make_request(tool_names=['get_time'])).request.response_format
    named = GptOssResponseParser(make_request(
        tool_choice={'type': 'function', 'function': {'name': 'get_weather'}})).request.response_format
    assert len(builds) == 3
    assert base != fewer and base['choice'] != named['choice']
    # Same names, different schema: a different tag.
    other = tool('get_time')
    other['function']['parameters'] = {'type': 'object', 'properties': {'tz': {'type': 'string'}}}
    changed = GptOssResponseParser(make_request(tool_names=None, tools=[other])).request.response_format
    assert len(builds) == 4 and changed != fewer
    # Key order and number spelling are part of the key (they may shape the grammar).
    a = {'type': 'function', 'function': {'name': 'f', 'parameters': {'type': 'object', 'maximum': 1}}}
    b = {'type': 'function', 'function': {'parameters': {'maximum': 1, 'type': 'object'}, 'name': 'f'}}
    c = {'type': 'function', 'function': {'name': 'f', 'parameters': {'type': 'object', 'maximum': 1.0}}}
    for t in (a, b, c, a):
        GptOssResponseParser(make_request(tool_names=None, tools=[t]))
    assert len(builds) == 7


def test_real_xgrammar_tag_is_cached() -> None:
    pytest.importorskip('xgrammar')
    harmony_request._TAG_CACHE.clear()
    first = GptOssResponseParser(make_request()).request.response_format
    assert len(harmony_request._TAG_CACHE) == 1
    second = GptOssResponseParser(make_request()).request.response_format
    assert first == second and first is not second
    assert GptOssResponseParser(make_request(tool_names=['get_time'])).request.response_format != first
