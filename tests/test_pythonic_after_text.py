"""``pythonic_after_text``: a pythonic call list after prose (SGLang's ``pythonic``).

SGLang's pythonic detector (``pythonic_detector.py``; its tests
``test_tool_call_with_leading_text``, ``test_streaming_text_then_tool_call``,
``test_streaming_incomplete_tool_call``) reads ``[call(...)]`` wherever it
starts; the SGLang plugin maps SGLang's ``pythonic`` to this dialect in replace
mode. vLLM's ``pythonic`` (and lmparse's) reads a bare list only at the start
of the output. A ``[`` after text opens a list only when ``NAME(`` follows it
with NAME an offered tool; until that is decided it is held, and refuted it is
content byte for byte. Every case: one chunk, every split inside every marker,
fixed 1/4/8/16/256 and random chunkings, random chunkings with empty chunks
anywhere, every two-way split, and the result equals ``parse_complete``.
"""
from __future__ import annotations

import random
from typing import Any

import pytest

from lmparse import ToolParserManager
from lmparse.dialects.llama import PythonicAfterTextToolParser, PythonicCallsToolParser
from tests.streaming import chunkings, complete, random_chunks, run_case, stream, with_empty_chunks
from tests.test_pythonic import CASES as START_CASES
from tests.test_pythonic import TAGS

Calls = list[tuple[str, str]]
TOOL = 'pythonic_after_text'

# lmparse's pythonic cases read the same here, except a list after prose, which is now a call, and the
# whitespace before a list, which is content like any text before one (pythonic drops it at the start).
_CHANGED = {
    'prose': ('Use  later.', [('get_weather', '{"city": "x"}')]),
    'spaces': ('  ', [('get_weather', '{"city": "Oslo"}'), ('get_time', '{}')]),
    'two-lists': ('\n', [('get_time', '{}'), ('search', '{"query": "x"}')]),
}

AFTER_TEXT: list[tuple[str, str, str | None, Calls]] = [
    ('leading-text', "Checking. [get_weather(city='Oslo')]", 'Checking. ', [('get_weather', '{"city": "Oslo"}')]),
    ('text-around', 'Sure. [get_time()] Done.', 'Sure.  Done.', [('get_time', '{}')]),
    ('two-calls-after-text', "Ok\n[get_time(), search(query='q', limit=2)]", 'Ok\n',
     [('get_time', '{}'), ('search', '{"query": "q", "limit": 2}')]),
    ('python-tags-and-bare', 'A <|python_start|>[get_time()]<|python_end|> B [search(query="x")]', 'A  B ',
     [('get_time', '{}'), ('search', '{"query": "x"}')]),
    ('two-lists-in-prose', 'a [get_time()] b [get_time()] c', 'a  b  c', [('get_time', '{}'), ('get_time', '{}')]),
    ('link-then-call', 'See [the docs](https://x.org/a[1]) then [get_time()].', 'See [the docs](https://x.org/a[1]) then .',
     [('get_time', '{}')]),
    ('bracket-before-list', 'x [[get_time()] y', 'x [ y', [('get_time', '{}')]),
    ('rejected-head-then-list', 'x [ab [get_time()]] y', 'x [ab ] y', [('get_time', '{}')]),
    # refuted: content byte for byte
    ('link-with-tool-name', 'See [get_weather](https://example.com).', 'See [get_weather](https://example.com).', []),
    ('json-array-in-prose', 'The list is [1, 2, {"a": [3]}] ok', 'The list is [1, 2, {"a": [3]}] ok', []),
    ('unknown-tool', 'Run [delete_all(force=True)] now', 'Run [delete_all(force=True)] now', []),
    ('name-prefix', 'x [get(city="x")] y', 'x [get(city="x")] y', []),
    ('no-paren', 'x [get_weather, get_time] y', 'x [get_weather, get_time] y', []),
    ('index', 'a[0] and b[i] and c[get_time]', 'a[0] and b[i] and c[get_time]', []),
    ('cut-head', 'Text [get_weath', 'Text [get_weath', []),
    ('cut-after-name', 'Text [get_weather', 'Text [get_weather', []),
    ('lone-bracket', 'Text [', 'Text [', []),
]

ALL_CASES = [(cid, text, *_CHANGED.get(cid, (content, calls))) for cid, text, content, calls in START_CASES] \
    + AFTER_TEXT


