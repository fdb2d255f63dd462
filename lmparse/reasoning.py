"""Reasoning protocol descriptors.

A reasoning "parser" here only describes the protocol (which tags delimit
reasoning, whether output starts inside it); the streaming work itself is
done by the compiled response parser.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lmparse.registry import LEGACY_REASONING_PARSER_NAMES, ReasoningParserManager

__all__ = ['LEGACY_REASONING_PARSER_NAMES', 'ReasoningParser', 'ReasoningParserManager',
           'DeepSeekV3ReasoningParser', 'DeepSeekV32ReasoningParser', 'DeepSeekV4ReasoningParser']


class ReasoningParser:
    """Default ``<think>...</think>`` reasoning protocol.

    Registered as 'default'; the legacy names in
    :data:`LEGACY_REASONING_PARSER_NAMES` resolve to it.
    """

    def __init__(self, **kwargs: Any) -> None:
        # Subclasses read per-request switches (e.g. enable_thinking) from here.
        self.kwargs: dict[str, Any] = kwargs

    @classmethod
    def get_reasoning_open_tag(cls) -> str:
        return '<think>'

    @classmethod
    def get_reasoning_close_tag(cls) -> str:
        return '</think>'

    def starts_in_reasoning_mode(self) -> bool:
        """Whether generation begins inside the reasoning block.

        True because templates commonly put the open tag in the prompt.
        """
        return True

    @classmethod
    def validate_tokenizer(cls, tokenizer: Any) -> None:
        """Fail fast at setup when the tokenizer lacks the reasoning tags."""
        vocab = tokenizer.get_vocab()
        missing = [tag for tag in (cls.get_reasoning_open_tag(), cls.get_reasoning_close_tag())
                   if tag not in vocab]
        if missing:
            raise RuntimeError(f'{cls.__name__} reasoning parser: reasoning tag(s) {missing!r} '
                               f'not found in the tokenizer vocabulary')

    @classmethod
    def token_ids(cls, tokenizer: Any) -> tuple[int | None, int | None]:
        """Vocab ids of the open and close tags (None when a tag is absent)."""
        vocab = tokenizer.get_vocab()
        return vocab.get(cls.get_reasoning_open_tag()), vocab.get(cls.get_reasoning_close_tag())


ReasoningParserManager.register_module('default')(ReasoningParser)


class DeepSeekV3ReasoningParser(ReasoningParser):
    """DeepSeek V3: ``<think>`` tags; output starts in reasoning only when ``enable_thinking is True``.

    Without the switch the model usually answers directly; an explicit
    ``<think>`` it emits still opens reasoning.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.enable_thinking: Any = kwargs.get('enable_thinking', None)

    def starts_in_reasoning_mode(self) -> bool:
        return self.enable_thinking is True


class DeepSeekV32ReasoningParser(ReasoningParser):
    """DeepSeek V3.2 thinking mode: starts in reasoning when ``thinking`` or ``enable_thinking`` is True."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.thinking: Any = kwargs.get('thinking', None)
        self.enable_thinking: Any = kwargs.get('enable_thinking', None)

    def starts_in_reasoning_mode(self) -> bool:
        # The chat template writes <think> into the prompt only for these switches.
        return self.thinking is True or self.enable_thinking is True


class DeepSeekV4ReasoningParser(DeepSeekV32ReasoningParser):
    """DeepSeek V4 thinking mode: the same switches and tags as V3.2."""


ReasoningParserManager.register_module('deepseek-v3')(DeepSeekV3ReasoningParser)
ReasoningParserManager.register_module(['deepseek-v32', 'deepseek-v3.2'])(DeepSeekV32ReasoningParser)
ReasoningParserManager.register_module('deepseek-v4')(DeepSeekV4ReasoningParser)


# The compiled response parser builds a reasoning parser for every response.
# When a class's __init__ chain and starts_in_reasoning_mode are exactly the
# built-in functions listed here, it reproduces their effect without Python
# calls (same instance state, same result), so keep these in step with the
# methods above. Subclasses overriding either method are called as usual.
#
# __init__ -> (class defining it, attributes it sets to kwargs.get(name), in
# order, after super().__init__(**kwargs)); ReasoningParser.__init__ ends the
# chain and only sets ``self.kwargs``.
_BUILTIN_INIT_SWITCHES: dict[Callable[..., None], tuple[type, tuple[str, ...]]] = {
    ReasoningParser.__init__: (ReasoningParser, ()),
    DeepSeekV3ReasoningParser.__init__: (DeepSeekV3ReasoningParser, ('enable_thinking',)),
    DeepSeekV32ReasoningParser.__init__: (DeepSeekV32ReasoningParser, ('thinking', 'enable_thinking')),
}
# starts_in_reasoning_mode -> (class defining it, attributes of which any being
# ``True`` makes it return True; None: it always returns True).
_BUILTIN_STARTS_SWITCHES: dict[Callable[..., bool], tuple[type, tuple[str, ...] | None]] = {
    ReasoningParser.starts_in_reasoning_mode: (ReasoningParser, None),
    DeepSeekV3ReasoningParser.starts_in_reasoning_mode: (DeepSeekV3ReasoningParser, ('enable_thinking',)),
    DeepSeekV32ReasoningParser.starts_in_reasoning_mode: (DeepSeekV32ReasoningParser, ('thinking', 'enable_thinking')),
}
# Classes whose reasoning tag classmethods return constants (cached per parser class).
_BUILTIN_TAG_CLASSES: frozenset[type] = frozenset(
    {ReasoningParser, DeepSeekV3ReasoningParser, DeepSeekV32ReasoningParser, DeepSeekV4ReasoningParser})
