"""lmparse inside SGLang 0.5.23: a tool-call detector and a reasoning detector backed by lmparse.

SGLang's OpenAI server (``serving_chat.py``) splits each response between two
parser objects: ``ReasoningParser(name, ...)`` reads every engine delta first
and hands its normal text to ``FunctionCallParser(tools, name)``. Each looks its
detector class up by name in a class-level dict
(``ReasoningParser.DetectorMap``, ``FunctionCallParser.ToolCallParserEnum``);
``--reasoning-parser`` / ``--tool-call-parser`` choices are read from those
dicts once the modules are imported. :func:`register` adds one lmparse-backed
class per lmparse name:

- ``lmparse-<name>`` tool detectors for every lmparse tool parser name
  (``lmparse-qwen3``, ``lmparse-deepseek-v32``, aliases included), and
- ``lmparse-<name>`` reasoning detectors for every lmparse reasoning parser
  name (``lmparse-default``, ``lmparse-qwen3``, ``lmparse-deepseek-v3``...),

and with ``replace=True`` (or ``LMPARSE_SGLANG_REPLACE=1``) points each of
SGLang's own names that lmparse also registers (``qwen``, ``hermes``,
``deepseekv32``, ``glm45``, ``qwen3``...) at the lmparse-backed class.

Replace mode follows SGLang where a user relies on it: the reasoning detector
served under an SGLang name takes that name's defaults from SGLang's own
detector class, read once from its public constructor -- whether output starts
inside reasoning when the serving layer leaves ``force_reasoning`` open, and
its ``tool_start_token``: a tool block opened inside an unclosed reasoning
block ends the reasoning there and goes, tag included, to normal text for the
tool detector (SGLang's detectors do this alone, without a tool parser).
``lmparse-<name>`` keeps lmparse's own defaults. The remaining differences
from SGLang's pinned behaviours, with reasons, are listed in
``tests/integrations/sglang_differences.py``.

Selecting them without editing SGLang:

- installed lmparse: SGLang's general-plugin entry point group
  ``sglang.srt.plugins`` (``pyproject.toml``) runs :func:`register` in every
  SGLang process before the server arguments are parsed, so
  ``sglang serve --tool-call-parser lmparse-qwen3 --reasoning-parser lmparse-qwen3``
  just works (``SGLANG_PLUGINS``, when set, must then list ``lmparse``);
- any checkout: ``python -m lmparse.integrations.sglang ARGS`` registers and
  then runs ``python -m sglang.launch_server ARGS`` in the same process.

One lmparse response parser per request where the split allows: SGLang builds
the request's reasoning detector (telling it a tool parser is active), feeds it
the first chunk, then builds the tool detector; when both are lmparse's they
link (the reasoning detector offers itself through a context variable, i.e. to
the same asyncio task, and holds its first chunk until the tool detector is
built), and the reasoning detector's parser carries both dialects and the
request's tools: it feeds every chunk, and the tool detector hands out that
chunk's calls with exactly the normal text the reasoning detector returned
(otherwise it unlinks and parses what it receives). Linked under
``lmparse-<name>`` names the pair gives lmparse's own result, tool calls inside
reasoning included. Paired with one of SGLang's own detectors (or with no tool
parser), each works alone: a reasoning-only parser whose normal text feeds a
tool-only parser, SGLang's split, under which a tool block opened inside an
unclosed reasoning block stays in the reasoning. SGLang's result objects
(``StreamingParseResult``, ``ToolCallItem``) are built in compiled code
(:mod:`lmparse.integrations.sglang_types`, checked once against their public
constructors). lmparse's ``hf`` / ``response_template`` parsers are not
registered: they need the served tokenizer's ``response_template``, which a
detector never receives. Where SGLang's interface cannot carry what lmparse
produces:

- content and tool-call deltas produced from one engine chunk are returned as
  ``(normal_text, calls)``; the serving layer sends the text first, so within
  one chunk their order is not the model's (the totals are unchanged);
- no structural tags (``supports_structural_tag()`` is False): for
  ``tool_choice="required"`` / strict tools SGLang falls back to its JSON-array
  constraint and parser, as it does for its own detectors without tags;
- whether output starts inside reasoning is SGLang's decision
  (``force_reasoning``, from the chat template or ``reasoning_default``), not
  lmparse's reading of the request's chat template kwargs, which SGLang does
  not hand to reasoning detectors;
- gpt-oss (a response parser owning both channels) is not registered.

``--tool-call-parser lmparse-auto`` / ``--reasoning-parser lmparse-auto`` select the dialect derived
from the served model's chat template (``lmparse.templates``; needs jinja2): :func:`register` sees
the flag in the process arguments and derives it from ``--chat-template FILE`` or the
``--model-path`` folder (``LMPARSE_CHAT_TEMPLATE=FILE`` names another template) before SGLang
starts; a template lmparse cannot derive stops SGLang with the reason.

sglang is imported only by :func:`register`, :func:`detector_classes` and the
launcher; importing this module needs nothing but lmparse.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import Any

__all__ = ['AUTO', 'PREFIX', 'register', 'detector_classes', 'main']

PREFIX = 'lmparse-'

_classes: dict[str, tuple[dict[str, type], dict[str, type]]] = {}

# SGLang names whose format is an lmparse dialect of another name (replace mode): SGLang's llama3
# (Llama32Detector) also reads a bare JSON call, lmparse's llama3_json; its pythonic reads a call list
# after text too, lmparse's pythonic_after_text; its GLM detectors read a quoted number typed number as
# that number, lmparse's glm_quoted_numbers. (Its deepseek-r1 is registered in lmparse's own registry,
# lmparse.reasoning.)
SGLANG_TOOL_NAMES = {'llama3': 'llama3_json', 'pythonic': 'pythonic_after_text', 'glm': 'glm_quoted_numbers',
                     'glm45': 'glm_quoted_numbers', 'glm47': 'glm_quoted_numbers'}
SGLANG_REASONING_NAMES: dict[str, str] = {}


def _lmparse_names() -> tuple[list[str], list[str]]:
    # Not registered: classes the served tokenizer decides (lmparse's hf / response_template), since a
    # detector never receives the tokenizer.
    import lmparse
    from lmparse.registry import needs_tokenizer
    return ([n for n, cls in lmparse.ToolParserManager.module_dict.items() if not needs_tokenizer(cls)],
            [n for n, cls in lmparse.ReasoningParserManager.module_dict.items() if not needs_tokenizer(cls)])


def _tool_dicts(tools: Iterable[Any] | None) -> list[dict[str, Any]]:
    """OpenAI tool dicts for lmparse from SGLang's ``Tool`` models (or dicts).

    Read field by field: pydantic's ``model_dump`` of a tool costs tens of microseconds, per request.
    """
    out = []
    for t in tools or ():
        fn = getattr(t, 'function', None)
        if fn is None or isinstance(t, dict):
            out.append(t.model_dump(exclude_none=True) if hasattr(t, 'model_dump') else dict(t))
            continue
        d: dict[str, Any] = {'name': fn.name}
        for key in ('description', 'parameters', 'strict'):
            value = getattr(fn, key, None)
            if value is not None:
                d[key] = value
        out.append({'type': getattr(t, 'type', None) or 'function', 'function': d})
    return out


def _with_tools(cls: Any, tools: Iterable[Any] | None) -> Any:
    """An lmparse parser of ``cls`` for the request's ``tools``. With SGLang's SGLANG_FORWARD_UNKNOWN_TOOLS
    set, calls to tools the request does not declare are kept (SGLang forwards them), else dropped."""
    parser = cls({'messages': [], 'tools': _tool_dicts(tools)})
    from sglang.srt.environ import envs
    if envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get() and parser.tool_parser is not None:
        parser.tool_parser.keep_undeclared_calls = True
    return parser


# The reasoning detector built last in this context (an asyncio task: one request), offered to the tool
# detector SGLang's serving layer builds right after it for the same choice (see LmparseToolDetector).
_offer: ContextVar[Any] = ContextVar('lmparse_sglang_reasoning_offer', default=None)

_linked_classes: dict[tuple[str, bool | None, str], type] = {}


def _linked_class(reasoning: str, forced: bool | None, tool: str) -> type:
    """lmparse's response parser with the reasoning dialect (starting as SGLang decided) and the tool dialect."""
    key = (reasoning, forced, tool)
    cls = _linked_classes.get(key)
    if cls is None:
        import lmparse
        if forced is None:
            cls = lmparse.BaseResponseParser.with_parsers(reasoning, tool)
        else:
            base = lmparse.ReasoningParserManager.get(reasoning)
            forced_cls = type(f'{base.__name__}Starts{forced}', (base,),
                              {'starts_in_reasoning_mode': (lambda self: True) if forced else (lambda self: False)})
            cls = type(f'Sglang{forced}[{reasoning},{tool}]', (lmparse.BaseResponseParser,),
                       {'reasoning_parser_cls': forced_cls,
                        'tool_parser_cls': lmparse.BaseResponseParser.with_parsers(None, tool).tool_parser_cls})
        _linked_classes[key] = cls
    return cls


