"""The namespaces of the swapped ``lmdeploy.serve.parsers`` modules (LMDeploy 0.18).

Every name LMDeploy 0.18's parser modules define is here with LMDeploy's
behaviour, except the internals listed in :data:`NOT_PROVIDED` (each with the
reason). ``tests/compat/test_lmdeploy_names.py`` walks LMDeploy's installed
modules and checks exactly that, so a name LMDeploy adds shows up as a failure.
"""
from __future__ import annotations

import __future__
import abc
import dataclasses
import importlib
import json
import json.encoder
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import lmparse
from lmparse import request as _req
from lmparse.registry import LEGACY_REASONING_PARSER_NAMES

__all__ = ['LMDEPLOY_ALL', 'NOT_PROVIDED', 'JsonParsePhase', 'XmlParsePhase', 'namespaces']

ROOT = 'lmdeploy.serve.parsers'
TOOL = ROOT + '.tool_parser'
REASONING = ROOT + '.reasoning_parser'

JsonParsePhase = Literal['payload_start', 'key', 'colon', 'value_start', 'arguments', 'skip_value', 'after_value']
XmlParsePhase = Literal['function', 'arg_start', 'arg_name', 'arg_value', 'done']

# LMDeploy's ``__all__`` of its three packages (its other modules have none).
LMDEPLOY_ALL: dict[str, list[str]] = {
    ROOT: ['ResponseParser', 'ResponseParserManager', 'GptOssResponseParser', 'validate_parser_names'],
    REASONING: ['LEGACY_REASONING_PARSER_NAMES', 'ReasoningParser', 'ReasoningParserManager',
                'DeepSeekV3ReasoningParser', 'DeepSeekV32ReasoningParser', 'DeepSeekV4ReasoningParser'],
    TOOL: ['ToolParser', 'ToolParserManager', 'JsonToolParser', 'XmlToolParser', 'DeepSeekV32ToolParser',
           'DeepSeekV4ToolParser', 'Glm47ToolParser', 'Internlm2ToolParser', 'Llama3JsonToolParser',
           'Qwen3ToolParser', 'Qwen3CoderToolParser', 'InternS2PreviewToolParser', 'KimiK2ToolParser'],
}

_HARMONY = ('openai_harmony wiring of LMDeploy\'s Harmony parser; lmparse parses Harmony itself and never '
            'loads openai_harmony or its vocabulary')
_PLUMBING = 'a module LMDeploy imports for its own implementation; lmparse does not use it'
# (module, name) -> why the swapped module does not provide it.
NOT_PROVIDED: dict[tuple[str, str], str] = {
    (ROOT + '._openai_harmony', 'HarmonyEncodingName'): _HARMONY,
    (ROOT + '._openai_harmony', 'Role'): _HARMONY,
    (ROOT + '._openai_harmony', 'StreamableParser'): _HARMONY,
    (ROOT + '._openai_harmony', 'load_harmony_encoding'): _HARMONY,
    (ROOT + '._openai_harmony', 'get_encoding'): _HARMONY,
    (ROOT + '._openai_harmony', '_harmony_encoding'): _HARMONY,
    (ROOT + '._openai_harmony', 'shortuuid'): _PLUMBING,
    (ROOT + '.gpt_oss_response_parser', 'openai_harmony'): _HARMONY,
    (TOOL + '.tool_parser', 'shortuuid'): _PLUMBING,
    (TOOL + '.deepseek_v4_tool_parser', 'deepseek_v4_encoding'): _PLUMBING,
    (TOOL + '.tool_parser', '_PENDING_INDEX'): 'private state of LMDeploy\'s ToolParser (call-index sentinel)',
    (TOOL + '.tool_parser', '_REJECTED_INDEX'): 'private state of LMDeploy\'s ToolParser (call-index sentinel)',
    (TOOL + '.tool_parser', '_ToolCallParts'): 'private accumulator of LMDeploy\'s ToolParser.build_tool_calls',
    (TOOL + '.xml_tool_parser', 'XmlParseState'): 'internal parse state of LMDeploy\'s XmlToolParser; '
                                                 'lmparse\'s XML family keeps its state in compiled code',
    (TOOL + '.xml_tool_parser', '_XmlArgState'): 'private per-argument state of LMDeploy\'s XmlToolParser',
}

