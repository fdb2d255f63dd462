"""Opt-in (LMPARSE_SGLANG=1): the replays of ``bench/serving_sglang.py --replay`` stream exactly what they replay.

A replay case's detectors return, chunk by chunk, the results the plugin's (or
SGLang's own) detectors returned for the same request, without parsing; the
benchmark takes its cost as the least any detector producing that output can
cost in SGLang's serving path, which holds only if the replay's SSE frames are
the source's (but for ``created`` and tool call ids). ``prepare_replay`` checks
that itself; these tests run it for both sources at every step size and pin
the frame counts the documentation reports; the replay with calls held back and sent whole carries the plugin's
reasoning, content and calls.
"""
from __future__ import annotations

import os

import pytest

_ENABLED = os.environ.get('LMPARSE_SGLANG') == '1'
pytestmark = pytest.mark.skipif(not _ENABLED, reason='opt-in: set LMPARSE_SGLANG=1 (SGLang lane)')
if _ENABLED:
    from bench import serving_sglang as S
    from bench.serving_common import reconstruct
    if S.available() is not None:
        pytestmark = pytest.mark.skip(reason=f'SGLang serving benchmark unavailable: {S.available()}')

STEP_SIZES = (1, 4, 16)


@pytest.mark.parametrize('tokens_per_step', STEP_SIZES)
@pytest.mark.parametrize('of', ('plugin', 'engine'))
@pytest.mark.parametrize('scenario', ('qwen3-json', 'qwen3-xml'))
def test_replay_streams_its_source(scenario: str, of: str, tokens_per_step: int) -> None:
    replay = S.prepare_replay(scenario, tokens_per_step, of)  # raises unless the frames are the source's
    source = S.prepare(scenario, of, tokens_per_step)
    assert S._normalised(replay.frames()) == S._normalised(source.frames())
    # Replayed again (the timed rounds run each case many times): the same frames.
    assert S._normalised(replay.frames()) == S._normalised(source.frames())


@pytest.mark.parametrize('tokens_per_step', STEP_SIZES)
@pytest.mark.parametrize('scenario', ('qwen3-json', 'qwen3-xml'))
def test_replay_with_calls_whole(scenario: str, tokens_per_step: int) -> None:
    # prepare_replay checks the scenario's reasoning, content and calls, and one tool-call frame per call.
    replay = S.prepare_replay(scenario, tokens_per_step, 'plugin-whole')
    frames = replay.frames()
    assert S.frame_counts(frames)['tool'] == 1
    source = reconstruct(S.prepare(scenario, 'plugin', tokens_per_step).frames())
    got = reconstruct(frames)
    assert (got.reasoning, got.content, got.calls) == (source.reasoning, source.content, source.calls)


def test_record_copies_results_a_detector_changes_later() -> None:
    # The plugin's linked tool detector returns, for a chunk without calls, the reasoning detector's pending-calls
    # list, which later chunks extend in place: recorded as returned, a replay would send those calls again.
    source = S.prepare('qwen3-json', 'plugin', 4)
    rec = S._record(source)
    calls = [c for res in rec.tool for c in res.calls]
    sent = S.frame_counts(rec.frames)['tool']
    assert len(calls) == sent


# Tool-call frames per request (SSE data frames whose delta carries a tool call), per step size 1 / 4 / 16.
TOOL_FRAMES = {
    # SGLang's qwen25: the name, then arguments as the growth of the common prefix of the partial arguments'
    # JSON between steps (from the second step after the name; the rest once the call's JSON is complete).
    ('qwen3-json', 'engine'): (8, 6, 2),
    # lmparse: the name, then one frame per step that brings argument text (fragments of a step joined).
    ('qwen3-json', 'plugin'): (27, 9, 3),
    # SGLang's qwen3_coder: name, '{', one frame per whole parameter, '}' at every step size (items never joined).
    ('qwen3-xml', 'engine'): (7, 7, 7),
    ('qwen3-xml', 'plugin'): (8, 7, 5),
}


@pytest.mark.parametrize('key', sorted(TOOL_FRAMES))
def test_tool_frames(key: tuple[str, str]) -> None:
    scenario, config = key
    got = tuple(S.frame_counts(S.prepare(scenario, config, n).frames())['tool'] for n in STEP_SIZES)
    assert got == TOOL_FRAMES[key]
