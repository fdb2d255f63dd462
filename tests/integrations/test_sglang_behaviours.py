"""Opt-in lane: the behaviours SGLang's own detector tests pin, run on SGLang's detector and on lmparse's (LMPARSE_SGLANG=1).

SGLang 0.5.23 ships no sdist, so its tests cannot be run here. This file restates,
in lmparse's own words and inputs, what SGLang's public unit tests pin for the
detectors lmparse replaces: ``test/registered/unit/function_call/test_*_detector.py``
(tool-call detectors) and ``test/registered/unit/parser/test_reasoning_parser.py``
(reasoning detectors), per detector -- what comes out as normal text, reasoning
and calls for a given input, in one piece (``detect_and_parse``) and streamed
(``parse_streaming_increment`` then ``finish``), with ``force_reasoning``,
``stream_reasoning`` and ``force_nonempty_content``, and a reasoning detector
alone or feeding its tool detector as SGLang's ``serving_chat`` does.

Every behaviour runs twice: on SGLang's own detector class (which must pass: it
checks the restatement) and on the class lmparse puts under the same SGLang name
in replace mode (``register(replace=True)``). A behaviour lmparse does not
follow is listed in :mod:`tests.integrations.sglang_differences` with the reason
and xfails strictly there; an unlisted difference fails, and a listed one that
starts passing fails too.

    tools/install_peers.sh VENV
    VENV/bin/python setup.py -q build_ext --inplace
    LMPARSE_SGLANG=1 VENV/bin/python -m pytest tests/integrations/test_sglang_behaviours.py -q
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.integrations.sglang_differences import DIFFERENCES, SGLANG_0523_DIFFERS

_ENABLED = os.environ.get('LMPARSE_SGLANG') == '1'
pytestmark = pytest.mark.skipif(not _ENABLED, reason='opt-in: set LMPARSE_SGLANG=1 (SGLang behaviour lane)')
_sglang: Any = None
if _ENABLED:
    try:
        import sglang.srt.function_call.function_call_parser as _fcp
        import sglang.srt.parser.reasoning_parser as _rp
        from sglang.srt.entrypoints.openai.protocol import Function, Tool
        _sglang = True
    except ImportError:
        pytestmark = pytest.mark.skip(reason='sglang==0.5.23 is not installed (tools/install_peers.sh)')

FC = 'test/registered/unit/function_call/'
RP = 'test/registered/unit/parser/test_reasoning_parser.py'


# ---- the two implementations under each SGLang name ----

_IMPLS: dict[str, tuple[dict[str, type], dict[str, type]]] = {}


def _impls() -> dict[str, tuple[dict[str, type], dict[str, type]]]:
    """impl -> (SGLang tool name -> detector class, SGLang reasoning name -> detector class), SGLang's
    registries left as they were."""
    if not _IMPLS:
        from lmparse.integrations import sglang as plugin
        tools, reasoning = _fcp.FunctionCallParser.ToolCallParserEnum, _rp.ReasoningParser.DetectorMap
        own = (dict(tools), dict(reasoning))
        try:
            plugin.register(replace=True)
            ours = (dict(tools), dict(reasoning))
        finally:
            tools.clear()
            tools.update(own[0])
            reasoning.clear()
            reasoning.update(own[1])
        assert not any(getattr(c, 'lmparse_reasoning', None) or getattr(c, 'lmparse_tool', None)
                       for c in [*own[0].values(), *own[1].values()]), 'SGLang registries already replaced'
        _IMPLS['sglang'] = own
        _IMPLS['lmparse'] = ours
    return _IMPLS


class Engine:
    """The detectors one implementation serves under SGLang's names."""

    def __init__(self, impl: str) -> None:
        self.impl = impl
        self._tools, self._reasoning = _impls()[impl]

    def tool(self, name: str) -> Any:
        cls = self._tools[name]
        if self.impl == 'lmparse' and cls is _impls()['sglang'][0][name]:
            pytest.skip(f'lmparse does not replace SGLang tool parser {name!r}')
        return cls()

    def reasoning(self, name: str, **kwargs: Any) -> Any:
        cls = self._reasoning[name]
        if self.impl == 'lmparse' and cls is _impls()['sglang'][1][name]:
            pytest.skip(f'lmparse does not replace SGLang reasoning parser {name!r}')
        return cls(**kwargs)


def parser(engine: Engine, name: str, **kwargs: Any) -> Any:
    """SGLang's own ``ReasoningParser(name, ...)`` (its per-name overrides included) over ``engine``'s class."""
    registry = _rp.ReasoningParser.DetectorMap
    before = registry[name]
    registry[name] = type(engine.reasoning(name))  # skips when lmparse does not replace the name
    try:
        return _rp.ReasoningParser(name, **kwargs)
    finally:
        registry[name] = before


def tool(name: str, **props: str) -> Any:
    """An SGLang request tool with string/number/... properties (all required)."""
    properties = {k: {'type': t} for k, t in (props or {'path': 'string'}).items()}
    return Tool(type='function', function=Function(
        name=name, description=f'{name} tool',
        parameters={'type': 'object', 'properties': properties, 'required': list(properties)}))


def rstream(det: Any, chunks: Sequence[str], finish: bool = True) -> tuple[list[tuple[str, str]], str, str]:
    """Stream chunks through a reasoning detector: per-chunk (reasoning, normal), then the totals
    (``finish`` included, as SGLang's serving layer calls it at the end)."""
    steps = []
    for c in chunks:
        r = det.parse_streaming_increment(c)
        steps.append((r.reasoning_text, r.normal_text))
    if finish:
        r = det.finish()
        steps.append((r.reasoning_text, r.normal_text))
    return steps, ''.join(s[0] for s in steps), ''.join(s[1] for s in steps)


