"""Loading a chat template and rendering it the way transformers does, inside jinja2's sandbox.

The environment mirrors transformers' ``_compile_jinja_template``
(``src/transformers/utils/chat_template_utils.py``): an
``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and ``lstrip_blocks``,
the ``loopcontrols`` extension, a ``{% generation %}`` block tag (rendered as
its body), a ``tojson`` filter that is ``json.dumps`` (no HTML escaping,
``ensure_ascii=False`` by default, ``indent`` / ``separators`` / ``sort_keys``
exposed), and the globals ``raise_exception`` and ``strftime_now``. Template
code never runs outside the sandbox; ``strftime_now`` reads a fixed date so
derivation is deterministic.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from lmparse.templates._errors import TemplateDerivationError

__all__ = ['ChatTemplate', 'load_chat_template']

# strftime_now() in derivation: a fixed instant, so a template's date line never changes the result.
_FIXED_NOW = datetime(2026, 1, 15, 12, 0, 0)


def _jinja() -> Any:
    try:
        import jinja2
        import jinja2.ext
        import jinja2.meta
        import jinja2.sandbox
    except ImportError:
        raise ImportError('deriving a dialect from a chat template needs jinja2: pip install "lmparse[templates]" '
                          '(or pip install "jinja2>=3.1,<4")') from None
    return jinja2


def _environment() -> Any:
    jinja2 = _jinja()
    from jinja2.ext import Extension, loopcontrols

    class _Generation(Extension):
        """transformers' ``{% generation %}...{% endgeneration %}`` (marks trainable text): renders its body."""

        tags = {'generation'}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(['name:endgeneration'], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method('_body'), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return str(caller())

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        return _FIXED_NOW.strftime(fmt)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=[_Generation, loopcontrols])
    env.filters['tojson'] = tojson
    env.globals['raise_exception'] = raise_exception
    env.globals['strftime_now'] = strftime_now
    return env


@dataclass
class ChatTemplate:
    """A chat template's Jinja source, where it came from, and the special tokens it is rendered with."""

    source: str
    origin: str = '<string>'
    special_tokens: dict[str, str] = field(default_factory=dict)
    _compiled: Any = field(default=None, repr=False, compare=False)
    _variables: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def _template(self) -> Any:
        if self._compiled is None:
            jinja2 = _jinja()
            env = _environment()
            try:
                self._compiled = env.from_string(self.source)
                self._variables = frozenset(jinja2.meta.find_undeclared_variables(env.parse(self.source)))
            except jinja2.TemplateError as err:
                raise TemplateDerivationError('template', f'the Jinja source does not compile: {err}') from None
        return self._compiled

    @property
    def variables(self) -> frozenset[str]:
        """The names the template reads from its context (``enable_thinking``, ``tools``, ...)."""
        self._template()
        assert self._variables is not None
        return self._variables

    def render(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None,
               add_generation_prompt: bool, **kwargs: Any) -> str:
        """The template applied as transformers' ``apply_chat_template(tokenize=False)`` applies it."""
        template = self._template()
        context = {**self.special_tokens, **kwargs}
        return str(template.render(messages=messages, tools=tools, documents=None,
                                   add_generation_prompt=add_generation_prompt, **context))


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    content = value.get('content') if isinstance(value, dict) else None
    return content if isinstance(content, str) else None


def _special_tokens(config: dict[str, Any]) -> dict[str, str]:
    out = {}
    for name in ('bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token'):
        text = _token_text(config.get(name))
        if text is not None:
            out[name] = text
    return out


def _from_config(doc: dict[str, Any], origin: str) -> tuple[str | None, dict[str, str]]:
    """The tool-use template of a tokenizer config (named templates: 'tool_use', then 'default')."""
    template = doc.get('chat_template')
    if isinstance(template, list):
        named = {t.get('name'): t.get('template') for t in template if isinstance(t, dict)}
        template = named.get('tool_use') or named.get('default')
    return (template if isinstance(template, str) else None), _special_tokens(doc)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding='utf-8'))
    except (OSError, ValueError) as err:
        raise TemplateDerivationError('template', f'cannot read {path}: {err}') from None
    if not isinstance(doc, dict):
        raise TemplateDerivationError('template', f'{path} is not a JSON object')
    return doc


def load_chat_template(source: Any, *, special_tokens: dict[str, str] | None = None) -> ChatTemplate:
    """A :class:`ChatTemplate` from Jinja source, a ``.jinja`` / ``tokenizer_config.json`` /
    ``chat_template.json`` file, a model folder, or a tokenizer (its ``chat_template`` attribute).

    A folder is read as transformers reads it: ``chat_template.jinja``, else
    ``chat_template.json``, else ``tokenizer_config.json``'s ``chat_template``
    (a list of named templates gives ``tool_use``, else ``default``); the
    special tokens (``bos_token``, ``eos_token``, ...) come from
    ``tokenizer_config.json``.
    """
    if isinstance(source, ChatTemplate):
        return source
    tokens = dict(special_tokens or {})
    if not isinstance(source, (str, os.PathLike)):
        template = getattr(source, 'chat_template', None)
        if isinstance(template, dict):
            template = template.get('tool_use') or template.get('default')
        if not isinstance(template, str):
            raise TemplateDerivationError('template', f'{type(source).__name__} carries no chat_template')
        for name in ('bos_token', 'eos_token'):
            text = _token_text(getattr(source, name, None))
            if text is not None:
                tokens.setdefault(name, text)
        return ChatTemplate(template, f'{type(source).__name__}.chat_template', tokens)
    text = os.fspath(source)
    if isinstance(source, str) and ('{%' in text or '{{' in text):
        return ChatTemplate(text, '<string>', tokens)
    path = Path(text).expanduser()
    if path.is_dir():
        config_path = path / 'tokenizer_config.json'
        config = _read_json(config_path) if config_path.is_file() else {}
        from_config, config_tokens = _from_config(config, str(config_path))
        tokens = {**config_tokens, **tokens}
        if (path / 'chat_template.jinja').is_file():
            return ChatTemplate((path / 'chat_template.jinja').read_text(encoding='utf-8'),
                                str(path / 'chat_template.jinja'), tokens)
        if (path / 'chat_template.json').is_file():
            doc = _read_json(path / 'chat_template.json')
            if isinstance(doc.get('chat_template'), str):
                return ChatTemplate(doc['chat_template'], str(path / 'chat_template.json'), tokens)
        if from_config is not None:
            return ChatTemplate(from_config, str(config_path), tokens)
        raise TemplateDerivationError('template', f'{path} has no chat template (chat_template.jinja, '
                                                  'chat_template.json or tokenizer_config.json "chat_template")')
    if path.is_file():
        if path.suffix == '.json':
            doc = _read_json(path)
            template, config_tokens = _from_config(doc, str(path))
            if template is None:
                raise TemplateDerivationError('template', f'{path} has no "chat_template" string')
            return ChatTemplate(template, str(path), {**config_tokens, **tokens})
        return ChatTemplate(path.read_text(encoding='utf-8'), str(path), tokens)
    raise TemplateDerivationError('template', f'{text!r} is neither Jinja source nor an existing file or folder')
