"""Derivation for message-framed templates: recipient channels (Beam, Muse) and Harmony (gpt-oss).

These templates write an assistant turn as several messages, each
``START ROLE HEADER MESSAGE BODY END`` (``<|start|>assistant to=NAME<|channel|>analysis<|message|>...<|call|>``),
and the generation prompt ends with ``START ROLE`` (``<|start|>assistant``), so
the first message of the output has no ``START ROLE``. The header, not the
body, says what a body is. Recognised when the prompt ends with a
``<|...|>`` marker and the role, and the content turn's output is a header
ending in a ``<|...|>`` marker right before the content; every other template
goes on to the tag families (``_derive.py``).

1. **Messages.** Each rendering is split at ``START ROLE``; a header runs to
   the message marker (the marker right before the content), a body to the
   next ``<|...|>`` marker, which is its terminator (or the next ``START``).
   A body is reasoning (the synthetic reasoning), content (the synthetic
   content), a tool message (the calls), or empty.
2. **Headers.** A header's ``to=RECIPIENT`` and its channel (the word after a
   ``<|...|>`` marker) are what the template writes for each kind.
3. **Family.**

   - A tool message whose body is the arguments as JSON, under Harmony's own
     tokens: the Harmony family (:class:`HarmonyResponseParser`, gpt-oss's
     declaration). Its reading is fixed (``analysis`` reasoning, ``final`` /
     ``commentary`` content, ``to=functions.NAME`` calls); every header the
     template writes must read as what the template put under it, checked
     with the family's own header classifier, else the part and the header
     are named.
   - A tool message whose body holds ``<TAG name="KEY">VALUE</TAG>``
     parameters: the recipient-channel family (:class:`ChannelGrammar`). The
     call is named by the recipient (Beam; values typed by the tool's schema,
     as the engines' response-template reading types them) or by ``<TAG
     name="NAME">`` invoke elements (Muse; a value is its JSON when all of it
     is JSON, a string-typed parameter keeps its text). Recipients and
     channels of the text messages map to reasoning / content; any other
     recipient is a tool channel. The terminators are the ones the template
     writes; nothing the template does not show (recovery of a missing
     terminator or parameter close tag) is declared.
4. **What the template changes, said in notes.** A turn the template rejects
   (``raise_exception``) is left out of the proof; a template that writes only
   the first call of a turn (Harmony stops at ``<|call|>``) is proved on the
   calls it writes; content the template writes as reasoning beside calls
   (gpt-oss writes it on the analysis channel) is expected back as reasoning.
5. **Proof.** As for every derived dialect: every rendering under every
   thinking setting, streamed at 1, 4 and 16 characters and whole, with the
   output's last terminator kept and cut (an engine strips the stop token).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from lmparse.harmony import HARMONY_SPECIAL_TOKEN_IDS, HarmonyResponseParser, parse_header
from lmparse.recipient_channels import ChannelGrammar, ChannelToolParser
from lmparse.response import BaseResponseParser
from lmparse.templates._derive import (
    ARGUMENTS, CONTENT, CONTENT_2, PROOF_CHUNK_SIZES, REASONING, TURNS, USER, DerivedDialect, DerivedReasoningParser,
    Parsed, ReasoningDeclaration, ToolDeclaration, Turn, _canonical, _message, _norm, _render, _response_class, _run,
    _setting_key,
)
from lmparse.templates._errors import TemplateDerivationError
from lmparse.templates._render import ChatTemplate

__all__ = ['FramedDialect', 'derive_framed']

_MARKER = re.compile(r'<\|[^<>|\s]+\|>')
_RECIPIENT = re.compile(r'(?:^|(?<=[\s>]))to=([^\s<]+)')
HEADER_MAX = 256  # the channel family's longest header
HARMONY_ENDS = ('<|end|>', '<|return|>', '<|call|>')
ESSENTIAL = ('content', 'one call')  # turns a template must render for a derivation


class _NotFramed(Exception):
    """A rendering that is not a sequence of messages."""


@dataclass(frozen=True)
class Message:
    header: str
    body: str
    end: str | None  # its terminator (None: the next START ends it, or the output does)
    start: bool      # written after START ROLE (False: the first message, whose START ROLE is the prompt's)


@dataclass
class Output:
    """One turn rendered under one setting, split into messages."""

    turn: Turn
    setting: dict[str, Any]
    text: str             # through the last message's terminator
    messages: list[Message]
    kinds: list[str] = field(default_factory=list)  # per message: reasoning / content / tool / empty


@dataclass(frozen=True)
class FramedDialect(DerivedDialect):
    """A :class:`DerivedDialect` on a message-framed family; Harmony's is a response parser of its own."""

    response_parser_cls: type | None = None
    grammar: ChannelGrammar | None = None

    def response_parser(self, tokenizer: Any = None) -> type[BaseResponseParser]:
        if self.response_parser_cls is not None:
            return self.response_parser_cls.with_parsers(  # type: ignore[no-any-return,attr-defined]
                tokenizer=tokenizer if hasattr(tokenizer, 'get_vocab') else None)
        return super().response_parser(tokenizer)

    def python_source(self, name: str = 'derived') -> str:
        return python_source(self, name)


