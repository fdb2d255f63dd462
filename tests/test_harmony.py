"""GPT-OSS Harmony response parser (``gpt-oss``): text mode and token-id mode.

Transcripts follow the published Harmony format. Every case is checked by
streamed reconstruction, ``parse_complete`` and a literal expected result,
over one chunk, every split inside every special token, 1/4/8/16/256 and
random chunkings (hypothesis), in both input modes.
"""
from __future__ import annotations

import os
import random
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lmparse.harmony as harmony_module
from lmparse import GptOssResponseParser, HarmonyToolParser, ResponseParserManager
from lmparse.harmony import (
    CALL_ID,
    CHANNEL_ID,
    CONSTRAIN_ID,
    END_ID,
    HARMONY_SPECIAL_TOKEN_IDS,
    MESSAGE_ID,
    RETURN_ID,
    START_ID,
    parse_header,
)
from lmparse.harmony_request import split_chunk_text
from tests.streaming import (
    FIXED_SIZES,
    calls_of,
    check_identity_first,
    check_messages,
    chunkings,
    make_request,
    reconstruct,
    stream_flagged,
    tool_deltas,
)

SLOW = bool(os.environ.get('LMPARSE_SLOW'))
TAGS = tuple(HARMONY_SPECIAL_TOKEN_IDS)
_TAG_RE = re.compile('(' + '|'.join(re.escape(t) for t in TAGS) + ')')


# ---- a vocabulary-free stand-in tokenizer ------------------------------------------


class FakeHarmonyTokenizer:
    """Specials get their real o200k_harmony ids; ordinary text is cut into 3-character pieces."""

    def __init__(self) -> None:
        self.piece_of: dict[int, str] = {}
        self.id_of: dict[str, int] = {}

    def _ordinary(self, piece: str) -> int:
        tid = self.id_of.get(piece)
        if tid is None:
            tid = 1000 + len(self.id_of)
            self.id_of[piece] = tid
            self.piece_of[tid] = piece
        return tid

    def tokens(self, text: str) -> list[tuple[str, int, bool]]:
        """(text, id, is_special) per token."""
        out = []
        for part in _TAG_RE.split(text):
            if not part:
                continue
            if part in HARMONY_SPECIAL_TOKEN_IDS:
                out.append((part, HARMONY_SPECIAL_TOKEN_IDS[part], True))
            else:
                for i in range(0, len(part), 3):
                    piece = part[i:i + 3]
                    out.append((piece, self._ordinary(piece), False))
        return out

    def encode(self, text: str) -> list[int]:
        return [tid for _, tid, _ in self.tokens(text)]

    def decode(self, ids: list[int]) -> str:
        specials = {v: k for k, v in HARMONY_SPECIAL_TOKEN_IDS.items()}
        return ''.join(specials.get(t) or self.piece_of[t] for t in ids)


TOKENIZER = FakeHarmonyTokenizer()


def token_groups(text: str, sizes: list[int]) -> list[list[tuple[str, int, bool]]]:
    toks = TOKENIZER.tokens(text)
    groups, i, k = [], 0, 0
    while i < len(toks):
        n = sizes[k % len(sizes)]
        groups.append(toks[i:i + n])
        i += n
        k += 1
    return groups or [[]]


def id_chunks(groups: list[list[tuple[str, int, bool]]]) -> list[tuple[str, list[int]]]:
    """Token-id mode: specials only as ids, the text without them (skip_special_tokens=True)."""
    return [(''.join(t for t, _, s in g if not s), [tid for _, tid, _ in g]) for g in groups]


def text_chunks(groups: list[list[tuple[str, int, bool]]]) -> list[tuple[str, list[int]]]:
    """Text mode with ids: the text carries the special tokens too."""
    return [(''.join(t for t, _, _ in g), [tid for _, tid, _ in g]) for g in groups]


