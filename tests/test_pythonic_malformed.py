"""Malformed keyword arguments in every pythonic dialect (``pythonic``, ``llama4_pythonic``, ``lfm2``, ``olmo3``).

``[get_weather(city=)]`` is no Python (SGLang's pythonic detector test
``test_malformed_python_returns_empty_calls`` feeds it). The call's name was
stable at its ``(`` and is kept (a stream cannot take it back, and
``parse_complete`` gives what every chunking gives); a keyword is emitted only
when its value starts, so the arguments hold only what was stable and a key
never stands without its value. The syntax error ends the list: a tagged
block's text up to its close tag is the block's, a bare list's text up to its
own ``]`` (within 256 characters) too; text after either is content.
"""
from __future__ import annotations

import random
from typing import Any

import pytest

from tests.conftest import build_parser
from tests.streaming import chunkings, complete, random_chunks, stream

# (label, the call's argument list as written, the arguments emitted)
ARGS: list[tuple[str, str, str]] = [
    ('empty-value', '(city=)', ''),
    ('empty-value-comma', '(city=,)', ''),
    ('empty-value-space', '(city= )', ''),
    ('empty-value-then-keyword', '(city=, unit="celsius")', ''),
    ('no-keyword', '(=1)', ''),
    ('second-empty', '(unit="celsius", city=)', '{"unit": "celsius"'),
    ('double-comma', '(city=1,,)', '{"city": 1'),
    ('dict-no-value', "(city={'a': })", '{"city": {"a"'),
    ('list-double-comma', '(city=[1,,2])', '{"city": [1'),
    ('equals-twice', '(city==1)', ''),
    ('dict-no-colon', "(city={'a' 1})", '{"city": {"a"'),
    # well-formed: a positional identifier is skipped (as both engines do)
    ('positional-identifier', '(city)', '{}'),
]

# (tool, open, close, list brackets, content after the block)
DIALECTS = [
    ('pythonic', '', '', True, ' tail'),
    ('llama4_pythonic', '<|python_start|>', '<|python_end|>', True, 'after'),
    ('pythonic', 'Text.<|python_start|>', '<|python_end|>', True, 'after'),
    ('lfm2', '<|tool_call_start|>', '<|tool_call_end|>', True, 'after'),
    ('olmo3', '<function_calls>', '</function_calls>', False, 'after'),
]
TAGS = ('<|python_start|>', '<|python_end|>', '<|tool_call_start|>', '<|tool_call_end|>', '<function_calls>',
        '</function_calls>', 'get_weather(', 'city=')


def _text(dialect: tuple[str, str, str, bool, str], calls: str) -> str:
    _, open_tag, close_tag, brackets, after = dialect
    return open_tag + (f'[{calls}]' if brackets else calls) + close_tag + after


def _expected(dialect: tuple[str, str, str, bool, str], calls: list[tuple[str, str]]) -> tuple[Any, ...]:
    open_tag = dialect[1]
    before = open_tag[:open_tag.index('<')] if '<' in open_tag else ''
    return ((before + dialect[4]) or None, None, calls)


def _check(tool: str, text: str, expected: tuple[Any, ...]) -> None:
    assert complete(build_parser(None, tool), text).key() == expected, text
    for label, chunks in chunkings(text, TAGS):
        assert stream(build_parser(None, tool), chunks).key() == expected, (text, label)
    for cut in range(1, len(text)):
        assert stream(build_parser(None, tool), [text[:cut], text[cut:]]).key() == expected, (text, cut)
    rng = random.Random(len(text))
    for _ in range(5):
        chunks = [c for piece in random_chunks(text, rng, 6) for c in ('', piece) if rng.random() < 0.7 or c]
        assert stream(build_parser(None, tool), chunks + ['']).key() == expected, (text, chunks)


@pytest.mark.parametrize('dialect', DIALECTS, ids=[f'{d[0]}-{bool(d[1])}-{d[1][:4]}' for d in DIALECTS])
@pytest.mark.parametrize('case', ARGS, ids=[c[0] for c in ARGS])
def test_malformed_keyword(dialect: tuple[str, str, str, bool, str], case: tuple[str, str, str]) -> None:
    _, args, emitted = case
    _check(dialect[0], _text(dialect, 'get_weather' + args), _expected(dialect, [('get_weather', emitted)]))


@pytest.mark.parametrize('dialect', DIALECTS, ids=[f'{d[0]}-{bool(d[1])}-{d[1][:4]}' for d in DIALECTS])
def test_calls_before_the_error_are_kept(dialect: tuple[str, str, str, bool, str]) -> None:
    sep = ', ' if dialect[3] else '\n'
    text = _text(dialect, f'get_time(){sep}get_weather(city=){sep}search(query="x")')
    _check(dialect[0], text, _expected(dialect, [('get_time', '{}'), ('get_weather', '')]))


