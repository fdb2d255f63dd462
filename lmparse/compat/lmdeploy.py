"""Drop-in swap of LMDeploy 0.18's Python parsers (``lmdeploy.serve.parsers``) for lmparse.

``install()`` puts lmparse-backed modules in ``sys.modules`` under every import
path LMDeploy 0.18 has below ``lmdeploy.serve.parsers``; they expose the same
public names (managers, classes, ``validate_parser_names``, ``dump_tools``...)
and the same registered names. Everything LMDeploy code receives from a
response parser (``DeltaMessage``, ``DeltaToolCall``, ``DeltaFunctionCall``,
``ToolCall``, ``FunctionCall``, the adjusted request) is LMDeploy's own
pydantic type, built with ``model_construct`` (no validation: the values come
from lmparse and are already well typed). ``uninstall()`` restores LMDeploy's
modules.

Semantics kept from LMDeploy (its server relies on them):

* ``Registry.get(name)`` returns ``None`` for an unknown name (mmengine);
  ``api_server.set_parsers`` checks for it.
* ``BaseResponseParser.set_parsers(r, t, tokenizer)`` leaves a slot unchanged
  when its name is ``None`` (lmparse's own ``set_parsers`` clears it) and
  always replaces the tokenizer.

Deliberate differences are listed in the README ("LMDeploy drop-in").
"""
from __future__ import annotations

import importlib
import logging
import sys
import threading
import types
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

import lmparse
from lmparse import request as _req
from lmparse.compat import lmdeploy_modules as _names
from lmparse.compat.lmdeploy_types import SwappedStream
from lmparse.registry import LEGACY_REASONING_PARSER_NAMES, Registry, UnknownParserError, for_tokenizer
from lmparse.structural_tags import internlm2_required_response_format

__all__ = [
    'LMDEPLOY_MODULES',
    'LMDEPLOY_VERSION',
    'LmdeployBaseResponseParser',
    'LmdeployGptOssResponseParser',
    'LmdeployInternlm2ToolParser',
    'LmdeployRegistry',
    'install',
    'installed',
    'internlm2_required_response_format',
    'main',
    'uninstall',
]

logger = logging.getLogger('lmparse')

LMDEPLOY_VERSION = '0.18.0'
_ROOT = 'lmdeploy.serve.parsers'
_TOOL = _ROOT + '.tool_parser'
_REASONING = _ROOT + '.reasoning_parser'

# Every module LMDeploy 0.18 has below lmdeploy.serve.parsers, parents first.
LMDEPLOY_MODULES: tuple[str, ...] = (
    _ROOT,
    _ROOT + '.response_parser',
    _REASONING,
    _REASONING + '.reasoning_parser',
    _REASONING + '.deepseek_v3_reasoning_parser',
    _REASONING + '.deepseek_v32_reasoning_parser',
    _REASONING + '.deepseek_v4_reasoning_parser',
    _TOOL,
    _TOOL + '.tool_parser',
    _TOOL + '.json_tool_parser',
    _TOOL + '.json_value_scanner',
    _TOOL + '.xml_tool_parser',
    _TOOL + '.qwen3_tool_parser',
    _TOOL + '.internlm2_tool_parser',
    _TOOL + '.llama3_tool_parser',
    _TOOL + '.qwen3coder_tool_parser',
    _TOOL + '.interns2preview_tool_parser',
    _TOOL + '.glm47_tool_parser',
    _TOOL + '.kimi_k2_tool_parser',
    _TOOL + '.deepseek_v32_tool_parser',
    _TOOL + '.deepseek_v4_tool_parser',
    _ROOT + '.gpt_oss_response_parser',
    # Private, but LMDeploy's gpt_oss_response_parser imports it: swapped so a
    # stray import cannot load LMDeploy's Harmony parser into our registry.
    _ROOT + '._openai_harmony',
)

JsonParsePhase = _names.JsonParsePhase
XmlParsePhase = _names.XmlParsePhase


# ---------------------------------------------------------------------------
# registries with mmengine semantics
# ---------------------------------------------------------------------------

class LmdeployRegistry(Registry):
    """lmparse's Registry with mmengine's ``get``: ``None`` for an unknown name.

    ``api_server.set_parsers`` relies on ``get`` returning None. Unlike
    mmengine, a dotted name such as ``'deepseek-v3.2'`` resolves to the class
    registered under it (mmengine splits it into a scope and returns None).
    """

    def get(self, name: str) -> Any:
        try:
            return self._module_dict.get(name)
        except TypeError:  # unhashable name
            return None


