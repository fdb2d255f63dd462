"""Checkpoint ``response_template`` metadata, mapped onto lmparse's compiled families.

vLLM's ``hf`` parsers (``vllm/parser/response_template.py``, the schema in
``vllm/parser/chat_parsing/response_templates.py``) and SGLang's
``response_template`` parsers (``sglang/srt/parser/response_template.py``)
read a ``response_template`` dict that a model ships in its tokenizer config
(``tokenizer.response_template``, or ``tokenizer.init_kwargs['response_template']``
as loaded from ``tokenizer_config.json``) and parse output with a generic
regex-driven region parser. The format (version 1, from transformers'
``utils/chat_parsing``)::

    {"start_anchor": "...", "defaults": {"role": "assistant"},
     "fields": {"thinking":   {"open": "<think>", "close": "</think>", "content": "text"},
                "tool_calls": {"open_pattern": "\\\\s*<tool_call>", "close": "</tool_call>",
                               "repeats": true, "content": "json",
                               "transform": {"type": "function", "function": "{content}"}},
                "content":    {"close_pattern": "\\\\s*(?:<\\\\|im_end\\\\|>|<\\\\|endoftext\\\\|>)"}}}

lmparse does not interpret regexes on the hot path. It reads the template once
and, when the template describes a grammar one of its compiled families
parses, builds a declaration on that family:

- ``thinking`` (literal or literal-only pattern, one open and one close) ->
  a :class:`ReasoningParser` with those tags. The template carries no prompt,
  so output starts inside reasoning when the request's ``enable_thinking`` is
  True (the templates' prefilled opener) and otherwise when the model writes
  the opener.
- ``tool_calls``: ``OPEN{"name": ..., "arguments": ...}CLOSE`` JSON envelopes
  (``content: json``, ``function: "{content}"``) -> :class:`JsonToolParser`;
  ``BLOCK\\s*FUNC(?P<name>...)END`` headers with ``xml-inline`` parameters ->
  :class:`XmlToolParser`; ``OPEN PREFIX(?P<name>...)`` headers with lax JSON
  (``unquoted_keys`` and one ``string_delims`` pair) -> :class:`BraceCallToolParser`.
- ``content`` open/close literals -> ``content_markers`` (dropped from text).

Anything else (a regex beyond literals, whitespace runs and one named
capture; alternative closers; value parsers other than text; header-named
JSON arguments; unknown fields) raises :class:`ResponseTemplateError` naming
the field and the reason, at configuration time, never mid-stream.
SGLang's built-in Beam template is one such: its calls open with a bare
`` to=NAME`` recipient header and close on either of two markers (``beam``
reads it on the recipient-channel family, ``lmparse.dialects.beam``).

Differences from the engines' regex parser, by design: whitespace the
template lets a pattern swallow before a marker stays text; XML values are
typed as the XML family types them; the ``start_anchor`` is not used (lmparse
sees only generated text).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from lmparse.reasoning import ReasoningParser
from lmparse.registry import ReasoningParserManager, ToolParserManager
from lmparse.response import BaseResponseParser
from lmparse.tools.base import ToolParser
from lmparse.tools.brace_call import BraceCallToolParser
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.xml_parser import XmlToolParser

__all__ = [
    'ResponseTemplateDialect',
    'ResponseTemplateError',
    'ResponseTemplateReasoningParser',
    'ResponseTemplateToolParser',
    'compile_response_template',
    'response_template_of',
]

_FIELDS = frozenset({'thinking', 'content', 'tool_calls'})
_FIELD_KEYS = frozenset({'open', 'open_pattern', 'close', 'close_pattern', 'content', 'content_args', 'repeats',
                         'join', 'optional', 'transform', 'transform_each'})
_TEMPLATE_KEYS = frozenset({'version', 'defaults', 'fields', 'start_anchor', 'start_anchor_pattern'})


class ResponseTemplateError(ValueError):
    """A response template lmparse cannot map onto a compiled family (or no template at all).

    ``field`` names the template field (None: the template as a whole) and
    ``reason`` says what is outside lmparse's families.
    """

    def __init__(self, reason: str, field: str | None = None) -> None:
        self.field = field
        self.reason = reason
        where = f"response_template field '{field}'" if field else 'response_template'
        super().__init__(f'{where}: {reason}')


# ---- the regex subset: literals, \s* / \s+, one (?P<name>...), (?:lit|lit) ---------------------------

@dataclass(frozen=True)
class _Tok:
    kind: str  # 'lit', 'ws', 'group', 'alt'
    text: str = ''
    name: str = ''
    options: tuple[str, ...] = ()


_ESCAPES = {'n': '\n', 't': '\t', 'r': '\r'}


def _group_end(p: str, i: int) -> int:
    """Index of the ')' closing the group whose body starts at ``i`` (no nested groups)."""
    in_class = False
    while i < len(p):
        c = p[i]
        if c == '\\':
            i += 2
            continue
        if in_class:
            in_class = c != ']'
        elif c == '[':
            in_class = True
        elif c == '(':
            raise ValueError('nested groups')
        elif c == ')':
            return i
        i += 1
    raise ValueError('unbalanced group')


def _alternatives(body: str) -> list[str]:
    """``body`` split at its unescaped ``|``."""
    parts, start, i = [], 0, 0
    while i < len(body):
        if body[i] == '\\':
            i += 2
            continue
        if body[i] == '|':
            parts.append(body[start:i])
            start = i + 1
        i += 1
    parts.append(body[start:])
    return parts


def _tokens(p: str) -> list[_Tok]:
    """Read ``p`` as literals, whitespace runs and groups; ValueError for any other regex."""
    out: list[_Tok] = []
    lit: list[str] = []

    def flush() -> None:
        if lit:
            out.append(_Tok('lit', ''.join(lit)))
            lit.clear()

    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c == '\\' and i + 1 < n:
            e = p[i + 1]
            if e == 's':
                q = p[i + 2] if i + 2 < n else ''
                if q not in '*+' or not q:
                    raise ValueError(r'\s without * or +')
                flush()
                out.append(_Tok('ws', q))
                i += 3
                continue
            if e in _ESCAPES:
                lit.append(_ESCAPES[e])
            elif not e.isalnum():
                lit.append(e)
            else:
                raise ValueError(f'escape \\{e}')
            i += 2
        elif c == '(':
            if p.startswith('(?P<', i):
                close = p.index('>', i)
                end = _group_end(p, close + 1)
                flush()
                out.append(_Tok('group', p[close + 1:end], name=p[i + 4:close]))
                i = end + 1
            elif p.startswith('(?:', i):
                end = _group_end(p, i + 3)
                options = []
                for part in _alternatives(p[i + 3:end]):
                    toks = _tokens(part)
                    if len(toks) != 1 or toks[0].kind != 'lit':
                        raise ValueError('an alternative that is not a literal')
                    options.append(toks[0].text)
                flush()
                out.append(_Tok('alt', options=tuple(options)))
                i = end + 1
            else:
                raise ValueError('a group other than (?P<name>...) or (?:a|b)')
        elif c in '.^$*+?{}[]|)':
            raise ValueError(f'the regex operator {c!r}')
        else:
            lit.append(c)
            i += 1
    flush()
    return out


def _anchor(spec: Mapping[str, Any], key: str, field: str) -> list[_Tok] | None:
    """The tokens of a field's ``key`` anchor (``open``/``close``), literal or pattern; None when absent."""
    if key in spec and f'{key}_pattern' in spec:
        raise ResponseTemplateError(f"both '{key}' and '{key}_pattern'", field)
    if key in spec:
        raw = spec[key]
        literals = [raw] if isinstance(raw, str) else raw
        if not isinstance(literals, list) or not literals or not all(isinstance(s, str) and s for s in literals):
            raise ResponseTemplateError(f"'{key}' must be a non-empty string or list of them", field)
        literals = list(dict.fromkeys(literals))
        return [_Tok('lit', literals[0])] if len(literals) == 1 else [_Tok('alt', options=tuple(literals))]
    if f'{key}_pattern' in spec:
        pattern = spec[f'{key}_pattern']
        if not isinstance(pattern, str):
            raise ResponseTemplateError(f"'{key}_pattern' must be a string", field)
        try:
            return _tokens(pattern)
        except ValueError as exc:
            raise ResponseTemplateError(f'{key}_pattern {pattern!r} uses {exc}, beyond literal markers', field) \
                from None
    return None


