"""A template in a built-in dialect's syntax derives a dialect that gives the built-in dialect's results.

For every built-in dialect whose syntax a (test-written) template expresses:
its bench fixtures (bench/fixtures/) parse to the same content, reasoning and
calls under the derived parsers as under the built-in ones, and to the
fixtures' own expected results, at 1, 4, 16 and 256-character chunks and
whole; and in the property lane's machinery (tests/dialect_corpus.py) the
valid outputs generated from the built-in dialect's markers parse to exactly
the generated calls and text under the derived parsers too, in any chunking,
and marker soup keeps every streaming invariant.

Covered: qwen3, internlm, llama3, jamba, apertus, qwen3coder, glm47,
minicpm5, lfm2, olmo3 (property lane), minimax_m2, minimax_m3, kimi_k2,
kimi_k3, deepseek-v3, deepseek-v31, deepseek-v32, llama3_json, pythonic,
ernie45, hunyuan_a13b, hy_v3, k2_horizon, step3, granite-20b-fc, granite
(tool parser alone), mistral, gemma4, cohere_command4, plamo3 and inkling (bench fixtures) with the template files under
tests/data/templates/; trinity, longcat, ling3, poolside_v1, iquest_q1,
spark25, mimo, step3p5, interns2-preview, dots, deepseek-v4 and gigachat35
with inline templates; beam, muse (recipient channels) and gpt-oss (Harmony)
with the templates under tests/data/templates/channels/ (bench fixtures and
property lane; the end of this file).

Limits: the recovery rules of some built-ins (Qwen3-Coder's bare
``<function=``, a missing value close tag) are beyond what a template shows, so
only well-formed output is compared;
Mistral's bench fixtures are compared under two templates (envelope arrays
before v11, ``[TOOL_CALLS]NAME[ARGS]{...}`` name headers after), not in the
property lane, whose Mistral outputs mix both layouts in one output;
Gemma 4 is compared on its bench fixtures only: the built-in also reads a bare
``:`` call prefix some checkpoints write, which the property lane generates and
a template never shows;
llama3_json and pythonic (bare calls, no marker before them) derive as those
built-ins' bare readings, their open markers kept, so the comparison shows the
template's field names and literals change nothing;
beam and muse in the property lane on well-formed outputs written with the
headers the template shows (a derived grammar has no rule for a missing
terminator or parameter close tag, and no reading of a header the template
never writes: Muse Spark's recipient-less reasoning, ``to=developer``);
muse_glimmer is not compared: its reading differs from a template-derived one
only where the template says nothing (recipient-less messages) or where the
schema types a value as a string (Glimmer decodes a string-typed ``42``);
built-ins with framing of their own, compared where a template shows it:
ERNIE's ``<response>`` and Hunyuan-A13B's ``<answer>`` answer frames derive as
content markers (A13B's ``</answer>`` from the end of turn every rendering
shares), HY v3's suffixed tokens and K2 Horizon's ``<ifm|...>`` groups as the
XML family, Step-3's steptml calls in a special-token section (the per-call
``<｜tool_call_begin｜>function<｜tool_sep｜>`` header skipped as text between
calls) and PLaMo 3's per-request markers and argument preamble as the section
family; K2 Horizon and HY v3 are compared under their default
``reasoning_effort`` (a template renders one reasoning pair: K2 Horizon's other
efforts' ``<ifm|think_fast>`` pairs and its ``tool_call_format`` refusals are
request rules a template does not show); Cohere Command 4 and PLaMo 3 on their
bench fixtures only: Command 4's built-in drops both answer pairs
(``<|START_RESPONSE|>`` and ``<|START_TEXT|>``) where a template writes one, and
PLaMo 3's drops its end-of-turn token ``<|plamo:tag|>`` anywhere in the output,
where a template writes it only as the end of turn (the stop), the property
lane generating both inside outputs;
Inkling's block headers derive (the generation prompt's last marker,
``<|message_model|>``, opens every later block, the call name written between
it and the block kind: header markers, the kinds that end a header, the turn's
shared end as the block end), compared on its bench fixtures only: the
built-in also reads the envelope's ``arguments`` / ``parameters`` for ``args``
and drops ``<|content_invoke_tool_text|>`` / ``<|content_tool_error|>`` /
``<|content_model_end_sampling|>`` kind markers, a vocabulary the template
never writes and the property lane generates;
not derived (so not compared): xlam's bare JSON arrays, reasoning markers that
are prose (granite: tests/data/templates/granite_prose.jinja is refused,
part ``reasoning``; Granite's tool parser is compared alone, under the
reasoning-less Granite 3.0/3.1 shape granite_tool_call.jinja, on its bench
fixtures and in the property lane — its second opener ``<tool_call>``, which
Granite 3.1 is seen writing as text, is a reading no template shows).
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

import lmparse  # noqa: E402
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
    'apertus': ('json_name_keyed', 'apertus2509'),
    'qwen3coder': ('xml_function_parameter', 'default'),
    'glm47': ('xml_arg_key_value', 'default'),
    'minicpm5': ('xml_name_attribute', None),
    'minimax_m2': ('xml_invoke_parameter', 'minimax_m2'),
    'minimax_m3': ('ns_elements', 'minimax_m3'),
    'deepseek-v32': ('dsml_typed', 'deepseek-v32'),
    'kimi_k2': ('sections_call_id', 'default'),
    'kimi_k3': ('xtml_channels', 'kimi_k3'),
    'deepseek-v3': ('sections_fenced', 'deepseek_r1'),
    'deepseek-v31': ('sections_name', 'deepseek-v31'),
    'lfm2': ('pythonic_tags', None),
    'llama3_json': ('bare_json', None),
    'pythonic': ('pythonic_bare', None),
    'olmo3': ('pythonic_no_brackets', None),
    # built-ins with framing of their own: answer frames as content markers, suffixed tokens, sections
    'ernie45': ('ernie_response', 'ernie45'),
    'hunyuan_a13b': ('hunyuan_answer', 'hunyuan_a13b'),
    'hy_v3': ('hy_suffixed', 'hy_v3'),
    'k2_horizon': ('k2_horizon', 'k2_horizon'),
    'step3': ('step3_steptml', 'step3'),
    'granite-20b-fc': ('granite_function_call', None),
    # Granite 3.0/3.1 (no reasoning): the tool parser alone, also on the fixtures (their prose reasoning is text)
    'granite': ('granite_tool_call', None),
}
# Gemma 4: its fixtures only; the built-in also reads a bare ':' call prefix the property lane generates
# Cohere Command 4, PLaMo 3 and Inkling: their fixtures only; their built-ins read markers and fields the property
# lane generates and a template writes only elsewhere or never (see the module docstring)
FIXTURE_TEMPLATES = {**{tool: template for tool, (template, _) in EQUIVALENT.items()}, 'gemma4': 'brace_calls',
                     'cohere_command4': 'cohere_command4', 'plamo3': 'plamo_requests', 'inkling': 'inkling_blocks'}


# fixtures compared under the built-in tool parser alone: Granite's prose reasoning is not derived (the template
# in its shape, granite_prose, is refused), so its fixtures' reasoning is content under both
TOOL_ONLY = {'granite'}


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
    tool_only = fixture.tool_parser in TOOL_ONLY
    builtin = BaseResponseParser.with_parsers(None if tool_only else fixture.reasoning_parser, fixture.tool_parser)
    ours = derived.response_parser()
    for size in (1, 4, 16, 256, 0):
        want = _run(builtin, fixture.request, fixture.text, size)
        got = _run(ours, fixture.request, fixture.text, size)
        assert got == want, (fixture.id, size)
    exp = fixture.expected
    content, reasoning, calls = _run(ours, fixture.request, fixture.text, 0)
    if not tool_only:
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


# ---- more built-in dialects: inline templates in their syntax -------------------------------------------
# Each is a small chat template written here in the dialect's syntax (markers from the dialect's module
# docstring / its bench fixtures), reasoning as the built-in reasoning parser behaves: 'prompt' (the
# generation prompt opens it), 'switch' (opened when thinking / enable_thinking is on), 'unless-off'
# (opened unless one of them is false) or None.

NL = "{{ '\\n' }}"
VALUE = "{{ v if v is string else v | tojson }}"


def _json_calls(open_tag: str, close: str, field: str = 'arguments', inner: str = NL) -> str:
    return ("{% for c in message.tool_calls or [] %}" + NL + open_tag + inner
            + '{"name": {{ c.function.name | tojson }}, "' + field + '": {{ c.function.arguments | tojson }}}'
            + (inner if close else '') + close + "{% endfor %}")


def _glm_calls(open_tag: str, close: str, sep: str = NL) -> str:
    return ("{% for c in message.tool_calls or [] %}" + NL + open_tag + "{{ c.function.name }}"
            + "{% for k, v in c.function.arguments.items() %}" + sep + "<arg_key>{{ k }}</arg_key>" + sep
            + "<arg_value>" + VALUE + "</arg_value>{% endfor %}" + sep + close + "{% endfor %}")


def _coder_calls(value_nl: bool) -> str:
    pad = NL if value_nl else ''
    return ("{% for c in message.tool_calls or [] %}" + NL + "<tool_call>" + NL + "<function={{ c.function.name }}>"
            + "{% for k, v in c.function.arguments.items() %}" + NL + "<parameter={{ k }}>" + pad + VALUE + pad
            + "</parameter>{% endfor %}" + NL + "</function>" + NL + "</tool_call>{% endfor %}")


def _dsml_calls(token: str, block: str, typed: bool, lead: str) -> str:
    string = ' string="{{ \'true\' if v is string else \'false\' }}"' if typed else ''
    return ("{% if message.tool_calls %}" + lead + f"<{token}{block}>"
            + "{% for c in message.tool_calls %}" + NL + f'<{token}invoke name="{{{{ c.function.name }}}}">'
            + "{% for k, v in c.function.arguments.items() %}" + NL + f'<{token}parameter name="{{{{ k }}}}"{string}>'
            + VALUE + f"</{token}parameter>{{% endfor %}}" + NL + f"</{token}invoke>{{% endfor %}}" + NL
            + f"</{token}{block}>{{% endif %}}")


def _inline(reasoning: tuple[str, str, str] | None, calls: str) -> str:
    head = ''
    opened = ''
    if reasoning is not None:
        open_tag, close, mode = reasoning
        on = {'prompt': 'true', 'switch': '(thinking or enable_thinking)',
              'unless-off': '(thinking is not defined or thinking) and '
                            '(enable_thinking is not defined or enable_thinking)'}[mode]
        head = ("{% if " + on + " %}" + open_tag + "{{ message.reasoning_content or '' }}" + close + NL + NL
                + "{% endif %}")
        opened = "{% if " + on + " %}" + open_tag + "{% endif %}"
    return ("{% for message in messages %}<|turn|>{{ message.role }}" + NL
            + "{% if message.role == 'assistant' %}" + head + "{{ message.content or '' }}" + calls
            + "{% else %}{{ message.content }}{% endif %}<|end|>" + NL + "{% endfor %}"
            + "{% if add_generation_prompt %}<|turn|>assistant" + NL + opened + "{% endif %}")


THINK_PROMPT = ('<think>', '</think>', 'prompt')
THINK_SWITCH = ('<think>', '</think>', 'switch')
# built-in tool dialect -> (built-in reasoning parser, template source)
INLINE: dict[str, tuple[str | None, str]] = {
    'trinity': ('default', _inline(THINK_PROMPT, _json_calls('<tool_call>', '</tool_call>'))),
    'longcat': ('longcat', _inline(('<longcat_think>', '</longcat_think>', 'prompt'),
                                   _json_calls('<longcat_tool_call>', '</longcat_tool_call>'))),
    'ling3': ('ling3', _inline(THINK_PROMPT, _glm_calls('<tool_call>', '</tool_call>'))),
    'poolside_v1': ('poolside_v1', _inline(THINK_SWITCH, _glm_calls('<tool_call>', '</tool_call>'))),
    'iquest_q1': ('iquest_q1', _inline(('<think>', '</think>', 'unless-off'),
                                       _glm_calls('<iquest_tool_call>', '</iquest_tool_call>'))),
    'spark25': (None, _inline(None, _glm_calls('<tool_call>', '</tool_call>', sep=''))),
    'mimo': ('mimo', _inline(THINK_SWITCH, _coder_calls(False))),
    'step3p5': ('step3p5', _inline(THINK_PROMPT, _coder_calls(True))),
    'interns2-preview': ('default', _inline(THINK_PROMPT, _coder_calls(True))),
    'dots': ('dots', _inline(THINK_PROMPT, _dsml_calls('', 'dots_function_call', False, NL))),
    'deepseek-v4': ('deepseek-v4', _inline(THINK_SWITCH, _dsml_calls('｜DSML｜', 'tool_calls', True, NL + NL))),
    'gigachat35': ('gigachat35', _inline(THINK_PROMPT, _dsml_calls('｜GCML｜', 'tool_calls', True, ''))),
}


@pytest.mark.parametrize('tool', sorted(INLINE))
def test_inline_template_same_as_builtin(tool: str) -> None:
    """The bench fixtures and the property lane's valid outputs of more built-ins, under the derived dialect."""
    reasoning, source = INLINE[tool]
    dialect = derive_dialect(source)
    ours = dialect.response_parser()
    fixtures = [f for f in load_all() if f.tool_parser == tool]
    assert fixtures
    for fixture in fixtures:
        builtin = BaseResponseParser.with_parsers(fixture.reasoning_parser, fixture.tool_parser)
        for size in (1, 16, 0):
            assert _run(ours, fixture.request, fixture.text, size) == \
                _run(builtin, fixture.request, fixture.text, size), (fixture.id, size)
    name = f'derived-test-inline-{tool}'
    ToolParserManager.register_module(name, module=dialect.tool_parser)
    if reasoning is not None:
        ReasoningParserManager.register_module(name, module=dialect.reasoning_parser)
    derived_cfg = dc.Config(name, 'router', name, name if reasoning else None)
    builtin_cfg = dc.Config(f'{tool}|{reasoning}', 'router', tool, reasoning)
    try:
        for seed in range(30):
            built = dc.build_router_output(builtin_cfg, random.Random(seed))
            for chunks in ([built.text], [built.text[i:i + 3] for i in range(0, len(built.text), 3)]):
                dc.check_text(derived_cfg, built.text, chunks, False, built)
            ours_result = dc.run_stream(dc.new_parser(derived_cfg), [(built.text, [])], False)
            theirs = dc.run_stream(dc.new_parser(builtin_cfg), [(built.text, [])], False)
            assert ours_result.key() == theirs.key(), built.text
    finally:
        ToolParserManager.module_dict.pop(name, None)
        ReasoningParserManager.module_dict.pop(name, None)
        for key in [k for k in dc._CLASSES if k[0] in (derived_cfg, builtin_cfg)]:
            dc._CLASSES.pop(key, None)