def edge_chunks(text: str, rng: random.Random) -> list[tuple[str, list[int]]]:
    """Token-id mode, every special its own chunk, ordinary runs cut anywhere (even off tokens)."""
    out: list[tuple[str, list[int]]] = []
    for part in _TAG_RE.split(text):
        if not part:
            continue
        if part in HARMONY_SPECIAL_TOKEN_IDS:
            out.append(('', [HARMONY_SPECIAL_TOKEN_IDS[part]]))
            continue
        i = 0
        while i < len(part):
            n = rng.randint(1, 7)
            piece = part[i:i + n]
            out.append((piece, TOKENIZER.encode(piece)))
            i += n
    return out or [('', [])]


# ---- cases --------------------------------------------------------------------------

Calls = list[tuple[str, str]]
WEATHER_ARGS = '{"city": "Paris", "unit": "celsius"}'
LONG_ARGS = ('{"query": "caf\u00e9 \\"cr\u00e8me\\" <b>br\u00fbl\u00e9e</b> | a<b", "limit": 10, '
             '"nested": {"list": [1, 2, {"deep": "value with } and ] and \u4e2d\u6587"}], "empty": {}}}')


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    reasoning: str | None
    calls: Calls
    request: dict[str, Any] = field(default_factory=dict)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning, self.calls


CASES = [
    Case('reasoning-only',
         '<|channel|>analysis<|message|>The user asks about Paris. I should answer briefly.<|end|>',
         None, 'The user asks about Paris. I should answer briefly.', []),
    Case('reasoning-final',
         '<|channel|>analysis<|message|>Simple greeting; reply politely.<|end|>'
         '<|start|>assistant<|channel|>final<|message|>Hello! How can I help you today?<|return|>',
         'Hello! How can I help you today?', 'Simple greeting; reply politely.', []),
    Case('explicit-start',
         '<|start|>assistant<|channel|>analysis<|message|>Think.<|end|>'
         '<|start|>assistant<|channel|>final<|message|>Done.<|return|>',
         'Done.', 'Think.', []),
    Case('one-tool',
         '<|channel|>analysis<|message|>Need the weather tool.<|end|>'
         '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
         + WEATHER_ARGS + '<|call|>',
         None, 'Need the weather tool.', [('get_weather', WEATHER_ARGS)]),
    Case('recipient-in-role',
         '<|channel|>analysis<|message|>Call it.<|end|>'
         '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>'
         + WEATHER_ARGS + '<|call|>',
         None, 'Call it.', [('get_weather', WEATHER_ARGS)]),
    Case('several-tools',
         '<|channel|>analysis<|message|>Two lookups.<|end|>'
         '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
         + WEATHER_ARGS + '<|call|>'
         '<|start|>assistant<|channel|>analysis<|message|>Now the time.<|end|>'
         '<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>'
         '<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>'
         '{"query": "x"}<|call|>',
         None, 'Two lookups.Now the time.',
         [('get_weather', WEATHER_ARGS), ('get_time', '{}'), ('search', '{"query": "x"}')]),
    Case('long-arguments',
         '<|channel|>commentary to=functions.search <|constrain|>json<|message|>' + LONG_ARGS + '<|call|>',
         None, None, [('search', LONG_ARGS)]),
    Case('unknown-tool-filtered',
         '<|channel|>analysis<|message|>Try.<|end|>'
         '<|start|>assistant<|channel|>commentary to=functions.delete_all <|constrain|>json<|message|>'
         '{"force": true}<|call|>'
         '<|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>',
         None, 'Try.', [('get_time', '{}')]),
    Case('tool-then-final',
         '<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|end|>'
         '<|start|>assistant<|channel|>final<|message|>It is noon.<|return|>',
         'It is noon.', None, [('get_time', '{}')]),
    Case('preamble-is-content',
         '<|channel|>commentary<|message|>Let me check.<|end|>'
         '<|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>',
         'Let me check.', None, [('get_time', '{}')]),
    Case('builtin-recipients',
         '<|channel|>analysis to=python<|message|>print(1)<|call|>'
         '<|start|>assistant<|channel|>commentary to=browser.search<|message|>{"q": 1}<|call|>'
         '<|start|>assistant<|channel|>final<|message|>ok<|return|>',
         'ok', 'print(1)', []),
    Case('specials-inside-body',
         '<|channel|>analysis<|message|>Tags like <|channel|> and <|start|> are text here.<|end|>'
         '<|start|>assistant<|channel|>final<|message|>a < b and x <| y |> z<|return|>',
         'a < b and x <| y |> z', 'Tags like <|channel|> and <|start|> are text here.', []),
    Case('missing-start',
         '<|channel|>analysis<|message|>a<|end|><|channel|>final<|message|>b<|return|>',
         'b', 'a', []),
    Case('non-assistant-role-dropped',
         '<|channel|>final<|message|>b<|end|><|start|>user<|message|>c<|end|>',
         'b', None, []),
    Case('empty-bodies',
         '<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|><|return|>',
         None, None, []),
    Case('truncated-final',
         '<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Partial ans',
         'Partial ans', 'Think.', []),
    Case('truncated-arguments',
         '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Par',
         None, None, [('get_weather', '{"city": "Par')]),
    Case('truncated-header',
         '<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>commentary to=functions.get_wea',
         None, 'Think.', []),
    Case('truncated-reasoning',
         '<|channel|>analysis<|message|>I was thinking about',
         None, 'I was thinking about', []),
    Case('no-harmony-structure',
         'Just plain text without any Harmony tokens.',
         'Just plain text without any Harmony tokens.', None, []),
    Case('tool-choice-none-drops-calls',
         '<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>',
         None, None, [], {'tool_choice': 'none'}),
    Case('named-tool-choice',
         '<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>'
         '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
         + WEATHER_ARGS + '<|call|>',
         None, None, [('get_weather', WEATHER_ARGS)],
         {'tool_choice': {'type': 'function', 'function': {'name': 'get_weather'}}}),
    Case('allowed-tools',
         '<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>'
         '<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>{}<|call|>',
         None, None, [('search', '{}')],
         {'tool_choice': {'type': 'allowed_tools',
                          'allowed_tools': {'mode': 'auto',
                                            'tools': [{'type': 'function', 'function': {'name': 'search'}}]}}}),
]
CASE_IDS = [c.id for c in CASES]
# Cases whose last part is cut: a partial tag at the very end is text, not a tag.
TRUNCATED = {'truncated-final', 'truncated-arguments', 'truncated-header', 'truncated-reasoning'}

