"""Memory figures: retained buffer per mode while streaming, and a parser instance's own size."""
from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass

from bench.fixtures import BenchFixture, char_chunks
from bench.runner import lmparse_class, lmparse_request


@dataclass
class BufferFigures:
    fixture: str
    max_pending: dict[str, int]      # mode -> longest retained buffer after a chunk
    # mode -> longest retained buffer minus leading newlines (the newlines between
    # two tool blocks are held until the next open tag is confirmed)
    max_held_tag: dict[str, int]
    longest_marker: int              # longest tag the router may be holding a prefix of


def markers(parser) -> list[str]:
    tags = []
    rp = parser.reasoning_parser
    if rp is not None:
        tags += [rp.get_reasoning_open_tag() or '', rp.get_reasoning_close_tag() or '']
    tp = parser.tool_parser
    if tp is not None:
        tags += [tp.get_tool_open_tag() or '', tp.get_tool_close_tag() or '']
    return [t for t in tags if t]


def buffer_figures(f: BenchFixture, chunk: int = 1) -> BufferFigures | None:
    """Stream ``f`` in ``chunk``-character pieces; record the retained buffer per mode."""
    cls, req = lmparse_class(f), lmparse_request(f)
    parser = cls(req)
    if not hasattr(parser, '_pending') or not hasattr(parser, 'mode'):
        return None
    chunks = char_chunks(f.text, chunk)
    last = len(chunks) - 1
    worst: dict[str, int] = {}
    held: dict[str, int] = {}
    for i, c in enumerate(chunks):
        parser.stream_chunk(c, [], final=i == last)
        mode = parser.mode
        pending = parser._pending
        worst[mode] = max(worst.get(mode, 0), len(pending))
        held[mode] = max(held.get(mode, 0), len(pending.lstrip('\n')))
    return BufferFigures(f.id, worst, held, max(map(len, markers(parser)), default=0))


def instance_bytes(f: BenchFixture) -> tuple[int, int]:
    """(bytes retained by a new parser, bytes still retained after streaming the fixture).

    The request is built beforehand; what a parser retains is its own state
    plus the adjusted request it exposes as ``parser.request``.
    """
    cls, req = lmparse_class(f), lmparse_request(f)
    cls(req)  # warm caches (hook table, vocab ids)
    chunks = char_chunks(f.text, 16)
    last = len(chunks) - 1
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        parser = cls(req)
        built = tracemalloc.take_snapshot()
        for i, c in enumerate(chunks):
            parser.stream_chunk(c, [], final=i == last)
        gc.collect()
        done = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    size0 = sum(s.size_diff for s in built.compare_to(before, 'filename'))
    size1 = sum(s.size_diff for s in done.compare_to(before, 'filename'))
    del parser
    return size0, size1


def memory_report(fixtures: Sequence[BenchFixture]) -> list[str]:
    lines = []
    for f in fixtures:
        figs = buffer_figures(f)
        if figs is None:
            continue
        b0, b1 = instance_bytes(f)
        modes = ', '.join(f'{m} {n}' for m, n in sorted(figs.max_pending.items()))
        lines.append(f'{f.id:<24} max retained chars at 1-char chunks: {modes} (longest marker '
                     f'{figs.longest_marker}); parser+adjusted request {b0} B new, {b1} B after the stream')
    return lines
