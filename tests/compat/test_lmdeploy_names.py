"""Opt-in lane (``LMPARSE_ORACLE=1``): every name of LMDeploy 0.18's parser modules is swapped.

Walks LMDeploy's installed ``lmdeploy.serve.parsers`` modules (``tools/install_oracle.sh``:
``lmdeploy==0.18.0 --no-deps``) and checks that each name a module defines, public or
private, exists in the swapped module, or is one of the internals listed in
``lmparse.compat.lmdeploy_modules.NOT_PROVIDED`` (and in the README). Helpers LMDeploy's
own code and tests import are compared with LMDeploy's for behaviour and error texts.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import sys
import types
from collections.abc import Iterator
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
    load_lmdeploy_parsers()
    PROTO = load_lmdeploy_protocol()
except ImportError as err:  # pragma: no cover - environment dependent
    pytest.skip(f'LMDeploy parsers cannot be imported ({err}); run tools/install_oracle.sh',
                allow_module_level=True)
if lmdeploy_version() != LMDEPLOY_VERSION:  # pragma: no cover
    pytest.skip(f'the lane targets lmdeploy=={LMDEPLOY_VERSION}, found {lmdeploy_version()}',
                allow_module_level=True)

from lmparse.compat import lmdeploy as compat  # noqa: E402
from lmparse.compat.lmdeploy_modules import LMDEPLOY_ALL, NOT_PROVIDED  # noqa: E402

pytestmark = pytest.mark.oracle
ROOT = 'lmdeploy.serve.parsers'


def _originals() -> dict[str, types.ModuleType]:
    if compat.installed():  # pragma: no cover - another module left the swap on
        compat.uninstall()
    return {name: importlib.import_module(name) for name in compat.LMDEPLOY_MODULES}


ORIGINALS = _originals()


def _defined(mod: types.ModuleType) -> set[str]:
    """Every name the module's code binds (dunders other than ``__all__`` are module machinery)."""
    return {n for n in vars(mod) if not (n.startswith('__') and n.endswith('__'))}


@contextlib.contextmanager
def _lmdeploy_modules() -> Iterator[None]:
    """Run LMDeploy's originals with its own modules: they import their registries from sys.modules."""
    compat.uninstall()
    try:
        yield
    finally:
        compat.install()


@pytest.fixture
def swapped() -> Iterator[dict[str, types.ModuleType]]:
    compat.install()
    try:
        yield {name: sys.modules[name] for name in compat.LMDEPLOY_MODULES}
    finally:
        compat.uninstall()


def test_lmdeploy_modules_are_all_swapped() -> None:
    """LMDEPLOY_MODULES is every module file of LMDeploy's parser package."""
    root = os.path.dirname(ORIGINALS[ROOT].__file__ or '')
    found = set()
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith('.py'):
                rel = os.path.relpath(os.path.join(dirpath, f), root)[:-3].replace(os.sep, '.')
                found.add(ROOT if rel == '__init__' else f'{ROOT}.{rel.removesuffix(".__init__")}')
    assert found == set(compat.LMDEPLOY_MODULES)


@pytest.mark.parametrize('module', compat.LMDEPLOY_MODULES)
def test_every_name_present_or_documented(module: str, swapped: dict[str, types.ModuleType]) -> None:
    original, ours = ORIGINALS[module], swapped[module]
    theirs = _defined(original)
    missing = {n for n in theirs if not hasattr(ours, n) and (module, n) not in NOT_PROVIDED}
    assert not missing, f'{module}: {sorted(missing)}'
    # The documented list has no stale entries: each is a real LMDeploy name lmparse really omits.
    for (mod, name) in NOT_PROVIDED:
        if mod == module:
            assert name in theirs and not hasattr(ours, name), (mod, name)
    # Nothing beyond LMDeploy's names (plus module machinery and the lmparse marker).
    extra = _defined(ours) - theirs - {'__lmparse_swapped__'}
    extra = {n for n in extra if not isinstance(getattr(ours, n), types.ModuleType)}
    assert not extra, f'{module}: {sorted(extra)}'
    if '__all__' in vars(original):
        assert list(ours.__all__) == list(original.__all__)
    else:
        assert '__all__' not in vars(ours)


# Names whose value must be the very object LMDeploy's module holds.
_SAME_OBJECT = {'annotations', 'json', 're', 'abstractmethod', 'TYPE_CHECKING', 'Any', 'ClassVar', 'Literal',
                'dataclass', 'field', 'encode_basestring', 'DeltaMessage', 'DeltaToolCall', 'DeltaFunctionCall',
                'ToolCall', 'FunctionCall'}
# Plain values that must be equal to LMDeploy's.
_EQUAL = {'LEGACY_REASONING_PARSER_NAMES', 'DSML_TOKEN', 'JsonParsePhase', 'XmlParsePhase',
          '_OPENAI_HARMONY_AVAILABLE', '__all__'}


@pytest.mark.parametrize('module', compat.LMDEPLOY_MODULES)
def test_values_match_lmdeploy(module: str, swapped: dict[str, types.ModuleType]) -> None:
    original, ours = ORIGINALS[module], swapped[module]
    for name in _defined(original):
        if (module, name) in NOT_PROVIDED:
            continue
        theirs, mine = getattr(original, name), getattr(ours, name)
        if name in _SAME_OBJECT:
            assert mine is theirs, (module, name)
        elif name in _EQUAL:
            assert mine == theirs, (module, name)
        elif isinstance(theirs, re.Pattern):
            assert (mine.pattern, mine.flags) == (theirs.pattern, theirs.flags), (module, name)
        elif isinstance(theirs, types.ModuleType):
            assert sys.modules[theirs.__name__] is mine, (module, name)  # the swapped submodule
        elif name == 'logger':
            assert mine.name == theirs.name == 'lmdeploy'
        elif isinstance(theirs, type) and name.endswith('Parser'):
            assert isinstance(mine, type), (module, name)
        else:
            assert callable(mine) == callable(theirs), (module, name)


