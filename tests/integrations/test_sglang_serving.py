"""Opt-in lane: lmparse's SGLang detectors inside SGLang 0.5.23's own serving-chat stream (LMPARSE_SGLANG=1).

    tools/install_peers.sh VENV                       # sglang==0.5.23 --no-deps + what it imports (CPU torch)
    python setup.py build_ext --inplace -j2           # any CPython 3.11
    LMPARSE_SGLANG=1 VENV/bin/python -m pytest tests/integrations/test_sglang_serving.py -q

Every benchmark fixture (the lmparse corpus) whose dialect SGLang also parses
goes through ``OpenAIServingChat._generate_chat_stream`` (see
``bench/engine_sglang.py``) at several chunkings: 1, 4, 16 and 256 units with
special tokens whole (real DeepSeek tokens for the DeepSeek fixtures), 3 and 7
characters cutting special tokens anywhere, and the whole output as one chunk.

- With the ``lmparse-<name>`` detectors the SSE stream must rebuild exactly
  lmparse's own result (which must be the fixture's expected result).
- With SGLang's own detector it must rebuild the same result, except the cases
  listed in :data:`SGLANG_WRONG` (each with the reason SGLang is wrong there):
  such a case xfails with its reason; an unlisted difference fails.

Skips cleanly without LMPARSE_SGLANG=1 or without sglang.
"""
from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from bench.fixtures import BenchFixture, char_chunks, load_all

_ENABLED = os.environ.get('LMPARSE_SGLANG') == '1'
pytestmark = pytest.mark.skipif(not _ENABLED, reason='opt-in: set LMPARSE_SGLANG=1 (SGLang serving-chat lane)')
if _ENABLED:
    from bench import engine_sglang as E
    from bench.chunking import fixture_chunks
    from bench.compare_peers import PeerTimeout, Unsupported, peer_row, verdict
    if not E.available():
        pytestmark = pytest.mark.skip(reason='sglang==0.5.23 is not installed (tools/install_peers.sh)')

# A stream of SGLang's own parser slower than this (seconds) is not judged: several are quadratic.
ENGINE_TIMEOUT = float(os.environ.get('LMPARSE_SGLANG_TIMEOUT', '10'))

CHUNKINGS: dict[str, Callable[[BenchFixture], list[str]]] = {
    'tags1': lambda f: fixture_chunks(f, 1),
    'tags4': lambda f: fixture_chunks(f, 4),
    'tags16': lambda f: fixture_chunks(f, 16),
    'tags256': lambda f: fixture_chunks(f, 256),
    'split3': lambda f: char_chunks(f.text, 3),
    'split7': lambda f: char_chunks(f.text, 7),
    'whole': lambda f: [f.text],
}

# (SGLang tool parser, chunkings or '*') -> why SGLang's own result is wrong there. Filled from the lane's findings.
SGLANG_WRONG: dict[tuple[str, str], str] = {}


def _fixtures() -> list[BenchFixture]:
    out = []
    for f in load_all():
        if f.response_parser != 'default' or f.tool_parser is None:
            continue
        if _ENABLED and peer_row(f) is None:
            continue
        out.append(f)
    return out


FIXTURES = _fixtures() if _ENABLED else []


def _chunks(f: BenchFixture, chunking: str) -> list[str]:
    try:
        return CHUNKINGS[chunking](f)
    except LookupError as why:  # the fixture's tokenizer is not installed
        pytest.skip(str(why))


@pytest.mark.parametrize('chunking', list(CHUNKINGS))
@pytest.mark.parametrize('fixture', FIXTURES, ids=lambda f: f.id)
def test_plugin_equals_lmparse(fixture: BenchFixture, chunking: str) -> None:
    chunks = _chunks(fixture, chunking)
    want = E.lmparse_result(fixture, chunks)
    assert want == fixture.expected
    got, finish = E.served(fixture, 'plugin').parse(chunks)
    assert got == want
    assert finish == ('tool_calls' if want.calls else 'stop')


@pytest.mark.parametrize('chunking', list(CHUNKINGS))
@pytest.mark.parametrize('fixture', FIXTURES, ids=lambda f: f.id)
def test_engine_equals_lmparse_where_right(fixture: BenchFixture, chunking: str) -> None:
    chunks = _chunks(fixture, chunking)
    want = E.lmparse_result(fixture, chunks)
    try:
        s = E.served(fixture, 'engine')
    except Unsupported as why:
        pytest.skip(str(why))
    try:
        got, _finish = s.parse(chunks, ENGINE_TIMEOUT)
    except PeerTimeout:
        pytest.skip(f"SGLang's own stream took over {ENGINE_TIMEOUT:g}s")
    v = verdict(got, want)
    if v == 'ok':
        return
    tool = E.names_for(fixture, 'engine')[0]
    reason = SGLANG_WRONG.get((str(tool), chunking)) or SGLANG_WRONG.get((str(tool), '*'))
    if reason is not None:
        pytest.xfail(f'{v}: {reason}')
    pytest.fail(f'SGLang {tool} differs from lmparse ({v}) and no reason is listed\n'
                f'  SGLang: {str(got)[:300]}\n  lmparse: {str(want)[:300]}')
