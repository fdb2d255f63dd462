"""Plain-Python helpers of the GPT-OSS Harmony parser (not on the per-character path).

* :func:`adjust_harmony_request` prepares the request for the Harmony chat
  template and the engine (full tool wrappers, ``tool_choice``, structural tag);
* :func:`split_chunk_text` splits the text of a token-id-mode chunk that
  spans several Harmony segments (rare: several tokens per engine step).
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from lmparse.request import (
    _allowed_tools_entries,
    _tool_name,
    as_request,
    get_field,
    normalize_chat_request,
    tool_choice_function_name,
    tool_choice_kind,
    tool_parameter_schemas,
    update_request,
)

__all__ = ['adjust_harmony_request', 'build_harmony_structural_tag', 'split_chunk_text', 'tool_wrapper']

logger = logging.getLogger('lmparse')


def tool_wrapper(tool: Any) -> dict[str, Any]:
    """A tool as the full OpenAI wrapper ``{"type": "function", "function": {...}}``."""
    if isinstance(tool, dict):
        if 'function' in tool:
            return dict(tool)
        return {'type': 'function', 'function': dict(tool)}
    dump = getattr(tool, 'model_dump', None)
    if dump is not None:
        dumped: dict[str, Any] = dump()
        return dumped
    function = getattr(tool, 'function', None)
    if function is not None:
        return {'type': getattr(tool, 'type', 'function') or 'function',
                'function': {'name': function.name,
                             'description': getattr(function, 'description', None),
                             'parameters': getattr(function, 'parameters', None)}}
    raise TypeError(f'Cannot interpret {type(tool).__name__} as a tool')


def _allowed_function_names(choice: Any) -> list[str]:
    names = []
    for entry in _allowed_tools_entries(choice):
        function = get_field(entry, 'function')
        name = get_field(function, 'name') if function is not None else None
        if isinstance(name, str):
            names.append(name)
    return names


_UNRESOLVED: Any = object()
_xgrammar_builder: Any = _UNRESOLVED


def _structural_tag_builder() -> Any:
    """xgrammar's ``get_model_structural_tag``, or None; looked up once (a failed import costs ~100 µs)."""
    global _xgrammar_builder
    if _xgrammar_builder is _UNRESOLVED:
        try:
            from xgrammar.builtin_structural_tag import get_model_structural_tag  # type: ignore[import-not-found]
        except ImportError:
            try:
                from xgrammar import get_model_structural_tag  # type: ignore[import-not-found]
            except ImportError:
                get_model_structural_tag = None
        _xgrammar_builder = get_model_structural_tag
    return _xgrammar_builder


# (builder, tools and tool_choice as JSON text) -> the tag as JSON text. Building a
# tag costs ~100 µs and a server sees the same tool set on most requests. The
# key is the exact JSON text (key order and number spelling kept), so tool sets
# that could build different tags never share an entry; each request gets its
# own copy of the tag. Bounded. Free-threaded builds: entries are immutable
# strings and dict get/set are atomic, so a race only builds a tag twice.
_TAG_CACHE: dict[tuple[Any, str], str] = {}
_TAG_CACHE_SIZE = 64


def _tag_key(builder: Any, tools: Sequence[dict[str, Any]], tool_choice: Any) -> tuple[Any, str] | None:
    try:
        text = json.dumps([tools, tool_choice], ensure_ascii=False, allow_nan=False, separators=(',', ':'))
    except (TypeError, ValueError):  # not plain JSON data: build it every time
        return None
    return builder, text


def build_harmony_structural_tag(tools: Sequence[dict[str, Any]], tool_choice: Any) -> dict[str, Any] | None:
    """XGrammar's ``harmony`` structural tag for these tools, or None when xgrammar cannot build it.

    Built once per distinct (tools, tool_choice); every call returns a new dict.
    """
    get_model_structural_tag = _structural_tag_builder()
    if get_model_structural_tag is None:
        return None
    if hasattr(tool_choice, 'model_dump'):
        tool_choice = tool_choice.model_dump(mode='json')
    key = _tag_key(get_model_structural_tag, tools, tool_choice)
    cached = _TAG_CACHE.get(key) if key is not None else None
    if cached is not None:
        tag_json: dict[str, Any] = json.loads(cached)
        return tag_json
    try:
        tag = get_model_structural_tag('harmony', tools=list(tools), tool_choice=tool_choice, reasoning=True)
    except Exception as err:  # xgrammar raises ValueError / ValidationError on bad tools
        logger.warning('gpt-oss: cannot build the harmony structural tag: %s', err)
        return None
    dumped: dict[str, Any] = tag.model_dump(mode='json')
    if key is not None:
        try:
            text = json.dumps(dumped, ensure_ascii=False, separators=(',', ':'))
        except (TypeError, ValueError):
            return dumped
        if len(_TAG_CACHE) >= _TAG_CACHE_SIZE:
            _TAG_CACHE.clear()
        _TAG_CACHE[key] = text
    return dumped


