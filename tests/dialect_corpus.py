"""Generated outputs for every registered dialect, and the invariants every chunking must keep.

Shared by the property lane (``tests/test_dialect_properties.py``), the fuzz
entry point (``fuzz/fuzz_dialects.py``) and nothing else. Dialects are
discovered through the registries, and each one's text is derived from the
markers its class declares, so a dialect registered later is exercised with
no code written here:

* tool parsers (``ToolParserManager``) are combined with every reasoning
  configuration (none, each registered reasoning parser with and without
  ``enable_thinking=False``, ``True`` for parsers with thinking switches);
* reasoning parsers also run alone (no tool parser);
* response parsers other than ``default`` (Harmony / gpt-oss) run on their
  own, in text mode, and for Harmony also in token-id mode.

A family this module does not know still gets marker soup, truncations and
near-misses from ``get_tool_open_tag()`` / ``get_tool_close_tag()`` and every
marker-like string attribute of the class; only the valid-call builder (and so
the exact-result oracle) is per family.
"""
from __future__ import annotations

import inspect
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import lmparse
from lmparse import BaseResponseParser, ReasoningParserManager, ResponseParserManager, ToolParserManager
from lmparse.harmony import HARMONY_SPECIAL_TOKEN_IDS, HarmonyResponseParser
from lmparse.tools.brace_call import BraceCallToolParser
from lmparse.tools.dsml import DsmlToolParser
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.ns_elements import NsElementToolParser
from lmparse.tools.pythonic import PythonicToolParser
from lmparse.tools.sections import SectionToolParser
from lmparse.tools.xml_parser import XmlToolParser

# ---- the request ---------------------------------------------------------------------

# Offered tools have string-typed parameters only, so every family's arguments
# are comparable as JSON objects of strings.
OFFERED: dict[str, tuple[str, ...]] = {'get_weather': ('city', 'unit'), 'search': ('query',)}
UNKNOWN = 'delete_all'  # never offered: filtered
PARAM_NAMES = ('city', 'unit', 'query', 'force')


def tools() -> list[dict[str, Any]]:
    return [{'type': 'function',
             'function': {'name': name, 'description': name,
                          'parameters': {'type': 'object',
                                         'properties': {p: {'type': 'string'} for p in params}}}}
            for name, params in OFFERED.items()]


# ---- registry discovery -----------------------------------------------------------------


def _unique(registry: Any) -> list[tuple[str, Any]]:
    """(names joined by '/', class) per distinct class, aliases folded, in name order."""
    by_cls: dict[Any, list[str]] = {}
    for name in registry.names():
        cls = registry.get(name)
        # 'hf' / 'response_template' become a dialect only for a tokenizer's template:
        # tests/test_response_template.py runs the classes real templates map onto.
        if getattr(cls, 'from_tokenizer', False):
            continue
        by_cls.setdefault(cls, []).append(name)
    return [(names[0], cls) for cls, names in by_cls.items()]


def _alias_label(registry: Any, cls: Any) -> str:
    return '/'.join(n for n in registry.names() if registry.get(n) is cls)


@dataclass(frozen=True)
class Config:
    """One parser configuration under test."""

    id: str
    kind: str  # 'router' (BaseResponseParser + reasoning/tool) or 'response' (a response parser)
    tool: str | None = None
    reasoning: str | None = None
    thinking: bool | None = None  # chat_template_kwargs['enable_thinking']
    response: str | None = None
    input_mode: str | None = None  # 'text' / 'ids' for Harmony

    @property
    def tool_cls(self) -> Any:
        return ToolParserManager.get(self.tool) if self.tool else None

    @property
    def reasoning_cls(self) -> Any:
        return ReasoningParserManager.get(self.reasoning) if self.reasoning else None

    @property
    def is_harmony(self) -> bool:
        return self.kind == 'response' and issubclass(ResponseParserManager.get(self.response),
                                                      HarmonyResponseParser)

    def request(self) -> dict[str, Any]:
        req: dict[str, Any] = {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}], 'tools': tools()}
        if self.thinking is not None:
            req['chat_template_kwargs'] = {'enable_thinking': self.thinking}
        return req


_CLASSES: dict[Any, Any] = {}


def parser_class(cfg: Config, tokenizer: Any = None) -> Any:
    key = (cfg, id(tokenizer))
    cls = _CLASSES.get(key)
    if cls is None:
        if cfg.kind == 'router':
            cls = BaseResponseParser.with_parsers(cfg.reasoning, cfg.tool, tokenizer=tokenizer)
        else:
            base = ResponseParserManager.get(cfg.response)
            kwargs: dict[str, Any] = {}
            if cfg.input_mode is not None:
                kwargs['input_mode'] = cfg.input_mode
            if tokenizer is not None:
                kwargs['tokenizer'] = tokenizer
            cls = base.with_parsers(**kwargs)
        _CLASSES[key] = cls
    return cls


def new_parser(cfg: Config, tokenizer: Any = None) -> Any:
    return parser_class(cfg, tokenizer)(cfg.request())


def reasoning_configs() -> list[tuple[str | None, bool | None]]:
    out: list[tuple[str | None, bool | None]] = [(None, None)]
    for name, cls in _unique(ReasoningParserManager):
        out.append((name, None))
        out.append((name, False))
        if getattr(cls, 'thinking_switches', ()) or not getattr(cls, 'open_tag_in_prompt', True):
            out.append((name, True))
    return out


def _paired_reasoning(tool_cls: Any, reasoning: list[tuple[str | None, bool | None]],
                      index: int) -> list[tuple[str | None, bool | None]]:
    """The reasoning configurations a tool dialect runs with in the default lane.

    No reasoning, ``default``, every reasoning parser of the tool's own model
    family (module), and one foreign family's parser picked by rotation, so
    the lane grows linearly with the dialects while every cross-family pair
    still runs in ``full`` mode (LMPARSE_SLOW, the fuzzer).
    """
    module = tool_cls.__module__
    default = ReasoningParserManager.get('default')
    names = {r for r, _ in reasoning if r is not None}
    foreign = sorted(n for n in names if ReasoningParserManager.get(n).__module__ != module
                     and ReasoningParserManager.get(n) is not default)
    keep = {None, 'default'} | {n for n in names if ReasoningParserManager.get(n).__module__ == module}
    if foreign:
        keep.add(foreign[index % len(foreign)])
    return [(r, t) for r, t in reasoning if r in keep or (r is not None and ReasoningParserManager.get(r) is default)]


def _grammar(cls: Any) -> Any:
    return getattr(cls, 'channel_grammar', None) if cls is not None else None


def _pairs(tool_cls: Any, reasoning: str | None) -> bool:
    """A recipient-channel half pairs only with the other half of its grammar, or none (else a ValueError)."""
    r_grammar = _grammar(ReasoningParserManager.get(reasoning)) if reasoning is not None else None
    t_grammar = _grammar(tool_cls)
    return reasoning is None or r_grammar is t_grammar


