"""Opt-in lane: ``lmparse.compat.lmdeploy`` as a drop-in for LMDeploy 0.18.0's parsers.

``LMPARSE_ORACLE=1``; needs ``tools/install_oracle.sh`` (``lmdeploy==0.18.0``
``--no-deps`` plus what its parser modules import). Skipped otherwise.

(a) The oracle corpora of ``tests/oracle`` run through LMDeploy's own parsers
    and through the swapped-in lmparse classes (LMDeploy's pydantic requests
    in, LMDeploy's pydantic deltas out), for every registered name and the
    oracle modules' token-aligned chunkings; the oracle modules' KNOWN tables
    assert lmparse's result where LMDeploy 0.18 has a bug.
(b) With ``install()`` active, LMDeploy's managers are driven the way its
    server drives them; install before and after import; ``uninstall()``.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

if os.environ.get('LMPARSE_ORACLE') != '1':
    pytest.skip('LMDeploy drop-in lane is opt-in: set LMPARSE_ORACLE=1', allow_module_level=True)

from tests.oracle.lmdeploy_loader import (  # noqa: E402
    LMDEPLOY_VERSION,
    lmdeploy_version,
    load_lmdeploy_parsers,
    load_lmdeploy_protocol,
)

try:
    LMD = load_lmdeploy_parsers()
    PROTO = load_lmdeploy_protocol()
except ImportError as err:  # pragma: no cover - environment dependent
    pytest.skip(f'LMDeploy parsers cannot be imported ({err}); run tools/install_oracle.sh',
                allow_module_level=True)
if lmdeploy_version() != LMDEPLOY_VERSION:  # pragma: no cover
    pytest.skip(f'the drop-in lane targets lmdeploy=={LMDEPLOY_VERSION}, found {lmdeploy_version()}',
                allow_module_level=True)

import lmparse  # noqa: E402
from lmparse.compat import lmdeploy as compat  # noqa: E402

pytestmark = [pytest.mark.oracle,
              pytest.mark.filterwarnings('ignore:max_tokens is deprecated:DeprecationWarning'),
              # LMDeploy itself stores dumped tool dicts in its Tool-typed field (both sides warn).
              pytest.mark.filterwarnings('ignore:Pydantic serializer warnings:UserWarning')]

ROOT = 'lmdeploy.serve.parsers'
# LMDeploy's original parser modules, captured before any install().
ORIGINALS: dict[str, types.ModuleType] = {}
for _name in compat.LMDEPLOY_MODULES:
    try:
        ORIGINALS[_name] = importlib.import_module(_name)
    except ImportError:  # _openai_harmony without openai_harmony
        pass
LMD_RESPONSE = ORIGINALS[ROOT].ResponseParserManager
LMD_REASONING = ORIGINALS[ROOT + '.reasoning_parser'].ReasoningParserManager
LMD_TOOLS = ORIGINALS[ROOT + '.tool_parser'].ToolParserManager
LMDRequest = PROTO.ChatCompletionRequest

RESPONSE_NAMES = ('default', 'gpt-oss')
TOOL_NAMES = ('qwen', 'qwen2d5', 'qwen3', 'internlm', 'intern-s1', 'llama3', 'qwen3coder', 'interns2-preview',
              'glm47', 'kimi_k2', 'kimi-k2', 'deepseek-v32', 'deepseek-v4')
REASONING_NAMES = ('default', 'deepseek-v3', 'deepseek-v32', 'deepseek-v3.2', 'deepseek-v4')
LEGACY_NAMES = ('qwen-qwq', 'intern-s1', 'deepseek-r1')


@pytest.fixture
def swapped() -> Iterator[None]:
    compat.install()
    try:
        yield
    finally:
        compat.uninstall()


def _swapped_classes() -> tuple[Any, Any, Any]:
    """The swapped managers, taken from an install() that is undone right away.

    The differential lane runs LMDeploy's originals with the swap inactive:
    LMDeploy's own set_parsers imports its registries lazily from sys.modules.
    """
    compat.install()
    try:
        parsers = importlib.import_module(ROOT)
        reasoning = importlib.import_module(ROOT + '.reasoning_parser')
        tools = importlib.import_module(ROOT + '.tool_parser')
        return parsers.ResponseParserManager, reasoning.ReasoningParserManager, tools.ToolParserManager
    finally:
        compat.uninstall()


SW_RESPONSE, SW_REASONING, SW_TOOLS = _swapped_classes()
_CONFIGURED: dict[tuple[Any, Any], type] = {}


def swapped_parser_cls(reasoning: str | None, tool: str | None) -> type:
    """A subclass of the swapped 'default' parser configured like LMDeploy's server does."""
    key = (reasoning, tool)
    cls = _CONFIGURED.get(key)
    if cls is None:
        base = SW_RESPONSE.get('default')
        cls = _CONFIGURED[key] = type(f'Swapped[{reasoning},{tool}]', (base,), {})
        cls.set_parsers(reasoning_parser_name=reasoning, tool_parser_name=tool)
    return cls


