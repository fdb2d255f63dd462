"""Derive a dialect from a chat template: render synthetic turns, infer the markers, prove by round trip.

1. **Render.** The template renders one user turn with the generation prompt
   (what the engine feeds the model) and the same turn followed by a
   synthetic assistant turn; the text after the prompt is what the model
   writes. Turns: content only; reasoning and content; one call; content and a
   call; reasoning and a call; a call without arguments; two calls; reasoning,
   content and three calls. Arguments cover every JSON type (strings with
   quotes, newlines, ``<``/``&``, accents, CJK and an astral character;
   integers, a float, booleans, null, arrays, nested objects). Each thinking
   setting the template reads (``enable_thinking`` / ``thinking``: absent,
   True, False) renders its own set. The end-of-turn text common to every
   turn of a setting (``<|im_end|>\\n``, an EOS) is the engine's stop
   sequence and is cut.
2. **Infer.** Reasoning: the text between the reasoning and the content is
   the close marker, its mirror before the reasoning the open marker; whether
   the generation prompt already ends with it (per thinking setting) gives
   ``open_tag_in_prompt`` / ``thinking_switches``. Tool calls, tried in this
   order on the renderings of one call, two calls and a call without
   arguments (the text around them gives the markers):

   - a JSON value holding the name and the arguments object: a JSON envelope
     (:class:`JsonToolParser`; a JSON array of them ``envelope_array``);
   - the arguments object after special-token markers around a header (the
     name, ``functions.NAME:IDX``, or the call type with the name after it,
     maybe in a code fence): sections (:class:`SectionToolParser`);
   - ``OPEN NAME [ID_MARKER ID] ARG_MARKER {args}``: a name header
     (:class:`JsonHeaderToolParser`);
   - ``NAME{key:DELIM text DELIM,...}``: brace calls (:class:`BraceCallToolParser`);
   - ``NAME(key=value, ...)`` with Python or JSON literals: pythonic calls
     (:class:`PythonicToolParser`);
   - ``<TOKEN invoke name="NAME">`` / ``<TOKEN parameter name="KEY" [type attribute]>``:
     attribute-named markup (:class:`DsmlToolParser`), and else the name,
     each argument name and each value found in order: XML-like markup
     (:class:`XmlToolParser`; the markers between them are the function /
     argument / value markers).

   Namespace elements (MiniMax M3), special-token channel tags and markers
   (Kimi K3), name-keyed envelopes (Apertus), bare calls and valued thinking
   switches (``thinking_mode="enabled"``): ``_derive_markup``.
3. **Prove.** The declarations become classes on those compiled families and
   parse every rendering back, streamed at 1, 4 and 16 characters and whole,
   under a request carrying the setting's thinking switch and the tools'
   schemas. Only exact agreement (calls by name and JSON-equal arguments,
   reasoning and content up to the whitespace the template puts around them)
   returns a dialect; anything else raises :class:`TemplateDerivationError`
   naming the part and the first disagreement.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from lmparse.reasoning import ReasoningParser
from lmparse.response import BaseResponseParser
from lmparse.templates._derive_markup import (
    bare_failure, bare_json, bare_note, bare_pythonic, channel_end, channel_reasoning, derive_channel_tags,
    derive_name_keyed, derive_ns_elements, is_channel_marker, stop_at_marker_boundary, valued_settings, value_typing)
from lmparse.templates._errors import TemplateDerivationError
from lmparse.templates._render import ChatTemplate, load_chat_template
from lmparse.tools.base import ToolParser
from lmparse.tools.brace_call import BraceCallToolParser
from lmparse.tools.dsml import DsmlToolParser
from lmparse.tools.json_header import JsonHeaderToolParser
from lmparse.tools.json_parser import JsonToolParser
from lmparse.tools.ns_elements import NsElementToolParser
from lmparse.tools.pythonic import PythonicToolParser
from lmparse.tools.sections import SectionToolParser
from lmparse.tools.xml_parser import XmlToolParser

__all__ = ['DerivedDialect', 'derive_dialect']

# ---- the synthetic conversation -------------------------------------------------------------------

USER = 'What should I do today?'
CONTENT = 'Sure — "quoted" text, ünï 中文 🌧 and a {brace}.'
CONTENT_2 = 'Let me check that for you.'
REASONING = 'First: the user\'s "request"; then\nplan it — ünï 🌧.'

# name -> arguments (insertion order is the order the template iterates)
ARGUMENTS: dict[str, dict[str, Any]] = {
    'get_weather': {'city': 'Paris "Rive Gauche"\nline two: ünï 中文 🌧', 'days': 3},
    'search_docs': {'query': "it's <b>bold</b> & more", 'limit': 10, 'ratio': 0.25, 'exact': True,
                    'strict': False, 'tags': ['a', 'b c'],
                    'filters': {'lang': 'en', 'range': {'lo': -1, 'hi': 2.5}, 'any': None}},
    'book_room': {'guest': {'name': 'Zoë', 'vip': False}, 'nights': [1, 2], 'note': 'two\nlines'},
    'ping': {},
}

_JSON_TYPES = {str: 'string', bool: 'boolean', int: 'integer', float: 'number', list: 'array', dict: 'object',
               type(None): 'null'}


def _schema(value: Any) -> dict[str, Any]:
    # typed all the way down, as real tools are: families that convert nested values by schema need it
    out: dict[str, Any] = {'type': _JSON_TYPES[type(value)]}
    if isinstance(value, dict):
        out['properties'] = {k: _schema(v) for k, v in value.items()}
        out['required'] = list(value)
    elif isinstance(value, list) and value:
        out['items'] = _schema(value[0])
    return out


TOOLS: list[dict[str, Any]] = [
    {'type': 'function', 'function': {'name': name, 'description': f'The {name} tool.', 'parameters': _schema(args)}}
    for name, args in ARGUMENTS.items()]


@dataclass(frozen=True)
class Turn:
    """One synthetic assistant turn."""

    label: str
    content: str | None = None
    reasoning: str | None = None
    calls: tuple[str, ...] = ()


TURNS: tuple[Turn, ...] = (
    Turn('content', CONTENT),
    Turn('reasoning+content', CONTENT, REASONING),
    Turn('one call', calls=('get_weather',)),
    Turn('content+call', CONTENT_2, calls=('search_docs',)),
    Turn('reasoning+call', None, REASONING, ('book_room',)),
    Turn('call without arguments', calls=('ping',)),
    Turn('two calls', calls=('get_weather', 'search_docs')),
    Turn('reasoning+content+three calls', CONTENT_2, REASONING, ('search_docs', 'ping', 'book_room')),
)
_BY_LABEL = {t.label: t for t in TURNS}

REASONING_FIELDS = ('reasoning_content', 'reasoning', 'thinking')
THINKING_VARIABLES = ('enable_thinking', 'thinking')
PROOF_CHUNK_SIZES = (1, 4, 16, 0)  # 0: the whole output in one chunk


def _message(turn: Turn, reasoning_field: str | None, string_arguments: bool) -> dict[str, Any]:
    msg: dict[str, Any] = {'role': 'assistant', 'content': turn.content or ''}
    if turn.reasoning is not None and reasoning_field is not None:
        msg[reasoning_field] = turn.reasoning
    if turn.calls:
        msg['tool_calls'] = [
            {'id': f'call_{i:04d}', 'type': 'function',
             'function': {'name': name, 'arguments': json.dumps(ARGUMENTS[name], ensure_ascii=False)
                          if string_arguments else ARGUMENTS[name]}}
            for i, name in enumerate(turn.calls)]
    return msg


def _canonical(value: Any) -> str:
    # json.dumps keeps true apart from 1 and 1 from 1.0 where == does not
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# ---- rendering ---------------------------------------------------------------------------------------

@dataclass
class Rendered:
    """A turn's output under one thinking setting: what the model writes after the generation prompt."""

    turn: Turn
    setting: dict[str, Any]
    prompt: str
    output: str  # end-of-turn text cut
    stop: str = ''  # the end-of-turn text that was cut