ResponseParserManager = LmdeployRegistry('response_parser')
ReasoningParserManager = LmdeployRegistry('reasoning_parser')
ToolParserManager = LmdeployRegistry('tool_parser')


def validate_parser_names(
    reasoning_parser_name: str | None = None,
    tool_parser_name: str | None = None,
    *,
    warn_legacy: bool = True,
) -> tuple[str | None, str | None]:
    """LMDeploy's name check against the swapped registries.

    Legacy reasoning names map to ``'default'``; an unknown name raises
    :class:`lmparse.registry.UnknownParserError` (a ``ValueError``, as in LMDeploy)
    with LMDeploy's message text.
    """
    if reasoning_parser_name in LEGACY_REASONING_PARSER_NAMES:
        if warn_legacy:
            logging.getLogger('lmdeploy').warning(
                'The reasoning parser %s is deprecated, please use the default reasoning parser instead.',
                reasoning_parser_name)
        reasoning_parser_name = 'default'
    for kind, name, manager in (('reasoning', reasoning_parser_name, ReasoningParserManager),
                                ('tool', tool_parser_name, ToolParserManager)):
        if name is not None and name not in manager:
            # LMDeploy's message, word for word (the name unquoted, then the dict_keys).
            raise UnknownParserError(f'The {kind} parser {name} is not in the parser list: '
                                     f'{manager.module_dict.keys()}',
                                     name=name, registry=manager.name, known=manager.names())
    return reasoning_parser_name, tool_parser_name


# ---------------------------------------------------------------------------
# lmparse -> LMDeploy pydantic conversion (compiled: lmparse.compat.lmdeploy_types)
# ---------------------------------------------------------------------------

class _Protocol:
    """LMDeploy's pydantic types and the compiled converter to them."""

    def __init__(self, module: Any) -> None:
        from lmparse.compat.lmdeploy_types import Converter

        self.module = module
        self.DeltaMessage: Any = module.DeltaMessage
        self.DeltaToolCall: Any = module.DeltaToolCall
        self.DeltaFunctionCall: Any = module.DeltaFunctionCall
        self.ToolCall: Any = module.ToolCall
        self.FunctionCall: Any = module.FunctionCall
        self.ChatCompletionRequest: Any = module.ChatCompletionRequest
        # Instance state as model_construct sets it, checked against it once here.
        self.converter = Converter(module)
        self.pairs: Callable[[list[tuple[Any, bool]]], list[tuple[Any, bool]]] = self.converter.pairs
        self.complete: Callable[[tuple[Any, Any, Any]], tuple[Any, Any, Any]] = self.converter.complete
        self.message: Callable[[Any], Any] = self.converter.message
        self.tool_call: Callable[[Any], Any] = self.converter.tool_call
        # Compiled request adjustment at construction, checked against the Python path once here.
        from lmparse.compat.lmdeploy_request import LmdeployRequests

        self.requests = LmdeployRequests(module)
        if self.requests.fast:
            _req.register_request_adapter(self.ChatCompletionRequest, self.requests)


_PROTOCOL: _Protocol | None = None


def _protocol() -> _Protocol:
    global _PROTOCOL
    if _PROTOCOL is None:
        try:
            module = importlib.import_module('lmdeploy.serve.openai.protocol')
        except ImportError as err:
            raise ImportError('lmparse.compat.lmdeploy needs LMDeploy (lmdeploy==0.18.x): '
                              f'cannot import lmdeploy.serve.openai.protocol ({err})') from err
        _PROTOCOL = _Protocol(module)
    return _PROTOCOL


# lmparse's own InternLM2 parser carries LMDeploy's custom required-call structural tag.
LmdeployInternlm2ToolParser = lmparse.Internlm2ToolParser


# ---------------------------------------------------------------------------
# response parsers (LMDeploy-facing wrappers around lmparse's compiled ones)
# ---------------------------------------------------------------------------

ResponseParser = lmparse.ResponseParser


class _WrappedParser(SwappedStream, ResponseParser):
    """Forwards to one lmparse parser and converts its output to LMDeploy's types.

    ``stream_chunk`` / ``parse_complete`` are compiled (``SwappedStream``).
    """

    def __getattr__(self, name: str) -> Any:
        # Only for attributes not defined here (mode, _pending, enable_thinking...).
        return getattr(self._inner, name)

    @property
    def request(self) -> Any:
        return self._inner.request

    @request.setter
    def request(self, value: Any) -> None:
        self._inner.request = value

    @property
    def tool_parser(self) -> Any:
        return self._inner.tool_parser

    @property
    def reasoning_tokens(self) -> int | None:
        result: int | None = self._inner.reasoning_tokens
        return result

    @reasoning_tokens.setter
    def reasoning_tokens(self, value: int | None) -> None:
        self._inner.reasoning_tokens = value

    def _wrap(self, inner: Any) -> None:
        self._attach(inner, (_PROTOCOL or _protocol()).converter)


