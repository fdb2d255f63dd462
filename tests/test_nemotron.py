"""NVIDIA Nemotron 3 reasoning (vLLM's ``nemotron_v3``, SGLang's ``nemotron_3``).

As both engines read it: ``<think>`` reasoning, on unless ``enable_thinking``
is False (the open tag in the prompt), tool calls in the Qwen3-Coder XML
grammar. Literal results over every chunking (``tests/catalogue.py``).
"""
from __future__ import annotations

from typing import Any

from lmparse import Nemotron3ReasoningParser, ReasoningParserManager
from tests.catalogue import Case, dialect_suite

O, C, TO, TC = '<think>', '</think>', '<tool_call>', '</tool_call>'
SPECIAL = (O, C, TO, TC)
TAGS = (*SPECIAL, '<function=', '</function>', '<parameter=', '</parameter>')
CALL = f'{TO}\n<function=search>\n<parameter=query>\nweather Paris\n</parameter>\n</function>\n{TC}'


def case(id: str, text: str, content: str | None, reasoning: str | None, calls: Any = (), tool: str | None = None,
         name: str = 'nemotron_v3', **request: Any) -> Case:
    return Case(id, text, content, reasoning, list(calls), name, tool, request)


CASES = [
    case('basic', '\nThe user wants 2+2.\n</think>\n4', '\n4', '\nThe user wants 2+2.\n'),
    case('model-repeats-open-tag', f'{O}x{C}y', 'y', 'x'),
    case('truncated-in-reasoning', 'still thinking', None, 'still thinking'),
    case('thinking-off', 'Plain answer.', 'Plain answer.', None, chat_template_kwargs={'enable_thinking': False}),
    case('thinking-off-tags-dropped', f'{O}x{C}y', 'xy', None, chat_template_kwargs={'enable_thinking': False}),
    case('tool-call-after-reasoning', f'I should search.{C}\n' + CALL, '\n', 'I should search.',
         [('search', '{"query": "weather Paris"}')], tool='qwen3coder'),
    case('tool-call-inside-reasoning', 'Look it up.' + CALL + f'then answer{C}Done.', 'Done.',
         'Look it up.then answer', [('search', '{"query": "weather Paris"}')], tool='qwen3coder'),
    case('lookalikes', f'a </thin b <think c{C}d', 'd', 'a </thin b <think c'),
    case('alias', f'x{C}y', 'y', 'x', name='nemotron_3'),
]

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = dialect_suite(CASES, TAGS, SPECIAL)


def test_registered() -> None:
    for name in ('nemotron_v3', 'nemotron_3'):
        assert ReasoningParserManager.get(name) is Nemotron3ReasoningParser
    assert (Nemotron3ReasoningParser.get_reasoning_open_tag(), Nemotron3ReasoningParser.get_reasoning_close_tag()) \
        == (O, C)