def _setting_key(setting: dict[str, Any]) -> str:
    return ', '.join(f'{k}={v}' for k, v in setting.items()) or 'no thinking switch'


def _render(tpl: ChatTemplate, messages: list[dict[str, Any]], add_generation_prompt: bool,
            setting: dict[str, Any]) -> str:
    jinja2 = __import__('jinja2')
    try:
        return tpl.render(messages, tools=TOOLS, add_generation_prompt=add_generation_prompt, **setting)
    except jinja2.TemplateError as err:
        raise TemplateDerivationError('rendering', f'the template rejects the synthetic turn '
                                                   f'({_setting_key(setting)}): {err}') from None
    except Exception as err:  # template code raising inside the sandbox (a TypeError on a None, ...)
        raise TemplateDerivationError('rendering', f'the template fails on the synthetic turn '
                                                   f'({_setting_key(setting)}): {type(err).__name__}: {err}') from None


_PARTIAL_MARKER = re.compile(r'(?:<\|?|\[)[A-Za-z0-9_:./-]*$')


def _common_suffix(texts: list[str]) -> str:
    if not texts:
        return ''
    first = texts[0]
    n = 0
    while n < len(first) and all(len(t) > n and t[-1 - n] == first[-1 - n] for t in texts):
        n += 1
    return first[len(first) - n:]


def _settings(tpl: ChatTemplate) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{}]
    for var in THINKING_VARIABLES:
        if var in tpl.variables:
            out += [{var: True}, {var: False}]
    return out + valued_settings(tpl.source, tpl.variables, THINKING_VARIABLES)


def _render_turns(tpl: ChatTemplate, setting: dict[str, Any], reasoning_field: str | None,
                  string_arguments: bool) -> tuple[list[Rendered], list[str]]:
    """The usable outputs of every turn under one setting, and the labels of turns that are not."""
    user = {'role': 'user', 'content': USER}
    prompt = _render(tpl, [user], True, setting)
    raw: list[tuple[Turn, str]] = []
    skipped: list[str] = []
    for turn in TURNS:
        full = _render(tpl, [user, _message(turn, reasoning_field, string_arguments)], False, setting)
        if not full.startswith(prompt):
            # The template writes this turn differently from how it prompts for it (Qwen 3 with thinking off
            # never shows reasoning): the model cannot produce it under this setting.
            skipped.append(turn.label)
            continue
        raw.append((turn, full[len(prompt):]))
    suffix = _common_suffix([text for _, text in raw]) if len(raw) > 1 else ''
    suffix = stop_at_marker_boundary([text for _, text in raw], suffix)
    if suffix and any(_PARTIAL_MARKER.search(text, 0, len(text) - len(suffix)) for _, text in raw) \
            and suffix.find('<') > 0:
        # the shared end starts inside different markers (<|END_RESPONSE|> / <|END_ACTION|>) before a whole
        # shared one (<|END_OF_TURN|>): only the whole one is the stop sequence
        suffix = suffix[suffix.find('<'):]
    out = []
    for turn, text in raw:
        cut = len(text) - len(suffix)
        # nothing whole is shared: each turn stops on its own marker (<|eot_id|> / <|eom_id|>), never cut inside one
        partial = _PARTIAL_MARKER.search(text, 0, cut)
        end = partial.start() if partial else cut
        out.append(Rendered(turn, setting, prompt, text[:end], text[end:]))
    return out, skipped


# ---- reasoning --------------------------------------------------------------------------------------

_LAST_MARKER = re.compile(r'(<\|[^<>|]*\|>|<[^<>\s]+>|\[[^\[\]\s]+\]|◁[^◁▷]*▷)$')


_LABELLED_MARKER = re.compile(r'(?:<\|[^<>|]*\|?>|<[^<>\s]+>|\[[^\[\]\s]+\])[A-Za-z_]\w{0,23}[ \t]*\n?$')


def _mirror(close: str) -> list[str]:
    """Open markers a close marker implies: '</think>' -> '<think>', '<|END_X|>' -> '<|START_X|>'."""
    out = []
    if '/' in close:
        out.append(close.replace('/', '', 1))
    for end, start in (('END', 'START'), ('end', 'start'), ('End', 'Start'), ('_end', '_begin'),
                       ('END', 'BEGIN'), ('end', 'begin')):
        if end in close:
            out.append(close.replace(end, start, 1))
    return out


@dataclass(frozen=True)
class ReasoningDeclaration:
    open_tag: str
    close_tag: str
    field: str
    open_tag_in_prompt: bool
    thinking_switches: tuple[str, ...]
    thinking_values: tuple[tuple[str, Any], ...] = ()  # (variable, value): thinking_mode="enabled"
    framing: tuple[tuple[str, Any], ...] = ()  # block-header declarations (Inkling), shared with the tool parser


def _reasoning_field(tpl: ChatTemplate, setting_list: list[dict[str, Any]]) -> str | None:
    user = {'role': 'user', 'content': USER}
    turn = _BY_LABEL['reasoning+content']
    for name in REASONING_FIELDS:
        for setting in setting_list:
            if REASONING in _render(tpl, [user, _message(turn, name, False)], False, setting):
                return name
    return None


