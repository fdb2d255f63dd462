"""JsonValueScanner: the lexical end of one JSON value, fed whole or in chunks."""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmparse import JsonValueScanner


def scan(text: str) -> tuple[int, JsonValueScanner]:
    scanner = JsonValueScanner()
    return scanner.feed(text), scanner


def scan_chunks(chunks: list[str]) -> tuple[int | None, JsonValueScanner]:
    """Feed separate chunk strings; return the global end offset (None if incomplete)."""
    scanner = JsonValueScanner()
    offset = 0
    for chunk in chunks:
        pos = scanner.feed(chunk)
        if scanner.complete:
            return offset + pos, scanner
        assert pos == len(chunk), 'an incomplete value consumes the whole chunk'
        offset += len(chunk)
    return None, scanner


def scan_windows(text: str, cuts: list[int]) -> tuple[int | None, JsonValueScanner]:
    """Feed ``text[start:end]`` windows of one string (how the tool parser calls it)."""
    scanner = JsonValueScanner()
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    for start, end in zip(bounds, bounds[1:]):
        pos = scanner.feed(text, start, end)
        if scanner.complete:
            return pos, scanner
        assert pos == end
    return None, scanner


# ---- one-shot ------------------------------------------------------------------------


@pytest.mark.parametrize('text,end', [
    # strings
    ('"abc" tail', 5),
    ('""', 2),
    ('"a\\"b" x', 6),
    ('"a\\\\" x', 5),
    ('"\\\\\\"" x', 6),
    ('"中文😀 é" ,', 7),
    ('"}]{[,:" ]', 8),
    ('"\\u4e2d\\n" ', 10),
    # containers
    ('{} x', 2),
    ('[] x', 2),
    ('{"a": [1, {"b": "}"}]} tail', 22),
    ('[["]", "}", "[{"], {"k": "\\"]"}] ,', 32),
    ('{\n  "a" : 1 ,\n  "a" : 2\n}\n', 25),
    # scalars stop before their delimiter
    ('123, 4', 3),
    ('true}', 4),
    ('false]', 5),
    ('null ', 4),
    ('-1.5e+3\n', 7),
    ('0\t', 1),
    # leading whitespace is skipped
    ('  \n "x" y', 7),
    (' \t{"a": 1}', 10),
    (' 7,', 2),
])
def test_one_shot_end(text: str, end: int) -> None:
    pos, scanner = scan(text)
    assert pos == end
    # independent oracle: the stdlib decoder agrees on where the value ends
    assert json.JSONDecoder().raw_decode(text, len(text) - len(text.lstrip()))[1] == end
    assert scanner.complete and scanner.started
    assert not scanner.in_string
    assert scanner.depth == 0


@pytest.mark.parametrize('text,in_string,depth', [
    ('"abc', True, 0),
    ('{"a": "x', True, 1),
    ('{"a": "x"', False, 1),
    ('[[1, [2', False, 3),
    ('[{"k": ["', True, 3),
    ('{"a": "\\"', True, 1),
    ('{"a": "\\\\"', False, 1),
])
def test_incomplete_value_consumes_everything(text: str, in_string: bool, depth: int) -> None:
    pos, scanner = scan(text)
    assert pos == len(text)
    assert not scanner.complete and scanner.started
    assert scanner.in_string is in_string
    assert scanner.depth == depth


def test_whitespace_only_does_not_start() -> None:
    pos, scanner = scan('  \n\t ')
    assert pos == 5 and not scanner.started and not scanner.complete
    assert scanner.feed('"x"') == 3 and scanner.complete


def test_root_scalar_needs_delimiter_or_finish() -> None:
    scanner = JsonValueScanner()
    assert scanner.feed('12') == 2 and not scanner.complete
    assert scanner.feed('3') == 1 and not scanner.complete
    scanner.finish()
    assert scanner.complete
    scanner = JsonValueScanner()
    scanner.feed('tr')
    assert scanner.finish_scalar() is True  # truncated scalars end at a known boundary: no validation


@pytest.mark.parametrize('text', ['{"a": 1', '"abc', '[1, 2', '{"a": "x'])
def test_finish_does_not_complete_strings_or_containers(text: str) -> None:
    scanner = JsonValueScanner()
    scanner.feed(text)
    scanner.finish()
    assert not scanner.complete
    assert scanner.finish_scalar() is False


def test_finish_before_start_is_a_no_op() -> None:
    scanner = JsonValueScanner()
    scanner.finish()
    assert not scanner.complete and not scanner.started


def test_feed_after_complete_returns_start() -> None:
    scanner = JsonValueScanner()
    assert scanner.feed('{"a": 1}') == 8
    assert scanner.feed('{"b": 2}') == 0
    assert scanner.feed('xx{"b": 2}', 2) == 2
    assert scanner.complete


def test_reset() -> None:
    scanner = JsonValueScanner()
    scanner.feed('{"a": "x')
    assert scanner.in_string and scanner.depth == 1
    scanner.reset()
    assert not scanner.complete and not scanner.started and not scanner.in_string and scanner.depth == 0
    assert scanner.feed('[1] ') == 3 and scanner.complete


