"""Opt-in (LMPARSE_SGLANG=1): the reasoning and tool detectors of one SGLang request share one lmparse parser.

SGLang's serving layer builds a request's ``ReasoningParser`` (with
``tool_call_parser_active``), feeds it the first chunk, then builds its
``FunctionCallParser`` and feeds it the reasoning detector's normal text. When
both detectors are lmparse's they link: one lmparse response parser with both
dialects, fed by the reasoning detector. Driven here exactly in that order
(:func:`serve`), the linked pair must give what the unlinked split gives (a
reasoning-only parser whose normal text feeds a tool-only parser) at any
chunking, including a tool block opened inside unclosed reasoning (replace mode
ends the reasoning there and the tool detector parses the rest alone); an
lmparse detector paired with one of SGLang's own works alone.
"""
from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from typing import Any

import pytest

from tests.streaming import chunkings

_ENABLED = os.environ.get('LMPARSE_SGLANG') == '1'
pytestmark = pytest.mark.skipif(not _ENABLED, reason='opt-in: set LMPARSE_SGLANG=1 (SGLang lane)')
if _ENABLED:
    try:
        import sglang.srt.parser.reasoning_parser  # noqa: F401
    except ImportError:
        pytestmark = pytest.mark.skip(reason='sglang==0.5.23 is not installed (tools/install_peers.sh)')

TOOLS = [{'type': 'function', 'function': {'name': 'get_weather', 'parameters': {
    'type': 'object', 'properties': {'city': {'type': 'string'}, 'days': {'type': 'integer'}}}}}]
JSON_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 5}}\n</tool_call>'
XML_CALL = ('<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n'
            '<parameter=days>\n5\n</parameter>\n</function>\n</tool_call>')
CALL = ('get_weather', {'city': 'Paris', 'days': 5})

# (SGLang reasoning name, SGLang tool name, output, reasoning, content, calls)
CASES: list[tuple[str, str, str, str, str, list[Any]]] = [
    ('qwen3', 'qwen25', '<think>\nLet me look.\n</think>\n\nChecking.\n\n' + JSON_CALL,
     'Let me look.', 'Checking.', [CALL]),
    ('qwen3', 'qwen3_coder', '<think>\nLet me look.\n</think>\n\nChecking.\n\n' + XML_CALL,
     'Let me look.', 'Checking.', [CALL]),
    ('qwen3', 'qwen25', 'No thinking, just text.', '', 'No thinking, just text.', []),
    ('qwen3', 'qwen25', '<think>a <b> c</think>Done.', 'a <b> c', 'Done.', []),
    # A tool block opened inside unclosed reasoning ends it (replace mode); the tool detector parses it alone.
    ('qwen3', 'qwen25', '<think>\nneed data\n' + JSON_CALL + '\nafter', 'need data', 'after', [CALL]),
    ('qwen3', 'qwen3_coder', '<think>\nneed data\n' + XML_CALL, 'need data', '', [CALL]),
    ('qwen3', 'qwen25', '<think>x</think>' + JSON_CALL + JSON_CALL, 'x', '', [CALL, CALL]),
]
TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>', '<function=', '<parameter=')


def _registries() -> tuple[Any, Any]:
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    return ReasoningParser, FunctionCallParser


def _classes(reasoning: str, tool: str) -> tuple[type, type, type, type]:
    """(lmparse reasoning, lmparse tool, SGLang reasoning, SGLang tool) detector classes for the names."""
    from lmparse.integrations import sglang as plugin
    rp, fcp = _registries()
    registries = (rp.DetectorMap, fcp.ToolCallParserEnum)
    saved = [dict(r) for r in registries]
    try:
        plugin.register(replace=True)
        ours = rp.DetectorMap[reasoning], fcp.ToolCallParserEnum[tool]
    finally:
        for registry, before in zip(registries, saved):  # SGLang's own names back for the other lanes
            registry.clear()
            registry.update(before)
    return ours[0], ours[1], saved[0][reasoning], saved[1][tool]