def configs(full: bool = True) -> list[Config]:
    """Tool dialect x reasoning configurations (all pairs when ``full``), reasoning alone, each response parser."""
    out: list[Config] = []
    reasoning = reasoning_configs()
    for index, (tool_name, tool_cls) in enumerate(_unique(ToolParserManager)):
        label = _alias_label(ToolParserManager, tool_cls)
        for r, thinking in (reasoning if full else _paired_reasoning(tool_cls, reasoning, index)):
            if not _pairs(tool_cls, r):
                continue
            out.append(Config(f'{label}|{r}|think={thinking}', 'router', tool_name, r, thinking))
    for r, thinking in reasoning:
        if r is not None:
            out.append(Config(f'-|{r}|think={thinking}', 'router', None, r, thinking))
    for name in ResponseParserManager.names():
        cls = ResponseParserManager.get(name)
        if cls is BaseResponseParser:
            continue
        modes: list[str | None] = [None]
        if 'input_mode' in inspect.signature(cls.with_parsers).parameters:
            modes = ['text']
            if issubclass(cls, HarmonyResponseParser):
                modes.append('ids')
        for mode in modes:
            out.append(Config(f'{name}|{mode}', 'response', response=name, input_mode=mode))
    return out


# ---- markers ---------------------------------------------------------------------------------

_MARKER_CHARS = re.compile(r'[<>|｜\[\]]')


def _marker_attrs(cls: Any) -> list[str]:
    """Every marker-like str class attribute (contains one of < > | ｜ [ ])."""
    out = []
    for attr in dir(cls):
        if attr.startswith('__'):
            continue
        try:
            value = getattr(cls, attr)
        except Exception:
            continue
        if isinstance(value, str) and value and len(value) < 64 and _MARKER_CHARS.search(value):
            out.append(value)
    return out


def dsml_markers(cls: Any) -> dict[str, str]:
    """The attribute-named family's tags as the class declares them (DSML, MiniMax, Kimi K3 XTML)."""
    inv, par, inv_close, par_close, _ = cls._family_markers()
    end = cls.tag_close
    string = f' {cls.string_attribute}="{cls.string_attribute_values[0]}"' if cls.string_attribute else ''
    return {'open': cls.get_tool_open_tag(), 'close': cls.get_tool_close_tag(),
            'invoke': f'{inv} {cls.call_name_attribute}="', 'invoke_close': inv_close,
            'param': f'{par} {cls.parameter_key_attribute}="', 'param_close': par_close,
            'name_end': f'"{end}', 'string_end': f'"{string}{end}'}


def tool_markers(cls: Any) -> list[str]:
    found: list[str] = [cls.get_tool_open_tag() or '']
    close = cls.get_tool_close_tag()
    if close:
        found.append(close)
    if issubclass(cls, JsonToolParser):
        found += [f'{{"{cls.name_field}": ', f'"{cls.argument_field}": ']
    elif issubclass(cls, XmlToolParser):
        found += [getattr(cls, a) or '' for a in ('function_open', 'function_name_end', 'arg_open', 'arg_name_end',
                                                  'value_open', 'arg_value_close_tag', 'function_close')]
    elif issubclass(cls, DsmlToolParser):
        found += list(dsml_markers(cls).values()) + ['" string="true">', '" string="false">', '">']
        found += [cls.tag_open, cls.end_tag_open, cls.tag_close]
    elif issubclass(cls, NsElementToolParser):
        found += [cls.namespace, f'{cls.namespace}<{cls.invoke_element} ', f'{cls.namespace}</', '">']
    elif issubclass(cls, SectionToolParser):
        found += [getattr(cls, a) or '' for a in ('section_begin', 'section_end', 'call_begin',
                                                  'argument_begin', 'call_end')] + ['functions.']
    elif issubclass(cls, BraceCallToolParser):
        found += [cls.string_delimiter, *cls.call_prefixes, '{', '}', '[', ']', ',', ':']
    elif issubclass(cls, PythonicToolParser):
        found += ['[', *(f'{name}(' for name in OFFERED), f'{UNKNOWN}(', 'city=', ')]', "'''", '"""']
    found += _marker_attrs(cls)
    return list(dict.fromkeys(m for m in found if m))


HARMONY_WORDS = ('assistant', 'analysis', 'final', 'commentary', ' to=functions.', 'functions.', ' <|constrain|>json',
                 'json', 'user', ' to=python', 'to=')


def content_markers(cfg: Config) -> list[str]:
    """The content-channel markers the configuration's parsers declare (dropped by the router outside tool blocks)."""
    owners = (cfg.reasoning_cls, cfg.tool_cls) if cfg.kind != 'response' else ()
    return list(dict.fromkeys(m for owner in owners if owner is not None
                              for m in getattr(owner, 'content_markers', ()) or () if m))


def config_markers(cfg: Config) -> list[str]:
    found: list[str] = []
    if cfg.kind == 'response':
        if cfg.is_harmony:
            found += list(HARMONY_SPECIAL_TOKEN_IDS) + list(HARMONY_WORDS)
        else:
            found += _marker_attrs(ResponseParserManager.get(cfg.response))
        return found
    if cfg.reasoning_cls is not None:
        found += [cfg.reasoning_cls.get_reasoning_open_tag(), cfg.reasoning_cls.get_reasoning_close_tag()]
    else:
        found += ['<think>', '</think>']  # text for a parser without reasoning
    if cfg.tool_cls is not None:
        found += tool_markers(cfg.tool_cls)
    found += content_markers(cfg)
    return list(dict.fromkeys(found))


def prefixes(markers: Sequence[str]) -> list[str]:
    """Every proper non-empty prefix of every marker."""
    return list(dict.fromkeys(m[:i] for m in markers for i in range(1, len(m))))


def near_misses(markers: Sequence[str]) -> list[str]:
    """A marker with one character changed, dropped or doubled, and a marker prefix followed by a wrong char."""
    out = []
    for m in markers:
        if len(m) < 2:
            continue
        mid = len(m) // 2
        out += [m[:mid] + ('x' if m[mid] != 'x' else 'y') + m[mid + 1:], m[:-1] + ' ', m + m[-1],
                m[:mid] + m[mid + 1:], m.upper() if m.upper() != m else m + m[-1]]
    return list(dict.fromkeys(out))


# ---- valid calls built from the markers ------------------------------------------------------

# Values and text with escapes, astral characters and CJK. VALUE_PIECES never
# contain a marker or a marker prefix that could close a value.
VALUE_PIECES = ('Paris', '北京', ' ', '🌧', 'é', '\u00e9', '"', '\\', '\\"', 'a"b', '{', '}', '[', ']', ',', ':', '1',
                'null', 'true', 'x y', '\t', '\u2028', '𝄞', 'ü', '中文', 'a < b', '&amp;', "'")
TEXT_PIECES = ('Hello', ' ', 'world', '.', '\n', '北京', '🌧', 'é', '中文', '"', '\\', '{', '}', '1', ',', ':',
               'a < b', 'null', '𝄞', 'x', '?')


@dataclass
class Built:
    """A generated output and what it must parse to (None where no exact oracle applies)."""

    text: str
    calls: list[tuple[str, Any]] | None = None  # (name, arguments as JSON text or as a dict)
    visible: str | None = None  # content + reasoning in stream order
    tokens: list[tuple[str, int, bool]] | None = None  # Harmony: (text, id, is_special)