def test_feed_start_and_end() -> None:
    text = 'xx{"a": [1, 2]}yy'
    scanner = JsonValueScanner()
    assert scanner.feed(text, 2, 9) == 9 and not scanner.complete
    assert scanner.in_string is False and scanner.depth == 2
    assert scanner.feed(text, 9) == 15 and scanner.complete
    # end beyond the text is clipped to its length
    scanner = JsonValueScanner()
    assert scanner.feed('[1, 2', 0, 100) == 5
    # a scalar stops at the window's end without completing
    scanner = JsonValueScanner()
    assert scanner.feed('1234,', 0, 2) == 2 and not scanner.complete
    assert scanner.feed('1234,', 2) == 4 and scanner.complete


@pytest.mark.parametrize('start,end', [(3, 2), (-1, None), (5, None)])
def test_feed_invalid_range(start: int, end: int | None) -> None:
    with pytest.raises(ValueError):
        JsonValueScanner().feed('abcd', start, end)


def test_state_is_per_instance() -> None:
    a, b = JsonValueScanner(), JsonValueScanner()
    a.feed('{"x": "')
    assert a.in_string and not b.in_string and not b.started


# ---- escapes across chunk boundaries -----------------------------------------------------


@pytest.mark.parametrize('chunks,end', [
    (['"ab\\', '"', '"'], 6),          # escaped quote, then the real one
    (['"ab\\\\', '"'], 6),             # even backslash run: the quote closes
    (['"ab\\\\', '\\"', '"'], 8),      # odd run split 2 + 1
    (['"ab', '\\', '\\', '"'], 6),     # backslash pair split across three chunks
    (['"ab', '\\', '"', 'c"'], 7),
    (['{"k": "v\\', '"}', '"}'], 13),
    (['["\\', '\\', '"]'], 6),
    (['"', '"'], 2),
])
def test_escapes_split_across_chunks(chunks: list[str], end: int) -> None:
    got, scanner = scan_chunks(chunks)
    assert got == end
    assert json.JSONDecoder().raw_decode(''.join(chunks))[1] == end
    assert scanner.complete and not scanner.in_string
    assert scan(''.join(chunks))[0] == end


def test_in_string_tracks_every_chunk() -> None:
    scanner = JsonValueScanner()
    states = []
    for chunk in ['{"a"', ': "x', '\\"', 'y"', ', "b": ', '"', '}"', '}']:
        scanner.feed(chunk)
        states.append((scanner.in_string, scanner.complete))
    assert states == [(False, False), (True, False), (True, False), (False, False), (False, False),
                      (True, False), (False, False), (False, True)]


# ---- chunked feeding equals one-shot feeding --------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


@st.composite
def serialized_values(draw: Any) -> tuple[str, str]:
    value = draw(json_values)
    source = json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.none() | st.integers(0, 2)),
        separators=draw(st.sampled_from([None, (',', ':'), (', ', ': '), (' , ', ' : ')])),
    )
    suffix = draw(st.sampled_from([',', '}', ']', ' ', '\n', ', "k": "v"}', '}\n</tool_call>', ']]"']))
    lead = draw(st.sampled_from(['', ' ', '\n  ']))
    return lead + source, suffix


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_chunked_equals_one_shot(data: st.DataObject) -> None:
    source, suffix = data.draw(serialized_values())
    text = source + suffix
    end, scanner = scan(text)
    assert end == len(source), 'one-shot end is the end of the serialized value'
    assert scanner.complete and not scanner.in_string and scanner.depth == 0

    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=16))
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    assert scan_chunks(chunks)[0] == len(source)
    assert scan_windows(text, cuts)[0] == len(source)


@settings(max_examples=150, deadline=None)
@given(value=st.text(), cut_data=st.data())
def test_arbitrary_strings_chunked(value: str, cut_data: st.DataObject) -> None:
    source = json.dumps(value, ensure_ascii=False)
    text = source + '"}'  # a stray quote after the value must not matter
    cuts = cut_data.draw(st.lists(st.integers(1, len(text) - 1), max_size=10))
    assert scan_windows(text, cuts)[0] == len(source)
    chunk_size = cut_data.draw(st.integers(1, 5))
    chunks = [text[i:i + chunk_size] for i in range(0, len(text), chunk_size)]
    assert scan_chunks(chunks)[0] == len(source)


@pytest.mark.parametrize('size', [1, 2, 3, 4, 8, 16, 256])
def test_fixed_chunk_sizes(size: int) -> None:
    source = json.dumps({'a': ['x\\', '"', '\\"', '中文', '😀', {'b': None}], 'c': 1.5, 'd': 'é}]'},
                        ensure_ascii=False)
    text = source + ', "next": true}'
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    assert scan_chunks(chunks)[0] == len(source)
    assert scan_windows(text, list(range(size, len(text), size)))[0] == len(source)


# ---- many short strings and large values ---------------------------------------------------