def _needs_structural_tag(kind: str, choice: Any) -> bool:
    """Whether ``tool_choice`` forces a call: "required", a named function, or allowed tools in "required" mode."""
    if kind in ('required', 'function'):
        return True
    if kind == 'allowed_tools':
        allowed = get_field(choice, 'allowed_tools', None)
        return get_field(allowed, 'mode', None) == 'required' if allowed is not None else False
    return False


def adjust_harmony_request(request: Any, tool_parser: Any) -> Any:
    """The request for the Harmony template and the engine; records the allowed tool names.

    * tools stay full wrappers (the GPT-OSS template expects them);
      ``tool_choice="none"`` drops them, a named function keeps only that one,
      ``auto`` / ``required`` / ``allowed_tools`` keep all (the allowed subset
      is enforced on the output and by the structural tag);
    * ``skip_special_tokens=False`` so the engine's text carries the Harmony
      special tokens (text mode, exact for any chunking);
    * when ``tool_choice`` forces a call (``"required"``, a named function,
      ``allowed_tools`` in ``"required"`` mode), the ``harmony`` structural tag
      (xgrammar, optional) becomes the ``response_format``;
      ``tool_choice="required"`` fails without it. ``"auto"`` builds no tag and
      never imports xgrammar.
    """
    request = as_request(request)
    kind = tool_choice_kind(request)
    tools = get_field(request, 'tools') or []
    choice = get_field(request, 'tool_choice', 'auto')

    if kind == 'allowed_tools':
        allowed = set(_allowed_function_names(choice))
        if not tools:
            tools = [{'type': 'function', 'function': dict(get_field(e, 'function'))}
                     for e in _allowed_tools_entries(choice) if isinstance(get_field(e, 'function'), dict)]
        missing = sorted(allowed - {_tool_name(t) for t in tools})
        if missing:
            raise ValueError(f'Allowed tool(s) not found in request.tools: {missing}')
        rendered = [tool_wrapper(t) for t in tools] or None
    elif kind == 'none' or not tools:
        rendered = None
        allowed = set()
    elif kind == 'function':
        forced = tool_choice_function_name(request)
        rendered = [tool_wrapper(t) for t in tools if _tool_name(t) == forced] or None
        allowed = {forced} if rendered and forced is not None else set()
    else:
        rendered = [tool_wrapper(t) for t in tools]
        allowed = {n for n in (_tool_name(t) for t in tools) if n is not None}

    adjusted = update_request(request, tools=rendered, skip_special_tokens=False)
    adjusted = normalize_chat_request(adjusted)
    tool_parser._allowed_tool_names = allowed
    tool_parser._tool_schemas = tool_parameter_schemas(adjusted)

    if rendered and _needs_structural_tag(kind, choice):
        # Only a request that forces calls needs the tag: building it imports xgrammar (and torch),
        # seconds and hundreds of MB on the first request; "auto" is parsed from the prompt alone.
        grammar = build_harmony_structural_tag(rendered, choice)
        if grammar is not None:
            adjusted = update_request(adjusted, response_format=grammar)
        elif kind == 'required':
            raise ValueError('`tool_choice="required"` for gpt-oss needs the xgrammar "harmony" structural tag: '
                             'pip install "lmparse[structural-tags]"')
    elif kind == 'required':
        raise ValueError('`tool_choice="required"` needs at least one tool in the request.')
    return adjusted


# ---- token-id mode: text of a chunk that spans several segments ------------------

# Segment codes as in harmony.pyx.
_T_START, _T_END, _T_MESSAGE, _T_CHANNEL, _T_CONSTRAIN, _T_RETURN, _T_CALL = range(1, 8)
_TERMINATORS = (_T_END, _T_RETURN, _T_CALL)
_HEADER, _CONTENT, _BETWEEN = 0, 1, 2

