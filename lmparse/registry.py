"""Name -> class registries for response, reasoning and tool parsers.

A leaf module: it imports nothing from lmparse. Each dialect registers itself
where it is defined (``@ToolParserManager.register_module(...)``), and
importing the ``lmparse`` package imports every built-in dialect, so the
registries are complete before any of their names can be looked up.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

__all__ = [
    'LEGACY_REASONING_PARSER_NAMES',
    'ReasoningParserManager',
    'Registry',
    'ResponseParserManager',
    'ToolParserManager',
    'UnknownParserError',
    'for_tokenizer',
    'RESPONSE_PARSER_NAMES',
    'needs_tokenizer',
    'parser_classes',
    'response_parser_for',
    'validate_parser_names',
]

logger = logging.getLogger('lmparse')

T = TypeVar('T')

# Old --reasoning-parser values that now all mean the unified 'default' parser.
LEGACY_REASONING_PARSER_NAMES: tuple[str, ...] = ('qwen-qwq', 'intern-s1', 'deepseek-r1')

# Engine tool / reasoning parser names that stand for a whole lmparse response parser: Harmony
# (gpt-oss) has its own channels, so vLLM's ``openai`` (tool) / ``openai_gptoss`` (reasoning) and
# SGLang's ``gpt-oss`` (both) name lmparse's ``gpt-oss`` response parser, not a dialect pair.
# ``BaseResponseParser.with_parsers`` returns that parser's class for them.
RESPONSE_PARSER_NAMES: dict[str, str] = {'openai': 'gpt-oss', 'openai_gptoss': 'gpt-oss', 'gpt-oss': 'gpt-oss'}


class UnknownParserError(KeyError, ValueError):
    """A parser name that is not registered.

    Subclasses both KeyError (registry lookup semantics) and ValueError (what
    CLI/config validation callers catch).
    """

    def __init__(self, message: str, *, name: Any = None, registry: str | None = None,
                 known: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.name = name
        self.registry = registry
        self.known: list[str] = list(known)

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the message and wrap it in quotes.
        return self.message


class Registry:
    """A named mapping of parser names to classes (mmengine-style API)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._module_dict: dict[str, Any] = {}

    @property
    def module_dict(self) -> dict[str, Any]:
        """The live name -> class dict, in registration order."""
        return self._module_dict

    def _kind(self) -> str:
        return self.name.replace('_', ' ')

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._module_dict)

    def unknown_error(self, name: Any) -> UnknownParserError:
        """Build the error raised for an unregistered ``name``."""
        known = self.names()
        return UnknownParserError(f'The {self._kind()} {name!r} is not in the parser list: {known}',
                                  name=name, registry=self.name, known=known)

    def get(self, name: str) -> Any:
        """Return the class registered as ``name``; raise UnknownParserError otherwise."""
        try:
            return self._module_dict[name]
        except (KeyError, TypeError):
            raise self.unknown_error(name) from None

    def _register(self, module: Any, name: str | Sequence[str] | None, force: bool) -> None:
        if not callable(module):
            raise TypeError(f'module must be a class or callable, got {type(module).__name__}')
        if name is None:
            if not isinstance(getattr(module, '__name__', None), str):
                raise TypeError('name is required for a module without a __name__')
            names = [module.__name__]
        elif isinstance(name, str):
            names = [name]
        elif isinstance(name, (list, tuple)) and all(isinstance(n, str) for n in name):
            names = list(name)
        else:
            raise TypeError(f'name must be None, a str or a list/tuple of str, got {name!r}')
        # Check every name first so a failed registration changes nothing.
        if not force:
            for n in names:
                existing = self._module_dict.get(n)
                if existing is not None and existing is not module:
                    raise KeyError(f'{n!r} is already registered in the {self.name} registry '
                                   f'(as {existing!r}); pass force=True to replace it')
        for n in names:
            self._module_dict[n] = module

    def register_module(self, name: str | Sequence[str] | None = None, force: bool = False,
                        module: Any = None) -> Any:
        """Register ``module`` under ``name`` (a str, list/tuple of str, or None).

        Usable as ``@registry.register_module('x')`` or
        ``registry.register_module('x', module=C)``; both return the class.
        """
        if not isinstance(force, bool):
            raise TypeError(f'force must be a bool, got {type(force).__name__}')
        if module is not None:
            self._register(module, name, force)
            return module

        def decorator(cls: T) -> T:
            self._register(cls, name, force)
            return cls

        return decorator

    def __contains__(self, name: object) -> bool:
        try:
            return name in self._module_dict
        except TypeError:
            return False

    def __len__(self) -> int:
        return len(self._module_dict)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._module_dict))

    def __repr__(self) -> str:
        return f'Registry(name={self.name!r}, items={list(self._module_dict)!r})'


