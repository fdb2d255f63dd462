"""Reasoning protocol descriptors.

A reasoning "parser" here only describes the protocol (which tags delimit
reasoning, whether output starts inside it); the streaming work itself is
done by the compiled response parser.
"""
from __future__ import annotations

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
# For the classes listed here it reproduces ``cls(**kwargs)`` and
# starts_in_reasoning_mode() without Python calls (same instance state, same
# result), as long as their methods are still the ones defined above (see
# lmparse/construction.pyx); keep these in step with the methods. Subclasses
# are called as usual.
#
# class -> (attributes its __init__ chain sets to ``kwargs.get(name)``, in
# order, after ``self.kwargs``; attributes of which any being ``True`` makes
# starts_in_reasoning_mode() return True, None: it always does). Read-only.
_BUILTIN_FAST_PATHS: dict[type, tuple[tuple[str, ...], tuple[str, ...] | None]] = {
    ReasoningParser: ((), None),
    DeepSeekV3ReasoningParser: (('enable_thinking',), ('enable_thinking',)),
    DeepSeekV32ReasoningParser: (('thinking', 'enable_thinking'), ('thinking', 'enable_thinking')),
    DeepSeekV4ReasoningParser: (('thinking', 'enable_thinking'), ('thinking', 'enable_thinking')),
}