def _build_classes() -> tuple[dict[str, type], dict[str, type]]:
    """name -> lmparse-backed detector class, for tools and for reasoning (built once; imports sglang)."""
    if 'all' in _classes:
        return _classes['all']
    import inspect

    import lmparse
    from lmparse.integrations.sglang_types import Results
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
    from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector
    from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

    # SGLang's result objects, built in compiled code (checked once against their constructors).
    results = Results(ReasoningResult, StreamingParseResult, ToolCallItem)
    # Read only by FunctionCallParser and the serving layer: one shared empty result.
    empty = results.result('', [])
    split = results.split
    stream = results.stream
    new_result = results.result
    new_reasoning = results.reasoning

    class LmparseToolDetector(BaseFormatDetector):
        """A ``FunctionCallParser`` detector over lmparse.

        Linked (the request's reasoning detector is lmparse's too, and offered itself when SGLang built it
        with a tool parser active): the two share ONE lmparse response parser with both dialects, fed by the
        reasoning detector; this detector hands out the tool calls of each chunk with the normal text the
        reasoning detector returned for it (checked: the text it receives must be exactly that, else it
        unlinks and parses what it receives itself). Alone: one lmparse tool-only response parser per
        request, fed with the text it receives, built at the first chunk, when SGLang first passes the
        request's tools. ``finish`` (SGLang's ``parse_stream_end``) is lmparse's ``final=True``.
        """

        lmparse_tool: str = ''
        response_cls: type = object
        tool_open_tag: str = ''
        bare: bool = False

        def __init__(self) -> None:
            super().__init__()
            self.bot_token = self.tool_open_tag
            self._parser: Any = None
            self._finished = False
            self._carry: list[Any] = []  # calls the reasoning detector parsed before it unlinked
            self._link: Any = None
            r = _offer.get()
            if r is not None:
                _offer.set(None)
                if r._can_link():
                    r._tool = self
                    self._link = r

        def _new_parser(self, tools: Sequence[Any] | None) -> Any:
            return _with_tools(self.response_cls, tools)

        def _unlink(self) -> None:
            r, self._link = self._link, None
            if r is not None and r._tool is self:
                r._tool = None
                self._carry, r._calls = r._calls, []

        def _own(self, new_text: str, tools: list[Any], final: bool = False) -> Any:
            if self._parser is None:
                self._parser = self._new_parser(tools)
            carry, self._carry = self._carry, []
            if self._finished or (not new_text and not final):
                return new_result('', carry) if carry else empty
            _r, text, calls, _in = stream(self._parser, new_text, final)
            if carry:
                calls = carry + calls
            return new_result(text, calls) if text or calls else empty

        def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> Any:
            r = self._link
            if r is not None:
                if new_text == r._given:
                    r._given = ''
                    if r._parser is None:  # the reasoning detector waited for this link to start
                        held = r._start_linked(tools)
                        if self._link is None:  # the held chunk ended reasoning at a tool start: parse alone
                            return self._own(new_text + held, tools)
                        new_text += held
                    calls = r._calls
                    if not calls:  # a new list: r._calls grows in place with later chunks' calls
                        return new_result(new_text, []) if new_text else empty
                    r._calls = []
                    return new_result(new_text, calls)
                self._unlink()
            return self._own(new_text, tools)

        def finish(self, tools: list[Any]) -> Any:
            r = self._link
            if r is not None:
                if not r._done:  # not SGLang's order (the reasoning detector ends first): end it here
                    end = r.finish()
                    text = r._given
                    r._given = ''
                    calls, r._calls = r._calls, []
                    return new_result(end.reasoning_text + text, calls)
                calls, r._calls = r._calls, []
                return new_result('', calls) if calls else StreamingParseResult()
            if self._parser is None or self._finished:
                return new_result('', self._carry) if self._carry else StreamingParseResult()
            ret = self._own('', tools, final=True)
            self._finished = True
            return ret

        def detect_and_parse(self, text: str, tools: list[Any]) -> Any:
            content, calls, _ = self._new_parser(tools).parse_complete(text)
            index = self._get_tool_indices(tools)
            items = [ToolCallItem(tool_index=index.get(c.function.name, -1), name=c.function.name,
                                  parameters=c.function.arguments) for c in calls or ()]
            return StreamingParseResult(normal_text=content or '', calls=items)

        def has_tool_call(self, text: str) -> bool:
            # Dialects with bare calls (no open tag) may hold one anywhere the grammar allows: parse to know.
            return (bool(self.bot_token) and self.bot_token in text) or self.bare

        def supports_structural_tag(self) -> bool:
            return False

        def structure_info(self) -> Any:
            raise NotImplementedError('lmparse-backed detectors provide no SGLang structural tags')

    class LmparseReasoningDetector(BaseReasoningFormatDetector):
        """A ``ReasoningParser`` detector over one lmparse response parser per request.

        ``force_reasoning`` (SGLang's decision from the chat template / request)
        says whether the output starts inside reasoning; None keeps the default
        (``sglang_force``: lmparse's dialect for ``lmparse-<name>``, SGLang's own
        detector class in replace mode). ``stream_reasoning=False`` holds
        reasoning until the block closes (SGLang's semantics). Text SGLang's base
        class would hold for tags split across chunks is held by lmparse instead.

        With ``tool_call_parser_active`` (SGLang builds a tool parser for the
        request next) it offers itself to that tool detector and holds its first
        chunk until then: linked to an lmparse tool detector, its parser is
        lmparse's with both dialects and the request's tools (the held chunk's
        reasoning comes out with the next chunk's); otherwise (SGLang's own tool
        detector, or none) a reasoning-only parser, started at the next chunk.

        ``sglang_tool_start`` (replace mode: the tag SGLang's own detector has)
        ends an unclosed reasoning block where a tool block opens: the tag and
        everything after it go to normal text for the tool detector (which then
        parses on its own), as SGLang's reasoning detectors do.
        """

        lmparse_reasoning: str = ''
        response_cls: dict[Any, type] = {}
        sglang_force: bool | None = None
        sglang_tool_start: str = ''
        sglang_tool_start_at_line_start: bool = False
        open_tag: str | None = None
        close_tag: str | None = None

        def __init__(self, stream_reasoning: bool = True, force_reasoning: bool | None = None,
                     continue_final_message: bool = False, previous_content: str = '',
                     force_nonempty_content: bool = False, tool_call_parser_active: bool = False) -> None:
            if force_reasoning is None:
                force_reasoning = self.sglang_force
            # SGLang's serving reads reasoning_default from the instance (the base sets it): the class's decides.
            super().__init__(self.open_tag, self.close_tag,
                             force_reasoning=bool(force_reasoning), stream_reasoning=stream_reasoning,
                             continue_final_message=continue_final_message, previous_content=previous_content,
                             reasoning_default=getattr(type(self), 'reasoning_default', 'always'),
                             force_nonempty_content=force_nonempty_content)
            # Continuing an assistant message: SGLang's base class read the previous content's tags.
            self._force = self._in_reasoning if continue_final_message else force_reasoning
            self._parser: Any = None
            self._held: list[str] = []
            self._done = False
            self._close = self.close_tag or ''
            # Tool-start scanning (replace mode): on until reasoning ends; after a tool start, text passes through.
            self._scan = bool(self.sglang_tool_start)
            self._entered = False
            self._pending = ''
            self._last = ''
            self._through = False
            # Linking (see the class docstring).
            self._tool: Any = None      # the linked tool detector
            self._waiting = tool_call_parser_active
            self._deferred = ''         # the first chunk, held until the tool detector is built
            self._given = ''            # normal text returned since the tool detector last took it
            self._calls: list[Any] = []  # tool calls parsed, not yet taken by the tool detector
            self._carried = ''          # reasoning of the held chunk, returned with the next result
            if tool_call_parser_active:
                _offer.set(self)
            else:
                self._parser = self.response_cls[self._force]({'messages': []})

        # -- linking --

        def _can_link(self) -> bool:
            return self._waiting and self._parser is None and self._tool is None and not self._done

        def _start_alone(self) -> None:
            self._waiting = False
            self._parser = self.response_cls[self._force]({'messages': []})
            if self._tool is not None:  # a tool detector linked but never asked: it parses alone
                self._tool._unlink()

        def _start_linked(self, tools: list[Any]) -> str:
            """Build the shared parser (called by the linked tool detector) and parse the held chunk: its
            normal text (for the tool detector to return now); its reasoning waits for the next result."""
            self._waiting = False
            cls = _linked_class(self.lmparse_reasoning, self._force, self._tool.lmparse_tool)
            self._parser = _with_tools(cls, tools)
            held, self._deferred = self._deferred, ''
            if not held:
                return ''
            ret = self._step(held)
            self._carried = ret.reasoning_text
            self._given = ''
            return ret.normal_text

        # -- parsing --

        def _split(self, out: list[Any]) -> tuple[str, str]:
            if not out:
                return '', ''
            reasoning, content, calls = split(out)
            if calls:
                if self._tool is not None:
                    self._calls += calls
                # else: a reasoning-only parser yields none
            return reasoning, content

        def _result(self, reasoning: str, content: str, final: bool) -> Any:
            self._in_reasoning = not self._through and self._parser.mode == 'reasoning'
            if self._carried:
                reasoning, self._carried = self._carried + reasoning, ''
            if not self.stream_reasoning:
                if reasoning:
                    self._held.append(reasoning)
                if not (content or final or not self._in_reasoning):
                    return new_reasoning('', '')
                reasoning, self._held = ''.join(self._held), []
            if content and self._tool is not None:
                self._given += content
            return new_reasoning(content, reasoning)

        def _tool_start(self, text: str, before: str) -> int:
            tag = self.sglang_tool_start
            i = text.find(tag)
            # Some detectors take the tag only where a line starts (mid-sentence it is text).
            while i >= 0 and self.sglang_tool_start_at_line_start and (text[i - 1] if i else before) not in ('', '\n'):
                i = text.find(tag, i + 1)
            return i

        def _feed(self, text: str, final: bool = False) -> tuple[str, str]:
            if not text and not final:
                return '', ''
            if text:
                self._last = text[-1]
            reasoning, content, calls, _r = stream(self._parser, text, final)
            if calls and self._tool is not None:
                self._calls += calls
            return reasoning, content

        def _pass_through(self) -> None:
            """The rest of the output is normal text: a linked tool detector parses it on its own."""
            self._through, self._scan = True, False
            if self._tool is not None:
                self._tool._unlink()

        def _scan_chunk(self, text: str) -> tuple[str, str]:
            """Feed ``text``, ending the reasoning where a tool block opens inside it; (reasoning, normal)."""
            tag = self.sglang_tool_start
            buf = self._pending + text if self._pending else text
            self._pending = ''
            at = self._tool_start(buf, self._last) if tag in buf else -1
            if at >= 0 and self._close and self._close in buf[at:]:
                at = -2  # the block closes in this chunk: SGLang's detectors end it there, not at the tool start
            if at == -2:
                r, c = self._feed(buf)
            elif at >= 0:
                r1, c1 = self._feed(buf[:at])
                if self._parser.mode == 'reasoning':
                    r2, c2 = self._feed('', final=True)
                    if self._tool is not None:
                        self._given += c1 + c2  # what the tool detector already knows of
                        self._pass_through()
                        self._given = ''
                    else:
                        self._pass_through()
                    return r1 + r2, c1 + c2 + buf[at:]
                r2, c2 = self._feed(buf[at:])
                r, c = r1 + r2, c1 + c2
            else:
                # Hold the longest tail that may still become the tag: the leftmost tag[0] in reach that starts it.
                j = buf.find(tag[0], max(0, len(buf) - len(tag) + 1))
                while j >= 0 and not tag.startswith(buf[j:]):
                    j = buf.find(tag[0], j + 1)
                if j < 0:
                    r, c = self._feed(buf)
                else:
                    r, c = self._feed(buf[:j])
                    if self._parser.mode == 'reasoning':
                        self._pending = buf[j:]
                    else:
                        r2, c2 = self._feed(buf[j:])
                        r, c = r + r2, c + c2
            if self._parser.mode == 'reasoning':
                self._entered = True
            elif self._entered:
                self._scan = False
            return r, c

        def _step(self, new_text: str) -> Any:
            if self._through:
                return new_reasoning(new_text, '')
            if self._scan:
                reasoning, content = self._scan_chunk(new_text)
                return self._result(reasoning, content, self._through)
            reasoning, content = self._feed(new_text)
            return self._result(reasoning, content, False)

        def parse_streaming_increment(self, new_text: str) -> Any:
            parser = self._parser
            # The common chunk, inline: started, streaming, nothing held, no possible tool start in it.
            if (parser is not None and new_text and not self._done and not self._through and not self._pending
                    and not self._carried and self.stream_reasoning and not self._force_nonempty_content
                    and not (self._scan and self.sglang_tool_start[0] in new_text)):
                reasoning, content, calls, in_reasoning = stream(parser, new_text)
                self._last = new_text[-1]
                self._in_reasoning = in_reasoning
                if self._scan:
                    if in_reasoning:
                        self._entered = True
                    elif self._entered:
                        self._scan = False
                if self._tool is not None:
                    if calls:
                        self._calls += calls
                    if content:
                        self._given += content
                return new_reasoning(content, reasoning)
            if self._force_nonempty_content:
                return super().parse_streaming_increment(new_text)
            return self._parse_streaming_increment_impl(new_text)

        def _parse_streaming_increment_impl(self, new_text: str) -> Any:
            if self._parser is None:
                if self._waiting and self._tool is None and not self._deferred:
                    if new_text:
                        self._deferred = new_text  # held until the tool detector is built (linking)
                    return new_reasoning('', '')
                if self._parser is None:
                    self._start_alone()
                    new_text, self._deferred = self._deferred + new_text, ''
            if self._done or not new_text:
                if self._carried:
                    return self._result('', '', False)
                return new_reasoning('', '')
            return self._step(new_text)

        def finish(self) -> Any:
            if self._done:
                return new_reasoning('', '')
            if self._parser is None:  # the stream ended with the held chunk, before any tool detector
                self._start_alone()
                held, self._deferred = self._deferred, ''
                if held:
                    first = self._step(held)
                    end = self.finish()
                    return new_reasoning(first.normal_text + end.normal_text,
                                         first.reasoning_text + end.reasoning_text)
            self._done = True
            if self._through:
                reasoning = content = ''
            else:
                pending, self._pending = self._pending, ''
                reasoning, content = self._feed(pending)
                r2, c2 = self._feed('', final=True)
                reasoning, content = reasoning + r2, content + c2
            ret = self._result(reasoning, content, True)
            if self._force_nonempty_content:
                moved = self._accumulated_reasoning + ret.reasoning_text
                self._accumulated_reasoning = ''
                if self._tool is not None:
                    self._given += moved  # normal text now, for the linked tool detector too
                return new_reasoning(moved + ret.normal_text, '')
            return ret

        def _detect_and_parse_impl(self, text: str) -> Any:
            parser = self.response_cls[self._force]({'messages': []})
            if self.sglang_tool_start and not (self._close and self._close in text):
                at = self._tool_start(text, '')
                if at >= 0:
                    out = parser.stream_chunk(text[:at], ()) if at else []
                    if parser.mode == 'reasoning':
                        reasoning, content = self._split(out + parser.stream_chunk('', (), final=True))
                        return ReasoningResult(normal_text=content + text[at:], reasoning_text=reasoning)
                    parser = self.response_cls[self._force]({'messages': []})
            content, _calls, reasoning = parser.parse_complete(text)
            return ReasoningResult(normal_text=content or '', reasoning_text=reasoning or '')

    # SGLang reads each detector class's constructor signature per request (inspect.signature): computed once.
    LmparseToolDetector.__signature__ = inspect.signature(LmparseToolDetector)  # type: ignore[attr-defined]
    LmparseReasoningDetector.__signature__ = inspect.signature(LmparseReasoningDetector)  # type: ignore[attr-defined]

    tool_names, reasoning_names = _lmparse_names()
    tools: dict[str, type] = {}
    for name in tool_names:
        rcls = lmparse.BaseResponseParser.with_parsers(None, name)
        tp = lmparse.ToolParserManager.get(name)()
        tools[name] = type(f'LmparseToolDetector[{name}]', (LmparseToolDetector,),
                           {'lmparse_tool': name, 'response_cls': rcls, '__module__': __name__,
                            'tool_open_tag': tp.get_tool_open_tag() or '', 'bare': tp.bare_call_open is not None})
    reasoning: dict[str, type] = {}
    for name in reasoning_names:
        base = lmparse.ReasoningParserManager.get(name)
        variants: dict[Any, type] = {None: lmparse.BaseResponseParser.with_parsers(name, None)}
        for forced in (True, False):
            # The same dialect, starting inside reasoning or not as SGLang decided.
            forced_cls = type(f'{base.__name__}Starts{forced}', (base,),
                              {'starts_in_reasoning_mode': (lambda self: True) if forced else (lambda self: False)})
            variants[forced] = type(f'Sglang{forced}', (lmparse.BaseResponseParser,),
                                    {'reasoning_parser_cls': forced_cls, 'tool_parser_cls': None})
        reasoning[name] = type(f'LmparseReasoningDetector[{name}]', (LmparseReasoningDetector,),
                               {'lmparse_reasoning': name, 'response_cls': variants, '__module__': __name__,
                                'open_tag': base.reasoning_open_tag, 'close_tag': base.reasoning_close_tag,
                                # the base's reasoning_default: forced by default only where lmparse starts in it
                                'reasoning_default': 'always' if variants[None]({'messages': []}).reasoning_enabled
                                else None})
    _classes['all'] = (tools, reasoning)
    return tools, reasoning