def _tools() -> list[Any]:
    from sglang.srt.entrypoints.openai.protocol import Tool
    return [Tool.model_validate(t) for t in TOOLS]


class Served:
    """One request's detectors driven as SGLang's ``_generate_stream_content`` drives them."""

    def __init__(self, rcls: type | None, tcls: type, tool_active: bool = True) -> None:
        self.rcls, self.tcls, self.tool_active = rcls, tcls, tool_active
        self.r: Any = None
        self.t: Any = None
        self.reasoning: list[str] = []
        self.content: list[str] = []
        self.calls: dict[int, list[Any]] = {}
        self.tool_in: list[str] = []  # what the tool detector received

    def _tool(self, text: str, final: bool) -> None:
        if self.t is None:
            self.t = self.tcls()
        self.tool_in.append(text)
        outs = [self.t.parse_streaming_increment(text, _tools())]
        if final:
            outs.append(self.t.finish(_tools()))
        for out in outs:
            self.content.append(out.normal_text)
            for c in out.calls:
                slot = self.calls.setdefault(c.tool_index, [None, ''])
                slot[0] = c.name or slot[0]
                slot[1] += c.parameters

    def chunk(self, text: str, final: bool = False) -> None:
        if self.rcls is not None:
            if self.r is None:
                kwargs = {'tool_call_parser_active': True} if 'tool_call_parser_active' in \
                    __import__('inspect').signature(self.rcls).parameters and self.tool_active else {}
                self.r = self.rcls(**kwargs)
            out = self.r.parse_streaming_increment(text)
            reasoning, text = out.reasoning_text, out.normal_text
            if final:
                end = self.r.finish()
                reasoning, text = reasoning + end.reasoning_text, text + end.normal_text
            self.reasoning.append(reasoning)
        self._tool(text, final)

    def run(self, chunks: Sequence[str]) -> tuple[str, str, list[Any]]:
        for i, c in enumerate(chunks):
            self.chunk(c, i == len(chunks) - 1)
        calls = [(n, json.loads(a)) for _i, (n, a) in sorted(self.calls.items())]
        return ''.join(self.reasoning).strip(), ''.join(self.content).strip(), calls


def _with_empties(chunks: list[str], rng: random.Random) -> list[str]:
    out: list[str] = []
    for c in chunks:
        while rng.random() < 0.3:
            out.append('')
        out.append(c)
    return out


@pytest.mark.parametrize('case', CASES, ids=lambda c: f'{c[1]}-{c[2][:30]}')
def test_linked_pair_shares_one_parser_and_matches_the_split(case: tuple[str, str, str, str, str, list[Any]]) -> None:
    reasoning, tool, text, want_r, want_c, want_calls = case
    r_ours, t_ours, _r_own, _t_own = _classes(reasoning, tool)
    rng = random.Random(11)
    for label, chunks in chunkings(text, TAGS, seed=5, n_random=6):
        if label.startswith('random'):
            chunks = _with_empties(chunks, rng)
        linked = Served(r_ours, t_ours)
        got = linked.run(chunks)
        assert got == (want_r, want_c, want_calls), (label, chunks)
        split = Served(r_ours, t_ours, tool_active=False)  # no offer: a reasoning-only parser + a tool-only parser
        assert split.run(chunks) == got, (label, chunks)
        assert split.t._link is None and split.t._parser is not None
        if len(chunks) > 1 and linked.t._link is not None:
            # Linked to the end: the tool detector never built a parser of its own.
            assert linked.t._link is linked.r and linked.r._tool is linked.t
            assert linked.t._parser is None


def test_linked_at_the_benchmark_chunking() -> None:
    """A plain request with reasoning, content and a call, several chunks: linked from the first to the last."""
    r_ours, t_ours, _r, _t = _classes('qwen3', 'qwen25')
    text = CASES[0][2]
    s = Served(r_ours, t_ours)
    got = s.run([text[i:i + 6] for i in range(0, len(text), 6)])
    assert got == CASES[0][3:6][0:1] + CASES[0][3:6][1:2] + (CASES[0][5],)
    assert s.t._link is s.r and s.t._parser is None
    assert 'qwen25' in type(s.r._parser).__name__  # the reasoning detector's parser carries the tool dialect


