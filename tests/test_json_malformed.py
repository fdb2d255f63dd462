"""Malformed outputs in the JSON-envelope family (docs/behaviour/malformed.md "JSON envelope").

Every shape over every chunking (one chunk, every split inside every tag,
fixed and random sizes, random sizes with empty chunks, the same chunks flushed
by an empty final step, and the real Qwen tokenizer's token stream): streamed ==
one chunk == ``parse_complete`` == the expected result, identity first and
contiguous indices.
"""
from __future__ import annotations

from typing import Any

import pytest

from lmparse import BaseResponseParser, ToolParserManager
from lmparse.tools.json_parser import JsonToolParser
import random

from tests.streaming import (
    check_messages,
    chunkings,
    complete,
    random_chunks,
    reconstruct,
    stream,
    stream_flagged,
    token_chunks,
    with_empty_chunks,
)

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
    'not_json': ('<tool_call>not json</tool_call>after', ('not jsonafter', None, [])),
    'not_json_object': ('<tool_call>\n{not json}\n</tool_call>z', ('{not json}\nz', None, [])),
    'single_quoted_envelope': ("<tool_call>{'name': 'f', 'arguments': {}}</tool_call>z",
                               ("{'name': 'f', 'arguments': {}}z", None, [])),
    'long_text_before_envelope': (f'<tool_call>{LONG}{W}</tool_call>z', (f'{LONG}{W}z', None, [])),
    'short_text_before_envelope': (f'<tool_call>json {W}</tool_call>z', ('z', None, [OSLO])),
    'empty_block': ('<tool_call>\n</tool_call>z', ('z', None, [])),
    # a syntax error after the name: the call keeps its name, nothing more is read; the rest is text
    'missing_comma': ('<tool_call>{"name": "get_weather" "arguments": {"city": "Oslo"}}</tool_call>z',
                      ('"arguments": {"city": "Oslo"}}z', None, [('get_weather', '')])),
    'missing_comma_newline': ('x<tool_call>\n{"name": "get_weather"\n  "arguments": {"city": "Oslo"}}\n</tool_call>',
                              ('x"arguments": {"city": "Oslo"}}\n', None, [('get_weather', '')])),
    'missing_colon': ('x<tool_call>{"name": "get_weather", "arguments" {"city": "Oslo"}}</tool_call>y',
                      ('x{"city": "Oslo"}}y', None, [('get_weather', '')])),
    'missing_key_open_quote': ('<tool_call>{"name": "get_weather", arguments": {"city": "Oslo"}}</tool_call>z',
                               ('arguments": {"city": "Oslo"}}z', None, [('get_weather', '')])),
    'missing_key_close_quote': ('<tool_call>{"name": "get_weather", "arguments: {"city": "Oslo"}}</tool_call>z',
                                ('city": "Oslo"}}z', None, [('get_weather', '')])),
    'missing_name_close_quote': ('<tool_call>{"name": "get_weather, "arguments": {"city": "Oslo"}}</tool_call>z',
                                 ('arguments": {"city": "Oslo"}}z', None, [])),
    'garbage_after_name': ('<tool_call>{"name": "get_weather", junk, "arguments": {"city": "Oslo"}}</tool_call>z',
                           ('junk, "arguments": {"city": "Oslo"}}z', None, [('get_weather', '')])),
    'unquoted_keys': ('<tool_call>{name: "f", arguments: {}}</tool_call>z', ('{name: "f", arguments: {}}z', None, [])),
    'error_before_name': ('<tool_call>{"id": 1 "name": "f", "arguments": {}}</tool_call>z',
                          ('"name": "f", "arguments": {}}z', None, [])),
    'arguments_key_without_value': ('<tool_call>{"name": "f", "arguments": </tool_call>z', ('z', None, [('f', '')])),
    'broken_then_next_block': (f'<tool_call>{{"name": "f" "arguments": {{}}}}\n<tool_call>{W}</tool_call>z',
                               ('"arguments": {}}\nz', None, [('f', ''), OSLO])),
    'broken_then_newline_block': (f'<tool_call>{{"name": "f" "arguments": {{}}}}</tool_call>\n<tool_call>{W}</tool_call>',
                                  ('"arguments": {}}\n', None, [('f', ''), OSLO])),
    'broken_text_quotes_close_tag': ('<tool_call>{"name": "f" "arguments": {"q": "</tool_call>"}}</tool_call>z',
                                     ('"arguments": {"q": ""}}</tool_call>z', None, [('f', '')])),
    'broken_unknown_name': ('<tool_call>{"name": "nope" "arguments": {}}</tool_call>z', ('"arguments": {}}z', None, [])),
    'cut_after_brace': ('<tool_call>\n{ ', (None, None, [])),
    'cut_in_fence': ('<tool_call>```js', ('```js', None, [])),
    'broken_at_end': ('<tool_call>{"name": "f" "arguments": {"a', ('"arguments": {"a', None, [('f', '')])),
    'broken_cut_close_at_end': ('<tool_call>{"name": "f" x</tool', ('x', None, [('f', '')])),
    # after a complete call a syntax error starts its tail (text the close tag follows closely is dropped)
    'junk_after_arguments': ('<tool_call>{"name": "f", "arguments": {} junk}</tool_call>z', ('z', None, [EMPTY_F])),
    'junk_key_after_arguments': ('<tool_call>{"name": "f", "arguments": {}, x}</tool_call>z', ('z', None, [EMPTY_F])),
    'stray_commas': ('<tool_call>{"name": "f",, "arguments": {"a": 1},,}</tool_call>z',
                     ('z', None, [('f', '{"a": 1}')])),
    'unicode_space_between_fields': ('<tool_call>{"name": "f",\u3000"arguments":\u00a0{}\u2003}</tool_call>z',
                                     ('z', None, [('f', '\u00a0{}')])),
    # well-formed JSON that is not an object: forwarded as written (LMDeploy, vLLM and SGLang do)
    'arguments_number': ('<tool_call>{"name": "f", "arguments": 5}</tool_call>z', ('z', None, [('f', '5')])),
    'arguments_array': ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>z', ('z', None, [('f', '[1]')])),
    # well-formed outputs whose values quote the broken shapes: untouched
    'values_quote_broken_shapes': (
        '<tool_call>{"name": "f", "arguments": {"a": "{\\"name\\": \\"f\\" \\"arguments\\" {1}}", '
        '"b": "not json}", "c": ["{x", "\\"arguments\\": 5"]}}</tool_call>z',
        ('z', None, [('f', '{"a": "{\\"name\\": \\"f\\" \\"arguments\\" {1}}", "b": "not json}", '
                           '"c": ["{x", "\\"arguments\\": 5"]}')])),
    'name_quotes_broken_shape': ('<tool_call>{"name": "f", "arguments": {"q": "{\\"name\\" \\"x\\"}"}}</tool_call>z',
                                 ('z', None, [('f', '{"q": "{\\"name\\" \\"x\\"}"}')])),
    'string_arguments': ('<tool_call>{"name": "f", "arguments": "{\\"city\\": \\"Oslo\\"}"}</tool_call>',
                         (None, None, [('f', '"{\\"city\\": \\"Oslo\\"}"')])),
    'unknown_name_then_text': (f'<tool_call>{W.replace("get_weather", "nope")}\n<tool_call>{F}\nafter',
                               ('after', None, [EMPTY_F])),
    'unfinished_envelope_then_text': ('<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}\nafter',
                                      ('after', None, [OSLO])),
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
    'code': ('<|python_tag|>print("hi")', ('print("hi")', None, [])),
    'missing_comma': ('<|python_tag|>{"name": "get_weather" "parameters": {"city": "Oslo"}}',
                      ('"parameters": {"city": "Oslo"}}', None, [('get_weather', '')])),
    'missing_colon_then_call': (f'<|python_tag|>{{"name": "f", "parameters" {{}}}} <|python_tag|>{WP}',
                                ('{}} ', None, [('f', ''), OSLO])),
    'junk_after_parameters': ('<|python_tag|>{"name": "f", "parameters": {} junk}', ('junk}', None, [EMPTY_F])),
}
# Shapes about the end of the output (or a value that never ends): not followed by ``</think>done``.
AT_END = {'close_cut_at_end', 'truncated_in_arguments', 'unfinished_envelope_then_text', 'truncated',
          'semicolon_at_end', 'cut_after_brace', 'cut_in_fence', 'broken_at_end', 'broken_cut_close_at_end', 'code', 'missing_comma',
          'missing_colon_then_call', 'junk_after_parameters'}
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
        inter_want = (want[0].replace('</tool_call>', '<|action_end|>').replace('arguments"', 'parameters"')
                      if want[0] else None, *want[1:])
        out.append(pytest.param('internlm', inter.replace('arguments"', 'parameters"'), inter_want,
                                id=f'internlm-{case}'))
    for case, (text, want) in LLAMA.items():
        if not at_end and case in AT_END:
            continue
        out.append(pytest.param('llama3', text, want, id=f'llama3-{case}'))
    return out