@dataclass(frozen=True)
class Vocabulary:
    """The pieces generated values, content and reasoning are made of."""

    value: Sequence[str] = VALUE_PIECES
    content: Sequence[str] = TEXT_PIECES
    reasoning: Sequence[str] = TEXT_PIECES


PLAIN = Vocabulary()


def _json_args(rng: random.Random, params: Sequence[str], vocab: Vocabulary = PLAIN) -> dict[str, str]:
    n = rng.randint(0, len(params))
    return {p: _value(rng, vocab) for p in rng.sample(list(params), n)}


def _value(rng: random.Random, vocab: Vocabulary = PLAIN) -> str:
    return ''.join(rng.choice(vocab.value) for _ in range(rng.randint(0, 6)))


def _xml_string_value(raw: str) -> str:
    """A string-typed XML value as the family gives it: a quoted JSON string is decoded (LMDeploy's rule)."""
    stripped = raw.strip()
    if stripped.startswith('"'):
        try:
            decoded = json.loads(stripped)
        except ValueError:
            return raw
        if isinstance(decoded, str):
            return decoded
    return raw


def _dumps(rng: random.Random, obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=rng.random() < 0.5,
                      separators=rng.choice([(', ', ': '), (',', ':')]))


def _pick_name(rng: random.Random) -> str:
    return rng.choice([*OFFERED, UNKNOWN]) if rng.random() < 0.8 else UNKNOWN


def _params_for(name: str) -> tuple[str, ...]:
    return OFFERED.get(name, ('force',))


def _envelope(cls: Any, name: str, arg_key: str, args: str) -> str:
    """One JSON envelope: ``{"name": NAME, "arguments": ARGS}``, or ``{NAME: ARGS}`` (``name_as_key``, Apertus)."""
    if getattr(cls, 'name_as_key', False):
        return '{%s: %s}' % (json.dumps(name), args)
    return '{"%s": %s, "%s": %s}' % (cls.name_field, json.dumps(name), arg_key, args)


def build_block(cls: Any, rng: random.Random, vocab: Vocabulary = PLAIN) -> tuple[str, list[tuple[str, Any]]] | None:
    """One tool block of the dialect's syntax with 1..n calls; None for a family without a builder.

    Arguments are the exact JSON text for families that forward source (JSON,
    sections), a dict for families that build the JSON (XML, DSML).
    """
    if issubclass(cls, JsonToolParser) and getattr(cls, 'argument_marker', None) and rng.random() < 0.6:
        # a name header and one JSON value (Mistral v11+), maybe with the model's call id
        name = _pick_name(rng)
        args = _dumps(rng, _json_args(rng, _params_for(name), vocab))
        call_id = f'{cls.call_id_marker}{rng.randrange(10 ** 9):09d}' if cls.call_id_marker and rng.random() < 0.5 else ''
        return f'{cls.get_tool_open_tag()}{name}{call_id}{cls.argument_marker}{args}', [(name, args)]
    # an open tag ending in '[' opens the array itself (Phi-4-mini's 'functools[')
    opens_array = getattr(cls, 'envelope_array', False) and (cls.get_tool_open_tag() or '').endswith('[')
    if issubclass(cls, JsonToolParser) and getattr(cls, 'envelope_array', False) and (
            opens_array or rng.random() < 0.7):
        # one JSON array of envelopes (Mistral before v11, Granite 3, Jamba, Apertus, xLAM)
        calls = []
        envs = []
        for _ in range(rng.randint(1, 3)):
            name = _pick_name(rng)
            args = _dumps(rng, _json_args(rng, _params_for(name), vocab))
            calls.append((name, args))
            envs.append(_envelope(cls, name, cls.argument_field, args))
        close = cls.get_tool_close_tag()
        body = rng.choice(['', ' ', '\n']) + ('' if opens_array else '[') + rng.choice([', ', ',', ',\n']).join(envs)
        return cls.get_tool_open_tag() + body + ']' + (close or ''), calls
    if issubclass(cls, JsonToolParser):
        name = _pick_name(rng)
        args = _dumps(rng, _json_args(rng, _params_for(name), vocab))
        sep = rng.choice(['', '\n'])
        arg_key = rng.choice((cls.argument_field, *getattr(cls, 'argument_field_aliases', ())))
        env = _envelope(cls, name, arg_key, args)
        close = cls.get_tool_close_tag()
        return cls.get_tool_open_tag() + sep + env + (sep + close if close else ''), [(name, args)]
    if issubclass(cls, XmlToolParser):
        n = rng.randint(1, 3) if cls.multiple_calls else 1
        calls = []
        body = ''
        for _ in range(n):
            name = _pick_name(rng)
            params = _json_args(rng, _params_for(name), vocab)
            calls.append((name, {k: _xml_string_value(v) for k, v in params.items()}))
            nl = '\n' if cls.strip_value_newlines else ''
            if cls.function_open:
                body += f'\n{cls.function_open}{name}{cls.function_name_end or ""}\n'
            else:
                # the name right after the block's open tag, ended by function_name_end (MiniCPM 5) or the first argument
                body += name + (cls.function_name_end or '\n')
            for k, v in params.items():
                body += f'{cls.arg_open}{k}{cls.arg_name_end}{nl if not cls.value_open else ""}'
                if cls.value_open:
                    body += f'\n{cls.value_open}'
                body += f'{v}{nl}{cls.arg_value_close_tag}\n'
            if cls.function_close:
                body += cls.function_close + '\n'
        return cls.get_tool_open_tag() + body + cls.get_tool_close_tag(), calls
    if issubclass(cls, DsmlToolParser):
        m = dsml_markers(cls)
        calls = []
        body = '\n'
        for _ in range(rng.randint(1, 3)):
            name = _pick_name(rng)
            params = _json_args(rng, _params_for(name), vocab)
            calls.append((name, params))
            body += m['invoke'] + name + m['name_end'] + '\n'
            for k, v in params.items():
                body += m['param'] + k + m['string_end'] + v + m['param_close'] + '\n'
            body += m['invoke_close'] + '\n'
        return m['open'] + body + m['close'], calls
    if issubclass(cls, NsElementToolParser):
        ns = cls.namespace
        calls = []
        body = '\n'
        for _ in range(rng.randint(1, 3)):
            name = _pick_name(rng)
            params = _json_args(rng, _params_for(name), vocab)
            calls.append((name, params))
            body += f'{ns}<{cls.invoke_element} {cls.call_name_attribute}="{name}">\n'
            body += ''.join(f'{ns}<{k}>{v}{ns}</{k}>\n' for k, v in params.items())
            body += f'{ns}</{cls.invoke_element}>\n'
        return cls.get_tool_open_tag() + body + cls.get_tool_close_tag(), calls
    if issubclass(cls, SectionToolParser):
        calls = []
        body = ''
        for i in range(rng.randint(1, 3)):
            name = _pick_name(rng)
            args = _dumps(rng, _json_args(rng, _params_for(name), vocab))
            calls.append((name, args))
            layout = getattr(cls, 'header_layout', 'call_id')
            if layout == 'type':  # type<sep>NAME, a line break, maybe a fenced value
                fence = cls.argument_fence
                if fence and rng.random() < 0.8:
                    args_src = f'{fence}{rng.choice(["json", ""])}\n{args}\n{fence}'
                else:
                    args_src = args
                body += f'{cls.call_begin}function{cls.argument_begin}{name}\n{args_src}{cls.call_end}'
            elif layout == 'name':
                body += f'{cls.call_begin}{name}{cls.argument_begin}{args}{cls.call_end}'
            else:
                body += f'{cls.call_begin}functions.{name}:{i}{cls.argument_begin}{args}{cls.call_end}'
            body += rng.choice(['', '\n'])
        return cls.section_begin + body + cls.section_end, calls
    if issubclass(cls, BraceCallToolParser):
        return _brace_block(cls, rng, vocab)
    if issubclass(cls, PythonicToolParser):
        # [NAME(key=LITERAL, ...), ...]: the first name offered (else the list is text), later ones any
        calls = []
        items = []
        for i in range(rng.randint(1, 3)):
            name = rng.choice(list(OFFERED)) if i == 0 else _pick_name(rng)
            params = _json_args(rng, _params_for(name), vocab)
            calls.append((name, params))  # compared as JSON: \ud834\udd1e spellings stay escapes
            items.append(name + '(' + rng.choice([', ', ',']).join(
                f'{k}={_py_literal(rng, v)}' for k, v in params.items()) + ')')
        if not cls.call_list_brackets:
            # the calls themselves between the tags, one per line (OLMo 3) or comma-separated
            return cls.get_tool_open_tag() + rng.choice(['\n', ', ']).join(items) + cls.get_tool_close_tag(), calls
        return (cls.get_tool_open_tag() or '') + '[' + ', '.join(items) + ']' + (cls.get_tool_close_tag() or ''), calls
    return None


