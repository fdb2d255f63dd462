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
    longest_marker: int              # longest tag (or channel header) the router may be holding a prefix of


# A section dialect's markers (lmparse.tools.sections): its tool mode holds a prefix of one.
_SECTION_MARKERS = ('section_begin', 'section_end', 'call_begin', 'argument_begin', 'call_end')


def markers(parser) -> list[str]:
    tags = []
    rp = parser.reasoning_parser
    if rp is not None:
        tags += [rp.get_reasoning_open_tag() or '', rp.get_reasoning_close_tag() or '']
    tp = parser.tool_parser
    if tp is not None:
        tags += [tp.get_tool_open_tag() or '', tp.get_tool_close_tag() or '']
        tags += [m for m in (getattr(tp, name, None) for name in _SECTION_MARKERS) if isinstance(m, str)]
    return [t for t in tags if t]


def header_hold(parser) -> int:
    """How much undecided header the router may hold whole.

    A block header (``header_markers``, e.g. Inkling's) up to its end marker,
    or a recipient-channel header up to its message marker.
    """
    from lmparse.recipient_channels import MAX_HEADER
    from lmparse.response import MAX_BLOCK_HEADER
    hold = 0
    for half in (parser.tool_parser, parser.reasoning_parser):
        grammar = getattr(half, 'channel_grammar', None)
        if grammar is not None:
            hold = max(hold, MAX_HEADER + len(grammar.message) + 1)
        ends = getattr(half, 'header_ends', None) if getattr(half, 'header_markers', None) else None
        if ends:
            hold = max(hold, MAX_BLOCK_HEADER + max(map(len, ends)) + 1)
    return hold


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
    return BufferFigures(f.id, worst, held, max(max(map(len, markers(parser)), default=0), header_hold(parser)))


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