# ---- message-framed templates: recipient channels (beam, muse) and Harmony (gpt-oss) ----------------------
# Templates under tests/data/templates/channels/ written in the shapes of lmparse.dialects.beam / muse / gpt_oss.
# The derived grammars declare what the templates write (no recovery of a missing terminator or parameter close
# tag, no header a template never writes): the property lane's channel outputs are generated well-formed and
# with the derived grammar's headers (dialect_corpus.build_channel_output(shown=...)), expected as the built-in
# reads them.

CHANNELS = TEMPLATES / 'channels'
# built-in tool (or response) parser -> (template, built-in reasoning parser)
FRAMED: dict[str, tuple[str, str | None]] = {
    'beam': ('beam_channels', 'beam'),
    'muse': ('muse_channels', 'muse'),
    'gpt-oss': ('harmony', None),
}


def _framed(template: str) -> Any:
    return derive_dialect(CHANNELS / f'{template}.jinja')


FRAMED_FIXTURES = [f for f in load_all() if (f.tool_parser or f.response_parser) in FRAMED]


def test_every_framed_dialect_has_fixtures() -> None:
    assert {f.tool_parser or f.response_parser for f in FRAMED_FIXTURES} == set(FRAMED)


@pytest.mark.parametrize('fixture', FRAMED_FIXTURES, ids=[f.id for f in FRAMED_FIXTURES])
def test_framed_bench_fixture_same_as_builtin(fixture: BenchFixture) -> None:
    key = fixture.tool_parser or fixture.response_parser
    templates = [FRAMED[key][0]] + (['harmony_first_call'] if key == 'gpt-oss' else [])
    if key == 'gpt-oss':
        builtin = lmparse.ResponseParserManager.get('gpt-oss').with_parsers(input_mode='text')
    else:
        builtin = BaseResponseParser.with_parsers(fixture.reasoning_parser, fixture.tool_parser)
    for template in templates:
        ours = _framed(template).response_parser()
        for size in (1, 4, 16, 256, 0):
            assert _run(ours, fixture.request, fixture.text, size) == \
                _run(builtin, fixture.request, fixture.text, size), (fixture.id, template, size)
        exp = fixture.expected
        content, reasoning, calls = _run(ours, fixture.request, fixture.text, 0)
        assert (content, reasoning) == (exp.content, exp.reasoning)
        assert [(n, json.loads(a)) for n, a in calls] == [(n, json.loads(a)) for n, a in exp.calls]