def _brace_value(cls: Any, value: Any) -> str:
    """A value as Gemma 4's template writes it (``format_argument``): delimited strings, bare scalars."""
    q = cls.string_delimiter
    if isinstance(value, str):
        return q + value + q
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, dict):
        return '{' + ','.join(f'{k}:{_brace_value(cls, v)}' for k, v in value.items()) + '}'
    if isinstance(value, list):
        return '[' + ','.join(_brace_value(cls, v) for v in value) + ']'
    return 'null' if value is None else str(value)


def _brace_block(cls: Any, rng: random.Random, vocab: Vocabulary = PLAIN) -> tuple[str, list[tuple[str, Any]]]:
    """``OPEN call:NAME{k:v,...} CLOSE``; the arguments as a dict (the family builds the JSON)."""
    name = _pick_name(rng)
    args: dict[str, Any] = dict(_json_args(rng, _params_for(name), vocab))
    if args and rng.random() < 0.3:  # typed and nested values beside the strings
        args[rng.choice(list(args))] = rng.choice([3, -0.5, True, False, None, [1, 'a'], {'k': 'v', 'n': [2]}])
    prefix = rng.choice(cls.call_prefixes)
    return f'{cls.get_tool_open_tag()}{prefix}{name}{_brace_value(cls, args)}{cls.get_tool_close_tag()}', \
        [(name, args)]


def _py_literal(rng: random.Random, v: str) -> str:
    """A Python string literal for ``v``: repr, or JSON's spelling (also a valid Python literal here)."""
    return repr(v) if rng.random() < 0.5 else json.dumps(v, ensure_ascii=rng.random() < 0.5)


def _anchored_bare(cls: Any) -> bool:
    """The family takes calls without the open tag at the start of the response (``bare_call_open``)."""
    return issubclass(cls, (JsonToolParser, PythonicToolParser)) and getattr(cls, 'bare_call_open', None) in ('{', '[')


def _text(rng: random.Random, max_pieces: int = 6, pieces: Sequence[str] = TEXT_PIECES) -> str:
    """Text from ``pieces`` (by default with no marker in it): never starts or ends with whitespace."""
    s = ''.join(rng.choice(pieces) for _ in range(rng.randint(1, max_pieces)))
    s = s.strip()
    return s or 'x'


def build_router_output(cfg: Config, rng: random.Random, vocab: Vocabulary = PLAIN) -> Built:
    """Text, reasoning blocks and tool blocks (inside and outside reasoning) with the exact expected result.

    ``vocab`` gives the pieces of values, content and reasoning (``marker_text_vocabulary``: the
    dialect's own markers written as text).
    """
    tool_cls = cfg.tool_cls
    reasoning_cls = cfg.reasoning_cls
    if _grammar(tool_cls) is not None or _grammar(reasoning_cls) is not None:
        return build_channel_output(cfg, rng, vocab)
    open_r = reasoning_cls.get_reasoning_open_tag() if reasoning_cls else '<think>'
    close_r = reasoning_cls.get_reasoning_close_tag() if reasoning_cls else '</think>'
    parts: list[str] = []
    visible: list[str] = []
    calls: list[tuple[str, Any]] = []
    # inline_reasoning (an output option: reasoning in content with its tags) has its own tests
    exact = not getattr(reasoning_cls, 'inline_reasoning', False)
    last_was_block = False
    closeless = tool_cls is not None and not tool_cls.get_tool_close_tag()
    calls_in_reasoning = all(getattr(o, 'calls_in_reasoning', True) for o in (tool_cls, reasoning_cls) if o is not None)
    if not calls_in_reasoning and tool_cls is not None and new_parser(cfg).mode == 'reasoning':
        # output that starts inside reasoning holds no call before the reasoning ends
        parts.append(close_r)
    all_markers = content_markers(cfg)
    # Block headers (Inkling): text after a header marker up to a block-kind marker is metadata, so
    # header markers are not sprinkled, and output that starts in a header starts with a kind marker.
    owners = [o for o in (reasoning_cls, tool_cls) if o is not None]
    opens = {m for o in owners for m in getattr(o, 'header_markers', ()) or ()}
    markers = [m for m in all_markers if m not in opens]
    if any(getattr(o, 'header_at_start', False) for o in owners):
        kinds = [m for o in owners for m in getattr(o, 'header_ends', ()) or () if m in all_markers]
        if kinds and not (tool_cls is not None and _anchored_bare(tool_cls)):
            parts.append(rng.choice(kinds))
        else:
            exact = False

    def marker() -> None:
        # a declared content marker: dropped wherever it is outside tool blocks (content and reasoning)
        nonlocal last_was_block
        if markers and rng.random() < 0.4 and not (closeless and last_was_block) and not (
                not parts and tool_cls is not None and _anchored_bare(tool_cls)):
            parts.append(rng.choice(markers))
            last_was_block = False

    def text(in_reasoning: bool = False) -> None:
        nonlocal last_was_block
        marker()
        t = _text(rng, pieces=vocab.reasoning if in_reasoning and reasoning_cls is not None else vocab.content)
        parts.append(t)
        visible.append(t)
        last_was_block = False
        marker()

    def block() -> bool:
        nonlocal last_was_block, exact
        if tool_cls is None:
            return False
        built = build_block(tool_cls, rng, vocab)
        if built is None:
            exact = False
            return False
        if last_was_block:
            # a separator between two blocks: dropped (an open tag's own leading newlines are kept)
            parts.append(rng.choice(['\n', '\n\n']))
        if not parts and reasoning_cls is None and _anchored_bare(tool_cls) and rng.random() < 0.5 and all(
                c[0] in OFFERED for c in built[1]) and built[0].startswith(tool_cls.get_tool_open_tag()):
            # a bare call (no open tag) at the start of the response: a call when it names offered tools
            bare = built[0][len(tool_cls.get_tool_open_tag()):].lstrip('\n')
            close = tool_cls.get_tool_close_tag()
            if issubclass(tool_cls, JsonToolParser) and tool_cls.bare_call_open == '[':
                # a bare JSON array has no close tag (xLAM); a lone envelope is no bare call there
                if close and bare.endswith(close):
                    bare = bare[:-len(close)]
                if not bare.lstrip(' \n').startswith('['):
                    bare = built[0]
            parts.append(bare)
        else:
            parts.append(built[0])
        calls.extend(c for c in built[1] if c[0] in OFFERED)
        last_was_block = True
        return True

    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        marker()
        if r < 0.35:
            text()
        elif r < 0.6:
            if closeless and last_was_block:
                text()  # an envelope with no close tag needs something that is not JSON after it
                continue
            block()
        else:
            # a reasoning block, maybe with a tool block inside
            parts.append(open_r)
            if reasoning_cls is None:
                visible.append(open_r)
            last_was_block = False
            text(in_reasoning=True)
            # (not for a model that never calls tools inside reasoning: there the block is reasoning text)
            if rng.random() < 0.5 and not closeless and calls_in_reasoning:
                if block():
                    text(in_reasoning=True)
            parts.append(close_r)
            if reasoning_cls is None:
                visible.append(close_r)
            last_was_block = False
    marker()
    return Built(''.join(parts), calls if exact else None, ''.join(visible) if exact else None)


