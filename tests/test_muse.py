"""Muse Spark (``muse``) and Muse Glimmer (``muse_glimmer``): recipient-framed messages, ATEM calls.

Syntax as vLLM 0.33's ``muse_tool_parser.py`` / ``muse_reasoning_parser.py`` and
SGLang 0.5.23's ``muse_glimmer_format.py`` write it (see lmparse/dialects/muse.py)::

    to=self<|message|>R<|eom|><|start|>assistant to=TOOL<|message|><atem:function_calls>
    <atem:invoke name="N"><atem:parameter name="K">V</atem:parameter></atem:invoke>
    </atem:function_calls><|eom|><|start|>assistant to=user<|message|>A<|eot|>

The Muse tokenizer is not on PyPI: every split inside every marker is checked,
and the atomic test streams each special token whole.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from lmparse import (
    MuseGlimmerReasoningParser,
    MuseGlimmerToolParser,
    MuseReasoningParser,
    MuseToolParser,
    ReasoningParserManager,
    ToolParserManager,
)
from tests import catalogue
from tests.streaming import fixed_chunks, stream_flagged, tool_deltas

START, MSG, EOM, EOT = '<|start|>', '<|message|>', '<|eom|>', '<|eot|>'
SPECIAL = (START, MSG, EOM, EOT)
TAGS = (*SPECIAL, '<atem:function_calls>', '</atem:function_calls>', '<atem:invoke', '</atem:invoke>',
        '<atem:parameter', '</atem:parameter>', ' to=', 'to=self')


def first(rcpt: str | None, body: str, end: str = EOM) -> str:
    """The turn's first message: the prompt already wrote ``<|start|>assistant``."""
    return (f' to={rcpt}' if rcpt else '') + MSG + body + end


def msg(rcpt: str | None, body: str, end: str = EOM) -> str:
    return START + 'assistant' + (f' to={rcpt}' if rcpt else '') + MSG + body + end


def invoke(name: str, **params: str) -> str:
    body = ''.join(f'<atem:parameter name="{k}">{v}</atem:parameter>\n' for k, v in params.items())
    return f'<atem:invoke name="{name}">\n{body}</atem:invoke>\n'


def calls(*invokes: str) -> str:
    return '<atem:function_calls>\n' + ''.join(invokes) + '</atem:function_calls>'


@dataclass(frozen=True)
class Case(catalogue.Case):
    """A case of this dialect: the parser names default to its own."""

    reasoning: str | None = 'muse'
    tool: str | None = 'muse'