# ---- rendering and messages ----------------------------------------------------------------------

def _framing(prompt: str) -> tuple[str, str] | None:
    """(START, ROLE) when the generation prompt ends with them (``<|start|>``, ``assistant``)."""
    found = re.search(r'(<\|[^<>|\s]+\|>)(assistant)$', prompt)
    return (found.group(1), found.group(2)) if found else None


def _split(out: str, start: str, role: str, message: str) -> tuple[list[Message], int] | None:
    """The messages of ``out`` and where the last one ends; None when ``out`` is not messages."""
    msgs: list[Message] = []
    pos, n, started = 0, len(out), False
    head = start + role
    while pos < n:
        m = out.find(message, pos)
        if m < 0:
            return None
        header = out[pos:m]
        if '\n' in header or len(header) > HEADER_MAX:
            return None
        b = m + len(message)
        t = _MARKER.search(out, b)
        if t is None:
            msgs.append(Message(header, out[b:], None, started))
            return msgs, n
        end = None if t.group(0) == start else t.group(0)
        msgs.append(Message(header, out[b:t.start()], end, started))
        pos = t.end() if end is not None else t.start()
        rest = len(out) - len(out[pos:].lstrip())
        if out.startswith(head, rest):
            pos, started = rest + len(head), True
            continue
        return msgs, pos
    return (msgs, pos) if msgs else None


def _render_outputs(tpl: ChatTemplate, setting: dict[str, Any], field_name: str | None, start: str, role: str,
                    message: str, notes: list[str]) -> list[Output]:
    user = {'role': 'user', 'content': USER}
    prompt = _render(tpl, [user], True, setting)
    out: list[Output] = []
    key = _setting_key(setting)
    for turn in TURNS:
        try:
            full = _render(tpl, [user, _message(turn, field_name, False)], False, setting)
        except TemplateDerivationError as err:
            if turn.label in ESSENTIAL:
                raise
            notes.append(f'{key}: the template rejects "{turn.label}" ({err.reason.split(": ", 1)[-1]}); '
                         'not part of the proof')
            continue
        if not full.startswith(prompt):
            notes.append(f'{key}: the template writes "{turn.label}" differently from its generation prompt; '
                         'not part of the proof under this setting')
            continue
        text = full[len(prompt):]
        split = _split(text, start, role, message)
        if split is None:
            raise _NotFramed
        msgs, end = split
        # after the last terminator only the end of the turn (whitespace, an EOS token) may follow
        if not re.fullmatch(r'(?:\s*<[^<>\s]+>)*\s*', text[end:]):
            raise _NotFramed
        out.append(Output(turn, setting, text[:end], msgs))
    return out


# ---- headers ------------------------------------------------------------------------------------

def _recipient(header: str) -> str | None:
    found = _RECIPIENT.search(header)
    return found.group(1) if found else None


