"""Derivation for markup the generic readers in ``_derive`` do not cover: namespaces, channels, valued switches.

- **Valued thinking switches.** A template that opens reasoning for a
  *value* of a variable (``thinking_mode == "enabled"``, MiniMax M3) rather
  than for a true ``enable_thinking`` / ``thinking``: every string a
  thinking-named variable is compared with in the template's own code
  becomes a setting to render, and the values whose prompt opens the
  reasoning become ``thinking_values``.
- **Namespace-marked elements** (MiniMax M3): ``NS<BLOCK>``,
  ``NS<INVOKE ATTR="NAME">``, one ``NS<KEY>value NS</KEY>`` element per
  argument (child elements for objects, ``<item>`` for lists),
  ``NS</INVOKE>``, ``NS</BLOCK>``, on :class:`NsElementToolParser`. The
  namespace is the text the template writes before the invoke tag, a
  parameter tag and a parameter close tag alike.
- **Name-keyed JSON envelopes** (Apertus): ``{"NAME": {arguments}}``, alone
  or in a JSON array, after a marker: the JSON family's ``name_as_key``.
- **Bare calls** (no marker before them): a JSON envelope or a Python list of
  calls at the start of the turn is what the built-in ``llama3_json`` /
  ``pythonic`` dialects read as a bare call (their ``bare_call_open``). The
  compiled families start a block only at an open marker, so the declaration
  keeps the built-in's (``<|python_tag|>``, ``<|python_start|>``, never
  written by the template) with the template's field names and literals;
  the proof then decides (a bare call after content, say, is not read).
- **Channel markers** (Kimi K3's XTML): a marker written as a special
  token, a label and a special token (``<|close|>think<|sep|>``) is one
  marker: the reasoning channel's close and its open (the same label after
  another token), the answer channel around the content (content markers),
  and an end of turn that is such a channel close (``<|close|>message<|sep|>``:
  several tokens, so no engine stop token; the model writes it, the
  dialect drops it as a content marker). The stop sequence is never cut
  inside one.
- **Channel-delimited attribute tags** (Kimi K3): ``OPEN BLOCK SEP``,
  ``OPEN INVOKE ATTR="NAME" ... SEP``, ``OPEN PARAM KEY="K" [TYPE="T"] SEP
  value END PARAM SEP``: the attribute-named family
  (:class:`DsmlToolParser`) with ``tag_open`` / ``end_tag_open`` /
  ``tag_close`` as the template writes them.
"""
from __future__ import annotations

import re
from typing import Any

from lmparse.templates._errors import TemplateDerivationError

__all__ = ['bare_failure', 'bare_json', 'bare_note', 'bare_pythonic', 'channel_end', 'channel_reasoning',
           'derive_channel_tags', 'derive_name_keyed', 'derive_ns_elements', 'is_channel_marker',
           'stop_at_marker_boundary', 'valued_settings']

# a variable the template compares with strings counts as a thinking switch when its name says so
_THINKING_NAME = re.compile(r'think', re.IGNORECASE)



def value_typing(string_arg: re.Match[str], number_arg: re.Match[str]) -> dict[str, Any] | None:
    """How argument tags mark a value's type, from a string argument's and a number argument's tag ('rest' group:
    what follows the key attribute): one attribute whose two values tell text from JSON, or none at all (the
    request's schema types each value); None when the tags do neither."""
    typed = [re.fullmatch(r'\s*([\w:-]+)="([^"]*)"\s*', p.group('rest')) for p in (string_arg, number_arg)]
    if typed[0] and typed[1] and typed[0].group(1) == typed[1].group(1) and typed[0].group(2) != typed[1].group(2):
        return {'string_attribute': typed[0].group(1), 'string_attribute_values': (typed[0].group(2),)}
    if not string_arg.group('rest').strip() and not number_arg.group('rest').strip():
        return {'string_attribute': None, 'schema_typed_values': True}
    return None

def valued_settings(source: str, variables: frozenset[str], boolean: tuple[str, ...]) -> list[dict[str, Any]]:
    """``{variable: value}`` for each string a thinking-named template variable is compared with
    (``thinking_mode == 'enabled'``), in source order; ``boolean`` variables are rendered as True / False
    elsewhere and are left out."""
    candidates = [v for v in variables if v not in boolean and _THINKING_NAME.search(v)]
    if not candidates:
        return []  # most templates: no parse needed
    from lmparse.templates._render import _environment

    nodes = __import__('jinja2').nodes
    tree = _environment().parse(source)
    found: dict[tuple[str, str], None] = {}
    for cmp in tree.find_all(nodes.Compare):
        operands = [cmp.expr] + [op.expr for op in cmp.ops]
        names = [o.name for o in operands if isinstance(o, nodes.Name)]
        # thinking_mode == 'enabled', and thinking_mode in ['enabled', 'auto']
        consts = [c for o in operands for c in (o.items if isinstance(o, (nodes.List, nodes.Tuple)) else [o])]
        values = [c.value for c in consts if isinstance(c, nodes.Const) and isinstance(c.value, str)]
        for name in names:
            if name in candidates:
                for value in values:
                    found[(name, value)] = None
    return [{name: value} for name, value in found]