def test_many_short_strings() -> None:
    source = '[' + '"a",' * 200_000 + '"", "\\"", "\\\\"]'
    text = source + ']'
    assert scan(text)[0] == len(source)
    assert scan_windows(text, list(range(7, len(text), 7)))[0] == len(source)
    chunks = [text[i:i + 4096] for i in range(0, len(text), 4096)]
    assert scan_chunks(chunks)[0] == len(source)


def test_many_short_keys_in_object() -> None:
    source = '{' + ', '.join(f'"k{i}": "v"' for i in range(50_000)) + '}'
    assert scan(source + ' ')[0] == len(source)
    assert scan_windows(source, list(range(16, len(source), 16)))[0] == len(source)


def test_long_string_across_unicode_kinds() -> None:
    """Latin-1, BMP and astral chunks (different internal string kinds) in one value."""
    parts = ['"' + 'a' * 5000, '中' * 5000, '\\"' * 1000, '😀' * 3000, '\\\\' * 1000, 'é' * 3000 + '"']
    source = ''.join(parts)
    assert scan_chunks(parts + [' tail'])[0] == len(source)
    assert scan(source + ']')[0] == len(source)
    assert json.loads(source).endswith('é')


# ---- up to an outer marker (the loop the JSON envelope, DSML and Kimi share) ----------------

END = '</end>'


def feed_until_windows(text: str, cuts: list[int], markers: tuple[str, ...] = (END,)) -> tuple[int, bool, bool]:
    """Stream growing prefixes the way a tool parser sees its buffer: (offset, at_marker, complete)."""
    scanner = JsonValueScanner()
    pos = 0
    for cut in sorted({c for c in cuts if 0 < c < len(text)}) + [len(text)]:
        final = cut == len(text)
        pos, at_marker = scanner.feed_until(text, markers, pos, cut, final=final)
        if scanner.complete or at_marker:
            return pos, at_marker, scanner.complete
        assert pos <= cut
    return pos, False, scanner.complete


@pytest.mark.parametrize('text,offset,at_marker,complete', [
    ('{"a": "x</end>y"} tail</end>', 17, False, True),   # a marker inside a string is data
    ('{"a": 1</end>', 7, True, False),                    # the block closed before the value
    ('12</end>', 2, True, True),                          # a marker delimits a root scalar
    ('12 </end>', 2, False, True),
    ('"a</end>"</end>', 9, False, True),
    ('</end>', 0, True, False),
    ('  </end>', 2, True, False),
    ('[1, "\\"</end>"]</end>', 15, False, True),
])
def test_feed_until_marker(text: str, offset: int, at_marker: bool, complete: bool) -> None:
    scanner = JsonValueScanner()
    assert scanner.feed_until(text, (END,), final=True) == (offset, at_marker)
    assert scanner.complete is complete
    for step in (1, 2, 3, 5):
        assert feed_until_windows(text, list(range(step, len(text), step))) == (offset, at_marker, complete)


def test_feed_until_holds_a_partial_marker() -> None:
    scanner = JsonValueScanner()
    assert scanner.feed_until('{"a": 1</e', (END,)) == (7, False)
    assert not scanner.complete and scanner.depth == 1
    # Inside a string the same text is data and is consumed.
    scanner = JsonValueScanner()
    assert scanner.feed_until('{"a": "1</e', (END,)) == (11, False)
    assert scanner.in_string
    # final releases it: no marker can complete any more.
    scanner = JsonValueScanner()
    assert scanner.feed_until('{"a": 1</e', (END,), final=True) == (10, False)


def test_feed_until_first_of_several_markers() -> None:
    scanner = JsonValueScanner()
    assert scanner.feed_until('[1, 2<b>3<a>', ('<a>', '<b>'), final=True) == (5, True)
    scanner = JsonValueScanner()
    assert scanner.feed_until('[1, 2<', ('<a>', '<bb>')) == (5, False)


def test_feed_until_range_checks() -> None:
    with pytest.raises(ValueError):
        JsonValueScanner().feed_until('abc', (END,), 3, 2)
    with pytest.raises(ValueError):
        JsonValueScanner().feed_until('abc', ('',))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_feed_until_chunked_equals_one_shot(data: st.DataObject) -> None:
    value = json.dumps(data.draw(st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\</end>中'),
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
        max_leaves=8)))
    text = value + data.draw(st.sampled_from(['', END, ' ' + END, END + '"x"', ',' + END]))
    scanner = JsonValueScanner()
    want = scanner.feed_until(text, (END,), final=True), scanner.complete
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    pos, at_marker, complete = feed_until_windows(text, cuts)
    assert ((pos, at_marker), complete) == want


def test_feed_until_many_strings_before_a_far_marker() -> None:
    # One marker search serves every string before it: this stays linear.
    source = '[' + '"a",' * 200_000 + '"b"]'
    text = source + END
    scanner = JsonValueScanner()
    assert scanner.feed_until(text, (END,)) == (len(source), False)
    assert scanner.complete
