"""JSON tool-call dialects (qwen / internlm / llama3) through BaseResponseParser.

Every case is checked three ways: streamed reconstruction over many chunkings,
``parse_complete`` and a literal expected normalized result.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.streaming import (
    check_identity_first,
    check_messages,
    chunkings,
    complete,
    fixed_chunks,
    reconstruct,
    split_at,
    stream,
    stream_flagged,
    token_chunks,
    tool_deltas,
)

QWEN_TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>')
INTERNLM_TAGS = ('<think>', '</think>', '<|action_start|><|plugin|>', '<|action_end|>')
LLAMA_TAGS = ('<think>', '</think>', '<|python_tag|>')
TAGS = {'qwen': QWEN_TAGS, 'qwen2d5': QWEN_TAGS, 'qwen3': QWEN_TAGS,
        'internlm': INTERNLM_TAGS, 'intern-s1': INTERNLM_TAGS, 'llama3': LLAMA_TAGS}

Calls = list[tuple[str, str]]


@dataclass(frozen=True)
class Case:
    id: str
    reasoning: str | None
    tool: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls

    @property
    def tags(self) -> tuple[str, ...]:
        return TAGS[self.tool]


def qwen_call(name: str, arguments: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


def internlm_call(name: str, parameters: str) -> str:
    return f'<|action_start|><|plugin|>\n{{"name": "{name}", "parameters": {parameters}}}<|action_end|>\n'


# A JSON string value full of things a lexical scanner must get right: CJK,
# emoji (astral + ZWJ/skin tone), escaped quotes, escaped backslashes (one
# right before the closing quote), \u escapes, and protocol tags as data.
TRICKY_ARGS = (
    r'{"query": "北京 天气 🌤️ 👍🏽 \"quoted\" C:\\dir\\", "note": "x\\\"y \u4e2d", '
    r'"tag": "</tool_call> <tool_call> <|action_end|> </think>", "nested": {"k": ["a\\", "\"", "}]"]}}'
)
assert json.loads(TRICKY_ARGS)['query'].endswith('C:\\dir\\')

QWEN_CASES = [
    Case('qwen3-basic', 'default', 'qwen3',
         '<think>\nThe user asks about the weather in Beijing. I should call get_weather.\n</think>\n\n'
         'Let me check the weather for you.\n'
         + qwen_call('get_weather', '{"city": "Beijing", "unit": "celsius"}'),
         '\n\nLet me check the weather for you.\n',
         '\nThe user asks about the weather in Beijing. I should call get_weather.\n',
         [('get_weather', '{"city": "Beijing", "unit": "celsius"}')]),
    Case('qwen3-open-tag-in-prompt', 'default', 'qwen3',
         'The template already opened the think block.\n</think>\n\nHello!',
         '\n\nHello!', 'The template already opened the think block.\n', []),
    Case('qwen3-name-after-arguments', 'default', 'qwen3',
         '<think>\nNeed the weather.\n</think>\n\n'
         '<tool_call>\n{"arguments": {"city": "Paris", "unit": "celsius"}, "name": "get_weather"}\n</tool_call>',
         '\n\n', '\nNeed the weather.\n', [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    Case('qwen3-no-arguments', None, 'qwen3',
         '<tool_call>\n{"name": "get_time"}\n</tool_call>',
         None, None, [('get_time', '{}')]),
    Case('qwen3-empty-arguments', None, 'qwen3',
         qwen_call('get_time', '{}'), None, None, [('get_time', '{}')]),
    Case('qwen3-duplicate-keys', None, 'qwen3',
         qwen_call('search', '{"query": "first", "limit": 3, "query": "second"}'),
         None, None, [('search', '{"query": "first", "limit": 3, "query": "second"}')]),
    Case('qwen3-source-formatting-kept', None, 'qwen3',
         '<tool_call>\n{ "name" : "search" ,\n  "arguments" : {\n    "query" : "a b",\n'
         '    "limit":10 , "x": [1,\n 2.50, null, true]\n  }\n}\n</tool_call>',
         None, None,
         [('search', '{\n    "query" : "a b",\n    "limit":10 , "x": [1,\n 2.50, null, true]\n  }')]),
    Case('qwen3-sequential', 'default', 'qwen3',
         '<think>\nThree lookups.\n</think>\n\n'
         + qwen_call('get_weather', '{"city": "Beijing"}') + '\n'
         + qwen_call('get_weather', '{"city": "Shanghai"}') + '\n\n'
         + qwen_call('get_time', '{}'),
         '\n\n', '\nThree lookups.\n',
         [('get_weather', '{"city": "Beijing"}'), ('get_weather', '{"city": "Shanghai"}'), ('get_time', '{}')]),
    Case('qwen3-unknown-names-filtered', None, 'qwen3',
         'Checking.\n'
         + qwen_call('delete_everything', '{"force": true}') + '\n'
         + qwen_call('get_weather', '{"city": "Oslo"}') + '\n'
         + '<tool_call>\n{"arguments": {"x": "y"}, "name": "rm_rf"}\n</tool_call>\n'
         + qwen_call('get_time', '{}'),
         'Checking.\n', None, [('get_weather', '{"city": "Oslo"}'), ('get_time', '{}')]),
    Case('qwen3-truncated-mid-arguments', None, 'qwen3',
         'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Bei',
         'Sure.\n', None, [('get_weather', '{"city": "Bei')]),
    Case('qwen3-truncated-mid-scalar', None, 'qwen3',
         '<tool_call>\n{"name": "search", "arguments": {"query": "x", "limit": 1',
         None, None, [('search', '{"query": "x", "limit": 1')]),
    Case('qwen3-truncated-after-escape', None, 'qwen3',
         '<tool_call>\n{"name": "search", "arguments": {"query": "a\\',
         None, None, [('search', '{"query": "a\\')]),
    Case('qwen3-truncated-mid-name', None, 'qwen3',
         'Sure.\n<tool_call>\n{"name": "get_wea',
         'Sure.\n', None, []),
    Case('qwen3-truncated-arguments-before-name', None, 'qwen3',
         '<tool_call>\n{"arguments": {"city": "Rome"}, "na',
         None, None, []),
    Case('qwen3-truncated-after-name', None, 'qwen3',
         # the arguments never started: nothing is emitted for them, nothing invented
         '<tool_call>\n{"name": "get_time", "arguments": ', None, None, [('get_time', '')]),
    Case('qwen3-truncated-after-open-tag', None, 'qwen3',
         'Sure.\n<tool_call>\n', 'Sure.\n', None, []),
    Case('qwen3-malformed-payload', None, 'qwen3',
         '<tool_call>\nthis is not json\n</tool_call>\nSorry.', 'this is not json\n\nSorry.', None, []),
    Case('qwen3-text-after-block', 'default', 'qwen3',
         '<think>\nok\n</think>\n\n' + qwen_call('get_time', '{}') + '\nThe tool will answer shortly.',
         '\n\n\nThe tool will answer shortly.', '\nok\n', [('get_time', '{}')]),
    Case('qwen3-trailing-newline-after-block', None, 'qwen3',
         qwen_call('get_time', '{}') + '\n', '\n', None, [('get_time', '{}')]),
    Case('qwen3-text-between-blocks', None, 'qwen3',
         qwen_call('get_time', '{}') + '\nand\n' + qwen_call('search', '{"query": "q"}'),
         '\nand\n', None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
    Case('qwen3-space-between-blocks-is-content', None, 'qwen3',
         qwen_call('get_time', '{}') + ' ' + qwen_call('search', '{}'),
         ' ', None, [('get_time', '{}'), ('search', '{}')]),
    Case('qwen3-partial-open-tag-after-block', None, 'qwen3',
         qwen_call('get_time', '{}') + '\n<tool_cal', '\n<tool_cal', None, [('get_time', '{}')]),
    Case('qwen3-tool-in-reasoning', 'default', 'qwen3',
         '<think>\nI need the weather first.\n'
         + qwen_call('get_weather', '{"city": "Lima"}')
         + '\nNow I can answer.\n</think>\n\nIt is sunny in Lima.',
         '\n\nIt is sunny in Lima.', '\nI need the weather first.\n\nNow I can answer.\n',
         [('get_weather', '{"city": "Lima"}')]),
    Case('qwen3-filtered-tool-in-reasoning', 'default', 'qwen3',
         '<think>\nMaybe browse.\n'
         + qwen_call('browse', '{"url": "https://example.com"}')
         + '\nNo, answer directly.\n</think>\n\nHere you go.',
         '\n\nHere you go.', '\nMaybe browse.\n\nNo, answer directly.\n', []),
    Case('qwen3-tools-in-reasoning-newlines', 'default', 'qwen3',
         '<think>\nTwo calls.\n'
         + qwen_call('get_weather', '{"city": "A"}') + '\n\n'
         + qwen_call('get_time', '{}')
         + '\nDone thinking.\n</think>\n\nOK.',
         '\n\nOK.', '\nTwo calls.\n\nDone thinking.\n',
         [('get_weather', '{"city": "A"}'), ('get_time', '{}')]),
    Case('qwen3-reasoning-after-tool-then-tool', 'default', 'qwen3',
         '<think>\nA\n' + qwen_call('get_time', '{}') + '\nB\n' + qwen_call('search', '{"query": "q"}')
         + '\n</think>\n\n' + qwen_call('get_weather', '{"city": "C"}'),
         '\n\n', '\nA\n\nB\n\n',
         [('get_time', '{}'), ('search', '{"query": "q"}'), ('get_weather', '{"city": "C"}')]),
    Case('qwen3-think-tags-inside-tool-args-in-reasoning', 'default', 'qwen3',
         '<think>\nx ' + qwen_call('search', '{"query": "</think> and <think>"}') + ' y\n</think>\n\nz',
         '\n\nz', '\nx  y\n', [('search', '{"query": "</think> and <think>"}')]),
    Case('qwen3-missing-think-close', 'default', 'qwen3',
         '<think>\nStill thinking.\n' + qwen_call('get_time', '{}') + '\nand more',
         None, '\nStill thinking.\n\nand more', [('get_time', '{}')]),
    Case('qwen3-missing-think-close-trailing-newline', 'default', 'qwen3',
         '<think>\nStill thinking.\n' + qwen_call('get_time', '{}') + '\n',
         None, '\nStill thinking.\n\n', [('get_time', '{}')]),
    Case('qwen3-reasoning-only', 'default', 'qwen3',
         'Just thinking aloud, never closed.', None, 'Just thinking aloud, never closed.', []),
    Case('qwen3-lookalikes-plain', None, 'qwen3',
         'If a < b then <tool and </thi and <|action are text; <tool_call is too. </tool_call> ends <tool_cal',
         'If a < b then <tool and </thi and <|action are text; <tool_call is too. </tool_call> ends <tool_cal',
         None, []),
    Case('qwen3-lookalikes-reasoning', 'default', 'qwen3',
         '<think>\nis a < b? </thi <tool_cal <think\n</think>\n\nx < y <tool_cal',
         '\n\nx < y <tool_cal', '\nis a < b? </thi <tool_cal <think\n', []),
    Case('qwen3-tricky-strings', None, 'qwen3',
         qwen_call('search', TRICKY_ARGS), None, None, [('search', TRICKY_ARGS)]),
    Case('qwen3-escaped-name', None, 'qwen3',
         '<tool_call>\n{"name": "get_\\u0077eather", "arguments": {"city": "Zürich"}}\n</tool_call>',
         None, None, [('get_weather', '{"city": "Zürich"}')]),
    Case('qwen3-name-inside-arguments', None, 'qwen3',
         '<tool_call>\n{"arguments": {"name": "inner", "q": "}"}, "name": "search"}\n</tool_call>',
         None, None, [('search', '{"name": "inner", "q": "}"}')]),
    Case('qwen3-extra-envelope-fields', None, 'qwen3',
         '<tool_call>\n{"name": "search", "id": {"k": "}\\"", "l": [1, "]"]}, "type": "function", '
         '"arguments": {"query": "x"}}\n</tool_call>',
         None, None, [('search', '{"query": "x"}')]),
    Case('qwen3-escaped-keys', None, 'qwen3',
         '<tool_call>\n{"x\\\\": 1, "q\\"uote": "v\\\\", "na\\u006de": "search", '
         '"arguments": {"k\\"": "\\"}"}}\n</tool_call>',
         None, None, [('search', '{"k\\"": "\\"}"}')]),
    Case('qwen3-non-string-name', None, 'qwen3',
         '<tool_call>\n{"name": 5, "arguments": {"a": 1}}\n</tool_call>ok', 'ok', None, []),
    Case('qwen3-tool-choice-none', 'default', 'qwen3',
         '<think>\nNo tools allowed.\n</think>\n\n' + qwen_call('get_time', '{}'),
         '\n\n' + qwen_call('get_time', '{}'), '\nNo tools allowed.\n', [],
         {'tool_choice': 'none'}),
    Case('qwen3-tool-choice-function', None, 'qwen3',
         qwen_call('get_time', '{}') + '\n' + qwen_call('get_weather', '{"city": "Rome"}'),
         None, None, [('get_weather', '{"city": "Rome"}')],
         {'tool_choice': {'type': 'function', 'function': {'name': 'get_weather'}}}),
    Case('qwen3-thinking-disabled', 'default', 'qwen3',
         'Hello.\n' + qwen_call('get_time', '{}'),
         'Hello.\n', None, [('get_time', '{}')],
         {'chat_template_kwargs': {'enable_thinking': False}}),
    Case('qwen3-thinking-disabled-think-tags-to-content', 'default', 'qwen3',
         '<think>\nhm\n</think>\n\nHi ' + qwen_call('get_time', '{}'),
         '\nhm\n\n\nHi ', None, [('get_time', '{}')],
         {'chat_template_kwargs': {'enable_thinking': False}}),
    Case('qwen3-no-reasoning-parser-think-is-content', None, 'qwen3',
         '<think>\nhm\n</think>\n\nHi', '<think>\nhm\n</think>\n\nHi', None, []),
    Case('qwen-alias', None, 'qwen', qwen_call('get_time', '{}'), None, None, [('get_time', '{}')]),
    Case('qwen2d5-alias', None, 'qwen2d5',
         'Let me check.\n' + qwen_call('get_weather', '{"city": "Tokyo"}'),
         'Let me check.\n', None, [('get_weather', '{"city": "Tokyo"}')]),
]

INTERNLM_CASES = [
    Case('internlm-basic', None, 'internlm',
         'I will check the weather.' + internlm_call('get_weather', '{"city": "Beijing"}'),
         'I will check the weather.\n', None, [('get_weather', '{"city": "Beijing"}')]),
    Case('internlm-name-after-parameters', None, 'internlm',
         '<|action_start|><|plugin|>\n{"parameters": {"city": "Paris"}, "name": "get_weather"}<|action_end|>\n',
         '\n', None, [('get_weather', '{"city": "Paris"}')]),
    Case('internlm-no-parameters', None, 'internlm',
         '<|action_start|><|plugin|>\n{"name": "get_time"}<|action_end|>',
         None, None, [('get_time', '{}')]),
    Case('internlm-arguments-field-is-not-parameters', None, 'internlm',
         '<|action_start|><|plugin|>\n{"name": "search", "arguments": {"query": "x"}}<|action_end|>',
         None, None, [('search', '{}')]),
    Case('internlm-duplicate-keys', None, 'internlm',
         internlm_call('search', '{"query": "a", "query": "b"}'),
         '\n', None, [('search', '{"query": "a", "query": "b"}')]),
    Case('internlm-sequential-with-unknown', None, 'internlm',
         internlm_call('python', '{"code": "1+1"}') + internlm_call('get_time', '{}')
         + internlm_call('search', '{"query": "lmdeploy"}'),
         '\n', None, [('get_time', '{}'), ('search', '{"query": "lmdeploy"}')]),
    Case('internlm-truncated-mid-parameters', None, 'internlm',
         'Checking.<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Bei',
         'Checking.', None, [('get_weather', '{"city": "Bei')]),
    Case('internlm-truncated-mid-name', None, 'internlm',
         'Checking.<|action_start|><|plugin|>\n{"name": "get_',
         'Checking.', None, []),
    Case('internlm-text-after-block', None, 'internlm',
         internlm_call('get_time', '{}') + 'Anything else?',
         '\nAnything else?', None, [('get_time', '{}')]),
    Case('internlm-close-tag-inside-string', None, 'internlm',
         internlm_call('search', '{"query": "<|action_end|> is a token, so is <|action_start|><|plugin|>"}'),
         '\n', None, [('search', '{"query": "<|action_end|> is a token, so is <|action_start|><|plugin|>"}')]),
    Case('internlm-tricky-strings', None, 'internlm',
         internlm_call('search', TRICKY_ARGS), '\n', None, [('search', TRICKY_ARGS)]),
    Case('internlm-interpreter-is-content', None, 'internlm',
         'Run: <|action_start|><|interpreter|>\nprint(1)<|action_end|>\n<|action',
         'Run: <|action_start|><|interpreter|>\nprint(1)<|action_end|>\n<|action', None, []),
    Case('intern-s1-reasoning', 'intern-s1', 'intern-s1',
         '<think>\nThe user wants docs.\n</think>\nI will search.' + internlm_call('search', '{"query": "lmdeploy"}'),
         '\nI will search.\n', '\nThe user wants docs.\n', [('search', '{"query": "lmdeploy"}')]),
    Case('intern-s1-tool-in-reasoning', 'default', 'intern-s1',
         '<think>\nLook it up: ' + internlm_call('search', '{"query": "q"}') + 'found it.\n</think>\nDone.',
         '\nDone.', '\nLook it up: \nfound it.\n', [('search', '{"query": "q"}')]),
]

LLAMA_CASES = [
    Case('llama3-basic', None, 'llama3',
         '<|python_tag|>{"name": "get_weather", "parameters": {"city": "San Francisco", "unit": "fahrenheit"}}',
         None, None, [('get_weather', '{"city": "San Francisco", "unit": "fahrenheit"}')]),
    Case('llama3-name-after-parameters', None, 'llama3',
         '<|python_tag|>{"parameters": {"city": "Paris"}, "name": "get_weather"}',
         None, None, [('get_weather', '{"city": "Paris"}')]),
    Case('llama3-no-parameters', None, 'llama3',
         '<|python_tag|>{"name": "get_time"}', None, None, [('get_time', '{}')]),
    Case('llama3-duplicate-keys', None, 'llama3',
         '<|python_tag|>{"name": "search", "parameters": {"query": "a", "query": "b"}}',
         None, None, [('search', '{"query": "a", "query": "b"}')]),
    Case('llama3-unknown-name', None, 'llama3',
         '<|python_tag|>{"name": "brave_search", "parameters": {"query": "x"}}', None, None, []),
    Case('llama3-text-around', None, 'llama3',
         'Let me look that up. <|python_tag|>{"name": "search", "parameters": {"query": "llama"}}\nDone.',
         'Let me look that up. \nDone.', None, [('search', '{"query": "llama"}')]),
    Case('llama3-truncated-mid-parameters', None, 'llama3',
         '<|python_tag|>{"name": "search", "parameters": {"query": "lla',
         None, None, [('search', '{"query": "lla')]),
    Case('llama3-truncated-mid-name', None, 'llama3', '<|python_tag|>{"na', None, None, []),
    Case('llama3-tricky-strings', None, 'llama3',
         '<|python_tag|>{"name": "search", "parameters": ' + TRICKY_ARGS + '}', None, None, [('search', TRICKY_ARGS)]),
    Case('llama3-lookalike', None, 'llama3', 'Use <|python to run <|python_ta', 'Use <|python to run <|python_ta',
         None, []),
    Case('llama3-in-reasoning', 'default', 'llama3',
         '<think>\nx <|python_tag|>{"name": "get_time", "parameters": {}} y\n</think>\n\nz',
         '\n\nz', '\nx  y\n', [('get_time', '{}')]),
    Case('llama3-after-reasoning', 'default', 'llama3',
         '<think>\nCall it.\n</think>\n\n<|python_tag|>{"name": "get_time", "parameters": {}}',
         '\n\n', '\nCall it.\n', [('get_time', '{}')]),
]

CASES = QWEN_CASES + INTERNLM_CASES + LLAMA_CASES
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _stream_key(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> tuple[Any, Any, Any]:
    parser = case.parser(make_parser)
    flagged = stream_flagged(parser, chunks, flush=flush)
    check_messages(flagged)
    return reconstruct(parser, flagged).key()


# ---- the three-way comparison -------------------------------------------------


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_parse_complete(case: Case, make_parser: Any) -> None:
    assert complete(case.parser(make_parser), case.text).key() == case.expected


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_chunkings(case: Case, make_parser: Any) -> None:
    for label, chunks in chunkings(case.text, case.tags):
        assert _stream_key(case, make_parser, chunks) == case.expected, label
    # The shared helper agrees (it also checks identity-first).
    assert stream(case.parser(make_parser), [case.text]).key() == case.expected


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_then_empty_final_chunk(case: Case, make_parser: Any) -> None:
    """All text non-final, then an empty final step (what engines send last)."""
    for size in (1, 7, len(case.text)):
        assert _stream_key(case, make_parser, fixed_chunks(case.text, size), flush=True) == case.expected, size


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_every_two_way_split(case: Case, make_parser: Any) -> None:
    text = case.text
    for cut in range(1, len(text)):
        assert _stream_key(case, make_parser, [text[:cut], text[cut:]]) == case.expected, cut


@pytest.mark.parametrize('cases', [QWEN_CASES, INTERNLM_CASES, LLAMA_CASES], ids=['qwen', 'internlm', 'llama3'])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(cases: list[Case], make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(cases), label='case')
    n = len(case.text)
    cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=24), label='cuts')
    assert _stream_key(case, make_parser, split_at(case.text, cuts)) == case.expected, case.id


# ---- call identity, order and indices -------------------------------------------


def _per_index(deltas: list[Any]) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = {}
    for d in deltas:
        out.setdefault(d.index, []).append(d)
    return out


@pytest.mark.parametrize('tool,text', [
    ('qwen3', '<tool_call>\n{"arguments": {"city": "Paris"}, "name": "get_weather"}\n</tool_call>'),
    ('internlm', '<|action_start|><|plugin|>\n{"parameters": {"city": "Paris"}, "name": "get_weather"}<|action_end|>'),
    ('llama3', '<|python_tag|>{"parameters": {"city": "Paris"}, "name": "get_weather"}'),
])
def test_arguments_before_name_emit_identity_first(tool: str, text: str, make_parser: Any) -> None:
    # One chunk: exactly identity then the held argument text.
    flagged = make_parser(None, tool).stream_chunk(text, [], final=True)
    deltas = tool_deltas(flagged)
    assert len(deltas) == 2
    ident, args = deltas
    assert (ident.index, ident.type, ident.function.name, ident.function.arguments) == \
        (0, 'function', 'get_weather', None)
    assert ident.id
    assert (args.index, args.id, args.type, args.function.name, args.function.arguments) == \
        (0, None, None, None, '{"city": "Paris"}')

    # Character by character: nothing is visible before the name completes,
    # then the identity comes first and the held fragments follow in order.
    parser = make_parser(None, tool)
    name_end = text.index('"get_weather"') + len('"get_weather"')
    seen: list[Any] = []
    first_visible = None
    for i, ch in enumerate(text):
        out = tool_deltas(parser.stream_chunk(ch, [], final=i == len(text) - 1))
        if out and first_visible is None:
            first_visible = i
        seen.extend(out)
    assert first_visible == name_end - 1  # released with the name's closing quote
    assert seen[0].function.name == 'get_weather' and seen[0].id
    assert all(d.function.name is None and d.id is None for d in seen[1:])
    assert ''.join(d.function.arguments for d in seen[1:]) == '{"city": "Paris"}'
    assert len(seen) > 2  # the held fragments were kept separate, in order


def test_name_first_arguments_stream_before_value_completes(make_parser: Any) -> None:
    """Stable argument text is forwarded early, not buffered until the call ends."""
    parser = make_parser(None, 'qwen3')
    assert parser.stream_chunk('<tool_call>\n{"name": "sea', []) == []
    ident = tool_deltas(parser.stream_chunk('rch"', []))  # the identity as soon as the name string closes
    assert [(d.index, d.type, d.function.name, d.function.arguments) for d in ident] == \
        [(0, 'function', 'search', None)]
    rest = tool_deltas(parser.stream_chunk(', "arguments": {"query": "long te', []))
    assert [(d.id, d.function.name, d.function.arguments) for d in rest] == [(None, None, '{"query": "long te')]

    parser = make_parser(None, 'qwen3')
    first = tool_deltas(parser.stream_chunk('<tool_call>\n{"name": "search", "arguments": {"query": "long te', []))
    assert [(d.index, d.function.name, d.function.arguments) for d in first] == \
        [(0, 'search', None), (0, None, '{"query": "long te')]
    second = tool_deltas(parser.stream_chunk('xt"}}\n</tool_call>', [], final=True))
    assert [(d.index, d.id, d.function.name, d.function.arguments) for d in second] == \
        [(0, None, None, 'xt"}')]


def test_no_argument_call_emits_empty_object_once(make_parser: Any) -> None:
    text = '<tool_call>\n{"name": "get_time"}\n</tool_call>'
    for label, chunks in chunkings(text, QWEN_TAGS):
        deltas = tool_deltas(stream_flagged(make_parser(None, 'qwen3'), chunks))
        assert [d.function.arguments for d in deltas if d.function.arguments is not None] == ['{}'], label


def test_sequential_calls_indices_and_ids(make_parser: Any) -> None:
    case = next(c for c in CASES if c.id == 'qwen3-sequential')
    for label, chunks in chunkings(case.text, case.tags):
        deltas = tool_deltas(stream_flagged(case.parser(make_parser), chunks))
        by_index = _per_index(deltas)
        assert sorted(by_index) == [0, 1, 2], label
        assert [by_index[i][0].function.name for i in range(3)] == ['get_weather', 'get_weather', 'get_time']
        ids = [by_index[i][0].id for i in range(3)]
        assert len(set(ids)) == 3 and all(isinstance(i, str) and i for i in ids)


def test_filtered_calls_leave_contiguous_indices(make_parser: Any) -> None:
    case = next(c for c in CASES if c.id == 'qwen3-unknown-names-filtered')
    for label, chunks in chunkings(case.text, case.tags):
        deltas = tool_deltas(stream_flagged(case.parser(make_parser), chunks))
        by_index = _per_index(deltas)
        assert sorted(by_index) == [0, 1], label
        assert by_index[0][0].function.name == 'get_weather'
        assert by_index[1][0].function.name == 'get_time'
        names = {d.function.name for d in deltas} - {None}
        assert names == {'get_weather', 'get_time'}


def test_parse_complete_tool_call_objects(make_parser: Any) -> None:
    case = next(c for c in CASES if c.id == 'qwen3-sequential')
    content, calls, reasoning = case.parser(make_parser).parse_complete(case.text)
    assert (content, reasoning) == ('\n\n', '\nThree lookups.\n')
    assert [c.type for c in calls] == ['function'] * 3
    assert len({c.id for c in calls}) == 3 and all(c.id for c in calls)
    assert [json.loads(c.function.arguments) for c in calls] == [{'city': 'Beijing'}, {'city': 'Shanghai'}, {}]


# ---- escapes split across chunks -------------------------------------------------


@pytest.mark.parametrize('tool', ['qwen3', 'internlm', 'llama3'])
def test_backslash_and_quote_escapes_split_everywhere(tool: str, make_parser: Any) -> None:
    """A string ending in an escaped backslash, and an escaped quote, cut at every pair of points."""
    args = r'{"path": "C:\\dir\\", "q": "say \"hi\\\"", "z": "\\"}'
    assert json.loads(args) == {'path': 'C:\\dir\\', 'q': 'say "hi\\"', 'z': '\\'}
    wrappers = {
        'qwen3': ('<tool_call>\n{"name": "search", "arguments": ', '}\n</tool_call>after'),
        'internlm': ('<|action_start|><|plugin|>\n{"name": "search", "parameters": ', '}<|action_end|>after'),
        'llama3': ('<|python_tag|>{"name": "search", "parameters": ', '}after'),
    }
    head, tail = wrappers[tool]
    text = head + args + tail
    content = 'after'
    start = len(head)
    slashes = [start + i for i, ch in enumerate(args) if ch in '\\"']
    for a in slashes:
        for b in (a + 1, a + 2):
            parser = make_parser(None, tool)
            got = reconstruct(parser, stream_flagged(parser, split_at(text, [a, b]))).key()
            assert got == (content, None, [('search', args)]), (a, b)


def test_close_tag_inside_string_split_inside_tag(make_parser: Any) -> None:
    args = '{"html": "a</tool_call>b", "k": "</tool_call>"}'
    text = qwen_call('search', args) + 'tail'
    for start in [i for i in range(len(text)) if text.startswith('</tool_call>', i)]:
        for cut in range(start + 1, start + len('</tool_call>')):
            parser = make_parser(None, 'qwen3')
            got = reconstruct(parser, stream_flagged(parser, [text[:cut], text[cut:]])).key()
            assert got == ('tail', None, [('search', args)]), cut


# ---- large payloads ----------------------------------------------------------------


@pytest.fixture(scope='module')
def one_megabyte_args() -> str:
    unit = r'lorem ipsum 中文😀 \"q\" \\ </tool_call> <|action_end|> {[,:]} '
    value = unit * ((1 << 20) // len(unit) + 1)
    args = '{"data": "' + value + '", "n": 1}'
    assert len(args) > 1 << 20 and json.loads(args)['n'] == 1
    return args


@pytest.mark.parametrize('tool,size', [('qwen3', 256), ('qwen3', 4096), ('internlm', 4096), ('llama3', 4096)])
def test_one_megabyte_arguments(tool: str, size: int, one_megabyte_args: str, make_parser: Any) -> None:
    name_field = 'arguments' if tool == 'qwen3' else 'parameters'
    head = {'qwen3': '<tool_call>\n', 'internlm': '<|action_start|><|plugin|>\n', 'llama3': '<|python_tag|>'}[tool]
    tail = {'qwen3': '\n</tool_call>', 'internlm': '<|action_end|>', 'llama3': ''}[tool]
    text = 'Before. ' + head + '{"name": "search", "' + name_field + '": ' + one_megabyte_args + '}' + tail + ' After.'
    parser = make_parser(None, tool)
    got = stream(parser, fixed_chunks(text, size))
    assert got.content == 'Before.  After.'
    assert got.reasoning is None
    assert len(got.calls) == 1 and got.calls[0][0] == 'search'
    assert got.calls[0][1] == one_megabyte_args


def test_many_short_strings_arguments(make_parser: Any) -> None:
    args = '{' + ', '.join(f'"k{i}": ["v{i}", "", "\\"", {{"x": "}}"}}]' for i in range(20000)) + '}'
    text = qwen_call('search', args)
    assert complete(make_parser(None, 'qwen3'), text).calls == [('search', args)]
    assert stream(make_parser(None, 'qwen3'), fixed_chunks(text, 4096)).calls == [('search', args)]


# ---- token-by-token with the real Qwen tokenizer ----------------------------------

TOKENIZER_CASES = [c for c in QWEN_CASES if c.tool in ('qwen3', 'qwen', 'qwen2d5')]


def test_qwen_tags_are_single_tokens(qwen_tokenizer: Any) -> None:
    for tag in QWEN_TAGS:
        ids = qwen_tokenizer.encode(tag)
        assert len(ids) == 1 and qwen_tokenizer.decode(ids) == tag


@pytest.mark.parametrize('case', TOKENIZER_CASES, ids=[c.id for c in TOKENIZER_CASES])
def test_stream_token_by_token(case: Case, make_parser: Any, qwen_tokenizer: Any) -> None:
    chunks = token_chunks(qwen_tokenizer, case.text)
    assert ''.join(t for t, _ in chunks) == case.text
    assert _stream_key(case, make_parser, chunks) == case.expected
    assert _stream_key(case, make_parser, chunks, flush=True) == case.expected


def test_token_by_token_multibyte_pieces(make_parser: Any, qwen_tokenizer: Any) -> None:
    """Rare characters split over byte tokens still reconstruct exactly."""
    args = '{"query": "𠜎𠜱𡿺 ꙮ 🫠🧑🏽‍🚀 ∮ ẞ"}'
    text = '<think>\n𠜎 reasoning 🫠\n</think>\n\n内容 ꙮ\n' + qwen_call('search', args)
    chunks = token_chunks(qwen_tokenizer, text)
    assert any(t == '' for t, _ in chunks), 'some tokens decode to partial characters'
    parser = make_parser('default', 'qwen3')
    flagged = stream_flagged(parser, chunks)
    check_messages(flagged)
    assert reconstruct(parser, flagged).key() == ('\n\n内容 ꙮ\n', '\n𠜎 reasoning 🫠\n', [('search', args)])


def test_identity_checker_guard() -> None:
    """Guard: the shared identity checker rejects an argument-first delta."""
    from lmparse import DeltaFunctionCall, DeltaToolCall

    bad = [DeltaToolCall(index=0, id=None, type=None, function=DeltaFunctionCall(arguments='{}'))]
    with pytest.raises(AssertionError):
        check_identity_first(bad)


# ---- generated responses: expected result known by construction ------------------------

ALLOWED = ('get_weather', 'get_time', 'search')
GENERATED_EXAMPLES = 3000 if os.environ.get('LMPARSE_SLOW') else 150
OPENERS = {'qwen3': ('<tool_call>\n', '\n</tool_call>', 'arguments'),
           'internlm': ('<|action_start|><|plugin|>\n', '<|action_end|>', 'parameters'),
           'llama3': ('<|python_tag|>', '', 'parameters')}
STRING_PIECES = ['a', ' ', '中文', '😀', '"', '\\', '\n', '}', ']', '{', '[', ',', ':', '</tool_call>', '<tool_call>',
                 '<|action_end|>', '<|python_tag|>', '</think>', '<think>']
json_leaf = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
             | st.lists(st.sampled_from(STRING_PIECES), max_size=6).map(''.join))
json_args = st.dictionaries(st.sampled_from(['city', 'query', 'x', 'name', 'arguments', 'parameters']),
                            st.recursive(json_leaf, lambda c: st.lists(c, max_size=3)
                                         | st.dictionaries(st.sampled_from(['k', 'v']), c, max_size=2),
                                         max_leaves=5),
                            max_size=3)
# Ordinary text: no '<' or '|', so it never forms a tag; must contain a non-newline character.
plain_text = st.text(alphabet='ab c\n中😀{}"\\:,.>', min_size=1, max_size=12).filter(lambda t: t.strip('\n'))


@st.composite
def tool_block(draw: Any, dialect: str) -> tuple[str, tuple[str, str] | None]:
    head, tail, field_name = OPENERS[dialect]
    name = draw(st.sampled_from(ALLOWED + ('unknown_tool', 'rm')))
    shape = draw(st.sampled_from(['name-first', 'args-first', 'no-args']))
    args = json.dumps(draw(json_args), ensure_ascii=draw(st.booleans()),
                      separators=draw(st.sampled_from([None, (',', ':')])), indent=draw(st.sampled_from([None, 1])))
    if shape == 'name-first':
        envelope = f'{{"name": "{name}", "{field_name}": {args}}}'
    elif shape == 'args-first':
        envelope = f'{{"{field_name}": {args}, "name": "{name}"}}'
    else:
        envelope, args = f'{{"name": "{name}"}}', '{}'
    return head + envelope + tail, ((name, args) if name in ALLOWED else None)


@st.composite
def channel_items(draw: Any, dialect: str) -> tuple[str, str, list[tuple[str, str]]]:
    """Text and tool blocks in one channel: (raw, visible text, accepted calls)."""
    raw, visible, calls = '', '', []
    previous_was_tool = False
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            text = draw(plain_text)
            raw += text
            visible += text
            previous_was_tool = False
        else:
            if previous_was_tool:
                sep = draw(st.sampled_from(['', '\n', '\n\n']))
                if dialect == 'llama3' and sep == '':
                    sep = '\n'
                raw += sep  # newlines between two tool blocks are dropped
            block, call = draw(tool_block(dialect))
            raw += block
            if call is not None:
                calls.append(call)
            previous_was_tool = True
    return raw, visible, calls


@st.composite
def generated_response(draw: Any) -> tuple[str, str, str, tuple[Any, Any, Any]]:
    dialect = draw(st.sampled_from(['qwen3', 'internlm', 'llama3']))
    reasoning = draw(st.sampled_from([None, 'default']))
    text, calls = '', []
    reasoning_text = None
    if reasoning == 'default':
        raw, visible, r_calls = draw(channel_items(dialect))
        text += draw(st.sampled_from(['', '<think>'])) + raw + '</think>'
        reasoning_text = visible or None
        calls += r_calls
    raw, visible, c_calls = draw(channel_items(dialect))
    text += raw
    calls += c_calls
    return dialect, reasoning, text, (visible or None, reasoning_text, calls)


@settings(max_examples=GENERATED_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=generated_response(), data=st.data())
def test_generated_responses(generated: tuple[str, Any, str, Any], data: st.DataObject, make_parser: Any) -> None:
    dialect, reasoning, text, expected = generated
    assert complete(make_parser(reasoning, dialect), text).key() == expected
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=20), label='cuts')
    parser = make_parser(reasoning, dialect)
    flagged = stream_flagged(parser, split_at(text, cuts))
    check_messages(flagged)
    assert reconstruct(parser, flagged).key() == expected