def _channel(header: str) -> tuple[str, str] | None:
    """(marker, channel name) of a header: the first ``<|...|>`` marker with a word right after it."""
    for m in _MARKER.finditer(header):
        word = re.match(r'[A-Za-z_][\w.-]*', header[m.end():])
        if word:
            return m.group(0), word.group(0)
    return None


def _classify(outputs: list[Output]) -> None:
    """Each message's kind from its body: the synthetic reasoning, content, calls (any argument), or nothing."""
    for o in outputs:
        for msg in o.messages:
            body = msg.body.strip()
            if body == REASONING:
                kind = 'reasoning'
            elif body in (CONTENT, CONTENT_2):
                kind = 'content'
            elif any(name in body or name in msg.header for name in o.turn.calls):
                kind = 'tool'
            elif not body:
                kind = 'empty'
            else:
                raise TemplateDerivationError('rendering', f'"{o.turn.label}" holds a message that is neither the '
                                                           f'reasoning, the content nor a call: {msg.header!r} '
                                                           f'{msg.body!r}')
            o.kinds.append(kind)


def _expected(o: Output, moved: bool, calls: tuple[str, ...]) -> Parsed:
    """What the output must parse back to: the turn's text (content moved to reasoning when the template writes it
    there beside calls) and the calls the template writes."""
    turn = o.turn
    content = turn.content if turn.content and turn.content in o.text else None
    reasoning = turn.reasoning if turn.reasoning and turn.reasoning in o.text else None
    if moved and content is not None and turn.calls and reasoning is None:
        content, reasoning = None, content
    return Parsed(_norm(content), _norm(reasoning), tuple((n, _canonical(ARGUMENTS[n])) for n in calls))


def _written_calls(o: Output, names_in: Any) -> tuple[str, ...]:
    """The turn's calls as the template writes them: all, or (noted by the caller) only the first ones."""
    written = [n for i, msg in enumerate(o.messages) if o.kinds[i] == 'tool' for n in names_in(msg)]
    if tuple(written) != o.turn.calls[:len(written)] or (o.turn.calls and not written):
        raise TemplateDerivationError('tool_calls', f'"{o.turn.label}" writes the calls {written}, not '
                                                    f'{list(o.turn.calls)} in order')
    return tuple(written)


# ---- the hook ---------------------------------------------------------------------------------------

def derive_framed(tpl: ChatTemplate, settings: list[dict[str, Any]], field_name: str | None) -> DerivedDialect | None:
    """The dialect of a message-framed template (see the module docstring); None when the template is not one."""
    user = {'role': 'user', 'content': USER}
    framing = _framing(_render(tpl, [user], True, settings[0]))
    if framing is None:
        return None
    start, role = framing
    content_turn = next(t for t in TURNS if t.label == 'content')
    try:
        full = _render(tpl, [user, _message(content_turn, field_name, False)], False, settings[0])
    except TemplateDerivationError:
        return None
    prompt = _render(tpl, [user], True, settings[0])
    out = full[len(prompt):] if full.startswith(prompt) else ''
    i = out.find(CONTENT)
    marker = re.search(r'<\|[^<>|\s]+\|>$', out[:i]) if i > 0 else None
    if marker is None:
        return None
    message = marker.group(0)
    notes: list[str] = []
    try:
        by_setting = {_setting_key(s): _render_outputs(tpl, s, field_name, start, role, message, notes)
                      for s in settings}
    except _NotFramed:
        return None  # some turn is not a sequence of messages: the tag families read it, or refuse
    every = [o for outs in by_setting.values() for o in outs]
    if not any(_recipient(m.header) or _channel(m.header) for o in every for m in o.messages):
        return None  # no header says anything: not a message-framed template
    _classify(every)
    tool_msgs = [(o, m) for o in every for i, m in enumerate(o.messages) if o.kinds[i] == 'tool']
    one_call = next((o for o in every if o.turn.label == 'one call'), None)
    if one_call is None or 'tool' not in one_call.kinds:
        raise TemplateDerivationError('tool_calls', 'the template does not write the call of "one call" as a '
                                                    'message of its own')
    first = one_call.messages[one_call.kinds.index('tool')]
    body = first.body.strip()
    try:
        json_body = _canonical(json.loads(body)) == _canonical(ARGUMENTS['get_weather'])
    except ValueError:
        json_body = False
    ctx = _Context(tpl, start, role, message, field_name, every, notes, tool_msgs,
                   tuple(k for k, v in by_setting.items() if v))
    return _harmony(ctx) if json_body else _channels(ctx)


