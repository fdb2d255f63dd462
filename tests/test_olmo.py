"""AllenAI OLMo 3: ``<function_calls>`` pythonic calls one per line, and prompt-opened ``<think>`` reasoning.

Syntax as the OLMo 3 chat template and vLLM's ``olmo3`` parsers read it::

    <think>…</think>Let me check.
    <function_calls>get_weather(city="SF", days=3)
    get_time(exact=true)</function_calls>

(the generation prompt writes ``<think>``, so output starts inside it).
``<function_calls>`` and ``<think>`` are ordinary text for OLMo's tokenizer
(not on PyPI): every split inside every tag is checked.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from lmparse import Olmo3ReasoningParser, Olmo3ToolParser, ReasoningParserManager, ToolParserManager
from lmparse.tools.pythonic import PythonicToolParser
from tests import catalogue

FO, FC = '<function_calls>', '</function_calls>'
THO, THC = '<think>', '</think>'
SPECIAL = (THO, THC, FO, FC)
TAGS = SPECIAL


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'olmo3'
    tool: str | None = 'olmo3'


CASES = [
    Case('prompt-opens-think', 'The user asks 2+2. That is 4.\n</think>\n\nThe answer is 4.', '\n\nThe answer is 4.',
         'The user asks 2+2. That is 4.\n', []),
    Case('model-writes-think', f'{THO}Hmm.{THC}Yes.', 'Yes.', 'Hmm.', []),
    Case('unclosed-is-reasoning', 'Still thinking about </thin', None, 'Still thinking about </thin', []),
    Case('one-call', f'Need weather.{THC}Let me check.\n{FO}get_weather(city="SF", unit=\'celsius\'){FC}',
         'Let me check.\n', 'Need weather.', [('get_weather', '{"city": "SF", "unit": "celsius"}')]),
    Case('lines-and-json-literals', f'x{THC}{FO}get_time()\nsearch(query="q", limit=3, exact=true, extra=null)\n'
         f'search(query="r", exact=False){FC}', None, 'x',
         [('get_time', '{}'), ('search', '{"query": "q", "limit": 3, "exact": true, "extra": null}'),
          ('search', '{"query": "r", "exact": false}')]),
    Case('newlines-around', f'x{THC}{FO}\nget_time()\n{FC}\nDone.', '\nDone.', 'x', [('get_time', '{}')]),
    Case('comma-separated', f'x{THC}{FO}get_time(), search(query="a, b"){FC}', None, 'x',
         [('get_time', '{}'), ('search', '{"query": "a, b"}')]),
    Case('unknown-later-call-dropped', f'x{THC}{FO}get_time()\nrm(path="/")\nsearch(query="z"){FC}', None, 'x',
         [('get_time', '{}'), ('search', '{"query": "z"}')]),
    Case('unknown-first-call-is-text', f'x{THC}{FO}rm(path="/"){FC}after', f'{FO}rm(path="/"){FC}after', 'x', []),
    Case('bracketed-list-is-text', f'x{THC}{FO}[get_time()]{FC}', f'{FO}[get_time()]{FC}', 'x', []),
    Case('tool-in-reasoning', f'Look.{FO}get_time(){FC}more{THC}Done.', 'Done.', 'Look.more', [('get_time', '{}')]),
    Case('thinking-off', f'Direct.{FO}get_time(){FC}', 'Direct.', None, [('get_time', '{}')],
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('lookalikes', f'x{THC}a <function_call b </function_calls> c', 'a <function_call b </function_calls> c', 'x', []),
    Case('truncated-in-value', f'x{THC}{FO}search(query="ab', None, 'x', [('search', '{"query": "ab')]),
    Case('truncated-head-is-text', f'x{THC}ok{FO}get_ti', f'ok{FO}get_ti', 'x', []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def test_names() -> None:
    assert ReasoningParserManager.get('olmo3') is Olmo3ReasoningParser
    assert ToolParserManager.get('olmo3') is Olmo3ToolParser


def test_bracketless_needs_a_close_tag() -> None:
    for attrs in ({'tool_open_tag': '<x>', 'tool_close_tag': None, 'call_list_brackets': False},
                  {'tool_open_tag': '<x>', 'tool_close_tag': '</x>', 'call_list_brackets': False, 'bare_call_open': '['}):
        with pytest.raises(TypeError, match='call_list_brackets'):
            type('Bad', (PythonicToolParser,), attrs)()


def test_json_literals_are_opt_in(make_parser: Any) -> None:
    from tests.streaming import complete
    text = '<|python_start|>[search(query="q", exact=true)]<|python_end|>'
    assert complete(make_parser(None, 'pythonic'), text).calls == [('search', '{"query": "q", "exact": "true"}')]


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)