def _derive_reasoning(field_name: str, by_setting: dict[str, list[Rendered]]) -> ReasoningDeclaration:
    close = open_tag = None
    for outputs in by_setting.values():
        for r in outputs:
            if r.turn.label != 'reasoning+content':
                continue
            full = r.prompt + r.output
            i = full.find(REASONING)
            j = full.find(CONTENT, i + len(REASONING))
            if i < 0 or j < 0:
                continue
            between = full[i + len(REASONING):j].strip()
            if not between:
                raise TemplateDerivationError('reasoning', 'nothing separates the reasoning from the content '
                                                           '(no close marker)')
            before = full[:i].rstrip()
            channel = channel_reasoning(between, before)  # <|open|>think<|sep|> ... <|close|>think<|sep|>
            pieces = [p for p in _SPECIAL.split(between) if p.strip()]
            if channel is not None:
                between = channel[0]
            elif len(pieces) > 1 and _SPECIAL.fullmatch(pieces[0]):
                between = pieces[0]  # the close marker; what follows frames the answer (content markers)
            found = channel[1] if channel is not None else next((m for m in _mirror(between) if before.endswith(m)),
                                                                None)
            if found is None:
                last = _LAST_MARKER.search(before)
                found = last.group(1) if last else None
            if found is None:
                # a marker and a channel label: Gemma 4's '<|channel>thought\n' (the label and its newline belong
                # to the open marker, never to the reasoning)
                labelled = _LABELLED_MARKER.search(full, 0, i)
                found = labelled.group(0) if labelled else None
            if found is None:
                raise TemplateDerivationError('reasoning', f'the reasoning closes with {between!r}, but no marker '
                                                           f'right before it opens it ({before[-40:]!r})')
            if close is not None and (close, open_tag) != (between, found):
                raise TemplateDerivationError('reasoning', f'the markers differ between thinking settings: '
                                                           f'{(open_tag, close)!r} and {(found, between)!r}')
            close, open_tag = between, found
    if close is None or open_tag is None:
        raise TemplateDerivationError('reasoning', f'the template renders {field_name!r} but not as the text of the '
                                                   'turn the model writes under any thinking setting')
    starts: dict[str, bool] = {}
    valued: list[tuple[str, Any]] = []
    for key, outputs in by_setting.items():
        if outputs:
            prompt = outputs[0].prompt.rstrip()
            starts[key] = prompt.endswith(open_tag)
            setting = outputs[0].setting
            if starts[key] and len(setting) == 1 and not isinstance(next(iter(setting.values())), bool):
                valued.extend(setting.items())
    default_key = _setting_key({})
    if not any(starts.values()):
        return ReasoningDeclaration(open_tag, close, field_name, False, ())
    if starts.get(default_key):
        return ReasoningDeclaration(open_tag, close, field_name, True, ())
    switches = tuple(var for var in THINKING_VARIABLES if starts.get(_setting_key({var: True})))
    return ReasoningDeclaration(open_tag, close, field_name, True, switches, tuple(valued))


def _strip_reasoning(text: str, decl: ReasoningDeclaration | None) -> str:
    """Output minus a leading (empty or synthetic) reasoning block: what the tool markers are read from."""
    if decl is None:
        return text
    t = text.lstrip()
    if t.startswith(decl.open_tag):
        t = t[len(decl.open_tag):]
    i = t.find(decl.close_tag)
    if i >= 0 and (not t[:i].strip() or t[:i].strip() == REASONING):
        return t[i + len(decl.close_tag):]
    return text


# ---- tool calls ---------------------------------------------------------------------------------------

_DECODER = json.JSONDecoder()


def _envelope_fields(obj: Any, name: str) -> tuple[str, str] | None:
    """(name_field, argument_field) when ``obj`` is an envelope of ``name`` with its arguments as an object."""
    if not isinstance(obj, dict):
        return None
    name_fields = [k for k, v in obj.items() if v == name]
    arg_fields = [k for k, v in obj.items() if isinstance(v, dict) and _canonical(v) == _canonical(ARGUMENTS[name])]
    if len(name_fields) == 1 and len(arg_fields) == 1:
        return name_fields[0], arg_fields[0]
    string_args = [k for k, v in obj.items() if isinstance(v, str) and v.startswith('{')]
    for k in string_args:
        try:
            if _canonical(json.loads(obj[k])) == _canonical(ARGUMENTS[name]):
                raise TemplateDerivationError('arguments', f'the arguments are written as a JSON string inside the '
                                                           f'"{k}" field; no compiled family decodes them')
        except ValueError:
            pass
    return None


def _json_values(text: str) -> list[tuple[int, int, Any]]:
    """Every top-level JSON object or array in ``text`` (start, end, value), left to right."""
    out, i = [], 0
    while i < len(text):
        if text[i] in '{[':
            try:
                value, end = _DECODER.raw_decode(text, i)
            except ValueError:
                i += 1
                continue
            out.append((i, end, value))
            i = end
        else:
            i += 1
    return out


@dataclass(frozen=True)
class ToolDeclaration:
    family: str  # 'json' | 'xml'
    base: type[ToolParser]
    attrs: dict[str, Any]


def _derive_json(outputs: dict[str, str]) -> ToolDeclaration | None:
    one = outputs['one call']
    for start, end, value in _json_values(one):
        array = isinstance(value, list) and len(value) == 1
        fields = _envelope_fields(value[0] if array else value, 'get_weather')
        if fields is None:
            continue
        open_tag = one[:start].strip()
        close_tag = one[end:].strip() or None
        if not open_tag:
            decl: ToolDeclaration = bare_json(fields, array, close_tag, ToolDeclaration, JsonToolParser)
            return decl
        attrs: dict[str, Any] = {'tool_open_tag': open_tag, 'tool_close_tag': close_tag,
                                 'name_field': fields[0], 'argument_field': fields[1]}
        if array:
            attrs['envelope_array'] = True
        return ToolDeclaration('json', JsonToolParser, attrs)
    return None


_MARKER_SPLIT = re.compile(r'(?<=[>\]▷])\s*|\s*(?=[<\[◁])')


def _markers(segment: str) -> list[str]:
    """The markers in a stretch of template text: split after '>' / ']' and before '<' / '[', whitespace dropped."""
    return [m for m in _MARKER_SPLIT.split(segment.strip()) if m]


def _value_spans(text: str, start: int, name: str) -> list[tuple[int, int, int, int]]:
    """(key_start, key_end, value_start, value_end) of each argument of ``name`` in ``text`` from ``start``."""
    spans = []
    pos = start
    for key, value in ARGUMENTS[name].items():
        k = text.find(key, pos)
        if k < 0:
            raise TemplateDerivationError('arguments', f'the argument name {key!r} of {name!r} is not in the '
                                                       f'rendered call {text[start:start + 200]!r}')
        forms = [value] if isinstance(value, str) else []
        forms += [json.dumps(value, ensure_ascii=False), json.dumps(value, ensure_ascii=False, separators=(',', ':')),
                  json.dumps(value)]
        found = [(text.find(f, k + len(key)), f) for f in forms]
        found = [(i, f) for i, f in found if i >= 0]
        if not found:
            raise TemplateDerivationError('arguments', f'the value of {key!r} ({value!r}) is written neither as '
                                                       'text nor as JSON (maybe as a Python literal): no compiled '
                                                       'family reads it back')
        v, form = min(found)
        spans.append((k, k + len(key), v, v + len(form)))
        pos = v + len(form)
    return spans