_INNER_LOCK = threading.Lock()


def _validate_tokenizer(rcls: Any, tokenizer: Any) -> None:
    """lmparse's tag check, raising with LMDeploy's message text."""
    try:
        rcls.validate_tokenizer(tokenizer)
    except RuntimeError as err:
        vocab = tokenizer.get_vocab()
        missing = [tag for tag in (rcls.reasoning_open_token or rcls.get_reasoning_open_tag(),
                                   rcls.get_reasoning_close_tag()) if tag not in vocab]
        raise RuntimeError(f'{rcls.__name__} reasoning parser could not get reasoning tokens '
                           f'from the tokenizer: {missing!r}') from err


class LmdeployBaseResponseParser(_WrappedParser):
    """LMDeploy's ``BaseResponseParser`` backed by :class:`lmparse.BaseResponseParser`.

    Configured process-wide through class attributes, as in LMDeploy
    (``reasoning_parser_cls``, ``tool_parser_cls``, ``tokenizer``); assigning
    them directly works too. One lmparse class per configuration is built and
    cached, so constructing a parser costs a few attribute reads.
    """

    reasoning_parser_cls: ClassVar[Any] = None
    tool_parser_cls: ClassVar[Any] = None
    tokenizer: ClassVar[Any] = None
    supports_required_tool_choice: ClassVar[bool] = True
    MODE_PLAIN: ClassVar[str] = 'plain'
    MODE_REASONING: ClassVar[str] = 'reasoning'
    MODE_TOOL: ClassVar[str] = 'tool'
    # (reasoning cls, tool cls, tokenizer, lmparse class) per wrapper class
    _inner_cache: ClassVar[dict[type, tuple[Any, Any, Any, type]]] = {}

    def __init__(self, request: Any) -> None:
        cls = type(self)
        rcls, tcls, tok = cls.reasoning_parser_cls, cls.tool_parser_cls, cls.tokenizer
        entry = self._inner_cache.get(cls)
        if entry is None or entry[0] is not rcls or entry[1] is not tcls or entry[2] is not tok:
            entry = cls._build_inner(rcls, tcls, tok)
        self._wrap(entry[3](request))

    @classmethod
    def _build_inner(cls, rcls: Any, tcls: Any, tok: Any) -> tuple[Any, Any, Any, type]:
        attrs: dict[str, Any] = {'reasoning_parser_cls': rcls, 'tool_parser_cls': tcls, 'tokenizer': tok,
                                 '__module__': __name__}
        if any('chat_template_kwargs_from_request' in k.__dict__ for k in cls.__mro__
               if k is not LmdeployBaseResponseParser and issubclass(k, LmdeployBaseResponseParser)):
            # A user subclass overrides the hook: route lmparse's call to it.
            outer = cls

            def kwargs_hook(_inner_cls: type, request: Any) -> Any:
                return outer.chat_template_kwargs_from_request(request)
            attrs['chat_template_kwargs_from_request'] = classmethod(kwargs_hook)
        name = f'{cls.__name__}[lmparse]'
        attrs['__qualname__'] = name
        inner = type(name, (lmparse.BaseResponseParser,), attrs)
        entry = (rcls, tcls, tok, inner)
        with _INNER_LOCK:
            cls._inner_cache[cls] = entry
        return entry

    @classmethod
    def set_parsers(cls, reasoning_parser_name: str | None = None, tool_parser_name: str | None = None,
                    tokenizer: Any = None) -> None:
        """Configure by registry name with LMDeploy's semantics: a ``None`` name keeps its slot."""
        reasoning_parser_name, tool_parser_name = validate_parser_names(reasoning_parser_name, tool_parser_name)
        cls.tokenizer = tokenizer
        if reasoning_parser_name is not None:
            cls.reasoning_parser_cls = for_tokenizer(ReasoningParserManager.get(reasoning_parser_name), tokenizer)
            if tokenizer is not None:
                _validate_tokenizer(cls.reasoning_parser_cls, tokenizer)
        if tool_parser_name is not None:
            cls.tool_parser_cls = for_tokenizer(ToolParserManager.get(tool_parser_name), tokenizer)

    @classmethod
    def chat_template_kwargs_from_request(cls, request: Any) -> dict[str, Any]:
        return _req.chat_template_kwargs_from_request(request)

    @property
    def reasoning_parser(self) -> Any:
        return self._inner.reasoning_parser