def tstream(det: Any, chunks: Sequence[str], tools: list[Any], finish: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """Stream chunks through a tool detector; (normal text, calls rebuilt by tool_index)."""
    text: list[str] = []
    calls: list[dict[str, Any]] = []

    def take(r: Any) -> None:
        text.append(r.normal_text or '')
        for item in r.calls:
            while len(calls) <= item.tool_index:
                calls.append({'name': '', 'arguments': ''})
            if item.name:
                calls[item.tool_index]['name'] = item.name
            calls[item.tool_index]['arguments'] += item.parameters or ''

    for c in chunks:
        take(det.parse_streaming_increment(c, tools))
    if finish:
        take(det.finish(tools))
    return ''.join(text), calls


def parsed(det: Any, text: str, tools: list[Any]) -> tuple[str, list[tuple[str, Any, int]]]:
    """detect_and_parse: (normal text, [(name, decoded arguments, tool_index)])."""
    r = det.detect_and_parse(text, tools)
    return r.normal_text, [(c.name, json.loads(c.parameters) if c.parameters else {}, c.tool_index) for c in r.calls]


def args(call: dict[str, Any]) -> Any:
    return json.loads(call['arguments'])


# ---- the behaviours ----

BEHAVIOURS: dict[str, tuple[str, Callable[[Engine], None]]] = {}


def pins(source: str) -> Callable[[Callable[[Engine], None]], Callable[[Engine], None]]:
    """Register a behaviour; ``source`` names the SGLang test (file::class::test) it restates."""
    def deco(fn: Callable[[Engine], None]) -> Callable[[Engine], None]:
        name = fn.__name__.removeprefix('b_')
        assert name not in BEHAVIOURS, name
        BEHAVIOURS[name] = (source, fn)
        return fn
    return deco


def _check(engine: Engine, name: str, text: str, want: tuple[str, str], **kw: Any) -> None:
    r = engine.reasoning(name, **kw).detect_and_parse(text)
    assert (r.reasoning_text, r.normal_text) == want


# qwen3 (SGLang's base reasoning detector with <think> </think>, not forced)

@pins(RP + '::TestBaseReasoningFormatDetector::test_detect_and_parse_normal_text')
def b_qwen3_plain_text_is_normal(e: Engine) -> None:
    _check(e, 'qwen3', 'Nothing to think about here.', ('', 'Nothing to think about here.'))


@pins(RP + '::TestBaseReasoningFormatDetector::test_detect_and_parse_with_start_token')
def b_qwen3_unclosed_think_is_reasoning(e: Engine) -> None:
    _check(e, 'qwen3', '<think>still pondering', ('still pondering', ''))


@pins(RP + '::TestBaseReasoningFormatDetector::test_detect_and_parse_complete_reasoning')
def b_qwen3_closed_think_splits(e: Engine) -> None:
    _check(e, 'qwen3', '<think>pondering</think>Answer: 7', ('pondering', 'Answer: 7'))


@pins(RP + '::TestBaseReasoningFormatDetector::test_detect_and_parse_force_reasoning')
def b_qwen3_forced_reasoning_without_tags(e: Engine) -> None:
    _check(e, 'qwen3', 'all of this is thought', ('all of this is thought', ''), force_reasoning=True)


@pins(RP + '::TestQwen3ForcedReasoningDetector::test_detect_and_parse_qwen3_forced_reasoning_format')
def b_qwen3_forced_reasoning_end_tag_only(e: Engine) -> None:
    _check(e, 'qwen3', 'step one, step two</think>Done.', ('step one, step two', 'Done.'), force_reasoning=True)


@pins(RP + '::TestQwen3ForcedReasoningDetector::test_detect_and_parse_with_start_token')
def b_qwen3_forced_reasoning_with_start_tag(e: Engine) -> None:
    _check(e, 'qwen3', '<think>hmm.</think>Done.', ('hmm.', 'Done.'), force_reasoning=True)


@pins(RP + '::TestBaseReasoningFormatDetector::test_parse_streaming_increment_normal')
def b_qwen3_stream_plain_text_at_once(e: Engine) -> None:
    det = e.reasoning('qwen3')
    r = det.parse_streaming_increment('Plain words')
    assert (r.reasoning_text, r.normal_text) == ('', 'Plain words')


@pins(RP + '::TestBaseReasoningFormatDetector::test_parse_streaming_increment_partial_token')
def b_qwen3_stream_holds_partial_open_tag(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('qwen3'), ['<thi', 'nk>idea</think>ok'])
    assert steps[0] == ('', '')
    assert (reasoning, normal) == ('idea', 'ok')


@pins(RP + '::TestBaseReasoningFormatDetector::test_parse_streaming_increment_partial_token')
def b_qwen3_stream_holds_partial_close_tag(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('qwen3', force_reasoning=True), ['idea', '</thi', 'nk>ok'])
    assert steps[1] == ('', '')
    assert (reasoning, normal) == ('idea', 'ok')


@pins(RP + '::TestBaseReasoningFormatDetector::test_parse_streaming_increment_complete_start')
def b_qwen3_stream_open_tag_alone_gives_nothing(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('qwen3'), ['<think>', 'a thought'])
    assert steps[0] == ('', '')
    assert steps[1] == ('a thought', '')


@pins(RP + '::TestBaseReasoningFormatDetector::test_parse_streaming_increment_end_token')
def b_qwen3_stream_close_tag_then_text(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('qwen3'), ['<think>', 'why', '</think>so it is'])
    assert steps[1] == ('why', '')
    assert steps[2] == ('', 'so it is')


@pins(RP + '::TestBaseReasoningFormatDetector::test_parse_streaming_increment_no_stream_reasoning')
def b_qwen3_no_stream_reasoning_holds_until_close(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('qwen3', stream_reasoning=False),
                                       ['<think>', 'first', ' second', '</think>', 'answer'])
    assert steps[1] == ('', '') and steps[2] == ('', '')
    assert (reasoning, normal) == ('first second', 'answer')


@pins(RP + '::TestBaseReasoningFormatDetector::test_parse_streaming_increment_mixed_content')
def b_qwen3_stream_whole_block_in_one_chunk(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('qwen3'), ['<think>why</think>because'], finish=False)
    assert steps[0] == ('why', 'because')


@pins(RP + '::TestQwen3ForcedReasoningDetector::test_streaming_qwen3_forced_reasoning_format')
def b_qwen3_forced_stream(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('qwen3', force_reasoning=True), ['Let me', ' see.', '</think>It is 3.'],
                          finish=False)
    assert steps == [('Let me', ''), (' see.', ''), ('', 'It is 3.')]


# deepseek-r1 (forced reasoning: output starts inside it)

@pins(RP + '::TestDeepSeekR1Detector::test_detect_and_parse_r1_format')
def b_deepseek_r1_untagged_is_reasoning(e: Engine) -> None:
    _check(e, 'deepseek-r1', 'Thinking it through, 6 * 7.', ('Thinking it through, 6 * 7.', ''))


@pins(RP + '::TestDeepSeekR1Detector::test_detect_and_parse_with_end_token')
def b_deepseek_r1_end_tag_splits(e: Engine) -> None:
    _check(e, 'deepseek-r1', 'six times seven</think>42', ('six times seven', '42'))


@pins(RP + '::TestDeepSeekR1Detector::test_detect_and_parse_with_start_token')
def b_deepseek_r1_start_tag_tolerated(e: Engine) -> None:
    _check(e, 'deepseek-r1', '<think>six times seven</think>42', ('six times seven', '42'))


# kimi (◁think▷ ◁/think▷)

@pins(RP + '::TestKimiDetector::test_detect_and_parse_kimi_format')
def b_kimi_triangle_tags(e: Engine) -> None:
    _check(e, 'kimi', '◁think▷weighing it◁/think▷Yes.', ('weighing it', 'Yes.'))


@pins(RP + '::TestKimiDetector::test_detect_and_parse_kimi_no_thinking')
def b_kimi_plain_text(e: Engine) -> None:
    _check(e, 'kimi', 'Just yes.', ('', 'Just yes.'))


@pins(RP + '::TestKimiDetector::test_streaming_kimi_format')
def b_kimi_stream_split_open_tag(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('kimi'), ['◁thi', 'nk▷Hm', 'mm', '◁/think▷Yes'], finish=False)
    assert steps == [('', ''), ('Hm', ''), ('mm', ''), ('', 'Yes')]


# kimi_k2: a tool section opened inside <think> ends the reasoning and goes to normal text (for the tool detector)

_K2_CALL = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>'
            '{"path": "/etc/hosts"}<|tool_call_end|><|tool_calls_section_end|>')


@pins(RP + '::TestKimiK2Detector::test_detect_and_parse_tool_interrupt')
def b_kimi_k2_tool_section_ends_reasoning(e: Engine) -> None:
    _check(e, 'kimi_k2', '<think>look it up<|tool_calls_section_begin|><|tool_call_begin|>',
           ('look it up', '<|tool_calls_section_begin|><|tool_call_begin|>'))


@pins(FC + 'test_kimik2_detector.py::TestKimiK2ReasoningDetectorNonStreaming::test_tool_call_inside_think_without_close_tag')
def b_kimi_k2_whole_call_inside_think_goes_to_normal(e: Engine) -> None:
    _check(e, 'kimi_k2', '<think>I will read it.' + _K2_CALL, ('I will read it.', _K2_CALL))


@pins(FC + 'test_kimik2_detector.py::TestKimiK2ReasoningDetectorNonStreaming::test_normal_reasoning_with_think_end')
def b_kimi_k2_closed_think_then_call(e: Engine) -> None:
    _check(e, 'kimi_k2', '<think>I will read it.</think>' + _K2_CALL, ('I will read it.', _K2_CALL))


@pins(FC + 'test_kimik2_detector.py::TestKimiK2ReasoningDetectorNonStreaming::test_no_reasoning_just_tool_call')
def b_kimi_k2_call_without_think(e: Engine) -> None:
    _check(e, 'kimi_k2', _K2_CALL, ('', _K2_CALL))


@pins(RP + '::TestKimiK2Detector::test_streaming_tool_interrupt')
def b_kimi_k2_stream_tool_section_ends_reasoning(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('kimi_k2'), ['<think>', 'musing', '<|tool_calls_section_begin|>',
                                                   '<|tool_call_begin|>'], finish=False)
    assert steps[1:] == [('musing', ''), ('', '<|tool_calls_section_begin|>'), ('', '<|tool_call_begin|>')]


@pins(FC + 'test_kimik2_detector.py::TestKimiK2ReasoningDetectorStreaming::test_streaming_partial_marker_buffering')
def b_kimi_k2_stream_partial_section_marker_held(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('kimi_k2', force_reasoning=True),
                                       ['musing', '<|tool', '_calls_section_begin|>more'])
    assert '<|tool' not in steps[1][0]
    assert reasoning == 'musing' and normal == '<|tool_calls_section_begin|>more'


@pins(FC + 'test_kimik2_detector.py::TestKimiK2EndToEnd::test_e2e_streaming_reasoning_to_tool_call')
def b_kimi_k2_reasoning_feeds_tool_detector(e: Engine) -> None:
    rdet, tdet = e.reasoning('kimi_k2'), e.tool('kimi_k2')
    tools = [tool('read_file')]
    chunks = ['<think>', 'Need the', ' hosts file.', '<|tool_calls_section_begin|>',
              '<|tool_call_begin|>functions.read_file:3', '<|tool_call_argument_begin|>', '{"path": "/etc/hosts"}',
              '<|tool_call_end|>', '<|tool_calls_section_end|>']
    _, reasoning, normal = rstream(rdet, chunks)
    assert reasoning == 'Need the hosts file.'
    text, calls = tstream(tdet, [normal], tools)
    assert text == ''
    assert [(c['name'], args(c)) for c in calls] == [('read_file', {'path': '/etc/hosts'})]


@pins(FC + 'test_kimik2_detector.py::TestKimiK2EndToEnd::test_e2e_normal_think_close_then_content_overlap_tool_call')
def b_kimi_k2_text_between_think_and_call_kept(e: Engine) -> None:
    rdet, tdet = e.reasoning('kimi_k2'), e.tool('kimi_k2')
    tools = [tool('get_weather', city='string')]
    chunks = ['<think>', 'Weather?', '</think>Checking ', 'now:<|tool_calls_section_begin|>',
              '<|tool_call_begin|>functions.get_weather:0', '<|tool_call_argument_begin|>{"city": "Oslo"}',
              '<|tool_call_end|>', '<|tool_calls_section_end|>']
    normal_chunks = []
    reasoning = ''
    for c in chunks:
        r = rdet.parse_streaming_increment(c)
        reasoning += r.reasoning_text
        if r.normal_text:
            normal_chunks.append(r.normal_text)
    text, calls = tstream(tdet, normal_chunks, tools)
    assert reasoning == 'Weather?'
    assert text == 'Checking now:'
    assert [(c['name'], c['arguments']) for c in calls] == [('get_weather', '{"city": "Oslo"}')]


# glm45: <tool_call> inside <think> ends the reasoning