def _common_suffix(texts: list[str]) -> str:
    first = texts[0]
    n = 0
    while n < len(first) and all(len(t) > n and t[-1 - n] == first[-1 - n] for t in texts):
        n += 1
    return first[len(first) - n:]


_INVOKE = re.compile(r'<(?P<el>[A-Za-z_][\w.:-]*) (?P<attr>[\w:-]+)="get_weather">')


def derive_ns_elements(outputs: dict[str, str], declaration: Any, base: type) -> Any:
    """A ``declaration(family, base, attrs)`` for namespace-marked element calls, None when the call is not
    ``<INVOKE ATTR="NAME">`` followed by ``<city>`` elements; :class:`TemplateDerivationError` when it is,
    but in a shape the namespace-element family cannot read."""
    one = outputs['one call']
    invoke = _INVOKE.search(one)
    if invoke is None:
        return None
    key = one.find('<city>', invoke.end())
    key_close = one.find('</city>', key)
    if key < 0 or key_close < 0:
        return None  # arguments are not elements named after them (attribute-named, XML-like markup)
    where = f'in the rendered call {one!r}'
    ns = _common_suffix([one[:invoke.start()], one[:key], one[:key_close]]).lstrip()
    if not ns or any(c.isspace() for c in ns):
        raise TemplateDerivationError('tool_calls', 'the arguments are elements named after them (<city>...</city>) '
                                                    'without one namespace marker before every tag; the '
                                                    'namespace-element family (ns_elements) reads only tags after '
                                                    f'its namespace (MiniMax M3\'s "]<]minimax[>[") {where}')
    blocks = list(re.finditer(re.escape(ns) + r'<(?P<block>[A-Za-z_][\w.:-]*)>', one))
    block = next((b for b in reversed(blocks) if b.end() <= invoke.start() - len(ns)), None)
    if block is None:
        raise TemplateDerivationError('tool_calls', f'the calls have no {ns}<BLOCK> tag before the first '
                                                    f'{ns}<{invoke.group("el")} ...> {where}')
    name = block.group('block')
    if not one.rstrip().endswith(f'{ns}</{name}>') or f'{ns}</{invoke.group("el")}>' not in one:
        raise TemplateDerivationError('tool_calls', f'the calls do not end with {ns}</{invoke.group("el")}> and '
                                                    f'{ns}</{name}> {where}')
    attrs = {'namespace': ns, 'tool_calls_element': name, 'invoke_element': invoke.group('el'),
             'call_name_attribute': invoke.group('attr')}
    return declaration('namespace elements', base, attrs)


# ---- channel markers -------------------------------------------------------------------------------

_TOKEN = r'<\|[A-Za-z_]\w*\|>'
# the label: a word and maybe attributes (<|open|>call tool="x" index="1"<|sep|>), never free text
CHANNEL = re.compile(f'({_TOKEN})([A-Za-z_][\\w.-]*(?: [\\w:-]+="[^"<>]*")*)({_TOKEN})')


def is_channel_marker(text: str) -> bool:
    """``<|close|>think<|sep|>``: a special token, a label, a special token."""
    return CHANNEL.fullmatch(text) is not None


def channel_reasoning(between: str, before: str) -> tuple[str, str] | None:
    """(close, open) when the text after the reasoning starts with a channel close (``<|close|>think<|sep|>``)
    and the text before it ends with the same channel's open (``<|open|>think<|sep|>``)."""
    close = CHANNEL.match(between)
    if close is None:
        return None
    for found in reversed(list(CHANNEL.finditer(before))):
        if found.end() == len(before) and found.group(2) == close.group(2) and found.group(3) == close.group(3) \
                and found.group(1) != close.group(1):
            return close.group(0), found.group(0)
    return None


def stop_at_marker_boundary(texts: list[str], suffix: str) -> str:
    """The shared end of turn, moved out of any channel marker it would cut (``<|close|>response<|sep|>`` and
    ``<|close|>tools<|sep|>`` share ``<|sep|>``: the stop sequence starts after them)."""
    keep = len(suffix)
    for text in texts:
        cut = len(text) - keep
        for found in CHANNEL.finditer(text, max(0, cut - 200)):
            if found.start() < cut < found.end():
                keep = len(text) - found.end()
                break
    return suffix[len(suffix) - keep:] if keep else ''