PARSER_CLASSES: dict[Any, Any] = {}


def parser_cls(mode: str = 'auto', tokenizer: Any = None) -> Any:
    key = (mode, id(tokenizer))
    cls = PARSER_CLASSES.get(key)
    if cls is None:
        cls = GptOssResponseParser.with_parsers(tokenizer=tokenizer, input_mode=mode)
        PARSER_CLASSES[key] = cls
    return cls


def new_parser(case: Case, mode: str = 'auto', tokenizer: Any = None) -> Any:
    return parser_cls(mode, tokenizer)(make_request(**case.request))


def run(case: Case, chunks: list[Any], mode: str = 'auto', tokenizer: Any = None, flush: bool = False) -> Any:
    parser = new_parser(case, mode, tokenizer)
    flagged = stream_flagged(parser, chunks, flush=flush)
    check_messages(flagged)
    check_identity_first(tool_deltas(flagged))
    return reconstruct(parser, flagged)


def complete_result(case: Case, text: str, ids: list[int] | None = None, mode: str = 'auto',
                    tokenizer: Any = None) -> tuple[Any, Any, Any]:
    content, tool_calls, reasoning = new_parser(case, mode, tokenizer).parse_complete(text, ids)
    return content, reasoning, calls_of(tool_calls)


# ---- text mode ------------------------------------------------------------------------


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_text_mode_every_chunking(case: Case) -> None:
    assert complete_result(case, case.text) == case.expected
    for label, chunks in chunkings(case.text, TAGS, seed=len(case.text), n_random=8):
        assert run(case, chunks).key() == case.expected, label
        assert run(case, chunks, flush=True).key() == case.expected, label


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_text_mode_token_aligned_with_ids(case: Case) -> None:
    text_ids = TOKENIZER.encode(case.text)
    assert complete_result(case, case.text, text_ids) == case.expected
    for size in (1, 2, 3, 5, *FIXED_SIZES):
        chunks = text_chunks(token_groups(case.text, [size]))
        assert run(case, chunks).key() == case.expected, size
        parser = new_parser(case)
        stream_flagged(parser, chunks)
        assert parser.input_mode_in_use == ('text' if any(ids for _, ids in chunks
                                                          if set(ids) & set(HARMONY_SPECIAL_TOKEN_IDS.values()))
                                            else 'auto')