@pytest.mark.parametrize('dialect', DIALECTS, ids=[f'{d[0]}-{bool(d[1])}-{d[1][:4]}' for d in DIALECTS])
def test_marker_characters_in_values_stay_exact(dialect: tuple[str, str, str, bool, str]) -> None:
    """Well-formed values holding '=', ')', ']', '(', ',' (and the keyword spelling) are text."""
    sep = ', ' if dialect[3] else '\n'
    calls = (f'''get_weather(city="a=b), c](", unit='city=)], (x, y=)'){sep}'''
             f'''search(query={{"k=": "v)]", "(": [")", "="]}}, limit=("=", ")")){sep}get_time()''')
    expected = [('get_weather', '{"city": "a=b), c](", "unit": "city=)], (x, y=)"}'),
                ('search', '{"query": {"k=": "v)]", "(": [")", "="]}, "limit": ["=", ")"]}'),
                ('get_time', '{}')]
    _check(dialect[0], _text(dialect, calls), _expected(dialect, expected))


TRUNCATED = [
    ('pythonic', '[get_weather(city=', (None, None, [('get_weather', '')])),
    ('pythonic', '[get_weather(unit="c", city= ', (None, None, [('get_weather', '{"unit": "c"')])),
    ('pythonic', "[search(query={'a': ", (None, None, [('search', '{"query": {"a"')])),
    ('llama4_pythonic', '<|python_start|>[get_weather(city=', (None, None, [('get_weather', '')])),
    ('lfm2', '<|tool_call_start|>[get_weather(city=', (None, None, [('get_weather', '')])),
    ('olmo3', '<function_calls>get_weather(city=', (None, None, [('get_weather', '')])),
    ('olmo3', '<function_calls>get_weather(city=</function_calls>after', ('after', None, [('get_weather', '')])),
]


@pytest.mark.parametrize('tool, text, expected', TRUNCATED)
def test_keyword_at_the_end_of_the_output(tool: str, text: str, expected: tuple[Any, ...]) -> None:
    _check(tool, text, expected)


BARE_REST = [
    # the list's own ']' within 256 characters (brackets counted outside strings): the rest is the list's
    ('[get_weather(city=, note="])")] tail', ' tail'),
    ("[get_weather(city=, note=f(a, [1], {'b': ']'}))]\nThe weather.", '\nThe weather.'),
    ('[get_weather(city=)', ')'),  # the list's ']' never came
    # no such ']': the list ended at the error, the rest is content as written
    ('[get_weather(city=, note="' + 'x' * 300 + '")] tail', ', note="' + 'x' * 300 + '")] tail'),
    ('[get_weather(city=)) tail', ')) tail'),
    ('[get_weather(city=, note="unclosed)] tail', ', note="unclosed)] tail'),
    ('[get_weather(city="Oslo") x] tail', ' tail'),
    ('[get_weather(city="Oslo"), 1] tail', ' tail'),
]


@pytest.mark.parametrize('text, content', BARE_REST)
def test_bare_list_rest(text: str, content: str | None) -> None:
    calls = complete(build_parser(None, 'pythonic'), text).calls
    assert calls and calls[0][0] == 'get_weather'
    _check('pythonic', text, (content, None, calls))


def test_keyword_streams_with_its_value() -> None:
    parser = build_parser(None, 'pythonic')
    out = parser.stream_chunk('[get_weather(city=', [])
    deltas = [d for m, _ in out for d in (m.tool_calls or [])]
    assert [d.function.name for d in deltas] == ['get_weather']
    assert ''.join(d.function.arguments or '' for d in deltas) == ''  # the key waits for its value
    out = parser.stream_chunk(' "Os', [])
    assert ''.join(d.function.arguments or '' for m, _ in out for d in (m.tool_calls or [])) == '{"city": "Os'
    out = parser.stream_chunk('lo")]', [], final=True)
    assert ''.join(d.function.arguments or '' for m, _ in out for d in (m.tool_calls or [])) == 'lo"}'


# ---- real Llama 3 token streams (Llama 3.2 writes bare pythonic lists) ------------------------


@pytest.fixture(scope='module')
def llama_tokenizer() -> Any:
    from tests.llama_tokenizer import load
    return load()


TOKEN_TEXTS = ([_text(DIALECTS[0], 'get_weather' + args) for _, args, _ in ARGS]
               + [text for text, _ in BARE_REST] + [t for tool, t, _ in TRUNCATED if tool == 'pythonic'])


@pytest.mark.parametrize('text', TOKEN_TEXTS)
def test_token_by_token(llama_tokenizer: Any, text: str) -> None:
    from tests.streaming import reconstruct, stream_flagged, token_chunks
    expected = complete(build_parser(None, 'pythonic'), text).key()
    assert expected[2]  # a call in every case
    chunks = token_chunks(llama_tokenizer, text)
    for flush in (False, True):
        parser = build_parser(None, 'pythonic')
        assert reconstruct(parser, stream_flagged(parser, chunks, flush=flush)).key() == expected, (text, flush)