def channel_end(stops: list[str]) -> str | None:
    """The end of turn every rendering shares, when it is one channel marker (``<|close|>message<|sep|>``)."""
    ends = {stop.strip() for stop in stops}
    if len(ends) == 1:
        end = ends.pop()
        if is_channel_marker(end):
            return end
    return None


# ---- channel-delimited attribute tags ---------------------------------------------------------------

def _tag(open_tag: str, close: str, value: str) -> re.Pattern[str]:
    return re.compile(re.escape(open_tag) + r'(?P<el>[A-Za-z_][\w.-]*) (?P<attr>[\w:-]+)="' + re.escape(value)
                      + r'"(?P<rest>[^<>]*?)' + re.escape(close))


def derive_channel_tags(outputs: dict[str, str], declaration: Any, base: type) -> Any:
    """A ``declaration(family, base, attrs)`` for attribute-named tags delimited by special tokens
    (``<|open|>call tool="NAME"<|sep|>``), None when the call is not written so;
    :class:`TemplateDerivationError` when it is, in a shape the attribute-named family cannot read."""
    one = outputs['one call']
    invoke = re.search(f'(?P<open>{_TOKEN})(?P<el>[A-Za-z_][\\w.-]*) (?P<attr>[\\w:-]+)="get_weather"'
                       f'(?P<rest>[^<>]*?)(?P<close>{_TOKEN})', one)
    if invoke is None:
        return None
    where = f'in the rendered call {one!r}'
    open_tag, sep = invoke.group('open'), invoke.group('close')
    params = {}
    for key in ('city', 'days'):
        params[key] = _tag(open_tag, sep, key).search(one, invoke.end())
        if params[key] is None:
            raise TemplateDerivationError('arguments', f'no {open_tag}PARAMETER KEY="{key}"{sep} tag for the '
                                                       f'argument {key!r} {where}')
    city, days = params['city'], params['days']
    assert city is not None and days is not None
    if (city.group('el'), city.group('attr')) != (days.group('el'), days.group('attr')):
        raise TemplateDerivationError('arguments', f'the arguments are written with different tags '
                                                   f'({city.group(0)!r}, {days.group(0)!r}) {where}')
    element = city.group('el')
    from lmparse.templates._derive import ARGUMENTS

    value = ARGUMENTS['get_weather']['city']
    end = re.match(f'({_TOKEN})' + re.escape(element) + re.escape(sep), one[city.end() + len(value):])
    if not one.startswith(value, city.end()) or end is None:
        raise TemplateDerivationError('arguments', f'a string value is not written as it is and closed by an '
                                                   f'end token, {element!r} and {sep!r} (the attribute-named family '
                                                   f'needs the close tag to name the argument element) {where}')
    end_open = end.group(1)
    block = None
    for found in re.finditer(re.escape(open_tag) + r'(?P<block>[A-Za-z_][\w.-]*)' + re.escape(sep),
                             one[:invoke.start()]):
        block = found
    if block is None or one[block.end():invoke.start()].strip():
        raise TemplateDerivationError('tool_calls', f'no {open_tag}BLOCK{sep} tag right before the first call '
                                                    f'{where}')
    name = block.group('block')
    for closing in (f'{end_open}{invoke.group("el")}{sep}', f'{end_open}{name}{sep}'):
        if closing not in one[days.end():]:
            raise TemplateDerivationError('tool_calls', f'the calls do not close with {closing!r} {where}')
    attrs: dict[str, Any] = {
        'dsml_token': '', 'tag_open': open_tag, 'end_tag_open': end_open, 'tag_close': sep,
        'tool_calls_block_name': name, 'block_lead': '', 'invoke_element': invoke.group('el'),
        'parameter_element': element, 'call_name_attribute': invoke.group('attr'),
        'parameter_key_attribute': city.group('attr')}
    typing = value_typing(city, days)
    if typing is not None:
        attrs.update(typing)
    else:
        raise TemplateDerivationError('arguments', f'the argument tags carry attributes ({city.group("rest")!r}, '
                                                   f'{days.group("rest")!r}) that are neither one type attribute '
                                                   f'telling text from JSON nor absent {where}')
    return declaration('attribute-named', base, attrs)


# ---- name-keyed JSON envelopes ---------------------------------------------------------------------