@settings(max_examples=400 if SLOW else 60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), data=st.data())
def test_text_mode_random_chunkings(case: Case, data: Any) -> None:
    n = len(case.text)
    cuts = data.draw(st.lists(st.integers(1, max(1, n - 1)), max_size=min(40, n)))
    points = sorted(set(c for c in cuts if 0 < c < n))
    bounds = [0, *points, n]
    chunks = [case.text[a:b] for a, b in zip(bounds, bounds[1:])]
    assert run(case, chunks, mode='text').key() == case.expected


# ---- token-id mode --------------------------------------------------------------------


def id_mode_text(case: Case) -> str:
    return _TAG_RE.sub('', case.text)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_id_mode_one_token_per_chunk(case: Case) -> None:
    chunks = id_chunks(token_groups(case.text, [1]))
    assert run(case, chunks).key() == case.expected
    assert run(case, chunks, mode='ids').key() == case.expected
    assert run(case, chunks, flush=True).key() == case.expected


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_id_mode_specials_at_chunk_edges(case: Case) -> None:
    rng = random.Random(case.id)
    for _ in range(8):
        assert run(case, edge_chunks(case.text, rng), mode='ids').key() == case.expected


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_id_mode_grouped_tokens_with_tokenizer(case: Case) -> None:
    """Several tokens per chunk: a configured tokenizer places each segment's text exactly."""
    ids = TOKENIZER.encode(case.text)
    if case.id != 'no-harmony-structure':
        assert complete_result(case, id_mode_text(case), ids, tokenizer=TOKENIZER) == case.expected
    for size in (2, 3, *FIXED_SIZES):
        chunks = id_chunks(token_groups(case.text, [size]))
        assert run(case, chunks, mode='ids', tokenizer=TOKENIZER).key() == case.expected, size
    rng = random.Random(len(case.text))
    for _ in range(6):
        sizes = [rng.randint(1, 9) for _ in range(20)]
        chunks = id_chunks(token_groups(case.text, sizes))
        assert run(case, chunks, mode='ids', tokenizer=TOKENIZER).key() == case.expected, sizes


@settings(max_examples=300 if SLOW else 50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), sizes=st.lists(st.integers(1, 12), min_size=1, max_size=30))
def test_id_mode_random_groupings(case: Case, sizes: list[int]) -> None:
    chunks = id_chunks(token_groups(case.text, sizes))
    assert run(case, chunks, mode='ids', tokenizer=TOKENIZER).key() == case.expected
    chunks = text_chunks(token_groups(case.text, sizes))
    assert run(case, chunks, mode='text').key() == case.expected


# Without a tokenizer the grammar cannot tell where a built-in recipient name ends and its body
# begins ("to=python" + "print(1)"), nor where specials sat inside one body: those need a tokenizer.
GRAMMAR_AMBIGUOUS = {'no-harmony-structure', 'missing-start', 'builtin-recipients', 'specials-inside-body'}
WELL_FORMED = [c for c in CASES if c.id not in TRUNCATED and c.id not in GRAMMAR_AMBIGUOUS]


@pytest.mark.parametrize('case', WELL_FORMED, ids=[c.id for c in WELL_FORMED])
def test_id_mode_whole_response_without_tokenizer(case: Case) -> None:
    """parse_complete in token-id mode: the header grammar splits well-formed responses."""
    ids = TOKENIZER.encode(case.text)
    assert complete_result(case, id_mode_text(case), ids) == case.expected


