"""Coverage-guided fuzzing of every registered dialect (atheris / libFuzzer).

Each input is decoded as::

    byte 0        configuration index (mod the number of configurations; see --list)
    byte 1        flags: bit 0 = the final call on an extra empty chunk
    byte 2        number of cut points k (mod 32)
    2k bytes      cut points (uint16 little-endian, mod len(text) + 1; duplicates give empty chunks;
                  Harmony id mode: token group sizes mod 10, 0 = an empty step)
    byte          number of empty chunks e (mod 4), then e bytes: where they are inserted
    rest          the model output, UTF-8 decoded with errors='replace'

and checked with the invariants of the property lane (tests/dialect_corpus.py):
chunked == one chunk == parse_complete, one channel per message, the tool flag,
identity first, contiguous indices; Harmony id mode also grouped == one token
per step == parse_complete == text mode with the same ids. Any exception is a
finding (libFuzzer writes the input to crash-*). Run, from the repository root::

    python fuzz/fuzz_dialects.py --make-corpus fuzz/corpus       # seed corpus from the markers
    python fuzz/fuzz_dialects.py fuzz/corpus -max_total_time=600 -timeout=20
    python fuzz/fuzz_dialects.py --repro crash-<hash>             # print the decoded case and re-check it
"""
from __future__ import annotations

import os
import random
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import atheris  # noqa: E402

with atheris.instrument_imports(include=['lmparse', 'tests.dialect_corpus']):
    import lmparse  # noqa: F401
    from tests import dialect_corpus as dc

CONFIGS = dc.configs()
# Skip known, filed failures so the fuzzer looks for new ones (FUZZ_STRICT=1: report them too).
STRICT = bool(os.environ.get('FUZZ_STRICT'))


def decode(data: bytes) -> tuple[dc.Config, bool, list[int], list[int], str]:
    if len(data) < 3:
        data = data + b'\0' * (3 - len(data))
    cfg = CONFIGS[data[0] % len(CONFIGS)]
    flush = bool(data[1] & 1)
    k = data[2] % 32
    pos = 3
    cuts = []
    for _ in range(k):
        if pos + 2 > len(data):
            break
        cuts.append(struct.unpack_from('<H', data, pos)[0])
        pos += 2
    empties = []
    if pos < len(data):
        e = data[pos] % 4
        pos += 1
        empties = list(data[pos:pos + e])
        pos += e
    text = data[pos:].decode('utf-8', errors='replace')
    return cfg, flush, cuts, empties, text


def encode(cfg_index: int, flush: bool, cuts: list[int], empties: list[int], text: str) -> bytes:
    out = bytes([cfg_index, int(flush), len(cuts)])
    out += b''.join(struct.pack('<H', c) for c in cuts)
    out += bytes([len(empties), *empties])
    return out + text.encode('utf-8')


def check(data: bytes) -> None:
    cfg, flush, cuts, empties, text = decode(data)
    if cfg.is_harmony and cfg.input_mode == 'ids':
        if not STRICT:
            # filed: parse_complete(text, ids) with a tokenizer falls back to the grammar when a decoded
            # segment contains U+FFFD (errors='replace' makes many)
            text = text.replace('\ufffd', '?')
        tokens = dc.harmony_tokens(text, random.Random(len(text)))
        sizes = [c % 10 for c in cuts] or [1]
        try:
            dc.check_harmony_ids(cfg, tokens, sizes, flush)
        except dc.InvariantError as exc:
            # issue 20/3 (filed): text mode with ids reads literal special-token text as markers
            if not STRICT and 'text mode with ids' in str(exc) and dc.literal_specials_possible(tokens):
                return
            raise
        return
    n = len(text)
    chunks = dc.split(text, [c % (n + 1) for c in cuts], empties)
    dc.check_text(cfg, text, chunks, flush)


def TestOneInput(data: bytes) -> None:  # noqa: N802 (atheris' name)
    check(data)


def make_corpus(folder: str, per_config: int = 6) -> int:
    """Seeds: valid outputs built from each config's markers, truncated ones and marker soups."""
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(0)
    count = 0
    for i, cfg in enumerate(CONFIGS):
        pieces = dc.soup_pieces(cfg)
        for j in range(per_config):
            if cfg.is_harmony:
                text = dc.build_harmony_output(rng, literal_specials=j % 3 == 2).text
            else:
                text = dc.build_router_output(cfg, rng).text
            if j % 3 == 1:
                text = text[:rng.randint(0, len(text))]
            if j == per_config - 1:
                text = ''.join(rng.choice(pieces) for _ in range(20))
            cuts = sorted(rng.randint(0, max(len(text), 1)) for _ in range(rng.randint(0, 8)))
            empties = [rng.randint(0, 8) for _ in range(rng.randint(0, 2))]
            with open(os.path.join(folder, f'seed-{i:03d}-{j}'), 'wb') as f:
                f.write(encode(i, bool(j % 2), cuts, empties, text))
            count += 1
    return count


def main(argv: list[str]) -> None:
    if len(argv) >= 3 and argv[1] == '--make-corpus':
        print(f'{make_corpus(argv[2])} seeds in {argv[2]}')
        return
    if len(argv) >= 2 and argv[1] == '--list':
        for i, cfg in enumerate(CONFIGS):
            print(i, cfg.id)
        return
    if len(argv) >= 3 and argv[1] == '--repro':
        with open(argv[2], 'rb') as f:
            data = f.read()
        cfg, flush, cuts, empties, text = decode(data)
        print(f'config={cfg.id} flush={flush} cuts={cuts} empties={empties}\ntext={text!r}')
        check(data)
        print('no violation')
        return
    atheris.Setup(argv, TestOneInput)
    atheris.Fuzz()


if __name__ == '__main__':
    main(sys.argv)
