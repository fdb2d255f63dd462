"""Where lmparse's SGLang detectors (replace mode) differ from a behaviour SGLang's own tests pin, and why.

Consumed by ``tests/integrations/test_sglang_behaviours.py``: each listed
behaviour xfails strictly on lmparse (it must still differ) and still passes on
SGLang's own detector. ``kind`` is one of

- ``engine internal``: the SGLang test pins an internal of SGLang's detector
  (a private attribute, a buffering quirk) that no drop-in can honour and no
  SGLang user observes through the API;
- ``lmparse decision``: both are defensible; lmparse's documented choice differs
  (the engine's behaviour is stated beside it);
- ``not yet``: lmparse should follow SGLang and does not yet (with a repro).
"""
from __future__ import annotations

from typing import NamedTuple

FC = 'test/registered/unit/function_call/'
RP = 'test/registered/unit/parser/test_reasoning_parser.py'


class Difference(NamedTuple):
    source: str  # the SGLang test the behaviour restates (file::class::test)
    kind: str
    reason: str


_HUNYUAN = ("SGLang's hunyuan detectors read their markers from the served tokenizer's vocabulary "
            "and fall back to bare <think> / <tool_calls> without one (what this test uses); a detector lmparse "
            "registers receives no tokenizer, so it declares the released Hy3 checkpoints' markers "
            "(<think:opensource>, <tool_calls:opensource>, ...), which is what SGLang resolves for those checkpoints")
_K2_STRIP = ("SGLang's kimi_k2 tool detector deletes a stray Kimi marker (a section end or argument "
             "begin with no open call) from normal text; lmparse never deletes text it cannot attribute, so the marker "
             "stays content (SGLang's serving usually detokenizes with skip_special_tokens, which drops it first)")

_STRIPS_BEFORE_CALL = ("SGLang's non-streaming hermes / mistral / glm45 detectors strip the whitespace between the text and the "
                       "call; their streaming path keeps it (its own tests pin both). lmparse keeps the model's text "
                       "exactly, so one chunk and a stream give the same content")

_HOLDS_CLOSE_PREFIX = ("outside reasoning SGLang's base detector holds a prefix of the close tag ('</') until the next "
                       "chunk; lmparse releases it at once, since a close tag cannot end a block that is not open. "
                       'The text is the same, only earlier (SGLang pins the hold chunk by chunk)')

