"""Structural tags are built, and xgrammar imported, only for requests that force a call (issue #27 item 8).

Importing xgrammar pulls in torch: seconds and hundreds of MB on the first
request. A fake ``xgrammar`` package on ``sys.path`` records whether anything
imported it; every registered configuration is constructed for a request that
offers tools with ``tool_choice`` "auto" (and "none", and none given).
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import pytest

from lmparse import BaseResponseParser, harmony_request
from lmparse.dialects.gpt_oss import GptOssResponseParser
from tests import dialect_corpus

CONFIGS = dialect_corpus.configs(full=False)

FAKE_INIT = textwrap.dedent('''
    import os
    with open(os.environ['LMPARSE_FAKE_XGRAMMAR_LOG'], 'a') as log:
        log.write('imported\\n')
''')
FAKE_BUILTIN = textwrap.dedent('''
    class _Tag:
        def __init__(self, payload):
            self.payload = payload

        def model_dump(self, mode='python'):
            return self.payload


    def get_model_structural_tag(model, tools, tool_choice='auto', reasoning=True):
        return _Tag({'type': 'structural_tag', 'model': model})
''')


@pytest.fixture
def fake_xgrammar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake xgrammar first on sys.path (unloaded); returns the log file its import writes to."""
    package = tmp_path / 'site' / 'xgrammar'
    package.mkdir(parents=True)
    (package / '__init__.py').write_text(FAKE_INIT, encoding='utf-8')
    (package / 'builtin_structural_tag.py').write_text(FAKE_BUILTIN, encoding='utf-8')
    log = tmp_path / 'imports.log'
    monkeypatch.setenv('LMPARSE_FAKE_XGRAMMAR_LOG', str(log))
    monkeypatch.syspath_prepend(str(tmp_path / 'site'))
    for name in [n for n in sys.modules if n == 'xgrammar' or n.startswith('xgrammar.')]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(harmony_request, '_xgrammar_builder', harmony_request._UNRESOLVED)
    monkeypatch.setattr(harmony_request, '_TAG_CACHE', {})
    yield log
    for name in [n for n in sys.modules if n == 'xgrammar' or n.startswith('xgrammar.')]:
        del sys.modules[name]  # the fake, imported by the test (monkeypatch restores only what was there)


def _imported(log: Path) -> bool:
    return 'xgrammar' in sys.modules or log.exists()


@pytest.mark.parametrize('choice', ['auto', 'none', None])
def test_no_configuration_imports_xgrammar_without_a_forced_call(fake_xgrammar: Path, choice: Any) -> None:
    for cfg in CONFIGS:
        request = cfg.request()
        if choice is not None:
            request['tool_choice'] = choice
        parser = dialect_corpus.parser_class(cfg)(request)
        assert parser.request is not None
        assert not _imported(fake_xgrammar), cfg.id


def test_the_fake_is_found_when_a_call_is_forced(fake_xgrammar: Path) -> None:
    """The control: the same setup sees the import of a request that needs the tag."""
    request = dialect_corpus.Config('gpt-oss', 'response', response='gpt-oss').request()
    request['tool_choice'] = 'required'
    parser = GptOssResponseParser(request)
    assert parser.request.response_format == {'type': 'structural_tag', 'model': 'harmony'}
    assert _imported(fake_xgrammar)


def test_a_named_function_builds_the_harmony_tag(fake_xgrammar: Path) -> None:
    request = dialect_corpus.Config('gpt-oss', 'response', response='gpt-oss').request()
    request['tool_choice'] = {'type': 'function', 'function': {'name': 'search'}}
    assert GptOssResponseParser(request).request.response_format == {'type': 'structural_tag', 'model': 'harmony'}


@pytest.mark.parametrize('mode,built', [('auto', False), ('required', True)])
def test_allowed_tools_build_the_tag_only_in_required_mode(fake_xgrammar: Path, mode: str, built: bool) -> None:
    request = dialect_corpus.Config('gpt-oss', 'response', response='gpt-oss').request()
    request['tool_choice'] = {'type': 'allowed_tools', 'allowed_tools': {
        'mode': mode, 'tools': [{'type': 'function', 'function': {'name': 'search'}}]}}
    fmt = GptOssResponseParser(request).request.response_format
    assert (fmt is not None) is built and _imported(fake_xgrammar) is built


def test_router_required_imports_xgrammar(fake_xgrammar: Path) -> None:
    """The router's required path still reaches xgrammar (the fake has no get_model_structural_tag there)."""
    request = dialect_corpus.Config('qwen3', 'router', tool='qwen3').request()
    request['tool_choice'] = 'required'
    with pytest.raises(Exception):
        BaseResponseParser.with_parsers(None, 'qwen3')(request)
    assert _imported(fake_xgrammar)