_NAME = r'[\w.\-:/]+'
# A segment with tokens has text (partial UTF-8 aside), so no pattern matches ''.
_ROLE = r'(?:(?:assistant|user|system|developer)(?:\s*to=' + _NAME + r')?|to=' + _NAME + r')'
_CHANNEL = r'(?:analysis|commentary|final)(?:\s+to=' + _NAME + r')?(?:\s+json)?'
_CONSTRAIN = r'(?:json|\w+)'
_HEADER_TAIL = r'(?:[\w.\-:/=]+(?:\s+to=' + _NAME + r')?(?:\s+json)?|\s+)'


def _segment_patterns(codes: Sequence[int], counts: Sequence[int], state: int) -> list[tuple[str, bool]]:
    """(regex, is_body) per segment, following the parser's state transitions."""
    patterns: list[tuple[str, bool]] = []
    opener = 0  # the special that opened the segment (0: the chunk start)
    for i, count in enumerate(counts):
        follows_body = i < len(codes) and codes[i] == _T_MESSAGE
        if count == 0:
            patterns.append(('', False))
        elif state in (_CONTENT, _BETWEEN):
            patterns.append((r'.+?', True))
        else:
            if opener == _T_START:
                pat = _ROLE
            elif opener == _T_CHANNEL:
                pat = _CHANNEL
            elif opener == _T_CONSTRAIN:
                pat = _CONSTRAIN
            else:
                pat = _HEADER_TAIL
            patterns.append((pat if follows_body else pat + r'\s*', False))
        if i < len(codes):
            code = codes[i]
            opener = code
            if state == _CONTENT:
                if code in _TERMINATORS:
                    state = _BETWEEN
            elif state == _BETWEEN:
                if code in (_T_START, _T_CHANNEL, _T_CONSTRAIN):
                    state = _HEADER
                elif code == _T_MESSAGE:
                    state = _CONTENT
            else:
                if code == _T_MESSAGE:
                    state = _CONTENT
                elif code in _TERMINATORS:
                    state = _BETWEEN
    return patterns


def _split_with_tokenizer(text: str, counts: Sequence[int], seg_ids: Sequence[Sequence[int]],
                          tokenizer: Any) -> list[str] | None:
    nonempty = [i for i, c in enumerate(counts) if c]
    try:
        decoded = {i: tokenizer.decode(list(seg_ids[i])) for i in nonempty}
    except Exception:  # any tokenizer failure: fall back to the grammar
        return None
    first, last = nonempty[0], nonempty[-1]
    middle = nonempty[1:-1]

    def place(parts: dict[int, str], start: int) -> list[str] | None:
        pos = start
        for i in middle:
            piece = decoded[i]
            if not text.startswith(piece, pos):
                return None
            parts[i] = piece
            pos += len(piece)
        return [parts.get(i, '') for i in range(len(counts))] if pos <= len(text) else None

    head = decoded[first]
    if text.startswith(head):
        parts = {first: head}
        result = place(parts, len(head))
        if result is not None:
            result[last] = text[len(head) + sum(len(decoded[i]) for i in middle):]
            return result
    tail = decoded[last]
    if text.endswith(tail):
        width = sum(len(decoded[i]) for i in middle)
        start = len(text) - len(tail) - width
        if start >= 0:
            parts = {last: tail}
            result = place(parts, start)
            if result is not None:
                result[first] = text[:start]
                return result
    return None


def split_chunk_text(text: str, codes: Sequence[int], counts: Sequence[int], seg_ids: Sequence[Sequence[int]],
                     state: int, tokenizer: Any = None) -> list[str]:
    """Split ``text`` over the ordinary-token segments between the special ids of one chunk.

    With a tokenizer the pieces are decoded and placed exactly; otherwise the
    Harmony header grammar decides (best effort: the first split where role,
    channel and constrain segments are well-formed headers). Segments without
    ordinary tokens get ``''``; the pieces always concatenate to ``text``.
    """
    if tokenizer is not None:
        exact = _split_with_tokenizer(text, counts, seg_ids, tokenizer)
        if exact is not None:
            return exact
    patterns = _segment_patterns(codes, counts, state)
    regex = ''.join(f'({pat})' for pat, _ in patterns)
    match = re.fullmatch(regex, text, re.S)
    if match is not None:
        return list(match.groups())
    # Not well-formed: give the text to the first body segment (or the first with tokens).
    parts = [''] * len(counts)
    target = next((i for i, (pat, body) in enumerate(patterns) if body and counts[i]),
                  next(i for i, c in enumerate(counts) if c))
    parts[target] = text
    return parts