# Python-level imports LMDeploy's modules carry; the swapped modules hold the same objects.
_STD: dict[str, Any] = {
    'annotations': __future__.annotations, 'json': json, 're': re, 'abstractmethod': abc.abstractmethod,
    'TYPE_CHECKING': TYPE_CHECKING, 'Any': Any, 'ClassVar': ClassVar, 'Literal': Literal,
    'dataclass': dataclasses.dataclass, 'field': dataclasses.field,
    'encode_basestring': json.encoder.encode_basestring,
}

# LMDeploy's json_value_scanner: the characters its container scan stops at.
_JSON_CONTAINER_SPECIAL = re.compile(r'["{}\[\]]')


def _parse_tool_call_arguments_dict(arguments: Any) -> dict[str, Any] | None:
    """LMDeploy's helper: decode tool-call ``arguments`` for template rendering.

    A JSON object string gives the dict; another JSON value or a non-string
    gives None; invalid JSON raises LMDeploy's ``ValueError`` (position, line
    and column in the message).
    """
    if not isinstance(arguments, str):
        return None
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as e:
        raise ValueError(f'Tool call arguments contain invalid JSON at position {e.pos} '
                         f'(line {e.lineno}, column {e.colno})') from e
    except TypeError as e:  # not reachable for str, kept as LMDeploy has it
        raise ValueError('Tool call arguments contain invalid JSON') from e
    return parsed if isinstance(parsed, dict) else None


def _normalize_request_messages(messages: list[Any]) -> list[Any] | None:
    """LMDeploy's helper: a render-safe copy of ``messages`` (None when nothing changes).

    Assistant ``tool_calls[].function.arguments`` JSON-object strings become
    dicts; only the touched dicts are copied (lmparse's normalisation, which
    makes the same decisions as LMDeploy's).
    """
    return _req._normalize_messages(messages)


def _get_logger() -> Any:
    try:
        return importlib.import_module('lmdeploy.utils').get_logger
    except Exception:  # noqa: BLE001 - lmdeploy.utils needs torch; without it, a logging equivalent
        def get_logger(name: str = 'lmdeploy', *args: Any, **kwargs: Any) -> logging.Logger:
            return logging.getLogger(name)
        return get_logger


