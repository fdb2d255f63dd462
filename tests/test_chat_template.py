"""Dialects derived from chat templates (lmparse.templates): what is derived, what is refused, and the proof.

The templates under tests/data/templates/ are written for these tests in the
shapes of the families (none is a copy of a model's template). Equivalence
with the built-in dialects on their bench fixtures and in the property lane
lives in tests/test_chat_template_equivalence.py.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('jinja2')

import lmparse  # noqa: E402
from lmparse import BaseResponseParser, TemplateDerivationError, derive_dialect, from_chat_template  # noqa: E402
from lmparse.templates import _derive as derivation, load_chat_template  # noqa: E402
from lmparse.tools.json_parser import JsonToolParser  # noqa: E402
from lmparse.tools.pythonic import PythonicToolParser  # noqa: E402
from lmparse.tools.xml_parser import XmlToolParser  # noqa: E402
from tests.streaming import fixed_chunks, random_chunks  # noqa: E402

TEMPLATES = Path(__file__).parent / 'data' / 'templates'
TOKENS = {'bos_token': '<s>', 'eos_token': '</s>'}


def _derive(name: str) -> Any:
    return derive_dialect(TEMPLATES / f'{name}.jinja', special_tokens=TOKENS)


THINK_PROMPT = {'open': '<think>', 'close': '</think>', 'message_field': 'reasoning_content',
                'open_tag_in_prompt': True, 'thinking_switches': []}
THINK_MODEL = {**THINK_PROMPT, 'open_tag_in_prompt': False}
JSON_TAGS = {'family': 'JsonToolParser', 'tool_open_tag': '<tool_call>', 'tool_close_tag': '</tool_call>',
             'name_field': 'name', 'argument_field': 'arguments'}

DERIVED: dict[str, tuple[dict[str, Any] | None, dict[str, Any]]] = {
    'json_tags_think': (THINK_MODEL, JSON_TAGS),
    'json_prefilled_think': (THINK_PROMPT, JSON_TAGS),
    'json_array_no_close': (
        {'open': '[THINK]', 'close': '[/THINK]', 'message_field': 'thinking', 'open_tag_in_prompt': False,
         'thinking_switches': []},
        {'family': 'JsonToolParser', 'tool_open_tag': '[TOOL_CALLS]', 'tool_close_tag': None, 'name_field': 'name',
         'argument_field': 'arguments', 'envelope_array': True}),
    'json_array_tags': (None, {'family': 'JsonToolParser', 'tool_open_tag': '<tool_calls>',
                               'tool_close_tag': '</tool_calls>', 'name_field': 'name', 'argument_field': 'arguments',
                               'envelope_array': True}),
    # name-keyed envelopes (Apertus): {"NAME": {args}} in an array
    'json_name_keyed': ({'open': '<|inner_prefix|>', 'close': '<|inner_suffix|>', 'message_field': 'reasoning_content',
                         'open_tag_in_prompt': False, 'thinking_switches': []},
                        {'family': 'JsonToolParser', 'tool_open_tag': '<|tools_prefix|>',
                         'tool_close_tag': '<|tools_suffix|>', 'name_as_key': True, 'envelope_array': True}),
    'json_parameters_special': (THINK_PROMPT, {'family': 'JsonToolParser', 'tool_open_tag': '<|action_start|><|plugin|>',
                                               'tool_close_tag': '<|action_end|>', 'name_field': 'name',
                                               'argument_field': 'parameters'}),
    'json_python_tag': (THINK_PROMPT, {'family': 'JsonToolParser', 'tool_open_tag': '<|python_tag|>',
                                       'tool_close_tag': None, 'name_field': 'name', 'argument_field': 'parameters'}),
    'json_invented_markers': (
        {'open': '<|reason|>', 'close': '<|/reason|>', 'message_field': 'reasoning_content',
         'open_tag_in_prompt': False, 'thinking_switches': []},
        {'family': 'JsonToolParser', 'tool_open_tag': '<|fn|>', 'tool_close_tag': '<|/fn|>', 'name_field': 'function',
         'argument_field': 'args'}),
    'xml_function_parameter': (THINK_PROMPT, {
        'family': 'XmlToolParser', 'tool_open_tag': '<tool_call>', 'function_open': '<function=',
        'function_name_end': '>', 'arg_open': '<parameter=', 'arg_name_end': '>', 'value_open': None,
        'arg_value_close_tag': '</parameter>', 'function_close': '</function>', 'tool_close_tag': '</tool_call>',
        'strip_value_newlines': True, 'multiple_calls': True}),
    'xml_arg_key_value': (THINK_PROMPT, {
        'family': 'XmlToolParser', 'tool_open_tag': '<tool_call>', 'function_open': '', 'function_name_end': None,
        'arg_open': '<arg_key>', 'arg_name_end': '</arg_key>', 'value_open': '<arg_value>',
        'arg_value_close_tag': '</arg_value>', 'function_close': None, 'tool_close_tag': '</tool_call>',
        'strip_value_newlines': False, 'multiple_calls': False}),
    'xml_name_attribute': ({**THINK_MODEL, 'message_field': 'reasoning'}, {
        'family': 'XmlToolParser', 'tool_open_tag': '<function name="', 'function_open': '',
        'function_name_end': '">', 'arg_open': '<param name="', 'arg_name_end': '">', 'value_open': None,
        'arg_value_close_tag': '</param>', 'function_close': None, 'tool_close_tag': '</function>',
        'strip_value_newlines': False, 'multiple_calls': False}),
    # attribute-named markup: the DSML family (tried before the XML-like reading of the same text)
    'xml_invoke_parameter': (THINK_PROMPT, {
        'family': 'DsmlToolParser', 'dsml_token': '', 'tool_calls_block_name': 'minimax:tool_call', 'block_lead': '',
        'invoke_element': 'invoke', 'parameter_element': 'parameter', 'call_name_attribute': 'name',
        'parameter_key_attribute': 'name', 'string_attribute': None, 'schema_typed_values': True}),
    'dsml_typed': ({**THINK_PROMPT, 'thinking_switches': ['thinking']}, {
        'family': 'DsmlToolParser', 'dsml_token': '｜DSML｜', 'tool_calls_block_name': 'function_calls',
        'block_lead': '\n\n', 'invoke_element': 'invoke', 'parameter_element': 'parameter',
        'call_name_attribute': 'name', 'parameter_key_attribute': 'name', 'string_attribute': 'string',
        'string_attribute_values': ['true']}),
    # namespace-marked elements (MiniMax M3): <mm:think> opened by the prompt only for thinking_mode="enabled"
    'ns_elements': ({'open': '<mm:think>', 'close': '</mm:think>', 'message_field': 'reasoning_content',
                     'open_tag_in_prompt': True, 'thinking_switches': [],
                     'thinking_values': [['thinking_mode', 'enabled']]},
                    {'family': 'NsElementToolParser', 'namespace': ']<]minimax[>[', 'tool_calls_element': 'tool_call',
                     'invoke_element': 'invoke', 'call_name_attribute': 'name'}),
    # XTML channels (Kimi K3): channel markers for reasoning, the answer and the end of the message
    'xtml_channels': ({'open': '<|open|>think<|sep|>', 'close': '<|close|>think<|sep|>',
                       'message_field': 'reasoning_content', 'open_tag_in_prompt': True, 'thinking_switches': []}, {
        'family': 'DsmlToolParser', 'dsml_token': '', 'tag_open': '<|open|>', 'end_tag_open': '<|close|>',
        'tag_close': '<|sep|>', 'tool_calls_block_name': 'tools', 'block_lead': '', 'invoke_element': 'call',
        'parameter_element': 'argument', 'call_name_attribute': 'tool', 'parameter_key_attribute': 'key',
        'string_attribute': 'type', 'string_attribute_values': ['string'],
        'content_markers': ['<|open|>response<|sep|>', '<|close|>response<|sep|>', '<|close|>message<|sep|>']}),
    'sections_call_id': (THINK_PROMPT, {
        'family': 'SectionToolParser', 'section_begin': '<|tool_calls_section_begin|>',
        'section_end': '<|tool_calls_section_end|>', 'call_begin': '<|tool_call_begin|>',
        'argument_begin': '<|tool_call_argument_begin|>', 'call_end': '<|tool_call_end|>', 'header_layout': 'call_id'}),
    'sections_fenced': (THINK_PROMPT, {
        'family': 'SectionToolParser', 'section_begin': '<｜tool▁calls▁begin｜>', 'section_end': '<｜tool▁calls▁end｜>',
        'call_begin': '<｜tool▁call▁begin｜>', 'argument_begin': '<｜tool▁sep｜>', 'call_end': '<｜tool▁call▁end｜>',
        'header_layout': 'type', 'argument_fence': '```'}),
    'sections_name': ({**THINK_PROMPT, 'thinking_switches': ['thinking']}, {
        'family': 'SectionToolParser', 'section_begin': '<｜tool▁calls▁begin｜>', 'section_end': '<｜tool▁calls▁end｜>',
        'call_begin': '<｜tool▁call▁begin｜>', 'argument_begin': '<｜tool▁sep｜>', 'call_end': '<｜tool▁call▁end｜>',
        'header_layout': 'name'}),
    'json_name_header': ({'open': '[THINK]', 'close': '[/THINK]', 'message_field': 'reasoning_content',
                          'open_tag_in_prompt': False, 'thinking_switches': []},
                         {'family': 'JsonHeaderToolParser', 'tool_open_tag': '[TOOL_CALLS]', 'tool_close_tag': None,
                          'argument_marker': '[ARGS]'}),
    'brace_calls': ({'open': '<|channel>thought\n', 'close': '<channel|>', 'message_field': 'reasoning_content',
                     'open_tag_in_prompt': False, 'thinking_switches': []}, {'family': 'BraceCallToolParser', 'tool_open_tag': '<|tool_call>',
                           'tool_close_tag': '<tool_call|>', 'string_delimiter': '<|"|>', 'call_prefixes': ['call:']}),
    'json_array_framed': (
        {'open': '<|START_THINKING|>', 'close': '<|END_THINKING|>', 'message_field': 'reasoning_content',
         'open_tag_in_prompt': False, 'thinking_switches': []},
        {'family': 'JsonToolParser', 'tool_open_tag': '<|START_ACTION|>', 'tool_close_tag': '<|END_ACTION|>',
         'name_field': 'tool_name', 'argument_field': 'parameters', 'envelope_array': True,
         'content_markers': ['<|START_RESPONSE|>', '<|END_RESPONSE|>']}),
    # built-ins with framing of their own (tests/test_chat_template_equivalence.py compares them)
    'cohere_command4': ({'open': '<|START_THINKING|>', 'close': '<|END_THINKING|>',
                         'message_field': 'reasoning_content', 'open_tag_in_prompt': True, 'thinking_switches': []},
                        {'family': 'JsonToolParser', 'tool_open_tag': '<|START_ACTION|>',
                         'tool_close_tag': '<|END_ACTION|>', 'name_field': 'tool_name', 'argument_field': 'parameters',
                         'envelope_array': True, 'content_markers': ['<|START_TEXT|>', '<|END_TEXT|>']}),
    'ernie_response': (THINK_PROMPT, {'family': 'JsonToolParser', 'tool_open_tag': '<tool_call>',
                                      'tool_close_tag': '</tool_call>', 'name_field': 'name',
                                      'argument_field': 'arguments', 'content_markers': ['<response>', '</response>']}),
    # the calls inside the answer frame; '</answer>' only in the shared end of turn: both content markers
    'hunyuan_answer': (THINK_MODEL, {'family': 'JsonToolParser', 'tool_open_tag': '<tool_calls>',
                                     'tool_close_tag': '</tool_calls>', 'name_field': 'name',
                                     'argument_field': 'arguments', 'envelope_array': True,
                                     'content_markers': ['<answer>', '</answer>']}),
    'hy_suffixed': ({**THINK_PROMPT, 'open': '<think:opensource>', 'close': '</think:opensource>'}, {
        'family': 'XmlToolParser', 'tool_open_tag': '<tool_calls:opensource>',
        'function_open': '<tool_call:opensource>',
        'function_name_end': '<tool_sep:opensource>', 'arg_open': '<arg_key:opensource>',
        'arg_name_end': '</arg_key:opensource>', 'value_open': '<arg_value:opensource>',
        'arg_value_close_tag': '</arg_value:opensource>', 'function_close': '</tool_call:opensource>',
        'tool_close_tag': '</tool_calls:opensource>', 'strip_value_newlines': False, 'multiple_calls': True}),
    # several markers before the name and a preamble after it: the per-request markers are text between calls
    'plamo_requests': ({**THINK_PROMPT, 'open': '<|plamo:begin_think:plamo|>', 'close': '<|plamo:end_think:plamo|>'}, {
        'family': 'SectionToolParser', 'section_begin': '<|plamo:begin_tool_requests:plamo|>',
        'section_end': '<|plamo:end_tool_requests:plamo|>', 'call_begin': '<|plamo:begin_tool_name:plamo|>',
        'argument_begin': '<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json'
                          '<|plamo:msg|>',
        'call_end': '<|plamo:end_tool_arguments:plamo|>', 'header_layout': 'name'}),
    'k2_horizon': ({**THINK_PROMPT, 'open': '<ifm|think>', 'close': '</ifm|think>'}, {
        'family': 'XmlToolParser', 'tool_open_tag': '<ifm|tool_calls>', 'function_open': '<ifm|tool_call>',
        'function_name_end': None, 'arg_open': '<ifm|arg_key>', 'arg_name_end': '</ifm|arg_key>',
        'value_open': '<ifm|arg_value>', 'arg_value_close_tag': '</ifm|arg_value>',
        'function_close': '</ifm|tool_call>',
        'tool_close_tag': '</ifm|tool_calls>', 'strip_value_newlines': False, 'multiple_calls': True}),
    # attribute-named calls in a special-token section, a per-call header the family skips
    'step3_steptml': (THINK_PROMPT, {
        'family': 'DsmlToolParser', 'dsml_token': 'steptml:', 'tool_calls_block_name': '',
        'block_open_tag': '<｜tool_calls_begin｜>', 'block_close_tag': '<｜tool_calls_end｜>', 'block_lead': '',
        'invoke_element': 'invoke', 'parameter_element': 'parameter', 'call_name_attribute': 'name',
        'parameter_key_attribute': 'name', 'string_attribute': None, 'schema_typed_values': True}),
    'granite_function_call': (None, {'family': 'JsonToolParser', 'tool_open_tag': '<function_call>',
                                     'tool_close_tag': None, 'name_field': 'name', 'argument_field': 'arguments'}),
    # block headers: the prompt's last marker opens every block, the call name in the header (Inkling)
    'inkling_blocks': ({'open': '<|content_thinking|>', 'close': '<|end_message|>', 'message_field': 'reasoning_content',
                        'open_tag_in_prompt': False, 'thinking_switches': []}, {
        'family': 'JsonToolParser', 'tool_open_tag': '<|content_invoke_tool_json|>', 'tool_close_tag': '<|end_message|>',
        'name_field': 'name', 'argument_field': 'args',
        'content_markers': ['<|message_model|>', '<|content_text|>', '<|end_message|>'],
        'header_markers': ['<|message_model|>'],
        'header_ends': ['<|content_invoke_tool_json|>', '<|content_text|>', '<|content_thinking|>'],
        'header_at_start': True}),
    'granite_tool_call': (None, {'family': 'JsonToolParser', 'tool_open_tag': '<|tool_call|>', 'tool_close_tag': None,
                                 'name_field': 'name', 'argument_field': 'arguments', 'envelope_array': True}),
    # no marker before the calls: the built-in bare readings (llama3_json, pythonic), their open markers kept
    'bare_json': (None, {'family': 'JsonToolParser', 'tool_open_tag': '<|python_tag|>', 'tool_close_tag': None,
                         'name_field': 'name', 'argument_field': 'parameters', 'argument_field_aliases': ['arguments'],
                         'bare_call_open': '{'}),
    'pythonic_bare': (None, {'family': 'PythonicToolParser', 'tool_open_tag': '<|python_start|>',
                             'tool_close_tag': '<|python_end|>', 'bare_call_open': '[', 'json_literals': True}),
    'pythonic_tags': (None, {'family': 'PythonicToolParser', 'tool_open_tag': '<|tool_call_start|>',
                             'tool_close_tag': '<|tool_call_end|>', 'json_literals': True}),
    'pythonic_no_brackets': (THINK_PROMPT, {'family': 'PythonicToolParser', 'tool_open_tag': '<function_calls>',
                                            'tool_close_tag': '</function_calls>', 'call_list_brackets': False,
                                            'json_literals': True}),
}

REFUSED: dict[str, tuple[str, str]] = {
    'plain_chat': ('template', 'neither reasoning nor tool calls'),
    'bare_json_after_content': ('tool_calls', 'the built-in llama3_json reading (a bare call at the start of the '
                                              'response) does not parse'),
    'xml_python_values': ('arguments', 'does not parse the template\'s own rendering'),
    'ns_elements_bare': ('tool_calls', 'without one namespace marker before every tag'),
    'json_name_keyed_merged': ('tool_calls', 'several calls are keys of one JSON object'),
    'xtml_unnamed_close': ('arguments', "closed by an end token, 'argument' and '<|sep|>'"),
    # Granite 3.2: the reasoning opens and closes with prose, not markers
    'granite_prose': ('reasoning', "the reasoning closes with 'Here is my response:', but no marker right before "
                                   "it opens it"),
}


@pytest.mark.parametrize('name', sorted(DERIVED))
def test_derived_declarations(name: str) -> None:
    reasoning, tools = DERIVED[name]
    summary = _derive(name).summary()
    assert summary['reasoning'] == reasoning
    assert summary['tool_calls'] == tools
    assert summary['proved_on']['chunk_sizes'] == [1, 4, 16, 'whole']
    assert summary['content_markers'] == (tools or {}).get('content_markers', [])


def test_every_template_file_is_covered() -> None:
    files = {p.stem for p in TEMPLATES.glob('*.jinja')}
    assert files == set(DERIVED) | set(REFUSED)


@pytest.mark.parametrize('name', sorted(REFUSED))
def test_refused_with_the_part_and_reason(name: str) -> None:
    part, reason = REFUSED[name]
    with pytest.raises(TemplateDerivationError) as info:
        _derive(name)
    assert info.value.part == part
    assert reason in info.value.reason
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(f'cannot derive a dialect from the chat template ({part}): ')


def test_classes_are_declarations_on_the_compiled_families() -> None:
    bases = {'json_tags_think': JsonToolParser, 'xml_arg_key_value': XmlToolParser,
             'pythonic_tags': PythonicToolParser}
    for name, base in bases.items():
        tool = _derive(name).tool_parser
        assert tool.__bases__ == (base,)
        assert tool.__module__ == 'lmparse.templates'


# ---- the derived parsers on outputs the synthetic turns never showed ---------------------------------

TOOLS = [{'type': 'function', 'function': {'name': n, 'parameters': {
    'type': 'object', 'properties': {'city': {'type': 'string'}, 'days': {'type': 'integer'},
                                     'flags': {'type': 'array'}}}}} for n in ('forecast', 'lookup')]

# name -> (an output in the template's syntax, expected (content, reasoning, [(name, args)]))
OUTPUTS: dict[str, tuple[str, tuple[str | None, str | None, list[tuple[str, dict[str, Any]]]]]] = {
    'json_tags_think': (
        '<think>\nThe user wants </tool_call> rules.\n</think>\n\nChecking.\n<tool_call>\n'
        '{"name": "forecast", "arguments": {"city": "Oslo </tool_call>", "days": 2}}\n</tool_call>\n'
        '<tool_call>\n{"name": "lookup", "arguments": {}}\n</tool_call>',
        ('\n\nChecking.\n', '\nThe user wants </tool_call> rules.\n',
         [('forecast', {'city': 'Oslo </tool_call>', 'days': 2}), ('lookup', {})])),
    'xml_function_parameter': (
        'Plan </parameter> it.\n</think>\n\n<tool_call>\n<function=forecast>\n<parameter=city>\nSão Paulo\n'
        '</parameter>\n<parameter=days>\n7\n</parameter>\n<parameter=flags>\n["a", 1]\n</parameter>\n</function>\n'
        '</tool_call>',
        ('\n\n', 'Plan </parameter> it.\n', [('forecast', {'city': 'São Paulo', 'days': 7, 'flags': ['a', 1]})])),
    'xml_arg_key_value': (
        'Hmm.</think>\n\nSure.\n\n<tool_call>lookup\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n'
        '</tool_call>',
        ('\n\nSure.\n\n', 'Hmm.', [('lookup', {'city': '北京'})])),
    'json_array_framed': (
        '<|START_THINKING|>Plan.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "forecast", '
        '"parameters": {"city": "Lima"}}]<|END_ACTION|><|START_RESPONSE|>Done <b>.<|END_RESPONSE|>',
        ('Done <b>.', 'Plan.', [('forecast', {'city': 'Lima'})])),
    'ns_elements': (
        'Hi <mm:think>Plan </city> it.</mm:think>Checking.\n]<]minimax[>[<tool_call>\n'
        ']<]minimax[>[<invoke name="forecast">\n]<]minimax[>[<city>Oslo </city> <b>]<]minimax[>[</city>\n'
        ']<]minimax[>[<days>2]<]minimax[>[</days>\n]<]minimax[>[<flags>]<]minimax[>[<item>a</item>]<]minimax[>[</item>'
        ']<]minimax[>[<item>b]<]minimax[>[</item>]<]minimax[>[</flags>\n]<]minimax[>[</invoke>\n'
        ']<]minimax[>[<invoke name="lookup">\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>',
        ('Hi Checking.\n', 'Plan </city> it.',
         [('forecast', {'city': 'Oslo </city> <b>', 'days': 2, 'flags': ['a</item>', 'b']}), ('lookup', {})])),
    'xtml_channels': (
        'Plan <|close|>argument<|sep|> it.<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|>'
        '<|open|>tools<|sep|><|open|>call tool="forecast" index="1"<|sep|>'
        '<|open|>argument key="city" type="string"<|sep|>Oslo <|close|>call<|sep|> x<|close|>argument<|sep|>'
        '<|open|>argument key="days" type="integer"<|sep|>2'
        '<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool="lookup" index="2"<|sep|><|close|>call<|sep|>'
        '<|close|>tools<|sep|><|close|>message<|sep|>',
        ('Checking.', 'Plan <|close|>argument<|sep|> it.',
         [('forecast', {'city': 'Oslo <|close|>call<|sep|> x', 'days': 2}), ('lookup', {})])),
    'json_name_keyed': (
        '<|inner_prefix|>Plan <|tools_suffix|>] it.<|inner_suffix|><|tools_prefix|>[{"forecast": {"city": '
        '"Oslo <|tools_suffix|>", "days": 2}}, {"lookup": {}}]<|tools_suffix|>Done.',
        ('Done.', 'Plan <|tools_suffix|>] it.',
         [('forecast', {'city': 'Oslo <|tools_suffix|>', 'days': 2}), ('lookup', {})])),
    'pythonic_tags': (
        'Calling.<|tool_call_start|>[forecast(city="Rome", days=3), lookup(flags=[true, null])]<|tool_call_end|>',
        ('Calling.', None, [('forecast', {'city': 'Rome', 'days': 3}), ('lookup', {'flags': [True, None]})])),
}


def _stream(cls: Any, chunks: list[str]) -> tuple[str | None, str | None, list[tuple[str, Any]]]:
    parser = cls({'model': 'm', 'messages': [], 'tools': TOOLS})
    content, reasoning, deltas = [], [], []
    for i, chunk in enumerate(chunks):
        for message, _ in parser.stream_chunk(chunk, [], final=i == len(chunks) - 1):
            content.append(message.content or '')
            reasoning.append(message.reasoning_content or '')
            deltas.extend(message.tool_calls or ())
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in parser.tool_parser.build_tool_calls(deltas)]
    return ''.join(content) or None, ''.join(reasoning) or None, calls


@pytest.mark.parametrize('name', sorted(OUTPUTS))
def test_derived_parser_streams_new_outputs(name: str) -> None:
    text, want = OUTPUTS[name]
    cls = from_chat_template(TEMPLATES / f'{name}.jinja')
    assert issubclass(cls, BaseResponseParser)
    rng = random.Random(7)
    chunkings = [[text]] + [fixed_chunks(text, n) for n in (1, 2, 3, 4, 8, 16, 256)]
    chunkings += [random_chunks(text, rng) for _ in range(10)]
    for chunks in chunkings:
        assert _stream(cls, chunks) == want, chunks


def test_from_chat_template_reads_a_tokenizer_and_keeps_it() -> None:
    class Tokenizer:
        chat_template = (TEMPLATES / 'json_tags_think.jinja').read_text(encoding='utf-8')
        eos_token = '</s>'

        def get_vocab(self) -> dict[str, int]:
            return {'<think>': 1, '</think>': 2}

    tok = Tokenizer()
    cls = from_chat_template(None, tokenizer=tok)
    assert cls.tokenizer is tok
    assert cls.tool_parser_cls.tool_open_tag == '<tool_call>'


def test_sources_folder_config_and_string(tmp_path: Path) -> None:
    source = (TEMPLATES / 'xml_arg_key_value.jinja').read_text(encoding='utf-8')
    folder = tmp_path / 'model'
    folder.mkdir()
    (folder / 'tokenizer_config.json').write_text(json.dumps({
        'eos_token': {'content': '<|endoftext|>'},
        'chat_template': [{'name': 'default', 'template': 'plain'}, {'name': 'tool_use', 'template': source}]}))
    from_config = load_chat_template(folder)
    assert from_config.source == source and from_config.special_tokens == {'eos_token': '<|endoftext|>'}
    (folder / 'chat_template.jinja').write_text(source + '\n')  # transformers reads the .jinja file first
    assert load_chat_template(folder).source == source + '\n'
    assert load_chat_template(source).origin == '<string>'
    summaries = {json.dumps(derive_dialect(s).summary()['tool_calls'], sort_keys=True)
                 for s in (folder, folder / 'tokenizer_config.json', source)}
    assert len(summaries) == 1
    with pytest.raises(TemplateDerivationError) as info:
        load_chat_template(tmp_path / 'missing')
    assert info.value.part == 'template'
    (tmp_path / 'empty').mkdir()
    with pytest.raises(TemplateDerivationError, match='has no chat template'):
        load_chat_template(tmp_path / 'empty')


def test_deterministic() -> None:
    template = (TEMPLATES / 'xml_function_parameter.jinja').read_text(encoding='utf-8')
    first = _uncached(template)
    for _ in range(3):
        again = _uncached(template)
        assert again.summary() == first.summary()
        assert again.python_source('x') == first.python_source('x')


def _uncached(source: str) -> Any:
    return derivation.derive_dialect(load_chat_template(source))


# ---- the sandbox and transformers' helpers ----------------------------------------------------------

def test_template_code_runs_in_the_sandbox() -> None:
    escape = ("{{ ''.__class__.__mro__[1].__subclasses__() }}{% for m in messages %}{{ m.content }}{% endfor %}"
              "<tool_call>{{ messages[-1].tool_calls }}</tool_call>")
    with pytest.raises(TemplateDerivationError) as info:
        derive_dialect(escape)
    assert info.value.part == 'rendering'
    assert 'unsafe' in info.value.reason or 'SecurityError' in info.value.reason
    mutate = "{% set x = messages.append({'role': 'user'}) %}{{ messages }}"
    with pytest.raises(TemplateDerivationError) as info:
        derive_dialect(mutate)
    assert info.value.part == 'rendering'


def test_transformers_helpers() -> None:
    tpl = load_chat_template(
        "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}{% endif %}"
        "{% generation %}{{ m.content | tojson }}{% endgeneration %}"
        "{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}{% endfor %}"
        "{{ strftime_now('%Y') }}\n  {% if true %}\nx{% endif %}")
    out = tpl.render([{'role': 'user', 'content': 'ünï <b>'}], tools=None, add_generation_prompt=False)
    # tojson keeps non-ASCII and does not HTML-escape; trim_blocks / lstrip_blocks as transformers sets them
    assert out == '"ünï <b>"12026\nx'
    with pytest.raises(Exception, match='no system'):
        tpl.render([{'role': 'system', 'content': ''}], tools=None, add_generation_prompt=False)


def test_template_errors_name_the_rendering() -> None:
    rejects = "{% for m in messages %}{% if m.role == 'assistant' %}{{ raise_exception('roles!') }}{% endif %}" \
              "{% endfor %}"
    with pytest.raises(TemplateDerivationError, match='roles!') as info:
        derive_dialect(rejects)
    assert info.value.part == 'rendering'
    with pytest.raises(TemplateDerivationError) as info:
        derive_dialect('{% for %}')
    assert info.value.part == 'template'


def test_the_proof_rejects_a_wrong_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    # a close marker read wrong must not be returned: the proof parses the renderings back and refuses
    real = derivation._derive_json

    def wrong(outputs: dict[str, str]) -> Any:
        decl = real(outputs)
        return derivation.ToolDeclaration(decl.family, decl.base, {**decl.attrs, 'tool_close_tag': '</tool>'})

    monkeypatch.setattr(derivation, '_derive_json', wrong)
    with pytest.raises(TemplateDerivationError) as info:
        _uncached((TEMPLATES / 'json_tags_think.jinja').read_text(encoding='utf-8'))
    assert info.value.part in ('tool_calls', 'arguments', 'proof')
    assert 'does not parse' in info.value.reason or 'fails on' in info.value.reason


def test_string_arguments_are_tried_when_dict_arguments_do_not_render() -> None:
    # a template that prints arguments as given (OpenAI's JSON string)
    source = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% for c in m.tool_calls or [] %}"
              "<call>{\"name\": \"{{ c.function.name }}\", \"arguments\": {{ c.function.arguments }}}</call>"
              "{% endfor %}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
    dialect = derive_dialect(source)
    assert dialect.tools.attrs['tool_open_tag'] == '<call>'
    assert any('JSON string' in note for note in dialect.notes)


# ---- python_source: a derived dialect committed as a normal one ---------------------------------------

@pytest.mark.parametrize('name', ['json_tags_think', 'xml_arg_key_value', 'pythonic_no_brackets',
                                  'json_array_no_close', 'sections_fenced', 'sections_name', 'json_name_header',
                                  'brace_calls', 'dsml_typed', 'xml_invoke_parameter', 'json_array_framed',
                                  'ns_elements', 'xtml_channels', 'json_name_keyed', 'bare_json', 'pythonic_bare'])
def test_python_source_is_the_same_dialect(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dialect = _derive(name)
    source = dialect.python_source('tpl-test')
    compile(source, f'{name}.py', 'exec')
    for registry in (lmparse.ReasoningParserManager, lmparse.ToolParserManager):
        monkeypatch.setattr(registry, '_module_dict', dict(registry.module_dict))
    namespace: dict[str, Any] = {'__name__': f'tpl_{name}'}
    exec(source, namespace)  # noqa: S102 - the module lmparse derive prints
    tool = lmparse.ToolParserManager.get('tpl-test')
    reasoning = lmparse.ReasoningParserManager.get('tpl-test') if dialect.reasoning else None
    for attr, value in dialect.tools.attrs.items():
        assert getattr(tool, attr) == value, attr
    if reasoning is not None:
        assert (reasoning.reasoning_open_tag, reasoning.reasoning_close_tag, reasoning.open_tag_in_prompt,
                tuple(reasoning.thinking_switches), tuple(reasoning.thinking_values)) == (
            dialect.reasoning.open_tag, dialect.reasoning.close_tag, dialect.reasoning.open_tag_in_prompt,
            dialect.reasoning.thinking_switches, dialect.reasoning.thinking_values)
    # the registered classes pass the same proof
    cls = BaseResponseParser.with_parsers('tpl-test' if reasoning else None, 'tpl-test')
    tpl = load_chat_template(TEMPLATES / f'{name}.jinja', special_tokens=TOKENS)
    for setting in derivation._settings(tpl):
        rendered, _ = derivation._render_turns(tpl, setting, dialect.reasoning.field if dialect.reasoning else None,
                                            False)
        derivation._prove(cls, rendered, reasoning is not None, True)


def test_python_source_rejects_a_bad_name() -> None:
    with pytest.raises(ValueError, match='parser name'):
        _derive('json_tags_think').python_source('no spaces please')


def test_missing_jinja2_is_a_clear_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_jinja(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == 'jinja2' or name.startswith('jinja2.'):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, '__import__', no_jinja)
    with pytest.raises(ImportError, match=r'lmparse\[templates\]'):
        load_chat_template('{{ messages }}').render([], tools=None, add_generation_prompt=True)


def test_valued_thinking_switches() -> None:
    # every string a thinking-named variable is compared with is a setting; those whose prompt opens the reasoning
    # become thinking_values (the built-in minimax_m3 declares ('thinking_mode', 'enabled') the same way)
    source = (TEMPLATES / 'ns_elements.jinja').read_text(encoding='utf-8')
    source = source.replace("thinking_mode == 'enabled'", "thinking_mode in ['enabled', 'forced'] and "
                                                           "thinking_mode != 'adaptive'")
    dialect = derive_dialect(source)
    assert dialect.reasoning.thinking_values == (('thinking_mode', 'enabled'), ('thinking_mode', 'forced'))
    assert dialect.summary()['proved_on']['settings'] == ['no thinking switch', 'thinking_mode=enabled',
                                                         'thinking_mode=forced', 'thinking_mode=adaptive']
    cls = dialect.response_parser()
    text = 'Plan.</mm:think>Answer.'
    for mode, want in (('enabled', ('Answer.', 'Plan.')), ('forced', ('Answer.', 'Plan.')),
                       ('adaptive', (text, None)), (None, (text, None))):
        request = {'model': 'm', 'messages': [], 'chat_template_kwargs': {'thinking_mode': mode} if mode else {}}
        parser = cls(request)
        content, _, reasoning = parser.parse_complete(text)
        assert (content, reasoning) == want, mode


def _inline_calls(calls: str) -> str:
    return ("{% for m in messages %}<|{{ m.role }}|>{% if m.role == 'assistant' %}{{ m.content or '' }}"
            "{% for c in m.tool_calls or [] %}" + calls + "{% endfor %}{% else %}{{ m.content }}{% endif %}<|end|>"
            "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")


@pytest.mark.parametrize('calls, reason', [
    # name-keyed envelopes with no marker before them (the built-in bare reading takes "name" envelopes only)
    ('{{ {c.function.name: c.function.arguments} | tojson }}', 'name-keyed JSON calls with no marker before them'),
    # a bare JSON array per call (xLAM): the bare reading takes one object
    ('[{"name": {{ c.function.name | tojson }}, "arguments": {{ c.function.arguments | tojson }}}]',
     'JSON calls with no marker before them (a bare JSON object in the text), in an array'),
    # a bare pythonic call with no list brackets
    ("{{ c.function.name }}({% for k, v in c.function.arguments.items() %}{{ k }}={{ v | tojson }}"
     "{{ ', ' if not loop.last }}{% endfor %})", 'pythonic calls with no marker before them, not in a [...] list'),
])
def test_bare_shapes_the_families_cannot_read_are_refused(calls: str, reason: str) -> None:
    with pytest.raises(TemplateDerivationError) as info:
        derive_dialect(_inline_calls(calls))
    assert info.value.part == 'tool_calls'
    assert reason in info.value.reason


def test_block_headers_need_one_block_end() -> None:
    """Inkling-shaped headers whose blocks end with a marker per kind: no one block end to close the header's
    blocks, refused (the derived framing declares one)."""
    source = ("{%- for message in messages %}{%- if message.role == 'user' %}<|message_user|><|content_text|>"
              "{{ message.content }}<|end_text|>{%- elif message.role == 'assistant' %}"
              "{%- if message.content %}<|message_model|><|content_text|>{{ message.content }}<|end_text|>{% endif %}"
              "{%- for call in message.tool_calls or [] %}<|message_model|>{{ call.function.name }}"
              "<|content_invoke_tool_json|>{{ {'name': call.function.name, 'args': call.function.arguments} | tojson }}"
              "<|end_call|>{% endfor %}{%- endif %}{%- endfor %}"
              "{%- if add_generation_prompt %}<|message_model|>{% endif %}")
    with pytest.raises(TemplateDerivationError) as info:
        derive_dialect(source)
    assert info.value.part == 'template'
    assert 'every message block opens with <|message_model|>, but the turns do not end with one block-end marker' \
        in info.value.reason


def test_block_headers_printed_on_both_parsers() -> None:
    """The derived Inkling framing is declared on the reasoning and the tool parser, in the printed module too."""
    dialect = _derive('inkling_blocks')
    for cls in (dialect.reasoning_parser, dialect.tool_parser):
        assert cls.header_markers == ('<|message_model|>',)
        assert cls.header_at_start is True
    source = dialect.python_source('ink')
    assert source.count("header_markers = ('<|message_model|>',)") == 2