def _strip_ws(toks: list[_Tok]) -> list[_Tok]:
    """Drop leading and trailing whitespace runs (the router skips separators between blocks)."""
    start, end = 0, len(toks)
    while start < end and toks[start].kind == 'ws':
        start += 1
    while end > start and toks[end - 1].kind == 'ws':
        end -= 1
    return toks[start:end]


def _markers(toks: list[_Tok] | None) -> tuple[str, ...]:
    """Every literal marker an anchor matches (one literal, or an alternation of them)."""
    if toks is None:
        return ()
    toks = _strip_ws(toks)
    if len(toks) == 1 and toks[0].kind == 'lit':
        return (toks[0].text,)
    if len(toks) == 1 and toks[0].kind == 'alt':
        return toks[0].options
    raise ValueError('not a literal marker')


def _one_literal(toks: list[_Tok] | None, what: str, field: str) -> str:
    if toks is None:
        raise ResponseTemplateError(f'no {what}', field)
    try:
        markers = _markers(toks)
    except ValueError:
        raise ResponseTemplateError(f'the {what} is not a literal marker', field) from None
    if len(markers) != 1:
        raise ResponseTemplateError(f'{len(markers)} alternative {what}s {list(markers)!r}; '
                                    f'the family takes one', field)
    return markers[0]