def namespaces(p: Any, own: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Names of each swapped module: LMDeploy 0.18's, minus :data:`NOT_PROVIDED`.

    ``p`` holds LMDeploy's protocol types (``DeltaMessage``...); ``own`` the
    compat layer's objects (``BaseResponseParser``, ``GptOssResponseParser``,
    ``Internlm2ToolParser``, ``Registry``, the three managers,
    ``validate_parser_names``).
    """
    from lmparse.tools.dsml import DSML_TOKEN

    log = logging.getLogger('lmdeploy')
    s = _STD
    get_logger = _get_logger()
    rpm, rm, tm = own['ResponseParserManager'], own['ReasoningParserManager'], own['ToolParserManager']
    registry, validate = own['Registry'], own['validate_parser_names']
    base, gpt_oss, internlm2 = own['BaseResponseParser'], own['GptOssResponseParser'], own['Internlm2ToolParser']
    reasoning_base = {'ReasoningParser': lmparse.ReasoningParser, 'ReasoningParserManager': rm}
    tool_base = {'ToolParser': lmparse.ToolParser, 'ToolParserManager': tm}
    tool_classes = {
        'DeepSeekV32ToolParser': lmparse.DeepSeekV32ToolParser,
        'DeepSeekV4ToolParser': lmparse.DeepSeekV4ToolParser,
        'Glm47ToolParser': lmparse.Glm47ToolParser,
        'InternS2PreviewToolParser': lmparse.InternS2PreviewToolParser,
        'Internlm2ToolParser': internlm2,
        'JsonToolParser': lmparse.JsonToolParser,
        'KimiK2ToolParser': lmparse.KimiK2ToolParser,
        'Llama3JsonToolParser': lmparse.Llama3JsonToolParser,
        'Qwen3ToolParser': lmparse.Qwen3ToolParser,
        'Qwen3CoderToolParser': lmparse.Qwen3CoderToolParser,
        'XmlToolParser': lmparse.XmlToolParser,
    }
    ann = {'annotations': s['annotations']}

    def pick(*names: str) -> dict[str, Any]:
        return {n: s[n] for n in names}

    return {
        ROOT: {'GptOssResponseParser': gpt_oss, 'ResponseParser': lmparse.ResponseParser,
               'ResponseParserManager': rpm, 'validate_parser_names': validate},
        ROOT + '.response_parser': {
            **pick('annotations', 'json', 'abstractmethod', 'TYPE_CHECKING', 'Any', 'ClassVar'),
            'Registry': registry, 'DeltaMessage': p.DeltaMessage, 'get_logger': get_logger, 'logger': log,
            'ResponseParserManager': rpm, 'validate_parser_names': validate,
            '_parse_tool_call_arguments_dict': _parse_tool_call_arguments_dict,
            '_normalize_request_messages': _normalize_request_messages,
            'normalize_chat_request': _req.normalize_chat_request,
            'ResponseParser': lmparse.ResponseParser, 'BaseResponseParser': base},
        REASONING: {**reasoning_base, 'LEGACY_REASONING_PARSER_NAMES': LEGACY_REASONING_PARSER_NAMES,
                    'DeepSeekV3ReasoningParser': lmparse.DeepSeekV3ReasoningParser,
                    'DeepSeekV32ReasoningParser': lmparse.DeepSeekV32ReasoningParser,
                    'DeepSeekV4ReasoningParser': lmparse.DeepSeekV4ReasoningParser},
        REASONING + '.reasoning_parser': {**reasoning_base, **pick('annotations', 'TYPE_CHECKING'),
                                          'Registry': registry,
                                          'LEGACY_REASONING_PARSER_NAMES': LEGACY_REASONING_PARSER_NAMES},
        REASONING + '.deepseek_v3_reasoning_parser': {
            **reasoning_base, 'DeepSeekV3ReasoningParser': lmparse.DeepSeekV3ReasoningParser},
        REASONING + '.deepseek_v32_reasoning_parser': {
            **reasoning_base, 'DeepSeekV32ReasoningParser': lmparse.DeepSeekV32ReasoningParser},
        REASONING + '.deepseek_v4_reasoning_parser': {
            **reasoning_base, 'DeepSeekV4ReasoningParser': lmparse.DeepSeekV4ReasoningParser},
        TOOL: {**tool_base, **tool_classes},
        TOOL + '.tool_parser': {**tool_base, **pick('annotations', 'dataclass', 'field', 'TYPE_CHECKING', 'Any',
                                                    'ClassVar'),
                                'Registry': registry, 'DeltaToolCall': p.DeltaToolCall,
                                'FunctionCall': p.FunctionCall, 'ToolCall': p.ToolCall,
                                'dump_tools': _req.dump_tools},
        TOOL + '.json_tool_parser': {**pick('annotations', 'json', 'ClassVar', 'Literal'),
                                     'ToolParser': lmparse.ToolParser, 'JsonToolParser': lmparse.JsonToolParser,
                                     'JsonValueScanner': lmparse.JsonValueScanner, 'DeltaToolCall': p.DeltaToolCall,
                                     'JsonParsePhase': JsonParsePhase},
        TOOL + '.json_value_scanner': {**pick('annotations', 're'), 'JsonValueScanner': lmparse.JsonValueScanner,
                                       '_JSON_CONTAINER_SPECIAL': _JSON_CONTAINER_SPECIAL},
        TOOL + '.xml_tool_parser': {**pick('annotations', 'json', 'dataclass', 'field', 'encode_basestring',
                                           'TYPE_CHECKING', 'Any', 'ClassVar', 'Literal'),
                                    'ToolParser': lmparse.ToolParser, 'XmlToolParser': lmparse.XmlToolParser,
                                    'DeltaToolCall': p.DeltaToolCall, 'XmlParsePhase': XmlParsePhase},
        TOOL + '.qwen3_tool_parser': {'ToolParserManager': tm, 'JsonToolParser': lmparse.JsonToolParser,
                                      'Qwen3ToolParser': lmparse.Qwen3ToolParser},
        TOOL + '.internlm2_tool_parser': {**pick('annotations', 'json', 'TYPE_CHECKING', 'Any'),
                                          'ToolParserManager': tm, 'JsonToolParser': lmparse.JsonToolParser,
                                          'Internlm2ToolParser': internlm2},
        TOOL + '.llama3_tool_parser': {'ToolParserManager': tm, 'JsonToolParser': lmparse.JsonToolParser,
                                       'Llama3JsonToolParser': lmparse.Llama3JsonToolParser},
        TOOL + '.qwen3coder_tool_parser': {**pick('annotations', 'Literal'), 'ToolParserManager': tm,
                                           'XmlToolParser': lmparse.XmlToolParser,
                                           'Qwen3CoderToolParser': lmparse.Qwen3CoderToolParser},
        TOOL + '.interns2preview_tool_parser': {**pick('annotations', 'TYPE_CHECKING'), 'ToolParserManager': tm,
                                                'Qwen3CoderToolParser': lmparse.Qwen3CoderToolParser,
                                                'InternS2PreviewToolParser': lmparse.InternS2PreviewToolParser},
        TOOL + '.glm47_tool_parser': {**pick('annotations', 'Literal'), 'ToolParserManager': tm,
                                      'XmlToolParser': lmparse.XmlToolParser,
                                      'Glm47ToolParser': lmparse.Glm47ToolParser},
        TOOL + '.kimi_k2_tool_parser': {**tool_base, **pick('annotations', 'TYPE_CHECKING'),
                                        'DeltaToolCall': p.DeltaToolCall,
                                        'JsonValueScanner': lmparse.JsonValueScanner,
                                        'KimiK2ToolParser': lmparse.KimiK2ToolParser},
        TOOL + '.deepseek_v32_tool_parser': {**tool_base, **pick('annotations', 'json'), 'DSML_TOKEN': DSML_TOKEN,
                                             'DeltaToolCall': p.DeltaToolCall,
                                             'JsonValueScanner': lmparse.JsonValueScanner,
                                             'DeepSeekV32ToolParser': lmparse.DeepSeekV32ToolParser},
        TOOL + '.deepseek_v4_tool_parser': {**ann, 'ToolParserManager': tm,
                                            'DeepSeekV32ToolParser': lmparse.DeepSeekV32ToolParser,
                                            'DeepSeekV4ToolParser': lmparse.DeepSeekV4ToolParser},
        ROOT + '.gpt_oss_response_parser': {
            **ann, 'GptOssResponseParser': gpt_oss, 'get_logger': get_logger, 'logger': log,
            # LMDeploy: whether its gpt-oss parser could load (else GptOssResponseParser is None).
            # lmparse's Harmony parser needs no optional package, so it is always available.
            '_OPENAI_HARMONY_AVAILABLE': True},
        ROOT + '._openai_harmony': {
            **pick('annotations', 'json', 're', 'TYPE_CHECKING', 'Any'),
            'GptOssResponseParser': gpt_oss, 'ResponseParser': lmparse.ResponseParser,
            'ResponseParserManager': rpm, 'normalize_chat_request': _req.normalize_chat_request,
            'DeltaMessage': p.DeltaMessage, 'DeltaToolCall': p.DeltaToolCall,
            'DeltaFunctionCall': p.DeltaFunctionCall, 'ToolCall': p.ToolCall, 'FunctionCall': p.FunctionCall,
            'get_logger': get_logger, 'logger': log},
    }
