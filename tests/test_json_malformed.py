"""Malformed outputs in the JSON-envelope family (README "Malformed outputs (JSON envelope)").

Every shape over every chunking (one chunk, every split inside every tag,
fixed and random sizes, and the same chunks flushed by an empty final step):
streamed == one chunk == ``parse_complete`` == the expected result, identity
first and contiguous indices.
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser
from tests.streaming import chunkings, complete, reconstruct, stream, stream_flagged

TOOLS = [{'type': 'function', 'function': {'name': n, 'parameters': {'type': 'object'}}}
         for n in ('get_weather', 'f')]
W = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'
WP = W.replace('"arguments"', '"parameters"')
F = '{"name": "f", "arguments": {}}'
FP = F.replace('"arguments"', '"parameters"')
OSLO = ('get_weather', '{"city": "Oslo"}')
EMPTY_F = ('f', '{}')
LONG = 'The weather tool was called; here is a long explanation of what it will return for you.'

# id -> (tool parser, text, expected (content, reasoning, calls)); reasoning parser None.
QWEN: dict[str, tuple[str, Any]] = {
    'close_missing_text_after': (f'<tool_call>{W}\nafter', ('after', None, [OSLO])),
    'close_missing_at_end': (f'<tool_call>{W}\n', (None, None, [OSLO])),
    'close_cut_at_end': (f'<tool_call>{W}</tool', (None, None, [OSLO])),
    'close_missing_next_open': (f'<tool_call>{W}\n<tool_call>{F}</tool_call>', (None, None, [OSLO, EMPTY_F])),
    'close_missing_next_open_after_text': (f'<tool_call>{W} ok <tool_call>{F}</tool_call>z',
                                           ('ok z', None, [OSLO, EMPTY_F])),
    'truncated_in_arguments': ('<tool_call>{"name": "get_weather", "arguments": {"city": "Os',
                               (None, None, [('get_weather', '{"city": "Os')])),
    'extra_braces': (f'<tool_call>{W}}}}}</tool_call>x', ('x', None, [OSLO])),
    'extra_braces_no_close': (f'<tool_call>{W}}}}}\nafter', ('after', None, [OSLO])),
    'array_envelope': (f'<tool_call>[{W}]</tool_call>z', ('z', None, [OSLO])),
    'markdown_fence': (f'<tool_call>\n```json\n{W}\n```\n</tool_call>z', ('z', None, [OSLO])),
    'short_junk_before_close': (f'<tool_call>{W} junk </tool_call>after', ('after', None, [OSLO])),
    'long_text_before_close': (f'<tool_call>{W}\n{LONG}</tool_call>', (f'{LONG}</tool_call>', None, [OSLO])),
    'two_envelopes_one_block': (f'<tool_call>{W}\n{F}</tool_call>z', ('z', None, [OSLO, EMPTY_F])),
    'not_json': ('<tool_call>not json</tool_call>after', ('after', None, [])),
    'string_arguments': ('<tool_call>{"name": "f", "arguments": "{\\"city\\": \\"Oslo\\"}"}</tool_call>',
                         (None, None, [('f', '"{\\"city\\": \\"Oslo\\"}"')])),
    'unknown_name_then_text': (f'<tool_call>{W.replace("get_weather", "nope")}\n<tool_call>{F}\nafter',
                               ('after', None, [EMPTY_F])),
    'unfinished_envelope_then_text': ('<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}\nafter',
                                      (None, None, [OSLO])),
}
LLAMA: dict[str, tuple[str, Any]] = {
    'text_after': (f'<|python_tag|>{WP}\nafter', ('\nafter', None, [OSLO])),
    'semicolon_calls': (f'<|python_tag|>{WP}; {FP}', (None, None, [OSLO, EMPTY_F])),
    'semicolon_calls_newline': (f'<|python_tag|>{WP};\n{FP};{FP}', (None, None, [OSLO, EMPTY_F, EMPTY_F])),
    'semicolon_then_text': (f'<|python_tag|>{WP}; after', ('; after', None, [OSLO])),
    'semicolon_at_end': (f'<|python_tag|>{WP};', (';', None, [OSLO])),
    'semicolon_long_whitespace': (f'<|python_tag|>{WP};{" " * 70}{FP}', (';' + ' ' * 70 + FP, None, [OSLO])),
    'truncated': ('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Os',
                  (None, None, [('get_weather', '{"city": "Os')])),
}
# Shapes about the end of the output (or a value that never ends): not followed by ``</think>done``.
AT_END = {'close_cut_at_end', 'truncated_in_arguments', 'unfinished_envelope_then_text', 'truncated',
          'semicolon_at_end'}
TAGS = ('<tool_call>', '</tool_call>', '<|action_start|>', '<|plugin|>', '<|action_end|>', '<|python_tag|>',
        '<think>', '</think>')


def _cases(at_end: bool = True) -> list[Any]:
    out = []
    for case, (text, want) in QWEN.items():
        if not at_end and case in AT_END:
            continue
        out.append(pytest.param('qwen3', text, want, id=f'qwen3-{case}'))
        inter = text.replace('<tool_call>', '<|action_start|><|plugin|>').replace('</tool_call>', '<|action_end|>')
        inter = inter.replace('</tool', '<|action_e')
        inter_want = (want[0].replace('</tool_call>', '<|action_end|>') if want[0] else None, *want[1:])
        out.append(pytest.param('internlm', inter.replace('"arguments"', '"parameters"'), inter_want,
                                id=f'internlm-{case}'))
    for case, (text, want) in LLAMA.items():
        if not at_end and case in AT_END:
            continue
        out.append(pytest.param('llama3', text, want, id=f'llama3-{case}'))
    return out


def _check(parser_cls: type, text: str, want: tuple[Any, Any, Any]) -> None:
    request = {'messages': [], 'tools': TOOLS}
    assert complete(parser_cls(request), text).key() == want
    for label, chunks in chunkings(text, TAGS, n_random=8):
        assert stream(parser_cls(request), chunks).key() == want, (label, chunks)
        parser = parser_cls(request)
        assert reconstruct(parser, stream_flagged(parser, chunks, flush=True)).key() == want, ('flush', label)


@pytest.mark.parametrize(('tool', 'text', 'want'), _cases())
def test_shape(tool: str, text: str, want: tuple[Any, Any, Any]) -> None:
    _check(BaseResponseParser.with_parsers(None, tool), text, want)


@pytest.mark.parametrize(('tool', 'text', 'want'), _cases(at_end=False))
def test_shape_inside_reasoning(tool: str, text: str, want: tuple[Any, Any, Any]) -> None:
    """Opened inside <think>: the text the block gives back is reasoning, and the answer follows."""
    content, _reasoning, calls = want
    _check(BaseResponseParser.with_parsers('default', tool), f'<think>r{text}</think>done',
           ('done', 'r' + (content or ''), calls))


def test_shape_with_calls_filtered() -> None:
    """Only ``f`` offered: the get_weather call is dropped, the next call is index 0, no text is lost."""
    parser_cls = BaseResponseParser.with_parsers(None, 'qwen3')
    request = {'messages': [], 'tools': TOOLS[1:]}
    text = f'<tool_call>{W}\nsee <tool_call>{F}\nafter'
    for label, chunks in chunkings(text, TAGS):
        assert stream(parser_cls(request), chunks).key() == ('see after', None, [EMPTY_F]), label


def test_tail_window_holds_a_bounded_suffix() -> None:
    """While undecided, the router keeps at most the tail window plus the close tag."""
    parser = BaseResponseParser.with_parsers(None, 'qwen3')({'messages': [], 'tools': TOOLS})
    parser.stream_chunk(f'<tool_call>{W}\n', [])
    for ch in LONG:
        parser.stream_chunk(ch, [])
        assert len(parser._pending) <= 64 + len('</tool_call>')
