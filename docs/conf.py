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


def _literal_if_invalid(app, what, name, obj, options, lines):
    """Render a docstring that is not valid reStructuredText as a literal block, word for word.

    Docstrings are written for readers of the source (chat-template syntax such as ``<|channel|>``
    is everywhere); one that docutils cannot parse cleanly is shown verbatim rather than failing the
    -W build or rendering as something it does not say. ``sphinx-build -v`` lists them.
    """
    import io
    import re

    from docutils.core import publish_doctree
    from docutils.utils import SystemMessage

    text = '\n'.join(lines)
    if not text.strip():
        return
    # Sphinx roles (:class:`X`) are unknown to bare docutils: check them as literals.
    probe = re.sub(r':[\w:.-]+:`([^`]*)`', r'``\1``', text)
    stream = io.StringIO()
    try:
        publish_doctree(probe, settings_overrides={
            'report_level': 2, 'halt_level': 5, 'warning_stream': stream, 'file_insertion_enabled': False,
            'raw_enabled': False})
    except SystemMessage:
        stream.write('error')
    if not stream.getvalue():
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
