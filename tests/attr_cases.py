"""Shared checks for the attribute-named dialects (DeepSeek V4.1, MiniMax M2, Kimi K3).

A case is checked three ways: streamed reconstruction over many chunkings,
``parse_complete`` and a literal expected normalized result; per index the
streamed argument fragments concatenate to ``parse_complete``'s arguments.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.streaming import chunkings, complete, fixed_chunks, run_case, stream_flagged, tool_deltas

Calls = list[tuple[str, str]]


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    tool: str
    reasoning: str | None = None
    request: dict[str, Any] = field(default_factory=dict)
    # arguments that are not JSON on purpose (truncated / malformed model output)
    invalid_json: bool = False

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


def stream_key(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> tuple[Any, Any, Any]:
    return run_case(case.parser(make_parser), chunks, flush=flush)


def check_complete(case: Case, make_parser: Any) -> None:
    assert complete(case.parser(make_parser), case.text).key() == case.expected


def check_chunkings(case: Case, make_parser: Any, tags: tuple[str, ...]) -> None:
    for label, chunks in chunkings(case.text, tags):
        assert stream_key(case, make_parser, chunks) == case.expected, label
    for size in (1, 5, len(case.text)):
        assert stream_key(case, make_parser, fixed_chunks(case.text, size), flush=True) == case.expected, size


def check_every_two_way_split(case: Case, make_parser: Any) -> None:
    text = case.text
    for cut in range(1, len(text)):
        assert stream_key(case, make_parser, [text[:cut], text[cut:]]) == case.expected, cut


def check_fragments(case: Case, make_parser: Any) -> None:
    expected = [args for _name, args in complete(case.parser(make_parser), case.text).calls]
    for label, chunks in chunkings(case.text, (), n_random=3):
        per: dict[int, str] = {}
        for d in tool_deltas(stream_flagged(case.parser(make_parser), chunks)):
            per[d.index] = per.get(d.index, '') + (d.function.arguments or '')
        assert [per[i] for i in sorted(per)] == expected, label
    if not case.invalid_json:
        for args in expected:
            json.loads(args)


def marker_atomic_chunks(text: str, markers: tuple[str, ...]) -> list[str]:
    """A token-like stream: every marker one chunk, other text in 1..3 character pieces."""
    out: list[str] = []
    i = 0
    step = 1
    ordered = sorted(markers, key=len, reverse=True)
    while i < len(text):
        for m in ordered:
            if text.startswith(m, i):
                out.append(m)
                i += len(m)
                break
        else:
            out.append(text[i:i + step])
            i += step
            step = step % 3 + 1
    return out
