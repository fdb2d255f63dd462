"""Bounded memory: retained buffer per mode, a parser instance's own size; fixture coverage."""
from __future__ import annotations

import pytest

from bench.conftest import MEMORY_LINES, MISSING_DIALECTS
from bench.fixtures import BenchFixture, load_all
from bench.memory import buffer_figures, instance_bytes

FIXTURES = load_all()
# Longest partial key / name / close tag a JSON envelope may keep in our fixtures.
TOOL_MODE_BOUND = 64


@pytest.mark.parametrize('fixture', FIXTURES, ids=lambda f: f.id)
def test_retained_buffer(fixture: BenchFixture) -> None:
    figs = buffer_figures(fixture, chunk=1)
    if figs is None:
        pytest.skip(f'{fixture.response_parser!r} response parser has no shared pending buffer')
    for mode in ('plain', 'reasoning'):
        # A held suffix is a proper prefix of some marker (after the newlines
        # that may separate two tool blocks): shorter than the longest marker.
        assert figs.max_held_tag.get(mode, 0) < max(figs.longest_marker, 1), (mode, figs)
    assert figs.max_pending.get('tool', 0) <= max(TOOL_MODE_BOUND, figs.longest_marker), figs
    new, after = instance_bytes(fixture)
    MEMORY_LINES.append(
        f'{fixture.id:<28} max retained chars (1-char chunks): '
        + ', '.join(f'{m} {n}' for m, n in sorted(figs.max_pending.items()))
        + f' | longest marker {figs.longest_marker} | parser + adjusted request: {new} B new, {after} B after stream')
    # The instance keeps no copy of the text it has streamed.
    assert after - new < 4096, (new, after)


def test_fixture_coverage() -> None:
    """Report registered tool and response parsers that have no benchmark fixture (they land concurrently)."""
    from lmparse import ResponseParserManager, ToolParserManager

    covered = {ToolParserManager.get(f.tool_parser) for f in FIXTURES if f.tool_parser in ToolParserManager}
    for name, cls in ToolParserManager.module_dict.items():
        if cls not in covered and name not in MISSING_DIALECTS:
            MISSING_DIALECTS.append(name)
    responses = {f.response_parser for f in FIXTURES}
    for name in ResponseParserManager.module_dict:
        label = f'{name} (response parser)'
        if name not in responses and label not in MISSING_DIALECTS:
            MISSING_DIALECTS.append(label)
    assert covered, 'no benchmark fixtures registered'