@dataclass
class _Context:
    tpl: ChatTemplate
    start: str
    role: str
    message: str
    field_name: str | None
    every: list[Output]
    notes: list[str]
    tool_msgs: list[tuple[Output, Message]]
    settings: tuple[str, ...]


def _moved_content(ctx: _Context) -> bool:
    """Whether the template writes the content of a turn with calls as reasoning (gpt-oss: analysis channel)."""
    heads: dict[str, set[str]] = {}
    for o in ctx.every:
        for msg, kind in zip(o.messages, o.kinds):
            if kind in ('reasoning', 'content'):
                heads.setdefault(kind, set()).add(msg.header)
    moved = False
    for o in ctx.every:
        for msg, kind in zip(o.messages, o.kinds):
            if kind == 'content' and o.turn.calls and msg.header in heads.get('reasoning', set()) \
                    and msg.header not in {m.header for p in ctx.every if not p.turn.calls
                                           for m, k in zip(p.messages, p.kinds) if k == 'content'}:
                moved = True
    if moved:
        ctx.notes.append('content: the template writes the content of a turn with tool calls under the reasoning '
                         'header; it reads back as reasoning')
        for o in ctx.every:
            if o.turn.calls:
                o.kinds = ['reasoning' if k == 'content' else k for k in o.kinds]
    return moved


def _prove(cls: type[BaseResponseParser], ctx: _Context, moved: bool, names_in: Any) -> int:
    first_only = False
    count = 0
    for o in ctx.every:
        calls = _written_calls(o, names_in)
        first_only = first_only or len(calls) < len(o.turn.calls)
        want = _expected(o, moved, calls)
        texts = [o.text]
        last = o.messages[-1].end
        if last is not None:
            texts.append(o.text[:len(o.text) - len(last)])  # the engine strips the stop token
        for text in texts:
            count += 1
            for size in PROOF_CHUNK_SIZES:
                try:
                    got = _run(cls, o.setting, text, size)
                except Exception as err:  # a declaration the family rejects while parsing
                    raise TemplateDerivationError('proof', f'the derived dialect fails on "{o.turn.label}": '
                                                           f'{type(err).__name__}: {err}') from None
                if got != want:
                    how = f'{size}-character chunks' if size else 'one chunk'
                    diffs = [f'{name}: expected {getattr(want, name)!r}, parsed {getattr(got, name)!r}'
                             for name in ('content', 'reasoning', 'calls') if getattr(want, name) != getattr(got, name)]
                    part = 'proof'
                    if want.calls != got.calls:
                        part = 'arguments' if [n for n, _ in want.calls] == [n for n, _ in got.calls] else 'tool_calls'
                    elif want.reasoning != got.reasoning:
                        part = 'reasoning'
                    raise TemplateDerivationError(part, f'the derived dialect does not parse the template\'s own '
                                                        f'rendering of "{o.turn.label}" ({_setting_key(o.setting)}, '
                                                        f'{how}) back: {"; ".join(diffs)}; rendered {text!r}')
    if first_only:
        ctx.notes.append('tool calls: the template writes only the first call of a turn; proved on the calls it '
                         'writes')
    return count


def _reasoning_declaration(ctx: _Context, open_tag: str, close_tag: str) -> ReasoningDeclaration | None:
    if ctx.field_name is None:
        ctx.notes.append('reasoning: the template renders none of the message fields; no reasoning parser')
        return None
    if not any('reasoning' in o.kinds for o in ctx.every if o.turn.reasoning):
        raise TemplateDerivationError('reasoning', f'the template renders {ctx.field_name!r} but not as a message '
                                                   'of its own')
    return ReasoningDeclaration(open_tag, close_tag, ctx.field_name, False, ())


