"""Command line: ``lmparse demo`` and ``lmparse parse`` (replay a raw model output)."""
from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any, TextIO

DEMO_TEXT = 'qwen3_demo.txt'
DEMO_REQUEST = 'qwen3_demo_request.json'


def _data(name: str) -> str:
    return resources.files('lmparse').joinpath('data', name).read_text(encoding='utf-8')


def _chunks(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or ['']


def _describe(message: Any) -> list[str]:
    lines = []
    if message.reasoning_content:
        lines.append(f'reasoning   {message.reasoning_content!r}')
    if message.content is not None and (message.content or not (message.reasoning_content or message.tool_calls)):
        lines.append(f'content     {message.content!r}')
    for call in message.tool_calls or ():
        fn = call.function
        if fn is not None and fn.name is not None:
            lines.append(f'tool[{call.index}]     id={call.id} name={fn.name}')
        if fn is not None and fn.arguments is not None:
            lines.append(f'tool[{call.index}]     arguments {fn.arguments!r}')
    return lines


def replay(text: str, request: Any, *, reasoning_parser: str | None, tool_parser: str | None,
           chunk_size: int, out: TextIO, as_json: bool = False) -> dict[str, Any]:
    """Stream ``text`` through the parsers, print every delta, return the aggregated message."""
    from lmparse import BaseResponseParser

    parser_cls = BaseResponseParser.with_parsers(reasoning_parser, tool_parser)
    parser = parser_cls(request)
    chunks = _chunks(text, chunk_size)
    content: list[str] = []
    reasoning: list[str] = []
    deltas: list[Any] = []
    for i, chunk in enumerate(chunks):
        for message, _tool_emitted in parser.stream_chunk(chunk, [], final=i == len(chunks) - 1):
            if as_json:
                out.write(json.dumps(message.model_dump(exclude_none=True), ensure_ascii=False) + '\n')
            else:
                for line in _describe(message):
                    out.write(f'delta  {line}\n')
            content.append(message.content or '')
            reasoning.append(message.reasoning_content or '')
            deltas.extend(message.tool_calls or ())
    calls = parser.tool_parser.build_tool_calls(deltas) if parser.tool_parser is not None else []
    return {
        'role': 'assistant',
        'content': ''.join(content) or None,
        'reasoning_content': ''.join(reasoning) or None,
        'tool_calls': [c.model_dump() for c in calls] or None,
    }


def _cmd_demo(args: argparse.Namespace) -> int:
    request = json.loads(_data(DEMO_REQUEST))
    text = _data(DEMO_TEXT)
    out = sys.stdout
    out.write(f'# streaming a bundled Qwen3 output in {args.chunk_size}-character chunks '
              '(reasoning parser "default", tool parser "qwen3")\n')
    message = replay(text, request, reasoning_parser='default', tool_parser='qwen3',
                     chunk_size=args.chunk_size, out=out, as_json=args.json)
    out.write('# aggregated message\n')
    out.write(json.dumps(message, ensure_ascii=False, indent=2) + '\n')
    return 0


def _cmd_parse(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.file == '-' else open(args.file, encoding='utf-8').read()
    if args.request:
        with open(args.request, encoding='utf-8') as f:
            request = json.load(f)
    else:
        request = {'model': '', 'messages': []}
    if args.tools:
        with open(args.tools, encoding='utf-8') as f:
            request['tools'] = json.load(f)
    message = replay(text, request, reasoning_parser=args.reasoning_parser, tool_parser=args.tool_parser,
                     chunk_size=args.chunk_size, out=sys.stdout if args.deltas else io.StringIO(), as_json=True)
    sys.stdout.write(json.dumps(message, ensure_ascii=False, indent=2) + '\n')
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog='lmparse', description=__doc__)
    sub = ap.add_subparsers(dest='command', required=True)
    demo = sub.add_parser('demo', help='stream a bundled Qwen3 output and print every delta')
    demo.add_argument('--chunk-size', type=int, default=3, help='characters per simulated engine chunk')
    demo.add_argument('--json', action='store_true', help='print deltas as OpenAI JSON')
    demo.set_defaults(func=_cmd_demo)
    parse = sub.add_parser('parse', help='replay a raw model output file through a parser configuration')
    parse.add_argument('file', help="raw output text file, or '-' for stdin")
    parse.add_argument('--reasoning-parser', default=None)
    parse.add_argument('--tool-parser', default=None)
    parse.add_argument('--request', help='JSON request (OpenAI shape) the output answers')
    parse.add_argument('--tools', help='JSON list of tools (overrides the request\'s tools)')
    parse.add_argument('--chunk-size', type=int, default=16)
    parse.add_argument('--deltas', action='store_true', help='also print each streamed delta as JSON')
    parse.set_defaults(func=_cmd_parse)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, 'chunk_size', 1) < 1:
        print('lmparse: --chunk-size must be at least 1', file=sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except (OSError, ValueError, KeyError) as err:
        print(f'lmparse: {err}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