@pytest.mark.parametrize('tool', ['beam', 'muse'])
def test_framed_property_lane_valid_outputs(tool: str) -> None:
    """Well-formed channel outputs in the derived grammar's headers: the derived parsers give the generated
    result, the same as the built-in parsers, in any chunking."""
    template, reasoning = FRAMED[tool]
    dialect = _framed(template)
    name = f'derived-test-{template}'
    ToolParserManager.register_module(name, module=dialect.tool_parser)
    ReasoningParserManager.register_module(name, module=dialect.reasoning_parser)
    derived_cfg = dc.Config(f'{name}|{name}', 'router', name, name)
    builtin_cfg = dc.Config(f'{tool}|{reasoning}', 'router', tool, reasoning)
    try:
        @_lane_settings(60)
        @given(seed=st.integers(0, 2**32 - 1), data=st.data())
        def check(seed: int, data: st.DataObject) -> None:
            built = dc.build_channel_output(builtin_cfg, random.Random(seed), shown=dialect.grammar)
            chunks, flush = data.draw(_chunking(built.text))
            dc.check_text(derived_cfg, built.text, chunks, flush, built)
            ours = dc.run_stream(dc.new_parser(derived_cfg), [(c, []) for c in chunks], flush)
            theirs = dc.run_stream(dc.new_parser(builtin_cfg), [(built.text, [])], False)
            assert ours.key() == theirs.key(), built.text

        check()
        # marker soup: every streaming invariant holds
        pieces = dc.soup_pieces(derived_cfg)

        @_lane_settings(30)
        @given(data=st.data())
        def soup(data: st.DataObject) -> None:
            text = ''.join(data.draw(st.lists(st.sampled_from(pieces), max_size=30)))
            chunks, flush = data.draw(_chunking(text))
            dc.check_text(derived_cfg, text, chunks, flush)

        soup()
    finally:
        ToolParserManager.module_dict.pop(name, None)
        ReasoningParserManager.module_dict.pop(name, None)
        for key in [k for k in dc._CLASSES if k[0] in (derived_cfg, builtin_cfg)]:
            dc._CLASSES.pop(key, None)