@pins(RP + '::TestGlm45Detector::test_detect_and_parse_tool_interrupt')
def b_glm45_tool_tag_ends_reasoning(e: Engine) -> None:
    _check(e, 'glm45', '<think>need data<tool_call>lookup', ('need data', '<tool_call>lookup'))


@pins(RP + '::TestGlm45Detector::test_detect_and_parse_multiple_tool_calls_find')
def b_glm45_first_tool_tag_splits(e: Engine) -> None:
    _check(e, 'glm45', '<think>hm<tool_call>a<tool_call>b', ('hm', '<tool_call>a<tool_call>b'))


@pins(RP + '::TestGlm45Detector::test_detect_and_parse_truncated_reasoning')
def b_glm45_truncated_reasoning(e: Engine) -> None:
    _check(e, 'glm45', '<think>cut off here', ('cut off here', ''))


@pins(RP + '::TestGlm45Detector::test_forced_reasoning_mode')
def b_glm45_forced_tool_tag_ends_reasoning(e: Engine) -> None:
    _check(e, 'glm45', 'more thought<tool_call>x', ('more thought', '<tool_call>x'), force_reasoning=True)


@pins(RP + '::TestGlm45Detector::test_streaming_tool_interrupt_split_tokens')
def b_glm45_stream_tool_tag_ends_reasoning(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('glm45'), ['<think>', 'hm', '<tool_call>', 'rest'], finish=False)
    assert steps[1:] == [('hm', ''), ('', '<tool_call>'), ('', 'rest')]


@pins(RP + '::TestGlm45Detector::test_streaming_empty_reasoning_with_tool')
def b_glm45_stream_empty_reasoning_then_tool(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('glm45'), ['<think>', '<tool_call>x'], finish=False)
    assert steps[1] == ('', '<tool_call>x')


@pins(RP + '::TestGlm45Detector::test_streaming_no_stream_reasoning')
def b_glm45_no_stream_reasoning_flushed_by_tool_tag(e: Engine) -> None:
    # The held reasoning comes out when the tool tag ends it (SGLang's test, written before 0.5.23, also pinned the
    # raw "<think>" inside that reasoning; 0.5.23 strips it, and so does lmparse).
    steps, _, _ = rstream(e.reasoning('glm45', stream_reasoning=False), ['<think>', 'hm', '<tool_call>x'], finish=False)
    assert steps[1] == ('', '')
    assert steps[2] == ('hm', '<tool_call>x')


# hunyuan: <tool_calls> inside <think> ends the reasoning

@pins(RP + '::TestHunyuanDetector::test_detect_and_parse_tool_interrupt')
def b_hunyuan_tool_section_ends_reasoning(e: Engine) -> None:
    r = e.reasoning('hunyuan').detect_and_parse('<think>check it<tool_calls><tool_call>f<tool_sep></tool_call></tool_calls>')
    assert r.reasoning_text == 'check it'
    assert r.normal_text.startswith('<tool_calls>')


@pins(RP + '::TestHunyuanDetector::test_streaming_after_interrupt_is_normal')
def b_hunyuan_stream_after_interrupt_is_normal(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('hunyuan'), ['<think>', 'hm<tool_calls>', '<tool_call>f'], finish=False)
    assert steps[1] == ('hm', '<tool_calls>')
    assert steps[2] == ('', '<tool_call>f')


# nemotron_3: force_nonempty_content moves reasoning to content when there is no content

@pins(RP + '::TestNemotron3Detector::test_detect_and_parse_reasoning_only')
def b_nemotron3_reasoning_only(e: Engine) -> None:
    _check(e, 'nemotron_3', '<think>only thought</think>', ('only thought', ''))


@pins(RP + '::TestNemotron3Detector::test_force_nonempty_content_swaps_when_no_normal_text')
def b_nemotron3_nonempty_content_swaps(e: Engine) -> None:
    _check(e, 'nemotron_3', '<think>only thought</think>', ('', 'only thought'), force_nonempty_content=True)


@pins(RP + '::TestNemotron3Detector::test_force_nonempty_content_no_swap_when_normal_text_exists')
def b_nemotron3_nonempty_content_keeps_split(e: Engine) -> None:
    _check(e, 'nemotron_3', '<think>thought</think>answer', ('thought', 'answer'), force_nonempty_content=True)


@pins(RP + '::TestNemotron3Detector::test_force_nonempty_content_truncated_reasoning')
def b_nemotron3_nonempty_content_truncated(e: Engine) -> None:
    _check(e, 'nemotron_3', '<think>cut off', ('', 'cut off'), force_nonempty_content=True)


@pins(RP + '::TestNemotron3Detector::test_force_nonempty_content_no_thinking_tokens')
def b_nemotron3_nonempty_content_plain(e: Engine) -> None:
    _check(e, 'nemotron_3', 'plain', ('', 'plain'), force_nonempty_content=True)


# gemma4: <|channel>thought\n ... <channel|>

@pins(RP + '::TestGemma4Detector::test_detect_and_parse_complete_reasoning')
def b_gemma4_channel_label_stripped(e: Engine) -> None:
    _check(e, 'gemma4', '<|channel>thought\nweighing<channel|>Result.', ('weighing', 'Result.'))


@pins(RP + '::TestGemma4Detector::test_detect_and_parse_reasoning_only')
def b_gemma4_unclosed_channel_is_reasoning(e: Engine) -> None:
    _check(e, 'gemma4', '<|channel>thought\nnot done yet', ('not done yet', ''))


@pins(RP + '::TestGemma4Detector::test_streaming_full_start_sequence')
def b_gemma4_stream_start_sequence_gives_nothing(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('gemma4'), ['<|channel>thought\n', 'pondering'], finish=False)
    assert steps == [('', ''), ('pondering', '')]


@pins(RP + '::TestGemma4Detector::test_streaming_self_label_split_across_chunks')
def b_gemma4_stream_label_after_channel(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('gemma4'), ['<|channel>', 'thought\n', 'pondering'], finish=False)
    assert steps[0] == ('', '') and steps[2] == ('pondering', '')


@pins(RP + '::TestGemma4Detector::test_streaming_split_end_token')
def b_gemma4_stream_split_end_token(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('gemma4'), ['<|channel>thought\n', 'idea', '<chan', 'nel|>answer'])
    assert steps[2][1] == ''
    assert (reasoning, normal) == ('idea', 'answer')


@pins(RP + '::TestGemma4Detector::test_force_reasoning')
def b_gemma4_forced(e: Engine) -> None:
    _check(e, 'gemma4', 'idea<channel|>answer', ('idea', 'answer'), force_reasoning=True)


@pins(RP + '::TestReasoningParser::test_parse_non_stream_preserves_payload_whitespace')
def b_qwen3_whitespace_kept(e: Engine) -> None:
    _check(e, 'qwen3', '<think>\nidea\n</think>\n\nanswer\n', ('\nidea\n', '\n\nanswer\n'))


@pins(RP + '::TestReasoningParser::test_parse_stream_chunk_preserves_payload_whitespace')
def b_qwen3_stream_whitespace_kept(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('qwen3'), ['<think>', '\nidea\n</think>\n\nanswer\n'], finish=False)
    assert steps == [('', ''), ('\nidea\n', '\n\nanswer\n')]


@pins(RP + '::TestReasoningParser::test_parse_non_stream_strips_repeated_leading_start_tokens')
def b_qwen3_repeated_start_tags(e: Engine) -> None:
    _check(e, 'qwen3', '<think><think>idea</think>answer', ('idea', 'answer'))


@pins(RP + '::TestIntegrationScenarios::test_empty_reasoning_blocks')
def b_qwen3_empty_block(e: Engine) -> None:
    _check(e, 'qwen3', '<think></think>Only this.', ('', 'Only this.'))


@pins(RP + '::TestBufferLossBugFix::test_partial_end_tag_buffer_loss_bug')
def b_qwen3_stream_stray_close_prefix_not_lost(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('qwen3'), ['</', 'answer'])
    assert steps[0] == ('', '') and (reasoning, normal) == ('', '</answer')


@pins(RP + '::TestBufferLossBugFix::test_partial_start_tag_buffer_preservation')
def b_qwen3_stream_false_open_prefix_released(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('qwen3'), ['<th', 'is is text'], finish=False)
    assert steps == [('', ''), ('', '<this is text')]


@pins(RP + '::TestBufferLossBugFix::test_multiple_partial_fragments')
def b_qwen3_stream_fragments_released_together(e: Engine) -> None:
    steps, _, _ = rstream(e.reasoning('qwen3'), ['<', '/', 'random>'], finish=False)
    assert steps == [('', ''), ('', ''), ('', '</random>')]


@pins(RP + '::TestBufferLossBugFix::test_edge_case_exact_token_match')
def b_qwen3_stream_open_tag_char_by_char(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('qwen3'), ['<', 't', 'h', 'i', 'n', 'k>', 'x'])
    assert all(step == ('', '') for step in steps[:6])
    assert (reasoning, normal) == ('x', '')


@pins(RP + '::TestReasoningParserAdvanced::test_qwen3_thinking_forces_reasoning')
def b_qwen3_thinking_name_forces_reasoning(e: Engine) -> None:
    assert parser(e, 'qwen3-thinking').parse_non_stream('thought</think>answer') == ('thought', 'answer')


