"""Reasoning protocol descriptors.

A reasoning "parser" here only describes the protocol (which tags delimit
reasoning, whether output starts inside it); the streaming work itself is
done by the compiled response parser.
"""
from __future__ import annotations

from typing import Any

from lmparse.registry import LEGACY_REASONING_PARSER_NAMES, ReasoningParserManager

__all__ = ['LEGACY_REASONING_PARSER_NAMES', 'ReasoningParser', 'ReasoningParserManager']


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
