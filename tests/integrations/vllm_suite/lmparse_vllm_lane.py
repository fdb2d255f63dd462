"""pytest plugin for the vLLM suite lane: runs vLLM 0.33.0's own parser tests (from its sdist, never
copied here) with vLLM's parsers or with lmparse in replace mode.

Loaded by ``tools/run_vllm_suite.py`` as ``-p lmparse_vllm_lane`` (this directory on ``PYTHONPATH``).

``LMPARSE_VLLM_SUITE_MODE=own``      vLLM's own parsers (the baseline).
``LMPARSE_VLLM_SUITE_MODE=lmparse``  ``lmparse.integrations.vllm`` registered with ``replace=True`` and every
                                     replaced class also put in the vLLM module that defines it, so that a
                                     test importing ``vllm.tool_parsers.hermes_tool_parser.Hermes2ProToolParser``
                                     gets lmparse's class, as a test asking ``ToolParserManager`` does.

In lmparse mode, tests listed in ``differences.toml`` beside this file are marked xfail(strict) with their
reason: a listed test that passes fails the run, so the table cannot go stale.
"""
from __future__ import annotations

import importlib
import logging
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
MODE = os.environ.get('LMPARSE_VLLM_SUITE_MODE', 'own')
# vLLM name -> (vLLM module, class name, lmparse class name) for every class put in place (lmparse mode).
REPLACED: dict[str, tuple[str, str, str]] = {}


def _load_differences() -> dict[str, str]:
    path = HERE / 'differences.toml'
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding='utf-8'))
    out: dict[str, str] = {}
    for section in data.values():  # [category] tables of "test id" = "reason"
        for test_id, reason in section.items():
            out[test_id] = reason
    return out


def _owner_name(module_path: str, names: list[str]) -> str:
    """The vLLM name a module-level class stands for when several names share it (hermes/qwen3_json)."""
    tail = module_path.rsplit('.', 1)[-1]
    for n in names:
        if n in tail:
            return n
    return names[0]


def _install_lmparse() -> None:
    os.environ['LMPARSE_VLLM_REPLACE'] = '1'
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    # Snapshot vLLM's lazy table before lmparse registers over it.
    lazy = {'tool': dict(ToolParserManager.lazy_parsers), 'reasoning': dict(ReasoningParserManager.lazy_parsers)}
    import lmparse.integrations.vllm as integ
    integ.register(replace=True)
    managers = {'tool': (ToolParserManager, ToolParserManager.tool_parsers),
                'reasoning': (ReasoningParserManager, ReasoningParserManager.reasoning_parsers)}
    for kind, table in lazy.items():
        _, registered = managers[kind]
        by_target: dict[tuple[str, str], list[str]] = {}
        for name, target in table.items():
            by_target.setdefault(target, []).append(name)
        for (module_path, class_name), names in by_target.items():
            owner = _owner_name(module_path, names)
            cls = registered.get(owner)
            if cls is None or not cls.__module__.startswith('lmparse.'):
                continue  # not replaced: vLLM's class stays
            mod = importlib.import_module(module_path)
            setattr(mod, class_name, cls)
            # Test ids parametrized by class name then match between the two runs.
            cls.__name__ = cls.__qualname__ = class_name
            for n in names:
                REPLACED[f'{kind}:{n}'] = (module_path, class_name, cls.__name__)


def pytest_configure(config: Any) -> None:
    logging.getLogger('vllm').setLevel(logging.WARNING)
    import offline_tokenizers
    offline_tokenizers.install()
    if MODE == 'lmparse':
        _install_lmparse()
    elif MODE != 'own':
        raise pytest.UsageError(f'LMPARSE_VLLM_SUITE_MODE must be own or lmparse, not {MODE!r}')


def pytest_report_header(config: Any) -> list[str]:
    lines = [f'lmparse vLLM lane: mode={MODE}']
    if REPLACED:
        lines.append(f'lmparse classes in place of {len(REPLACED)} vLLM names')
    return lines


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if MODE != 'lmparse':
        return
    differences = _load_differences()
    for item in items:
        reason = differences.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