@pins(RP + '::TestReasoningParserAdvanced::test_minimax_forces_reasoning')
def b_minimax_name_forces_reasoning(e: Engine) -> None:
    assert parser(e, 'minimax').parse_non_stream('thought</think>answer') == ('thought', 'answer')


@pins(RP + '::TestReasoningParserAdvanced::test_detector_map_aliases')
def b_deepseek_v3_alias_not_forced(e: Engine) -> None:
    assert parser(e, 'deepseek-v3').parse_non_stream('plain answer') == ('', 'plain answer')


@pins(RP + '::TestReasoningParserAdvanced::test_detector_map_aliases')
def b_step3_alias_forced(e: Engine) -> None:
    assert parser(e, 'step3').parse_non_stream('thought</think>answer') == ('thought', 'answer')


@pins(RP + '::TestIntegrationScenarios::test_qwen3_forced_reasoning_streaming_scenario')
def b_qwen3_parser_forced_stream(e: Engine) -> None:
    p = parser(e, 'qwen3', force_reasoning=True)
    out = [p.parse_stream_chunk(c) for c in ['Look', 'ing.', '</think>', 'Answer.']]
    assert ''.join(r for r, _ in out) == 'Looking.' and ''.join(n for _, n in out) == 'Answer.'


@pins(RP + '::TestReasoningParserAdvanced::test_continue_final_message_with_request')
def b_qwen3_continue_inside_open_block(e: Engine) -> None:
    det = e.reasoning('qwen3', continue_final_message=True, previous_content='<think>so far')
    _, reasoning, normal = rstream(det, [' more', '</think>', 'answer'])
    assert (reasoning, normal) == (' more', 'answer')


@pins(RP + '::TestReasoningParserAdvanced::test_continue_final_message_other_models_keep_previous_content_verbatim')
def b_qwen3_continue_after_closed_block(e: Engine) -> None:
    det = e.reasoning('qwen3', continue_final_message=True, previous_content='<think>t</think>Partial')
    _, reasoning, normal = rstream(det, [' answer', ' continues'])
    assert (reasoning, normal) == ('', ' answer continues')


@pins(RP + '::TestNemotron3Detector::test_force_nonempty_content_truncated_reasoning')
def b_nemotron3_stream_truncated_reasoning_becomes_content(e: Engine) -> None:
    steps, reasoning, normal = rstream(e.reasoning('nemotron_3', force_nonempty_content=True), ['<think>', 'cut', ' off'])
    assert steps[-1] == ('', 'cut off')
    assert reasoning == 'cut off'


# ---- tool detectors ----

# qwen / qwen25 (hermes-style <tool_call>\n{json}\n</tool_call>)

def _qwen(name: str, arguments: dict[str, Any]) -> str:
    return '<tool_call>\n' + json.dumps({'name': name, 'arguments': arguments}) + '\n</tool_call>'


def _QT() -> list[Any]:
    return [tool('get_weather', city='string'), tool('search', query='string')]


@pins(FC + 'test_qwen25_detector.py::TestQwen25Detector::test_single_tool_call')
def b_qwen25_one_call(e: Engine) -> None:
    assert parsed(e.tool('qwen25'), _qwen('get_weather', {'city': 'Lima'}), _QT()) == \
        ('', [('get_weather', {'city': 'Lima'}, 0)])


@pins(FC + 'test_qwen25_detector.py::TestQwen25Detector::test_multiple_tool_calls')
def b_qwen25_two_calls(e: Engine) -> None:
    text = _qwen('get_weather', {'city': 'Lima'}) + '\n' + _qwen('search', {'query': 'cafes'})
    _, calls = parsed(e.tool('qwen25'), text, _QT())
    assert [c[:2] for c in calls] == [('get_weather', {'city': 'Lima'}), ('search', {'query': 'cafes'})]


@pins(FC + 'test_qwen25_detector.py::TestQwen25Detector::test_tool_call_with_preceding_text')
def b_qwen25_text_before_call(e: Engine) -> None:
    text, calls = parsed(e.tool('qwen25'), 'One moment.\n' + _qwen('get_weather', {'city': 'Lima'}), _QT())
    assert 'One moment.' in text and len(calls) == 1


@pins(FC + 'test_qwen25_detector.py::TestQwen25Detector::test_no_tool_call')
def b_qwen25_no_call(e: Engine) -> None:
    assert parsed(e.tool('qwen25'), 'No tools needed.', _QT()) == ('No tools needed.', [])


@pins(FC + 'test_qwen25_detector.py::TestQwen25Detector::test_malformed_json')
def b_qwen25_malformed_json_no_call(e: Engine) -> None:
    _, calls = parsed(e.tool('qwen25'), '<tool_call>\n{not json at all}\n</tool_call>', _QT())
    assert calls == []


@pins(FC + 'test_qwen25_detector.py::TestQwen25Detector::test_tool_call_with_extra_whitespace')
def b_qwen25_whitespace_around_json(e: Engine) -> None:
    text = '<tool_call>\n   {"name": "search", "arguments": {"query": "x"}}   \n</tool_call>'
    assert [c[:2] for c in parsed(e.tool('qwen25'), text, _QT())[1]] == [('search', {'query': 'x'})]


@pins(FC + 'test_qwen25_detector.py::TestQwen25Detector::test_streaming_single_call')
def b_qwen25_stream_one_call(e: Engine) -> None:
    text, calls = tstream(e.tool('qwen25'), ['<tool_call>\n', '{"name": "get_weather",', ' "arguments": {"city": "Lima"}}',
                                             '\n</tool_call>'], _QT())
    assert [(c['name'], args(c)) for c in calls] == [('get_weather', {'city': 'Lima'})]


@pins(FC + 'test_qwen25_detector.py::TestQwen25Detector::test_streaming_normal_text_before_call')
def b_qwen25_stream_text_first_chunk(e: Engine) -> None:
    r = e.tool('qwen25').parse_streaming_increment('Hi there! ', _QT())
    assert r.normal_text == 'Hi there! ' and not r.calls


# kimi_k2 tool detector

def _KT() -> list[Any]:
    return [tool('read_file'), tool('get_weather', city='string')]


def _k2(name: str, i: int, arguments: str) -> str:
    return (f'<|tool_call_begin|>functions.{name}:{i}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>')


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorBasic::test_single_tool_call')
def b_kimi_k2_one_call(e: Engine) -> None:
    r = e.tool('kimi_k2').detect_and_parse(
        '<|tool_calls_section_begin|>' + _k2('read_file', 0, '{"path": "/a"}') + '<|tool_calls_section_end|>', _KT())
    assert r.normal_text == ''
    assert [(c.name, c.parameters) for c in r.calls] == [('read_file', '{"path": "/a"}')]


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorBasic::test_non_streaming_tool_index_is_local')
def b_kimi_k2_index_is_position_not_suffix(e: Engine) -> None:
    text = ('<|tool_calls_section_begin|>' + _k2('read_file', 7, '{"path": "/a"}')
            + _k2('get_weather', 8, '{"city": "Rome"}') + '<|tool_calls_section_end|>')
    assert parsed(e.tool('kimi_k2'), text, _KT())[1] == [('read_file', {'path': '/a'}, 0),
                                                       ('get_weather', {'city': 'Rome'}, 1)]


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorBasic::test_normal_text_before_tool_call')
def b_kimi_k2_text_before_call(e: Engine) -> None:
    text = 'Reading it.<|tool_calls_section_begin|>' + _k2('read_file', 0, '{"path": "/a"}') + '<|tool_calls_section_end|>'
    assert parsed(e.tool('kimi_k2'), text, _KT()) == ('Reading it.', [('read_file', {'path': '/a'}, 0)])


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorBasic::test_invalid_tool_call')
def b_kimi_k2_headless_call_stays_text(e: Engine) -> None:
    text = 'bogus:0<|tool_call_argument_begin|>{"path": "/a"}<|tool_call_end|><|tool_calls_section_end|>'
    assert parsed(e.tool('kimi_k2'), text, _KT()) == (text, [])


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorBasic::test_partial_tool_call_keeps_incomplete_json')
def b_kimi_k2_stream_unfinished_arguments_streamed(e: Engine) -> None:
    _, calls = tstream(e.tool('kimi_k2'), ['<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0'
                                           '<|tool_call_argument_begin|>{', '"path": "/a"'], _KT(), finish=False)
    assert calls == [{'name': 'read_file', 'arguments': '{"path": "/a"'}]


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorHyphenatedNames::test_hyphenated_name_streaming')
def b_kimi_k2_stream_hyphenated_name(e: Engine) -> None:
    tools = [tool('list-files'), tool('mcp__x__find-docs')]
    _, calls = tstream(e.tool('kimi_k2'), ['<|tool_calls_section_begin|><|tool_call_begin|>functions.list-files:0'
                                           '<|tool_call_argument_begin|>{"pa', 'th": "/srv"}', '<|tool_call_end|>',
                                           '<|tool_calls_section_end|>'], tools)
    assert [(c['name'], args(c)) for c in calls] == [('list-files', {'path': '/srv'})]


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorStreaming::test_streaming_trailing_literal_left_angle_is_not_dropped')
def b_kimi_k2_stream_trailing_angle_not_lost(e: Engine) -> None:
    text, _ = tstream(e.tool('kimi_k2'), ['3 <'], [])
    assert text == '3 <'


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorStreaming::test_streaming_multiple_tool_calls')
def b_kimi_k2_stream_two_calls(e: Engine) -> None:
    _, calls = tstream(e.tool('kimi_k2'), ['<|tool_calls_section_begin|>' + _k2('read_file', 0, '{"path": "/a"}')[:-17],
                                           '<|tool_call_end|>', _k2('get_weather', 1, '{"city": "Rome"}')[:-17],
                                           '<|tool_call_end|>', '<|tool_calls_section_end|>'], _KT())
    assert [(c['name'], args(c)) for c in calls] == [('read_file', {'path': '/a'}), ('get_weather', {'city': 'Rome'})]


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorSpecialTokenLeakage::test_no_leak_in_non_tool_text')
def b_kimi_k2_stray_section_end_not_in_text(e: Engine) -> None:
    text, _ = tstream(e.tool('kimi_k2'), ['plain words<|tool_calls_section_end|>'], _KT())
    assert '<|tool_calls_section_end|>' not in text and 'plain words' in text