ECHO = calls(invoke('get_time'))
W = '{"city": "Paris"}'
CASES = [
    Case('reasoning-then-answer', first('self', 'Think.') + msg('user', 'Answer.', EOT), 'Answer.', 'Think.', []),
    Case('reasoning-then-call', first('self', 'Need weather.') + msg('get_weather', calls(invoke('get_weather', city='Paris'))),
         None, 'Need weather.', [('get_weather', W)]),
    Case('several-messages-and-invokes',
         first('self', 'Plan.') + msg('get_weather', calls(invoke('get_weather', city='Paris')))
         + msg('self', ' More.') + msg('search', calls(invoke('search', query='q', limit='2'), invoke('get_time')))
         + msg('user', 'Done.', EOT), 'Done.', 'Plan. More.',
         [('get_weather', W), ('search', '{"query": "q", "limit": 2}'), ('get_time', '{}')]),
    Case('echo-in-reasoning', first('self', 'I could write ' + ECHO + ' here.') + msg('user', 'No.', EOT), 'No.',
         'I could write ' + ECHO + ' here.', []),
    Case('echo-in-answer', first('self', 'r') + msg('user', 'Call it like ' + ECHO, EOT), 'Call it like ' + ECHO, 'r',
         []),
    Case('commentary-is-content', first('self', 'r') + msg('commentary', 'Looking it up. ')
         + msg('get_time', calls(invoke('get_time'))) + msg('user', 'It is noon.', EOT),
         'Looking it up. It is noon.', 'r', [('get_time', '{}')]),
    Case('developer-dropped', first('developer', 'internal note') + msg('user', 'Hi.', EOT), 'Hi.', None, []),
    Case('recipient-less-is-reasoning', first(None, 'Hmm.') + msg('user', 'Yes.', EOT), 'Yes.', 'Hmm.', []),
    Case('unterminated-reasoning-then-call', ' to=self' + MSG + 'Let me call to=get_weather' + MSG
         + calls(invoke('get_weather', city='Oslo')) + EOM, None, 'Let me call ', [('get_weather', '{"city": "Oslo"}')]),
    Case('unterminated-reasoning-then-start', ' to=self' + MSG + 'cut' + msg('user', 'A.', EOT), 'A.', 'cut', []),
    Case('truncated-value', first('self', 'r') + START + 'assistant to=get_weather' + MSG
         + '<atem:function_calls>\n<atem:invoke name="get_weather">\n<atem:parameter name="city">Par', None, 'r',
         [('get_weather', '{"city": "Par"}')]),
    Case('truncated-invoke-tag', first('self', 'r') + START + 'assistant to=get_weather' + MSG
         + '<atem:function_calls>\n<atem:invoke name="get_we', None, 'r', []),
    Case('truncated-header', first('self', 'r') + START + 'assistant to=get_wea', None, 'r', []),
    Case('unknown-tool-dropped', msg('rm', calls(invoke('rm', path='/'), invoke('get_time'))), None, None,
         [('get_time', '{}')]),
    Case('json-or-raw-values', msg('search', calls(invoke('search', query='"q"', limit=' 5 ', opts='{"k": [1, 2]}',
                                                      note='hello world', flag='true', bad='{"k": ', big='1e999'))),
         None, None, [('search', '{"query": "\\"q\\"", "limit": 5, "opts": {"k": [1, 2]}, "note": "hello world", '
                                 '"flag": true, "bad": "{\\"k\\": ", "big": "1e999"}')]),
    Case('doubled-namespace', msg('get_time.get_time', calls(invoke('get_time.get_time'))), None, None,
         [('get_time', '{}')]),
    Case('literal-markers-in-bodies', first('self', 'a <|b|> c <| d < e') + msg('user', 'x <|eo y <|start', EOT),
         'x <|eo y <|start', 'a <|b|> c <| d < e', []),
    Case('unframed', 'Just text, to=nobody.', 'Just text, to=nobody.', None, []),
    Case('invoke-without-wrapper', msg('get_time', invoke('get_time')), None, None, [('get_time', '{}')]),
    Case('value-with-markup', msg('search', calls(invoke('search', query='<b>bold</b> & <atem:x>'))), None, None,
         [('search', '{"query": "<b>bold</b> & <atem:x>"}')]),
    Case('text-after-turn', first('user', 'A.', EOT) + '\n', 'A.', None, []),
    Case('tool-parser-alone', first('self', 'r') + msg('get_time', calls(invoke('get_time'))) + msg('user', 'a', EOT),
         'a', 'r', [('get_time', '{}')], reasoning=None),
    # without an active tool parser a tool message is text, framing included (as a tag dialect's tool block)
    Case('reasoning-parser-alone', first('self', 'r') + msg('get_time', ECHO) + msg('user', 'a', EOT),
         msg('get_time', ECHO) + 'a', 'r', [], tool=None),
    Case('tool-choice-none', first('self', 'r') + msg('get_time', ECHO) + msg('user', 'a', EOT),
         msg('get_time', ECHO) + 'a', 'r', [], request={'tool_choice': 'none'}),
    Case('reasoning-alone-first-message-is-a-call', first('get_time', ECHO), 'to=get_time' + MSG + ECHO + EOM, None,
         [], tool=None),
    Case('no-tools-offered', msg('rm', calls(invoke('rm', path='"/"'))) + msg('user', 'ok', EOT), 'ok', None, [],
         request={'request_tools': None}),
    # a header is at most 256 characters up to its <|message|> (decided the same for every chunking)
    Case('longest-header', ' to=' + 'x' * 253 + MSG + 'b' + EOM + msg('user', 'a', EOT), 'a', None, []),
    Case('header-too-long-is-text', ' to=' + 'x' * 254 + MSG + 'b' + EOM, 'to=' + 'x' * 254 + MSG + 'b', None, []),
    # Muse Glimmer: recipient-less is content, commentary / developer are tool channels, values always JSON-or-raw
    Case('glimmer-channels', first(None, 'Hello. ') + msg('commentary', 'prose dropped')
         + msg('developer', calls(invoke('get_time'))) + msg('self', 'r') + msg('user', 'Bye.', EOT), 'Hello. Bye.', 'r',
         [('get_time', '{}')], 'muse_glimmer', 'muse_glimmer'),
    Case('glimmer-decodes-strings', msg('search', calls(invoke('search', query='"q"'))), None, None,
         [('search', '{"query": "q"}')], 'muse_glimmer', 'muse_glimmer'),
]


CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk, test_every_two_way_split,
 test_special_token_atomic_streams, test_stream_arbitrary_splits) = catalogue.dialect_suite(CASES, TAGS, SPECIAL)


def test_names_and_classes() -> None:
    for name in ('muse', 'musespark1x'):
        assert ToolParserManager.get(name) is MuseToolParser
        assert ReasoningParserManager.get(name) is MuseReasoningParser
    assert ToolParserManager.get('muse_glimmer') is MuseGlimmerToolParser
    assert ReasoningParserManager.get('muse_glimmer') is MuseGlimmerReasoningParser


def test_special_tokens_kept(make_parser: Any) -> None:
    assert make_parser('muse', 'muse').request.skip_special_tokens is False


def test_arguments_stream_per_parameter(make_parser: Any) -> None:
    """A string-typed value streams as it arrives (Spark keeps it raw); any other is held to its close."""
    text = msg('search', calls(invoke('search', query='abcdefgh', limit='3')))
    deltas = tool_deltas(stream_flagged(make_parser('muse', 'muse'), fixed_chunks(text, 3)))
    assert deltas[0].function.name == 'search' and deltas[0].id
    args = [d.function.arguments for d in deltas[1:]]
    assert args[0].startswith('{"query": "') and args[-2:] == [', "limit": 3', '}']
    assert len(args) > 4 and ''.join(args[:-2]) == '{"query": "abcdefgh"'
    # Glimmer decodes every value (JSON or raw): each is held whole
    deltas = tool_deltas(stream_flagged(make_parser('muse_glimmer', 'muse_glimmer'), fixed_chunks(text, 3)))
    assert [d.function.arguments for d in deltas[1:]] == ['{"query": "abcdefgh"', ', "limit": 3', '}']


def test_identity_before_the_first_parameter_arrives(make_parser: Any) -> None:
    parser = make_parser('muse', 'muse')
    out = parser.stream_chunk(msg('search', '<atem:function_calls>\n<atem:invoke name="search">\n<atem:parameter '
                                  'name="query">partial', ''))
    deltas = tool_deltas(out)
    assert [d.function.name for d in deltas] == ['search', None]
    assert deltas[1].function.arguments == '{"query": "partial'  # a string value streams as it arrives


@pytest.mark.parametrize('pair', [('muse', 'qwen3'), ('default', 'muse'), ('muse', 'muse_glimmer'), ('beam', 'muse')])
def test_mismatched_halves_are_refused(make_parser: Any, pair: tuple[str, str]) -> None:
    with pytest.raises(ValueError, match='recipient-channel'):
        make_parser(*pair)


def test_tool_parser_is_not_a_block_parser() -> None:
    with pytest.raises(TypeError, match='response parser'):
        MuseToolParser().feed_tool_block('x', [], final=True)