# ---- the dialect's own markers written as text (issue 27) --------------------------------------


def _as_text(markers: Sequence[str]) -> tuple[str, ...]:
    # a marker then a word: what follows does not confirm structure, so the marker is text
    return tuple(dict.fromkeys(f' {m} x' for m in markers if m.strip()))


def marker_text_vocabulary(cfg: Config, quoted_tags: Sequence[str] = ()) -> Vocabulary:
    """Values, content and reasoning that carry the configuration's own markers as text.

    Values may carry every marker of the tool dialect and the reasoning tags
    (only a confirmed close ends a value); content and reasoning every marker
    but the ones that open or close structure there (the tool open tag, a bare
    call's first piece, the reasoning tags). Content markers (dropped
    everywhere by design), a brace family's string delimiter (the value's
    own quote), a namespaced family's namespace-prefixed tags and a recipient
    channel grammar's framing tokens are left out.
    ``quoted_tags`` (token-id mode) are also written in content and reasoning,
    between ``QUOTE_OPEN`` / ``QUOTE_CLOSE``: as ordinary tokens, so as text.
    """
    tool_cls, reasoning_cls = cfg.tool_cls, cfg.reasoning_cls
    dropped = set(content_markers(cfg))
    for owner in (tool_cls, reasoning_cls):
        if owner is not None:
            dropped.update(getattr(owner, 'header_markers', ()) or ())
    grammar = _grammar(tool_cls) or _grammar(reasoning_cls)
    if grammar is not None:
        # recipient channels: the framing tokens (start, channel, message, the ends) are special
        # tokens that end or open a message wherever they stand; without ids nothing tells them apart
        dropped.update(m for m in (grammar.start, grammar.channel, grammar.message, *grammar.ends) if m)
    r_tags = [reasoning_cls.get_reasoning_open_tag(), reasoning_cls.get_reasoning_close_tag()] if reasoning_cls else []
    t_markers = tool_markers(tool_cls) if tool_cls is not None else []
    openers = set(r_tags)
    if tool_cls is not None:
        openers.add(tool_cls.get_tool_open_tag() or '')
        if issubclass(tool_cls, BraceCallToolParser):
            dropped.add(tool_cls.string_delimiter)
        if issubclass(tool_cls, NsElementToolParser):
            # the namespace prefix is what makes a tag markup (a special token the template writes
            # only before tags): after it nothing is text, so it is never written inside a value
            dropped.update(m for m in t_markers if m.startswith(tool_cls.namespace))
        bare = getattr(tool_cls, 'bare_call_open', None)
        if bare:
            openers.update(m for m in t_markers if m.startswith(bare))
        if issubclass(tool_cls, PythonicToolParser):
            openers.update(m for m in t_markers if m.startswith('['))
    every = [m for m in [*t_markers, *r_tags] if m and m not in dropped]
    value = VALUE_PIECES + _as_text(every)
    outside = _as_text([m for m in every if m not in openers])
    reasoning = TEXT_PIECES + outside
    if tool_cls is not None and not all(getattr(o, 'calls_in_reasoning', True) for o in (tool_cls, reasoning_cls)
                                        if o is not None):
        # a model that never calls tools inside reasoning: a whole call written there is reasoning text
        built = build_block(tool_cls, random.Random(0))
        if built is not None:
            reasoning += (f' {built[0]} x',)
    quoted = tuple(dict.fromkeys(f' {QUOTE_OPEN}{t}{QUOTE_CLOSE} x' for t in quoted_tags if t and t not in dropped))
    return Vocabulary(value=value, content=TEXT_PIECES + outside + quoted, reasoning=reasoning + quoted)


# ---- token ids: structural tags arrive as their special token, quoted ones as ordinary tokens ----

QUOTE_OPEN, QUOTE_CLOSE = '\ue000', '\ue001'  # never in generated text otherwise
SPECIAL_BASE = 1 << 21  # above every code point


class TagTokenizer:
    """Holds the configuration's reasoning tags and tool-open tag as one token each; every other
    character is its own token (id = code point). Text between QUOTE_OPEN and QUOTE_CLOSE is
    tokenized character by character: a tag the model wrote as ordinary tokens."""

    def __init__(self, cfg: Config) -> None:
        r, t = cfg.reasoning_cls, cfg.tool_cls
        tags = [r.get_reasoning_open_tag(), r.get_reasoning_close_tag()] if r is not None else []
        if t is not None:
            tags.append(t.get_tool_open_tag())
        self.tags = tuple(dict.fromkeys(tag for tag in tags if tag))
        self._vocab = {tag: SPECIAL_BASE + i for i, tag in enumerate(self.tags)}
        self._longest_first = sorted(self.tags, key=len, reverse=True)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def decode(self, ids: Sequence[int]) -> str:
        return ''.join(self.tags[i - SPECIAL_BASE] if i >= SPECIAL_BASE else chr(i) for i in ids)

    def tokens(self, text: str) -> list[tuple[str, int]]:
        """(piece, id) for ``text``: unquoted tags as their special token, the rest per character."""
        out: list[tuple[str, int]] = []
        quoted = False
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch in (QUOTE_OPEN, QUOTE_CLOSE):
                quoted = ch == QUOTE_OPEN
                i += 1
                continue
            tag = None if quoted else next((t for t in self._longest_first if text.startswith(t, i)), None)
            if tag is not None:
                out.append((tag, self._vocab[tag]))
                i += len(tag)
            else:
                out.append((ch, ord(ch)))
                i += 1
        return out


_TAG_TOKENIZERS: dict[Config, TagTokenizer] = {}