class LmdeployGptOssResponseParser(_WrappedParser):
    """LMDeploy's ``gpt-oss`` response parser backed by lmparse's Harmony parser.

    Needs neither ``openai_harmony`` nor its vocabulary download.
    """

    tool_parser_cls: ClassVar[Any] = lmparse.HarmonyToolParser
    reasoning_parser_cls: ClassVar[Any] = None
    tokenizer: ClassVar[Any] = None
    # How Harmony special tokens arrive: 'auto', 'text' or 'ids' (see lmparse.GptOssResponseParser).
    input_mode: ClassVar[Literal['auto', 'text', 'ids']] = 'auto'
    supports_required_tool_choice: ClassVar[bool] = True
    _inner_cache: ClassVar[dict[type, tuple[Any, str, type]]] = {}

    def __init__(self, request: Any) -> None:
        cls = type(self)
        tok, mode = cls.tokenizer, cls.input_mode
        entry = self._inner_cache.get(cls)
        if entry is None or entry[0] is not tok or entry[1] != mode:
            name = f'{cls.__name__}[lmparse]'
            inner_cls = type(name, (lmparse.GptOssResponseParser,),
                             {'tokenizer': tok, 'input_mode': mode, '__module__': __name__, '__qualname__': name})
            entry = (tok, mode, inner_cls)
            with _INNER_LOCK:
                cls._inner_cache[cls] = entry
        self._wrap(entry[2](request))

    @classmethod
    def set_parsers(cls, reasoning_parser_name: str | None = None, tool_parser_name: str | None = None,
                    tokenizer: Any = None) -> None:
        """Harmony parses its own channels: names are ignored, the tokenizer is kept."""
        cls.tokenizer = tokenizer


# ---------------------------------------------------------------------------
# the swapped modules
# ---------------------------------------------------------------------------

def _populate_registries() -> None:
    """Fill the swapped registries from lmparse's (same names, LMDeploy-facing classes)."""
    from lmparse.registry import ReasoningParserManager as LpReasoning
    from lmparse.registry import ToolParserManager as LpTools

    for name, cls in LpReasoning.module_dict.items():
        ReasoningParserManager.module_dict.setdefault(name, cls)
    for name, cls in LpTools.module_dict.items():
        if cls is lmparse.Internlm2ToolParser:
            cls = LmdeployInternlm2ToolParser
        ToolParserManager.module_dict.setdefault(name, cls)
    ResponseParserManager.module_dict.setdefault('default', LmdeployBaseResponseParser)
    ResponseParserManager.module_dict.setdefault('gpt-oss', LmdeployGptOssResponseParser)


# The registries work without install() too (the classes can be used directly).
_populate_registries()


class _SwapState:
    """What install() replaced, so uninstall() can put it back."""

    def __init__(self) -> None:
        self.modules: dict[str, types.ModuleType | None] = {}  # name -> original (None: was not imported)
        self.parent_attrs: list[tuple[types.ModuleType, str, Any, bool]] = []  # (parent, attr, old, had)
        self.rebound: list[tuple[dict[str, Any], str, Any, Any]] = []  # (globals, name, old, new)
        self.swapped: dict[str, types.ModuleType] = {}


_STATE: _SwapState | None = None
_LOCK = threading.RLock()


def installed() -> bool:
    """Whether the swap is active."""
    return _STATE is not None


def _build_modules(p: _Protocol) -> dict[str, types.ModuleType]:
    spaces = _names.namespaces(p, {
        'BaseResponseParser': LmdeployBaseResponseParser, 'GptOssResponseParser': LmdeployGptOssResponseParser,
        'Internlm2ToolParser': LmdeployInternlm2ToolParser, 'Registry': LmdeployRegistry,
        'ResponseParserManager': ResponseParserManager, 'ReasoningParserManager': ReasoningParserManager,
        'ToolParserManager': ToolParserManager, 'validate_parser_names': validate_parser_names})
    modules: dict[str, types.ModuleType] = {}
    for name in LMDEPLOY_MODULES:
        mod = types.ModuleType(name, f'lmparse-backed replacement for LMDeploy 0.18\'s {name}.')
        mod.__dict__.update(spaces[name])
        if name in _names.LMDEPLOY_ALL:  # LMDeploy's other modules have no __all__
            mod.__dict__['__all__'] = list(_names.LMDEPLOY_ALL[name])
        mod.__dict__['__lmparse_swapped__'] = True
        if name in (_ROOT, _TOOL, _REASONING):
            mod.__path__ = []  # a package, but with no importable files: unknown submodules fail cleanly
            mod.__package__ = name
        else:
            mod.__package__ = name.rpartition('.')[0]
        modules[name] = mod
    for name, mod in modules.items():
        parent, _, attr = name.rpartition('.')
        if parent in modules:
            setattr(modules[parent], attr, mod)
    return modules