def detector_classes() -> tuple[dict[str, type], dict[str, type]]:
    """(lmparse tool name -> SGLang detector class, lmparse reasoning name -> SGLang reasoning detector class)."""
    return _build_classes()


# ---- lmparse-auto: the dialect derived from the served model's chat template (lmparse.templates) ----

AUTO = PREFIX + 'auto'


def _arg(argv: Sequence[str], *flags: str) -> str | None:
    for i, arg in enumerate(argv):
        for flag in flags:
            if arg == flag and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(flag + '='):
                return arg[len(flag) + 1:]
    return None


def _auto_source(argv: Sequence[str]) -> Any:
    """The served model's chat template as SGLang's arguments name it: ``--chat-template FILE``, else the
    ``--model-path`` folder (a Hub id: its tokenizer files, fetched with huggingface_hub)."""
    template = _arg(argv, '--chat-template')
    if template and os.path.isfile(template):
        return template
    model = _arg(argv, '--model-path', '--model', '--tokenizer-path')
    if model is None:
        raise ValueError('no --model-path to read the chat template from (or set LMPARSE_CHAT_TEMPLATE=FILE)')
    if os.path.isdir(model):
        return model
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise ValueError(f'{model!r} is not a local folder and huggingface_hub is not installed '
                         '(or set LMPARSE_CHAT_TEMPLATE=FILE)') from None
    return snapshot_download(model, allow_patterns=['tokenizer_config.json', 'chat_template.jinja',
                                                    'chat_template.json'])


