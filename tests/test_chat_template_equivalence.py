"""A template in a built-in dialect's syntax derives a dialect that gives the built-in dialect's results.

For every built-in dialect whose syntax a (test-written) template expresses:
its bench fixtures (bench/fixtures/) parse to the same content, reasoning and
calls under the derived parsers as under the built-in ones, and to the
fixtures' own expected results, at 1, 4, 16 and 256-character chunks and
whole; and in the property lane's machinery (tests/dialect_corpus.py) the
valid outputs generated from the built-in dialect's markers parse to exactly
the generated calls and text under the derived parsers too, in any chunking,
and marker soup keeps every streaming invariant.

Built-in dialects whose syntax no test template expresses, and why:
the recovery rules of some built-ins (Qwen3-Coder's bare ``<function=``, GLM's
``value_end_tags``) are beyond what a template shows, so only well-formed
output is compared;
Mistral's bench fixtures are compared under two templates (envelope arrays
before v11, ``[TOOL_CALLS]NAME[ARGS]{...}`` name headers after), not in the
property lane, whose Mistral outputs mix both layouts in one output;
Gemma 4 is compared on its bench fixtures only: the built-in also reads a bare
``:`` call prefix some checkpoints write, which the property lane generates and
a template never shows;
recipient channels and Harmony have no derivation yet (see the report of issue 32).
"""
from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('jinja2')

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bench.fixtures import BenchFixture, load_all  # noqa: E402
from lmparse import BaseResponseParser, ReasoningParserManager, ToolParserManager, derive_dialect  # noqa: E402
from tests import dialect_corpus as dc  # noqa: E402

TEMPLATES = Path(__file__).parent / 'data' / 'templates'

# built-in tool dialect -> (template in its syntax, the built-in reasoning parser the template's reasoning equals)
EQUIVALENT: dict[str, tuple[str, str | None]] = {
    'qwen3': ('json_prefilled_think', 'default'),
    'internlm': ('json_parameters_special', 'default'),
    'llama3': ('json_python_tag', 'default'),
    'jamba': ('json_array_tags', None),
    'qwen3coder': ('xml_function_parameter', 'default'),
    'glm47': ('xml_arg_key_value', 'default'),
    'minicpm5': ('xml_name_attribute', None),
    'minimax_m2': ('xml_invoke_parameter', 'minimax_m2'),
    'deepseek-v32': ('dsml_typed', 'deepseek-v32'),
    'kimi_k2': ('sections_call_id', 'default'),
    'deepseek-v3': ('sections_fenced', 'deepseek_r1'),
    'deepseek-v31': ('sections_name', 'deepseek-v31'),
    'lfm2': ('pythonic_tags', None),
    'olmo3': ('pythonic_no_brackets', None),
}
# Gemma 4: its fixtures only; the built-in also reads a bare ':' call prefix the property lane generates
FIXTURE_TEMPLATES = {**{tool: template for tool, (template, _) in EQUIVALENT.items()}, 'gemma4': 'brace_calls'}


def _template_for(f: BenchFixture) -> str | None:
    if f.tool_parser == 'mistral':
        # Mistral's tokenizer versions: '[TOOL_CALLS][{...}]' envelope arrays before v11, name headers after
        return 'json_name_header' if '[ARGS]' in f.text else 'json_array_no_close'
    return FIXTURE_TEMPLATES.get(f.tool_parser or '')


def _derived(template: str) -> Any:
    return derive_dialect(TEMPLATES / f'{template}.jinja', special_tokens={'bos_token': '<s>', 'eos_token': '</s>'})


def _fixtures() -> list[BenchFixture]:
    out = []
    for f in load_all():
        if _template_for(f) is None:
            continue
        if f.tool_parser == 'olmo3':
            continue  # olmo3 fixtures write Python literals ('...'): compared in the property lane below
        out.append(f)
    return out


FIXTURES = _fixtures()


def _run(cls: Any, request: dict[str, Any], text: str, size: int) -> tuple[Any, ...]:
    parser = cls(request)
    chunks = [text[i:i + size] for i in range(0, len(text), size)] if size else [text]
    content, reasoning, deltas = [], [], []
    for i, chunk in enumerate(chunks):
        for message, _ in parser.stream_chunk(chunk, [], final=i == len(chunks) - 1):
            content.append(message.content or '')
            reasoning.append(message.reasoning_content or '')
            deltas.extend(message.tool_calls or ())
    calls = tuple((c.function.name, c.function.arguments) for c in parser.tool_parser.build_tool_calls(deltas))
    return ''.join(content) or None, ''.join(reasoning) or None, calls


def test_every_mapped_dialect_has_fixtures() -> None:
    covered = {f.tool_parser for f in FIXTURES}
    assert covered == set(FIXTURE_TEMPLATES) - {'olmo3'} | {'mistral'}
    assert {_template_for(f) for f in FIXTURES if f.tool_parser == 'mistral'} == {'json_name_header',
                                                                                 'json_array_no_close'}