def _kinds(toks: list[_Tok]) -> str:
    return ''.join({'lit': 'L', 'ws': 'W', 'group': 'G', 'alt': 'A'}[t.kind] for t in toks)


def _check_content(spec: Mapping[str, Any], field: str) -> None:
    for key in ('join', 'transform_each'):
        if spec.get(key):
            raise ResponseTemplateError(f"'{key}' is not supported", field)
    if spec.get('content', 'text') != 'text' or spec.get('content_args'):
        raise ResponseTemplateError("only 'text' content (no content_args) maps onto reasoning or content", field)


# ---- fields -> declarations --------------------------------------------------------------------------

def _function_transform(spec: Mapping[str, Any], *, named: bool, field: str) -> None:
    """The transform must be the OpenAI function-call shape the family builds."""
    transform = spec.get('transform')
    if not isinstance(transform, dict) or transform.get('type', 'function') != 'function':
        raise ResponseTemplateError("the transform must build {'type': 'function', 'function': ...}", field)
    function = transform.get('function')
    if named:
        ok = isinstance(function, dict) and function.get('name') == '{name}' and function.get('arguments') == '{content}'
        if not ok:
            raise ResponseTemplateError("a named header needs function {'name': '{name}', 'arguments': '{content}'}",
                                        field)
    elif function != '{content}':
        raise ResponseTemplateError("a JSON envelope needs function '{content}' (an object with name and arguments)",
                                    field)


def _json_tool(spec: Mapping[str, Any], open_toks: list[_Tok], close: str, field: str) -> dict[str, Any]:
    if spec.get('content_args'):
        raise ResponseTemplateError(f"json content_args {sorted(spec['content_args'])} on a JSON envelope", field)
    _function_transform(spec, named=False, field=field)
    return {'__base__': JsonToolParser, 'tool_open_tag': _one_literal(open_toks, 'open marker', field),
            'tool_close_tag': close, 'name_field': 'name', 'argument_field': 'arguments'}