@pins(FC + 'test_kimik2_detector.py::TestKimiK2DetectorSpecialTokenLeakage::test_no_leak_of_argument_begin_token')
def b_kimi_k2_stray_argument_begin_not_in_text(e: Engine) -> None:
    text, _ = tstream(e.tool('kimi_k2'), ['words<|tool_call_argument_begin|>more'], _KT())
    assert '<|tool_call_argument_begin|>' not in text


# hermes (<tool_call>{json}</tool_call>, no newlines needed)

def _hermes(name: str, arguments: dict[str, Any]) -> str:
    return '<tool_call>' + json.dumps({'name': name, 'arguments': arguments}) + '</tool_call>'


@pins(FC + 'test_hermes_detector.py::TestHermesDetector::test_single_tool_call')
def b_hermes_one_call(e: Engine) -> None:
    text, calls = parsed(e.tool('hermes'), _hermes('get_weather', {'city': 'Kyiv'}), _QT())
    assert text == '' and [c[:2] for c in calls] == [('get_weather', {'city': 'Kyiv'})]


@pins(FC + 'test_hermes_detector.py::TestHermesDetector::test_multiple_tool_calls')
def b_hermes_two_calls_back_to_back(e: Engine) -> None:
    _, calls = parsed(e.tool('hermes'), _hermes('get_weather', {'city': 'Kyiv'}) + _hermes('search', {'query': 'q'}), _QT())
    assert [c[:2] for c in calls] == [('get_weather', {'city': 'Kyiv'}), ('search', {'query': 'q'})]


@pins(FC + 'test_hermes_detector.py::TestHermesDetector::test_tool_call_with_leading_text')
def b_hermes_leading_text_stripped(e: Engine) -> None:
    text, calls = parsed(e.tool('hermes'), 'Checking now. ' + _hermes('get_weather', {'city': 'Kyiv'}), _QT())
    assert text == 'Checking now.' and len(calls) == 1


@pins(FC + 'test_hermes_detector.py::TestHermesDetector::test_tool_call_with_multiple_arguments')
def b_hermes_two_arguments(e: Engine) -> None:
    _, calls = parsed(e.tool('hermes'), _hermes('get_weather', {'city': 'Kyiv', 'unit': 'celsius'}), _QT())
    assert calls[0][1] == {'city': 'Kyiv', 'unit': 'celsius'}


@pins(FC + 'test_hermes_detector.py::TestHermesDetector::test_malformed_json_returns_original_text')
def b_hermes_malformed_json_no_call(e: Engine) -> None:
    assert parsed(e.tool('hermes'), '<tool_call>this is not json</tool_call>', _QT())[1] == []


@pins(FC + 'test_hermes_detector.py::TestHermesDetector::test_streaming_single_tool_call')
def b_hermes_stream_split_open_tag(e: Engine) -> None:
    text, calls = tstream(e.tool('hermes'), ['<tool_', 'call>{"name": "search",', ' "arguments": {"query": "q"',
                                             '}}</tool_call>'], _QT())
    assert text == '' and [(c['name'], args(c)) for c in calls] == [('search', {'query': 'q'})]


@pins(FC + 'test_hermes_detector.py::TestHermesDetector::test_streaming_normal_text_before_tool')
def b_hermes_stream_text_first_chunk(e: Engine) -> None:
    r = e.tool('hermes').parse_streaming_increment('Sure, one second. ', _QT())
    assert r.normal_text == 'Sure, one second. ' and not r.calls


# llama3 (SGLang's Llama32Detector: <|python_tag|> or a bare JSON object; ';' between calls)

