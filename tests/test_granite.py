"""IBM Granite: 20B-FC ``<function_call>``, 3.x ``<|tool_call|>[...]`` JSON arrays, thought-process reasoning, 4.x.

Every case is checked three ways: streamed reconstruction over many chunkings
(one chunk, every split inside every marker, fixed and random sizes, every
two-way split), ``parse_complete`` and a literal expected result.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


from lmparse import (
    Granite20bFcToolParser,
    GraniteReasoningParser,
    GraniteToolParser,
    HermesToolParser,
    Qwen3ToolParser,
    ReasoningParser,
    ReasoningParserManager,
    ToolParserManager,
)
from lmparse.dialects.granite import GraniteThinkingReasoningParser
from tests import catalogue
from tests.streaming import case_checks, fixed_chunks, run_case, stream_flagged, tool_deltas

GT, GS = '<|tool_call|>', '<tool_call>'
THOUGHT, RESPONSE = 'Here is my thought process:', 'Here is my response:'
FC = '<function_call>'
TAGS = (GT, GS, '</tool_call>', THOUGHT, RESPONSE, '<think>', '</think>', FC)


def env(name: str, args: str) -> str:
    return f'{{"name": "{name}", "arguments": {args}}}'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = None
    tool: str | None = 'granite'


W = '{"city": "Boston", "unit": "fahrenheit"}'
CASES = [
    # Granite 3.x: <|tool_call|> then a JSON list of calls (the template's own words)
    Case('one', GT + '[' + env('get_weather', W) + ']', None, None, [('get_weather', W)]),
    Case('several-with-unknown', GT + '[' + env('get_weather', '{"city": "A"}') + ', ' + env('rm', '{"p": "/"}')
         + ', ' + env('search', '{"query": "q"}') + ']', None, None,
         [('get_weather', '{"city": "A"}'), ('search', '{"query": "q"}')]),
    Case('arguments-first', GT + '[{"arguments": {"query": "北京"}, "name": "search"}]', None, None,
         [('search', '{"query": "北京"}')]),
    Case('spaced-and-newlines', GT + ' [\n  ' + env('get_time', '{}') + ',\n  ' + env('search', '{}') + '\n]', None,
         None, [('get_time', '{}'), ('search', '{}')]),
    Case('text-before-and-after', 'Checking. ' + GT + '[' + env('get_time', '{}') + ']\nDone.', 'Checking. \nDone.',
         None, [('get_time', '{}')]),
    Case('single-object', GT + env('get_time', '{}'), None, None, [('get_time', '{}')]),
    Case('two-blocks', GT + '[' + env('get_time', '{}') + ']\n' + GT + '[' + env('search', '{}') + ']', None, None,
         [('get_time', '{}'), ('search', '{}')]),
    # Granite 3.1 writing <tool_call> as text
    Case('text-opener', 'Sure. ' + GS + '[' + env('search', '{"query": "x"}') + '] ok', 'Sure.  ok', None,
         [('search', '{"query": "x"}')]),
    Case('text-opener-in-prose', 'Use the <tool_call> tag.', 'Use the <tool_call> tag.', None, []),
    Case('text-opener-at-end', 'x ' + GS, 'x ' + GS, None, []),
    # a second open tag, as <|tool_call|> is, whether or not the request offers tools (vLLM's
    # tests/tool_parsers/test_granite_tool_parser.py sends none): with none, lmparse's own rule drops
    # the calls as undeclared, as it does after <|tool_call|> (replace mode keeps them)
    Case('text-opener-without-tools', GS + '[' + env('search', '{}') + ']', None, None, [],
         request={'request_tools': None}),
    Case('token-opener-without-tools', GT + '[' + env('search', '{}') + ']', None, None, [],
         request={'request_tools': None}),
    Case('text-opener-in-prose-without-tools', 'Use the <tool_call> tag.', 'Use the <tool_call> tag.', None, [],
         request={'request_tools': None}),
    Case('text-opener-nested-values', GS + ' [{\n  "name": "search",\n  "arguments": {"a": [1, {"b": null}], '
         '"o": {"n": "v"}, "e": [], "f": 3.14}\n}]', None, None,
         [('search', '{"a": [1, {"b": null}], "o": {"n": "v"}, "e": [], "f": 3.14}')]),
    Case('text-opener-around', 'Sure. ' + GS + ' [' + env('search', '{"x": {"y": "z"}}') + '] ok', 'Sure.  ok',
         None, [('search', '{"x": {"y": "z"}}')]),
    Case('text-opener-in-value', GS + '[' + env('search', '{"query": "write <tool_call> then <|tool_call|>"}') + ']',
         None, None, [('search', '{"query": "write <tool_call> then <|tool_call|>"}')]),
    # Granite 3.2/3.3 reasoning
    Case('thought-process', THOUGHT + '\nThe user asks X.\n' + RESPONSE + '\nX is Y.', '\nX is Y.',
         '\nThe user asks X.\n', [], 'granite'),
    Case('thought-then-call', THOUGHT + ' Need weather. ' + RESPONSE + ' ' + GT + '[' + env('get_weather', W) + ']',
         ' ', ' Need weather. ', [('get_weather', W)], 'granite'),
    Case('call-inside-thought', THOUGHT + 'a' + GT + '[' + env('get_time', '{}') + ']b' + RESPONSE + 'c', 'c', 'ab',
         [('get_time', '{}')], 'granite'),
    Case('no-thought', 'Just an answer.', 'Just an answer.', None, [], 'granite'),
    Case('thought-disabled', THOUGHT + 'x' + RESPONSE + 'y', 'xy', None, [], 'granite',
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    # malformed and truncated (documented best effort)
    Case('garbage-after-open', 'a' + GT + ' I am not sure.', 'aI am not sure.', None, []),
    Case('missing-array-close', GT + '[' + env('get_time', '{}'), None, None, [('get_time', '{}')]),
    Case('missing-array-close-then-text', GT + '[' + env('get_time', '{}') + ' Then more.', 'Then more.', None,
         [('get_time', '{}')]),
    Case('missing-comma', GT + '[' + env('get_time', '{}') + env('search', '{}') + ']', None, None,
         [('get_time', '{}'), ('search', '{}')]),
    Case('truncated-arguments', GT + '[' + env('get_time', '{}') + ', {"name": "get_weather", "arguments": {"city": "Bo',
         None, None, [('get_time', '{}'), ('get_weather', '{"city": "Bo')]),
    Case('truncated-after-open', 'ok ' + GT, 'ok ', None, []),
    Case('empty-array', 'a' + GT + '[] b', 'a b', None, []),
    Case('all-unknown', 'a' + GT + '[' + env('rm', '{}') + '] b', 'a b', None, []),
    # Granite 4.0 / Hermes / Qwen: <tool_call>{...}</tool_call>
    Case('granite4', 'Let me look. <tool_call>\n' + env('get_weather', W) + '\n</tool_call>', 'Let me look. ', None,
         [('get_weather', W)], None, 'granite4'),
    Case('granite4-two', '<tool_call>' + env('get_time', '{}') + '</tool_call>\n<tool_call>' + env('search', '{}')
         + '</tool_call>', None, None, [('get_time', '{}'), ('search', '{}')], None, 'granite4'),
    Case('granite-thinking', '<think>plan</think>\nAnswer <tool_call>' + env('get_time', '{}') + '</tool_call>',
         'Answer ', 'plan', [('get_time', '{}')], 'granite_thinking_parser', 'granite4'),
    # Granite-20B-FunctionCalling: '<function_call> ' + JSON per call, no close tag
    Case('g20b-one', FC + ' ' + env('get_weather', W), None, None, [('get_weather', W)], None, 'granite-20b-fc'),
    Case('g20b-two', FC + ' ' + env('get_time', '{}') + FC + ' ' + env('search', '{"query": "q"}'), None, None,
         [('get_time', '{}'), ('search', '{"query": "q"}')], None, 'granite-20b-fc'),
    Case('g20b-two-lines', FC + ' ' + env('get_time', '{}') + '\n' + FC + ' ' + env('search', '{}'), None, None,
         [('get_time', '{}'), ('search', '{}')], None, 'granite-20b-fc'),
    Case('g20b-content-around', 'Sure. ' + FC + ' ' + env('get_time', '{}') + ' Done.', 'Sure.  Done.', None,
         [('get_time', '{}')], None, 'granite-20b-fc'),
    Case('g20b-no-function', FC + ' ' + env('no_function', '{}'), None, None, [], None, 'granite-20b-fc'),
    Case('g20b-truncated', FC + ' {"name": "get_weather", "arguments": {"city": "Bo', None, None,
         [('get_weather', '{"city": "Bo')], None, 'granite-20b-fc'),
    Case('g20b-plain', 'The weather is fine.', 'The weather is fine.', None, [], None, 'granite-20b-fc'),
    # Granite 4.2 thinking: <think> reasoning, Nemotron V3 / Qwen3-Coder XML calls
    Case('granite42-xml', 'plan</think>\n\nChecking.\n<tool_call>\n<function=search>\n<parameter=query>\nq\n'
         '</parameter>\n</function>\n</tool_call>', 'Checking.\n', 'plan', [('search', '{"query": "q"}')],
         'granite_thinking_parser', 'qwen3coder'),
    Case('hermes', '<tool_call>' + env('search', '{"query": "q"}') + '</tool_call>', None, None,
         [('search', '{"query": "q"}')], None, 'hermes'),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _parser(case: Case, make_parser: Any) -> Any:
    request = dict(case.request)
    if 'request_tools' in request:
        return make_parser(case.reasoning, case.tool, request_tools=request.pop('request_tools'), **request)
    return case.parser(make_parser)


def _run(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> Any:
    return run_case(_parser(case, make_parser), chunks, flush=flush)


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS, parser_of=_parser)


def test_arguments_stream_as_generated(make_parser: Any) -> None:
    text = GT + '[' + env('get_weather', W) + ']'
    deltas = tool_deltas(stream_flagged(make_parser(None, 'granite'), fixed_chunks(text, 4)))
    assert deltas[0].function.name == 'get_weather' and deltas[0].id
    assert ''.join(d.function.arguments for d in deltas[1:]) == W
    assert len(deltas) > 5


def test_registration(make_parser: Any) -> None:
    assert ToolParserManager.get('granite') is GraniteToolParser
    assert ToolParserManager.get('granite-20b-fc') is Granite20bFcToolParser
    assert ReasoningParserManager.get('granite') is GraniteReasoningParser
    assert ReasoningParserManager.get('granite_thinking_parser') is GraniteThinkingReasoningParser
    assert issubclass(GraniteThinkingReasoningParser, ReasoningParser)
    for name in ('hermes', 'qwen3_json', 'granite4'):
        assert ToolParserManager.get(name) is HermesToolParser
    assert ToolParserManager.get('qwen25') is Qwen3ToolParser
    assert make_parser(None, 'granite').request.skip_special_tokens is False
    assert make_parser(None, 'hermes').request.skip_special_tokens is False
    assert make_parser(None, 'granite', request_tools=None).request.skip_special_tokens is not False