def _assert_lmdeploy_types(messages: list[Any]) -> None:
    for m in messages:
        assert type(m) is PROTO.DeltaMessage, type(m)
        for d in m.tool_calls or []:
            assert type(d) is PROTO.DeltaToolCall, type(d)
            assert d.function is None or type(d.function) is PROTO.DeltaFunctionCall


def _typed(factory: Callable[[], Any]) -> Any:
    """Wrap a parser so every output is checked to be LMDeploy's pydantic type."""
    parser = factory()
    inner_stream, inner_complete = parser.stream_chunk, parser.parse_complete

    class Checked:
        def __getattr__(self, name: str) -> Any:
            return getattr(parser, name)

        def stream_chunk(self, *args: Any, **kwargs: Any) -> Any:
            out = inner_stream(*args, **kwargs)
            _assert_lmdeploy_types([m for m, _ in out])
            return out

        def parse_complete(self, *args: Any, **kwargs: Any) -> Any:
            content, calls, reasoning = inner_complete(*args, **kwargs)
            for c in calls or []:
                assert type(c) is PROTO.ToolCall and type(c.function) is PROTO.FunctionCall
            return content, calls, reasoning

    assert type(parser.request) is LMDRequest
    return Checked()


# ---------------------------------------------------------------------------
# (a) differential corpus: LMDeploy's parsers vs the swapped-in lmparse
# ---------------------------------------------------------------------------

def _oracle(name: str) -> types.ModuleType | str:
    try:
        return importlib.import_module(f'tests.oracle.{name}')
    except pytest.skip.Exception as skip:  # e.g. a tokenizer package missing
        return str(skip)


ORACLES = {name: _oracle(name) for name in ('test_lmdeploy_oracle', 'test_xml_oracle', 'test_dsml_kimi_oracle',
                                            'test_harmony_oracle')}


def _params(oracle: str, build: Callable[[types.ModuleType], list[Any]]) -> list[Any]:
    mod = ORACLES[oracle]
    if isinstance(mod, str):
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=mod), id=f'{oracle}-unavailable')]
    return [pytest.param(*p.values, id=p.id) for p in build(mod)]


def _json_params(mod: types.ModuleType) -> list[Any]:
    return [pytest.param((cid, cfg, text), kind, id=f'{kind}-{cid}-{cfg.id}')
            for kind, cases in (('corpus', mod.CORPUS), ('random', mod.random_cases()),
                                ('fragments', mod.fragment_cases()))
            for cid, fam, text in cases for cfg in mod.CONFIGS if cfg.family == fam]


