"""AllenAI OLMo 3 reasoning: the generation prompt ends in ``<think>``, so output starts inside it.

``<think>`` / ``</think>`` are ordinary text for OLMo 3's tokenizer (not on
PyPI): every split inside them is checked. vLLM's ``olmo3`` tool parser is not
registered (see ``lmparse.dialects.olmo``): the name must not resolve.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lmparse import Olmo3ReasoningParser, ReasoningParserManager, ToolParserManager
from tests.streaming import case_checks

TAGS = ('<think>', '</think>')


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    reasoning_content: str | None
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser('olmo3', None, request_tools=None, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, []


CASES = [
    Case('prompt-opens-think', 'The user asks 2+2. That is 4.\n</think>\n\nThe answer is 4.', '\n\nThe answer is 4.',
         'The user asks 2+2. That is 4.\n'),
    Case('model-writes-think', '<think>Hmm.</think>Yes.', 'Yes.', 'Hmm.'),
    Case('unclosed-is-reasoning', 'Still thinking about </thin', None, 'Still thinking about </thin'),
    Case('lookalikes', 'a <thin b </ c</think>d <think e', 'd <think e', 'a <thin b </ c'),
    Case('thinking-off', 'Direct answer.', 'Direct answer.', None, request={'chat_template_kwargs': {'enable_thinking': False}}),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


def test_names() -> None:
    assert ReasoningParserManager.get('olmo3') is Olmo3ReasoningParser
    assert 'olmo3' not in ToolParserManager.names()
