"""Dialects derived from a model's chat template, accepted only when proved by round trip.

``from_chat_template(source)`` returns a configured response-parser class
(as :meth:`BaseResponseParser.with_parsers` does for named parsers) whose
reasoning and tool parsers are declarations on lmparse's compiled families,
derived from how the template renders synthetic assistant turns
(``lmparse.templates._derive``). ``derive_dialect(source)`` returns the
:class:`DerivedDialect` itself (its declarations, notes, and
``python_source()`` to commit it as a normal dialect). Anything that cannot
be derived and proved raises :class:`TemplateDerivationError`. Needs jinja2
(``pip install "lmparse[templates]"``); template code runs only inside
jinja2's sandbox.
"""
from __future__ import annotations

import hashlib
import importlib
import os
from typing import Any

from lmparse.templates._errors import TemplateDerivationError
from lmparse.templates._render import ChatTemplate, load_chat_template

__all__ = ['ChatTemplate', 'DerivedDialect', 'TemplateDerivationError', 'derive_dialect', 'from_chat_template',
           'load_chat_template', 'register_derived']

_DERIVED: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    # DerivedDialect lives with the derivation, which imports the compiled families: loaded on first use
    if name == 'DerivedDialect':
        return importlib.import_module('lmparse.templates._derive').DerivedDialect
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def derive_dialect(source: Any, *, special_tokens: dict[str, str] | None = None) -> Any:
    """The :class:`DerivedDialect` of a chat template (Jinja source, a ``.jinja`` / ``tokenizer_config.json``
    file, a model folder or a tokenizer); :class:`TemplateDerivationError` when it cannot be derived and proved.

    Deterministic; results are cached per template source and special tokens.
    """
    from lmparse.templates._derive import derive_dialect as derive

    tpl = load_chat_template(source, special_tokens=special_tokens)
    key = _key(tpl)
    cached = _DERIVED.get(key)
    if cached is None:
        cached = _DERIVED[key] = derive(tpl)
    return cached


def _key(tpl: ChatTemplate) -> str:
    return hashlib.sha256(repr((tpl.source, sorted(tpl.special_tokens.items()))).encode()).hexdigest()


def register_derived(source: Any, *, special_tokens: dict[str, str] | None = None) -> tuple[str | None, str | None]:
    """Derive from ``source`` (see :func:`derive_dialect`) and register the derived classes with lmparse's
    registries as ``chat-template-<digest>``: ``(reasoning name, tool name)``, None where the template has none.

    For code that looks parsers up by name (the engine plugins' ``lmparse-auto``). Idempotent per template;
    the ``LMPARSE_CHAT_TEMPLATE`` environment variable (a template file or model folder) replaces ``source``.
    """
    from lmparse.registry import ReasoningParserManager, ToolParserManager

    override = os.environ.get('LMPARSE_CHAT_TEMPLATE')
    tpl = load_chat_template(override if override else source, special_tokens=special_tokens)
    dialect = derive_dialect(tpl)
    if getattr(dialect, 'response_parser_cls', None) is not None:
        # Harmony is a response parser of its own, not a reasoning / tool pair the engines compose
        raise TemplateDerivationError('template', 'the chat template is Harmony (gpt-oss), which lmparse parses with '
                                                  'a response parser of its own, not a reasoning / tool parser pair: '
                                                  "use the engine's own gpt-oss parsers, or lmparse's gpt-oss "
                                                  'response parser (lmparse parse / serve --chat-template)')
    name = 'chat-template-' + _key(tpl)[:12]
    if dialect.reasoning_parser is not None:
        ReasoningParserManager.register_module(name, module=dialect.reasoning_parser)
    if dialect.tool_parser is not None:
        ToolParserManager.register_module(name, module=dialect.tool_parser)
    return (name if dialect.reasoning_parser is not None else None,
            name if dialect.tool_parser is not None else None)


def from_chat_template(source: Any, *, tokenizer: Any = None, special_tokens: dict[str, str] | None = None) -> Any:
    """A :class:`BaseResponseParser` subclass for the dialect derived from ``source`` (see :func:`derive_dialect`).

    ``tokenizer`` (optional) is attached as ``with_parsers`` attaches it; when
    ``source`` is None it is the tokenizer's ``chat_template`` that is read.
    """
    dialect = derive_dialect(tokenizer if source is None else source, special_tokens=special_tokens)
    return dialect.response_parser(tokenizer)
