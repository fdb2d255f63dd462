"""The generated reference pages (docs/reference/parsers.md, models.md) are what docs/gen_tables.py writes.

A dialect, alias or model family added without regenerating the pages fails here: run
``python docs/gen_tables.py`` and commit the result. Needs no Sphinx. The pages are generated in a
fresh interpreter: other tests register dialects of their own in the process-wide registries.
"""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / 'docs'

_FRESH = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import gen_tables
from lmparse.registry import ReasoningParserManager, ResponseParserManager, ToolParserManager
print(json.dumps({
    'pages': {path.name: text for path, text in gen_tables.pages().items()},
    'names': {'response': ResponseParserManager.names(), 'reasoning': ReasoningParserManager.names(),
              'tool': ToolParserManager.names()},
}))
'''


def _require_docs() -> None:
    if not (DOCS / 'gen_tables.py').exists():
        pytest.skip('no docs/ beside the tests (an installed wheel is under test)')


@pytest.fixture(scope='module')
def fresh() -> dict[str, dict[str, object]]:
    _require_docs()
    out = subprocess.run([sys.executable, '-c', _FRESH, str(DOCS)], capture_output=True, text=True,
                         encoding='utf-8', cwd=ROOT, check=True)
    result: dict[str, dict[str, object]] = json.loads(out.stdout)
    return result


def _gen_tables() -> ModuleType:
    _require_docs()
    spec = importlib.util.spec_from_file_location('lmparse_docs_gen_tables', DOCS / 'gen_tables.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize('page', ['parsers.md', 'models.md'])
def test_committed_page_is_generated(fresh: dict[str, dict[str, object]], page: str) -> None:
    committed = (DOCS / 'reference' / page).read_text(encoding='utf-8')
    assert committed == fresh['pages'][page], f'docs/reference/{page} is stale: run python docs/gen_tables.py'


def test_every_registered_name_is_in_the_parser_table(fresh: dict[str, dict[str, object]]) -> None:
    text = (DOCS / 'reference' / 'parsers.md').read_text(encoding='utf-8')
    rows = [line for line in text.splitlines() if line.startswith('| ') and not line.startswith('| kind')]
    for kind, registered in fresh['names'].items():
        names = set()
        for row in rows:
            cells = [c.strip() for c in re.split(r'(?<!\\)\|', row)[1:-1]]
            if cells[0] == kind:
                names.update(re.findall(r'`([^`]+)`', cells[1]))
        assert names == set(registered), kind  # type: ignore[arg-type]


def test_user_dialects_are_not_documented() -> None:
    gen = _gen_tables()
    from lmparse.registry import ToolParserManager
    from lmparse.tools.json_parser import JsonToolParser

    class NotLmparses(JsonToolParser):
        tool_open_tag = '<x>'
        tool_close_tag = '</x>'

    name = 'docs-table-test-user-dialect'
    ToolParserManager.register_module(name)(NotLmparses)
    try:
        assert all(row['name'] != name for row in gen.parser_rows())
        assert name not in gen.parsers_page()
    finally:
        ToolParserManager.module_dict.pop(name, None)


def test_syntax_file_rejects_stale_and_malformed_lines(tmp_path: Path) -> None:
    gen = _gen_tables()
    bad = tmp_path / 'syntax.txt'
    bad.write_text('tool qwen `<tool_call>`\n', encoding='utf-8')
    with pytest.raises(ValueError, match='expected "KIND NAME: text"'):
        gen.read_syntax(bad)
    bad.write_text('tool qwen: a\ntool qwen: b\n', encoding='utf-8')
    with pytest.raises(ValueError, match='twice'):
        gen.read_syntax(bad)
    bad.write_text(gen.SYNTAX_FILE.read_text(encoding='utf-8') + 'tool no-such-parser: x\n', encoding='utf-8')
    gen.SYNTAX_FILE = bad
    with pytest.raises(ValueError, match='no-such-parser'):
        gen.parsers_page()


def test_cells_escape_pipes_once() -> None:
    gen = _gen_tables()
    assert gen._cell('`<|a|>` and `<\\|b\\|>`\n  wrapped') == '`<\\|a\\|>` and `<\\|b\\|>` wrapped'
