"""Sphinx configuration for the lmparse documentation (build: see docs/README or .ci/run)."""
from __future__ import annotations

project = 'lmparse'
author = 'lmparse developers'
copyright = 'lmparse developers'
release = version = '0.1.0'

extensions = [
    'myst_parser',
    'autoapi.extension',
]

# .rst only for the pages autoapi writes at build time (reference/api, not committed).
source_suffix = {'.md': 'markdown', '.rst': 'restructuredtext'}
root_doc = 'index'
exclude_patterns = ['_build']

# MyST: heading anchors so [text](page.md#heading) links are checked offline by -n -W.
myst_heading_anchors = 4
myst_enable_extensions = ['colon_fence', 'deflist']

# API reference generated from the code: autoapi reads the .py modules and the .pyi stubs of the
# compiled modules (it prefers the stub when both exist); nothing is imported.
autoapi_type = 'python'
autoapi_dirs = ['../lmparse']
autoapi_root = 'reference/api'
autoapi_file_patterns = ['*.pyi', '*.py']
autoapi_options = ['members', 'undoc-members', 'show-inheritance', 'show-module-summary']
autoapi_keep_files = False
autoapi_add_toctree_entry = False

html_theme = 'furo'
html_title = 'lmparse'

# -n (nitpicky) checks every cross-reference. Targets outside lmparse (the standard library, the
# engines, pydantic) have no inventory offline, and private helpers are not documented: ignore those
# only; a broken reference to an lmparse name or page still fails the build.
nitpick_ignore_regex = [
    ('py:.*', r'(?!lmparse\b).*\..*'),  # dotted names outside lmparse: collections.abc.Sequence, vllm...
    ('py:.*', r'_.*|.*\._.*'),  # private names
]

# Ambiguous short names in annotations (``type`` is an attribute of two protocol classes) resolve to
# the first match; Sphinx reports them as ref.python, which says nothing about a broken link.
suppress_warnings = ['ref.python']


def _resolve_short_name(app, env, node, contnode):
    """Resolve ``ReasoningParser`` / ``lmparse.BaseResponseParser`` (a re-export) to the one lmparse object
    of that name, as a reader would; several candidates or none leave the reference unresolved (a warning)."""
    if node.get('refdomain') != 'py':
        return None
    from sphinx.util.nodes import make_refnode

    target = node['reftarget'].lstrip('~.')
    if target.startswith('lmparse.'):
        target = target.rsplit('.', 1)[-1]
    if '.' in target:
        return None
    objects = env.get_domain('py').objects
    hits = [name for name in objects if name.startswith('lmparse.') and name.rsplit('.', 1)[-1] == target]
    module = node.get('py:module') or ''
    if len(hits) > 1 and module:  # prefer the referring module's own object
        hits = [name for name in hits if name.startswith(module + '.')] or hits
    if len(hits) != 1:
        # A name lmparse defines but does not export (a type alias outside __all__): plain text.
        defined = getattr(env, 'autoapi_all_objects', {})
        if not hits and any(name.rsplit('.', 1)[-1] == target for name in defined):
            return contnode
        return None
    entry = objects[hits[0]]
    return make_refnode(app.builder, node['refdoc'], entry.docname, entry.node_id, contnode, hits[0])


_RST_CHECK: dict[str, object] = {}


def _rst_problems(text):
    """Whether bare docutils reports anything (warnings and worse) for ``text`` as reStructuredText."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.readers.standalone import Reader
    from docutils.utils import new_document

    if not _RST_CHECK:  # building the settings is the expensive part: once per build
        settings = get_default_settings(Parser, Reader)
        settings.report_level = 2
        settings.halt_level = 5
        settings.warning_stream = False  # collected from the tree instead
        settings.file_insertion_enabled = False
        settings.raw_enabled = False
        _RST_CHECK.update(parser=Parser(), reader=Reader(), settings=settings)
    document = new_document('<docstring>', _RST_CHECK['settings'])
    reported: list[nodes.system_message] = []
    document.reporter.attach_observer(reported.append)
    _RST_CHECK['parser'].parse(text, document)
    # Some problems (undefined |substitutions|, unknown link targets) show only in the transforms.
    document.transformer.populate_from_components((_RST_CHECK['parser'], _RST_CHECK['reader']))
    document.transformer.apply_transforms()
    return any(message['level'] >= 2 for message in reported)


def _literal_if_invalid(app, what, name, obj, options, lines):
    """Render a docstring that is not valid reStructuredText as text, word for word.

    Docstrings are written for readers of the source (chat-template syntax such as ``<|channel|>``
    is everywhere); one that docutils cannot parse cleanly is shown verbatim rather than failing the
    -W build or rendering as something it does not say. ``sphinx-build -v`` lists them.
    """
    import re

    text = '\n'.join(lines)
    if not text.strip():
        return
    # Sphinx roles (:class:`X`) are unknown to bare docutils: check them as literals.
    if not _rst_problems(re.sub(r':[\w:.-]+:`([^`]*)`', r'``\1``', text)):
        return
    from sphinx.util import logging

    logging.getLogger(__name__).verbose('docstring of %s is not valid reST: shown as text', name)
    # The first line stays the summary (autosummary tables), every character escaped; the rest verbatim.
    first, *rest = text.strip('\n').splitlines()
    lines[:] = [re.sub(r'([^\w\s])', r'\\\1', first.strip()), '']
    if any(line.strip() for line in rest):
        lines += ['::', ''] + ['    ' + line for line in rest] + ['']


def setup(app):
    app.connect('missing-reference', _resolve_short_name)
    app.connect('autodoc-process-docstring', _literal_if_invalid)