def install() -> None:
    """Swap ``lmdeploy.serve.parsers`` (and every submodule) for lmparse-backed modules.

    Idempotent. Works before or after LMDeploy's parser modules were imported:

    * before: LMDeploy's parser modules are never imported;
    * after: ``sys.modules`` entries and the ``parsers`` attribute of
      ``lmdeploy.serve`` are replaced, and every module-level name in an
      already imported ``lmdeploy.*`` module that refers to one of LMDeploy's
      parser objects (e.g. ``from lmdeploy.serve.parsers import
      ResponseParserManager``) is rebound to its replacement. Not swapped:
      references held elsewhere (parser classes already stored, e.g. a running
      server's ``server_context.response_parser_cls``, parser instances alive,
      subclasses of LMDeploy's classes, objects captured in closures or
      non-``lmdeploy`` modules), and LMDeploy's original module objects
      themselves stay unchanged for whoever still holds them.
    """
    global _STATE
    with _LOCK:
        if _STATE is not None:
            return
        p = _protocol()
        _populate_registries()
        modules = _build_modules(p)
        state = _SwapState()
        state.swapped = modules
        originals: dict[int, Any] = {}
        for name in LMDEPLOY_MODULES:
            old = sys.modules.get(name)
            state.modules[name] = old
            if old is not None:
                new_space = modules[name].__dict__
                for attr, value in list(vars(old).items()):
                    if attr.startswith('_') or isinstance(value, types.ModuleType):
                        continue
                    if attr in new_space and new_space[attr] is not value:
                        originals.setdefault(id(value), (value, new_space[attr]))
        for name in LMDEPLOY_MODULES:
            sys.modules[name] = modules[name]
        serve = sys.modules.get('lmdeploy.serve')
        if serve is not None:
            state.parent_attrs.append((serve, 'parsers', getattr(serve, 'parsers', None), hasattr(serve, 'parsers')))
            serve.parsers = modules[_ROOT]  # type: ignore[attr-defined]
        if originals:
            _rebind(state, originals)
        _STATE = state
        logger.debug('lmparse: LMDeploy parsers swapped (%d modules, %d references rebound)',
                     len(modules), len(state.rebound))


def _rebind(state: _SwapState, originals: dict[int, tuple[Any, Any]]) -> None:
    """Rebind module globals of imported ``lmdeploy.*`` modules that hold LMDeploy parser objects."""
    swapped_names = set(LMDEPLOY_MODULES)
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == 'lmdeploy' or mod_name.startswith('lmdeploy.')):
            continue
        if mod_name in swapped_names or mod_name.startswith(_ROOT + '.') or mod_name == _ROOT:
            continue  # LMDeploy's own parser modules stay as they are (they are out of sys.modules now)
        space = getattr(mod, '__dict__', None)
        if not isinstance(space, dict):
            continue
        for attr, value in list(space.items()):
            hit = originals.get(id(value))
            if hit is not None and hit[0] is value:
                space[attr] = hit[1]
                state.rebound.append((space, attr, value, hit[1]))


def uninstall() -> None:
    """Undo :func:`install`: LMDeploy's modules (or their absence) come back. Idempotent."""
    global _STATE
    with _LOCK:
        state = _STATE
        if state is None:
            return
        for name, old in state.modules.items():
            if sys.modules.get(name) is not state.swapped[name]:
                continue  # replaced by someone else since: leave it
            if old is None:
                del sys.modules[name]
            else:
                sys.modules[name] = old
        for parent, attr, old_value, had in state.parent_attrs:
            if getattr(parent, attr, None) is state.swapped.get(_ROOT):
                if had:
                    setattr(parent, attr, old_value)
                else:
                    delattr(parent, attr)
        for space, attr, old_value, new_value in reversed(state.rebound):
            if space.get(attr) is new_value:
                space[attr] = old_value
        _STATE = None


# ---------------------------------------------------------------------------
# console script: lmparse-lmdeploy
# ---------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """``lmparse-lmdeploy ARGS``: install the swap, then run LMDeploy's own CLI with ARGS."""
    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    try:
        install()
        from lmdeploy.cli import run  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        print(f'lmparse-lmdeploy: {err}', file=sys.stderr)
        return 1
    result = run()
    return result if isinstance(result, int) else 0


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