def _brace_tool(spec: Mapping[str, Any], head: list[_Tok], close: str, field: str) -> dict[str, Any]:
    args = spec.get('content_args') or {}
    delims = args.get('string_delims') or []
    if set(args) - {'unquoted_keys', 'string_delims'} or not args.get('unquoted_keys') or len(delims) != 1 \
            or len(delims[0]) != 2 or delims[0][0] != delims[0][1]:
        raise ResponseTemplateError('named JSON arguments map only as brace calls: unquoted_keys and one '
                                    'string_delims pair with the same open and close', field)
    _function_transform(spec, named=True, field=field)
    if _kinds(head) != 'LG':
        raise ResponseTemplateError('a brace-call header is OPEN PREFIX(?P<name>...) and nothing after the name',
                                    field)
    literal = head[0].text
    cut = literal.rfind('>') + 1
    if not 0 < cut < len(literal):
        raise ResponseTemplateError(f'cannot split {literal!r} into a marker ending in ">" and a call prefix', field)
    return {'__base__': BraceCallToolParser, 'tool_open_tag': literal[:cut], 'call_prefixes': (literal[cut:],),
            'tool_close_tag': close, 'string_delimiter': delims[0][0]}


def _xml_tool(spec: Mapping[str, Any], head: list[_Tok], close_toks: list[_Tok] | None,
              field: str) -> dict[str, Any]:
    _function_transform(spec, named=True, field=field)
    if _kinds(head) != 'LWLGL':
        raise ResponseTemplateError('an XML call header maps as BLOCK_OPEN\\s*FUNCTION_OPEN(?P<name>...)NAME_END', field)
    close = _strip_ws(close_toks or [])
    if _kinds(close) != 'LWL':
        raise ResponseTemplateError('an XML call close maps as FUNCTION_CLOSE\\s*BLOCK_CLOSE', field)
    args = spec.get('content_args') or {}
    if set(args) - {'tag_pattern', 'merge_duplicates', 'value_parser'}:
        raise ResponseTemplateError(f'xml-inline content_args {sorted(args)}', field)
    parser = args.get('value_parser')
    if parser is not None and (parser.get('name', 'text') != 'text' or parser.get('args', {}).get('strip') is False):
        raise ResponseTemplateError('xml-inline value parsers other than stripped text', field)
    try:
        tag = _tokens(str(args.get('tag_pattern', '')))
    except ValueError as exc:
        raise ResponseTemplateError(f'tag_pattern uses {exc}', field) from None
    kinds = _kinds(tag)
    if kinds not in ('LGLGL', 'LGLWGWL') or [t.name for t in tag if t.kind == 'group'] != ['key', 'value'] \
            or tag[-2 if kinds == 'LGLGL' else -3].text not in ('.*?', r'[\s\S]*?'):
        raise ResponseTemplateError('tag_pattern maps as ARG_OPEN(?P<key>...)NAME_END\\s*(?P<value>.*?)\\s*CLOSE', field)
    return {'__base__': XmlToolParser, 'tool_open_tag': head[0].text, 'function_open': head[2].text,
            'function_name_end': head[4].text, 'arg_open': tag[0].text, 'arg_name_end': tag[2].text,
            'arg_value_close_tag': tag[-1].text, 'function_close': close[0].text, 'tool_close_tag': close[2].text,
            'multiple_calls': True, 'strip_value_newlines': kinds == 'LGLWGWL'}


