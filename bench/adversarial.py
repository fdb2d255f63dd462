"""Adversarial scaling table: time per character must not grow with the input.

Each row is a prefix that puts the parser in a mode (plain, reasoning, tool),
followed by one degenerate run that never terminates: an unterminated string
value, an unterminated name / key / header, deep nesting, backslash runs,
``<`` runs, a marker prefix repeated. Every row is streamed at 1-, 16- and
256-character chunks for bodies of 10 KB, 100 KB and 1 MB (final on the last
chunk); the table gives ns per character and the 1 MB / 10 KB ratio, which
must be <= 1.3 (``FLAT``). Before timing, the streamed result at each chunk
size is checked against the one-chunk result (10 KB).

Also: bytes the parser object still retains after ``final=True`` (tracemalloc,
the returned deltas dropped) for a 100 KB body: the finished response should
not keep what it no longer needs.

    python -m bench.adversarial                      # the full table (markdown), a few minutes
    python -m bench.adversarial --sizes 10000,100000 --chunks 16 --rows json
    python -m bench.adversarial --memory             # the retained-memory table only
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

SIZES = (10_000, 100_000, 1_000_000)
CHUNKS = (1, 16, 256)
FLAT = 1.3
# A (row, chunk) whose 100 KB run already scales worse than this skips 1 MB
# when the estimate exceeds SKIP_SECONDS (reported as an estimate, marked ~).
SKIP_SECONDS = 30.0

D = '｜DSML｜'
Q_ARGS = '<tool_call>\n{"name": "search", "arguments": {"query": "'
X_FN = '<tool_call>\n<function=search>\n'
DSML_INV = f'\n\n<{D}function_calls>\n<{D}invoke name="search">\n'
KIMI = '<|tool_calls_section_begin|><|tool_call_begin|>'
HARMONY_TOOL = '<|channel|>commentary to=functions.search <|constrain|>json<|message|>'
GEMMA = '<|tool_call>call:search{'


@dataclass(frozen=True)
class Row:
    label: str
    mode: str          # plain / reasoning / tool
    reasoning: str | None
    tool: str | None
    prefix: str
    unit: str          # repeated to fill the body
    response: str = 'default'  # or 'gpt-oss' (text mode)
    held_name: bool = False    # a name / key / header held until it ends (quadratic until issue 20/2 is fixed)

    def text(self, n: int) -> str:
        return self.prefix + self.unit * max(1, n // len(self.unit))


def rows() -> list[Row]:
    R = Row
    out = [
        # plain mode (qwen3 tool parser, no reasoning)
        R('plain text', 'plain', None, 'qwen3', '', 'lorem ipsum '),
        R('plain `<` run', 'plain', None, 'qwen3', '', '<'),
        R('plain `<tool_ca` repeated', 'plain', None, 'qwen3', '', '<tool_ca'),
        R('plain backslashes', 'plain', None, 'qwen3', '', '\\'),
        R('plain `[[[[`', 'plain', None, 'qwen3', '', '['),
        R('plain `<think` repeated', 'plain', 'default', 'qwen3', '</think>', '<think'),
        R('plain DSML lead prefix', 'plain', None, 'deepseek-v32', '', f'\n\n<{D}function_cal'),
        R('plain Kimi prefix', 'plain', None, 'kimi_k2', '', '<|tool_calls_sect'),
        # reasoning mode
        R('reasoning text', 'reasoning', 'default', 'qwen3', '', 'lorem ipsum '),
        R('reasoning `<` run', 'reasoning', 'default', 'qwen3', '', '<'),
        R('reasoning `</thi` repeated', 'reasoning', 'default', 'qwen3', '', '</thi'),
        R('reasoning `<tool_ca` repeated', 'reasoning', 'default', 'qwen3', '', '<tool_ca'),
        # tool mode: JSON envelope (qwen3)
        R('JSON string value', 'tool', None, 'qwen3', Q_ARGS, 'a'),
        R('JSON string value, reasoning', 'tool', 'default', 'qwen3', Q_ARGS, 'a'),
        R('JSON string `</tool_ca` repeated', 'tool', None, 'qwen3', Q_ARGS, '</tool_ca'),
        R('JSON backslash run', 'tool', None, 'qwen3', Q_ARGS, '\\\\'),
        R('JSON `\\u00e9` escapes', 'tool', None, 'qwen3', Q_ARGS, '\\u00e9'),
        R('JSON nesting `[[[[`', 'tool', None, 'qwen3', '<tool_call>\n{"name": "search", "arguments": {"q": ', '['),
        R('JSON nesting `{"a":`', 'tool', None, 'qwen3', '<tool_call>\n{"name": "search", "arguments": ', '{"a":'),
        R('JSON function name', 'tool', None, 'qwen3', '<tool_call>\n{"name": "', 'a', held_name=True),
        R('JSON envelope key', 'tool', None, 'qwen3', '<tool_call>\n{"', 'a', held_name=True),
        R('JSON argument key', 'tool', None, 'qwen3', '<tool_call>\n{"name": "search", "arguments": {"', 'a'),
        R('JSON string, llama3', 'tool', None, 'llama3', '<|python_tag|>{"name": "search", "parameters": {"query": "', 'a'),
        # Llama: bare JSON envelopes, pythonic call lists
        R('bare JSON string, llama3_json', 'tool', None, 'llama3_json', '{"name": "search", "parameters": {"query": "', 'a'),
        R('plain `{"name": "x…`, llama3_json', 'plain', None, 'llama3_json', '{"name": "', 'x'),
        R('pythonic string value', 'tool', None, 'pythonic', '[search(query="', 'a'),
        R('pythonic `\\n` escapes', 'tool', None, 'pythonic', '[search(query="', '\\n'),
        R('pythonic nesting `[[[[`', 'tool', None, 'pythonic', '[search(query=', '['),
        R('pythonic number run', 'tool', None, 'pythonic', '[search(query=', '1'),
        R('pythonic keyword', 'tool', None, 'pythonic', '[search(', 'a', held_name=True),
        R('pythonic call name', 'tool', None, 'pythonic', '[search(), ', 'a', held_name=True),
        R('plain `[[[[`, pythonic', 'plain', None, 'pythonic', '', '['),
        # XML (qwen3coder, glm47)
        R('XML parameter value', 'tool', None, 'qwen3coder', X_FN + '<parameter=query>\n', 'a'),
        R('XML value `<` run', 'tool', None, 'qwen3coder', X_FN + '<parameter=query>\n', '<'),
        R('XML value `</para` repeated', 'tool', None, 'qwen3coder', X_FN + '<parameter=query>\n', '</para'),
        R('XML `<function=` name', 'tool', None, 'qwen3coder', '<tool_call>\n<function=', 'a', held_name=True),
        R('XML `<parameter=` name', 'tool', None, 'qwen3coder', X_FN + '<parameter=', 'a', held_name=True),
        R('GLM function name', 'tool', None, 'glm47', '<tool_call>', 'a', held_name=True),
        R('GLM arg key', 'tool', None, 'glm47', '<tool_call>search\n<arg_key>', 'a', held_name=True),
        R('GLM arg value', 'tool', None, 'glm47', '<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>', 'a'),
        # DSML (deepseek-v32)
        R('DSML invoke name', 'tool', None, 'deepseek-v32', f'\n\n<{D}function_calls>\n<{D}invoke name="', 'a',
          held_name=True),
        R('DSML parameter name', 'tool', None, 'deepseek-v32', DSML_INV + f'<{D}parameter name="', 'a', held_name=True),
        R('DSML string value', 'tool', None, 'deepseek-v32', DSML_INV + f'<{D}parameter name="query" string="true">', 'a'),
        R('DSML JSON value `[[[[`', 'tool', None, 'deepseek-v32',
          DSML_INV + f'<{D}parameter name="query" string="false">', '['),
        # sections (Kimi K2)
        R('Kimi call header', 'tool', None, 'kimi_k2', KIMI + 'functions.', 'a', held_name=True),
        R('Kimi JSON string', 'tool', None, 'kimi_k2',
          KIMI + 'functions.search:0<|tool_call_argument_begin|>{"query": "', 'a'),
        # brace calls (Gemma 4)
        R('Gemma `<|tool_ca` repeated', 'plain', 'gemma4', 'gemma4', '', '<|tool_ca'),
        R('Gemma `<|channel>though` repeated', 'plain', 'gemma4', 'gemma4', '', '<|channel>though'),
        R('Gemma call header', 'tool', None, 'gemma4', '<|tool_call>call:', 'a', held_name=True),
        R('Gemma bare key', 'tool', None, 'gemma4', GEMMA, 'a', held_name=True),
        R('Gemma string value', 'tool', None, 'gemma4', GEMMA + 'query:<|"|>', 'a'),
        R('Gemma string `<|"` repeated', 'tool', None, 'gemma4', GEMMA + 'query:<|"|>', '<|"'),
        R('Gemma bare value', 'tool', None, 'gemma4', GEMMA + 'q:', '1', held_name=True),
        R('Gemma nesting `[`', 'tool', None, 'gemma4', GEMMA + 'q:', '['),
        # Harmony (gpt-oss, text mode)
        R('Harmony final text', 'plain', None, None, '<|channel|>final<|message|>', 'lorem ipsum ', response='gpt-oss'),
        R('Harmony `<|` run in body', 'reasoning', None, None, '<|channel|>analysis<|message|>', '<|',
          response='gpt-oss'),
        R('Harmony JSON string', 'tool', None, None, HARMONY_TOOL + '{"query": "', 'a', response='gpt-oss'),
        R('Harmony header', 'tool', None, None, '<|channel|>commentary to=functions.', 'a', response='gpt-oss'),
    ]
    return out


_CLASSES: dict[tuple[Any, ...], Any] = {}


def parser_class(row: Row) -> Any:
    key = (row.response, row.reasoning, row.tool)
    cls = _CLASSES.get(key)
    if cls is None:
        import lmparse
        base = lmparse.ResponseParserManager.get(row.response)
        if row.response == 'default':
            cls = base.with_parsers(row.reasoning, row.tool)
        else:
            cls = base.with_parsers(input_mode='text')
        _CLASSES[key] = cls
    return cls


def request() -> dict[str, Any]:
    return {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}],
            'tools': [{'type': 'function', 'function': {'name': 'search', 'parameters': {
                'type': 'object', 'properties': {'query': {'type': 'string'}, 'q': {'type': 'string'}}}}}]}


def chunk(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or ['']


def run_stream(cls: Any, req: Any, chunks: Sequence[str]) -> Any:
    parser = cls(req)
    step = parser.stream_chunk
    last = len(chunks) - 1
    empty: list[int] = []
    for i, c in enumerate(chunks):
        step(c, empty, final=i == last)
    return parser


def result(cls: Any, req: Any, chunks: Sequence[str]) -> tuple[Any, ...]:
    parser = cls(req)
    out = []
    last = len(chunks) - 1
    for i, c in enumerate(chunks):
        out.extend(parser.stream_chunk(c, [], final=i == last))
    messages = [m for m, _ in out]
    deltas = [d for m in messages for d in (m.tool_calls or [])]
    calls = [(c.function.name, c.function.arguments) for c in parser.tool_parser.build_tool_calls(deltas)] \
        if deltas else []
    return (''.join(m.content or '' for m in messages), ''.join(m.reasoning_content or '' for m in messages), calls)


def verify(row: Row, n: int = 10_000, sizes: Sequence[int] = CHUNKS) -> None:
    """The streamed result at each chunk size equals the one-chunk result."""
    cls, req = parser_class(row), request()
    text = row.text(n)
    one = result(cls, req, [text])
    for size in sizes:
        got = result(cls, req, chunk(text, size))
        if got != one:
            raise AssertionError(f'{row.label}: {size}-char chunks differ from one chunk')


def _sampler(row: Row, n: int, size: int, budget: float, samples: int) -> Callable[[], float]:
    """A function timing one sample: the stream repeated until it has taken about ``budget / samples``
    CPU seconds (process time: other processes do not count), returning seconds per stream."""
    cls, req = parser_class(row), request()
    chunks = chunk(row.text(n), size)
    run_stream(cls, req, chunks[:8])  # warm the class caches
    gc.collect()
    t0 = time.process_time()
    run_stream(cls, req, chunks)
    reps = max(1, int(budget / samples / max(time.process_time() - t0, 1e-7)))

    def sample() -> float:
        t0 = time.process_time()
        for _ in range(reps):
            run_stream(cls, req, chunks)
        return (time.process_time() - t0) / reps
    return sample


def time_sizes(row: Row, sizes: Sequence[int], size: int, budget: float = 0.3, samples: int = 5) -> dict[int, float]:
    """Best seconds per stream (construction included) for each input size, the sizes' samples
    interleaved so that every size sees the same machine (a shared machine changes speed for
    seconds at a time) and each gets the same number of equally long samples."""
    samplers = {n: _sampler(row, n, size, budget, samples) for n in sizes}
    best = {n: float('inf') for n in sizes}
    for _ in range(samples):
        for n, sample in samplers.items():
            best[n] = min(best[n], sample())
    return best


def time_row(row: Row, n: int, size: int, budget: float = 0.3, samples: int = 5) -> float:
    """Best seconds per stream of one input size (see ``time_sizes``)."""
    return time_sizes(row, (n,), size, budget, samples)[n]


@dataclass
class Cell:
    ns_per_char: dict[int, float]  # size -> ns/char
    estimated: set[int]

    def ratio(self, big: int, small: int) -> float:
        return self.ns_per_char[big] / self.ns_per_char[small]


def measure(row: Row, size: int, sizes: Sequence[int] = SIZES) -> Cell:
    cell = Cell({}, set())
    small = [n for n in sizes if n < 1_000_000]
    for n, t in time_sizes(row, small, size).items():
        cell.ns_per_char[n] = t / len(row.text(n)) * 1e9
    big = [n for n in sizes if n >= 1_000_000]
    if big and len(cell.ns_per_char) >= 2:
        prev_n = max(cell.ns_per_char)
        if cell.ns_per_char[prev_n] / cell.ns_per_char[min(cell.ns_per_char)] > 2.0:
            for n in big:  # quadratic: per-char cost grows linearly; skip what would take too long
                est_per = cell.ns_per_char[prev_n] * (n / prev_n)
                if est_per * len(row.text(n)) * 1e-9 > SKIP_SECONDS:
                    cell.ns_per_char[n] = est_per
                    cell.estimated.add(n)
            big = [n for n in big if n not in cell.estimated]
    if big:  # measured interleaved with the smallest size, so the ratio compares like with like
        times = time_sizes(row, [sizes[0], *big], size)
        cell.ns_per_char[sizes[0]] = min(cell.ns_per_char[sizes[0]], times[sizes[0]] / len(row.text(sizes[0])) * 1e9)
        for n in big:
            cell.ns_per_char[n] = times[n] / len(row.text(n)) * 1e9
    return cell


def table(selected: Sequence[Row], sizes: Sequence[int] = SIZES, chunks: Sequence[int] = CHUNKS,
          out: Callable[[str], Any] = print) -> list[tuple[Row, int, Cell]]:
    head = '| row | mode | dialect | chunk | ' + ' | '.join(f'{_kb(n)} ns/char' for n in sizes) \
        + f' | {_kb(sizes[-1])}/{_kb(sizes[0])} |'
    out(head)
    out('|' + '---|' * (head.count('|') - 1))
    results = []
    for row in selected:
        verify(row, min(sizes[0], 10_000), chunks)
        for size in chunks:
            cell = measure(row, size, sizes)
            ratio = cell.ratio(sizes[-1], sizes[0])
            flag = '' if ratio <= FLAT else ' **FAIL**'
            cells = ' | '.join(('~' if n in cell.estimated else '') + f'{cell.ns_per_char[n]:.0f}' for n in sizes)
            out(f'| {row.label} | {row.mode} | {row.tool or row.response} | {size} | {cells} | {ratio:.2f}{flag} |')
            results.append((row, size, cell))
    return results


def _kb(n: int) -> str:
    return f'{n // 1_000_000} MB' if n >= 1_000_000 else f'{n // 1000} KB'


# ---- retained memory after final=True ------------------------------------------------------------


def retained_bytes(row: Row, n: int = 100_000, size: int = 256) -> int:
    """Bytes still allocated, and reachable from the parser, after the final chunk (deltas dropped)."""
    cls, req = parser_class(row), request()
    chunks = chunk(row.text(n), size)
    run_stream(cls, req, chunks[:8] + [''])  # warm class-level caches outside the measurement
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        parser = cls(req)
        last = len(chunks) - 1
        for i, c in enumerate(chunks):
            parser.stream_chunk(c, [], final=i == last)
        gc.collect()
        with_parser = tracemalloc.get_traced_memory()[0]
        del parser
        gc.collect()
        without = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del base
    return with_parser - without


def memory_table(selected: Sequence[Row], n: int = 100_000, out: Callable[[str], Any] = print) -> dict[str, int]:
    out(f'| row | dialect | bytes retained after final ({_kb(n)} body, 256-char chunks) |')
    out('|---|---|---|')
    found = {}
    for row in selected:
        b = retained_bytes(row, n)
        found[row.label] = b
        out(f'| {row.label} | {row.tool or row.response} | {b:,}{" **holds the body**" if b > n // 2 else ""} |')
    return found


# ---- instruction counts (valgrind): a verdict a loaded machine cannot change --------------------

def _instructions(row: Row, n: int, size: int) -> int:
    """Instructions callgrind counts for one process that builds the parser and streams ``row`` at ``n``."""
    import os
    import re
    import subprocess
    code = ('import sys; sys.path.insert(0, sys.argv[1]); from bench import adversarial as a; '
            'r = next(x for x in a.rows() if x.label == sys.argv[2]); '
            'a.run_stream(a.parser_class(r), a.request(), a.chunk(r.text(int(sys.argv[3])), int(sys.argv[4])))')
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null', sys.executable, '-c',
                           code, root, row.label, str(n), str(size)],
                          capture_output=True, text=True, env={**os.environ, 'PYTHONHASHSEED': '0'}, check=True)
    found = re.search(r'Collected : (\d+)', proc.stderr)
    if found is None:
        raise RuntimeError(f'no callgrind total for {row.label}: {proc.stderr[-500:]}')
    return int(found.group(1))


def instruction_table(selected: Sequence[Row], sizes: Sequence[int] = (10_000, 50_000, 100_000),
                      chunks: Sequence[int] = CHUNKS, out: Callable[[str], Any] = print) -> list[tuple[str, int, float]]:
    """Marginal instructions per character between consecutive sizes (process start-up cancels out);
    linear work keeps them equal, so the last over the first must stay within ``FLAT``."""
    head = '| row | mode | dialect | chunk | ' + ' | '.join(
        f'{_kb(a)}→{_kb(b)} instr/char' for a, b in zip(sizes, sizes[1:])) + ' | last/first |'
    out(head)
    out('|' + '---|' * (head.count('|') - 1))
    results = []
    for row in selected:
        for size in chunks:
            counts = [_instructions(row, n, size) for n in sizes]
            marginal = [(cb - ca) / (b - a) for a, b, ca, cb in zip(sizes, sizes[1:], counts, counts[1:])]
            ratio = marginal[-1] / marginal[0]
            flag = '' if ratio <= FLAT else ' **FAIL**'
            cells = ' | '.join(f'{m:,.0f}' for m in marginal)
            out(f'| {row.label} | {row.mode} | {row.tool or row.response} | {size} | {cells} | {ratio:.2f}{flag} |')
            results.append((row.label, size, ratio))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--sizes', default=','.join(map(str, SIZES)))
    ap.add_argument('--chunks', default=','.join(map(str, CHUNKS)))
    ap.add_argument('--rows', default='', help='only rows whose label contains this (case-insensitive)')
    ap.add_argument('--memory', action='store_true', help='only the retained-memory table')
    ap.add_argument('--instructions', action='store_true',
                    help='count instructions under valgrind instead of timing (default sizes 10K,50K,100K)')
    args = ap.parse_args(argv)
    selected = [r for r in rows() if args.rows.lower() in r.label.lower()]
    if args.instructions:
        sizes = (10_000, 50_000, 100_000) if args.sizes == ','.join(map(str, SIZES)) else \
            tuple(int(s) for s in args.sizes.split(','))
        results = instruction_table(selected, sizes, [int(c) for c in args.chunks.split(',')])
        bad = [(label, s) for label, s, ratio in results if ratio > FLAT]
        print(f'\n{len(bad)} of {len(results)} (row, chunk) pairs above {FLAT}x: ' +
              '; '.join(f'{label} @{s}' for label, s in bad))
        return 1 if bad else 0
    if not args.memory:
        results = table(selected, [int(s) for s in args.sizes.split(',')], [int(c) for c in args.chunks.split(',')])
        bad = [(r.label, s) for r, s, c in results
               if c.ratio(max(c.ns_per_char), min(c.ns_per_char)) > FLAT]
        print(f'\n{len(bad)} of {len(results)} (row, chunk) pairs above {FLAT}x: ' +
              '; '.join(f'{label} @{s}' for label, s in bad))
        print()
    memory_table(selected)
    return 0


if __name__ == '__main__':
    sys.exit(main())
