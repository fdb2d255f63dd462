"""Whitespace-only reasoning, shared by the streaming adapters.

Reasoning that is only whitespace (the newlines of an empty ``<think>\\n\\n</think>``)
is not sent: it is held until reasoning text follows (and then sent with it)
and dropped when content or a tool call comes first, so no client sees an
empty reasoning block, field or item.
"""
from __future__ import annotations

__all__ = ['ReasoningHold']


class ReasoningHold:
    """Holds leading whitespace-only reasoning for one stream."""

    __slots__ = ('held',)

    def __init__(self) -> None:
        self.held = ''

    def take(self, reasoning: str, continuing: bool) -> str | None:
        """The reasoning text to send now, or None while it is only whitespace.

        ``continuing``: reasoning text was already sent and nothing else since,
        so this fragment continues it and is sent as it is.
        """
        if continuing:
            return reasoning
        if reasoning.isspace():
            self.held += reasoning
            return None
        text = self.held + reasoning if self.held else reasoning
        self.held = ''
        return text

    def drop(self) -> None:
        """Content or a call came first: the held whitespace is not reasoning anyone will see."""
        self.held = ''
