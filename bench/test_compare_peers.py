"""Opt-in lane: lmparse, vLLM 0.33 and SGLang 0.5.23 on every fixture with a peer (LMPARSE_PEERS=1).

    tools/install_peers.sh VENV
    LMPARSE_PEERS=1 VENV/bin/python -m pytest bench/test_compare_peers.py -q

Correctness only (bench/compare_peers.py times them), at 1, 16 and 256-unit
chunks (characters with tags whole; real DeepSeek tokens for the DeepSeek
fixtures). lmparse must reproduce the fixture's expected result; a peer's
mismatch or crash is recorded (printed in the terminal summary), never a
failure. Skips cleanly without LMPARSE_PEERS=1 or without the peers.
"""
from __future__ import annotations

import os

import pytest

from bench.compare_peers import Prepared, check_cell, peer_row, peers_available, prepare_peers
from bench.conftest import PEER_LINES
from bench.fixtures import BenchFixture, load_all

SIZES = (1, 16, 256)
# A peer stream slower than this (seconds) is recorded as a timeout: some peers are quadratic in the text.
PEER_TIMEOUT = float(os.environ.get('LMPARSE_PEERS_TIMEOUT', '20'))

pytestmark = pytest.mark.peers

_ENABLED = os.environ.get('LMPARSE_PEERS') == '1'
_MISSING = peers_available() if _ENABLED else 'opt-in: set LMPARSE_PEERS=1'
FIXTURES = [f for f in load_all() if peer_row(f) is not None]
_peers: list = []


def _load() -> list:
    if not _peers:
        from bench.compare_peers import load_peers
        _peers.extend(load_peers())
    return _peers


@pytest.mark.skipif(_MISSING is not None, reason=f'vLLM/SGLang comparison: {_MISSING}')
@pytest.mark.parametrize('size', SIZES)
@pytest.mark.parametrize('fixture', FIXTURES, ids=lambda f: f.id)
def test_against_peers(fixture: BenchFixture, size: int) -> None:
    row = peer_row(fixture)
    assert row is not None
    preps = prepare_peers(fixture, row, _load())
    try:
        correct, failures, _ = check_cell(fixture, size, preps, timeout=PEER_TIMEOUT)
    except LookupError as why:  # the fixture's tokenizer is not installed
        pytest.skip(str(why))
    if size == SIZES[0]:
        PEER_LINES.extend(f'{name} {fixture.id}: {p}' for name, p in preps.items() if not isinstance(p, Prepared))
    PEER_LINES.extend(line for line in failures if not line.startswith('lmparse'))
    assert correct['lmparse'] == 'ok', correct['lmparse']