def test_both_modes_agree_on_reasoning_tokens() -> None:
    case = next(c for c in CASES if c.id == 'several-tools')
    analysis = ('Two lookups.', 'Now the time.')
    expected = sum(len(TOKENIZER.encode(a)) for a in analysis)
    for builder in (id_chunks, text_chunks):
        for size in (1, 4, 256):
            parser = new_parser(case, tokenizer=TOKENIZER)
            stream_flagged(parser, builder(token_groups(case.text, [size])))
            assert parser.reasoning_tokens == expected, (builder.__name__, size)
    parser = new_parser(case)
    parser.parse_complete(case.text, TOKENIZER.encode(case.text))
    assert parser.reasoning_tokens == expected


def test_reasoning_tokens_count_specials_inside_analysis_and_skip_tools() -> None:
    text = ('<|channel|>analysis<|message|>ab<|channel|>cd<|end|>'
            '<|start|>assistant<|channel|>analysis to=functions.get_time<|message|>{}<|call|>')
    parser = new_parser(CASES[0])
    parser.parse_complete(text, TOKENIZER.encode(text))
    assert parser.reasoning_tokens == 3  # "ab", "<|channel|>", "cd"; the tool call in analysis does not count
    assert new_parser(CASES[0]).reasoning_tokens == 0


# ---- structure of the stream ------------------------------------------------------------


def test_channel_order_and_identity_first() -> None:
    case = next(c for c in CASES if c.id == 'several-tools')
    parser = new_parser(case)
    flagged = stream_flagged(parser, [case.text])
    kinds = []
    for message, emitted in flagged:
        kinds.append('tool' if message.tool_calls else 'reasoning' if message.reasoning_content else 'content')
        assert emitted is bool(message.tool_calls)
    assert kinds == ['reasoning', 'tool', 'reasoning', 'tool']
    deltas = tool_deltas(flagged)
    first = deltas[0]
    assert first.index == 0 and first.id.startswith('chatcmpl-tool-') and first.type == 'function'
    assert first.function.name == 'get_weather' and first.function.arguments is None
    assert [d.index for d in deltas if d.id] == [0, 1, 2]


def test_identity_is_emitted_at_message_start_and_arguments_stream() -> None:
    parser = new_parser(CASES[0])
    head = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
    out = parser.stream_chunk(head, [])
    assert len(out) == 1 and out[0][1] is True
    (identity,) = out[0][0].tool_calls
    assert identity.function.name == 'get_weather' and identity.function.arguments is None
    pieces = ['{"ci', 'ty": "Pa', 'ris"}']
    got = []
    for piece in pieces:
        (message, emitted), = parser.stream_chunk(piece, [])
        assert emitted
        got.append(message.tool_calls[0].function.arguments)
    assert got == pieces
    assert parser.stream_chunk('<|call|>', [], final=True) == []


def test_partial_terminator_is_held_then_released_at_final() -> None:
    parser = new_parser(CASES[0])
    out = parser.stream_chunk('<|channel|>final<|message|>x <|ret', [])
    assert [m.content for m, _ in out] == ['x ']
    out = parser.stream_chunk('', [], final=True)
    assert [m.content for m, _ in out] == ['<|ret']


def test_empty_first_chunk_gives_no_delta() -> None:
    # issue #27 item 4: an empty step is no delta; the first role chunk is the adapters' job
    parser = new_parser(CASES[0])
    assert parser.stream_chunk('', []) == []
    assert parser.stream_chunk('', []) == []


def test_bad_input_types() -> None:
    parser = new_parser(CASES[0])
    with pytest.raises(TypeError):
        parser.stream_chunk(b'bytes', [])
    with pytest.raises(ValueError):
        GptOssResponseParser.with_parsers(input_mode='bogus')(make_request())


