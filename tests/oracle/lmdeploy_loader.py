"""Import LMDeploy's parser layer without torch (black-box oracle only).

``lmdeploy/__init__.py`` and ``lmdeploy/utils.py`` import torch, so the two
packages are pre-registered as empty modules pointing at the real directories
and ``lmdeploy.utils`` is replaced by a stub providing ``get_logger``.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
import os
import sys
import types
from typing import Any

LMDEPLOY_VERSION = '0.18.0'


def lmdeploy_version() -> str | None:
    """Installed lmdeploy distribution version (None when not installed)."""
    try:
        return importlib.metadata.version('lmdeploy')
    except importlib.metadata.PackageNotFoundError:
        return None


def _install_stubs() -> None:
    if 'lmdeploy' in sys.modules:
        return  # already stubbed, or a real lmdeploy is imported: use it
    spec = importlib.util.find_spec('lmdeploy')
    if spec is None or spec.origin is None:
        raise ImportError('lmdeploy is not installed')
    root = os.path.dirname(spec.origin)
    for name, path in (('lmdeploy', root), ('lmdeploy.serve', os.path.join(root, 'serve'))):
        pkg = types.ModuleType(name)
        pkg.__path__ = [path]
        sys.modules[name] = pkg
    utils = types.ModuleType('lmdeploy.utils')
    utils.get_logger = lambda name='lmdeploy', *a, **k: logging.getLogger(name)
    sys.modules['lmdeploy.utils'] = utils
    sys.modules['lmdeploy'].utils = utils


def _import(name: str) -> Any:
    _install_stubs()
    try:
        return importlib.import_module(name)
    except ImportError:
        raise
    except Exception as err:  # e.g. an incompatible dependency version
        raise ImportError(f'cannot import {name}: {err!r}') from err


def load_lmdeploy_parsers() -> Any:
    """Return the ``lmdeploy.serve.parsers`` module; ImportError if unavailable."""
    # GPT-OSS logs a warning when openai_harmony is missing; it is not needed here.
    logging.getLogger('lmdeploy').setLevel(logging.ERROR)
    parsers = _import('lmdeploy.serve.parsers')
    _import('lmdeploy.serve.parsers.tool_parser')
    _import('lmdeploy.serve.parsers.reasoning_parser')
    return parsers


def load_lmdeploy_protocol() -> Any:
    """Return ``lmdeploy.serve.openai.protocol`` (pydantic request/delta types)."""
    return _import('lmdeploy.serve.openai.protocol')


def lmdeploy_chat_request_cls() -> type:
    """LMDeploy's pydantic ``ChatCompletionRequest``."""
    return load_lmdeploy_protocol().ChatCompletionRequest



def oracle_lane_or_skip() -> tuple[Any, type]:
    """LMDeploy's parser package and request class, or skip the calling test module.

    The lane is opt-in (``LMPARSE_ORACLE=1``) and needs ``lmdeploy==0.18.0``
    installed by ``tools/install_oracle.sh``.
    """
    import pytest

    if os.environ.get('LMPARSE_ORACLE') != '1':
        pytest.skip('LMDeploy oracle lane is opt-in: set LMPARSE_ORACLE=1', allow_module_level=True)
    try:
        parsers = load_lmdeploy_parsers()
        request_cls = lmdeploy_chat_request_cls()
    except ImportError as err:  # environment dependent
        pytest.skip(f'LMDeploy parsers cannot be imported ({err}); run tools/install_oracle.sh',
                    allow_module_level=True)
    if lmdeploy_version() != LMDEPLOY_VERSION:
        pytest.skip(f'the oracle lane targets lmdeploy=={LMDEPLOY_VERSION}, found {lmdeploy_version()}',
                    allow_module_level=True)
    return parsers, request_cls