ResponseParserManager = Registry('response_parser')
ReasoningParserManager = Registry('reasoning_parser')
ToolParserManager = Registry('tool_parser')


def validate_parser_names(
    reasoning_parser_name: str | None = None,
    tool_parser_name: str | None = None,
    *,
    warn_legacy: bool = True,
) -> tuple[str | None, str | None]:
    """Validate parser names up front (before expensive engine start-up).

    Legacy reasoning parser names are mapped to 'default'. Unknown names raise
    :class:`UnknownParserError` (a ValueError) listing the known names.
    """
    if reasoning_parser_name in LEGACY_REASONING_PARSER_NAMES:
        if warn_legacy:
            logger.warning("The reasoning parser %r is deprecated; using the 'default' reasoning parser instead.",
                           reasoning_parser_name)
        reasoning_parser_name = 'default'

    if reasoning_parser_name is not None and reasoning_parser_name not in ReasoningParserManager and (
            reasoning_parser_name not in RESPONSE_PARSER_NAMES):
        raise ReasoningParserManager.unknown_error(reasoning_parser_name)
    if tool_parser_name is not None and tool_parser_name not in ToolParserManager and (
            tool_parser_name not in RESPONSE_PARSER_NAMES):
        raise ToolParserManager.unknown_error(tool_parser_name)
    response_parser_for(reasoning_parser_name, tool_parser_name)  # a mixed pair fails here, before start-up
    return reasoning_parser_name, tool_parser_name


def response_parser_for(reasoning_parser_name: str | None, tool_parser_name: str | None) -> str | None:
    """The response parser name the pair stands for (:data:`RESPONSE_PARSER_NAMES`), or None.

    A name registered as a dialect wins (lmparse's own meaning of a shared name). A
    response-parser name takes no dialect beside it: ``ValueError`` for a mixed pair.
    """
    targets = []
    for name, registry in ((reasoning_parser_name, ReasoningParserManager), (tool_parser_name, ToolParserManager)):
        if isinstance(name, str) and name not in registry:
            target = RESPONSE_PARSER_NAMES.get(name)
            targets.append(target)
        elif name is not None:
            targets.append(None)
    found = {t for t in targets if t is not None}
    if not found:
        return None
    if len(found) > 1 or None in targets:
        raise ValueError(f'reasoning parser {reasoning_parser_name!r} and tool parser {tool_parser_name!r}: '
                         f'{" / ".join(sorted(found))} is a response parser of its own and takes no other dialect')
    return found.pop()


def parser_classes(reasoning_parser_name: str | None, tool_parser_name: str | None, tokenizer: Any = None,
                   owner: str = 'BaseResponseParser') -> tuple[Any, Any]:
    """The (reasoning, tool) classes ``owner.set_parsers`` configures for these names and tokenizer.

    Validates the names, resolves ``for_tokenizer`` classes and checks the tokenizer
    against the reasoning class. A name that stands for a response parser
    (:data:`RESPONSE_PARSER_NAMES`) is a ValueError here: a class cannot become another.
    """
    reasoning_parser_name, tool_parser_name = validate_parser_names(reasoning_parser_name, tool_parser_name)
    target = response_parser_for(reasoning_parser_name, tool_parser_name)
    if target is not None:
        raise ValueError(f'{tool_parser_name or reasoning_parser_name!r} names the {target!r} response parser, '
                         f'not a dialect of {owner}: use ResponseParserManager.get({target!r}) '
                         f'(with_parsers returns it)')
    rcls = ReasoningParserManager.get(reasoning_parser_name) if reasoning_parser_name is not None else None
    tcls = ToolParserManager.get(tool_parser_name) if tool_parser_name is not None else None
    rcls, tcls = for_tokenizer(rcls, tokenizer), for_tokenizer(tcls, tokenizer)
    if rcls is not None and tokenizer is not None and hasattr(rcls, 'validate_tokenizer'):
        rcls.validate_tokenizer(tokenizer)
    return rcls, tcls


def needs_tokenizer(cls: Any) -> bool:
    """Whether ``cls`` only stands for a class the served tokenizer decides (it has a ``for_tokenizer`` hook)."""
    return getattr(cls, 'for_tokenizer', None) is not None


def for_tokenizer(cls: Any, tokenizer: Any) -> Any:
    """``cls``, or the class it resolves to for the served tokenizer (``hf``: its ``response_template``)."""
    hook = getattr(cls, 'for_tokenizer', None)
    return cls if hook is None else hook(tokenizer)
