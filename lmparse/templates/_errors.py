"""The one error derivation raises."""
from __future__ import annotations

__all__ = ['TemplateDerivationError']

PARTS = ('template', 'rendering', 'reasoning', 'tool_calls', 'arguments', 'proof')


class TemplateDerivationError(ValueError):
    """A chat template from which lmparse cannot derive (and prove) a dialect.

    ``part`` names what could not be derived — ``template`` (loading,
    compiling), ``rendering`` (the template rejects or drops the synthetic
    messages), ``reasoning`` (the thinking markers), ``tool_calls`` (the block
    markers or the call syntax), ``arguments`` (how argument names and values
    are written), ``proof`` (a derived dialect that does not parse the
    template's own renderings back) — and ``reason`` says why.
    """

    def __init__(self, part: str, reason: str) -> None:
        self.part = part
        self.reason = reason
        super().__init__(f'cannot derive a dialect from the chat template ({part}): {reason}')