# ---- Harmony --------------------------------------------------------------------------------------

_HARMONY_READS = ('Harmony reads an analysis message as reasoning, final and commentary as content, and '
                  'to=functions.NAME on commentary / analysis as a call')


def _harmony(ctx: _Context) -> DerivedDialect:
    wanted = {'start': ('<|start|>', ctx.start), 'message': ('<|message|>', ctx.message)}
    for what, (harmony, written) in wanted.items():
        if harmony != written:
            raise TemplateDerivationError('tool_calls', f'calls with JSON arguments in role-framed messages are '
                                                        f'Harmony, but the template\'s {what} marker is {written!r}, '
                                                        f'not Harmony\'s {harmony!r}')
    for o in ctx.every:
        for msg in o.messages:
            for m in _MARKER.findall(msg.header):
                if m not in HARMONY_SPECIAL_TOKEN_IDS:
                    raise TemplateDerivationError('tool_calls', f'the header {msg.header!r} holds {m!r}, not a '
                                                                f'Harmony token')
            if msg.end is not None and msg.end not in HARMONY_ENDS:
                raise TemplateDerivationError('tool_calls', f'a message ends with {msg.end!r}; Harmony messages end '
                                                            f'with {", ".join(HARMONY_ENDS)}')
    moved = _moved_content(ctx)
    for o in ctx.every:
        for msg, kind in zip(o.messages, o.kinds):
            if kind == 'empty':
                continue
            reads, name = parse_header((ctx.role + msg.header) if msg.start else msg.header, msg.start)
            if reads != kind:
                raise TemplateDerivationError('tool_calls' if 'tool' in (kind, reads) else kind,
                                              f'the template writes {kind} under the header {msg.header!r}, which '
                                              f'the Harmony family reads as {reads} ({_HARMONY_READS})')
            if kind == 'tool':
                try:
                    json.loads(msg.body)
                except ValueError:
                    raise TemplateDerivationError('arguments', f'the call {name!r} is not a JSON object '
                                                               f'({msg.body!r})') from None

    def names_in(msg: Message) -> list[str]:
        return [str(parse_header((ctx.role + msg.header) if msg.start else msg.header, msg.start)[1])]

    cls = type('HarmonyResponseParser[chat_template]', (HarmonyResponseParser,),
               {'__module__': 'lmparse.templates', '__doc__': f'Derived from the chat template {ctx.tpl.origin}.'})
    renderings = _prove(cls, ctx, moved, names_in)
    reasoning = _reasoning_declaration(ctx, '<|channel|>analysis<|message|>', '<|end|>')
    tools = ToolDeclaration('harmony', cast(Any, HarmonyResponseParser), {})  # the family is a response parser
    return FramedDialect(ctx.tpl.origin, None, None, reasoning, tools, tuple(ctx.notes), (), ctx.settings, renderings,
                         response_parser_cls=cls)


# ---- recipient channels ------------------------------------------------------------------------------

def _element(body: str, value: str, where: str) -> tuple[str, int, int] | None:
    """(open tag up to the attribute, start of the tag, end of the tag) of ``<TAG name="VALUE">`` in ``body``."""
    found = re.search(r'<([A-Za-z_][\w:.-]*) name="' + re.escape(value) + r'">', body)
    if found is None:
        return None
    return '<' + found.group(1), found.start(), found.end()