def _register_auto(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """Derive the served model's dialect when ``lmparse-auto`` is selected (at start-up: a template lmparse
    cannot derive stops SGLang with the reason); its lmparse names, registered before the detectors are built."""
    if not any(arg == AUTO or arg.endswith('=' + AUTO) for arg in argv):
        return None, None
    from lmparse.templates import TemplateDerivationError, register_derived

    try:
        source = os.environ.get('LMPARSE_CHAT_TEMPLATE') or _auto_source(argv)
        return register_derived(source)
    except (TemplateDerivationError, ImportError, ValueError, OSError) as err:
        raise SystemExit(f'{AUTO}: {err}') from None


def register(replace: bool | None = None) -> list[str]:
    """Add ``lmparse-<name>`` detectors to SGLang's registries; with ``replace``, also take over SGLang's names.

    ``replace`` defaults to the environment variable ``LMPARSE_SGLANG_REPLACE=1``.
    Idempotent. Returns the SGLang names that now resolve to lmparse.
    The entry point ``sglang.srt.plugins: lmparse`` calls it with no argument.
    """
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    if replace is None:
        replace = os.environ.get('LMPARSE_SGLANG_REPLACE', '') == '1'
    auto_reasoning, auto_tool = _register_auto(sys.argv)
    if auto_reasoning or auto_tool:
        _classes.pop('all', None)  # built again with the derived names
    tools, reasoning = _build_classes()
    names = []
    if auto_tool is not None:
        FunctionCallParser.ToolCallParserEnum[AUTO] = tools[auto_tool]
        names.append(AUTO)
    if auto_reasoning is not None:
        ReasoningParser.DetectorMap[AUTO] = reasoning[auto_reasoning]
        names.append(AUTO)
    for name, cls in tools.items():
        FunctionCallParser.ToolCallParserEnum[PREFIX + name] = cls
        names.append(PREFIX + name)
    for name, cls in reasoning.items():
        ReasoningParser.DetectorMap[PREFIX + name] = cls
        names.append(PREFIX + name)
    if replace:
        for own in list(FunctionCallParser.ToolCallParserEnum):
            ours = SGLANG_TOOL_NAMES.get(own, own)
            if ours in tools and not own.startswith(PREFIX):
                FunctionCallParser.ToolCallParserEnum[own] = tools[ours]
                names.append(own)
        for own in list(ReasoningParser.DetectorMap):
            ours = SGLANG_REASONING_NAMES.get(own, own)
            if ours in reasoning and not own.startswith(PREFIX):
                engine = ReasoningParser.DetectorMap[own]
                ReasoningParser.DetectorMap[own] = _follow_engine(own, reasoning[ours], engine)
                names.append(own)
    return names


_followers: dict[tuple[str, type], type] = {}


def _follow_engine(name: str, ours: type, engine: type) -> type:
    """The lmparse detector served under SGLang's reasoning name ``name`` in replace mode: where SGLang's own
    detector class decides, the same defaults -- whether output starts inside reasoning when the serving layer
    leaves it open, and the tag that ends an unclosed reasoning block when a tool block opens in it
    (``tool_start_token``, sent on to the tool detector as normal text). ``lmparse-<name>`` keeps lmparse's."""
    import lmparse

    if getattr(engine, 'lmparse_reasoning', None):  # already ours (register called again)
        return engine
    if (name, ours) in _followers:
        return _followers[name, ours]
    try:
        own = engine()  # SGLang's defaults, read once from its public constructor
    except Exception:  # a detector that needs the served tokenizer: lmparse's defaults
        return ours
    rcls = lmparse.ReasoningParserManager.get(getattr(ours, 'lmparse_reasoning'))
    # SGLang's tool start only where its markers are lmparse's (hunyuan's come from the served tokenizer).
    same = (getattr(own, 'think_start_token', None), getattr(own, 'think_end_token', None)) == \
        (rcls.reasoning_open_tag, rcls.reasoning_close_tag)
    attrs = {'__module__': __name__,
             'sglang_force': bool(getattr(own, 'force_reasoning', False)),
             'sglang_tool_start': (getattr(own, 'tool_start_token', None) or '') if same else '',
             'sglang_tool_start_at_line_start': bool(getattr(own, 'tool_start_at_line_start', False)),
             'reasoning_default': getattr(own, 'reasoning_default', getattr(ours, 'reasoning_default'))}
    cls = _followers[name, ours] = type(f'{ours.__name__}[sglang:{name}]', (ours,), attrs)
    return cls


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m lmparse.integrations.sglang ARGS``: register, then ``python -m sglang.launch_server ARGS``."""
    import runpy

    args = list(sys.argv[1:] if argv is None else argv)
    register()
    sys.argv = ['sglang.launch_server'] + args
    runpy.run_module('sglang.launch_server', run_name='__main__', alter_sys=True)


if __name__ == '__main__':
    main()