@pytest.mark.parametrize(('case', 'kind'), _params('test_lmdeploy_oracle', _json_params))
def test_json_dialects_swapped(case: Any, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """qwen/qwen2d5/qwen3, internlm/intern-s1, llama3 x reasoning default/none x request variants."""
    mod = ORACLES['test_lmdeploy_oracle']
    assert not isinstance(mod, str)
    monkeypatch.setattr(mod, 'lmparse_parser', lambda cfg: _typed(
        lambda: swapped_parser_cls(cfg.reasoning, cfg.tool)(LMDRequest(**cfg.request_fields()))))
    case_id, cfg, text = case
    seed = mod.RANDOM_SEED if kind != 'corpus' else __import__('zlib').crc32(case_id.encode())
    problems = mod.compare(case_id, cfg, text, seed)
    if problems:
        mod._fail(case_id, cfg, text, problems)


def _xml_params(mod: types.ModuleType) -> list[Any]:
    return [pytest.param(p.values, 'xml', id=p.id) for p in mod.cases()]


@pytest.mark.parametrize(('case', 'kind'), _params('test_xml_oracle', _xml_params))
def test_xml_dialects_swapped(case: Any, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """qwen3coder, interns2-preview, glm47 (schema coercion included)."""
    mod = ORACLES['test_xml_oracle']
    assert not isinstance(mod, str)
    monkeypatch.setattr(mod, 'lmparse_parser', lambda tool: _typed(
        lambda: swapped_parser_cls('default', tool)(LMDRequest(**mod.request_fields()))))
    mod.test_xml_corpus(*case)


def _dsml_params(mod: types.ModuleType) -> list[Any]:
    return [pytest.param(p.values, 'dsml', id=p.id) for p in mod._params()]


@pytest.mark.parametrize(('case', 'kind'), _params('test_dsml_kimi_oracle', _dsml_params))
def test_dsml_kimi_swapped(case: Any, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """deepseek-v32/v4 tools x deepseek-v3/v32/v3.2/v4 reasoning; kimi_k2/kimi-k2 (the model's call ids)."""
    mod = ORACLES['test_dsml_kimi_oracle']
    assert not isinstance(mod, str)
    monkeypatch.setattr(mod, 'lmparse_parser', lambda cfg: _typed(
        lambda: swapped_parser_cls(cfg.reasoning, cfg.tool)(LMDRequest(**cfg.request_fields()))))
    mod.test_corpus(*case)


def _harmony_params(mod: types.ModuleType) -> list[Any]:
    return [pytest.param((c,), 'harmony', id=c.id) for c in mod.CORPUS]


@pytest.mark.parametrize(('case', 'kind'), _params('test_harmony_oracle', _harmony_params))
def test_gpt_oss_swapped(case: Any, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpt-oss: LMDeploy's openai_harmony parser vs the swapped one, token by token in both input modes."""
    mod = ORACLES['test_harmony_oracle']
    assert not isinstance(mod, str)
    base = SW_RESPONSE.get('gpt-oss')
    modes = {m: type(f'GptOss[{m}]', (base,), {'input_mode': m}) for m in ('auto', 'text', 'ids')}

    def lmparse_run(c: Any, chunks: list[tuple[str, list[int]]], mode: str) -> tuple[Any, int]:
        parser = _typed(lambda: modes[mode](LMDRequest(**mod.make_request(**c.request))))
        result = mod.reconstruct(parser, mod.stream_flagged(parser, chunks))
        return result.key(), parser.reasoning_tokens

    monkeypatch.setattr(mod, 'lmparse_run', lmparse_run)
    monkeypatch.setattr(mod, 'GptOssResponseParser', lambda request: _typed(lambda: modes['auto'](
        LMDRequest(**request) if isinstance(request, dict) else request)))
    mod.test_against_lmdeploy(*case)


# ---------------------------------------------------------------------------
# (b) the swap itself
# ---------------------------------------------------------------------------

# Module-level names of LMDeploy's modules that are typing/implementation helpers, not API.
NOT_API = {'Any', 'ClassVar', 'Literal', 'TYPE_CHECKING', 'annotations', 'dataclass', 'field', 'abstractmethod',
           'get_logger', 'encode_basestring', 'XmlParseState',
           # openai_harmony's own names re-exported by LMDeploy's private Harmony module
           'HarmonyEncodingName', 'Role', 'StreamableParser', 'load_harmony_encoding', 'get_encoding'}


def test_every_path_and_public_name_swapped(swapped: None) -> None:
    for name in compat.LMDEPLOY_MODULES:
        mod = importlib.import_module(name)
        assert getattr(mod, '__lmparse_swapped__', False), name
        assert sys.modules[name] is mod
        original = ORIGINALS.get(name)
        if original is None:
            continue
        public = {n for n in dir(original) if not n.startswith('_') and n not in NOT_API
                  and not isinstance(getattr(original, n), types.ModuleType)}
        missing = public - set(dir(mod))
        assert not missing, (name, missing)
    # attribute access through the package and `from ... import` both see the swap
    import lmdeploy.serve.parsers.tool_parser.qwen3_tool_parser as q
    from lmdeploy.serve.parsers.tool_parser import ToolParserManager
    assert q.Qwen3ToolParser is lmparse.Qwen3ToolParser
    assert ToolParserManager is SW_TOOLS
    assert sys.modules['lmdeploy.serve'].parsers is sys.modules[ROOT]  # type: ignore[attr-defined]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(ROOT + '.tool_parser.no_such_module')


def test_registered_names_match(swapped: None) -> None:
    from lmdeploy.serve.parsers import ResponseParserManager
    from lmdeploy.serve.parsers.reasoning_parser import ReasoningParserManager
    from lmdeploy.serve.parsers.tool_parser import ToolParserManager
    assert set(LMD_TOOLS.module_dict) == set(TOOL_NAMES)
    # lmparse registers every LMDeploy name, plus its own dialects (README "Registered parsers").
    assert set(ToolParserManager.module_dict) >= set(TOOL_NAMES) | {'glm45'}
    assert set(LMD_REASONING.module_dict) == set(REASONING_NAMES)
    assert set(ReasoningParserManager.module_dict) >= set(REASONING_NAMES)
    assert set(LMD_RESPONSE.module_dict) <= set(ResponseParserManager.module_dict) == set(RESPONSE_NAMES)
    for name in TOOL_NAMES:
        ours, theirs = ToolParserManager.get(name), LMD_TOOLS.get(name)
        assert isinstance(ours, type) and issubclass(ours, lmparse.ToolParser), name
        assert (ours.get_tool_open_tag(), ours.get_tool_close_tag()) == \
            (theirs.get_tool_open_tag(), theirs.get_tool_close_tag()), name
        assert ours.structural_tag_model == theirs.structural_tag_model, name
        assert ours.reasoning_structural_tag_model == theirs.reasoning_structural_tag_model, name
    # mmengine semantics the server checks: unknown -> None
    assert ResponseParserManager.get('no-such-parser') is None and LMD_RESPONSE.get('no-such-parser') is None
    assert ToolParserManager.get('no-such-parser') is None and LMD_TOOLS.get('no-such-parser') is None
    # LMDeploy's dotted alias resolves to nothing in mmengine; the swapped registry resolves it.
    assert LMD_REASONING.get('deepseek-v3.2') is None
    assert ReasoningParserManager.get('deepseek-v3.2') is lmparse.DeepSeekV32ReasoningParser


def test_validate_parser_names(swapped: None) -> None:
    from lmdeploy.serve.parsers import validate_parser_names
    original = ORIGINALS[ROOT].validate_parser_names
    for r, t in [(None, None), ('default', 'qwen3'), *[(n, None) for n in LEGACY_NAMES],
                 *[(n, 'deepseek-v4') for n in REASONING_NAMES]]:
        assert validate_parser_names(r, t, warn_legacy=False) == original(r, t, warn_legacy=False)
    for r, t in [('nope', None), (None, 'nope')]:
        with pytest.raises(ValueError) as ours:
            validate_parser_names(r, t)
        with pytest.raises(ValueError):
            original(r, t)
        assert 'nope' in str(ours.value) and 'not in the parser list' in str(ours.value)


class FakeTokenizer:
    """Enough of a HF tokenizer for set_parsers (validate_tokenizer) and reasoning_tokens."""

    def get_vocab(self) -> dict[str, int]:
        return {'<think>': 100, '</think>': 101, '<tool_call>': 102, '</tool_call>': 103}


def _tools() -> list[dict[str, Any]]:
    return [{'type': 'function', 'function': {'name': n, 'description': n,
                                              'parameters': {'type': 'object', 'properties': {'q': {'type': 'string'}}}}}
            for n in ('get_weather', 'search')]


REQUESTS: dict[str, dict[str, Any]] = {
    'tools': {'tools': _tools()},
    'choice_none': {'tools': _tools(), 'tool_choice': 'none'},
    'choice_function': {'tools': _tools(), 'tool_choice': {'type': 'function', 'function': {'name': 'search'}}},
    'no_tools': {},
    'thinking_off': {'tools': _tools(), 'chat_template_kwargs': {'enable_thinking': False}},
    'legacy_enable_thinking': {'tools': _tools(), 'enable_thinking': True, 'stop': 'x', 'max_tokens': 7},
    'effort': {'reasoning_effort': 'high', 'response_format': {'type': 'json_object'}},
    'assistant_history': {'messages': [
        {'role': 'user', 'content': 'hi'},
        {'role': 'assistant', 'content': None, 'tool_calls': [
            {'id': 'c1', 'type': 'function', 'function': {'name': 'search', 'arguments': '{"q": "a"}'}}]},
        {'role': 'tool', 'tool_call_id': 'c1', 'content': 'r'}], 'tools': _tools()},
}


def make_request(variant: str) -> Any:
    fields: dict[str, Any] = {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}
    fields.update(REQUESTS[variant])
    return LMDRequest(**fields)


def _lmdeploy_default(reasoning: str | None, tool: str | None, tokenizer: Any = None) -> type:
    """LMDeploy's original 'default' class, configured (restored by the caller's fixture)."""
    cls = LMD_RESPONSE.get('default')
    cls.reasoning_parser_cls = cls.tool_parser_cls = cls.tokenizer = None
    cls.set_parsers(reasoning, tool, tokenizer)
    return cls


@pytest.fixture
def lmdeploy_default_restored() -> Iterator[None]:
    cls = LMD_RESPONSE.get('default')
    saved = {k: cls.__dict__[k] for k in ('reasoning_parser_cls', 'tool_parser_cls', 'tokenizer')}
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(cls, k, v)


def _server_set_parsers(reasoning: str | None, tool: str | None, tokenizer: Any) -> type:
    """What lmdeploy.serve.openai.api_server.set_parsers does, resolved through sys.modules."""
    from lmdeploy.serve.parsers import ResponseParserManager
    cls = ResponseParserManager.get('default')
    if cls is None:
        raise ValueError('default missing')
    cls.set_parsers(reasoning_parser_name=reasoning, tool_parser_name=tool, tokenizer=tokenizer)
    return cls  # type: ignore[no-any-return]


STREAM = ['Let me', ' think', '</think>', '\n\nSure', '<tool_call>', '\n{"name": "search", ', '"arguments": {"q": ',
          '"a"}}\n', '</tool_call>', '']
STREAM_IDS = [[1, 2], [3], [101], [4, 5], [102], [6, 7], [8, 9], [10], [103], []]


def _chunks(messages: list[Any]) -> list[str]:
    """Server serialisation of each delta, call ids normalised."""
    out = []
    for m in messages:
        response = PROTO.ChatCompletionStreamResponse(
            id='x', created=0, model='m',
            choices=[PROTO.ChatCompletionResponseStreamChoice(index=0, delta=m, finish_reason=None)])
        data = json.loads(response.model_dump_json(exclude_none=True))
        for d in data['choices'][0]['delta'].get('tool_calls', []):
            if 'id' in d:
                d['id'] = 'ID'
        out.append(json.dumps(data, sort_keys=True))
    return out


def _drive(cls: type, request: Any) -> tuple[Any, list[Any], list[tuple[bool, int | None]], Any]:
    parser = cls(request)
    messages, meta = [], []
    for k, (text, ids) in enumerate(zip(STREAM, STREAM_IDS)):
        for m, emitted in parser.stream_chunk(text, ids, final=k == len(STREAM) - 1):
            messages.append(m)
            meta.append((emitted, parser.reasoning_tokens))
    return parser, messages, meta, cls(request).parse_complete(''.join(STREAM), sum(STREAM_IDS, []))


@pytest.mark.parametrize('variant', list(REQUESTS))
def test_server_flow_install_after_import(variant: str, swapped: None, lmdeploy_default_restored: None) -> None:
    """api_server.set_parsers + ChatRunner-style use: lmparse inside, LMDeploy's types outside."""
    tok = FakeTokenizer()
    cls = _server_set_parsers('default', 'qwen3', tok)
    assert cls is compat.LmdeployBaseResponseParser
    try:
        assert cls.supports_required_tool_choice and cls.tool_parser_cls is lmparse.Qwen3ToolParser
        ours, messages, meta, complete = _drive(cls, make_request(variant))
        assert isinstance(ours._inner, lmparse.BaseResponseParser)  # lmparse's implementation
        assert isinstance(ours.tool_parser, lmparse.Qwen3ToolParser)
        assert isinstance(ours.reasoning_parser, lmparse.ReasoningParser)
        _assert_lmdeploy_types(messages)
        assert type(ours.request) is LMDRequest
        content, calls, reasoning = complete
        assert all(type(c) is PROTO.ToolCall and type(c.function) is PROTO.FunctionCall for c in calls or [])
    finally:
        cls.reasoning_parser_cls = cls.tool_parser_cls = cls.tokenizer = None
    compat.uninstall()
    lmd_cls = _lmdeploy_default('default', 'qwen3', tok)
    theirs, lmd_messages, lmd_meta, lmd_complete = _drive(lmd_cls, make_request(variant))
    # the adjusted request the engine sees, including which fields count as set
    assert ours.request.model_dump(exclude_unset=True) == theirs.request.model_dump(exclude_unset=True)
    assert ours.request.model_dump() == theirs.request.model_dump()
    assert _chunks(messages) == _chunks(lmd_messages)
    assert meta == lmd_meta  # tool_emitted flags and reasoning_tokens after every delta
    assert ours.reasoning_tokens == theirs.reasoning_tokens
    norm = lambda r: (r[0], [(c.type, c.function.model_dump()) for c in r[1] or []] or None, r[2])  # noqa: E731
    assert norm(complete) == norm(lmd_complete)


@pytest.mark.parametrize('tool', TOOL_NAMES)
def test_adjusted_request_per_dialect(tool: str, swapped: None, lmdeploy_default_restored: None) -> None:
    """Each dialect's adjust_request (skip_special_tokens for InternLM/Kimi, InternS2 spacing...)."""
    cls = type('Probe', (compat.LmdeployBaseResponseParser,), {})
    cls.set_parsers('default', tool)
    compat.uninstall()
    lmd_cls = _lmdeploy_default('default', tool)
    for variant in REQUESTS:
        ours, theirs = cls(make_request(variant)).request, lmd_cls(make_request(variant)).request
        assert type(ours) is LMDRequest
        assert ours.model_dump(exclude_unset=True) == theirs.model_dump(exclude_unset=True), variant


def test_set_parsers_keeps_slots_like_lmdeploy(swapped: None, lmdeploy_default_restored: None) -> None:
    ours = type('Probe', (compat.LmdeployBaseResponseParser,), {})
    ours.set_parsers('default', 'qwen3')
    ours.set_parsers(None, None)  # LMDeploy: a None name keeps its slot
    assert (ours.reasoning_parser_cls, ours.tool_parser_cls) == (lmparse.ReasoningParser, lmparse.Qwen3ToolParser)
    ours.set_parsers(None, 'llama3', FakeTokenizer())
    assert ours.tool_parser_cls is lmparse.Llama3JsonToolParser and isinstance(ours.tokenizer, FakeTokenizer)
    ours.set_parsers()
    assert ours.tokenizer is None and ours.reasoning_parser_cls is lmparse.ReasoningParser
    # direct assignment (as LMDeploy's own tests do) reconfigures the next parser
    ours.tool_parser_cls = None
    assert ours(make_request('tools')).tool_parser is None
    with pytest.raises(ValueError):
        ours.set_parsers('nope')
    compat.uninstall()
    theirs = _lmdeploy_default('default', 'qwen3')
    theirs.set_parsers(None, None)
    assert theirs.tool_parser_cls is LMD_TOOLS.get('qwen3')  # the same semantics in LMDeploy
    # lmparse's own class clears instead (documented)
    native = lmparse.BaseResponseParser.with_parsers('default', 'qwen3')
    native.set_parsers(None, None)
    assert native.tool_parser_cls is None


def test_gpt_oss_server_flow(swapped: None) -> None:
    from lmdeploy.serve.parsers import GptOssResponseParser, ResponseParserManager
    cls = ResponseParserManager.get('gpt-oss')
    assert cls is GptOssResponseParser is compat.LmdeployGptOssResponseParser
    cls.set_parsers(reasoning_parser_name=None, tool_parser_name=None, tokenizer=None)
    assert cls.tool_parser_cls is not None and cls.supports_required_tool_choice  # validation.py checks these
    parser = cls(make_request('tools'))
    assert type(parser.request) is LMDRequest and parser.tool_parser is not None
    text = ('<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>hi<|return|>')
    out = parser.stream_chunk(text, [], final=True)
    _assert_lmdeploy_types([m for m, _ in out])
    assert ''.join(m.content or '' for m, _ in out) == 'hi'
    assert ''.join(m.reasoning_content or '' for m, _ in out) == 'think'


def test_rebinds_already_imported_references_and_uninstall_restores() -> None:
    assert not compat.installed()
    before = {name: sys.modules.get(name) for name in compat.LMDEPLOY_MODULES}
    probe = types.ModuleType('lmdeploy._lmparse_probe')
    probe.ResponseParserManager = LMD_RESPONSE  # type: ignore[attr-defined]  # `from ... import` done earlier
    probe.unrelated = 42  # type: ignore[attr-defined]
    sys.modules[probe.__name__] = probe
    try:
        compat.install()
        compat.install()  # idempotent
        assert probe.ResponseParserManager is SW_RESPONSE  # type: ignore[attr-defined]
        assert probe.unrelated == 42  # type: ignore[attr-defined]
        assert LMD_RESPONSE.get('default') is ORIGINALS[ROOT + '.response_parser'].BaseResponseParser
        compat.uninstall()
        compat.uninstall()  # idempotent
        assert probe.ResponseParserManager is LMD_RESPONSE  # type: ignore[attr-defined]
        assert {name: sys.modules.get(name) for name in compat.LMDEPLOY_MODULES} == before
        assert sys.modules['lmdeploy.serve'].parsers is ORIGINALS[ROOT]  # type: ignore[attr-defined]
        from lmdeploy.serve.parsers import ResponseParserManager
        assert ResponseParserManager is LMD_RESPONSE
    finally:
        compat.uninstall()
        del sys.modules[probe.__name__]


_BEFORE_IMPORT = r'''
import json, sys, os
from tests.oracle.lmdeploy_loader import _install_stubs
_install_stubs()  # lmdeploy/__init__ imports torch: the same stub as the oracle lane
import lmparse.compat.lmdeploy as compat
compat.install()
import lmdeploy.serve.parsers.tool_parser.qwen3_tool_parser  # noqa: F401
from lmdeploy.serve.parsers import ResponseParserManager
from lmdeploy.serve.openai.protocol import ChatCompletionRequest, DeltaMessage
root = os.path.join('lmdeploy', 'serve', 'parsers')
def loaded_originals():
    return sorted(n for n, m in sys.modules.items()
                  if m is not None and root in (getattr(m, '__file__', None) or ''))
cls = ResponseParserManager.get('default')
cls.set_parsers('default', 'qwen3')
p = cls(ChatCompletionRequest(model='m', messages=[{'role': 'user', 'content': 'hi'}]))
out = p.stream_chunk('r</think>c', [], final=True)
result = {'before': loaded_originals(), 'types': [type(m) is DeltaMessage for m, _ in out],
          'content': ''.join(m.content or '' for m, _ in out), 'cls': cls.__module__}
compat.uninstall()
from lmdeploy.serve.parsers import ResponseParserManager as R2
result['after'] = loaded_originals()
result['restored'] = R2.get('default').__module__
print(json.dumps(result))
'''


def test_install_before_import_never_loads_lmdeploy_parsers() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, 'PYTHONPATH': root + os.pathsep + os.environ.get('PYTHONPATH', '')}
    proc = subprocess.run([sys.executable, '-c', _BEFORE_IMPORT], capture_output=True, text=True, cwd=root, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result['before'] == []  # not one LMDeploy parser module was imported
    assert result['types'] == [True, True] and result['content'] == 'c'
    assert result['cls'] == 'lmparse.compat.lmdeploy'
    assert ROOT + '.response_parser' in result['after']  # uninstall(): the next import loads LMDeploy's own
    assert result['restored'] == ROOT + '.response_parser'


def test_console_script_reports_missing_cli(capsys: pytest.CaptureFixture[str]) -> None:
    """lmparse-lmdeploy installs the swap then runs lmdeploy.cli.run; a missing CLI is a clear error."""
    try:
        importlib.import_module('lmdeploy.cli')
    except Exception:  # the torch-free oracle install cannot import LMDeploy's CLI
        try:
            assert compat.main(['serve', '--help']) == 1
            assert 'lmparse-lmdeploy:' in capsys.readouterr().err
        finally:
            compat.uninstall()
    else:  # pragma: no cover - a full LMDeploy install
        with pytest.raises(SystemExit) as exit_:
            compat.main(['--help'])
        compat.uninstall()
        assert exit_.value.code == 0


# ---------------------------------------------------------------------------
# tool_choice="required": structural tags (xgrammar, optional)
# ---------------------------------------------------------------------------

def _pyd_tools() -> list[Any]:
    return [PROTO.Tool(**t) for t in _tools()]


def test_required_without_structural_tag_is_a_value_error(swapped: None) -> None:
    from lmdeploy.serve.parsers.tool_parser import ToolParserManager
    for name in ('llama3',):
        with pytest.raises(ValueError, match='does not support'):
            ToolParserManager.get(name).build_required_response_format(_pyd_tools(), reasoning=False)
        with pytest.raises(ValueError, match='does not support'):
            LMD_TOOLS.get(name).build_required_response_format(_pyd_tools(), reasoning=False)


@pytest.mark.parametrize('tool', [t for t in TOOL_NAMES if t != 'llama3'])
@pytest.mark.parametrize('reasoning', [False, True])
def test_required_structural_tags_match_lmdeploy(tool: str, reasoning: bool, swapped: None,
                                                 lmdeploy_default_restored: None) -> None:
    pytest.importorskip('xgrammar', reason='structural tags need the optional xgrammar (lmparse[structural-tags])')
    ours = SW_TOOLS.get(tool).build_required_response_format(_pyd_tools(), reasoning=reasoning)
    theirs = LMD_TOOLS.get(tool).build_required_response_format(_pyd_tools(), reasoning=reasoning)
    assert ours == theirs
    # end to end: the adjusted request carries the tag as response_format
    fields = {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}], 'tools': _tools(),
              'tool_choice': 'required'}
    if not reasoning:
        fields['chat_template_kwargs'] = {'enable_thinking': False}
    cls = type('Probe', (compat.LmdeployBaseResponseParser,), {})
    cls.set_parsers('default', tool)
    req = cls(LMDRequest(**fields)).request
    compat.uninstall()
    lmd = _lmdeploy_default('default', tool)(LMDRequest(**fields)).request
    assert req.model_dump(exclude_unset=True) == lmd.model_dump(exclude_unset=True)
