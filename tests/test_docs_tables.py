"""The generated reference pages (docs/reference/parsers.md, models.md) are what docs/gen_tables.py writes.

A dialect, alias or model family added without regenerating the pages fails here: run
``python docs/gen_tables.py`` and commit the result. Needs no Sphinx.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from lmparse.registry import ReasoningParserManager, ResponseParserManager, ToolParserManager

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / 'docs'


def _gen_tables() -> ModuleType:
    if not (DOCS / 'gen_tables.py').exists():
        pytest.skip('no docs/ beside the tests (an installed wheel is under test)')
    spec = importlib.util.spec_from_file_location('lmparse_docs_gen_tables', DOCS / 'gen_tables.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize('page', ['parsers.md', 'models.md'])
def test_committed_page_is_generated(page: str) -> None:
    gen = _gen_tables()
    expected = {path.name: text for path, text in gen.pages().items()}[page]
    committed = (DOCS / 'reference' / page).read_text(encoding='utf-8')
    assert committed == expected, f'docs/reference/{page} is stale: run python docs/gen_tables.py'


def test_every_registered_name_is_in_the_parser_table() -> None:
    _gen_tables()
    text = (DOCS / 'reference' / 'parsers.md').read_text(encoding='utf-8')
    rows = [line for line in text.splitlines() if line.startswith('| ') and not line.startswith('| kind')]
    for kind, registry in (('response', ResponseParserManager), ('reasoning', ReasoningParserManager),
                           ('tool', ToolParserManager)):
        names = set()
        for row in rows:
            cells = [c.strip() for c in re.split(r'(?<!\\)\|', row)[1:-1]]
            if cells[0] == kind:
                names.update(re.findall(r'`([^`]+)`', cells[1]))
        assert names == set(registry.names()), kind


def test_syntax_file_rejects_stale_and_malformed_lines(tmp_path: Path) -> None:
    gen = _gen_tables()
    bad = tmp_path / 'syntax.txt'
    bad.write_text('tool qwen `<tool_call>`\n', encoding='utf-8')
    with pytest.raises(ValueError, match='expected "KIND NAME: text"'):
        gen.read_syntax(bad)
    bad.write_text('tool qwen: a\ntool qwen: b\n', encoding='utf-8')
    with pytest.raises(ValueError, match='twice'):
        gen.read_syntax(bad)
    stale = gen.read_syntax() | {('tool', 'no-such-parser'): 'x'}
    original = gen.read_syntax
    gen.read_syntax = lambda path=None: stale
    try:
        with pytest.raises(ValueError, match='no-such-parser'):
            gen.parsers_page()
    finally:
        gen.read_syntax = original


def test_cells_escape_pipes_once() -> None:
    gen = _gen_tables()
    assert gen._cell('`<|a|>` and `<\\|b\\|>`\n  wrapped') == '`<\\|a\\|>` and `<\\|b\\|>` wrapped'