def _tool_declarations(spec: Mapping[str, Any]) -> dict[str, Any]:
    field = 'tool_calls'
    for key in ('join', 'transform_each'):
        if spec.get(key):
            raise ResponseTemplateError(f"'{key}' is not supported", field)
    open_toks = _anchor(spec, 'open', field)
    close_toks = _anchor(spec, 'close', field)
    if open_toks is None:
        raise ResponseTemplateError('tool calls without an open marker', field)
    head = _strip_ws(open_toks)
    named = any(t.kind == 'group' for t in head)
    if named and [t.name for t in head if t.kind == 'group'] != ['name']:
        raise ResponseTemplateError("the only capture an open pattern may have is (?P<name>...)", field)
    content = spec.get('content', 'text')
    if content == 'json' and not named:
        return _json_tool(spec, open_toks, _one_literal(close_toks, 'close marker', field), field)
    if content == 'json':
        return _brace_tool(spec, head, _one_literal(close_toks, 'close marker', field), field)
    if content == 'xml-inline' and named:
        return _xml_tool(spec, head, close_toks, field)
    raise ResponseTemplateError(f'{content!r} content{" under a named header" if named else ""} matches no '
                                f'lmparse family (JSON envelope, XML-like, brace call)', field)


@dataclass(frozen=True)
class ResponseTemplateDialect:
    """The classes a response template maps onto (None where the template has no such field)."""

    reasoning_parser: type[ReasoningParser] | None
    tool_parser: type[ToolParser] | None
    content_markers: tuple[str, ...]

    def response_parser(self, tokenizer: Any = None) -> type[BaseResponseParser]:
        """A :class:`BaseResponseParser` subclass configured with both parsers (one per served model)."""
        name = 'BaseResponseParser[response_template]'
        return type(name, (BaseResponseParser,), {
            '__module__': __name__, '__qualname__': name, 'reasoning_parser_cls': self.reasoning_parser,
            'tool_parser_cls': self.tool_parser, 'tokenizer': tokenizer if hasattr(tokenizer, 'get_vocab') else None})


class _TemplateReasoning(ReasoningParser):
    """Base of reasoning classes built from a template: markers need not be single tokens."""

    thinking_switches: ClassVar[tuple[str, ...]] = ('enable_thinking',)

    @classmethod
    def validate_tokenizer(cls, tokenizer: Any) -> None:
        # A template's markers may span several tokens; nothing to look up.
        return None


def _validate(template: Any) -> Mapping[str, Any]:
    if not isinstance(template, Mapping):
        raise ResponseTemplateError(f'must be a dict, got {type(template).__name__}')
    if template.get('version', 1) != 1:
        raise ResponseTemplateError(f"unsupported version {template.get('version')!r}")
    unknown = set(template) - _TEMPLATE_KEYS
    if unknown:
        raise ResponseTemplateError(f'unknown keys {sorted(unknown)}')
    defaults = template.get('defaults', {})
    if not isinstance(defaults, Mapping) or set(defaults) - {'role'}:
        raise ResponseTemplateError('defaults other than role carry fields serving cannot route')
    fields = template.get('fields')
    if not isinstance(fields, Mapping) or not fields:
        raise ResponseTemplateError('fields must be a non-empty dict')
    for name, spec in fields.items():
        if name not in _FIELDS:
            raise ResponseTemplateError(f'a field serving cannot route (supported: {sorted(_FIELDS)})', str(name))
        if not isinstance(spec, Mapping):
            raise ResponseTemplateError('must be a dict', name)
        if set(spec) - _FIELD_KEYS:
            raise ResponseTemplateError(f'unknown keys {sorted(set(spec) - _FIELD_KEYS)}', name)
    return fields


