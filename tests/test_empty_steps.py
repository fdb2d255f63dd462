"""Text-less engine steps never change the result (issue: separator newline leaked).

An empty chunk right after a tool block used to settle the separator decision on
an empty buffer, so the newline before the next block leaked into content (or
reasoning). Every registered tool dialect, in every reasoning configuration.
"""
from __future__ import annotations

import pytest

from lmparse import BaseResponseParser, ToolParserManager
from tests.streaming import make_request, reconstruct, stream_flagged

# 'hf' / 'response_template' have no markers until a tokenizer's template gives them (tests/test_response_template.py).
BLOCK_DIALECTS = [n for n in ToolParserManager.names() if not getattr(ToolParserManager.get(n), 'from_tokenizer', False)
                  and ToolParserManager.get(n).get_tool_close_tag()]
REASONING = [None, 'default', 'deepseek-v3']
THINKING = [None, False]


def _request(thinking: bool | None) -> dict:
    request = make_request()
    if thinking is not None:
        request['chat_template_kwargs'] = {'enable_thinking': thinking}
    return request


def _result(cls, request, chunks, flush):
    parser = cls(request)
    return reconstruct(parser, stream_flagged(parser, chunks, flush=flush)).key()


@pytest.mark.parametrize('thinking', THINKING)
@pytest.mark.parametrize('reasoning', REASONING)
@pytest.mark.parametrize('dialect', BLOCK_DIALECTS)
def test_empty_chunk_after_tool_block(dialect: str, reasoning: str | None, thinking: bool | None) -> None:
    tool_cls = ToolParserManager.get(dialect)
    block = tool_cls.get_tool_open_tag() + tool_cls.get_tool_close_tag()
    cls = BaseResponseParser.with_parsers(reasoning, dialect)
    request = _request(thinking)
    for prefix in ('', '<think>x'):
        text = prefix + block + '\n' + block + 'tail'
        one = _result(cls, request, [text], flush=False)
        a, b = len(prefix) + len(block), len(prefix) + len(block) + 1
        for chunks in ([text[:a], '', text[a:]],
                       [text[:a], '', '', text[a:b], '', text[b:]],
                       [text[:a], text[a:b], '', text[b:]]):
            for flush in (False, True):
                assert _result(cls, request, chunks, flush) == one, (chunks, flush)


def test_issue_repro_qwen3() -> None:
    parser = BaseResponseParser.with_parsers(None, 'qwen3')(make_request())
    out = []
    for chunk in ['<tool_call></tool_call>', '', '\n<tool_call>']:
        out.extend(parser.stream_chunk(chunk, []))
    out.extend(parser.stream_chunk('', [], final=True))
    assert [m for m, _ in out if m.content] == []


@pytest.mark.parametrize('dialect', ['deepseek-v32', 'deepseek-v4'])
@pytest.mark.parametrize('sep', ['', '\n', '\n\n', '\n\n\n'])
def test_separator_before_an_open_tag_that_starts_with_newlines(dialect: str, sep: str) -> None:
    """DSML's open tag begins with its own "\\n\\n": only newlines before those are the separator."""
    tool_cls = ToolParserManager.get(dialect)
    block = (tool_cls.get_tool_open_tag() + '\n<｜DSML｜invoke name="get_weather">\n</｜DSML｜invoke>\n'
             + tool_cls.get_tool_close_tag())
    cls = BaseResponseParser.with_parsers(None, dialect)
    text = 'hi' + block + sep + block + 'tail'
    mid = len('hi') + len(block)
    splits = [[text[:i], '', text[i:]] for i in range(mid - 2, mid + len(sep) + 4)]
    for chunks in [[text], list(text), *splits]:
        parser = cls(make_request())
        got = reconstruct(parser, stream_flagged(parser, chunks, flush=True))
        assert got.content == 'hitail'
        assert [name for name, _ in got.calls] == ['get_weather', 'get_weather']


# ---- an empty step is no delta (issue #27 item 4) --------------------------------------

from tests import dialect_corpus  # noqa: E402

EVERY_CONFIG = dialect_corpus.configs(full=False)


@pytest.mark.parametrize('cfg', EVERY_CONFIG, ids=[c.id for c in EVERY_CONFIG])
def test_empty_first_step_is_no_delta(cfg: dialect_corpus.Config) -> None:
    """No configuration answers an empty engine step with an empty content delta."""
    parser = dialect_corpus.new_parser(cfg)
    for ids in ([], None, ()):
        assert parser.stream_chunk('', ids) == []
    assert parser.stream_chunk('', [], final=True) == []


def _tool_only(dialect: str) -> str:
    tool_cls = ToolParserManager.get(dialect)
    return tool_cls.get_tool_open_tag() + '{"name": "get_weather", "arguments": {"city": "Paris"}}' + (
        tool_cls.get_tool_close_tag() or '')


TOOL_ONLY = {
    'qwen3': '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    'qwen3_coder': ('<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n'
                    '</tool_call>'),
    'mistral': '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    'llama3': '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
}


@pytest.mark.parametrize('dialect', sorted(TOOL_ONLY))
def test_tool_only_response_after_an_empty_step_has_no_content(dialect: str) -> None:
    """Streamed and aggregated, a response of tool calls alone keeps content None when steps carry no text."""
    from lmparse.response import aggregate_deltas

    text = TOOL_ONLY[dialect]
    cls = BaseResponseParser.with_parsers(None, dialect)
    parser = cls(make_request())
    out = parser.stream_chunk('', [])
    for i in range(0, len(text), 5):
        out += parser.stream_chunk('', [])
        out += parser.stream_chunk(text[i:i + 5], [1])
    out += parser.stream_chunk('', [], final=True)
    content, reasoning, calls = aggregate_deltas(out)
    assert all(message.content is None for message, _ in out)
    assert (content, reasoning) == ('', '') and [c.function.name for c in parser.tool_parser.build_tool_calls(calls)] == [
        'get_weather']
    assert cls(make_request()).parse_complete(text)[0] is None