DIFFERENCES: dict[str, Difference] = {
    'minimax_m2_unclosed_block_stays_text': Difference(
        FC + 'test_minimax_m2_detector.py::TestDetectAndParse::test_incomplete_block_no_closing_tag', 'lmparse decision',
        "SGLang's one-piece minimax-m2 parse keeps a block with no '</minimax:tool_call>' (output cut short) as text; "
        'lmparse emits the call it read, as its stream already has by then (a streamed call cannot be taken back), '
        'so one chunk and a stream agree'),
    'glm45_leading_text_stripped': Difference(
        FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_leading_text_preserved', 'lmparse decision',
        _STRIPS_BEFORE_CALL),
    'glm45_name_without_separator_no_call': Difference(
        FC + 'test_glm4_moe_detector.py::TestGlm4MoeDetector::test_missing_name_separator_yields_no_calls',
        'lmparse decision',
        "SGLang's glm45 rejects '<tool_call>NAME</tool_call>' (no newline after the name); lmparse reads it as a "
        'call with no arguments, the form GLM-4.7 writes, so one GLM family reads both'),
    'qwen3_stream_stray_close_prefix_not_lost': Difference(
        RP + '::TestBufferLossBugFix::test_partial_end_tag_buffer_loss_bug', 'lmparse decision', _HOLDS_CLOSE_PREFIX),
    'qwen3_stream_fragments_released_together': Difference(
        RP + '::TestBufferLossBugFix::test_multiple_partial_fragments', 'lmparse decision', _HOLDS_CLOSE_PREFIX),
    'hermes_leading_text_stripped': Difference(
        FC + 'test_hermes_detector.py::TestHermesDetector::test_tool_call_with_leading_text', 'lmparse decision',
        _STRIPS_BEFORE_CALL),
    'mistral_json_array_leading_text_stripped': Difference(
        FC + 'test_mistral_detector.py::TestMistralDetector::test_json_array_with_leading_text', 'lmparse decision',
        _STRIPS_BEFORE_CALL),
    'mistral_args_form_leading_text_stripped': Difference(
        FC + 'test_mistral_detector.py::TestMistralDetector::test_compact_format_with_leading_text', 'lmparse decision',
        _STRIPS_BEFORE_CALL),
    'mistral_invalid_array_consumed': Difference(
        FC + 'test_mistral_detector.py::TestMistralDetector::test_json_array_with_invalid_json', 'lmparse decision',
        "SGLang drops '[TOOL_CALLS] [not json]' entirely; lmparse consumes the marker and keeps the text it could not "
        'read as content (it never deletes model text)'),
    'pythonic_stream_open_call_held': Difference(
        FC + 'test_pythonic_detector.py::TestPythonicDetector::test_streaming_incomplete_tool_call', 'lmparse decision',
        "SGLang's pythonic detector buffers a call list until its ']' and emits its calls only then; lmparse streams "
        "a call's name at its '(' and its arguments as they arrive (for 'Hi! [search(query=' the name 'search'), as "
        "every lmparse family does. The text before the list ('Hi! ') is the same, and so is the complete result"),
    'pythonic_malformed_no_call': Difference(
        FC + 'test_pythonic_detector.py::TestPythonicDetector::test_malformed_python_returns_empty_calls',
        'lmparse decision',
        "a stream cannot take back a name it sent at the call's '(': lmparse keeps the call with only its stable "
        "arguments ('' for '[get_weather(city=)]'), and the rest of the malformed list up to its ']' is not "
        'content; SGLang parses the whole list at once and emits no call'),
    'hunyuan_tool_section_ends_reasoning': Difference(
        RP + '::TestHunyuanDetector::test_detect_and_parse_tool_interrupt', 'engine internal', _HUNYUAN),
    'hunyuan_stream_after_interrupt_is_normal': Difference(
        RP + '::TestHunyuanDetector::test_streaming_after_interrupt_is_normal', 'engine internal', _HUNYUAN),
    'kimi_k2_stray_section_end_not_in_text': Difference(
        FC + 'test_kimik2_detector.py::TestKimiK2DetectorSpecialTokenLeakage::test_no_leak_in_non_tool_text',
        'lmparse decision', _K2_STRIP),
    'kimi_k2_stray_argument_begin_not_in_text': Difference(
        FC + 'test_kimik2_detector.py::TestKimiK2DetectorSpecialTokenLeakage::test_no_leak_of_argument_begin_token',
        'lmparse decision', _K2_STRIP),
}

# Behaviours SGLang's current tests pin that SGLang 0.5.23 itself does not follow yet (its detector changed after the
# release); they xfail strictly on SGLang's own detector.
SGLANG_0523_DIFFERS: dict[str, str] = {
    'deepseek_v32_partial_prefix_held': ("SGLang 0.5.23's DSML detectors hold all the prose of a chunk that ends in a "
                                         "'<' (released only with the next chunk)"),
    'deepseek_v4_partial_prefix_held': ("SGLang 0.5.23's DSML detectors hold all the prose of a chunk that ends in a "
                                        "'<' (released only with the next chunk)"),
    'step3_call_without_parameters': "SGLang 0.5.23's step3 detector drops a call with no parameters",
    'step3_mixed_calls': "SGLang 0.5.23's step3 detector drops a call with no parameters",
    'step3_stream_equals_one_piece': ("SGLang 0.5.23's step3 detector streamed a character at a time emits no call "
                                      '(and drops parameterless calls)'),
    'minimax_m2_stream_equals_one_piece': "SGLang 0.5.23's minimax-m2 detector streamed a character at a time emits no call",
    'minimax_m2_stream_two_blocks_indexed': "SGLang 0.5.23's minimax-m2 detector streamed a character at a time emits no call",
    'deepseekv31_prefix_once_at_any_split': ("SGLang 0.5.23's deepseekv31 detector drops the text before the calls when "
                                             'it arrives in the chunk that opens them'),
    'deepseekv31_prefix_not_repeated': ("SGLang 0.5.23's deepseekv31 detector drops the text before the calls when it "
                                        'arrives in the chunk that opens them'),
    'deepseekv31_call_without_outer_marker': "SGLang 0.5.23 also needs the outer '<｜tool▁calls▁begin｜>' marker",
    'hermes_stream_undeclared_between_declared': ("SGLang 0.5.23's streaming base detector loses the declared call that "
                                                  'follows a dropped undeclared one (fixed later in SGLang)'),
    'qwen3_coder_drifted_close_marker_dropped': 'SGLang 0.5.23 also keeps the drifted marker in the value',
    'pythonic_positional_argument_dropped': ("SGLang 0.5.23 drops a call whose arguments are positional; SGLang's "
                                             'later detector (and lmparse) keep the call with no arguments'),
}
