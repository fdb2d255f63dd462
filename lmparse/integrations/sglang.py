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

Each lmparse-backed detector holds one lmparse response parser for its request:
the reasoning detector one configured with the reasoning dialect only, the tool
detector one configured with the tool dialect only, fed with the reasoning
detector's normal text (SGLang's own split). Composed, they give lmparse's own
result except for a tool block opened inside an unclosed reasoning block, which
lmparse's single router would take out of the reasoning and SGLang's split
leaves in it. lmparse's ``hf`` / ``response_template`` parsers are not
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
    out = []
    for t in tools or ():
        out.append(t.model_dump(exclude_none=True) if hasattr(t, 'model_dump') else dict(t))
    return out


def _build_classes() -> tuple[dict[str, type], dict[str, type]]:
    """name -> lmparse-backed detector class, for tools and for reasoning (built once; imports sglang)."""
    if 'all' in _classes:
        return _classes['all']
    import lmparse
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
    from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector
    from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

    # Read only by FunctionCallParser and the serving layer: one shared empty result. (pydantic's validating
    # constructors, in pydantic-core, are faster here than model_construct, which runs in Python.)
    empty = StreamingParseResult()
    result = StreamingParseResult
    item = ToolCallItem

    class LmparseToolDetector(BaseFormatDetector):
        """A ``FunctionCallParser`` detector over one lmparse tool-only response parser per request.

        ``lmparse_tool`` (class attribute) is the lmparse tool parser name. The
        parser is built at the first chunk, when SGLang first passes the
        request's tools; ``finish`` (SGLang's ``parse_stream_end``) is lmparse's
        ``final=True``.
        """

        lmparse_tool: str = ''
        response_cls: type = object

        def __init__(self) -> None:
            super().__init__()
            tp = lmparse.ToolParserManager.get(self.lmparse_tool)()
            self.bot_token = tp.get_tool_open_tag() or ''
            self._bare = tp.bare_call_open is not None
            self._parser: Any = None
            self._finished = False

        def _new_parser(self, tools: Sequence[Any] | None) -> Any:
            return self.response_cls({'messages': [], 'tools': _tool_dicts(tools)})

        def _convert(self, out: list[Any]) -> Any:
            if not out:
                return empty
            text: list[str] = []
            calls: list[Any] = []
            for msg, _emitted in out:
                if msg.content:
                    text.append(msg.content)
                for d in msg.tool_calls or ():
                    fn = d.function
                    calls.append(item(tool_index=d.index, name=fn.name if fn is not None else None,
                                      parameters=(fn.arguments or '') if fn is not None else ''))
            return result(normal_text=''.join(text), calls=calls)

        def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> Any:
            if self._parser is None:
                self._parser = self._new_parser(tools)
            if self._finished or not new_text:
                return empty
            return self._convert(self._parser.stream_chunk(new_text, ()))

        def finish(self, tools: list[Any]) -> Any:
            if self._parser is None or self._finished:
                return StreamingParseResult()
            self._finished = True
            return self._convert(self._parser.stream_chunk('', (), final=True))

        def detect_and_parse(self, text: str, tools: list[Any]) -> Any:
            content, calls, _ = self._new_parser(tools).parse_complete(text)
            index = self._get_tool_indices(tools)
            items = [ToolCallItem(tool_index=index.get(c.function.name, -1), name=c.function.name,
                                  parameters=c.function.arguments) for c in calls or ()]
            return StreamingParseResult(normal_text=content or '', calls=items)

        def has_tool_call(self, text: str) -> bool:
            # Dialects with bare calls (no open tag) may hold one anywhere the grammar allows: parse to know.
            return (bool(self.bot_token) and self.bot_token in text) or self._bare

        def supports_structural_tag(self) -> bool:
            return False

        def structure_info(self) -> Any:
            raise NotImplementedError('lmparse-backed detectors provide no SGLang structural tags')

    class LmparseReasoningDetector(BaseReasoningFormatDetector):
        """A ``ReasoningParser`` detector over one lmparse reasoning-only response parser per request.

        ``force_reasoning`` (SGLang's decision from the chat template / request)
        says whether the output starts inside reasoning; None keeps the default
        (``sglang_force``: lmparse's dialect for ``lmparse-<name>``, SGLang's own
        detector class in replace mode). ``stream_reasoning=False`` holds
        reasoning until the block closes (SGLang's semantics). Text SGLang's base
        class would hold for tags split across chunks is held by lmparse instead.

        ``sglang_tool_start`` (replace mode: the tag SGLang's own detector has)
        ends an unclosed reasoning block where a tool block opens: the tag and
        everything after it go to normal text for SGLang's tool detector, as
        SGLang's reasoning detectors do.
        """

        lmparse_reasoning: str = ''
        response_cls: dict[Any, type] = {}
        sglang_force: bool | None = None
        sglang_tool_start: str = ''
        sglang_tool_start_at_line_start: bool = False

        def __init__(self, stream_reasoning: bool = True, force_reasoning: bool | None = None,
                     continue_final_message: bool = False, previous_content: str = '',
                     force_nonempty_content: bool = False) -> None:
            rcls = lmparse.ReasoningParserManager.get(self.lmparse_reasoning)
            if force_reasoning is None:
                force_reasoning = self.sglang_force
            super().__init__(rcls.reasoning_open_tag, rcls.reasoning_close_tag,
                             force_reasoning=bool(force_reasoning), stream_reasoning=stream_reasoning,
                             continue_final_message=continue_final_message, previous_content=previous_content,
                             force_nonempty_content=force_nonempty_content)
            # Continuing an assistant message: SGLang's base class read the previous content's tags.
            self._force = self._in_reasoning if continue_final_message else force_reasoning
            self._parser = self.response_cls[self._force]({'messages': []})
            self._held: list[str] = []
            self._done = False
            self._close = rcls.reasoning_close_tag or ''
            # Tool-start scanning (replace mode): on until reasoning ends; after a tool start, text passes through.
            self._scan = bool(self.sglang_tool_start)
            self._entered = False
            self._pending = ''
            self._last = ''
            self._through = False

        def _split(self, out: list[Any]) -> tuple[str, str]:
            reasoning: list[str] = []
            content: list[str] = []
            for msg, _emitted in out:
                if msg.reasoning_content:
                    reasoning.append(msg.reasoning_content)
                if msg.content:
                    content.append(msg.content)
            return ''.join(reasoning), ''.join(content)

        def _result(self, reasoning: str, content: str, final: bool) -> Any:
            self._in_reasoning = not self._through and self._parser.mode == 'reasoning'
            if not self.stream_reasoning:
                if reasoning:
                    self._held.append(reasoning)
                if not (content or final or not self._in_reasoning):
                    return ReasoningResult()
                reasoning, self._held = ''.join(self._held), []
            return ReasoningResult(normal_text=content, reasoning_text=reasoning)

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
            return self._split(self._parser.stream_chunk(text, (), final=final))

        def _scan_chunk(self, text: str) -> tuple[str, str]:
            """Feed ``text``, ending the reasoning where a tool block opens inside it; (reasoning, normal)."""
            buf, self._pending = self._pending + text, ''
            at = self._tool_start(buf, self._last)
            if at >= 0 and self._close and self._close in buf[at:]:
                at = -2  # the block closes in this chunk: SGLang's detectors end it there, not at the tool start
            if at == -2:
                r, c = self._feed(buf)
            elif at >= 0:
                r1, c1 = self._feed(buf[:at])
                if self._parser.mode == 'reasoning':
                    r2, c2 = self._feed('', final=True)
                    self._through, self._scan = True, False
                    return r1 + r2, c1 + c2 + buf[at:]
                r2, c2 = self._feed(buf[at:])
                r, c = r1 + r2, c1 + c2
            else:
                # Hold the longest tail that may still become the tag: the leftmost tag[0] in reach that starts it.
                tag = self.sglang_tool_start
                j = buf.find(tag[0], max(0, len(buf) - len(tag) + 1))
                while j >= 0 and not tag.startswith(buf[j:]):
                    j = buf.find(tag[0], j + 1)
                hold = len(buf) - j if j >= 0 else 0
                r, c = self._feed(buf[:len(buf) - hold])
                if hold and self._parser.mode == 'reasoning':
                    self._pending = buf[len(buf) - hold:]
                elif hold:
                    r2, c2 = self._feed(buf[len(buf) - hold:])
                    r, c = r + r2, c + c2
            if self._parser.mode == 'reasoning':
                self._entered = True
            elif self._entered:
                self._scan = False
            return r, c

        def _parse_streaming_increment_impl(self, new_text: str) -> Any:
            if self._done or not new_text:
                return ReasoningResult()
            if self._through:
                return ReasoningResult(normal_text=new_text)
            if self._scan:
                reasoning, content = self._scan_chunk(new_text)
                return self._result(reasoning, content, self._through)
            reasoning, content = self._split(self._parser.stream_chunk(new_text, ()))
            return self._result(reasoning, content, False)

        def finish(self) -> Any:
            if self._done:
                return ReasoningResult()
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
                text = self._accumulated_reasoning + ret.reasoning_text + ret.normal_text
                self._accumulated_reasoning = ''
                return ReasoningResult(normal_text=text)
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

    tool_names, reasoning_names = _lmparse_names()
    tools: dict[str, type] = {}
    for name in tool_names:
        rcls = lmparse.BaseResponseParser.with_parsers(None, name)
        tools[name] = type(f'LmparseToolDetector[{name}]', (LmparseToolDetector,),
                           {'lmparse_tool': name, 'response_cls': rcls, '__module__': __name__})
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