def _llama(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({'name': name, 'arguments': arguments})


@pins(FC + 'test_llama32_detector.py::TestLlama32Detector::test_single_tool_call_with_python_tag')
def b_llama3_python_tag_call(e: Engine) -> None:
    assert [c[:2] for c in parsed(e.tool('llama3'), '<|python_tag|>' + _llama('search', {'query': 'q'}), _QT())[1]] == \
        [('search', {'query': 'q'})]


@pins(FC + 'test_llama32_detector.py::TestLlama32Detector::test_single_tool_call_without_python_tag')
def b_llama3_bare_json_call(e: Engine) -> None:
    assert [c[:2] for c in parsed(e.tool('llama3'), _llama('search', {'query': 'q'}), _QT())[1]] == \
        [('search', {'query': 'q'})]


@pins(FC + 'test_llama32_detector.py::TestLlama32Detector::test_normal_text_before_python_tag')
def b_llama3_text_before_python_tag(e: Engine) -> None:
    text, calls = parsed(e.tool('llama3'), 'One sec. <|python_tag|>' + _llama('search', {'query': 'q'}), _QT())
    assert text == 'One sec. ' and len(calls) == 1


@pins(FC + 'test_llama32_detector.py::TestLlama32Detector::test_no_tool_call')
def b_llama3_no_call(e: Engine) -> None:
    assert parsed(e.tool('llama3'), 'Nothing to call.', _QT()) == ('Nothing to call.', [])


@pins(FC + 'test_llama32_detector.py::TestLlama32Detector::test_multiple_json_objects')
def b_llama3_semicolon_separated_calls(e: Engine) -> None:
    text = '<|python_tag|>' + _llama('get_weather', {'city': 'Oslo'}) + ';' + _llama('search', {'query': 'q'})
    assert [c[:2] for c in parsed(e.tool('llama3'), text, _QT())[1]] == [('get_weather', {'city': 'Oslo'}),
                                                                         ('search', {'query': 'q'})]


# deepseekv3 (<｜tool▁calls▁begin｜> ... function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>)

def _ds3(name: str, arguments: dict[str, Any]) -> str:
    return ('<｜tool▁call▁begin｜>function<｜tool▁sep｜>' + name + '\n```json\n' + json.dumps(arguments)
            + '\n```<｜tool▁call▁end｜>')


@pins(FC + 'test_deepseekv3_detector.py::TestDeepSeekV3Detector::test_single_tool_call')
def b_deepseekv3_one_call(e: Engine) -> None:
    text = '<｜tool▁calls▁begin｜>' + _ds3('get_weather', {'city': 'Oslo'}) + '<｜tool▁calls▁end｜>'
    assert [c[:2] for c in parsed(e.tool('deepseekv3'), text, _QT())[1]] == [('get_weather', {'city': 'Oslo'})]


@pins(FC + 'test_deepseekv3_detector.py::TestDeepSeekV3Detector::test_multiple_tool_calls')
def b_deepseekv3_two_calls_newline_between(e: Engine) -> None:
    text = ('<｜tool▁calls▁begin｜>' + _ds3('get_weather', {'city': 'Oslo'}) + '\n' + _ds3('search', {'query': 'q'})
            + '<｜tool▁calls▁end｜>')
    assert [c[:2] for c in parsed(e.tool('deepseekv3'), text, _QT())[1]] == [('get_weather', {'city': 'Oslo'}),
                                                                             ('search', {'query': 'q'})]


@pins(FC + 'test_deepseekv3_detector.py::TestDeepSeekV3Detector::test_tool_call_with_preceding_text')
def b_deepseekv3_text_before_calls(e: Engine) -> None:
    text, calls = parsed(e.tool('deepseekv3'), 'Looking it up.<｜tool▁calls▁begin｜>' + _ds3('search', {'query': 'q'})
                         + '<｜tool▁calls▁end｜>', _QT())
    assert 'Looking it up.' in text and len(calls) == 1


@pins(FC + 'test_deepseekv3_detector.py::TestDeepSeekV3Detector::test_no_tool_call')
def b_deepseekv3_no_call(e: Engine) -> None:
    assert parsed(e.tool('deepseekv3'), 'Plain answer.', _QT()) == ('Plain answer.', [])


@pins(FC + 'test_deepseekv3_detector.py::TestDeepSeekV3Detector::test_malformed_json')
def b_deepseekv3_malformed_arguments_no_crash(e: Engine) -> None:
    r = e.tool('deepseekv3').detect_and_parse('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search'
                                              '\n```json\n{broken}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>', _QT())
    assert r is not None


# pythonic ([f(a=1), g(b='x')], optionally inside <|python_start|> <|python_end|>)

@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_single_tool_call_string_arg')
def b_pythonic_one_call(e: Engine) -> None:
    r = e.tool('pythonic').detect_and_parse("[get_weather(city='Oslo')]", _QT())
    assert r.normal_text == '' and [(c.name, c.parameters) for c in r.calls] == [('get_weather', '{"city": "Oslo"}')]


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_positional_arguments_ignored')
def b_pythonic_positional_argument_dropped(e: Engine) -> None:
    r = e.tool('pythonic').detect_and_parse("[get_weather('Oslo')]", _QT())
    assert [(c.name, c.parameters) for c in r.calls] == [('get_weather', '{}')]


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_multiple_tool_calls')
def b_pythonic_two_calls_indexed(e: Engine) -> None:
    r = e.tool('pythonic').detect_and_parse("[get_weather(city='Oslo'), search(query='q')]", _QT())
    assert [(c.name, c.parameters, c.tool_index) for c in r.calls] == [
        ('get_weather', '{"city": "Oslo"}', 0), ('search', '{"query": "q"}', 1)]


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_tool_call_with_leading_text')
def b_pythonic_leading_text(e: Engine) -> None:
    r = e.tool('pythonic').detect_and_parse("Checking. [get_weather(city='Oslo')]", _QT())
    assert 'Checking.' in r.normal_text and len(r.calls) == 1


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_tool_call_with_dict_arg')
def b_pythonic_dict_and_list_arguments(e: Engine) -> None:
    r = e.tool('pythonic').detect_and_parse("[search(query={'k': 'v', 'n': {'a': 1}}), search(query=['a', 'b'])]", _QT())
    assert [c.name for c in r.calls] == ['search', 'search']


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_unknown_tool_name_skipped')
def b_pythonic_unknown_tool_dropped(e: Engine) -> None:
    assert e.tool('pythonic').detect_and_parse('[not_a_tool(x=1)]', _QT()).calls == []


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_malformed_python_returns_empty_calls')
def b_pythonic_malformed_no_call(e: Engine) -> None:
    assert e.tool('pythonic').detect_and_parse('[get_weather(city=)]', _QT()).calls == []


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_no_bracket_returns_empty_calls')
def b_pythonic_no_brackets_no_call(e: Engine) -> None:
    assert e.tool('pythonic').detect_and_parse("get_weather(city='Oslo')", _QT()).calls == []


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_streaming_text_then_tool_call')
def b_pythonic_stream_text_then_call(e: Engine) -> None:
    text, calls = tstream(e.tool('pythonic'), ['Right away. ', '[get_weather(city=', "'Oslo')]"], _QT())
    assert 'Right away. ' in text and [(c['name'], args(c)) for c in calls] == [('get_weather', {'city': 'Oslo'})]


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_streaming_with_python_tokens')
def b_pythonic_stream_python_tokens(e: Engine) -> None:
    _, calls = tstream(e.tool('pythonic'), ['<|python_start|>[get_', "weather(city='Oslo')]<|python_end|>"], _QT())
    assert [c['name'] for c in calls] == ['get_weather']


@pins(FC + 'test_pythonic_detector.py::TestPythonicDetector::test_streaming_incomplete_tool_call')
def b_pythonic_stream_open_call_held(e: Engine) -> None:
    r = e.tool('pythonic').parse_streaming_increment('Hi! [search(query=', _QT())
    assert (r.normal_text, r.calls) == ('Hi! ', [])


# mistral ([TOOL_CALLS] [json array] or [TOOL_CALLS]name[ARGS]{json})

@pins(FC + 'test_mistral_detector.py::TestMistralDetector::test_json_array_multiple_tool_calls')
def b_mistral_json_array_calls(e: Engine) -> None:
    text = '[TOOL_CALLS] [' + _llama('get_weather', {'city': 'Oslo'}) + ', ' + _llama('search', {'query': 'q'}) + ']'
    assert [c[:2] for c in parsed(e.tool('mistral'), text, _QT())[1]] == [('get_weather', {'city': 'Oslo'}),
                                                                          ('search', {'query': 'q'})]


@pins(FC + 'test_mistral_detector.py::TestMistralDetector::test_json_array_with_leading_text')
def b_mistral_json_array_leading_text_stripped(e: Engine) -> None:
    text, calls = parsed(e.tool('mistral'), 'On it. [TOOL_CALLS] [' + _llama('search', {'query': 'q'}) + ']', _QT())
    assert text == 'On it.' and len(calls) == 1


@pins(FC + 'test_mistral_detector.py::TestMistralDetector::test_compact_format_single_tool_call')
def b_mistral_args_form(e: Engine) -> None:
    assert [c[:2] for c in parsed(e.tool('mistral'), '[TOOL_CALLS]search[ARGS]{"query": "q"}', _QT())[1]] == \
        [('search', {'query': 'q'})]


@pins(FC + 'test_mistral_detector.py::TestMistralDetector::test_compact_format_with_leading_text')
def b_mistral_args_form_leading_text_stripped(e: Engine) -> None:
    text, calls = parsed(e.tool('mistral'), 'On it. [TOOL_CALLS]search[ARGS]{"query": "q"}', _QT())
    assert text == 'On it.' and len(calls) == 1


@pins(FC + 'test_mistral_detector.py::TestMistralDetector::test_tool_call_with_nested_json')
def b_mistral_nested_arguments(e: Engine) -> None:
    text = '[TOOL_CALLS] [' + _llama('get_weather', {'city': 'Oslo', 'opts': {'detailed': True}}) + ']'
    assert parsed(e.tool('mistral'), text, _QT())[1][0][1] == {'city': 'Oslo', 'opts': {'detailed': True}}


@pins(FC + 'test_mistral_detector.py::TestMistralDetector::test_json_array_with_invalid_json')
def b_mistral_invalid_array_consumed(e: Engine) -> None:
    assert parsed(e.tool('mistral'), '[TOOL_CALLS] [no json here]', _QT()) == ('', [])


@pins(FC + 'test_mistral_detector.py::TestMistralDetector::test_streaming_text_then_tool_call')
def b_mistral_stream_args_form(e: Engine) -> None:
    text, calls = tstream(e.tool('mistral'), ['Sure! ', '[TOOL_', 'CALLS]search', '[ARGS]{"query": "q"}'], _QT())
    assert text == 'Sure! ' and [(c['name'], args(c)) for c in calls] == [('search', {'query': 'q'})]


# glm45 tool detector (GLM-4.5 / 4.6: <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>)

def _GT() -> list[Any]:
    tools = [tool('get_weather', city='string', count='number', filters='object'), tool('noop'),
             tool('search', query='string')]
    tools[1].function.parameters = {'type': 'object', 'properties': {}}
    return tools


def _glm(name: str, *pairs: tuple[str, str]) -> str:
    return f'<tool_call>{name}\n' + ''.join(f'<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n' for k, v in pairs) \
        + '</tool_call>'


def _chars(text: str, n: int) -> list[str]:
    return [text[i:i + n] for i in range(0, len(text), n)]


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_schema_type_coercion')
def b_glm45_values_typed_by_schema(e: Engine) -> None:
    text = _glm('get_weather', ('city', '北京'), ('count', '"42"'), ('filters', '{"a": 1}'))
    [(name, arguments, _)] = parsed(e.tool('glm45'), text, _GT())[1]
    assert name == 'get_weather' and arguments == {'city': '北京', 'count': 42, 'filters': {'a': 1}}
    assert type(arguments['count']) is int


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_string_typed_digits_stay_string')
def b_glm45_string_digits_stay_string(e: Engine) -> None:
    assert parsed(e.tool('glm45'), _glm('get_weather', ('city', '123')), _GT())[1][0][1] == {'city': '123'}


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_string_value_backslashes_preserved')
def b_glm45_backslashes_kept(e: Engine) -> None:
    assert parsed(e.tool('glm45'), _glm('get_weather', ('city', 'C:\\dir\\x')), _GT())[1][0][1] == {'city': 'C:\\dir\\x'}


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_leading_text_preserved')
def b_glm45_leading_text_stripped(e: Engine) -> None:
    text, calls = parsed(e.tool('glm45'), 'Let me see. ' + _glm('get_weather', ('city', 'Oslo')), _GT())
    assert text == 'Let me see.' and len(calls) == 1


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_multiple_calls_parsed_in_order')
def b_glm45_two_calls(e: Engine) -> None:
    text = _glm('get_weather', ('city', 'Oslo')) + '\n' + _glm('search', ('query', 'cafes'))
    assert [c[:2] for c in parsed(e.tool('glm45'), text, _GT())[1]] == [('get_weather', {'city': 'Oslo'}),
                                                                        ('search', {'query': 'cafes'})]


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_missing_name_separator_yields_no_calls')
def b_glm45_name_without_separator_no_call(e: Engine) -> None:
    assert parsed(e.tool('glm45'), '<tool_call>get_weather</tool_call>', _GT())[1] == []


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_streaming_matches_non_streaming_at_small_chunk_sizes')
def b_glm45_stream_equals_one_piece(e: Engine) -> None:
    for text in (_glm('get_weather', ('city', 'a<b & c')), _glm('get_weather', ('city', 'say "hi"\nok')),
                 _glm('get_weather', ('city', 'Oslo')) + '\n' + _glm('search', ('query', 'cafes'))):
        want = [c[:2] for c in parsed(e.tool('glm45'), text, _GT())[1]]
        for n in (1, 7):
            _, calls = tstream(e.tool('glm45'), _chars(text, n), _GT())
            assert [(c['name'], args(c)) for c in calls] == want, (text, n)


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_streaming_no_args_emits_empty_object')
def b_glm45_stream_no_arguments(e: Engine) -> None:
    _, calls = tstream(e.tool('glm45'), _chars('<tool_call>noop\n</tool_call>', 1), _GT())
    assert calls == [{'name': 'noop', 'arguments': '{}'}]


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_streaming_never_emits_truncated_tool_name')
def b_glm45_stream_partial_name_held(e: Engine) -> None:
    det = e.tool('glm45')
    assert det.parse_streaming_increment('<tool_call>get_wea', _GT()).calls == []
    r = det.parse_streaming_increment('ther\n<arg_key>city</arg_key>\n<arg_value>x</arg_value>\n</tool_call>', _GT())
    assert [c.name for c in r.calls if c.name] == ['get_weather']


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_streaming_plain_text_with_angle_brackets_passes_through')
def b_glm45_stream_angle_brackets_are_text(e: Engine) -> None:
    assert tstream(e.tool('glm45'), _chars('x < y and y > z.', 1), _GT()) == ('x < y and y > z.', [])


@pins(FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_streaming_leading_text_then_call')
def b_glm45_stream_leading_text_kept(e: Engine) -> None:
    text, calls = tstream(e.tool('glm45'), _chars('Let me see. ' + _glm('get_weather', ('city', 'Oslo')), 1), _GT())
    assert text == 'Let me see. ' and [(c['name'], args(c)) for c in calls] == [('get_weather', {'city': 'Oslo'})]


# qwen3_coder (<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>\n</tool_call>)

def _CT() -> list[Any]:
    return [tool('get_weather', city='string', days='integer')]


def _coder(city: str) -> str:
    return ('<tool_call>\n<function=get_weather>\n<parameter=city>\n' + city
            + '\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>')


@pins(FC + 'test_qwen3_coder_detector.py::TestQwen3CoderDetectorMalformedParameterEnd::test_non_streaming_strips_drifted_end_marker')
def b_qwen3_coder_drifted_close_marker_dropped(e: Engine) -> None:
    for marker in ('</parameter1>', '</parameter_x>', '</parameter'):
        assert parsed(e.tool('qwen3_coder'), _coder('Lima\n' + marker), _CT())[1][0][1] == {'city': 'Lima', 'days': 3}, marker


@pins(FC + 'test_qwen3_coder_detector.py::TestQwen3CoderDetectorMalformedParameterEnd::test_well_formed_value_unchanged')
def b_qwen3_coder_well_formed(e: Engine) -> None:
    assert parsed(e.tool('qwen3_coder'), _coder('Lima\n</parameter>'), _CT())[1][0][1] == {'city': 'Lima', 'days': 3}


@pins(FC + 'test_qwen3_coder_detector.py::TestQwen3CoderDetectorMalformedParameterEnd::test_angle_brackets_inside_value_are_kept')
def b_qwen3_coder_markup_in_value_kept(e: Engine) -> None:
    assert parsed(e.tool('qwen3_coder'), _coder('an <i>odd</i> city\n</parameter>'), _CT())[1][0][1]['city'] == \
        'an <i>odd</i> city'


@pins(FC + 'test_qwen3_coder_detector.py::TestQwen3CoderDetectorMalformedParameterEnd::test_closed_value_ending_like_a_marker_is_kept')
def b_qwen3_coder_closed_value_ending_like_marker_kept(e: Engine) -> None:
    for value in ('<cfg>\n  <v>1</v>\n</parameters>', 'y </parameterSet>'):
        text = _coder(value + '\n</parameter>')
        assert parsed(e.tool('qwen3_coder'), text, _CT())[1][0][1]['city'] == value
        assert args(tstream(e.tool('qwen3_coder'), _chars(text, 3), _CT())[1][0])['city'] == value


# minimax-m2 (<minimax:tool_call>\n<invoke name="F">\n<parameter name="K">V</parameter>\n</invoke>\n</minimax:tool_call>)

M2 = FC + 'test_minimax_m2_detector.py::'


def _MT() -> list[Any]:
    return [tool('get_weather', city='string', unit='string'), tool('search', query='string'),
            tool('calculate', value='number', count='integer', verbose='boolean', tags='array', meta='object')]


def _m2(name: str, **params: str) -> str:
    body = ''.join(f'\n<parameter name="{k}">{v}</parameter>' for k, v in params.items())
    return f'<minimax:tool_call>\n<invoke name="{name}">{body}\n</invoke>\n</minimax:tool_call>'


@pins(M2 + 'TestDetectAndParse::test_single_call_multiple_params')
def b_minimax_m2_one_call(e: Engine) -> None:
    assert parsed(e.tool('minimax-m2'), _m2('get_weather', city='Oslo', unit='celsius'), _MT()) == \
        ('', [('get_weather', {'city': 'Oslo', 'unit': 'celsius'}, 0)])


@pins(M2 + 'TestDetectAndParse::test_leading_normal_text_is_preserved')
def b_minimax_m2_leading_text_kept(e: Engine) -> None:
    text, calls = parsed(e.tool('minimax-m2'), 'Looking it up. ' + _m2('search', query='x'), _MT())
    assert text == 'Looking it up. ' and len(calls) == 1


@pins(M2 + 'TestDetectAndParse::test_multiple_sequential_calls')
def b_minimax_m2_two_blocks(e: Engine) -> None:
    text = _m2('get_weather', city='Oslo') + _m2('search', query='x')
    assert [c[0] for c in parsed(e.tool('minimax-m2'), text, _MT())[1]] == ['get_weather', 'search']


@pins(M2 + 'TestDetectAndParse::test_unknown_function_name_is_dropped')
def b_minimax_m2_undeclared_dropped(e: Engine) -> None:
    assert parsed(e.tool('minimax-m2'), _m2('no_such_tool', x='1'), _MT())[1] == []


@pins(M2 + 'TestDetectAndParse::test_incomplete_block_no_closing_tag')
def b_minimax_m2_unclosed_block_stays_text(e: Engine) -> None:
    text = '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>'
    out, calls = parsed(e.tool('minimax-m2'), text, _MT())
    assert calls == [] and '<minimax:tool_call>' in out


@pins(M2 + 'TestDetectAndParse::test_typed_params_integer_and_boolean')
def b_minimax_m2_typed_values(e: Engine) -> None:
    arguments = parsed(e.tool('minimax-m2'), _m2('calculate', count='7', verbose='true'), _MT())[1][0][1]
    assert arguments == {'count': 7, 'verbose': True} and type(arguments['count']) is int


@pins(M2 + 'TestStreamingIncrement::test_streaming_matches_non_streaming')
def b_minimax_m2_stream_equals_one_piece(e: Engine) -> None:
    for text in (_m2('get_weather', city='Paris', unit='fahrenheit'), _m2('calculate', count='3', verbose='false')):
        want = [c[:2] for c in parsed(e.tool('minimax-m2'), text, _MT())[1]]
        _, calls = tstream(e.tool('minimax-m2'), _chars(text, 1), _MT())
        assert [(c['name'], args(c)) for c in calls] == want


@pins(M2 + 'TestStreamingIncrement::test_streaming_sequential_tool_calls_tool_index')
def b_minimax_m2_stream_two_blocks_indexed(e: Engine) -> None:
    _, calls = tstream(e.tool('minimax-m2'), _chars(_m2('get_weather', city='Rome') + _m2('calculate', count='5'), 1),
                       _MT())
    assert [(c['name'], args(c)) for c in calls] == [('get_weather', {'city': 'Rome'}), ('calculate', {'count': 5})]


@pins(M2 + 'TestStreamingIncrement::test_streaming_normal_text_before_tool_call')
def b_minimax_m2_stream_text_at_once(e: Engine) -> None:
    r = e.tool('minimax-m2').parse_streaming_increment('Here you go: ', _MT())
    assert (r.normal_text, r.calls) == ('Here you go: ', [])


# deepseekv31 (<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>...)

_V31_CALL = '<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Lima"}<｜tool▁call▁end｜>'


@pins(FC + 'test_deepseekv31_detector.py::TestDeepSeekV31PrefixText::test_text_before_tool_call_is_emitted_once')
def b_deepseekv31_prefix_once_at_any_split(e: Engine) -> None:
    prefix, outer = 'Checking the weather.\n', '<｜tool▁calls▁begin｜>'
    text = prefix + outer + _V31_CALL
    for cut in (0, len(prefix), len(prefix) + len(outer)):
        out, calls = tstream(e.tool('deepseekv31'), [text[:cut], text[cut:], '', ''], _QT())
        assert out == prefix and [(c['name'], args(c)) for c in calls] == [('get_weather', {'city': 'Lima'})], cut


@pins(FC + 'test_deepseekv31_detector.py::TestDeepSeekV31PrefixText::test_text_before_tool_call_is_emitted_once')
def b_deepseekv31_call_without_outer_marker(e: Engine) -> None:
    out, calls = tstream(e.tool('deepseekv31'), ['Checking.\n', _V31_CALL], _QT())
    assert out == 'Checking.\n' and [(c['name'], args(c)) for c in calls] == [('get_weather', {'city': 'Lima'})]


@pins(FC + 'test_deepseekv31_detector.py::TestDeepSeekV31PrefixText::test_prefix_is_not_repeated_while_arguments_arrive')
def b_deepseekv31_prefix_not_repeated(e: Engine) -> None:
    det = e.tool('deepseekv31')
    chunks = ['One moment. <｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city":',
              ' "Lima"}<｜tool▁call▁end｜>', '<｜tool▁calls▁end｜>']
    results = [det.parse_streaming_increment(c, _QT()) for c in chunks]
    assert [r.normal_text for r in results] == ['One moment. ', '', '', '']
    assert json.loads(''.join(c.parameters for r in results for c in r.calls)) == {'city': 'Lima'}


# step3 (<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="F">...</steptml:invoke>...)

S3 = FC + 'test_step3_detector.py::TestStep3Detector::'


def _ST() -> list[Any]:
    tools = [tool('get_weather', city='string', days='integer'), tool('noop')]
    tools[0].function.parameters['required'] = []
    tools[1].function.parameters = {'type': 'object', 'properties': {}}
    return tools


def _s3(*calls: tuple[str, dict[str, str]]) -> str:
    blocks = ''.join('<｜tool_call_begin｜>function<｜tool_sep｜>' + f'<steptml:invoke name="{name}">'
                     + ''.join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in ps.items())
                     + '</steptml:invoke><｜tool_call_end｜>' for name, ps in calls)
    return '<｜tool_calls_begin｜>' + blocks + '<｜tool_calls_end｜>'


@pins(S3 + 'test_parses_call_without_parameters')
def b_step3_call_without_parameters(e: Engine) -> None:
    assert parsed(e.tool('step3'), _s3(('get_weather', {})), _ST())[1] == [('get_weather', {}, 0)]


@pins(S3 + 'test_parses_mix_of_parameterless_and_parameterized_calls')
def b_step3_mixed_calls(e: Engine) -> None:
    assert [c[:2] for c in parsed(e.tool('step3'), _s3(('get_weather', {}), ('get_weather', {'city': 'Oslo'})),
                                  _ST())[1]] == [('get_weather', {}), ('get_weather', {'city': 'Oslo'})]


@pins(S3 + 'test_stream_two_calls_distinct_parameters')
def b_step3_stream_equals_one_piece(e: Engine) -> None:
    for text in (_s3(('get_weather', {'city': 'a'}), ('get_weather', {'city': 'b'})),
                 _s3(('get_weather', {}), ('get_weather', {'city': 'x'}), ('noop', {})),
                 _s3(('get_weather', {'days': '7'})), _s3(('get_weather', {'city': '北京'})),
                 'Sure. ' + _s3(('get_weather', {})), 'Nothing to call.'):
        want_text, want = parsed(e.tool('step3'), text, _ST())
        for chunks in (list(text), [text], [text[:len(text) // 2], text[len(text) // 2:]]):
            got_text, calls = tstream(e.tool('step3'), chunks, _ST())
            assert [(c['name'], args(c)) for c in calls] == [c[:2] for c in want], (text, len(chunks))
            assert 'steptml' not in got_text and 'tool_call' not in got_text
            assert got_text.strip() == want_text.strip()


# deepseekv32 / deepseekv4 (DSML: <｜DSML｜invoke name="F"><｜DSML｜parameter name="K" string="true">V</...>)

DS = FC + 'test_deepseekv32_detector.py::_StreamingPreambleTestsMixin::'
_PROSE = 'Checking the forecast for Lima first.'


def _dsml_invoke(city: str) -> str:
    return ('<｜DSML｜invoke name="get_weather"><｜DSML｜parameter name="city" string="true">' + city
            + '</｜DSML｜parameter></｜DSML｜invoke>')


def _dsml(name: str, *cities: str) -> str:
    own = _impls()['sglang'][0][name]()  # the section markers as SGLang's own detector declares them
    return own.bot_token + ''.join(_dsml_invoke(c) for c in cities) + own.eot_token


def _dsml_check(e: Engine, name: str, chunks: list[str], *cities: str, prose: str = _PROSE) -> None:
    text, calls = tstream(e.tool(name), chunks, _QT())
    assert text == prose, chunks
    assert [(c['name'], args(c)) for c in calls] == [('get_weather', {'city': c}) for c in cities], chunks


def _dsml_behaviours(name: str) -> None:
    key = name.replace('deepseek', 'deepseek_')

    @pins(DS + 'test_prose_emitted_once_at_every_split_point')
    def prose_once_at_every_split(e: Engine) -> None:
        text = _PROSE + _dsml(name, 'Lima')
        for i in range(1, len(text)):
            _dsml_check(e, name, [text[:i], text[i:]], 'Lima')

    @pins(DS + 'test_bare_invoke_prose_at_every_split_point')
    def bare_invoke_at_every_split(e: Engine) -> None:
        text = _PROSE + _dsml_invoke('Lima')
        for i in range(0, len(text), 5):
            _dsml_check(e, name, [text[:i], text[i:]], 'Lima')

    @pins(DS + 'test_fixed_size_chunkings')
    def fixed_chunkings(e: Engine) -> None:
        text = _PROSE + _dsml(name, 'Lima', 'Quito')
        for n in (1, 3, 7, 8):
            _dsml_check(e, name, _chars(text, n), 'Lima', 'Quito')

    @pins(DS + 'test_partial_tag_prefix_held_back')
    def partial_prefix_held(e: Engine) -> None:
        call = _dsml(name, 'Lima')
        for prefix in ('<', '<｜'):
            det = e.tool(name)
            first = det.parse_streaming_increment(_PROSE + prefix, _QT())
            assert first.normal_text == _PROSE

    @pins(DS + 'test_literal_angle_bracket_without_tool_call')
    def literal_angle_bracket(e: Engine) -> None:
        _dsml_check(e, name, ['So 3 <', ' 5 holds.'], prose='So 3 < 5 holds.')

    @pins(DS + 'test_literal_angle_bracket_before_tool_call')
    def angle_bracket_before_call(e: Engine) -> None:
        prose = 'As 3 < 5, calling. '
        _dsml_check(e, name, [prose + _dsml(name, 'Lima')], 'Lima', prose=prose)

    for fn in (prose_once_at_every_split, bare_invoke_at_every_split, fixed_chunkings, partial_prefix_held,
               literal_angle_bracket, angle_bracket_before_call):
        BEHAVIOURS[f'{key}_{fn.__name__}'] = BEHAVIOURS.pop(fn.__name__)


for _name in ('deepseekv32', 'deepseekv4'):
    _dsml_behaviours(_name)


# calls to tools the request does not declare (SGLang's base detector; SGLANG_FORWARD_UNKNOWN_TOOLS)

UT = FC + 'test_unknown_tool_name.py::'


def _named(calls: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(c['name'], args(c)) for c in calls if c['name']]


@pins(UT + 'test_unknown_tool_name_dropped_default')
def b_hermes_undeclared_call_dropped(e: Engine) -> None:
    assert parsed(e.tool('hermes'), _hermes('launch_rocket', {'city': 'Paris'}), _QT())[1] == []


@pins(UT + 'test_streaming_unknown_tool_dropped_default')
def b_hermes_stream_undeclared_call_dropped(e: Engine) -> None:
    _, calls = tstream(e.tool('hermes'), ['<tool_call>', '{"name": "launch_rocket"', ', "arguments": {"x": 1}}',
                                          '</tool_call>'], _QT())
    assert _named(calls) == []


@pins(UT + 'test_streaming_unknown_tool_between_known_preserves_state')
def b_hermes_stream_undeclared_between_declared(e: Engine) -> None:
    chunks = [_hermes('get_weather', {'city': 'A'}), _hermes('launch_rocket', {}), '',
              _hermes('get_weather', {'city': 'B'}), '']
    _, calls = tstream(e.tool('hermes'), chunks, _QT())
    assert _named(calls) == [('get_weather', {'city': 'A'}), ('get_weather', {'city': 'B'})]


@pins(UT + 'test_streaming_after_unknown_tool_continues')
def b_hermes_stream_text_after_undeclared_call(e: Engine) -> None:
    text, calls = tstream(e.tool('hermes'), ['<tool_call>', '{"name": "launch_rocket", "arguments": {}}</tool_call>',
                                             'hello world'], _QT())
    assert _named(calls) == [] and 'hello world' in text


@pins(UT + 'test_unknown_tool_name_forwarded')
def b_hermes_undeclared_call_forwarded_when_asked(e: Engine) -> None:
    from sglang.srt.environ import envs
    with envs.SGLANG_FORWARD_UNKNOWN_TOOLS.override(True):
        r = e.tool('hermes').detect_and_parse(_hermes('launch_rocket', {'city': 'Paris'}), _QT())
    assert [(c.name, json.loads(c.parameters), c.tool_index) for c in r.calls] == [('launch_rocket', {'city': 'Paris'}, -1)]


# ---- the lane ----

@pytest.mark.parametrize('impl', ['sglang', 'lmparse'])
@pytest.mark.parametrize('behaviour', list(BEHAVIOURS))
def test_behaviour(behaviour: str, impl: str, request: pytest.FixtureRequest) -> None:
    _source, fn = BEHAVIOURS[behaviour]
    if impl == 'lmparse' and behaviour in DIFFERENCES:
        d = DIFFERENCES[behaviour]
        request.applymarker(pytest.mark.xfail(strict=True, reason=f'{d.kind}: {d.reason}'))
    if impl == 'sglang' and behaviour in SGLANG_0523_DIFFERS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=SGLANG_0523_DIFFERS[behaviour]))
    fn(Engine(impl))


def test_differences_name_known_behaviours() -> None:
    unknown = sorted((set(DIFFERENCES) | set(SGLANG_0523_DIFFERS)) - set(BEHAVIOURS))
    assert not unknown, f'sglang_differences lists behaviours this lane does not have: {unknown}'
    for name, d in DIFFERENCES.items():
        assert d.source == BEHAVIOURS[name][0], name
