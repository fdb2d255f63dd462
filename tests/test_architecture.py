"""The package's shape: no import cycles, public C-API only, modules of a readable size,
and every built-in dialect defined (and registered) in a file named for its model family."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import lmparse
from lmparse.registry import ReasoningParserManager, ResponseParserManager, ToolParserManager

PACKAGE = Path(lmparse.__file__).resolve().parent
SOURCE_SUFFIXES = ('.py', '.pyx', '.pxd')
# Compiled modules get this many lines at most (the project's readability budget).
PYX_MAX_LINES = 700


def _sources() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob('*')):
        if path.suffix not in SOURCE_SUFFIXES or 'build' in path.parts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
        if parts[-1] == '__init__':
            parts = parts[:-1]
        mods['.'.join(parts)] = path
    return mods


_IMPORT = re.compile(r'^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+c?import[ \t]+\(?([\w \t,]+)|c?import[ \t]+([\w.]+))', re.M)


def _imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """lmparse modules that ``module`` imports or cimports anywhere (function-level imports included)."""
    out = set()
    for m in _IMPORT.finditer(path.read_text(encoding='utf-8')):
        source, names, plain = m.groups()
        if plain:
            targets = [plain]
        else:
            targets = []
            for name in names.split(','):
                name = name.strip().split()[0] if name.strip() else ''
                if name and f'{source}.{name}' in known:
                    targets.append(f'{source}.{name}')  # ``from lmparse import request``: the submodule
                elif name:
                    targets.append(source)
        for target in targets:
            while target and target not in known:
                target = target.rpartition('.')[0]
            if target.startswith('lmparse') and target != module:
                out.add(target)
    return out


def test_import_graph_parser_is_not_vacuous() -> None:
    known = _sources()
    graph = {m: _imports(m, p, known) for m, p in known.items()}
    assert 'lmparse.registry' in graph['lmparse.tools.base'] or 'lmparse.protocol' in graph['lmparse.tools.base']
    assert 'lmparse.tools.base' in graph['lmparse.response']  # a cimport
    # The checker sees a cycle when there is one.
    graph['lmparse.registry'] = graph['lmparse.registry'] | {'lmparse.tools.base'}
    graph['lmparse.tools.base'] = graph['lmparse.tools.base'] | {'lmparse.registry'}
    assert _cycle(graph)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycles() -> None:
    known = _sources()
    graph = {m: _imports(m, p, known) for m, p in known.items()}
    cycle = _cycle(graph)
    assert cycle is None, ' -> '.join(cycle or ())


def test_registry_is_a_leaf() -> None:
    known = _sources()
    assert _imports('lmparse.registry', known['lmparse.registry'], known) == set()


# Type-struct fields, member-descriptor internals and raw slot access: none of it is public C-API.
_INTERNALS = re.compile(r'tp_version_tag|PyMemberDescr|slot_peek|lmp_slot|tp_alloc|tp_getattro|tp_setattro|'
                        r'tp_dictoffset|tp_new\b|ob_refcnt|ob_type\b|->tp_|Py_TPFLAGS_VALID_VERSION_TAG')


def test_public_c_api_only() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob('*')):
        if path.suffix in ('.pyx', '.pxd', '.h', '.py') and 'build' not in path.parts:
            for n, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
                if _INTERNALS.search(line):
                    offenders.append(f'{path.relative_to(PACKAGE)}:{n}: {line.strip()}')
    assert not offenders, '\n'.join(offenders)


def test_compiled_modules_stay_readable() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob('*.pyx')
            if (n := len(p.read_text(encoding='utf-8').splitlines())) > PYX_MAX_LINES}
    assert not long, long


def _builtin(registry_items: list[tuple[str, type]]) -> list[tuple[str, type]]:
    return [(n, c) for n, c in registry_items if getattr(c, '__module__', '').startswith('lmparse')]


@pytest.mark.parametrize('registry', [ToolParserManager, ReasoningParserManager, ResponseParserManager],
                         ids=lambda r: r.name)
def test_builtin_dialects_live_in_dialect_files(registry) -> None:
    # The generic bases ('default' reasoning and response parsers) live beside their machinery.
    generic = {lmparse.ReasoningParser, lmparse.BaseResponseParser}
    items = _builtin([(n, registry.get(n)) for n in registry.names()])
    assert items
    for name, cls in items:
        if cls in generic:
            continue
        assert cls.__module__.startswith('lmparse.dialects.'), (name, cls.__module__)


def test_dialect_files_are_declarations() -> None:
    """A dialect file is short: what syntax a dialect accepts fits on a screen or two per dialect."""
    for path in sorted((PACKAGE / 'dialects').glob('*.py')):
        if path.name == '__init__.py':
            continue
        tree = ast.parse(path.read_text(encoding='utf-8'))
        classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
        assert classes, path.name
        for node in classes:
            lines = node.end_lineno - node.lineno + 1
            assert lines <= 60, f'{path.name}:{node.name} is {lines} lines'
