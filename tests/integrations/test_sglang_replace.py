"""Opt-in (LMPARSE_SGLANG=1): replace-mode reasoning detectors end reasoning where a tool block opens, at any chunking.

In replace mode an lmparse reasoning detector served under an SGLang name takes
SGLang's ``tool_start_token`` from SGLang's own class: a tool block opened inside
an unclosed reasoning block ends it, and the tag and everything after go to
normal text for the tool detector. That scan lives in the plugin, so it is
checked here over one chunk, every split inside every tag, fixed 1/4/8/16/256
chunks and random chunkings with empty chunks anywhere, with and without
``stream_reasoning``, including tag-like text that must stay where it is.
"""
from __future__ import annotations

import os
import random
from typing import Any

import pytest

from tests.streaming import chunkings

_ENABLED = os.environ.get('LMPARSE_SGLANG') == '1'
pytestmark = pytest.mark.skipif(not _ENABLED, reason='opt-in: set LMPARSE_SGLANG=1 (SGLang lane)')
if _ENABLED:
    try:
        import sglang.srt.parser.reasoning_parser  # noqa: F401
    except ImportError:
        pytestmark = pytest.mark.skip(reason='sglang==0.5.23 is not installed (tools/install_peers.sh)')

K2 = '<|tool_calls_section_begin|>'
K2_CALL = (K2 + '<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": "x"}<|tool_call_end|>'
           '<|tool_calls_section_end|>')
GLM_CALL = '<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x</arg_value>\n</tool_call>'
QWEN_CALL = '<tool_call>\n{"name": "f", "arguments": {"a": "x"}}\n</tool_call>'

# (SGLang reasoning name, force_reasoning, output, reasoning, normal text)
CASES: list[tuple[str, bool | None, str, str, str]] = [
    ('kimi_k2', None, '<think>look it up' + K2_CALL, 'look it up', K2_CALL),
    ('kimi_k2', None, '<think>look</think>Now:' + K2_CALL, 'look', 'Now:' + K2_CALL),
    ('kimi_k2', None, 'No thinking. ' + K2_CALL, '', 'No thinking. ' + K2_CALL),
    ('kimi_k2', True, 'forced thought' + K2_CALL, 'forced thought', K2_CALL),
    # Tag-like text that is not the tag stays reasoning.
    ('kimi_k2', None, '<think>a <|tool_calls and <|tool_ ok</think>b', 'a <|tool_calls and <|tool_ ok', 'b'),
    ('kimi_k2', None, '<think></think>' + K2_CALL, '', K2_CALL),
    ('glm45', None, '<think>need data' + GLM_CALL, 'need data', GLM_CALL),
    ('glm45', None, '<think>use <tool_ maybe</think>done', 'use <tool_ maybe', 'done'),
    ('glm45', True, 'thinking' + GLM_CALL + GLM_CALL, 'thinking', GLM_CALL + GLM_CALL),
    ('qwen3', None, '<think>hm\n' + QWEN_CALL, 'hm\n', QWEN_CALL),
    ('qwen3', None, 'Direct answer.', '', 'Direct answer.'),
    ('qwen3', None, '<think>x</think>' + QWEN_CALL, 'x', QWEN_CALL),
]
TAGS = ('<think>', '</think>', K2, '<tool_call>', '<|tool_call_begin|>')


def _detector(name: str, force: bool | None, stream_reasoning: bool) -> Any:
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from lmparse.integrations import sglang as plugin
    registries = (ReasoningParser.DetectorMap, FunctionCallParser.ToolCallParserEnum)
    saved = [dict(r) for r in registries]
    try:
        plugin.register(replace=True)
        cls = ReasoningParser.DetectorMap[name]
    finally:
        for registry, before in zip(registries, saved):  # SGLang's own names back for the other lanes
            registry.clear()
            registry.update(before)
    assert getattr(cls, 'lmparse_reasoning', None), cls
    kwargs: dict[str, Any] = {'stream_reasoning': stream_reasoning}
    if force is not None:
        kwargs['force_reasoning'] = force
    return cls(**kwargs)


def _with_empties(chunks: list[str], rng: random.Random) -> list[str]:
    out: list[str] = []
    for c in chunks:
        while rng.random() < 0.3:
            out.append('')
        out.append(c)
    return out + [''] * rng.randint(0, 2)