def test_package_attributes_reach_swapped_submodules(swapped: dict[str, types.ModuleType]) -> None:
    for name, mod in swapped.items():
        parent, _, attr = name.rpartition('.')
        if parent in swapped:
            assert getattr(swapped[parent], attr) is mod


ARGUMENTS = ['{"city": "NYC"}', '{"city":', '', '[1, 2]', '3', 'null', '{"a": {"b": [1, "x"]}}', '{"a": 1} x',
             None, 42, {'city': 'NYC'}, ['x'], '\n{\n"k": "\u5317\u4eac"}']


@pytest.mark.parametrize('arguments', ARGUMENTS, ids=repr)
def test_parse_tool_call_arguments_dict_like_lmdeploy(arguments: Any, swapped: dict[str, types.ModuleType]) -> None:
    theirs = ORIGINALS[ROOT + '.response_parser']._parse_tool_call_arguments_dict
    ours = swapped[ROOT + '.response_parser']._parse_tool_call_arguments_dict
    assert _outcome(theirs, arguments) == _outcome(ours, arguments)


def test_parse_tool_call_arguments_dict_lmdeploy_tests(swapped: dict[str, types.ModuleType]) -> None:
    """LMDeploy's own tests of the helper, against the swapped module."""
    from lmdeploy.serve.parsers.response_parser import _parse_tool_call_arguments_dict
    with pytest.raises(ValueError, match=r'invalid JSON at position \d+ \(line \d+, column \d+\)'):
        _parse_tool_call_arguments_dict('{"city":')
    assert _parse_tool_call_arguments_dict('{"city": "NYC"}') == {'city': 'NYC'}
    assert _parse_tool_call_arguments_dict({'city': 'NYC'}) is None


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return 'ok', fn(*args)
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)


def _assistant(*arguments: Any) -> dict[str, Any]:
    return {'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': f'c{i}', 'type': 'function', 'function': {'name': 'f', 'arguments': a}}
        for i, a in enumerate(arguments)]}


MESSAGES = [
    [{'role': 'user', 'content': 'hi'}],
    [{'role': 'user', 'content': 'hi'}, _assistant('{"q": 1}', {'q': 2}, '[1]'), {'role': 'tool', 'content': 'x'}],
    [_assistant('{"q": "\u5317"}'), _assistant(None), 'not a dict', {'role': 'assistant', 'tool_calls': 'x'}],
    [_assistant('{"q":')],
    [{'role': 'assistant', 'tool_calls': [{'function': 'x'}, 'y', {'function': {'arguments': '{}'}}]}],
]


@pytest.mark.parametrize('messages', MESSAGES, ids=lambda m: json.dumps(m)[:40])
def test_normalize_request_messages_like_lmdeploy(messages: list[Any],
                                                  swapped: dict[str, types.ModuleType]) -> None:
    theirs = ORIGINALS[ROOT + '.response_parser']._normalize_request_messages
    ours = swapped[ROOT + '.response_parser']._normalize_request_messages
    snapshot = json.dumps(messages)
    assert _outcome(theirs, messages) == _outcome(ours, messages)
    assert json.dumps(messages) == snapshot  # neither mutates its input


@pytest.mark.parametrize('reasoning, tool', [('nope', None), (None, 'nope'), ('default', 'no such')])
def test_unknown_parser_message_is_lmdeploys(reasoning: str | None, tool: str | None,
                                             swapped: dict[str, types.ModuleType]) -> None:
    original = ORIGINALS[ROOT].validate_parser_names
    ours = swapped[ROOT].validate_parser_names
    with _lmdeploy_modules(), pytest.raises(ValueError) as theirs_err:
        original(reasoning, tool)
    with pytest.raises(ValueError) as ours_err:
        ours(reasoning, tool)
    # Same text with each side's registry keys (lmparse registers more tool names).
    kind, name = ('reasoning', reasoning) if reasoning != 'default' and reasoning else ('tool', tool)
    lmd_keys = getattr(ORIGINALS[f'{ROOT}.{kind}_parser'], f'{kind.capitalize()}ParserManager').module_dict.keys()
    our_keys = getattr(swapped[f'{ROOT}.{kind}_parser'], f'{kind.capitalize()}ParserManager').module_dict.keys()
    assert str(theirs_err.value) == f'The {kind} parser {name} is not in the parser list: {lmd_keys}'
    assert str(ours_err.value) == f'The {kind} parser {name} is not in the parser list: {our_keys}'


class _NoTagsTokenizer:
    def get_vocab(self) -> dict[str, int]:
        return {'<think>': 1}


def test_missing_reasoning_tokens_message_is_lmdeploys(swapped: dict[str, types.ModuleType]) -> None:
    theirs_base = ORIGINALS[ROOT + '.response_parser'].BaseResponseParser
    ours_base = swapped[ROOT + '.response_parser'].BaseResponseParser
    theirs_cls: Any = type('T', (theirs_base,), {})
    ours_cls: Any = type('O', (ours_base,), {})
    with _lmdeploy_modules(), pytest.raises(RuntimeError) as theirs:
        theirs_cls.set_parsers('default', None, _NoTagsTokenizer())
    with pytest.raises(RuntimeError) as ours:
        ours_cls.set_parsers('default', None, _NoTagsTokenizer())
    expected = "reasoning parser could not get reasoning tokens from the tokenizer: ['</think>']"
    assert str(theirs.value).endswith(expected) and str(ours.value).endswith(expected)
