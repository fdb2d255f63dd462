"""Where users meet derivation: ``lmparse which`` falling back to it, ``lmparse derive``, ``--chat-template``."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('jinja2')

from lmparse import parsers_for_model  # noqa: E402
from lmparse.cli import main  # noqa: E402
from lmparse.models import UnknownModelError  # noqa: E402

TEMPLATES = Path(__file__).parent / 'data' / 'templates'
OUTPUT = ('<|reason|>Two cities.<|/reason|>On it.<|fn|>{"function": "get_weather", "args": {"city": "Paris"}}'
          '<|/fn|><|fn|>{"function": "get_weather", "args": {"city": "北京"}}<|/fn|>')


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A model folder whose chat template no table row knows."""
    folder = tmp_path / 'acme-chat-7b'
    folder.mkdir()
    shutil.copy(TEMPLATES / 'json_invented_markers.jinja', folder / 'chat_template.jinja')
    (folder / 'tokenizer_config.json').write_text(json.dumps({'eos_token': '<|end_turn|>'}))
    return folder


def test_which_falls_back_to_derivation(capsys: Any, model: Path) -> None:
    found = parsers_for_model(model)
    assert found.chat_template == str(model)
    assert found.family == 'derived from the chat template (reasoning and tool calls on JsonToolParser)'
    assert found.matched_by.startswith('no table row; derived from the chat template')
    assert found.cli_args() == ['--chat-template', str(model)]
    code, out, _ = run(capsys, 'which', str(model))
    assert code == 0
    assert 'derived from the chat template' in out and 'no table row' in out
    assert '<|reason|> ... <|/reason|>' in out
    assert "JsonToolParser: tool_open_tag='<|fn|>', tool_close_tag='<|/fn|>'" in out
    assert f'lmparse parse OUTPUT --chat-template {model}' in out
    code, out, _ = run(capsys, 'which', '--json', str(model))
    doc = json.loads(out)
    assert code == 0 and doc['known'] and doc['chat_template'] == str(model)
    assert doc['args'] == ['--chat-template', str(model)]


def test_which_prefers_the_table(model: Path) -> None:
    shutil.copy(TEMPLATES / 'xml_function_parameter.jinja', model / 'chat_template.jinja')
    found = parsers_for_model(model)
    assert found.chat_template is None and found.tool_parser == 'qwen3coder'
    assert found.matched_by == 'chat template markers'


def test_which_says_why_derivation_failed(capsys: Any, model: Path) -> None:
    shutil.copy(TEMPLATES / 'bare_json_after_content.jinja', model / 'chat_template.jinja')
    with pytest.raises(UnknownModelError) as info:
        parsers_for_model(model)
    assert 'no dialect derived from its chat template' in info.value.reason
    assert '(tool_calls): calls with no marker before them' in info.value.reason
    code, _, err = run(capsys, 'which', str(model))
    assert code == 1 and 'no marker before them' in err


def test_which_on_a_template_file(capsys: Any) -> None:
    code, out, _ = run(capsys, 'which', str(TEMPLATES / 'xml_name_attribute.jinja'))
    assert code == 0 and 'XmlToolParser' in out
    code, _, err = run(capsys, 'which', str(TEMPLATES / 'plain_chat.jinja'))
    assert code == 1 and 'nothing to derive' in err