def tag_tokenizer(cfg: Config) -> TagTokenizer:
    tok = _TAG_TOKENIZERS.get(cfg)
    if tok is None:
        tok = _TAG_TOKENIZERS[cfg] = TagTokenizer(cfg)
    return tok


def unquote(s: str | None) -> str | None:
    return s.replace(QUOTE_OPEN, '').replace(QUOTE_CLOSE, '') if s is not None else None


def check_tag_ids(cfg: Config, built: Built, sizes: Sequence[int], flush: bool) -> None:
    """Token-id input: steps of ``sizes`` tokens (0: an empty step) == one step == parse_complete
    with the ids == the generated calls and text (quoted tags stay text)."""
    tok = tag_tokenizer(cfg)
    tokens = tok.tokens(built.text)
    text = ''.join(p for p, _ in tokens)
    ids = [i for _, i in tokens]
    steps: list[tuple[str, Any]] = []
    at, k = 0, 0
    while at < len(tokens):
        size = sizes[k % len(sizes)]
        k += 1
        group = tokens[at:at + size]
        at += size
        steps.append((''.join(p for p, _ in group), [i for _, i in group]))
        if k > 4 * len(tokens) + 8:  # only empty steps: the rest in one
            steps.append((''.join(p for p, _ in tokens[at:]), [i for _, i in tokens[at:]]))
            break
    one = _agree(cfg, lambda: new_parser(cfg, tok), steps or [('', [])], flush, text, ids,
                 f'config={cfg.id} steps={steps!r} flush_on_empty_final={flush}')
    check_oracle(cfg, one, Built(text, built.calls, unquote(built.visible)))


# ---- recipient channels (lmparse.recipient_channels: Muse, Beam) ------------------------------


def _json_or_raw(raw: str) -> Any:
    """A Muse value as the family reads it: its JSON when all of it is JSON, else the raw text."""
    text = raw.strip(' \t\n\r')
    if text and text[0] in '{["-0123456789tfn':
        try:
            return json.loads(text, parse_constant=lambda c: 1 / 0)
        except (ValueError, ZeroDivisionError, RecursionError):
            pass
    return raw


def _channel_call(g: Any, name: str, rng: random.Random, vocab: Vocabulary = PLAIN,
                  closed: bool = False) -> tuple[str, Any]:
    """One call's markup inside a tool message and its arguments as the family builds them (``closed``: every
    parameter keeps its close tag)."""
    args = _json_args(rng, _params_for(name), vocab)
    # the offered parameters are string-typed: Spark keeps their text, Beam's schema types them as text
    keep = name in OFFERED and (g.keep_string_parameters or g.values == 'schema')
    want = {k: (v if keep or g.values == 'schema' else _json_or_raw(v)) for k, v in args.items()}
    if g.value_newlines:
        params = ''.join(f'{g.parameter} name="{k}">\n{v}\n' + (g.parameter_close if rng.random() < 0.8 or closed
                                                                  else '')
                         for k, v in args.items())
    else:
        params = ''.join(f'{g.parameter} name="{k}">{v}{g.parameter_close}\n' for k, v in args.items())
    if g.invoke is None:
        return params, want
    return f'{g.invoke} name="{name}">\n{params}{g.invoke_close}\n', want


def build_channel_output(cfg: Config, rng: random.Random, vocab: Vocabulary = PLAIN, shown: Any = None) -> Built:
    """Messages of a recipient-channel grammar: reasoning, content, dropped and tool messages (echoed call
    markup in text messages), maybe unframed text first, and text messages left unterminated before a header.

    ``shown``: a grammar derived from a chat template (lmparse.templates): only the text-message headers it
    declares are written, and only well-formed (every message and parameter closed), the output a model
    trained on that template writes; the expected result is still ``cfg``'s."""
    g = _grammar(cfg.tool_cls) or _grammar(cfg.reasoning_cls)
    h = g if shown is None else shown
    by_kind: dict[str, list[tuple[str | None, str | None]]] = {'reasoning': [], 'content': [], 'drop': []}
    for r, k in h.recipients.items():
        if k in by_kind:
            by_kind[k].append((r, None))
    for c, k in h.channels.items():
        by_kind[k].append((None, c))
    if not h.channels and (shown is None or not shown.recipients):
        by_kind[g.no_recipient].append((None, None))
    parts: list[str] = []
    visible: list[str] = []
    calls: list[tuple[str, Any]] = []
    if rng.random() < 0.2:
        parts.append(_text(rng))
        visible.append(parts[-1])
    unterminated = pending_framed = False
    for i in range(rng.randint(1, 5)):
        kind = rng.choice(['reasoning', 'content', 'drop', 'tool', 'tool'])
        if kind != 'tool' and not by_kind[kind]:
            kind = 'content' if by_kind['content'] else 'reasoning'
        if kind == 'tool':
            recipient = _pick_name(rng)
            channel = rng.choice(list(g.channels)) if g.channels else None
            names = [recipient] if g.invoke is None else [_pick_name(rng) for _ in range(rng.randint(1, 2))]
            built = [_channel_call(g, n, rng, vocab, closed=shown is not None) for n in names]
            body = ''.join(markup for markup, _ in built)
            if g.invoke is not None and rng.random() < 0.8:
                body = '<atem:function_calls>\n' + body + '</atem:function_calls>'
            if cfg.tool is not None:
                calls.extend((n, want) for n, (_, want) in zip(names, built) if n in OFFERED)
            else:
                pending_framed = True  # no tool parser: the tool message is text, framing included
        else:
            recipient, channel = rng.choice(by_kind[kind])
            body = _text(rng, pieces=vocab.reasoning if kind == 'reasoning' else vocab.content)
            if rng.random() < 0.3:
                body += _channel_call(g, 'search', rng, closed=shown is not None)[0]  # echoed call markup: text
            if kind != 'drop':
                visible.append(body)
        start = '' if (i == 0 and not parts) or unterminated else g.start + 'assistant'
        header = (f' to={recipient}' if recipient else '') + (f'{g.channel}{channel}' if channel else '')
        constrain = ' <|constrain|>xml' if kind == 'tool' and g.channel is not None else ''
        framed = start + (header.lstrip(' ') if unterminated else header) + constrain + g.message
        parts.append(framed + body)
        if pending_framed:
            visible.append(framed.lstrip(' ') + body)
        # a text message may miss its terminator when the next header follows (after a space)
        unterminated = kind in ('reasoning', 'content') and bool(h.in_body_headers) and rng.random() < 0.2
        if unterminated:
            parts.append(' ')
            visible.append(' ')
        else:
            parts.append(rng.choice(g.ends))
            if pending_framed:
                visible.append(parts[-1])
        pending_framed = False
    return Built(''.join(parts), calls, ''.join(visible))


# ---- Harmony ---------------------------------------------------------------------------------

_HARMONY_TAG_RE = re.compile('(' + '|'.join(re.escape(t) for t in HARMONY_SPECIAL_TOKEN_IDS) + ')')


def _harmony_body(rng: random.Random) -> str:
    return _text(rng)