def _derive_xml(outputs: dict[str, str]) -> ToolDeclaration:
    one = outputs['one call']
    n = one.find('get_weather')
    spans = _value_spans(one, n + len('get_weather'), 'get_weather')
    (k1, k1e, v1, v1e), (k2, k2e, v2, v2e) = spans
    s0, s1 = one[:n], one[n + len('get_weather'):k1]
    s_kv, s_vk, s_end = one[k1e:v1], one[v1e:k2], one[v2e:]
    head, after_name, key_value, value_key, tail = map(_markers, (s0, s1, s_kv, s_vk, s_end))
    where = f'in the rendered call {one!r}'
    if len(value_key) != 2:
        raise TemplateDerivationError('tool_calls', f'between two arguments expected a value close and an argument '
                                                    f'open marker, found {value_key!r} {where}')
    value_close, arg_open = value_key
    if not after_name or after_name[-1] != arg_open or len(after_name) > 2:
        raise TemplateDerivationError('tool_calls', f'after the function name expected an optional name end and '
                                                    f'{arg_open!r}, found {after_name!r} {where}')
    if not 1 <= len(key_value) <= 2:
        raise TemplateDerivationError('arguments', f'between an argument name and its value expected a name end '
                                                   f'and an optional value open marker, found {key_value!r} {where}')
    if not tail or tail[0] != value_close or len(tail) > 3:
        raise TemplateDerivationError('tool_calls', f'after the last value expected {value_close!r}, an optional '
                                                    f'function close and a block close, found {tail!r} {where}')
    if not 1 <= len(head) <= 2:
        raise TemplateDerivationError('tool_calls', f'before the function name expected a block open and an '
                                                    f'optional function open marker, found {head!r} {where}')
    rest = tail[1:]
    if not rest:
        raise TemplateDerivationError('tool_calls', f'the call has no close marker {where}')
    attrs: dict[str, Any] = {
        'tool_open_tag': head[0], 'function_open': head[1] if len(head) == 2 else '',
        'function_name_end': after_name[0] if len(after_name) == 2 else None,
        'arg_open': arg_open, 'arg_name_end': key_value[0], 'value_open': key_value[1] if len(key_value) == 2 else None,
        'arg_value_close_tag': value_close,
        'function_close': rest[0] if len(rest) == 2 else None, 'tool_close_tag': rest[-1],
    }
    # the template's whitespace around each value: one newline each side is the family's strip_value_newlines
    pre, post = s_kv[len(s_kv.rstrip()):], s_vk[:len(s_vk) - len(s_vk.lstrip())]
    attrs['strip_value_newlines'] = pre.endswith('\n') or post.startswith('\n')
    two = outputs['two calls']
    n2 = two.find('search_docs')
    last = _value_spans(two, two.find('get_weather') + len('get_weather'), 'get_weather')[-1]
    between = _markers(two[last[3]:n2])
    # several calls in one block: as the template writes them, or readable anyway when each call has its own
    # close marker (how the built-in Qwen3-Coder dialect reads them)
    attrs['multiple_calls'] = attrs['tool_close_tag'] not in between or attrs['function_close'] is not None
    return ToolDeclaration('xml', XmlToolParser, attrs)


_PY_WORDS = {'true': True, 'false': False, 'null': None, 'True': True, 'False': False, 'None': None}


def _literal(node: ast.AST, json_words: list[bool]) -> Any:
    """A Python literal (or one with JSON's true / false / null) as a value; ValueError for anything else."""
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, int, float, bool))):
        return node.value
    if isinstance(node, ast.Name) and node.id in _PY_WORDS:
        json_words.append(node.id in ('true', 'false', 'null'))
        return _PY_WORDS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e, json_words) for e in node.elts]
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                          for k in node.keys):
        return {k.value: _literal(v, json_words) for k, v in zip(node.keys, node.values)}  # type: ignore[union-attr]
    raise ValueError(ast.dump(node))


def _pythonic_call(text: str, start: int, name: str) -> tuple[int, bool] | None:
    """(end, JSON words used) of the call ``name(k=v, ...)`` at ``start`` when it spells ``name``'s arguments."""
    end = text.find(')', start)
    while end >= 0:
        try:
            node = ast.parse(text[start:end + 1], mode='eval').body
        except SyntaxError:
            end = text.find(')', end + 1)
            continue
        if not isinstance(node, ast.Call) or node.args:
            return None
        words: list[bool] = []
        try:
            args = {k.arg: _literal(k.value, words) for k in node.keywords}
        except ValueError:
            return None
        if _canonical(args) != _canonical(ARGUMENTS[name]):
            return None
        return end + 1, any(words)
    return None


def _derive_pythonic(outputs: dict[str, str]) -> ToolDeclaration | None:
    one = outputs['one call']
    n = one.find('get_weather(')
    if n < 0:
        return None
    found = _pythonic_call(one, n, 'get_weather')
    if found is None:
        raise TemplateDerivationError('arguments', f'the call is written as get_weather(...) but its arguments do not '
                                                   f'read back as Python (or JSON) literals: {one!r}')
    end, json_words = found
    two = outputs['two calls']
    second = two.find('search_docs(')
    if second >= 0:  # the call with booleans and null says how the template writes them
        found = _pythonic_call(two, second, 'search_docs')
        json_words = json_words or (found is not None and found[1])
    before, after = one[:n].strip(), one[end:].strip()
    brackets = before.endswith('[') and after.startswith(']')
    if brackets:
        before, after = before[:-1].strip(), after[1:].strip()
    attrs: dict[str, Any] = {'tool_open_tag': before or None, 'tool_close_tag': after or None}
    if not before:
        decl: ToolDeclaration = bare_pythonic(brackets, after, json_words, ToolDeclaration, PythonicToolParser)
        return decl
    if not brackets:
        attrs['call_list_brackets'] = False
    if json_words:
        attrs['json_literals'] = True
    return ToolDeclaration('pythonic', PythonicToolParser, attrs)


_SPECIAL = re.compile(r'(<[^<>\s]*>)')


