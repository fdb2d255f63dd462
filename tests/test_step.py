"""StepFun Step-3 (steptml in special-token sections), Step-3.5 / Step-5 (Qwen3-Coder XML) and their reasoning.

Syntax as SGLang's Step-3 tests and detector write it::

    <｜tool_calls_begin｜>
    <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
    <steptml:parameter name="KEY">VALUE</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

and Step-3.5's ``<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nV\\n</parameter>\\n</function>\\n</tool_call>``.
The template puts ``<think>`` in the prompt: output starts in reasoning. No
Step tokenizer is on PyPI; the special section markers stream as one chunk
each in ``test_special_token_atomic_streams``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


from lmparse import ReasoningParserManager, Step3p5ToolParser, Step3ToolParser, StepReasoningParser, ToolParserManager
from tests import catalogue

B, E = '<\uff5ctool_calls_begin\uff5c>', '<\uff5ctool_calls_end\uff5c>'
CB, CE, SEP = '<\uff5ctool_call_begin\uff5c>', '<\uff5ctool_call_end\uff5c>', '<\uff5ctool_sep\uff5c>'
THC = '</think>'
SPECIAL = (B, E, CB, CE, SEP, THC)
TAGS = (*SPECIAL, '<steptml:invoke name=', '</steptml:invoke>', '<steptml:parameter name=', '</steptml:parameter>',
        '<tool_call>', '</tool_call>', '<function=', '</function>', '<parameter=', '</parameter>')


def step3_call(name: str, **params: str) -> str:
    body = ''.join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>\n' for k, v in params.items())
    return f'{CB}function{SEP}<steptml:invoke name="{name}">\n{body}</steptml:invoke>{CE}'


def step3_block(*calls: str) -> str:
    return f'{B}\n' + '\n'.join(calls) + f'\n{E}'


def coder_call(name: str, **params: str) -> str:
    body = ''.join(f'<parameter={k}>\n{v}\n</parameter>\n' for k, v in params.items())
    return f'<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'step3'
    tool: str | None = 'step3'


CASES = [
    Case('step3-basic', f'The user wants weather.{THC}Let me check.' + step3_block(step3_call('get_weather', city='Paris')),
         'Let me check.', 'The user wants weather.', [('get_weather', '{"city": "Paris"}')]),
    Case('step3-typed-values', f'x{THC}' + step3_block(step3_call('search', query='a < b & "c"', limit='3')),
         None, 'x', [('search', '{"query": "a < b & \\"c\\"", "limit": 3}')]),
    Case('step3-two-calls-and-unknown', f'x{THC}' + step3_block(step3_call('get_time'), step3_call('rm', p='/'),
                                                                 step3_call('search', query='q')) + ' done',
         ' done', 'x', [('get_time', '{}'), ('search', '{"query": "q"}')]),
    Case('step3-unspaced', f'x{THC}{B}{CB}function{SEP}<steptml:invoke name="search"><steptml:parameter name="query">'
         f'q</steptml:parameter></steptml:invoke>{CE}{E}', None, 'x', [('search', '{"query": "q"}')]),
    # vLLM's own step3 test outputs: no call-type header, and a stray <｜tool_sep｜> between calls
    Case('step3-vllm-test-shapes', f'x{THC}{B}{CB}<steptml:invoke name="get_weather"><steptml:parameter name="city">'
         f'Tokyo</steptml:parameter></steptml:invoke>{CE}{SEP}{CB}<steptml:invoke name="get_time"></steptml:invoke>'
         f'{CE}{E}', None, 'x', [('get_weather', '{"city": "Tokyo"}'), ('get_time', '{}')]),
    Case('step3-multiline-value', f'x{THC}' + step3_block(step3_call('search', query='line one\nline two')),
         None, 'x', [('search', '{"query": "line one\\nline two"}')]),
    Case('step3-tool-in-reasoning', 'Look up.' + step3_block(step3_call('get_time')) + f'more{THC}Answer.',
         'Answer.', 'Look up.more', [('get_time', '{}')]),
    Case('step3-lookalikes', f'x{THC}a <steptml:invoke name="get_time"> b <\uff5ctool_calls c',
         'a <steptml:invoke name="get_time"> b <\uff5ctool_calls c', 'x', []),
    Case('step3-tool-choice-none', f'x{THC}ok' + step3_block(step3_call('get_time')),
         'ok' + step3_block(step3_call('get_time')), 'x', [], request={'tool_choice': 'none'}),
    Case('step3-thinking-off', 'Plain answer.', 'Plain answer.', None, [],
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('step3-no-close-is-reasoning', 'Still thinking', None, 'Still thinking', []),
    Case('step3-truncated-in-value', f'x{THC}{B}\n{CB}function{SEP}<steptml:invoke name="search">\n'
         '<steptml:parameter name="query">ab', None, 'x', [('search', '{"query": "ab"}')]),
    Case('step3-truncated-in-name', f'x{THC}ok{B}\n{CB}function{SEP}<steptml:invoke name="sea', 'ok', 'x', []),
    Case('step3p5-basic', f'Plan.\n{THC}\n\n' + coder_call('search', query='q', limit='2'), '\n\n', 'Plan.\n',
         [('search', '{"query": "q", "limit": 2}')], 'step3p5', 'step3p5'),
    Case('step3p5-two-blocks', f'x{THC}' + coder_call('get_time') + '\n' + coder_call('get_weather', city='Rome'),
         None, 'x', [('get_time', '{}'), ('get_weather', '{"city": "Rome"}')], 'step3p5', 'step3p5'),
    Case('step5-basic', f'x{THC}Sure.\n' + coder_call('get_weather', city='Oslo'), 'Sure.\n', 'x',
         [('get_weather', '{"city": "Oslo"}')], 'step5', 'step5'),
    Case('step5-no-tools-text', f'x{THC}Just text.', 'Just text.', 'x', [], 'step5', 'step5'),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def test_names_and_classes() -> None:
    assert ToolParserManager.get('step3') is Step3ToolParser
    assert ToolParserManager.get('step3p5') is Step3p5ToolParser
    assert ToolParserManager.get('step5') is Step3p5ToolParser
    for name in ('step3', 'step3p5', 'step5'):
        assert ReasoningParserManager.get(name) is StepReasoningParser
    assert Step3ToolParser.get_tool_open_tag() == B
    assert Step3ToolParser.get_tool_close_tag() == E


def test_step3_keeps_special_tokens_with_tools(make_parser: Any) -> None:
    assert make_parser('step3', 'step3').request.skip_special_tokens is False
    assert make_parser('step3', 'step3', request_tools=None).request.skip_special_tokens is not False


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)
