"""Swapped mode vs LMDeploy: µs per chunk of lmparse producing LMDeploy's pydantic types.

Needs LMDeploy 0.18.0's parser modules (``tools/install_oracle.sh``). For each
dialect and chunk size it streams the same text through LMDeploy's own
``default`` response parser and through ``lmparse.compat.lmdeploy``'s (both fed
LMDeploy's pydantic request), checks both reconstruct the same content,
reasoning and tool calls, and prints µs per chunk and the speed ratio::

    PYTHONPATH=. python bench/compare_swapped.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, '.')
from tests.oracle.lmdeploy_loader import lmdeploy_chat_request_cls, load_lmdeploy_parsers  # noqa: E402

LMD = load_lmdeploy_parsers()
Request = lmdeploy_chat_request_cls()
from lmparse.compat import lmdeploy as compat  # noqa: E402

TOOLS = [{'type': 'function', 'function': {'name': n, 'parameters': {'type': 'object', 'properties': {
    'city': {'type': 'string'}, 'days': {'type': 'integer'}}}}} for n in ('get_weather', 'get_time')]
REASONING = 'The user asks about the weather in several cities. I should call the tool for each. ' * 6
ARGS = '{"city": "Beijing 北京", "days": 3}'
CASES: dict[str, str] = {
    'qwen3': REASONING + '</think>\n\nLet me check.\n' + '\n'.join(
        f'<tool_call>\n{{"name": "get_weather", "arguments": {ARGS}}}\n</tool_call>' for _ in range(4)),
    'internlm': REASONING + '</think>Checking.' + ''.join(
        f'<|action_start|><|plugin|>{{"name": "get_weather", "parameters": {ARGS}}}<|action_end|>'
        for _ in range(4)),
    'qwen3coder': REASONING + '</think>\n\nChecking.\n' + '\n'.join(
        '<tool_call>\n<function=get_weather>\n<parameter=city>\nBeijing 北京\n</parameter>\n'
        '<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>' for _ in range(4)),
}
SIZES = (1, 4, 16, 256)


def chunks_of(text: str, n: int) -> list[str]:
    return [text[i:i + n] for i in range(0, len(text), n)]


def run(make: Callable[[], Any], chunks: list[str]) -> tuple[str, str, list[tuple[str, str]]]:
    parser = make()
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, list[str]] = {}
    last = len(chunks) - 1
    for i, c in enumerate(chunks):
        for m, _ in parser.stream_chunk(c, [], final=i == last):
            content.append(m.content or '')
            reasoning.append(m.reasoning_content or '')
            for d in m.tool_calls or []:
                entry = calls.setdefault(d.index, ['', ''])
                entry[0] += (d.function.name or '') if d.function else ''
                entry[1] += (d.function.arguments or '') if d.function else ''
    return ''.join(content), ''.join(reasoning), [(calls[k][0], calls[k][1]) for k in sorted(calls)]


def per_chunk_us(make: Callable[[], Any], chunks: list[str], repeat: int) -> float:
    best = float('inf')
    for _ in range(repeat):
        start = time.perf_counter()
        run(make, chunks)
        best = min(best, time.perf_counter() - start)
    return best / len(chunks) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--repeat', type=int, default=5)
    args = ap.parse_args()
    lmd_base: Any = LMD.ResponseParserManager.get('default')
    print(f'{"dialect":<11} {"chunk":>5} {"lmdeploy µs":>12} {"swapped µs":>11} {"ratio":>7}')
    for tool, text in CASES.items():
        lmd_cls: Any = type(f'LMD[{tool}]', (lmd_base,), {})
        lmd_cls.reasoning_parser_cls = lmd_cls.tool_parser_cls = None
        lmd_cls.set_parsers('default', tool)
        ours_cls: Any = type(f'Swapped[{tool}]', (compat.LmdeployBaseResponseParser,), {})
        ours_cls.set_parsers('default', tool)
        req = Request(model='m', messages=[{'role': 'user', 'content': 'hi'}], tools=TOOLS)
        reference = run(lambda: lmd_cls(req), [text])  # LMDeploy on the whole text
        for n in SIZES:
            chunks = chunks_of(text, n)
            ours = run(lambda: ours_cls(req), chunks)
            if ours != reference:
                print(f'{tool} chunk={n}: swapped reconstruction differs\n  lmdeploy {reference!r}\n  swapped  {ours!r}')
                return 1
            # LMDeploy supports token-aligned chunks only: character chunks may split its tags.
            note = '' if run(lambda: lmd_cls(req), chunks) == reference else '  (LMDeploy output wrong here)'
            t_lmd = per_chunk_us(lambda: lmd_cls(req), chunks, args.repeat)
            t_ours = per_chunk_us(lambda: ours_cls(req), chunks, args.repeat)
            print(f'{tool:<11} {n:>5} {t_lmd:>12.2f} {t_ours:>11.2f} {t_lmd / t_ours:>6.1f}x{note}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