def _derive_sections(outputs: dict[str, str]) -> ToolDeclaration | None:
    """Special-token sections: SECTION_BEGIN CALL_BEGIN header ARGUMENT_BEGIN [name line, fence] {args} CALL_END
    SECTION_END, the header being the name, a call id ``functions.NAME:0`` or the call type (the name follows)."""
    one = outputs['one call']
    args = next(((start, end) for start, end, value in _json_values(one)
                 if isinstance(value, dict) and _canonical(value) == _canonical(ARGUMENTS['get_weather'])), None)
    if args is None:
        return None
    pieces = [p for p in _SPECIAL.split(one[:args[0]]) if p.strip()]
    after = [p for p in _SPECIAL.split(one[args[1]:]) if p.strip()]
    where = f'in the rendered call {one!r}'
    # markers between the section's and the call's (PLaMo's per-call request marker) are text between calls,
    # which the family skips; the proof checks it
    lead = next((i for i, p in enumerate(pieces) if not p.startswith('<')), len(pieces))
    if lead > 2 and all(p.startswith('<') for p in pieces[:lead]):
        pieces = [pieces[0]] + pieces[lead - 1:]
    if len(pieces) > 5 and pieces[2].strip() == 'get_weather' and pieces[3].startswith('<'):
        # a name header followed by a preamble of several pieces before the arguments (PLaMo's
        # '<end_name><begin_arguments><constrain>json<msg>'): one argument marker, as the family takes it
        head = one.index(pieces[2]) + len(pieces[2])
        pieces = pieces[:3] + [one[head:args[0]].strip()]
    if len(pieces) not in (4, 5) or not all(pieces[i].startswith('<') for i in (0, 1, 3)) \
            or pieces[2].startswith('<'):
        return None  # not special-token sections
    section_begin, call_begin, header, argument_begin = (p.strip() for p in pieces[:4])
    tail = pieces[4] if len(pieces) == 5 else ''
    fence = None
    if after and not after[0].startswith('<'):  # the closing fence of a fenced value
        fence = after.pop(0).strip()
    if len(after) > 2 and all(p.startswith('<') for p in after):
        after = [after[0], after[-1]]  # markers between the call's end and the section's: text between calls
    if len(after) != 2 or not all(p.startswith('<') for p in after):
        raise TemplateDerivationError('tool_calls', f'after the arguments expected a call end and a section end '
                                                    f'marker, found {after!r} {where}')
    if header == 'get_weather' and not tail:
        layout = 'name'
    elif re.fullmatch(r'functions\.get_weather:\d+', header) and not tail:
        layout = 'call_id'
    elif 'get_weather' in tail and 'get_weather' not in header:
        layout = 'type'
        rest = tail.strip()[len('get_weather'):].strip()
        if fence is None and rest or fence is not None and not rest.startswith(fence):
            raise TemplateDerivationError('arguments', f'the argument value opens with {rest!r}, neither bare nor a '
                                                       f'code fence {where}')
    else:
        raise TemplateDerivationError('tool_calls', f'the call header {header!r} is neither the name, '
                                                    f'functions.NAME:IDX nor a call type followed by the name {where}')
    attrs: dict[str, Any] = {'section_begin': section_begin, 'section_end': after[1], 'call_begin': call_begin,
                             'argument_begin': argument_begin, 'call_end': after[0], 'header_layout': layout}
    if fence is not None:
        attrs['argument_fence'] = fence
    return ToolDeclaration('sections', SectionToolParser, attrs)


def _derive_header(outputs: dict[str, str]) -> ToolDeclaration | None:
    """``OPEN NAME [CALL_ID_MARKER ID] ARGUMENT_MARKER {args}`` per call (Mistral v11+): JsonHeaderToolParser."""
    one = outputs['one call']
    args = next(((start, end) for start, end, value in _json_values(one)
                 if isinstance(value, dict) and _canonical(value) == _canonical(ARGUMENTS['get_weather'])), None)
    if args is None:
        return None
    pre, post = one[:args[0]].strip(), one[args[1]:].strip()
    n = pre.find('get_weather')
    if n <= 0:
        return None
    open_tag, marker = pre[:n].strip(), pre[n + len('get_weather'):].strip()
    attrs: dict[str, Any] = {'tool_open_tag': open_tag, 'tool_close_tag': post or None}
    call_id = re.fullmatch(r'(.+?)call_0000(.+)', marker)
    if call_id:  # the template writes the call's id: CALL_ID_MARKER ID ARGUMENT_MARKER
        attrs['call_id_marker'], marker = call_id.group(1).strip(), call_id.group(2).strip()
    if not open_tag or not marker or any(c.isspace() for c in marker):
        return None
    attrs['argument_marker'] = marker
    return ToolDeclaration('json header', JsonHeaderToolParser, attrs)


def _derive_brace(outputs: dict[str, str]) -> ToolDeclaration | None:
    """``OPEN PREFIX NAME{key:value,...} CLOSE`` with unquoted keys and a string delimiter (Gemma 4):
    BraceCallToolParser."""
    one = outputs['one call']
    n = one.find('get_weather{')
    if n < 0:
        return None
    head = one[:n].strip()
    cut = head.rfind('>') + 1
    open_tag, prefix = head[:cut], head[cut:]
    city = ARGUMENTS['get_weather']['city']
    k = one.find('city:', n)
    v = one.find(city, k)
    if not open_tag or k < 0 or v < 0:
        raise TemplateDerivationError('arguments', f'a NAME{{...}} call whose keys or string values are not written '
                                                   f'as key:DELIMITER text DELIMITER: {one!r}')
    delimiter = one[k + len('city:'):v]
    if not delimiter or not one.startswith(delimiter, v + len(city)):
        raise TemplateDerivationError('arguments', f'string values are not between one delimiter repeated '
                                                   f'({delimiter!r}): {one!r}')
    end = one.rfind('}')
    attrs: dict[str, Any] = {'tool_open_tag': open_tag, 'tool_close_tag': one[end + 1:].strip() or None,
                             'string_delimiter': delimiter, 'call_prefixes': (prefix,) if prefix else ()}
    return ToolDeclaration('brace call', BraceCallToolParser, attrs)


_ELEMENT = r'(?P<el>[A-Za-z_][\w.-]*) (?P<attr>[\w:-]+)="{value}"(?P<rest>[^<>]*)>'


def _derive_dsml(outputs: dict[str, str]) -> ToolDeclaration | None:
    """Attribute-named markup: ``<TOKEN BLOCK><TOKEN invoke name="N"><TOKEN parameter name="K" [string="true"]>V
    </TOKEN parameter></TOKEN invoke></TOKEN BLOCK>`` (DeepSeek V3.2 DSML, MiniMax M2): DsmlToolParser."""
    one = outputs['one call']
    invoke = re.search(r'<(?P<tok>[^<>\s"=]*?)' + _ELEMENT.format(value='get_weather'), one)
    if invoke is None or invoke.group('rest').strip():
        return None
    tok = invoke.group('tok')
    params = {key: re.compile('<' + re.escape(tok) + _ELEMENT.format(value=key)).search(one, invoke.end())
              for key in ('city', 'days')}
    block = None
    for found in re.finditer('<' + re.escape(tok) + r'(?P<block>[^<>\s/]+)>', one[:invoke.start()]):
        block = found
    if block is None and all(params.values()):
        return _dsml_in_section(outputs, one, invoke, params)
    if block is None or not all(params.values()):
        return None
    city, days = params['city'], params['days']
    assert city is not None and days is not None
    if (city.group('el'), city.group('attr')) != (days.group('el'), days.group('attr')):
        return None
    # whitespace the template always writes before the block belongs to its open tag (DeepSeek's '\n\n')
    lead = one[:block.start()][len(one[:block.start()].rstrip()):]
    beside = outputs.get('content+call', '')
    tag = beside.find(block.group(0))
    if not lead or tag < 0 or beside[:tag][len(beside[:tag].rstrip()):] != lead:
        lead = ''
    attrs: dict[str, Any] = {
        'dsml_token': tok, 'tool_calls_block_name': block.group('block'), 'block_lead': lead,
        'invoke_element': invoke.group('el'), 'parameter_element': city.group('el'),
        'call_name_attribute': invoke.group('attr'), 'parameter_key_attribute': city.group('attr')}
    typing = value_typing(city, days)
    if typing is None:
        return None
    attrs.update(typing)
    return ToolDeclaration('attribute-named', DsmlToolParser, attrs)


