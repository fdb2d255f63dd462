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
from typing import Any

from lmparse.templates._errors import TemplateDerivationError
from lmparse.templates._render import ChatTemplate, load_chat_template

__all__ = ['ChatTemplate', 'DerivedDialect', 'TemplateDerivationError', 'derive_dialect', 'from_chat_template',
           'load_chat_template']

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
    key = hashlib.sha256(repr((tpl.source, sorted(tpl.special_tokens.items()))).encode()).hexdigest()
    cached = _DERIVED.get(key)
    if cached is None:
        cached = _DERIVED[key] = derive(tpl)
    return cached


def from_chat_template(source: Any, *, tokenizer: Any = None, special_tokens: dict[str, str] | None = None) -> Any:
    """A :class:`BaseResponseParser` subclass for the dialect derived from ``source`` (see :func:`derive_dialect`).

    ``tokenizer`` (optional) is attached as ``with_parsers`` attaches it; when
    ``source`` is None it is the tokenizer's ``chat_template`` that is read.
    """
    dialect = derive_dialect(tokenizer if source is None else source, special_tokens=special_tokens)
    return dialect.response_parser(tokenizer)