def test_parse_with_the_chat_template(capsys: Any, model: Path, tmp_path: Path) -> None:
    out_file = tmp_path / 'out.txt'
    out_file.write_text(OUTPUT, encoding='utf-8')
    want = {'content': 'On it.', 'reasoning_content': 'Two cities.',
            'calls': [('get_weather', {'city': 'Paris'}), ('get_weather', {'city': '北京'})]}
    for flags in (['--chat-template', str(model / 'chat_template.jinja')], ['--model', str(model)]):
        code, out, err = run(capsys, 'parse', str(out_file), '--chunk-size', '3', *flags)
        doc = json.loads(out)
        assert code == 0, err
        assert {'content': doc['content'], 'reasoning_content': doc['reasoning_content'],
                'calls': [(c['function']['name'], json.loads(c['function']['arguments']))
                          for c in doc['tool_calls']]} == want
    code, _, err = run(capsys, 'parse', str(out_file), '--chat-template', str(model), '--tool-parser', 'qwen3')
    assert code == 1 and '--chat-template derives the parsers' in err
    code, _, err = run(capsys, 'parse', str(out_file), '--chat-template', str(TEMPLATES / 'ns_elements_bare.jinja'))
    assert code == 1 and 'cannot derive a dialect from the chat template (tool_calls)' in err


def test_derive_prints_a_dialect_module(capsys: Any, tmp_path: Path) -> None:
    code, out, err = run(capsys, 'derive', str(TEMPLATES / 'xml_arg_key_value.jinja'), '--name', 'acme')
    assert code == 0
    assert "@ToolParserManager.register_module('acme')" in out and 'class AcmeToolParser(XmlToolParser):' in out
    assert "arg_open = '<arg_key>'" in out and 'value_open' in out
    assert 'proved on 21 renderings' in err
    compile(out, 'acme.py', 'exec')
    code, out, _ = run(capsys, 'derive', '--json', str(TEMPLATES / 'json_tags_think.jinja'))
    doc = json.loads(out)
    assert code == 0 and doc['tool_calls']['tool_open_tag'] == '<tool_call>' and doc['seconds'] >= 0
    code, _, err = run(capsys, 'derive', str(TEMPLATES / 'plain_chat.jinja'))
    assert code == 1 and 'nothing to derive' in err
    code, _, err = run(capsys, 'derive', str(tmp_path / 'nope.jinja'))
    assert code == 1 and 'neither Jinja source nor an existing file' in err


def test_serve_takes_the_chat_template(model: Path) -> None:
    from lmparse.cli import _parser_class, build_parser

    args = build_parser().parse_args(['serve', '--chat-template', str(model), '--port', '0'])
    cls = _parser_class(args)
    assert cls.tool_parser_cls.tool_open_tag == '<|fn|>'
    assert cls.reasoning_parser_cls.reasoning_open_tag == '<|reason|>'


@pytest.mark.parametrize('template', ['ns_elements', 'xtml_channels', 'json_name_keyed', 'bare_json', 'pythonic_bare'])
def test_derived_module_saved_registers_and_works(capsys: Any, tmp_path: Path, template: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`lmparse derive` output saved as a module: importing it registers parsers that pass the template's proof."""
    import importlib.util

    import lmparse
    from lmparse import BaseResponseParser
    from lmparse.templates import _derive as derivation, load_chat_template

    name = f'saved-{template}'.replace('_', '-')
    code, out, err = run(capsys, 'derive', str(TEMPLATES / f'{template}.jinja'), '--name', name)
    assert code == 0, err
    path = tmp_path / f'{template}_dialect.py'
    path.write_text(out, encoding='utf-8')
    for registry in (lmparse.ReasoningParserManager, lmparse.ToolParserManager):
        monkeypatch.setattr(registry, '_module_dict', dict(registry.module_dict))
    spec = importlib.util.spec_from_file_location(f'{template}_dialect', path)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    dialect = derivation.derive_dialect(load_chat_template(TEMPLATES / f'{template}.jinja'))
    with_reasoning = dialect.reasoning is not None
    cls = BaseResponseParser.with_parsers(name if with_reasoning else None, name)
    assert cls.tool_parser_cls.__module__ == f'{template}_dialect'
    tpl = load_chat_template(TEMPLATES / f'{template}.jinja')
    for setting in derivation._settings(tpl):
        rendered, _ = derivation._render_turns(tpl, setting, dialect.reasoning.field if with_reasoning else None,
                                               False)
        derivation._prove(cls, rendered, with_reasoning, True)
