"""OpenBMB MiniCPM 5 XML tool calls and MiniCPM-V reasoning.

MiniCPM 5 as SGLang's ``MiniCPM5Detector`` documents it (several calls one
after another, no wrapper)::

    <function name="get_weather"><param name="city">北京</param><param name="date">2024-06-27</param></function>

String values raw, others JSON, typed by the tool's schema. MiniCPM-V:
``<think>`` … ``</think>`` (on unless ``enable_thinking`` is False), its
calls Qwen3-Coder's; ``<|im_end|>`` and the reserved markers are never text.
The tags are ordinary text for MiniCPM 5 (no tokenizer on PyPI): every
split inside every tag is checked.
"""
from __future__ import annotations

from dataclasses import dataclass

from lmparse import MiniCPM5ToolParser, MiniCPMVReasoningParser, ReasoningParserManager, ToolParserManager
from tests import catalogue

THO, THC, IM_END = '<think>', '</think>', '<|im_end|>'
SPECIAL = (THO, THC, IM_END, '<|reserved_12|>', '<reserved_13>')
TAGS = (*SPECIAL, '<function name="', '</function>', '<param name="', '</param>', '">', '<![CDATA[', ']]>')


def call(name: str, **params: str) -> str:
    body = ''.join(f'<param name="{k}">{v}</param>' for k, v in params.items())
    return f'<function name="{name}">{body}</function>'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = None
    tool: str | None = 'minicpm5'


CASES = [
    Case('basic', '好的。' + call('get_weather', city='北京', unit='celsius'), '好的。', None,
         [('get_weather', '{"city": "北京", "unit": "celsius"}')]),
    Case('typed-values', call('search', query='42', limit='3'), None, None, [('search', '{"query": "42", "limit": 3}')]),
    Case('several-calls-and-unknown', call('get_time') + '\n' + call('rm', path='/') + '\n' + call('search', query='q')
         + '\nDone.', '\nDone.', None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
    Case('multiline-value', call('search', query='line one\nline two'), None, None,
         [('search', '{"query": "line one\\nline two"}')]),
    Case('value-with-lookalikes', call('search', query='a <b> "c" </para'), None, None,
         [('search', '{"query": "a <b> \\"c\\" </para"}')]),
    Case('prose-function-tag-is-text', 'Use <function foo> or <function>bar</function>.',
         'Use <function foo> or <function>bar</function>.', None, []),
    Case('with-reasoning', f'Thinking.{THC}' + call('get_time'), None, 'Thinking.', [('get_time', '{}')],
         reasoning='default'),
    Case('missing-param-close', '<function name="search"><param name="query">abc</function>', None, None,
         [('search', '{"query": "abc"}')]),
    # marker text inside a value: a close tag is the value's end only when what follows confirms it
    Case('param-marker-in-value', '<function name="search"><param name="query">abc<param name="limit">2</param>'
         '</function>x', 'x', None, [('search', '{"query": "abc<param name=\\"limit\\">2"}')]),
    Case('close-markers-in-value', '<function name="search"><param name="query">a</param>b</function>c'
         '<function name="d"></param>\n</function>x', 'x', None,
         [('search', '{"query": "a</param>b</function>c<function name=\\"d\\">"}')]),
    Case('missing-param-close-text-after', '<function name="search"><param name="query">abc</function>x', None, None,
         [('search', '{"query": "abc</function>x"}')]),
    Case('truncated-in-value', 'ok<function name="search"><param name="query">ab', 'ok', None,
         [('search', '{"query": "ab"}')]),
    Case('truncated-in-name', 'ok<function name="sea', 'ok', None, []),
    # a value written as one CDATA section is its inner text (vLLM's and SGLang's parsers unwrap it)
    Case('cdata-value', call('search', query='<![CDATA[    def f():\n        pass\n]]>', limit='<![CDATA[3]]>'), None,
         None, [('search', '{"query": "    def f():\\n        pass\\n", "limit": 3}')]),
    Case('cdata-with-markers', call('search', query='<![CDATA[a</param>b <x> ]]>c]]>'), None, None,
         [('search', '{"query": "a</param>b <x> ]]>c"}')]),
    # not one whole section: the text as written
    Case('cdata-not-whole', call('search', query='<![CDATA[a]]> b') + call('search', query='x <![CDATA[a]]>')
         + call('search', query='<b>bold</b>') + call('search', query='<![CDATA[open'), None, None,
         [('search', '{"query": "<![CDATA[a]]> b"}'), ('search', '{"query": "x <![CDATA[a]]>"}'),
          ('search', '{"query": "<b>bold</b>"}'), ('search', '{"query": "<![CDATA[open"}')]),
    # held like a quoted value; cut short, it is emitted as written (the section never closed)
    Case('cdata-truncated', 'ok<function name="search"><param name="query"><![CDATA[ab', 'ok', None,
         [('search', '{"query": "<![CDATA[ab"}')]),
    Case('tool-choice-none', 'ok' + call('get_time'), 'ok' + call('get_time'), None, [],
         request={'tool_choice': 'none'}),
    # MiniCPM-V: reasoning with its channel markers, Qwen3-Coder calls
    Case('minicpmv-reasoning', f'Let me see.<|reserved_12|>{THC}The answer is 4.{IM_END}', 'The answer is 4.',
         'Let me see.', [], reasoning='minicpmv', tool='qwen3_coder'),
    Case('minicpmv-tool', f'x{THC}<reserved_13>\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>{IM_END}',
         '\n', 'x', [('get_time', '{}')], reasoning='minicpmv', tool='qwen3_coder'),
    Case('minicpmv-thinking-off', f'Direct answer.{IM_END}', 'Direct answer.', None, [], reasoning='minicpmv',
         tool='qwen3_coder', request={'chat_template_kwargs': {'enable_thinking': False}}),
    # thinking off: the tags vanish and their text is content (README "When thinking is disabled")
    Case('minicpmv-stray-think-off', f'{THO}hm{THC}Answer.', 'hmAnswer.', None, [], reasoning='minicpmv',
         tool='qwen3_coder', request={'chat_template_kwargs': {'enable_thinking': False}}),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def test_names_and_classes() -> None:
    assert ToolParserManager.get('minicpm5') is MiniCPM5ToolParser
    assert ReasoningParserManager.get('minicpmv') is MiniCPMVReasoningParser


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)