def derive_name_keyed(outputs: dict[str, str], declaration: Any, base: type) -> Any:
    """A ``declaration(family, base, attrs)`` for ``OPEN [{"NAME": {args}}, ...] CLOSE`` (``name_as_key``), None
    when no JSON value in the call is a one-key envelope of the name; :class:`TemplateDerivationError` for a
    name-keyed shape the JSON family cannot read."""
    from lmparse.templates._derive import ARGUMENTS, _canonical, _json_values

    one = outputs['one call']
    want = _canonical(ARGUMENTS['get_weather'])
    for start, end, value in _json_values(one):
        array = isinstance(value, list) and len(value) == 1
        obj = value[0] if array else value
        if not (isinstance(obj, dict) and len(obj) == 1 and isinstance(obj.get('get_weather'), dict)
                and _canonical(obj['get_weather']) == want):
            continue
        for _, _, both in _json_values(outputs['two calls']):
            for item in both if isinstance(both, list) else [both]:
                if isinstance(item, dict) and {'get_weather', 'search_docs'} <= set(item):
                    raise TemplateDerivationError('tool_calls', 'several calls are keys of one JSON object '
                                                                '({"get_weather": {...}, "search_docs": {...}}); the '
                                                                'JSON family reads one call per name-keyed envelope')
        open_tag, close = one[:start].strip(), one[end:].strip() or None
        if not open_tag:
            raise TemplateDerivationError('tool_calls', 'name-keyed JSON calls with no marker before them (a bare '
                                                        'JSON value in the text); a derived dialect needs an open '
                                                        'marker')
        attrs: dict[str, Any] = {'tool_open_tag': open_tag, 'tool_close_tag': close, 'name_as_key': True}
        if array:
            attrs['envelope_array'] = True
        return declaration('json', base, attrs)
    return None


# ---- bare calls: the built-in bare readings --------------------------------------------------------

BARE_JSON, BARE_PYTHONIC = 'bare json', 'bare pythonic'
_BARE_BUILTIN = {BARE_JSON: 'llama3_json', BARE_PYTHONIC: 'pythonic'}


def _builtin(name: str) -> Any:
    from lmparse.registry import ToolParserManager

    return ToolParserManager.get(name)


def bare_json(fields: tuple[str, str], array: bool, close: str | None, declaration: Any, base: type) -> Any:
    """The declaration for ``{"NAME_FIELD": name, "ARG_FIELD": {...}}`` written with no marker before it: the built-in
    ``llama3_json`` reading with the template's field names (a bare array or a close marker after it is refused)."""
    what = 'JSON calls with no marker before them (a bare JSON object in the text)'
    if array or close:
        raise TemplateDerivationError('tool_calls', f'{what}, {"in an array" if array else f"closed by {close!r}"}: '
                                                    'the JSON family reads a bare call only as one object at the '
                                                    'start of the response (the built-in llama3_json reading)')
    builtin = _builtin(_BARE_BUILTIN[BARE_JSON])
    aliases = tuple(a for a in (builtin.argument_field, *builtin.argument_field_aliases) if a != fields[1])
    attrs = {'tool_open_tag': builtin.tool_open_tag, 'tool_close_tag': builtin.tool_close_tag,
             'name_field': fields[0], 'argument_field': fields[1], 'argument_field_aliases': aliases,
             'bare_call_open': builtin.bare_call_open}
    return declaration(BARE_JSON, base, attrs)


def bare_pythonic(brackets: bool, close: str | None, json_words: bool, declaration: Any, base: type) -> Any:
    """The declaration for ``[NAME(k=v, ...), ...]`` with no marker before it: the built-in ``pythonic`` reading
    (``json_literals`` when the template writes true / false / null)."""
    what = 'pythonic calls with no marker before them'
    if not brackets or close:
        how = 'not in a [...] list' if not brackets else f'closed by {close!r}'
        raise TemplateDerivationError('tool_calls', f'{what}, {how}: the pythonic family reads a bare call only as '
                                                    'a [...] list at the start of the response (the built-in '
                                                    'pythonic reading)')
    builtin = _builtin(_BARE_BUILTIN[BARE_PYTHONIC])
    attrs: dict[str, Any] = {'tool_open_tag': builtin.tool_open_tag, 'tool_close_tag': builtin.tool_close_tag,
                             'bare_call_open': builtin.bare_call_open}
    if json_words:
        attrs['json_literals'] = True
    return declaration(BARE_PYTHONIC, base, attrs)


def bare_note(family: str) -> str | None:
    """What a derived dialect with a bare reading says about it (None for other families)."""
    builtin = _BARE_BUILTIN.get(family)
    if builtin is None:
        return None
    tag = _builtin(builtin).tool_open_tag
    return (f'tool calls: written with no marker before them, read as the built-in {builtin} reads a bare call (at the '
            f'start of the response); its open marker {tag} is kept, the template never writes it')


def bare_failure(family: str, err: TemplateDerivationError) -> TemplateDerivationError:
    """The refusal of a bare reading the proof rejected: what was tried, and the proof's disagreement."""
    builtin = _BARE_BUILTIN.get(family)
    if builtin is None:
        return err
    return TemplateDerivationError('tool_calls', f'calls with no marker before them; the built-in {builtin} reading '
                                                 f'(a bare call at the start of the response) does not parse the '
                                                 f'template\'s renderings: {err.reason}')