def _dsml_in_section(outputs: dict[str, str], one: str, invoke: re.Match[str],
                     params: dict[str, re.Match[str] | None]) -> ToolDeclaration | None:
    """Attribute-named calls in a special-token section (Step-3: ``<｜tool_calls_begin｜>`` ...
    ``<｜tool_calls_end｜>``, a per-call ``<｜tool_call_begin｜>function<｜tool_sep｜>`` header before each
    invoke and ``<｜tool_call_end｜>`` after it, which the family skips as text between calls)."""
    city, days = params['city'], params['days']
    assert city is not None and days is not None
    if (city.group('el'), city.group('attr')) != (days.group('el'), days.group('attr')) \
            or city.group('rest').strip() or days.group('rest').strip():
        return None
    tok = invoke.group('tok')
    before = _SPECIAL.findall(one[:invoke.start()])
    after = _SPECIAL.findall(one[days.end():])
    if not before or not after or any(m.startswith('<' + tok) for m in (before[0], after[-1])):
        return None
    return ToolDeclaration('attribute-named', DsmlToolParser, {
        'dsml_token': tok, 'tool_calls_block_name': '', 'block_open_tag': before[0], 'block_close_tag': after[-1],
        'block_lead': '', 'invoke_element': invoke.group('el'), 'parameter_element': city.group('el'),
        'call_name_attribute': invoke.group('attr'), 'parameter_key_attribute': city.group('attr'),
        'string_attribute': None, 'schema_typed_values': True})


def _derive_ns(outputs: dict[str, str]) -> ToolDeclaration | None:
    return derive_ns_elements(outputs, ToolDeclaration, NsElementToolParser)  # type: ignore[no-any-return]


def _derive_name_keyed(outputs: dict[str, str]) -> ToolDeclaration | None:
    return derive_name_keyed(outputs, ToolDeclaration, JsonToolParser)  # type: ignore[no-any-return]


def _derive_channel_tags(outputs: dict[str, str]) -> ToolDeclaration | None:
    return derive_channel_tags(outputs, ToolDeclaration, DsmlToolParser)  # type: ignore[no-any-return]


def _tool_candidates(outputs: dict[str, str]) -> list[ToolDeclaration]:
    """Declarations the rendered calls fit, most specific first (the proof picks the first that holds)."""
    for derive in (_derive_json, _derive_name_keyed, _derive_sections, _derive_header, _derive_brace,
                   _derive_pythonic, _derive_ns, _derive_channel_tags):
        decl = derive(outputs)
        if decl is not None:
            return [decl]
    out = []
    dsml = _derive_dsml(outputs)
    if dsml is not None:
        out.append(dsml)
    try:
        out.append(_derive_xml(outputs))
    except TemplateDerivationError:
        if not out:
            raise
    return out


# ---- classes, proof ----------------------------------------------------------------------------------

class DerivedReasoningParser(ReasoningParser):
    """Base of reasoning classes derived from a chat template (markers need not be single tokens)."""

    @classmethod
    def validate_tokenizer(cls, tokenizer: Any) -> None:
        return None


def _content_markers(outputs: list[Rendered], reasoning: ReasoningDeclaration | None) -> tuple[str, ...]:
    """Markers the template writes around the answer (``<|START_RESPONSE|>`` ... ``<|END_RESPONSE|>``)."""
    turn = next((r for r in outputs if r.turn.label == 'content'), None)
    if turn is None:
        return ()
    text = _strip_reasoning(turn.output, reasoning)
    i = text.find(CONTENT)
    if i < 0:
        return ()
    found = [m for m in (text[:i].strip(), text[i + len(CONTENT):].strip()) if m]
    if not all(_SPECIAL.fullmatch(m) or is_channel_marker(m) for m in found):
        return ()  # not single markers: the proof says whether the text around the answer is a problem
    return tuple(found)


def _strip_answer_frame(text: str, markers: tuple[str, ...]) -> str:
    """A call turn without the answer frame around it (Hunyuan-A13B writes its calls inside ``<answer>``):
    the frame is dropped as content markers, so it is no part of the tool markers."""
    if not markers:
        return text
    t = text.strip()
    if t.startswith(markers[0]):
        t = t[len(markers[0]):]
        if len(markers) == 2 and t.endswith(markers[1]):
            t = t[:len(t) - len(markers[1])]
        return t
    return text


def _answer_close(markers: tuple[str, ...], stops: list[str]) -> str | None:
    """The close of a one-marker answer frame (``<answer>``) when every turn's shared end starts with it."""
    if len(markers) != 1 or not stops:
        return None
    for close in ('</' + markers[0][1:],) if markers[0].startswith('<') and not markers[0].startswith('</') else ():
        if all(stop.lstrip().startswith(close) for stop in stops):
            return close
    return None


def _block_header(by_setting: dict[str, list[Rendered]]) -> str | None:
    """The marker the generation prompt ends with, when the template also opens every later message block with it
    and writes the call's name after it (Inkling: ``<|message_model|>NAME<|content_invoke_tool_json|>``)."""
    rendered = [r for outs in by_setting.values() for r in outs]
    head = _LAST_MARKER.search(rendered[0].prompt.rstrip()) if rendered else None
    if head is None:
        return None
    named = re.compile(re.escape(head.group(1)) + r'[A-Za-z_]\w*<')
    if any(r.turn.label == 'one call' and r.output.startswith('get_weather<') for r in rendered) \
            and any(named.search(r.output) for r in rendered):
        return head.group(1)
    return None


def _strip_header(r: Rendered, header: str) -> Rendered:
    """A turn without its block headers (the marker and the name after it): what the other markers are read from."""
    out = re.sub(re.escape(header) + r'(?:[A-Za-z_][\w.-]*)?(?=<)', '', r.output)
    return replace(r, output=re.sub(r'^[A-Za-z_][\w.-]*(?=<)', '', out))  # the header the prompt opened