@pytest.mark.parametrize('stream_reasoning', [True, False])
@pytest.mark.parametrize('case', CASES, ids=lambda c: f'{c[0]}-{c[2][:24]}')
def test_any_chunking(case: tuple[str, bool | None, str, str, str], stream_reasoning: bool) -> None:
    name, force, text, want_reasoning, want_normal = case
    r = _detector(name, force, stream_reasoning).detect_and_parse(text)
    assert (r.reasoning_text, r.normal_text) == (want_reasoning, want_normal)
    rng = random.Random(7)
    for label, chunks in chunkings(text, TAGS, seed=3, n_random=8):
        if label.startswith('random'):
            chunks = _with_empties(chunks, rng)
        det = _detector(name, force, stream_reasoning)
        reasoning, normal = [], []
        for c in chunks:
            out = det.parse_streaming_increment(c)
            reasoning.append(out.reasoning_text)
            normal.append(out.normal_text)
        out = det.finish()
        reasoning.append(out.reasoning_text)
        normal.append(out.normal_text)
        assert (''.join(reasoning), ''.join(normal)) == (want_reasoning, want_normal), (label, chunks)


def test_close_in_the_same_chunk_wins_like_sglang() -> None:
    """A block that closes in the chunk where a tool tag also appears ends at its close tag (SGLang's base
    detector checks the end tag first), in one piece and streamed as one chunk."""
    from sglang.srt.parser.reasoning_parser import Glm45Detector
    text = '<think>a<tool_call>b</think>c'
    for det in (Glm45Detector(), _detector('glm45', None, True)):
        r = det.detect_and_parse(text)
        assert (r.reasoning_text, r.normal_text) == ('a<tool_call>b', 'c')
    for det in (Glm45Detector(), _detector('glm45', None, True)):
        r = det.parse_streaming_increment(text)
        f = det.finish()
        assert (r.reasoning_text + f.reasoning_text, r.normal_text + f.normal_text) == ('a<tool_call>b', 'c')


def test_lmparse_names_keep_lmparse_semantics() -> None:
    """``lmparse-<name>`` is not changed by replace mode: no SGLang tool start, lmparse's own start state."""
    from lmparse.integrations import sglang as plugin
    _tools, reasoning = plugin.detector_classes()
    det = reasoning['kimi_k2']()
    assert det.sglang_tool_start == ''
    assert _detector('kimi_k2', None, True).sglang_tool_start == K2


@pytest.mark.parametrize('text, want', [
    ('<think>use a <tool_call> tag</think>done', ('use a <tool_call> tag', 'done')),
    ('<think>so:\n' + GLM_CALL, ('so:\n', GLM_CALL)),
    ('<think>mid <tool_call> then\n' + GLM_CALL, ('mid <tool_call> then\n', GLM_CALL)),
])
def test_tool_start_only_at_line_start(text: str, want: tuple[str, str]) -> None:
    """SGLang's base detector can take the tool tag only where a line starts (``tool_start_at_line_start``; no
    0.5.23 detector sets it yet): the plugin follows that flag too, at any chunking."""
    base = type(_detector('glm45', None, True))
    cls = type('LineStart', (base,), {'sglang_tool_start_at_line_start': True})
    r = cls().detect_and_parse(text)
    assert (r.reasoning_text, r.normal_text) == want
    for label, chunks in chunkings(text, TAGS, seed=5, n_random=8):
        det = cls()
        outs = [det.parse_streaming_increment(c) for c in chunks] + [det.finish()]
        got = (''.join(o.reasoning_text for o in outs), ''.join(o.normal_text for o in outs))
        assert got == want, (label, chunks)


@pytest.mark.parametrize('name', ['qwen3', 'deepseek-r1', 'kimi_k2', 'glm45', 'deepseek-v4', 'mistral'])
def test_reasoning_default_is_sglangs(name: str) -> None:
    """SGLang's serving reads ``reasoning_default`` from the detector instance to decide, with no template
    reasoning config, whether a request reasons (``enable_thinking=False`` honoured for qwen3): replace mode
    carries SGLang's own detector's value onto the instance (SGLang's base constructor would reset it)."""
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    own = ReasoningParser.DetectorMap.get(name)
    if own is None:
        pytest.skip(f'SGLang 0.5.23 has no {name} reasoning detector')
    ours = _detector(name, None, True)
    assert ours.reasoning_default == own().reasoning_default