def test_long_body_is_linear() -> None:
    body = 'word <b> ' * 20000
    text = '<|channel|>final<|message|>' + body + '<|return|>'
    parser = new_parser(CASES[0])
    chunks = [text[i:i + 7] for i in range(0, len(text), 7)]
    content = ''.join(m.content or '' for c in chunks[:-1] for m, _ in parser.stream_chunk(c, []))
    content += ''.join(m.content or '' for m, _ in parser.stream_chunk(chunks[-1], [], final=True))
    assert content == body


def test_unterminated_header_is_bounded_and_dropped() -> None:
    parser = new_parser(CASES[0])
    head = '<|channel|>' + 'x' * 50000
    assert parser.parse_complete(head) == (None, None, None)


# ---- header classification ------------------------------------------------------------------


@pytest.mark.parametrize('header,explicit,expected', [
    ('<|channel|>analysis', False, ('reasoning', None)),
    ('<|channel|>final', False, ('content', None)),
    ('<|channel|>commentary', False, ('content', None)),
    ('<|channel|>commentary to=functions.get_weather <|constrain|>json', False, ('tool', 'get_weather')),
    ('<|channel|>commentary to=functions.get_weather<|constrain|>json', False, ('tool', 'get_weather')),
    ('assistant to=functions.a.b-c<|channel|>commentary json', True, ('tool', 'a.b-c')),
    ('to=functions.x<|channel|>commentary', False, ('tool', 'x')),
    ('<|channel|>analysis to=functions.x', False, ('tool', 'x')),
    ('<|channel|>final to=functions.x', False, ('content', None)),
    ('<|channel|>analysis to=python', False, ('reasoning', None)),
    ('<|channel|>commentary to=browser.search', False, ('drop', None)),
    ('<|channel|>commentary to=functions.', False, ('drop', None)),
    ('user', True, ('drop', None)),
    ('hello<|channel|>final', False, ('content', None)),
    ('', False, ('content', None)),
])
def test_parse_header(header: str, explicit: bool, expected: tuple[str, str | None]) -> None:
    assert parse_header(header, explicit) == expected


# ---- token-id mode splitting ----------------------------------------------------------------


def test_special_token_ids_match_published_format() -> None:
    assert (START_ID, END_ID, MESSAGE_ID, CHANNEL_ID, CONSTRAIN_ID, RETURN_ID, CALL_ID) == (
        200006, 200007, 200008, 200005, 200003, 200002, 200012)


def test_grammar_split_of_a_mixed_chunk() -> None:
    # "...end<|end|><|start|>assistant<|channel|>final<|message|>Hi" with specials only as ids
    codes = [2, 1, 4, 3]  # end, start, channel, message
    counts = [1, 0, 1, 1, 1]
    parts = split_chunk_text('the endassistantfinalHi there', codes, counts, [[1]] * 5, 1)
    assert parts == ['the end', '', 'assistant', 'final', 'Hi there']
    parts = split_chunk_text('commentary to=functions.get_weather json{"a": 1}', [3], [1, 1], [[1], [1]], 0)
    assert parts == ['commentary to=functions.get_weather json', '{"a": 1}']


def test_auto_mode_detection() -> None:
    parser = new_parser(CASES[0])
    assert parser.input_mode_in_use == 'auto'
    parser.stream_chunk('', [CHANNEL_ID])
    assert parser.input_mode_in_use == 'ids'
    parser = new_parser(CASES[0])
    parser.stream_chunk('<|channel|>', [CHANNEL_ID])
    assert parser.input_mode_in_use == 'text'


# ---- request, registry, class API -------------------------------------------------------------


def test_registered_and_exported() -> None:
    assert ResponseParserManager.get('gpt-oss') is GptOssResponseParser
    assert GptOssResponseParser.supports_required_tool_choice is True
    assert GptOssResponseParser.tool_parser_cls is HarmonyToolParser
    parser = GptOssResponseParser(make_request())
    assert isinstance(parser.tool_parser, HarmonyToolParser)
    assert harmony_module.__file__.endswith(('.so', '.pyd')), 'compiled module not loaded'