def _calls_layout(ctx: _Context) -> dict[str, Any]:
    msg = next(m for o, m in ctx.tool_msgs if o.turn.label == 'one call')
    body, recipient = msg.body, _recipient(msg.header)
    where = f'in the rendered call {msg.header + ctx.message + msg.body!r}'
    attrs: dict[str, Any] = {}
    invoke = _element(body, 'get_weather', where)
    pos = 0
    if invoke is not None:
        tag = invoke[0]
        close = '</' + tag[1:] + '>'
        if close not in body[invoke[2]:]:
            raise TemplateDerivationError('tool_calls', f'the call element {tag!r} has no {close!r} {where}')
        attrs['invoke'], attrs['invoke_close'] = tag, close
        pos = invoke[2]
    elif recipient != 'get_weather':
        raise TemplateDerivationError('tool_calls', f'the call is named neither by a <TAG name="NAME"> element nor '
                                                    f'by the recipient alone (to={recipient}): the recipient-channel '
                                                    f'family names a call by the whole recipient {where}')
    param = _element(body[pos:], 'city', where)
    if param is None:
        raise TemplateDerivationError('arguments', f'the arguments are not <TAG name="KEY">VALUE</TAG> elements, '
                                                   f'the only parameters the recipient-channel family reads {where}')
    ptag = param[0]
    pclose = '</' + ptag[1:] + '>'
    v0 = pos + param[2]
    v1 = body.find(pclose, v0)
    if v1 < 0:
        raise TemplateDerivationError('arguments', f'the parameter element {ptag!r} has no {pclose!r} {where}')
    value = body[v0:v1]
    city = ARGUMENTS['get_weather']['city']
    if value == city:
        newlines = False
    elif value == '\n' + city + '\n':
        newlines = True
    else:
        raise TemplateDerivationError('arguments', f'a string value is written as {value!r}: neither its text nor '
                                                   f'its text between two newlines {where}')
    attrs.update(parameter=ptag, parameter_close=pclose, value_newlines=newlines)
    if invoke is None:
        attrs['values'] = 'schema'  # the recipient names the call: values typed by the schema (Beam)
    else:
        attrs['keep_string_parameters'] = True  # JSON when all of it is JSON; a string parameter keeps its text
    return attrs


def _channels(ctx: _Context) -> DerivedDialect:
    layout = _calls_layout(ctx)
    moved = _moved_content(ctx)
    recipients: dict[str, str] = {}
    channels: dict[str, str] = {}
    no_recipient: list[str] = []
    channel_markers: list[str] = []
    ends: list[str] = []
    reasoning_end: str | None = None
    for o in ctx.every:
        for msg, kind in zip(o.messages, o.kinds):
            if msg.end is not None and msg.end not in ends:
                ends.append(msg.end)
            if kind == 'reasoning' and reasoning_end is None:
                reasoning_end = msg.end
            ch = _channel(msg.header)
            if ch is not None and ch[0] not in channel_markers:
                channel_markers.append(ch[0])
            if kind in ('empty', 'tool'):
                continue
            r = _recipient(msg.header)
            if r is not None:
                table, key = recipients, r
            elif ch is not None:
                table, key = channels, ch[1]
            else:
                no_recipient.append(kind)
                continue
            if table.get(key, kind) != kind:
                raise TemplateDerivationError(kind, f'the header {msg.header!r} frames both {table[key]} and {kind}')
            table[key] = kind
    if len(channel_markers) > 1:
        raise TemplateDerivationError('tool_calls', f'headers name their channel after different markers '
                                                    f'{channel_markers}')
    if len(set(no_recipient)) > 1:
        raise TemplateDerivationError('reasoning', 'headers with neither a recipient nor a channel frame both '
                                                   'reasoning and content')
    for o, msg in ctx.tool_msgs:
        r = _recipient(msg.header)
        if r is None:
            raise TemplateDerivationError('tool_calls', f'the tool message header {msg.header!r} has no recipient; '
                                                        'only a recipient makes a message a tool channel')
        if r in recipients:
            raise TemplateDerivationError('tool_calls', f'the recipient {r!r} frames both {recipients[r]} and calls')
    if not ends:
        raise TemplateDerivationError('rendering', 'the template ends no message with a <|...|> terminator')
    kwargs: dict[str, Any] = {'ends': tuple(ends), 'start': ctx.start, 'message': ctx.message,
                              'channel': channel_markers[0] if channel_markers else None,
                              'recipients': recipients, 'channels': channels,
                              'no_recipient': no_recipient[0] if no_recipient else 'content', **layout}
    try:
        grammar = ChannelGrammar(**kwargs)
    except ValueError as err:
        raise TemplateDerivationError('tool_calls', f'the recipient-channel family rejects the declaration: {err}') \
            from None
    origin = ctx.tpl.origin
    reasoning = _reasoning_declaration(ctx, ctx.message, reasoning_end or ends[0])
    r_cls = None
    if reasoning is not None:
        r_cls = type('DerivedReasoningParser', (DerivedReasoningParser,), {
            'channel_grammar': grammar, 'reasoning_open_tag': reasoning.open_tag,
            'reasoning_close_tag': reasoning.close_tag, 'open_tag_in_prompt': False,
            '__module__': 'lmparse.templates', '__doc__': f'Derived from the chat template {origin}.'})
    t_cls = type('DerivedChannelToolParser', (ChannelToolParser,), {
        'channel_grammar': grammar, 'request_settings': {'skip_special_tokens': False},
        '__module__': 'lmparse.templates', '__doc__': f'Derived from the chat template {origin}.'})

    def names_in(msg: Message) -> list[str]:
        if grammar.invoke is None:
            return [str(_recipient(msg.header))]
        return re.findall(re.escape(grammar.invoke) + r' name="([^"]*)"', msg.body)

    renderings = _prove(_response_class(r_cls, t_cls), ctx, moved, names_in)
    tools = ToolDeclaration('recipient channels', ChannelToolParser, kwargs)
    return FramedDialect(origin, r_cls, t_cls, reasoning, tools, tuple(ctx.notes), (), ctx.settings, renderings,
                         grammar=grammar)


