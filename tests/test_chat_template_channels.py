"""Dialects derived from message-framed chat templates: recipient channels (Beam / Muse shapes) and Harmony.

The templates under tests/data/templates/channels/ are written for these
tests in the shapes of lmparse.dialects.beam, muse and gpt_oss (none is a copy
of a model's template). Equivalence with the built-in dialects on their bench
fixtures and in the property lane is in tests/test_chat_template_equivalence.py.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('jinja2')

import lmparse  # noqa: E402
from lmparse import BaseResponseParser, TemplateDerivationError, derive_dialect, from_chat_template  # noqa: E402
from lmparse.cli import main  # noqa: E402
from lmparse.harmony import HarmonyResponseParser  # noqa: E402
from lmparse.recipient_channels import ChannelToolParser  # noqa: E402
from lmparse.templates import _derive as derivation, load_chat_template, register_derived  # noqa: E402
from tests.streaming import fixed_chunks, random_chunks  # noqa: E402
from tests.test_chat_template import TOOLS, _stream  # noqa: E402

CHANNELS = Path(__file__).parent / 'data' / 'templates' / 'channels'


def _derive(name: str) -> Any:
    return derive_dialect(CHANNELS / f'{name}.jinja')


def _uncached(name: str) -> Any:
    return derivation.derive_dialect(load_chat_template(CHANNELS / f'{name}.jinja'))


CHANNEL_REASONING = {'open': '<|message|>', 'message_field': 'reasoning_content', 'open_tag_in_prompt': False,
                     'thinking_switches': []}
HARMONY_REASONING = {'open': '<|channel|>analysis<|message|>', 'close': '<|end|>', 'message_field': 'thinking',
                     'open_tag_in_prompt': False, 'thinking_switches': []}
DERIVED: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    'beam_channels': ({**CHANNEL_REASONING, 'close': '<|end|>'}, {
        'family': 'ChannelToolParser', 'ends': ['<|return|>', '<|end|>', '<|call|>'], 'start': '<|start|>',
        'message': '<|message|>', 'channel': '<|channel|>', 'recipients': {},
        'channels': {'final': 'content', 'analysis': 'reasoning'}, 'no_recipient': 'content',
        'parameter': '<rfl:parameter', 'parameter_close': '</rfl:parameter>', 'value_newlines': True,
        'values': 'schema'}),
    'muse_channels': ({**CHANNEL_REASONING, 'close': '<|eom|>'}, {
        'family': 'ChannelToolParser', 'ends': ['<|eot|>', '<|eom|>'], 'start': '<|start|>', 'message': '<|message|>',
        'channel': None, 'recipients': {'user': 'content', 'self': 'reasoning'}, 'channels': {},
        'no_recipient': 'content', 'invoke': '<atem:invoke', 'invoke_close': '</atem:invoke>',
        'parameter': '<atem:parameter', 'parameter_close': '</atem:parameter>', 'value_newlines': False,
        'keep_string_parameters': True}),
    'harmony': (HARMONY_REASONING, {'family': 'HarmonyResponseParser'}),
    'harmony_first_call': (HARMONY_REASONING, {'family': 'HarmonyResponseParser'}),
}

REFUSED: dict[str, tuple[str, str]] = {
    'harmony_tools_recipient': ('tool_calls', "the template writes tool under the header ' to=tools.get_weather"
                                              "<|channel|>commentary json', which the Harmony family reads as drop"),
    'harmony_thought_channel': ('reasoning', "the template writes reasoning under the header '<|channel|>thought', "
                                             'which the Harmony family reads as content'),
    'channels_prefixed_recipient': ('tool_calls', 'the recipient-channel family names a call by the whole '
                                                  'recipient'),
}


def test_every_template_file_is_covered() -> None:
    assert {p.stem for p in CHANNELS.glob('*.jinja')} == set(DERIVED) | set(REFUSED)


@pytest.mark.parametrize('name', sorted(DERIVED))
def test_derived_declarations(name: str) -> None:
    reasoning, tools = DERIVED[name]
    dialect = _derive(name)
    summary = dialect.summary()
    assert summary['reasoning'] == reasoning
    assert summary['tool_calls'] == tools
    # every turn, with the output's last terminator kept and cut (an engine strips the stop token)
    assert summary['proved_on'] == {'renderings': 16 if name != 'harmony_first_call' else 14,
                                    'settings': ['no thinking switch'], 'chunk_sizes': [1, 4, 16, 'whole']}
    if tools['family'] == 'HarmonyResponseParser':
        assert dialect.tool_parser is None and dialect.reasoning_parser is None
        assert dialect.response_parser_cls.__bases__ == (HarmonyResponseParser,)
        assert issubclass(dialect.response_parser(), HarmonyResponseParser)
    else:
        assert dialect.tool_parser.__bases__ == (ChannelToolParser,)
        assert dialect.tool_parser.channel_grammar is dialect.reasoning_parser.channel_grammar is dialect.grammar


def test_gpt_oss_conventions_are_noted() -> None:
    # one call per turn, the text beside a call on the analysis channel, a turn with both rejected by the template
    notes = _derive('harmony_first_call').notes
    assert notes == (
        'no thinking switch: the template rejects "reasoning+content+three calls" (write the analysis in content or '
        'in thinking, not both); not part of the proof',
        'content: the template writes the content of a turn with tool calls under the reasoning header; it reads '
        'back as reasoning',
        'tool calls: the template writes only the first call of a turn; proved on the calls it writes')
    assert _derive('harmony').notes == ()


@pytest.mark.parametrize('name', sorted(REFUSED))
def test_refused_with_the_part_and_reason(name: str) -> None:
    part, reason = REFUSED[name]
    with pytest.raises(TemplateDerivationError) as info:
        _derive(name)
    assert info.value.part == part
    assert reason in info.value.reason


def _variant(name: str, old: str, new: str) -> str:
    source = (CHANNELS / f'{name}.jinja').read_text(encoding='utf-8')
    assert old in source
    return source.replace(old, new)


# (template, text replaced, replacement) -> (part, reason): a framed template that differs in a way the family
# cannot express
VARIANTS: list[tuple[tuple[str, str, str], tuple[str, str]]] = [
    # Harmony's tokens are fixed
    (('harmony', '<|message|>', '<|msg|>'), ('tool_calls', "the template's message marker is '<|msg|>', not "
                                                           "Harmony's '<|message|>'")),
    (('harmony', '<|call|>', '<|eom|>'), ('tool_calls', "a message ends with '<|eom|>'; Harmony messages end with")),
    # a call's arguments written as key=value lines: not parameter elements
    (('muse_channels', '<atem:parameter name="{{ k }}">{{ v if v is string else v | tojson }}</atem:parameter>',
      '{{ k }}={{ v | tojson }};'), ('arguments', 'the arguments are not <TAG name="KEY">VALUE</TAG> elements')),
    # Python literals for non-string values: the proof refuses (True is not JSON)
    (('beam_channels', "{{ v if v is string else v | tojson }}", "{{ v }}"),
     ('arguments', 'does not parse the template\'s own rendering')),
    # the same recipient for reasoning and the calls: no header tells them apart
    (('muse_channels', 'to=self', 'to=get_weather'), ('tool_calls', "the recipient 'get_weather' frames both "
                                                                    'reasoning and calls')),
    # a value padded with spaces: neither its text nor between newlines
    (('beam_channels', "{{ '\\n' }}{{ v if v is string else v | tojson }}{{ '\\n' }}",
      " {{ v if v is string else v | tojson }} "), ('arguments', 'a string value is written as')),
]


@pytest.mark.parametrize('variant', VARIANTS, ids=[f'{v[0][0]}:{v[0][2]}' for v in VARIANTS])
def test_framed_variants_the_family_cannot_express(variant: Any) -> None:
    (name, old, new), (part, reason) = variant
    with pytest.raises(TemplateDerivationError) as info:
        derive_dialect(_variant(name, old, new))
    assert info.value.part == part
    assert reason in info.value.reason


def test_other_templates_are_not_read_as_messages() -> None:
    # '<|START_OF_TURN_TOKEN|>assistant' prompt and a marker before the answer, but no message headers: tags
    tags = Path(__file__).parent / 'data' / 'templates' / 'json_array_framed.jinja'
    assert derive_dialect(tags).tools.base.__name__ == 'JsonToolParser'


def test_deterministic() -> None:
    for name in DERIVED:
        first = _uncached(name)
        again = _uncached(name)
        assert again.summary() == first.summary()
        assert again.python_source('x') == first.python_source('x')


# ---- the derived parsers on outputs the synthetic turns never showed ---------------------------------

OUTPUTS: dict[str, tuple[str, tuple[str | None, str | None, list[tuple[str, dict[str, Any]]]]]] = {
    'beam_channels': (
        '<|channel|>analysis<|message|>Plan: quote <rfl:parameter name="x"> as text.<|end|>'
        '<|start|>assistant to=forecast<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name="city">\n'
        'São Paulo <b>\n</rfl:parameter><rfl:parameter name="days">\n7\n</rfl:parameter>'
        '<rfl:parameter name="flags">\n["a", 1]\n</rfl:parameter><|end|><|start|>assistant to=lookup<|channel|>'
        'analysis <|constrain|>xml<|message|><|call|>',
        (None, 'Plan: quote <rfl:parameter name="x"> as text.',
         [('forecast', {'city': 'São Paulo <b>', 'days': 7, 'flags': ['a', 1]}), ('lookup', {})])),
    'muse_channels': (
        ' to=self<|message|>Think about <atem:invoke name="lookup"> first.<|eom|><|start|>assistant to=forecast'
        '<|message|><atem:function_calls>\n<atem:invoke name="forecast">\n<atem:parameter name="city">42'
        '</atem:parameter>\n<atem:parameter name="days">3</atem:parameter>\n</atem:invoke>\n</atem:function_calls>'
        '<|eom|><|start|>assistant to=user<|message|>Done: 北京 🌧.<|eot|>',
        ('Done: 北京 🌧.', 'Think about <atem:invoke name="lookup"> first.', [('forecast', {'city': '42', 'days': 3})])),
    'harmony': (
        '<|channel|>analysis<|message|>Two lookups; "quotes" and <|constrain|> as text.<|end|>'
        '<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>'
        '<|start|>assistant to=functions.forecast<|channel|>commentary json<|message|>{"city": "Oslo", "days": 2}'
        '<|call|><|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{}<|call|>',
        ('Checking.', 'Two lookups; "quotes" and <|constrain|> as text.',
         [('forecast', {'city': 'Oslo', 'days': 2}), ('lookup', {})])),
}


@pytest.mark.parametrize('name', sorted(OUTPUTS))
def test_derived_parser_streams_new_outputs(name: str) -> None:
    text, want = OUTPUTS[name]
    cls = from_chat_template(CHANNELS / f'{name}.jinja')
    rng = random.Random(11)
    chunkings = [[text]] + [fixed_chunks(text, n) for n in (1, 2, 3, 4, 8, 16, 256)]
    chunkings += [random_chunks(text, rng) for _ in range(10)]
    for chunks in chunkings:
        assert _stream(cls, chunks) == want, chunks


# ---- python_source, lmparse derive, which, lmparse-auto -----------------------------------------------

@pytest.fixture
def registries(monkeypatch: pytest.MonkeyPatch) -> None:
    for registry in (lmparse.ReasoningParserManager, lmparse.ToolParserManager, lmparse.ResponseParserManager):
        monkeypatch.setattr(registry, '_module_dict', dict(registry.module_dict))


@pytest.mark.parametrize('name', sorted(DERIVED))
def test_python_source_is_the_same_dialect(name: str, registries: None) -> None:
    dialect = _derive(name)
    source = dialect.python_source('tpl-test')
    namespace: dict[str, Any] = {'__name__': f'tpl_{name}'}
    exec(compile(source, f'{name}.py', 'exec'), namespace)  # noqa: S102 - the module lmparse derive prints
    if dialect.response_parser_cls is not None:
        cls = lmparse.ResponseParserManager.get('tpl-test')
        assert cls.__bases__ == (HarmonyResponseParser,)
    else:
        tool = lmparse.ToolParserManager.get('tpl-test')
        reasoning = lmparse.ReasoningParserManager.get('tpl-test')
        assert tool.channel_grammar is reasoning.channel_grammar
        g = tool.channel_grammar
        for attr, value in dialect.tools.attrs.items():
            assert getattr(g, attr) == value, attr
        assert (reasoning.reasoning_open_tag, reasoning.reasoning_close_tag) == (dialect.reasoning.open_tag,
                                                                                 dialect.reasoning.close_tag)
        cls = BaseResponseParser.with_parsers('tpl-test', 'tpl-test')
    if name in OUTPUTS:
        text, want = OUTPUTS[name]
        for size in (1, 5, len(text)):
            assert _stream(cls, fixed_chunks(text, size)) == want


def _cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_derive_and_which(capsys: Any) -> None:
    code, out, err = _cli(capsys, 'derive', str(CHANNELS / 'beam_channels.jinja'), '--name', 'acme-beam')
    assert code == 0 and 'proved on 16 renderings' in err
    assert 'ACME_BEAM_GRAMMAR = ChannelGrammar(' in out and 'class AcmeBeamToolParser(ChannelToolParser):' in out
    code, out, _ = _cli(capsys, 'derive', str(CHANNELS / 'harmony.jinja'), '--name', 'acme-oss')
    assert code == 0 and 'class AcmeOssResponseParser(HarmonyResponseParser):' in out
    code, out, _ = _cli(capsys, 'derive', '--json', str(CHANNELS / 'muse_channels.jinja'))
    assert code == 0 and json.loads(out)['tool_calls']['invoke'] == '<atem:invoke'
    code, out, _ = _cli(capsys, 'which', str(CHANNELS / 'harmony.jinja'))
    assert code == 0 and 'HarmonyResponseParser' in out
    code, _, err = _cli(capsys, 'which', str(CHANNELS / 'harmony_tools_recipient.jinja'))
    assert code == 1 and 'which the Harmony family reads as drop' in err


def test_cli_parse_with_a_harmony_template(capsys: Any, tmp_path: Path) -> None:
    text, (content, reasoning, calls) = OUTPUTS['harmony']
    out_file = tmp_path / 'out.txt'
    out_file.write_text(text, encoding='utf-8')
    code, out, err = _cli(capsys, 'parse', str(out_file), '--chunk-size', '3',
                          '--chat-template', str(CHANNELS / 'harmony.jinja'))
    assert code == 0, err
    doc = json.loads(out)
    assert (doc['content'], doc['reasoning_content']) == (content, reasoning)
    assert [(c['function']['name'], json.loads(c['function']['arguments'])) for c in doc['tool_calls']] == calls


def test_register_derived(registries: None) -> None:
    reasoning, tool = register_derived(CHANNELS / 'muse_channels.jinja')
    assert reasoning == tool and tool is not None and tool.startswith('chat-template-')
    assert lmparse.ToolParserManager.get(tool).channel_grammar is lmparse.ReasoningParserManager.get(reasoning) \
        .channel_grammar
    # Harmony is a response parser of its own: the engine plugins' lmparse-auto composes reasoning / tool pairs
    with pytest.raises(TemplateDerivationError, match='Harmony'):
        register_derived(CHANNELS / 'harmony.jinja')


def test_which_and_parse_on_a_model_folder(capsys: Any, tmp_path: Path) -> None:
    from lmparse import parsers_for_model

    folder = tmp_path / 'acme-oss-20b'
    folder.mkdir()
    (folder / 'chat_template.jinja').write_text((CHANNELS / 'harmony_first_call.jinja').read_text(encoding='utf-8'),
                                                encoding='utf-8')
    found = parsers_for_model(folder)
    assert found.chat_template == str(folder)
    assert found.family == 'derived from the chat template (reasoning and tool calls on HarmonyResponseParser)'
    assert 'only the first call of a turn' in found.note
    text, (content, reasoning, calls) = OUTPUTS['harmony']
    out_file = tmp_path / 'out.txt'
    out_file.write_text(text, encoding='utf-8')
    code, out, err = _cli(capsys, 'parse', str(out_file), '--model', str(folder))
    assert code == 0, err
    doc = json.loads(out)
    assert (doc['content'], doc['reasoning_content'], len(doc['tool_calls'])) == (content, reasoning, len(calls))
