"""vLLM 0.33's and SGLang 0.5.23's parser names resolve in lmparse.

``tests/data/engine_parser_names.json`` holds the names each engine registers
(read from vllm/tool_parsers/__init__.py, vllm/reasoning/__init__.py,
sglang/srt/function_call/function_call_parser.py and
sglang/srt/parser/reasoning_parser_names.py). Every name resolves, except
Harmony's (lmparse's response parser) and the two listed as unsupported.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmparse import LEGACY_REASONING_PARSER_NAMES, ReasoningParserManager, ToolParserManager

NAMES = json.loads((Path(__file__).parent / 'data' / 'engine_parser_names.json').read_text(encoding='utf-8'))

# Harmony (gpt-oss) is lmparse's response parser ``gpt-oss``, not a tool or reasoning parser.
HARMONY = {'openai', 'openai_gptoss', 'gpt-oss'}
# Every engine name is provided (MiniMax's append-think names are the inline_reasoning output option).
UNSUPPORTED: set[str] = set()


def _resolves(kind: str, name: str) -> bool:
    if kind.endswith('_tool'):
        return name in ToolParserManager.names()
    return name in ReasoningParserManager.names() or name in LEGACY_REASONING_PARSER_NAMES


def _configured(kind: str, name: str) -> type:
    """What ``lmparse parse --tool-parser NAME`` (or ``--reasoning-parser``) builds."""
    from lmparse.server import build_parser_class
    return build_parser_class('default', None if kind.endswith('_tool') else name,
                              name if kind.endswith('_tool') else None)


def test_lists_are_the_engines() -> None:
    assert {k: len(v) for k, v in NAMES.items()} == {
        'vllm_tool': 58, 'vllm_reasoning': 42, 'sglang_tool': 44, 'sglang_reasoning': 36}


@pytest.mark.parametrize('kind', sorted(NAMES))
def test_engine_names_resolve(kind: str) -> None:
    expected = set(NAMES[kind]) - HARMONY - UNSUPPORTED
    assert expected
    assert sorted(n for n in expected if not _resolves(kind, n)) == []


def test_unsupported_names_stay_unresolved() -> None:
    for kind in NAMES:
        assert not any(_resolves(kind, n) for n in UNSUPPORTED & set(NAMES[kind]))


def test_harmony_names_are_the_response_parser() -> None:
    """vLLM's openai / openai_gptoss and SGLang's gpt-oss build lmparse's gpt-oss response parser."""
    from lmparse import ResponseParserManager
    from lmparse.registry import RESPONSE_PARSER_NAMES
    gpt_oss = ResponseParserManager.get('gpt-oss')
    assert not any(_resolves(kind, n) for kind in NAMES for n in HARMONY & set(NAMES[kind]))
    seen = set()
    for kind in NAMES:
        for name in HARMONY & set(NAMES[kind]):
            assert RESPONSE_PARSER_NAMES[name] == 'gpt-oss'
            assert issubclass(_configured(kind, name), gpt_oss), (kind, name)
            seen.add(name)
    assert seen == HARMONY


def test_sglang_deepseek_r1_is_registered() -> None:
    from lmparse import BaseResponseParser
    assert ReasoningParserManager.get('deepseek-r1') is ReasoningParserManager.get('deepseek_r1')
    parser = BaseResponseParser.with_parsers('deepseek-r1', None)({'messages': []})
    assert parser.parse_complete('a</think>b') == ('b', None, 'a')