# ---- python_source ---------------------------------------------------------------------------------

def python_source(dialect: FramedDialect, name: str) -> str:
    """A dialect module declaring a framed dialect (``lmparse derive``): the grammar and its two halves, or the
    Harmony response parser."""
    from lmparse.templates._source import module_header

    prefix, lines = module_header(dialect, name)
    if dialect.response_parser_cls is not None:
        lines += ['from lmparse.harmony import HarmonyResponseParser',
                  'from lmparse.registry import ResponseParserManager', '', '',
                  f'@ResponseParserManager.register_module({name!r})',
                  f'class {prefix}ResponseParser(HarmonyResponseParser):',
                  '    """Harmony: analysis -> reasoning, final / commentary -> content, functions.NAME -> calls."""']
        return '\n'.join(lines) + '\n'
    assert dialect.tools is not None
    const = re.sub(r'[^0-9A-Za-z]+', '_', name).strip('_').upper()
    const = (const if const[:1].isalpha() else 'DERIVED_' + const).rstrip('_') + '_GRAMMAR'
    imports = ['from lmparse.recipient_channels import ChannelGrammar, ChannelToolParser',
               'from lmparse.registry import ReasoningParserManager, ToolParserManager']
    if dialect.reasoning is not None:
        imports.insert(0, 'from lmparse.reasoning import ReasoningParser')
    lines += imports + ['', f'{const} = ChannelGrammar(']
    lines += [f'    {k}={v!r},' for k, v in dialect.tools.attrs.items()]
    lines += [')', '', '',
              f'@ToolParserManager.register_module({name!r})',
              f'class {prefix}ToolParser(ChannelToolParser):',
              '    """Tool calls in the tool-recipient messages the chat template writes."""', '',
              f'    channel_grammar = {const}',
              "    request_settings = {'skip_special_tokens': False}"]
    if dialect.reasoning is not None:
        r = dialect.reasoning
        lines += ['', '',
                  f'@ReasoningParserManager.register_module({name!r})',
                  f'class {prefix}ReasoningParser(ReasoningParser):',
                  '    """The messages whose header frames reasoning."""', '',
                  f'    channel_grammar = {const}',
                  f'    reasoning_open_tag = {r.open_tag!r}',
                  f'    reasoning_close_tag = {r.close_tag!r}',
                  '    open_tag_in_prompt = False', '',
                  '    @classmethod',
                  '    def validate_tokenizer(cls, tokenizer):',
                  '        return None  # derived markers need not be single tokens']
    return '\n'.join(lines) + '\n'