def test_set_parsers_accepts_and_ignores_names() -> None:
    cls = type('Configured', (GptOssResponseParser,), {})
    cls.set_parsers('default', 'qwen3')
    cls.set_parsers(None, None, tokenizer=TOKENIZER)
    assert cls.tokenizer is TOKENIZER and GptOssResponseParser.tokenizer is None
    with pytest.raises(TypeError):
        cls.set_parsers(3, None)


def test_adjust_request_full_wrappers_and_tool_choice() -> None:
    parser = GptOssResponseParser(make_request())
    tools = parser.request.tools
    assert [t['type'] for t in tools] == ['function'] * 3
    assert [t['function']['name'] for t in tools] == ['get_weather', 'get_time', 'search']
    assert parser.request.skip_special_tokens is False
    assert parser.request.response_format is None  # "auto": prompt-only tool calling, no structural tag

    none = GptOssResponseParser(make_request(tool_choice='none'))
    assert none.request.tools is None
    named = GptOssResponseParser(make_request(tool_choice={'type': 'function', 'function': {'name': 'get_time'}}))
    assert [t['function']['name'] for t in named.request.tools] == ['get_time']
    allowed = GptOssResponseParser(make_request(tool_choice={
        'type': 'allowed_tools',
        'allowed_tools': {'mode': 'auto', 'tools': [{'type': 'function', 'function': {'name': 'search'}}]}}))
    assert len(allowed.request.tools) == 3  # all rendered; calls filtered to the allowed subset
    with pytest.raises(ValueError, match='not found'):
        GptOssResponseParser(make_request(tool_choice={
            'type': 'allowed_tools',
            'allowed_tools': {'mode': 'auto', 'tools': [{'type': 'function', 'function': {'name': 'nope'}}]}}))


def test_required_tool_choice_uses_harmony_structural_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    if 'xgrammar' not in sys.modules:
        with pytest.raises(ValueError, match='harmony'):
            GptOssResponseParser(make_request(tool_choice='required'))
    calls = []

    class Tag:
        def __init__(self, payload: dict[str, Any]) -> None:
            self.payload = payload

        def model_dump(self, mode: str = 'python') -> dict[str, Any]:
            return self.payload

    def get_model_structural_tag(model: str, tools: Any, tool_choice: Any, reasoning: bool) -> Tag:
        calls.append((model, [t['function']['name'] for t in tools], tool_choice, reasoning))
        return Tag({'type': 'structural_tag', 'model': model})

    fake = types.ModuleType('xgrammar')
    builtin = types.ModuleType('xgrammar.builtin_structural_tag')
    builtin.get_model_structural_tag = get_model_structural_tag  # type: ignore[attr-defined]
    fake.builtin_structural_tag = builtin  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, 'xgrammar', fake)
    monkeypatch.setitem(sys.modules, 'xgrammar.builtin_structural_tag', builtin)
    # The builder is looked up once per process: make the next construction find the fake.
    from lmparse import harmony_request
    monkeypatch.setattr(harmony_request, '_xgrammar_builder', harmony_request._UNRESOLVED)
    parser = GptOssResponseParser(make_request(tool_choice='required', response_format={'type': 'json_object'}))
    assert parser.request.response_format == {'type': 'structural_tag', 'model': 'harmony'}
    assert calls == [('harmony', ['get_weather', 'get_time', 'search'], 'required', True)]
    GptOssResponseParser(make_request(tool_choice='none'))
    assert len(calls) == 1
    with pytest.raises(ValueError, match='at least one tool'):
        GptOssResponseParser(make_request(tool_names=None, tool_choice='required'))


def test_pydantic_like_request_passes_through() -> None:
    from lmparse.request import ChatCompletionRequest

    request = ChatCompletionRequest.from_dict(make_request())
    parser = GptOssResponseParser(request)
    assert parser.request.tools[0]['function']['name'] == 'get_weather'
    assert request.tools is not None  # the caller's request is not mutated