@pytest.mark.parametrize('template', ['harmony', 'harmony_first_call'])
def test_harmony_property_lane(template: str) -> None:
    """The property lane's Harmony outputs, in text mode (any chunking) and token-id mode (any grouping): the
    derived response parser gives the generated result, the same as gpt-oss's."""
    dialect = _framed(template)
    name = f'derived-test-{template}'
    lmparse.ResponseParserManager.register_module(name, module=dialect.response_parser_cls)
    text_cfg = dc.Config(f'{name}|text', 'response', response=name, input_mode='text')
    ids_cfg = dc.Config(f'{name}|ids', 'response', response=name, input_mode='ids')
    builtin_cfg = dc.Config('gpt-oss|text', 'response', response='gpt-oss', input_mode='text')
    try:
        assert text_cfg.is_harmony

        @_lane_settings(60)
        @given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(0, 9), min_size=1, max_size=12),
               data=st.data())
        def check(seed: int, sizes: list[int], data: st.DataObject) -> None:
            built = dc.build_harmony_output(random.Random(seed))
            chunks, flush = data.draw(_chunking(built.text))
            dc.check_text(text_cfg, built.text, chunks, flush, built)
            ours = dc.run_stream(dc.new_parser(text_cfg), [(c, []) for c in chunks], flush)
            theirs = dc.run_stream(dc.new_parser(builtin_cfg), [(built.text, [])], False)
            assert ours.key() == theirs.key(), built.text
            dc.check_harmony_ids(ids_cfg, built.tokens, sizes, flush, built)

        check()
    finally:
        lmparse.ResponseParserManager.module_dict.pop(name, None)
        for key in [k for k in dc._CLASSES if k[0] in (text_cfg, ids_cfg, builtin_cfg)]:
            dc._CLASSES.pop(key, None)
