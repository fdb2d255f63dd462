"""Opt-in lane: bench/serving_lmdeploy.py's cases stream what they must (LMPARSE_LMDEPLOY_SERVING=1).

    tools/install_lmdeploy_serving.sh VENV            # lmdeploy==0.18.0 --no-deps + what its api_server imports
    VENV/bin/python setup.py -q build_ext --inplace
    LMPARSE_LMDEPLOY_SERVING=1 PYTHONPATH=. VENV/bin/python -m pytest tests/integrations/test_serving_lmdeploy.py -q

Each scenario and configuration runs once at 4 tokens per step through LMDeploy's real
chat-completions endpoint over the stub engine; its SSE frames must rebuild the scenario
(``bench.serving_common.check``: the floor carries the whole text as content, LMDeploy's parsers
and lmparse's drop-in exactly the reasoning, content and call). Skips cleanly without the
variable or without LMDeploy 0.18's serving modules (opt-in: importing them loads LMDeploy's
parser modules, which other tests want absent).
"""
from __future__ import annotations

import json
import os

import pytest

from bench.serving_common import CONFIGS, SCENARIOS, check, reconstruct, steps

pytestmark = pytest.mark.skipif(os.environ.get('LMPARSE_LMDEPLOY_SERVING') != '1',
                                reason='opt-in: LMPARSE_LMDEPLOY_SERVING=1 (needs tools/install_lmdeploy_serving.sh)')


@pytest.fixture(scope='module')
def serving():
    from bench import serving_lmdeploy
    why = serving_lmdeploy.available()
    if why is not None:
        pytest.skip(why)
    return serving_lmdeploy


@pytest.mark.parametrize('config', CONFIGS)
@pytest.mark.parametrize('scenario', sorted(SCENARIOS))
def test_case_streams_the_scenario(serving, scenario: str, config: str) -> None:
    case = serving.prepare(scenario, config, 4)
    assert case.steps == len(steps(SCENARIOS[scenario], 4))
    timing = case.run()  # a second request on the same server state
    assert timing.setup > 0 and timing.streaming > 0
    frames = case.frames()
    check(SCENARIOS[scenario], config, frames)
    assert frames[-1] == 'data: [DONE]\n\n'
    bodies = [json.loads(f[6:]) for f in frames[:-1]]
    finish = [c['finish_reason'] for b in bodies for c in b['choices'] if c.get('finish_reason')]
    assert finish == (['stop'] if config == 'none' else ['tool_calls'])
    tool_cls = case.context.response_parser_cls.tool_parser_cls
    if config == 'none':
        assert tool_cls is None
    else:  # the drop-in is in place only while the plugin's server configures its parsers
        assert tool_cls.__module__.split('.')[0] == ('lmparse' if config == 'plugin' else 'lmdeploy')
        from lmparse.compat import lmdeploy as compat
        assert not compat.installed()


def test_check_rejects_a_wrong_configuration(serving) -> None:
    """The check can fail: the floor's frames are not what a parser configuration must produce."""
    frames = serving.prepare('qwen3-json', 'none', 4).frames()
    assert reconstruct(frames).content == SCENARIOS['qwen3-json'].text
    with pytest.raises(AssertionError):
        check(SCENARIOS['qwen3-json'], 'engine', frames)
