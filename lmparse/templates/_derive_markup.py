"""Derivation for markup the generic readers in ``_derive`` do not cover: namespace-marked elements.

- **Valued thinking switches.** A template that opens reasoning for a
  *value* of a variable (``thinking_mode == "enabled"``, MiniMax M3) rather
  than for a true ``enable_thinking`` / ``thinking``: every string a
  thinking-named variable is compared with in the template's own code
  becomes a setting to render, and the values whose prompt opens the
  reasoning become ``thinking_values``.
- **Namespace-marked elements** (MiniMax M3): ``NS<BLOCK>``,
  ``NS<INVOKE ATTR="NAME">``, one ``NS<KEY>value NS</KEY>`` element per
  argument (child elements for objects, ``<item>`` for lists),
  ``NS</INVOKE>``, ``NS</BLOCK>``, on :class:`NsElementToolParser`. The
  namespace is the text the template writes before the invoke tag, a
  parameter tag and a parameter close tag alike.
"""
from __future__ import annotations

import re
from typing import Any

from lmparse.templates._errors import TemplateDerivationError

__all__ = ['derive_ns_elements', 'valued_settings']

# a variable the template compares with strings counts as a thinking switch when its name says so
_THINKING_NAME = re.compile(r'think', re.IGNORECASE)


def valued_settings(source: str, variables: frozenset[str], boolean: tuple[str, ...]) -> list[dict[str, Any]]:
    """``{variable: value}`` for each string a thinking-named template variable is compared with
    (``thinking_mode == 'enabled'``), in source order; ``boolean`` variables are rendered as True / False
    elsewhere and are left out."""
    from lmparse.templates._render import _environment

    nodes = __import__('jinja2').nodes
    tree = _environment().parse(source)
    found: dict[tuple[str, str], None] = {}
    for cmp in tree.find_all(nodes.Compare):
        operands = [cmp.expr] + [op.expr for op in cmp.ops]
        names = [o.name for o in operands if isinstance(o, nodes.Name)]
        values = [o.value for o in operands if isinstance(o, nodes.Const) and isinstance(o.value, str)]
        for name in names:
            if name in variables and name not in boolean and _THINKING_NAME.search(name):
                for value in values:
                    found[(name, value)] = None
    return [{name: value} for name, value in found]


def _common_suffix(texts: list[str]) -> str:
    first = texts[0]
    n = 0
    while n < len(first) and all(len(t) > n and t[-1 - n] == first[-1 - n] for t in texts):
        n += 1
    return first[len(first) - n:]


_INVOKE = re.compile(r'<(?P<el>[A-Za-z_][\w.:-]*) (?P<attr>[\w:-]+)="get_weather">')


def derive_ns_elements(outputs: dict[str, str], declaration: Any, base: type) -> Any:
    """A ``declaration(family, base, attrs)`` for namespace-marked element calls, None when the call is not
    ``<INVOKE ATTR="NAME">`` followed by ``<city>`` elements; :class:`TemplateDerivationError` when it is,
    but in a shape the namespace-element family cannot read."""
    one = outputs['one call']
    invoke = _INVOKE.search(one)
    if invoke is None:
        return None
    key = one.find('<city>', invoke.end())
    key_close = one.find('</city>', key)
    if key < 0 or key_close < 0:
        return None  # arguments are not elements named after them (attribute-named, XML-like markup)
    where = f'in the rendered call {one!r}'
    ns = _common_suffix([one[:invoke.start()], one[:key], one[:key_close]]).lstrip()
    if not ns or any(c.isspace() for c in ns):
        raise TemplateDerivationError('tool_calls', 'the arguments are elements named after them (<city>...</city>) '
                                                    'without one namespace marker before every tag; the '
                                                    'namespace-element family (ns_elements) reads only tags after '
                                                    f'its namespace (MiniMax M3\'s "]<]minimax[>[") {where}')
    blocks = list(re.finditer(re.escape(ns) + r'<(?P<block>[A-Za-z_][\w.:-]*)>', one))
    block = next((b for b in reversed(blocks) if b.end() <= invoke.start() - len(ns)), None)
    if block is None:
        raise TemplateDerivationError('tool_calls', f'the calls have no {ns}<BLOCK> tag before the first '
                                                    f'{ns}<{invoke.group("el")} ...> {where}')
    name = block.group('block')
    if not one.rstrip().endswith(f'{ns}</{name}>') or f'{ns}</{invoke.group("el")}>' not in one:
        raise TemplateDerivationError('tool_calls', f'the calls do not end with {ns}</{invoke.group("el")}> and '
                                                    f'{ns}</{name}> {where}')
    attrs = {'namespace': ns, 'tool_calls_element': name, 'invoke_element': invoke.group('el'),
             'call_name_attribute': invoke.group('attr')}
    return declaration('namespace elements', base, attrs)
