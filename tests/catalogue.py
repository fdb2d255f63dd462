"""One suite shape for the declared dialects of the second catalogue (issue #16).

A case is a raw output in the model's real syntax with its literal expected
result. :func:`dialect_suite` returns the test functions a family module binds:
the four :func:`tests.streaming.case_checks` (``parse_complete``, every chunking
— one chunk, every split inside every tag, fixed 1/4/8/16/256-character and
random chunks —, an empty final chunk, every two-way split), streams where each
special-token marker is one chunk (the tokenizers of these models are not on
PyPI) and hypothesis splits (with or without an empty final chunk).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tests.streaming import atomic_chunks, case_checks, run_case, split_at

Calls = list[tuple[str, str]]


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    reasoning: str | None
    tool: str | None
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


@dataclass(frozen=True)
class ToolCase:
    """A case of a tool dialect with no reasoning parser; a subclass names the tool parser in ``tool``."""

    id: str
    text: str
    content: str | None
    calls: Calls
    request: dict[str, Any] = field(default_factory=dict)
    tool: ClassVar[str] = ''

    def parser(self, make_parser: Any) -> Any:
        return make_parser(None, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, None, self.calls


def request_field(parser: Any, name: str) -> Any:
    """A field of the request the parser adjusted (a dict or lmparse's request type)."""
    request = parser.request
    return request.get(name) if isinstance(request, dict) else getattr(request, name)


def dialect_suite(cases: Sequence[Case], tags: Sequence[str],
                  special: Sequence[str]) -> tuple[Callable[..., None], ...]:
    """``(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
    test_every_two_way_split, test_special_token_atomic_streams, test_stream_arbitrary_splits)``."""
    import pytest
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ids = [c.id for c in cases]
    assert len(set(ids)) == len(ids), 'duplicate case ids'
    checks = case_checks(cases, tags)

    @pytest.mark.parametrize('case', list(cases), ids=ids)
    def test_special_token_atomic_streams(case: Case, make_parser: Any) -> None:
        for size in (1, 3):
            assert run_case(case.parser(make_parser), atomic_chunks(case.text, special, size)) == case.expected

    @settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '2000' if os.environ.get('LMPARSE_SLOW') else '150')),
              deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(data=st.data())
    def test_stream_arbitrary_splits(make_parser: Any, data: Any) -> None:
        case = data.draw(st.sampled_from(list(cases)), label='case')
        n = len(case.text)
        cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=30), label='cuts')
        flush = data.draw(st.booleans(), label='empty final chunk')
        assert run_case(case.parser(make_parser), split_at(case.text, cuts), flush=flush) == case.expected, case.id

    return (*checks, test_special_token_atomic_streams, test_stream_arbitrary_splits)