def build_harmony_output(rng: random.Random, literal_specials: bool = False) -> Built:
    """A Harmony transcript; tokens mark which pieces are special tokens.

    With ``literal_specials`` a body may contain the text of a special token
    written as ordinary tokens (only the ids can tell it apart).
    """
    S = HARMONY_SPECIAL_TOKEN_IDS
    toks: list[tuple[str, int, bool]] = []
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[tuple[str, Any]] = []
    visible: list[str] = []

    def special(tag: str) -> None:
        toks.append((tag, S[tag], True))

    def ordinary(s: str) -> None:
        i = 0
        while i < len(s):
            n = rng.randint(1, 4)
            toks.append((s[i:i + n], -1, False))
            i += n

    def body() -> str:
        s = _harmony_body(rng)
        if literal_specials and rng.random() < 0.5:
            cut = rng.randint(0, len(s))
            s = s[:cut] + rng.choice(list(S)) + s[cut:]
        return s

    n = rng.randint(1, 4)
    for i in range(n):
        if i or rng.random() < 0.5:
            special('<|start|>')
            ordinary('assistant')
        kind = rng.choice(['analysis', 'final', 'tool', 'preamble'])
        last = i == n - 1
        special('<|channel|>')
        if kind == 'analysis':
            ordinary('analysis')
            special('<|message|>')
            b = body()
            ordinary(b)
            reasoning.append(b)
            visible.append(b)
            special('<|end|>')
        elif kind == 'final':
            ordinary('final')
            special('<|message|>')
            b = body()
            ordinary(b)
            content.append(b)
            visible.append(b)
            special('<|return|>' if last else '<|end|>')
        elif kind == 'preamble':
            ordinary('commentary')
            special('<|message|>')
            b = body()
            ordinary(b)
            content.append(b)
            visible.append(b)
            special('<|end|>')
        else:
            name = _pick_name(rng)
            args = _dumps(rng, _json_args(rng, _params_for(name)))
            if literal_specials and rng.random() < 0.5:
                args = json.dumps({'query': 'x' + rng.choice(list(S)) + 'y'})
            ordinary(f'commentary to=functions.{name} ')
            special('<|constrain|>')
            ordinary('json')
            special('<|message|>')
            ordinary(args)
            special('<|call|>')
            if name in OFFERED:
                calls.append((name, args))
        if kind == 'final' and last:
            break
    text = ''.join(t for t, _, _ in toks)
    return Built(text, calls, ''.join(visible), toks)


# o200k_harmony reserves ids 199998..201087 for its special tokens.
_O200K_SPECIALS = (199_998, 201_088)


class HarmonyTokenizer:
    """Decodes the ids that ``harmony_ids`` assigns (specials by their real ids, pieces by a table)."""

    def __init__(self) -> None:
        self.piece_of: dict[int, str] = {}
        self.id_of: dict[str, int] = {}
        self.specials = {v: k for k, v in HARMONY_SPECIAL_TOKEN_IDS.items()}

    def id(self, piece: str) -> int:
        tid = self.id_of.get(piece)
        if tid is None:
            tid = 1000 + len(self.id_of)
            if tid >= _O200K_SPECIALS[0]:  # never an id of the special range (a long fuzz run gets there)
                tid += _O200K_SPECIALS[1] - _O200K_SPECIALS[0]
            self.id_of[piece] = tid
            self.piece_of[tid] = piece
        return tid

    def decode(self, ids: Sequence[int]) -> str:
        return ''.join(self.specials.get(t) or self.piece_of[t] for t in ids)


HARMONY_TOKENIZER = HarmonyTokenizer()


def harmony_tokens(text: str, rng: random.Random) -> list[tuple[str, int, bool]]:
    """Tokens of arbitrary text: every special-token text is a special; the rest in 1..4-char pieces."""
    out: list[tuple[str, int, bool]] = []
    for part in _HARMONY_TAG_RE.split(text):
        if not part:
            continue
        if part in HARMONY_SPECIAL_TOKEN_IDS:
            out.append((part, HARMONY_SPECIAL_TOKEN_IDS[part], True))
        else:
            i = 0
            while i < len(part):
                n = rng.randint(1, 4)
                out.append((part[i:i + n], -1, False))
                i += n
    return out


def with_ids(tokens: Sequence[tuple[str, int, bool]]) -> list[tuple[str, int, bool]]:
    return [(t, tid if s else HARMONY_TOKENIZER.id(t), s) for t, tid, s in tokens]


def group_tokens(tokens: Sequence[tuple[str, int, bool]], sizes: Sequence[int], mode: str) -> list[tuple[str, list[int]]]:
    """Engine steps of 0..n tokens each ('' steps included); ``mode`` 'ids' drops the specials' text."""
    if not any(sizes):
        sizes = [*sizes, 1]
    steps: list[tuple[str, list[int]]] = []
    i = k = 0
    while i < len(tokens) or k == 0:
        n = sizes[k % len(sizes)]
        g = tokens[i:i + n]
        text = ''.join(t for t, _, s in g if mode == 'text' or not s)
        steps.append((text, [tid for _, tid, _ in g]))
        i += n
        k += 1
    return steps


# ---- soups: marker fragments, near-misses, escapes --------------------------------------------

COMMON_PIECES = ('\n', '\n\n', ' ', 'a', 'text', '北京', '🌧', '\u00e9', '𝄞', '<', '</', '<|', '|>', '{', '}', '[', ']',
                 '"', '\\', '\\"', '\\\\', '\\u00e9', '\\ud83c\\udf27', '\\ud83c', ',', ':', '1', 'null', '=',
                 '"name"', '"get_weather"', '"search"', '"delete_all"', 'get_weather', 'search', 'delete_all',
                 'functions.get_weather:0', '"city"', '"query"', 'city', 'query', '{"name": "get_weather", ',
                 '{"city": "Paris"}', '"Par', '>')


def soup_pieces(cfg: Config) -> list[str]:
    markers = config_markers(cfg)
    return list(dict.fromkeys([*markers, *prefixes(markers), *near_misses(markers), *COMMON_PIECES]))


# ---- checking ----------------------------------------------------------------------------------


@dataclass
class Result:
    content: str | None
    reasoning: str | None
    calls: list[tuple[str, str]]
    visible: str = ''  # content and reasoning in stream order

    def key(self) -> tuple[Any, Any, Any]:
        return self.content, self.reasoning, self.calls


class InvariantError(AssertionError):
    pass


def _check_messages(flagged: Sequence[tuple[Any, bool]]) -> None:
    for message, emitted in flagged:
        channels = [n for n in ('content', 'reasoning_content', 'tool_calls') if getattr(message, n) is not None]
        if channels == ['content'] and message.content == '':
            # the empty delta of a text-less step (LMDeploy parity)
            if emitted is not False:
                raise InvariantError(f'tool flag on an empty content delta: {message!r}')
            continue
        if len(channels) != 1:
            raise InvariantError(f'message carries {channels}: {message!r}')
        if not getattr(message, channels[0]):
            raise InvariantError(f'empty {channels[0]} fragment: {message!r}')
        if emitted is not (channels[0] == 'tool_calls'):
            raise InvariantError(f'tool flag {emitted} on {message!r}')