def _header_framing(header: str, every: list[Rendered], markers: tuple[str, ...],
                    candidates: list[ToolDeclaration | None]) -> tuple[dict[str, Any], tuple[str, ...],
                                                                       list[ToolDeclaration | None]]:
    """The block-header declarations (the header marker, the block kinds that end a header, the block end the
    turn's shared end is), the content markers with them, and the tool candidates closed by the block end."""
    kinds = re.compile(f'(?:^|{re.escape(header)})(?:[A-Za-z_][\\w.-]*)?({_SPECIAL.pattern[1:-1]})')
    ends = {r.stop.strip() for r in every}
    end = ends.pop() if len(ends) == 1 else ''
    if not _SPECIAL.fullmatch(end):
        raise TemplateDerivationError('template', f'every message block opens with {header}, but the turns do not '
                                                  'end with one block-end marker')
    found = sorted({m.group(1) for r in every for m in kinds.finditer(r.output)} - {header, end})
    framing = {'header_markers': (header,), 'header_ends': tuple(found), 'header_at_start': True}
    shown = tuple(m for m in markers if m != end)
    closed = [c if c is None or c.attrs.get('tool_close_tag') else
              ToolDeclaration(c.family, c.base, {**c.attrs, 'tool_close_tag': end}) for c in candidates]
    return framing, (header,) + shown + (end,), closed


def _reasoning_class(decl: ReasoningDeclaration, origin: str,
                     content_markers: tuple[str, ...] = ()) -> type[ReasoningParser]:
    attrs: dict[str, Any] = {'reasoning_open_tag': decl.open_tag, 'reasoning_close_tag': decl.close_tag,
                             'open_tag_in_prompt': decl.open_tag_in_prompt,
                             'thinking_switches': decl.thinking_switches, 'thinking_values': decl.thinking_values,
                             'content_markers': content_markers, **dict(decl.framing),
                             '__module__': 'lmparse.templates', '__doc__': f'Derived from the chat template {origin}.'}
    return type('DerivedReasoningParser', (DerivedReasoningParser,), attrs)


def _tool_class(decl: ToolDeclaration, origin: str) -> type[ToolParser]:
    attrs = {**decl.attrs, 'request_settings': {'skip_special_tokens': False}, '__module__': 'lmparse.templates',
             '__doc__': f'Derived from the chat template {origin}.'}
    return type(f'Derived{decl.base.__name__}', (decl.base,), attrs)


def _response_class(reasoning: type[ReasoningParser] | None, tool: type[ToolParser] | None,
                    tokenizer: Any = None) -> type[BaseResponseParser]:
    name = 'BaseResponseParser[chat_template]'
    return type(name, (BaseResponseParser,), {
        '__module__': 'lmparse.templates', '__qualname__': name, 'reasoning_parser_cls': reasoning,
        'tool_parser_cls': tool, 'tokenizer': tokenizer if hasattr(tokenizer, 'get_vocab') else None})


def _norm(text: str | None) -> str | None:
    return text.strip() or None if text else None


@dataclass(frozen=True)
class Parsed:
    content: str | None
    reasoning: str | None
    calls: tuple[tuple[str, str], ...]


def _expected(r: Rendered, with_reasoning: bool) -> Parsed:
    # text the template drops (content beside calls, say) is not there to parse back
    turn = r.turn
    content = turn.content if turn.content and turn.content in r.output else None
    reasoning = turn.reasoning if with_reasoning and turn.reasoning and turn.reasoning in r.output else None
    return Parsed(_norm(content), _norm(reasoning), tuple((n, _canonical(ARGUMENTS[n])) for n in turn.calls))


def _run(cls: type[BaseResponseParser], setting: dict[str, Any], text: str, size: int) -> Parsed:
    request: dict[str, Any] = {'model': 'derived', 'messages': [{'role': 'user', 'content': USER}], 'tools': TOOLS}
    if setting:
        request['chat_template_kwargs'] = dict(setting)
    parser = cls(request)
    chunks = [text[i:i + size] for i in range(0, len(text), size)] if size else [text]
    chunks = chunks or ['']
    content: list[str] = []
    reasoning: list[str] = []
    deltas: list[Any] = []
    for i, chunk in enumerate(chunks):
        for message, _ in parser.stream_chunk(chunk, [], final=i == len(chunks) - 1):
            content.append(message.content or '')
            reasoning.append(message.reasoning_content or '')
            deltas.extend(message.tool_calls or ())
    calls = []
    if parser.tool_parser is not None:
        for call in parser.tool_parser.build_tool_calls(deltas):
            try:
                args = _canonical(json.loads(call.function.arguments))
            except ValueError:
                args = f'<not JSON: {call.function.arguments!r}>'
            calls.append((call.function.name, args))
    return Parsed(_norm(''.join(content)), _norm(''.join(reasoning)), tuple(calls))


def _prove(cls: type[BaseResponseParser], rendered: list[Rendered], with_reasoning: bool,
           with_tools: bool) -> None:
    for r in rendered:
        if r.turn.calls and not with_tools:
            continue
        want = _expected(r, with_reasoning)
        for size in PROOF_CHUNK_SIZES:
            try:
                got = _run(cls, r.setting, r.output, size)
            except Exception as err:  # a declaration the family rejects at construction or while parsing
                raise TemplateDerivationError('proof', f'the derived dialect fails on "{r.turn.label}": '
                                                       f'{type(err).__name__}: {err}') from None
            if got != want:
                how = f'{size}-character chunks' if size else 'one chunk'
                diffs = [f'{name}: expected {getattr(want, name)!r}, parsed {getattr(got, name)!r}'
                         for name in ('content', 'reasoning', 'calls') if getattr(want, name) != getattr(got, name)]
                if want.calls != got.calls:
                    same_names = [n for n, _ in want.calls] == [n for n, _ in got.calls]
                    part = 'arguments' if same_names else 'tool_calls'
                else:
                    part = 'reasoning' if want.reasoning != got.reasoning else 'proof'
                raise TemplateDerivationError(part, f'the derived dialect does not parse the template\'s own '
                                                    f'rendering of "{r.turn.label}" ({_setting_key(r.setting)}, '
                                                    f'{how}) back: {"; ".join(diffs)}; rendered {r.output!r}')