@pytest.mark.parametrize('case', ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_every_chunking(make_parser: Any, case: tuple[str, str, str | None, Calls]) -> None:
    _, text, content, calls = case
    want = (content, None, calls)
    assert complete(make_parser(None, TOOL), text).key() == want
    for label, chunks in chunkings(text, TAGS + ('[', '](')):
        assert stream(make_parser(None, TOOL), chunks).key() == want, label
    rng = random.Random(text)
    for i in range(5):
        assert run_case(make_parser(None, TOOL), with_empty_chunks(random_chunks(text, rng), rng)) == want, i
    for size in (1, 5):
        assert run_case(make_parser(None, TOOL), random_chunks(text, rng, size), flush=True) == want, size


@pytest.mark.parametrize('case', AFTER_TEXT, ids=[c[0] for c in AFTER_TEXT])
def test_every_two_way_split(make_parser: Any, case: tuple[str, str, str | None, Calls]) -> None:
    _, text, content, calls = case
    for cut in range(1, len(text)):
        assert stream(make_parser(None, TOOL), [text[:cut], text[cut:]]).key() == (content, None, calls), cut


@pytest.mark.parametrize('case', AFTER_TEXT, ids=[c[0] for c in AFTER_TEXT])
def test_pythonic_keeps_reading_only_at_the_start(make_parser: Any, case: tuple[str, str, str | None, Calls]) -> None:
    """vLLM's pythonic (and lmparse's) leaves a list after text as content."""
    _, text, _, _ = case
    got = complete(make_parser(None, 'pythonic'), text).key()
    if '<|python_start|>' not in text:
        assert got == (text, None, []), text


# A list in reasoning is reasoning text; a list after it in the answer is a call.
REASONING = [
    ('<think>Maybe [get_time()] helps.</think>Answer.', ('Answer.', 'Maybe [get_time()] helps.', [])),
    ('<think>Maybe [get_time()].</think>Ok [get_time()]', ('Ok ', 'Maybe [get_time()].', [('get_time', '{}')])),
    ("<think>a [search(query='x'</think>b", ('b', "a [search(query='x'", [])),
]


@pytest.mark.parametrize(('text', 'want'), REASONING)
def test_list_in_reasoning_is_text(make_parser: Any, text: str, want: tuple[Any, ...]) -> None:
    assert complete(make_parser('deepseek-r1', TOOL), text).key() == want
    for label, chunks in chunkings(text, ('<think>', '</think>', '[get_time(', '[search(')):
        assert stream(make_parser('deepseek-r1', TOOL), chunks).key() == want, label


def test_list_in_string_values_is_a_value(make_parser: Any) -> None:
    """A list quoted inside an argument value is that value's text."""
    text = "Note [search(query='[get_time()] and [search(query=1)]')] end"
    want = ('Note  end', None, [('search', '{"query": "[get_time()] and [search(query=1)]"}')])
    assert complete(make_parser(None, TOOL), text).key() == want
    for label, chunks in chunkings(text, TAGS + ('[',)):
        assert stream(make_parser(None, TOOL), chunks).key() == want, label


def test_open_call_is_held_while_undecided(make_parser: Any) -> None:
    parser = make_parser(None, TOOL)
    out = parser.stream_chunk('Hi! [sea', [])
    assert ''.join(m.content or '' for m, _ in out) == 'Hi! '  # '[sea' may open a call: held
    out = parser.stream_chunk('rch(query=', [])
    names = [d.function.name for m, _ in out for d in (m.tool_calls or []) if d.function.name]
    assert names == ['search'] and not any(m.content for m, _ in out)
    parser = make_parser(None, TOOL)
    parser.stream_chunk('Hi! [sea', [])
    out = parser.stream_chunk('l]', [])
    assert ''.join(m.content or '' for m, _ in out) == '[seal]'  # refuted: released as text


def test_no_tools_is_content(make_parser: Any) -> None:
    text = 'Ok [get_time()]'
    assert complete(make_parser(None, TOOL, request_tools=None), text).key() == (text, None, [])


def test_registration() -> None:
    assert ToolParserManager.get(TOOL) is PythonicAfterTextToolParser
    assert ToolParserManager.get('pythonic') is PythonicCallsToolParser
    assert not PythonicCallsToolParser.bare_calls_after_text


def test_declaration_needs_the_bare_opener() -> None:
    from lmparse.tools.pythonic import PythonicToolParser

    class Tagged(PythonicToolParser):
        tool_open_tag = '<x>'
        tool_close_tag = '</x>'
        bare_calls_after_text = True

    with pytest.raises(TypeError, match='bare_calls_after_text'):
        Tagged()


# ---- real Llama 3 token streams (Llama 3.2 writes pythonic lists) ------------------------


@pytest.fixture(scope='module')
def llama_tokenizer() -> Any:
    from tests.llama_tokenizer import load
    return load()


@pytest.mark.parametrize('case', AFTER_TEXT, ids=[c[0] for c in AFTER_TEXT])
def test_token_by_token(make_parser: Any, llama_tokenizer: Any, case: tuple[str, str, str | None, Calls]) -> None:
    from tests.streaming import reconstruct, stream_flagged, token_chunks
    _, text, content, calls = case
    chunks = token_chunks(llama_tokenizer, text)
    for flush in (False, True):
        parser = make_parser(None, TOOL)
        assert reconstruct(parser, stream_flagged(parser, chunks, flush=flush)).key() == (content, None, calls)
