"""The compiled JSON string escaper equals json.dumps(s, ensure_ascii=False) on every kind of string."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmparse.tools.json_escape import escape_json_string

# Runs longer than one 16-byte vector, every character class the escaper distinguishes,
# and characters that make the string one-, two- or four-byte.
PIECES = st.sampled_from([
    'a', 'plain text of some length, more than sixteen characters', '"', '\\', '\n', '\r', '\t', '\b', '\f',
    '\x00', '\x01', '\x1f', ' ', '\x7f', '\x80', 'é', '\xff', '\u0100', '北京', '\u2028', '\ud800', '\U0001f600',
])
TEXTS = st.lists(PIECES, max_size=40).map(''.join)
PREFIXES = st.sampled_from(['', 'x', 'é', '北', '\U0001f600'])


def dumps(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


@given(TEXTS)
def test_quoted_equals_json_dumps(s: str) -> None:
    assert escape_json_string(s) == dumps(s)


@given(PREFIXES, TEXTS, PREFIXES)
def test_body_of_a_slice(prefix: str, s: str, suffix: str) -> None:
    text = prefix + s + suffix
    got = escape_json_string(text, len(prefix), len(prefix) + len(s), quote=False)
    want = dumps(s)[1:-1]
    assert got == want
    # Same canonical representation (narrowest kind): equal hashes, and the ASCII flag matches.
    assert hash(got) == hash(want) and got.isascii() == want.isascii()


@pytest.mark.parametrize('code', range(0x20))
def test_every_control_character(code: int) -> None:
    s = f'before {chr(code)} after, long enough for the vector path'
    assert escape_json_string(s) == dumps(s)


def test_bad_range() -> None:
    with pytest.raises(ValueError):
        escape_json_string('abc', 2, 1)
    with pytest.raises(ValueError):
        escape_json_string('abc', -1)


@pytest.mark.parametrize('filler', ['a', 'é', '北', '\U0001f600'])
def test_escape_at_every_position(filler: str) -> None:
    # Every position relative to the 16-byte blocks, alone, adjacent and at both ends.
    for n in range(0, 40):
        for p in range(n):
            for special in ('"', '\x01'):
                s = filler * p + special + filler * (n - p - 1)
                assert escape_json_string(s) == dumps(s), (n, p)
                t = s[:p + 1] + '\\' + s[p + 1:]
                assert escape_json_string(t, 0, len(t), quote=False) == dumps(t)[1:-1], (n, p)


@pytest.mark.parametrize('filler', ['a', 'é', '北', '\U0001f600'])
def test_long_strings_both_paths(filler: str) -> None:
    # Short strings are escaped in one pass on the stack, long ones in two passes.
    for n in (300, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 5000):
        for s in (filler * n, (filler * 7 + '"\n\\\x01') * (n // 11), '\x02' * n):
            assert escape_json_string(s) == dumps(s), n
            assert escape_json_string('x' + s + 'y', 1, len(s) + 1, quote=False) == dumps(s)[1:-1], n