def compile_response_template(template: Any) -> ResponseTemplateDialect:
    """Map a ``response_template`` dict onto lmparse classes; :class:`ResponseTemplateError` if it cannot."""
    fields = _validate(template)
    markers: list[str] = []
    content = fields.get('content')
    if content is not None:
        _check_content(content, 'content')
        for key in ('open', 'close'):
            try:
                markers.extend(_markers(_anchor(content, key, 'content')))
            except ValueError:
                raise ResponseTemplateError(f'the {key} marker is not a literal (or alternation of literals)',
                                            'content') from None
    content_markers = tuple(dict.fromkeys(markers))
    label = json.dumps(template, sort_keys=True)[:60]
    reasoning: type[ReasoningParser] | None = None
    thinking = fields.get('thinking')
    if thinking is not None:
        _check_content(thinking, 'thinking')
        if thinking.get('repeats'):
            raise ResponseTemplateError('repeated thinking regions', 'thinking')
        open_tag = _one_literal(_anchor(thinking, 'open', 'thinking'), 'open marker', 'thinking')
        close_tag = _one_literal(_anchor(thinking, 'close', 'thinking'), 'close marker', 'thinking')
        attrs: dict[str, Any] = {'reasoning_open_tag': open_tag, 'reasoning_close_tag': close_tag,
                                 'content_markers': content_markers, '__module__': __name__,
                                 '__doc__': f'From {label}…'}
        reasoning = type('TemplateReasoningParser', (_TemplateReasoning,), attrs)
    tool: type[ToolParser] | None = None
    calls = fields.get('tool_calls')
    if calls is not None:
        tool_attrs = _tool_declarations(calls)
        base: type[ToolParser] = tool_attrs.pop('__base__')
        tool_attrs.update({'content_markers': content_markers, 'request_settings': {'skip_special_tokens': False},
                      '__module__': __name__, '__doc__': f'From {label}…'})
        tool = type(f'Template{base.__name__}', (base,), tool_attrs)
    return ResponseTemplateDialect(reasoning, tool, content_markers)


def response_template_of(source: Any) -> Mapping[str, Any]:
    """The template of a tokenizer (``.response_template`` or ``.init_kwargs``), a tokenizer config dict or a template.

    The lookup order is vLLM's ``resolve_response_template``.
    """
    if source is None:
        raise ResponseTemplateError('needs the served tokenizer (set_parsers(..., tokenizer=...)): '
                                    'the template comes from its config')
    if isinstance(source, Mapping):
        if 'fields' in source:
            return source
        template = source.get('response_template')
    else:
        template = getattr(source, 'response_template', None)
        if not isinstance(template, Mapping):
            template = (getattr(source, 'init_kwargs', None) or {}).get('response_template')
    if not isinstance(template, Mapping):
        raise ResponseTemplateError(f'{type(source).__name__} carries no response_template '
                                    '(tokenizer.response_template or tokenizer_config.json "response_template")')
    return template


_COMPILED: dict[str, ResponseTemplateDialect] = {}


def _dialect_for(tokenizer: Any) -> ResponseTemplateDialect:
    template = response_template_of(tokenizer)
    key = json.dumps(template, sort_keys=True)
    dialect = _COMPILED.get(key)
    if dialect is None:
        dialect = _COMPILED[key] = compile_response_template(template)
    return dialect


@ReasoningParserManager.register_module(['hf', 'response_template'])
class ResponseTemplateReasoningParser(_TemplateReasoning):
    """The reasoning protocol of the served tokenizer's ``response_template`` (resolved by ``set_parsers``)."""

    from_tokenizer: ClassVar[bool] = True

    @classmethod
    def for_tokenizer(cls, tokenizer: Any) -> type[ReasoningParser]:
        reasoning = _dialect_for(tokenizer).reasoning_parser
        if reasoning is None:
            raise ResponseTemplateError('the template has no thinking field', 'thinking')
        return reasoning


@ToolParserManager.register_module(['hf', 'response_template'])
class ResponseTemplateToolParser(ToolParser):
    """The tool grammar of the served tokenizer's ``response_template`` (resolved by ``set_parsers``)."""

    from_tokenizer: ClassVar[bool] = True

    @classmethod
    def for_tokenizer(cls, tokenizer: Any) -> type[ToolParser]:
        tool = _dialect_for(tokenizer).tool_parser
        if tool is None:
            raise ResponseTemplateError('the template has no tool_calls field', 'tool_calls')
        return tool