@pytest.mark.parametrize('case', CASES, ids=lambda c: f'{c[1]}-{c[2][:30]}')
def test_sglang_reasoning_with_lmparse_tool(case: tuple[str, str, str, str, str, list[Any]]) -> None:
    """SGLang's own reasoning detector (offers nothing) with lmparse's tool detector: it parses alone."""
    reasoning, tool, text, want_r, want_c, want_calls = case
    _r_ours, t_ours, r_own, _t_own = _classes(reasoning, tool)
    for label, chunks in chunkings(text, TAGS, seed=7, n_random=4):
        s = Served(r_own, t_ours)
        got = s.run(chunks)
        assert s.t._link is None
        want = Served(_r_ours, t_ours, tool_active=False).run(chunks)  # what the split gives with SGLang's cut
        own_r = Served(r_own, t_ours).run(chunks)
        assert got == own_r, (label, chunks)
        if '</think>' in text or '<think>' not in text:  # a closed (or no) block: SGLang's cut is lmparse's
            assert got == want == (want_r, want_c, want_calls), (label, chunks)


@pytest.mark.parametrize('case', CASES[:3], ids=lambda c: f'{c[1]}-{c[2][:30]}')
def test_lmparse_reasoning_with_sglang_tool(case: tuple[str, str, str, str, str, list[Any]]) -> None:
    """lmparse's reasoning detector offers itself, SGLang's own tool detector does not take it: the reasoning
    detector starts alone at its next chunk (its first chunk held until then), and nothing is lost."""
    reasoning, tool, text, want_r, want_c, want_calls = case
    r_ours, _t_ours, _r_own, t_own = _classes(reasoning, tool)
    for size in (1, 4, 16, len(text)):
        chunks = [text[i:i + size] for i in range(0, len(text), size)]
        s = Served(r_ours, t_own)
        for i, c in enumerate(chunks):
            s.chunk(c, i == len(chunks) - 1)
        assert s.r._tool is None and 'qwen25' not in type(s.r._parser).__name__
        assert ''.join(s.reasoning).strip() == want_r
        own = Served(_r_own, t_own)
        for i, c in enumerate(chunks):
            own.chunk(c, i == len(chunks) - 1)
        # SGLang's tool detector receives the same normal text (the first chunk's maybe one chunk later).
        assert ''.join(s.tool_in) == ''.join(own.tool_in)


def test_link_breaks_cleanly_when_fed_other_text() -> None:
    """The tool detector checks it receives exactly the reasoning detector's normal text; otherwise it unlinks and
    parses what it receives (a driver that is not SGLang's serving layer)."""
    r_ours, t_ours, _r, _t = _classes('qwen3', 'qwen25')
    r = r_ours(tool_call_parser_active=True)
    assert r.parse_streaming_increment('<think>a</think>').normal_text == ''  # held until the tool detector
    t = t_ours()
    assert t._link is r
    t.parse_streaming_increment('', _tools())
    out = t.parse_streaming_increment('Hello ' + JSON_CALL, _tools())  # not what r returned
    assert t._link is None and r._tool is None
    end = t.finish(_tools())
    calls = [c for c in out.calls + end.calls]
    assert (out.normal_text + end.normal_text).strip() == 'Hello'
    assert calls and calls[0].name == 'get_weather'


def test_offer_is_per_context() -> None:
    """The offer lives in a context variable: a tool detector built in another context (another asyncio task,
    another request) does not link to this request's reasoning detector."""
    import contextvars
    r_ours, t_ours, _r, _t = _classes('qwen3', 'qwen25')
    r = r_ours(tool_call_parser_active=True)
    other = contextvars.Context().run(t_ours)
    assert other._link is None and r._tool is None
    same = t_ours()
    assert same._link is r and r._tool is same
    again = t_ours()  # the offer is taken once
    assert again._link is None
