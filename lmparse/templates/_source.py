"""A derived dialect printed as a dialect module (``lmparse derive``): commit it and it is a normal dialect."""
from __future__ import annotations

import re
from typing import Any

__all__ = ['python_source']

_MODULES = {'JsonToolParser': 'lmparse.tools.json_parser', 'XmlToolParser': 'lmparse.tools.xml_parser',
            'PythonicToolParser': 'lmparse.tools.pythonic', 'SectionToolParser': 'lmparse.tools.sections',
            'JsonHeaderToolParser': 'lmparse.tools.json_header', 'BraceCallToolParser': 'lmparse.tools.brace_call',
            'DsmlToolParser': 'lmparse.tools.dsml', 'NsElementToolParser': 'lmparse.tools.ns_elements'}


def _class_prefix(name: str) -> str:
    words = [w for w in re.split(r'[^0-9A-Za-z]+', name) if w]
    prefix = ''.join(w[:1].upper() + w[1:] for w in words) or 'Derived'
    return prefix if prefix[0].isalpha() else 'Derived' + prefix


def _inherited(base: type, key: str, value: Any) -> bool:
    """The family's own default: a dialect does not restate it."""
    missing = object()
    default = getattr(base, key, missing)
    return default is not missing and type(default) is type(value) and default == value


def _attr_lines(attrs: dict[str, Any]) -> list[str]:
    return [f'    {key} = {value!r}' for key, value in attrs.items()]


def module_header(dialect: Any, name: str) -> tuple[str, list[str]]:
    """The class-name prefix for ``name`` and the opening lines of a derived dialect's module."""
    if not re.fullmatch(r'[A-Za-z0-9_.\-]+', name):
        raise ValueError(f'a parser name is letters, digits, "_", "-" and ".", got {name!r}')
    prefix = _class_prefix(name)
    lines = [f'"""{prefix} dialect, derived by `lmparse derive` from the chat template {dialect.origin}.', '',
             'Proved by round trip on the template\'s own renderings '
             f'({dialect.renderings} renderings, streamed at 1, 4 and 16 characters and whole).']
    lines += [f'Note: {note}' for note in dialect.notes]
    lines += ['"""', 'from __future__ import annotations', '']
    return prefix, lines


def python_source(dialect: Any, name: str) -> str:
    """Python source declaring a :class:`DerivedDialect`'s classes and registering them under ``name``."""
    prefix, lines = module_header(dialect, name)
    imports = ['from lmparse.registry import ReasoningParserManager, ToolParserManager']
    if dialect.reasoning is not None:
        imports.append('from lmparse.reasoning import ReasoningParser')
    if dialect.tools is not None:
        base = dialect.tools.base.__name__
        imports.append(f'from {_MODULES.get(base, dialect.tools.base.__module__)} import {base}')
    lines += sorted(imports) + ['', '']
    if dialect.reasoning is not None:
        r = dialect.reasoning
        attrs: dict[str, Any] = {'reasoning_open_tag': r.open_tag, 'reasoning_close_tag': r.close_tag}
        if not r.open_tag_in_prompt:
            attrs['open_tag_in_prompt'] = False
        if r.thinking_switches:
            attrs['thinking_switches'] = r.thinking_switches
        if getattr(r, 'thinking_values', ()):
            attrs['thinking_values'] = r.thinking_values
        if dialect.content_markers:
            attrs['content_markers'] = dialect.content_markers
        attrs.update(getattr(r, 'framing', ()))  # block headers (Inkling), declared on both parsers
        lines += [f'@ReasoningParserManager.register_module({name!r})',
                  f'class {prefix}ReasoningParser(ReasoningParser):',
                  f'    """{r.open_tag} ... {r.close_tag} (the template\'s {r.field!r} message field)."""', '',
                  *_attr_lines(attrs), '',
                  '    @classmethod',
                  '    def validate_tokenizer(cls, tokenizer):',
                  '        return None  # derived markers need not be single tokens', '', '']
    if dialect.tools is not None:
        t = dialect.tools
        lines += [f'@ToolParserManager.register_module({name!r})',
                  f'class {prefix}ToolParser({t.base.__name__}):',
                  '    """Tool calls as the chat template renders them."""', '',
                  *_attr_lines({k: v for k, v in {**t.attrs, 'request_settings': {'skip_special_tokens': False}}.items()
                                if not _inherited(t.base, k, v)}), '', '']
    return '\n'.join(lines).rstrip('\n') + '\n'