# ---- the result -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class DerivedDialect:
    """A dialect derived from a chat template and proved on its renderings.

    ``reasoning_parser`` / ``tool_parser`` are classes on lmparse's compiled
    families (None where the template renders no reasoning / no tool calls);
    ``notes`` say what was not derived and why; :meth:`python_source` prints
    the declarations as a dialect module.
    """

    origin: str
    reasoning_parser: type[ReasoningParser] | None
    tool_parser: type[ToolParser] | None
    reasoning: ReasoningDeclaration | None
    tools: ToolDeclaration | None
    notes: tuple[str, ...] = ()
    content_markers: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    renderings: int = 0

    def response_parser(self, tokenizer: Any = None) -> type[BaseResponseParser]:
        """A :class:`BaseResponseParser` subclass configured with both derived parsers."""
        return _response_class(self.reasoning_parser, self.tool_parser, tokenizer)

    def summary(self) -> dict[str, Any]:
        """What was derived, as plain data (``lmparse derive --json``)."""
        return {
            'template': self.origin,
            'reasoning': None if self.reasoning is None else {
                'open': self.reasoning.open_tag, 'close': self.reasoning.close_tag,
                'message_field': self.reasoning.field, 'open_tag_in_prompt': self.reasoning.open_tag_in_prompt,
                'thinking_switches': list(self.reasoning.thinking_switches),
                **({'thinking_values': [list(v) for v in self.reasoning.thinking_values]}
                   if self.reasoning.thinking_values else {})},
            'tool_calls': None if self.tools is None else {
                'family': self.tools.base.__name__,
                **{k: list(v) if isinstance(v, tuple) else v for k, v in self.tools.attrs.items()}},
            'content_markers': list(self.content_markers),
            'proved_on': {'renderings': self.renderings, 'settings': list(self.settings),
                          'chunk_sizes': [s or 'whole' for s in PROOF_CHUNK_SIZES]},
            'notes': list(self.notes),
        }

    def python_source(self, name: str = 'derived') -> str:
        from lmparse.templates._source import python_source

        return python_source(self, name)


def derive_dialect(source: Any, *, special_tokens: dict[str, str] | None = None) -> DerivedDialect:
    """Derive and prove a dialect from a chat template (see the module docstring); :class:`TemplateDerivationError`
    when any part cannot be derived or the proof fails."""
    tpl = load_chat_template(source, special_tokens=special_tokens)
    notes: list[str] = []
    settings = _settings(tpl)
    field_name = _reasoning_field(tpl, settings)
    from lmparse.templates._derive_channels import derive_framed  # message-framed: recipient channels, Harmony

    framed = derive_framed(tpl, settings, field_name)
    if framed is not None:
        return framed
    last_error: TemplateDerivationError | None = None
    for string_arguments in (False, True):
        try:
            return _derive(tpl, settings, field_name, string_arguments, list(notes))
        except TemplateDerivationError as err:
            # arguments as a dict is transformers' convention: its error is the one to report
            if err.part not in ('arguments', 'tool_calls') or last_error is not None:
                raise (last_error or err) from None
            last_error = err
    raise AssertionError('unreachable')  # pragma: no cover


def _derive(tpl: ChatTemplate, settings: list[dict[str, Any]], field_name: str | None, string_arguments: bool,
            notes: list[str]) -> DerivedDialect:
    by_setting: dict[str, list[Rendered]] = {}
    for setting in settings:
        rendered, skipped = _render_turns(tpl, setting, field_name, string_arguments)
        by_setting[_setting_key(setting)] = rendered
        if skipped:
            notes.append(f'{_setting_key(setting)}: the template writes {", ".join(skipped)} differently from its '
                         'generation prompt; not part of the proof under this setting')
    header = _block_header(by_setting)
    shown = by_setting  # what markers are read from: without block headers (proved with them)
    if header is not None:
        shown = {key: [_strip_header(r, header) for r in outs] for key, outs in by_setting.items()}
        notes.append(f'framing: every message block opens with {header} and a header (the call name) up to the '
                     'block kind (header markers)')
    reasoning: ReasoningDeclaration | None = None
    if field_name is None:
        notes.append('reasoning: the template renders none of the message fields '
                     f'{", ".join(REASONING_FIELDS)}; no reasoning parser')
    else:
        reasoning = _derive_reasoning(field_name, shown)
    # tool markers come from the first setting with every call turn usable
    call_labels = ('one call', 'call without arguments', 'two calls')
    base = next((outs for outs in shown.values()
                 if all(any(r.turn.label == label for r in outs) for label in call_labels)), None)
    if base is None:
        raise TemplateDerivationError('rendering', 'no thinking setting renders the tool-call turns as a '
                                                   'continuation of its generation prompt')
    markers = _content_markers(base, reasoning)
    outputs = {r.turn.label: _strip_answer_frame(_strip_reasoning(r.output, reasoning), markers) for r in base}
    candidates: list[ToolDeclaration | None] = [None]
    if 'get_weather' not in outputs['one call']:
        notes.append('tool calls: the template does not render assistant tool_calls; no tool parser')
    else:
        candidates = list(_tool_candidates(outputs))
    if reasoning is None and candidates == [None]:
        raise TemplateDerivationError('template', 'the template renders neither reasoning nor tool calls: '
                                                  'nothing to derive')
    if markers:
        notes.append(f'content: the template frames the answer in {" ... ".join(markers)} (content markers)')
    origin = tpl.origin
    every = [r for outs in by_setting.values() for r in outs]
    end = channel_end([r.stop for r in every])
    if end is not None:
        # a multi-token end of turn the model writes: dropped as a content marker, and proved so
        markers += (end,)
        notes.append(f'content: every turn ends with the channel marker {end} (a content marker)')
        every += [replace(r, output=r.output + end, stop='') for r in every]
    framing: dict[str, Any] = {}
    if header is not None:
        framing, markers, candidates = _header_framing(header, every, markers, candidates)
        if reasoning is not None:
            reasoning = replace(reasoning, framing=tuple(framing.items()))
        # the model writes the block end of its last block too: proved with it written
        every += [replace(r, output=r.output + r.stop.strip(), stop='') for r in every]
    close = _answer_close(markers, [r.stop for r in every])
    if close is not None:
        # the template closes the answer frame in the end of turn it shares (Hunyuan-A13B's '</answer>'):
        # the model writes it, so it is a content marker too, proved on every turn with it written
        markers += (close,)
        notes.append(f'content: every turn ends with {close}, the close of the answer frame (a content marker)')
        every += [replace(r, output=r.output + r.stop[:r.stop.index(close) + len(close)], stop='') for r in every]
    r_cls = _reasoning_class(reasoning, origin, markers) if reasoning is not None else None
    dropped = sorted({r.turn.label for r in every if r.turn.content and r.turn.content not in r.output})
    if dropped:
        notes.append(f'content: the template drops the content of {", ".join(dropped)}')
    first_failure: TemplateDerivationError | None = None
    for tools in candidates:
        if tools is not None and markers:
            tools = ToolDeclaration(tools.family, tools.base, {**tools.attrs, 'content_markers': markers, **framing})
        t_cls = _tool_class(tools, origin) if tools is not None else None
        try:
            _prove(_response_class(r_cls, t_cls), every, reasoning is not None, tools is not None)
        except TemplateDerivationError as err:
            first_failure = first_failure or err
            continue
        break
    else:
        assert first_failure is not None
        raise bare_failure(candidates[0].family if candidates[0] is not None else '', first_failure)
    note = bare_note(tools.family) if tools is not None else None
    if note:
        notes.append(note)
    if string_arguments:
        notes.append('tool calls: the template renders arguments given as a JSON string (not as a dict)')
    return DerivedDialect(origin, r_cls, t_cls, reasoning, tools, tuple(notes), markers,
                          tuple(k for k, v in by_setting.items() if v), len(every))