def _check(parser_cls: type, text: str, want: tuple[Any, Any, Any]) -> None:
    request = {'messages': [], 'tools': TOOLS}
    assert complete(parser_cls(request), text).key() == want
    rng = random.Random(text)
    runs = [*chunkings(text, TAGS, n_random=8),
            *((f'empties{i}', with_empty_chunks(random_chunks(text, rng), rng)) for i in range(4))]
    for label, chunks in runs:
        assert stream(parser_cls(request), chunks).key() == want, (label, chunks)
        parser = parser_cls(request)
        flagged = stream_flagged(parser, chunks, flush=True)
        check_messages(flagged)
        assert reconstruct(parser, flagged).key() == want, ('flush', label)


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


@pytest.mark.parametrize(('tool', 'text', 'want'), _cases())
def test_shape_token_stream(tool: str, text: str, want: tuple[Any, Any, Any], qwen_tokenizer: Any) -> None:
    """The real Qwen tokenizer's token-by-token stream gives the same result."""
    parser = BaseResponseParser.with_parsers(None, tool)({'messages': [], 'tools': TOOLS})
    flagged = stream_flagged(parser, token_chunks(qwen_tokenizer, text))
    check_messages(flagged)
    assert reconstruct(parser, flagged).key() == want


def _channels(flagged: list[Any]) -> list[str]:
    out: list[str] = []
    for message, _ in flagged:
        channel = 'tool' if message.tool_calls else 'content' if message.content else 'reasoning'
        if not out or out[-1] != channel:
            out.append(channel)
    return out


