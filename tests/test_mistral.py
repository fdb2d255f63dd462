"""Mistral ``[TOOL_CALLS]`` tool calls and Magistral ``[THINK]`` reasoning through BaseResponseParser.

Every case is checked three ways: streamed reconstruction over many chunkings
(one chunk, every split inside every marker, fixed and random sizes, every
two-way split, marker-atomic streams), ``parse_complete`` and a literal
expected result, call ids included (the model's ``[CALL_ID]``, otherwise 9
random alphanumerics). Real token streams come from mistral-common's own
tokenizers (bundled v3/v7 files; v11 and v13 tekken files built from the
bundled vocabulary with those versions' special tokens), decoded id by id
with special tokens kept.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lmparse import MistralReasoningParser, MistralToolParser, ReasoningParserManager, ToolParserManager
from tests.streaming import (
    atomic_chunks,
    check_messages,
    chunkings,
    complete,
    fixed_chunks,
    reconstruct,
    stream_flagged,
    tool_deltas,
)

TC, ARGS, CID, TH, ETH = '[TOOL_CALLS]', '[ARGS]', '[CALL_ID]', '[THINK]', '[/THINK]'
TAGS = (TC, ARGS, CID, TH, ETH)
TEXT_TAGS = ('<think>', '</think>')  # Magistral 2506's reasoning tags, written as text
MISTRAL_ID = re.compile(r'^[A-Za-z0-9]{9}$')
R = None  # a random Mistral id (9 alphanumerics)

Calls = list[tuple[str, str]]


def v13(name: str, args: str) -> str:
    return f'{TC}{name}{ARGS}{args}'


def v11(name: str, call_id: str, args: str) -> str:
    return f'{TC}{name}{CID}{call_id}{ARGS}{args}'


def env(name: str, args: str, call_id: str | None = None) -> str:
    tail = f', "id": "{call_id}"' if call_id else ''
    return f'{{"name": "{name}", "arguments": {args}{tail}}}'


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    ids: list[str | None]
    reasoning: str | None = None
    tool: str = 'mistral'
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


W = '{"city": "Oslo", "unit": "celsius"}'
TRICKY = '{"query": "北京 😀 \\"x\\" ' + TC + ' ' + ARGS + ' [/THINK] ]}", "n": [1, {"k": "}]"}], "e": "\\\\"}'
assert json.loads(TRICKY)['query'].endswith(']}')

CASES = [
    # v13+ (and v11 without ids): [TOOL_CALLS]NAME[ARGS]{...}
    Case('v13-one', v13('get_weather', W), None, None, [('get_weather', W)], [R]),
    Case('v13-several-with-unknown', v13('get_weather', '{"city": "A"}') + v13('delete_files', '{"p": "/"}')
         + v13('search', '{"query": "q", "limit": 3}'), None, None,
         [('get_weather', '{"city": "A"}'), ('search', '{"query": "q", "limit": 3}')], [R, R]),
    Case('v11-call-ids', v11('get_weather', 'abc123XYZ', W) + v11('get_time', 'def456UVW', '{}'), None, None,
         [('get_weather', W), ('get_time', '{}')], ['abc123XYZ', 'def456UVW']),
    Case('text-before-and-after', 'Let me check. ' + v13('get_time', '{}') + ' Done.', 'Let me check.  Done.', None,
         [('get_time', '{}')], [R]),
    Case('newlines-between-calls', v13('get_time', '{}') + '\n\n' + v13('search', '{"query": "x"}'), None, None,
         [('get_time', '{}'), ('search', '{"query": "x"}')], [R, R]),
    Case('tricky-strings', v13('search', TRICKY), None, None, [('search', TRICKY)], [R]),
    Case('nested-and-formatting', v13('search', '{ "query" : "a",\n "query":"b", "o": {"x": [1, {}]} }'), None, None,
         [('search', '{ "query" : "a",\n "query":"b", "o": {"x": [1, {}]} }')], [R]),
    Case('brace-without-args-marker', f'{TC}get_weather{W}', None, None, [('get_weather', W)], [R]),
    Case('space-before-args-marker', f'{TC} get_time {ARGS} {{}}', None, None, [('get_time', '{}')], [R]),
    Case('alias-free-text-after', v13('get_time', '{}') + 'ok', 'ok', None, [('get_time', '{}')], [R]),
    # before v11: [TOOL_CALLS] then a JSON array of envelopes (the envelope's "id" comes after the arguments)
    Case('pre-v11-array', TC + '[' + env('get_weather', W, 'abc123XYZ') + ', ' + env('search', '{"query": "x"}', 'def456UVW')
         + ']', None, None, [('get_weather', W), ('search', '{"query": "x"}')], [R, R]),
    Case('pre-v11-sentencepiece-space', 'Sure. ' + TC + ' [' + env('get_time', '{}') + ']', 'Sure. ', None,
         [('get_time', '{}')], [R]),
    Case('pre-v11-unknown-in-array', TC + '[' + env('rm', '{}') + ',' + env('search', '{"query": "q"}') + ']', None,
         None, [('search', '{"query": "q"}')], [R]),
    Case('pre-v11-arguments-first', TC + '[{"arguments": {"query": "q"}, "name": "search"}]', None, None,
         [('search', '{"query": "q"}')], [R]),
    Case('pre-v11-single-object', TC + env('get_time', '{}') + ' then', ' then', None, [('get_time', '{}')], [R]),
    Case('pre-v11-text-after-array', TC + '[' + env('get_time', '{}') + ']\nDone.', '\nDone.', None,
         [('get_time', '{}')], [R]),
    Case('pre-v11-empty-array', 'a' + TC + '[] b', 'a b', None, [], []),
    # Magistral reasoning
    Case('think', TH + 'The user wants weather.' + ETH + 'It is sunny.', 'It is sunny.',
         'The user wants weather.', [], [], 'mistral'),
    Case('think-then-calls', TH + 'Check.' + ETH + v13('get_weather', W) + v13('get_time', '{}'), None, 'Check.',
         [('get_weather', W), ('get_time', '{}')], [R, R], 'mistral'),
    # Mistral never calls tools inside [THINK] (calls_in_reasoning = False): the markers there are reasoning text
    Case('call-inside-unclosed-think', TH + 'Hmm.' + v13('search', '{"query": "q"}') + 'more', None,
         'Hmm.' + v13('search', '{"query": "q"}') + 'more', [], [], 'mistral'),
    Case('call-inside-think-then-call', TH + 'I could write ' + v11('search', 'abc123XYZ', '{"query": "q"}') + ETH
         + v13('get_time', '{}'), None, 'I could write ' + v11('search', 'abc123XYZ', '{"query": "q"}'),
         [('get_time', '{}')], [R], 'mistral'),
    Case('pre-v11-call-inside-think', TH + 'x ' + TC + '[' + env('get_time', '{}') + ']' + ETH + 'y', 'y',
         'x ' + TC + '[' + env('get_time', '{}') + ']', [], [], 'mistral'),
    Case('no-think', 'Plain answer.', 'Plain answer.', None, [], [], 'mistral'),
    # Magistral 2506 writes <think> as text: read at the start of the output only
    Case('text-think', '<think>\nr [THINK] x</think>c', 'c', '\nr [THINK] x', [], [], 'mistral'),
    Case('text-think-after-space-then-call', '\n <think>r</think>' + v13('get_time', '{}'), None, 'r',
         [('get_time', '{}')], [R], 'mistral'),
    Case('text-think-not-at-start', 'a <think>r</think>c', 'a <think>r</think>c', None, [], [], 'mistral'),
    Case('special-think-then-text-tags', TH + 'r <think>x</think>' + ETH + 'c', 'c', 'r <think>x</think>', [], [],
         'mistral'),
    Case('text-think-unclosed', '<think>still', None, 'still', [], [], 'mistral'),
    Case('text-think-disabled', '<think>x</think>y', 'xy', None, [], [], 'mistral',
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('think-disabled', TH + 'x' + ETH + 'y', 'xy', None, [], [], 'mistral',
         request={'chat_template_kwargs': {'enable_thinking': False}}),
    Case('tool-choice-none', 'x' + v13('get_time', '{}'), 'x' + v13('get_time', '{}'), None, [], [], None, 'mistral',
         {'tool_choice': 'none'}),
    Case('lookalikes', 'a [TOOL_CALL] b [ARGS] [TOOL_CALLS', 'a [TOOL_CALL] b [ARGS] [TOOL_CALLS', None, [], []),
    # malformed and truncated (documented best effort)
    Case('garbage-after-open', 'x' + TC + 'I cannot call tools.', 'xI cannot call tools.', None, [], []),
    Case('quote-in-header', TC + '"get_time"' + ARGS + '{}', '"get_time"' + ARGS + '{}', None, [], []),
    Case('missing-array-close', TC + '[' + env('get_time', '{}'), None, None, [('get_time', '{}')], [R]),
    Case('missing-array-close-then-text', TC + '[' + env('get_time', '{}') + '\nDone', 'Done', None,
         [('get_time', '{}')], [R]),
    Case('truncated-arguments', 'ok' + TC + 'get_weather' + ARGS + '{"city": "Os', 'ok', None,
         [('get_weather', '{"city": "Os')], [R]),
    Case('truncated-after-args-marker', TC + 'get_time' + ARGS, None, None, [('get_time', '{}')], [R]),
    Case('truncated-header', 'ok' + TC + 'get_wea', 'ok', None, [], []),
    Case('truncated-call-id', 'ok' + TC + 'get_time' + CID + 'abc', 'ok', None, [], []),
    Case('truncated-after-open', 'ok' + TC, 'ok', None, [], []),
    Case('truncated-array', TC + '[' + env('get_time', '{}') + ', {"name": "get_weather", "arguments": {"city": "Os',
         None, None, [('get_time', '{}'), ('get_weather', '{"city": "Os')], [R, R]),
    Case('value-cut-by-next-call', v13('search', '{"query": "q", "n": [1') + v13('get_time', '{}'), None, None,
         [('search', '{"query": "q", "n": [1'), ('get_time', '{}')], [R, R]),
    Case('empty-name', TC + ARGS + '{"a": 1}' + v13('get_time', '{}'), None, None, [('get_time', '{}')], [R]),
    Case('unknown-then-text', v13('rm', '{"p": 1}') + ' bye', ' bye', None, [], []),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _ids_match(got: list[str], want: list[str | None]) -> bool:
    return len(got) == len(want) and all(MISTRAL_ID.match(g) if w is None else g == w for g, w in zip(got, want))


def _run(case: Case, make_parser: Any, chunks: list[Any], flush: bool = False) -> tuple[Any, list[str]]:
    parser = case.parser(make_parser)
    flagged = stream_flagged(parser, chunks, flush=flush)
    check_messages(flagged)
    ids = [c.id for c in parser.tool_parser.build_tool_calls(tool_deltas(flagged))]
    return reconstruct(parser, flagged).key(), ids


def _check(case: Case, make_parser: Any, chunks: list[Any], label: Any = None, flush: bool = False) -> None:
    got, ids = _run(case, make_parser, chunks, flush)
    assert got == case.expected, (label, chunks)
    assert _ids_match(ids, case.ids), (label, ids)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_parse_complete(case: Case, make_parser: Any) -> None:
    assert complete(case.parser(make_parser), case.text).key() == case.expected
    _content, calls, _reasoning = case.parser(make_parser).parse_complete(case.text)
    assert _ids_match([c.id for c in calls or []], case.ids)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_chunkings(case: Case, make_parser: Any) -> None:
    for label, chunks in chunkings(case.text, TAGS + TEXT_TAGS):
        _check(case, make_parser, chunks, label)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_stream_then_empty_final_chunk(case: Case, make_parser: Any) -> None:
    for size in (1, 5, len(case.text)):
        _check(case, make_parser, fixed_chunks(case.text, size), size, flush=True)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_every_two_way_split(case: Case, make_parser: Any) -> None:
    text = case.text
    for cut in range(1, len(text)):
        _check(case, make_parser, [text[:cut], text[cut:]], cut)


@pytest.mark.parametrize('case', CASES, ids=CASE_IDS)
def test_marker_atomic_streams(case: Case, make_parser: Any) -> None:
    """The markers are special tokens: each marker one chunk, the text around it in small pieces."""
    _check(case, make_parser, atomic_chunks(case.text, TAGS, 3))


def test_arguments_stream_as_generated(make_parser: Any) -> None:
    """Identity first, then the argument source as it arrives (one fragment per chunk)."""
    text = v13('get_weather', W)
    parser = make_parser(None, 'mistral')
    deltas = tool_deltas(stream_flagged(parser, fixed_chunks(text, 4)))
    assert deltas[0].function.name == 'get_weather' and deltas[0].id
    fragments = [d.function.arguments for d in deltas[1:]]
    assert ''.join(fragments) == W and len(fragments) >= len(W) // 4 - 1


def test_registration() -> None:
    assert ToolParserManager.get('mistral') is MistralToolParser
    assert ReasoningParserManager.get('mistral') is MistralReasoningParser
    assert MistralToolParser.request_settings == {'skip_special_tokens': False}


def test_request_keeps_special_tokens(make_parser: Any) -> None:
    assert make_parser('mistral', 'mistral').request.skip_special_tokens is False


# ---- real token streams from mistral-common -----------------------------------------------------


def _tokenizers(tmp: Path) -> dict[str, Any]:
    mc = pytest.importorskip('mistral_common')
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    data = Path(mc.__file__).parent / 'data'
    out: dict[str, Any] = {'v3-tekken': MistralTokenizer.from_file(str(data / 'tekken_240718.json'))}
    try:
        import sentencepiece  # noqa: F401
    except ImportError:
        pass
    else:
        out['v3-sentencepiece'] = MistralTokenizer.from_file(str(data / 'mistral_instruct_tokenizer_240323.model.v3'))
        out['v7-sentencepiece'] = MistralTokenizer.from_file(str(data / 'mistral_instruct_tokenizer_241114.model.v7'))
    # v11 / v13: the bundled tekken vocabulary with those versions' special tokens at their real ranks
    # (Mistral Small 3.x / Magistral: [ARGS]=32, [CALL_ID]=33, [THINK]=34, [/THINK]=35), loaded from a file
    # as mistral-common loads a model's tekken.json.
    base = json.loads((data / 'tekken_240911.json').read_text())
    base.pop('image', None)
    for version, extra in (('v11', ('[ARGS]', '[CALL_ID]')), ('v13', ('[ARGS]', '[CALL_ID]', '[THINK]', '[/THINK]'))):
        specials = [dict(t) for t in Tekkenizer.DEPRECATED_SPECIAL_TOKENS]
        specials += [{'rank': 20 + i, 'token_str': f'<SPECIAL_{20 + i}>', 'is_control': True} for i in range(12)]
        specials += [{'rank': 32 + i, 'token_str': s, 'is_control': True} for i, s in enumerate(extra)]
        path = tmp / f'tekken_{version}.json'
        path.write_text(json.dumps(dict(base, config=dict(base['config'], version=version), special_tokens=specials)))
        out[version] = MistralTokenizer.from_file(str(path))
    return out


@pytest.fixture(scope='module')
def mistral_tokenizers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _tokenizers(tmp_path_factory.mktemp('mistral'))


def _decode(raw: Any, ids: list[int]) -> str:
    """Ordinary runs decoded as the engine shows them, special tokens as their text (kept)."""
    out: list[str] = []
    run: list[int] = []
    for i in ids:
        if raw.is_special(i):
            if run:
                out.append(raw.decode(run))
                run = []
            out.append(raw.id_to_piece(i))
        else:
            run.append(i)
    if run:
        out.append(raw.decode(run))
    return ''.join(out)


def _token_steps(raw: Any, ids: list[int]) -> list[tuple[str, list[int]]]:
    """One engine step per token: the growth of the decoded prefix (partial characters wait)."""
    steps: list[tuple[str, list[int]]] = []
    shown = ''
    for k in range(1, len(ids) + 1):
        text = _decode(raw, ids[:k])
        if text.endswith('\ufffd') and k < len(ids):
            steps.append(('', [ids[k - 1]]))
            continue
        assert text.startswith(shown), (shown, text)
        steps.append((text[len(shown):], [ids[k - 1]]))
        shown = text
    return steps


CALLS = [('get_weather', {'city': 'Oslo 北京', 'unit': 'celsius'}, 'abc123XYZ'), ('delete_files', {'p': '/'}, 'zzz999AAA'),
         ('search', {'query': 'a "quoted" \\ value', 'limit': 3}, 'def456UVW')]


def _assistant_ids(tk: Any, content: str | None, thinking: str | None) -> list[int]:
    from mistral_common.protocol.instruct.messages import AssistantMessage, TextChunk, ThinkChunk
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall

    it = tk.instruct_tokenizer
    raw = it.tokenizer
    calls = [ToolCall(id=cid, function=FunctionCall(name=n, arguments=json.dumps(a, ensure_ascii=False)))
             for n, a, cid in CALLS]
    if thinking is not None:
        msg = AssistantMessage(content=[ThinkChunk(thinking=thinking)], tool_calls=calls)
        ids = it.encode_assistant_message(msg, False)
    else:
        ids = it.encode_assistant_message(AssistantMessage(tool_calls=calls), False)
    if content:  # text the model wrote before the calls: ordinary tokens in front
        ids = raw.encode(content, bos=False, eos=False) + ids
    return [i for i in ids if i != raw.eos_id]


@pytest.mark.parametrize('version', ['v3-tekken', 'v3-sentencepiece', 'v7-sentencepiece', 'v11', 'v13'])
@pytest.mark.parametrize('content', [None, 'Let me check that for you.'])
def test_real_token_stream(mistral_tokenizers: dict[str, Any], make_parser: Any, version: str,
                           content: str | None) -> None:
    if version not in mistral_tokenizers:
        pytest.skip(f'{version} needs sentencepiece')
    tk = mistral_tokenizers[version]
    raw = tk.instruct_tokenizer.tokenizer
    ids = _assistant_ids(tk, content, None)
    text = _decode(raw, ids)
    assert (TC + '[') in text.replace(' ', '') if version.startswith(('v3', 'v7')) else ARGS in text
    steps = _token_steps(raw, ids)
    assert ''.join(t for t, _ in steps) == text
    want_calls = [(n, json.dumps(a, ensure_ascii=False)) for n, a, _ in CALLS if n != 'delete_files']
    want_content = content.strip() if content else None  # sentencepiece drops the run's leading space
    parser = make_parser(None, 'mistral')
    flagged = stream_flagged(parser, steps)
    check_messages(flagged)
    got = reconstruct(parser, flagged)
    assert ((got.content or '').strip() or None) == want_content
    assert got.reasoning is None and got.calls == want_calls
    assert complete(make_parser(None, 'mistral'), text).key() == got.key()
    ids_out = [c.id for c in parser.tool_parser.build_tool_calls(tool_deltas(flagged))]
    if version == 'v11':
        assert ids_out == ['abc123XYZ', 'def456UVW']  # the model's [CALL_ID]s
    else:
        assert all(MISTRAL_ID.match(i) for i in ids_out)


def test_real_token_stream_thinking(mistral_tokenizers: dict[str, Any], make_parser: Any) -> None:
    tk = mistral_tokenizers['v13']
    raw = tk.instruct_tokenizer.tokenizer
    ids = _assistant_ids(tk, None, 'The user wants the weather in Oslo; call get_weather.')
    steps = _token_steps(raw, ids)
    text = ''.join(t for t, _ in steps)
    assert text.startswith(TH) and ETH + TC in text
    parser = make_parser('mistral', 'mistral')
    flagged = stream_flagged(parser, steps)
    check_messages(flagged)
    got = reconstruct(parser, flagged)
    assert got.reasoning == 'The user wants the weather in Oslo; call get_weather.'
    assert got.content is None
    assert got.calls == [(n, json.dumps(a, ensure_ascii=False)) for n, a, _ in CALLS if n != 'delete_files']
    assert complete(make_parser('mistral', 'mistral'), text).key() == got.key()


def test_markers_are_single_tokens(mistral_tokenizers: dict[str, Any]) -> None:
    raw = mistral_tokenizers['v13'].instruct_tokenizer.tokenizer
    for tag in TAGS:
        assert raw.is_special(raw.get_special_token(tag)), tag


# ---- calls_in_reasoning: either parser's declaration, read at construction ----------------


def _routed(cls: Any, text: str) -> tuple[Any, Any, Any]:
    content, calls, reasoning = cls({'messages': [], 'tools': [
        {'type': 'function', 'function': {'name': n, 'parameters': {}}} for n in ('search', 'get_time')]}
    ).parse_complete(text)
    return content, reasoning, [c.function.name for c in calls or ()]


def test_calls_in_reasoning_declared_by_either_parser() -> None:
    from lmparse import BaseResponseParser
    assert MistralToolParser.calls_in_reasoning is False and MistralReasoningParser.calls_in_reasoning is False
    # the tool parser's declaration, under another reasoning parser (Magistral 2506's <think> text)
    inside = '<think>a' + v13('search', '{}') + '</think>' + v13('get_time', '{}')
    assert _routed(BaseResponseParser.with_parsers('deepseek-v3', 'mistral'), inside) == (
        None, 'a' + v13('search', '{}'), ['get_time'])
    # the reasoning parser's declaration, under another tool parser
    hermes = TH + 'a<tool_call>{"name": "search", "arguments": {}}</tool_call>' + ETH + 'b'
    assert _routed(BaseResponseParser.with_parsers('mistral', 'hermes'), hermes) == (
        'b', 'a<tool_call>{"name": "search", "arguments": {}}</tool_call>', [])
    # a dialect that declares nothing still calls inside reasoning
    assert _routed(BaseResponseParser.with_parsers('default', 'hermes'), '<think>' + hermes[len(TH):].replace(
        ETH, '</think>')) == ('b', 'a', ['search'])


def test_a_subclass_may_declare_calls_in_reasoning() -> None:
    from lmparse import BaseResponseParser

    class Calls(MistralToolParser):
        calls_in_reasoning = True

    class Think(MistralReasoningParser):
        calls_in_reasoning = True

    cls = BaseResponseParser.with_parsers('mistral', 'mistral')
    cls.tool_parser_cls, cls.reasoning_parser_cls = Calls, Think
    text = TH + 'a' + v13('search', '{}') + 'b'
    assert _routed(cls, text) == (None, 'ab', ['search'])
    Think.calls_in_reasoning = False  # patched on the class: the next construction reads it
    assert _routed(cls, text) == (None, 'a' + v13('search', '{}') + 'b', [])