@pytest.mark.parametrize('fixture', FIXTURES, ids=[f.id for f in FIXTURES])
def test_bench_fixture_same_as_builtin(fixture: BenchFixture) -> None:
    derived = _derived(_template_for(fixture) or '')
    builtin = BaseResponseParser.with_parsers(fixture.reasoning_parser, fixture.tool_parser)
    ours = derived.response_parser()
    for size in (1, 4, 16, 256, 0):
        want = _run(builtin, fixture.request, fixture.text, size)
        got = _run(ours, fixture.request, fixture.text, size)
        assert got == want, (fixture.id, size)
    exp = fixture.expected
    content, reasoning, calls = _run(ours, fixture.request, fixture.text, 0)
    assert (content, reasoning) == (exp.content, exp.reasoning)
    assert [(n, json.loads(a)) for n, a in calls] == [(n, json.loads(a)) for n, a in exp.calls]


# ---- the property lane ----------------------------------------------------------------------------

@contextmanager
def _registered(tool: str, template: str) -> Iterator[tuple[dc.Config, dc.Config]]:
    """The derived parsers registered under temporary names (removed after), and the built-in configuration."""
    dialect = _derived(template)
    name = f'derived-test-{template}'
    reasoning = EQUIVALENT[tool][1]
    # a built-in paired with no reasoning parser is compared with the derived tool parser alone
    with_reasoning = dialect.reasoning_parser is not None and reasoning is not None
    ToolParserManager.register_module(name, module=dialect.tool_parser)
    if with_reasoning:
        ReasoningParserManager.register_module(name, module=dialect.reasoning_parser)
    try:
        derived_cfg = dc.Config(f'{name}|{name}', 'router', name, name if with_reasoning else None)
        builtin_cfg = dc.Config(f'{tool}|{reasoning}', 'router', tool, reasoning)
        yield derived_cfg, builtin_cfg
    finally:
        ToolParserManager.module_dict.pop(name, None)
        ReasoningParserManager.module_dict.pop(name, None)
        for key in [k for k in dc._CLASSES if k[0] in (derived_cfg, builtin_cfg)]:
            dc._CLASSES.pop(key, None)


def _lane_settings(examples: int) -> Any:
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@st.composite
def _chunking(draw: Any, text: str) -> tuple[list[str], bool]:
    n = len(text)
    cuts = draw(st.one_of(st.lists(st.integers(0, n), max_size=min(24, n + 2)),
                          st.sampled_from([1, 2, 3, 7, 16]).map(lambda size: list(range(size, n, size)))))
    empties = draw(st.lists(st.integers(0, len(cuts) + 1), max_size=3))
    return dc.split(text, cuts, empties), draw(st.booleans())


@pytest.mark.parametrize('tool', sorted(EQUIVALENT))
def test_property_lane_valid_outputs(tool: str) -> None:
    """Outputs generated from the built-in dialect's markers: the derived parsers give the generated result,
    the same as the built-in parsers, in any chunking."""
    with _registered(tool, EQUIVALENT[tool][0]) as (derived_cfg, builtin_cfg):

        @_lane_settings(40)
        @given(seed=st.integers(0, 2**32 - 1), data=st.data())
        def check(seed: int, data: st.DataObject) -> None:
            built = dc.build_router_output(builtin_cfg, random.Random(seed))
            chunks, flush = data.draw(_chunking(built.text))
            dc.check_text(derived_cfg, built.text, chunks, flush, built)
            ours = dc.run_stream(dc.new_parser(derived_cfg), [(c, []) for c in chunks], flush)
            theirs = dc.run_stream(dc.new_parser(builtin_cfg), [(built.text, [])], False)
            assert ours.key() == theirs.key(), built.text

        check()


@pytest.mark.parametrize('tool', sorted(EQUIVALENT))
def test_property_lane_marker_soup(tool: str) -> None:
    """Markers, prefixes and near-misses in any order and chunking: every streaming invariant holds."""
    with _registered(tool, EQUIVALENT[tool][0]) as (derived_cfg, _):
        pieces = dc.soup_pieces(derived_cfg)

        @_lane_settings(30)
        @given(data=st.data())
        def check(data: st.DataObject) -> None:
            text = ''.join(data.draw(st.lists(st.sampled_from(pieces), max_size=30)))
            chunks, flush = data.draw(_chunking(text))
            dc.check_text(derived_cfg, text, chunks, flush)

        check()


def test_registrations_do_not_leak() -> None:
    assert not [n for n in ToolParserManager.names() if n.startswith('derived-test-')]
    assert not [n for n in ReasoningParserManager.names() if n.startswith('derived-test-')]
