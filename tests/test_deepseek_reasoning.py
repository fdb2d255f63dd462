"""DeepSeek reasoning modes: which switches start the response inside ``<think>``."""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import (
    DeepSeekV3ReasoningParser,
    DeepSeekV4ReasoningParser,
    DeepSeekV32ReasoningParser,
    ReasoningParserManager,
    validate_parser_names,
)
from tests.streaming import chunkings, complete, reconstruct, stream_flagged

NAMES = {
    'deepseek-v3': DeepSeekV3ReasoningParser,
    'deepseek-v32': DeepSeekV32ReasoningParser,
    'deepseek-v3.2': DeepSeekV32ReasoningParser,
    'deepseek-v4': DeepSeekV4ReasoningParser,
}

# kwargs -> starts in reasoning for (v3, v3.2 / v4)
SWITCHES: list[tuple[dict[str, Any], bool, bool]] = [
    ({}, False, False),
    ({'enable_thinking': True}, True, True),
    ({'enable_thinking': False}, False, False),
    ({'enable_thinking': None}, False, False),
    ({'thinking': True}, False, True),
    ({'thinking': False}, False, False),
    ({'thinking': True, 'enable_thinking': False}, False, True),
    ({'enable_thinking': 1}, False, False),  # only the literal True counts
    ({'thinking': 'yes'}, False, False),
    ({'reasoning_effort': 'high'}, False, False),
]


@pytest.mark.parametrize('name,cls', list(NAMES.items()))
def test_registered(name: str, cls: type) -> None:
    assert ReasoningParserManager.get(name) is cls
    assert validate_parser_names(name, None) == (name, None)
    assert (cls.get_reasoning_open_tag(), cls.get_reasoning_close_tag()) == ('<think>', '</think>')


@pytest.mark.parametrize('kwargs,v3,v32', SWITCHES)
def test_starts_in_reasoning_mode(kwargs: dict[str, Any], v3: bool, v32: bool) -> None:
    assert DeepSeekV3ReasoningParser(**kwargs).starts_in_reasoning_mode() is v3
    assert DeepSeekV32ReasoningParser(**kwargs).starts_in_reasoning_mode() is v32
    assert DeepSeekV4ReasoningParser(**kwargs).starts_in_reasoning_mode() is v32


TEXT = 'Let me think.</think>The answer.'


# (reasoning parser, chat_template_kwargs or top-level fields, expected (content, reasoning))
ROUTED = [
    ('deepseek-v3', {}, (TEXT, None)),  # </think> alone does not open anything: plain text
    ('deepseek-v3', {'chat_template_kwargs': {'enable_thinking': True}}, ('The answer.', 'Let me think.')),
    ('deepseek-v3', {'enable_thinking': True}, ('The answer.', 'Let me think.')),  # deprecated top-level field
    ('deepseek-v3', {'chat_template_kwargs': {'thinking': True}}, (TEXT, None)),  # V3 reads enable_thinking only
    ('deepseek-v32', {}, (TEXT, None)),
    ('deepseek-v32', {'chat_template_kwargs': {'thinking': True}}, ('The answer.', 'Let me think.')),
    ('deepseek-v3.2', {'chat_template_kwargs': {'thinking': True}}, ('The answer.', 'Let me think.')),
    ('deepseek-v4', {'chat_template_kwargs': {'enable_thinking': True}}, ('The answer.', 'Let me think.')),
    ('deepseek-v4', {'chat_template_kwargs': {'thinking': False}}, (TEXT, None)),
]


@pytest.mark.parametrize('reasoning,fields,expected', ROUTED)
def test_routed_through_response_parser(reasoning: str, fields: dict[str, Any], expected: tuple[Any, Any],
                                        make_parser: Any) -> None:
    make = lambda: make_parser(reasoning, None, request_tools=None, **fields)  # noqa: E731
    assert complete(make(), TEXT).key() == (*expected, [])
    for label, chunks in chunkings(TEXT, ('</think>',)):
        parser = make()
        assert reconstruct(parser, stream_flagged(parser, chunks)).key() == (*expected, []), label


@pytest.mark.parametrize('reasoning', ['deepseek-v3', 'deepseek-v32', 'deepseek-v4'])
def test_explicit_think_opens_reasoning_when_starting_plain(reasoning: str, make_parser: Any) -> None:
    text = '<think>Hmm.</think>Hi.'
    for label, chunks in chunkings(text, ('<think>', '</think>')):
        parser = make_parser(reasoning, None, request_tools=None)
        assert reconstruct(parser, stream_flagged(parser, chunks)).key() == ('Hi.', 'Hmm.', []), label


@pytest.mark.parametrize('reasoning', ['deepseek-v3', 'deepseek-v32', 'deepseek-v4'])
def test_thinking_disabled_routes_everything_to_content(reasoning: str, make_parser: Any) -> None:
    parser = make_parser(reasoning, None, request_tools=None, chat_template_kwargs={'enable_thinking': False})
    assert complete(parser, '<think>Hmm.</think>Hi.').key() == ('Hmm.Hi.', None, [])


@pytest.mark.parametrize('reasoning,tool', [('deepseek-v32', 'deepseek-v32'), ('deepseek-v4', 'deepseek-v4')])
def test_dsml_call_inside_reasoning(reasoning: str, tool: str, make_parser: Any) -> None:
    from lmparse.tools.dsml import DSML_TOKEN as D

    block = {'deepseek-v32': 'function_calls', 'deepseek-v4': 'tool_calls'}[tool]
    text = (f'Check.\n\n<{D}{block}>\n<{D}invoke name="get_time">\n</{D}invoke>\n</{D}{block}>'
            '\nDone.</think>It is noon.')
    expected = ('It is noon.', 'Check.\nDone.', [('get_time', '{}')])
    for label, chunks in chunkings(text, ('</think>', f'<{D}{block}>', f'</{D}{block}>')):
        parser = make_parser(reasoning, tool, chat_template_kwargs={'thinking': True})
        assert reconstruct(parser, stream_flagged(parser, chunks)).key() == expected, label


def test_reasoning_tokens_counted_with_deepseek_ids(make_parser: Any) -> None:
    from tests.streaming import FakeTokenizer

    tok = FakeTokenizer({'<think>': 128821, '</think>': 128822})
    parser = make_parser('deepseek-v4', None, request_tools=None, tokenizer=tok,
                         chat_template_kwargs={'thinking': True})
    parser.stream_chunk('a b', [5, 6])
    parser.stream_chunk('</think>x', [128822, 7], final=True)
    assert parser.reasoning_tokens == 2