@pytest.mark.parametrize('tool', ['qwen3', 'hermes', 'internlm'])
def test_broken_envelope_streams_identity_then_text(tool: str) -> None:
    """The name goes out when it is read; the broken envelope's text follows it as content, in order,
    and is streamed before the close tag arrives (held only while it may be a tag prefix)."""
    parser = BaseResponseParser.with_parsers(None, tool)({'messages': [], 'tools': TOOLS})
    field = '"parameters"' if tool == 'internlm' else '"arguments"'
    open_tag = '<|action_start|><|plugin|>' if tool == 'internlm' else '<tool_call>'
    flagged = stream_flagged(parser, ['x', open_tag, '{"name": "get_weather" ', field + ': {"city"', ': "Oslo"}}',
                                      '</too'])
    content = [m.content for m, _ in flagged if m.content]
    assert content[:3] == ['x', field + ': {"city"', ': "Oslo"}}']
    assert _channels(flagged) == ['content', 'tool', 'content']
    assert reconstruct(parser, flagged).calls == [('get_weather', '')]


def _json_dialects() -> list[str]:
    """One registered name per JSON-envelope dialect class (the family's mechanism serves them all)."""
    seen: dict[type, str] = {}
    for name in sorted(ToolParserManager.module_dict):
        cls = ToolParserManager.get(name)
        if isinstance(cls, type) and issubclass(cls, JsonToolParser) and cls not in seen:
            seen[cls] = name
    return list(seen.values())


@pytest.mark.parametrize(('tool', 'shape'), [
    (tool, shape) for tool in _json_dialects() for shape in ('missing_colon', 'missing_comma')
    # a name_as_key envelope ({"NAME": {...}}) has no comma after its name
    if shape == 'missing_colon' or not BaseResponseParser.with_parsers(None, tool).tool_parser_cls.name_as_key])
def test_every_json_dialect_keeps_the_broken_text(tool: str, shape: str) -> None:
    """Every JSON-envelope dialect: after the name, a missing ``:`` or ``,`` gives the call with no
    arguments (none invented, no ``{}``) and the text from the error on as content, for any chunking."""
    cls = BaseResponseParser.with_parsers(None, tool)
    tp = cls.tool_parser_cls
    if tp.name_as_key:
        env, rest = '{"f" {"a": 1}}', '{"a": 1}}'
    else:
        sep = ' ' if shape == 'missing_comma' else ', '
        colon = ': ' if shape == 'missing_comma' else ' '
        env = f'{{"{tp.name_field}": "f"{sep}"{tp.argument_field}"{colon}{{"a": 1}}}}'
        rest = env[env.index(f'"{tp.argument_field}"'):] if shape == 'missing_comma' else '{"a": 1}}'
    open_tag = tp.tool_open_tag or ''
    if tp.envelope_array and not open_tag.endswith('['):
        env, rest = f'[{env}]', rest + ']'
    text = f'{open_tag}{env}{tp.tool_close_tag or ""}'
    request = {'messages': [], 'tools': TOOLS}
    want = (rest, None, [('f', '')])
    assert complete(cls(request), text).key() == want
    for label, chunks in chunkings(text, (open_tag, tp.tool_close_tag or open_tag), n_random=3):
        assert stream(cls(request), chunks).key() == want, (label, chunks)


def test_reasoning_that_quotes_a_broken_envelope_is_untouched() -> None:
    """A broken envelope written as text in reasoning and content (no tool tag) stays text."""
    broken = '{"name": "f" "arguments" {"a": 1}}'
    text = f'<think>Not {broken} but</think>see {broken}<tool_call>{W}</tool_call>'
    _check(BaseResponseParser.with_parsers('default', 'qwen3'), text, (f'see {broken}', f'Not {broken} but', [OSLO]))