def _check_identity(deltas: Sequence[Any]) -> None:
    seen: list[int] = []
    for d in deltas:
        if d.index not in seen:
            if d.index != len(seen):
                raise InvariantError(f'non-contiguous tool index {d.index} after {seen}')
            if not (d.id and d.type == 'function' and d.function is not None and d.function.name):
                raise InvariantError(f'first delta of index {d.index} lacks identity: {d!r}')
            seen.append(d.index)
        elif d.id is not None or d.type is not None or (d.function is not None and d.function.name is not None):
            raise InvariantError(f'identity repeated on a later delta: {d!r}')
        if d.index != seen[-1]:
            raise InvariantError(f'delta for call {d.index} after call {seen[-1]} started')


def run_stream(parser: Any, steps: Sequence[tuple[str, Any]], flush: bool) -> Result:
    """Feed (text, ids) steps, the last final (or an extra ('', []) final when ``flush``); check every delta."""
    flagged: list[tuple[Any, bool]] = []
    for i, (text, ids) in enumerate(steps):
        flagged.extend(parser.stream_chunk(text, ids, final=not flush and i == len(steps) - 1))
    if flush:
        flagged.extend(parser.stream_chunk('', [], final=True))
    _check_messages(flagged)
    messages = [m for m, _ in flagged]
    deltas = [d for m in messages for d in (m.tool_calls or [])]
    _check_identity(deltas)
    content = ''.join(m.content or '' for m in messages)
    reasoning = ''.join(m.reasoning_content or '' for m in messages)
    visible = ''.join((m.content or '') + (m.reasoning_content or '') for m in messages)
    calls = []
    if deltas:
        calls = [(c.function.name, c.function.arguments) for c in parser.tool_parser.build_tool_calls(deltas)]
    return Result(content or None, reasoning or None, calls, visible)


def run_complete(parser: Any, text: str, ids: Any = None) -> Result:
    content, tool_calls, reasoning = parser.parse_complete(text, ids) if ids is not None else parser.parse_complete(text)
    return Result(content, reasoning, [(c.function.name, c.function.arguments) for c in tool_calls or []])


def split(text: str, cuts: Sequence[int], empties: Sequence[int] = ()) -> list[str]:
    """Chunks of text cut at ``cuts`` (any order, duplicates give empty chunks), '' inserted at ``empties``."""
    bounds = sorted(min(max(c, 0), len(text)) for c in cuts)
    out, prev = [], 0
    for b in bounds:
        out.append(text[prev:b])
        prev = b
    out.append(text[prev:])
    for e in empties:
        out.insert(min(e, len(out)), '')
    return out


def _args_equal(got: str, want: Any) -> bool:
    if isinstance(want, str):
        return got == want
    try:
        return json.loads(got) == want
    except ValueError:
        return False


def describe(cfg: Config, steps: Any, flush: bool) -> str:
    return f'config={cfg.id} steps={list(steps)!r} flush_on_empty_final={flush}'


def check_text(cfg: Config, text: str, chunks: Sequence[str], flush: bool, built: Built | None = None) -> None:
    """Chunked stream == one chunk == parse_complete, every message well-formed; oracle when ``built``."""
    one = _agree(cfg, lambda: new_parser(cfg), [(c, []) for c in chunks], flush, text, None,
                 describe(cfg, chunks, flush))
    if built is not None:
        check_oracle(cfg, one, built)


def _agree(cfg: Config, make: Callable[[], Any], steps: Sequence[tuple[str, Any]], flush: bool, text: str,
           ids: Any, where: str) -> Result:
    """``steps`` == the whole text as one step == ``parse_complete``, every message well-formed; the one-step result."""
    try:
        one = run_stream(make(), [(text, ids if ids is not None else [])], flush=False)
        got = run_stream(make(), steps, flush=flush)
        full = run_complete(make(), text, ids)
    except InvariantError as exc:
        raise InvariantError(f'{exc}\n  {where}') from None
    if got.key() != one.key():
        raise InvariantError(f'chunked != one chunk\n  chunked: {got.key()!r}\n  one:     {one.key()!r}\n  {where}')
    if full.key() != one.key():
        raise InvariantError(f'parse_complete != one chunk\n  complete: {full.key()!r}\n  one:      {one.key()!r}'
                             f'\n  config={cfg.id} text={text!r}')
    return one


def check_oracle(cfg: Config, got: Result, built: Built) -> None:
    if built.calls is not None:
        names = [n for n, _ in got.calls]
        want = [n for n, _ in built.calls]
        if names != want or not all(_args_equal(g, w) for (_, g), (_, w) in zip(got.calls, built.calls)):
            raise InvariantError(f'calls differ from the generated ones\n  got:  {got.calls!r}\n  want: {built.calls!r}'
                                 f'\n  config={cfg.id} text={built.text!r}')
    if built.visible is not None and got.visible != built.visible:
        raise InvariantError(f'text lost or changed\n  got:  {got.visible!r}\n  want: {built.visible!r}'
                             f'\n  config={cfg.id} text={built.text!r}')


def check_harmony_ids(cfg: Config, tokens: Sequence[tuple[str, int, bool]], sizes: Sequence[int], flush: bool,
                      built: Built | None = None) -> None:
    """Token-id input: every grouping (with a tokenizer) == one token per step == parse_complete == text mode."""
    toks = with_ids(tokens)
    ids = [tid for _, tid, _ in toks]
    id_text = ''.join(t for t, _, s in toks if not s)
    full_text = ''.join(t for t, _, _ in toks)
    tk = HARMONY_TOKENIZER
    id_cfg = Config(cfg.id, cfg.kind, response=cfg.response, input_mode='ids')
    single = group_tokens(toks, [1], 'ids')
    grouped = group_tokens(toks, sizes, 'ids')
    where = f'config={cfg.id} tokens={toks!r} sizes={list(sizes)!r} flush={flush}'
    try:
        one_tok = run_stream(new_parser(id_cfg), single, flush=False)
        got = run_stream(new_parser(id_cfg, tk), grouped, flush=flush)
        full = run_complete(new_parser(id_cfg, tk), id_text, ids)
        text_grouped = run_stream(new_parser(Config(cfg.id, cfg.kind, response=cfg.response, input_mode='text')),
                                  group_tokens(toks, sizes, 'text'), flush=flush)
    except InvariantError as exc:
        raise InvariantError(f'{exc}\n  {where}') from None
    if got.key() != one_tok.key():
        raise InvariantError(f'id mode: grouped != one token per step\n  grouped: {got.key()!r}\n  single:  '
                             f'{one_tok.key()!r}\n  {where}')
    if full.key() != one_tok.key():
        raise InvariantError(f'id mode: parse_complete != streamed\n  complete: {full.key()!r}\n  single:   '
                             f'{one_tok.key()!r}\n  {where}')
    if text_grouped.key() != one_tok.key():
        raise InvariantError(f'text mode with ids != id mode (ids decide what is special)\n  text: '
                             f'{text_grouped.key()!r}\n  ids:  {one_tok.key()!r}\n  text={full_text!r}\n  {where}')
    if built is not None:
        check_oracle(cfg, one_tok, built)


def literal_specials_possible(tokens: Sequence[tuple[str, int, bool]]) -> bool:
    """Whether some ordinary-token text spells a special (then text mode without ids cannot match)."""
    text = ''.join(t if not s else '\x00' for t, _, s in tokens)
    return any(tag in text for tag in HARMONY_SPECIAL_TOKEN_IDS)
