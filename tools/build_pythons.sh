#!/usr/bin/env bash
# CPython interpreters for tools/build_wheels.sh that the machine does not have:
# 3.13t, 3.14, 3.14t, 3.15 and 3.15t, from Debian's packages, cached outside the checkout.
#
#   tools/build_pythons.sh [options] [VARIANT...]
#
#   VARIANT             3.13t, 3.14, 3.14t, 3.15, 3.15t (default: all); a trailing t
#                       is the free-threaded build (--disable-gil)
#   --cache DIR         cache (default: $LMPARSE_PYTHONS or ~/.cache/lmparse/pythons);
#                       DIR/VARIANT/bin/python3 is the interpreter
#   --jobs N            make -jN (default: 2)
#   --force             rebuild even if an interpreter is cached
#   --no-binary         never fall back to Debian's binary packages (see below)
#
# Source first: the newest python3.X source package of Debian (sid, experimental,
# forky, trixie) whose files the archive serves. apt fetches the .dsc and the
# tarballs and checks them against the archive's signed Sources index; the
# script then checks each tarball's size and SHA-256 against the .dsc and
# builds the upstream (.orig) tree with a plain ./configure [--disable-gil]:
# no Debian patches (they move site-packages to dist-packages), no PGO/LTO,
# no test run.
# Binary fallback (default builds only; Debian ships no free-threaded
# interpreter): when no source package can be fetched, Debian sid's python3.X,
# python3.X-venv and libpython3.X-dev with their dependency closure (sid's
# glibc included) are unpacked into DIR/VARIANT/root; the interpreter is made
# to use that glibc (patchelf: its own ELF interpreter and an RPATH) so it runs
# here, and its absolute paths (bundled pip wheels, multiarch pyconfig.h) are
# pointed into the root. Extensions built with it still link against this
# machine's glibc. apt checks every .deb against sid's signed Packages index.
#
# apt runs with its own state under DIR/apt (no change to /etc/apt); needs root
# only to install missing build dependencies (BUILD_DEPS).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${LMPARSE_PYTHONS:-$HOME/.cache/lmparse/pythons}
JOBS=2
FORCE=0
BINARY=1
VARIANTS=()
BUILD_DEPS=(build-essential patchelf xz-utils libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev
            libsqlite3-dev libreadline-dev libncurses-dev uuid-dev libgdbm-dev libzstd-dev)

while [ $# -gt 0 ]; do
    case "$1" in
        --cache) CACHE=$2; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        --force) FORCE=1; shift ;;
        --no-binary) BINARY=0; shift ;;
        -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        3.13t|3.1[45]|3.1[45]t) VARIANTS+=("$1"); shift ;;
        *) echo "unknown option or variant: $1" >&2; exit 2 ;;
    esac
done
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=(3.13t 3.14 3.14t 3.15 3.15t)

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
REPO=$(git -C "$HERE/.." rev-parse --show-toplevel 2>/dev/null || (cd "$HERE/.." && pwd))
case "$CACHE/" in "$REPO"/*) echo "--cache must be outside the checkout ($REPO)" >&2; exit 2 ;; esac

log() { printf '\n==> %s\n' "$*"; }
die() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }

missing=()
for p in "${BUILD_DEPS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "missing build dependencies (install them as root): ${missing[*]}"
    log "installing build dependencies: ${missing[*]}"
    apt-get install -y -q "${missing[@]}" >/dev/null
fi

# ---------------------------------------------------------------- private apt
APTDIR=$CACHE/apt
mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
{
    for suite in sid experimental forky trixie; do
        echo "deb-src [signed-by=$KEYRING] http://deb.debian.org/debian $suite main"
    done
    echo "deb [arch=amd64 signed-by=$KEYRING] http://deb.debian.org/debian sid main"
} >"$APTDIR/sources.list"
APT_OPTS=(-o "Dir::Etc::SourceList=$APTDIR/sources.list" -o Dir::Etc::SourceParts=/nonexistent
          -o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR/cache"
          -o Dir::State::status=/dev/null -o APT::Sandbox::User=root -o APT::Get::List-Cleanup=0)
if [ -z "$(find "$APTDIR/lists" -maxdepth 1 -name '*InRelease' -mmin -720 2>/dev/null | head -n 1)" ]; then
    log "apt update (private state in $APTDIR)"
    apt-get "${APT_OPTS[@]}" update -q >"$APTDIR/update.log" 2>&1 || { cat "$APTDIR/update.log" >&2; die "apt-get update"; }
fi

# source_versions PKG: every version of source package PKG apt knows, newest first.
source_versions() {
    apt-cache "${APT_OPTS[@]}" showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -rVu
}

# fetch_source PKG VERSION DIR: download and verify; prints the upstream tarball.
# Returns 1 if the archive does not serve the files.
fetch_source() {
    local pkg=$1 version=$2 dir=$3 dsc
    dsc=$dir/${pkg}_${version#*:}.dsc
    mkdir -p "$dir"
    if [ ! -f "$dsc" ]; then
        # apt checks each file against the Sources index (InRelease signed by the archive key).
        if ! (cd "$dir" && apt-get "${APT_OPTS[@]}" source -q --download-only "$pkg=$version") >"$dir/apt.log" 2>&1; then
            grep -m 3 -E '^E:' "$dir/apt.log" | sed 's/^/    /' >&2
            rm -rf "$dir"
            return 1
        fi
    fi
    python3 - "$dsc" <<'EOF' >&2 || return 2
# Every file the .dsc lists: present, with the size and SHA-256 it declares.
import hashlib, os, re, sys
dsc = sys.argv[1]
text = open(dsc, encoding='utf-8').read()
block = re.search(r'^Checksums-Sha256:\n((?: .+\n)+)', text, re.M)
assert block, f'{dsc}: no Checksums-Sha256'
for line in block[1].splitlines():
    digest, size, name = line.split()
    path = os.path.join(os.path.dirname(dsc), name)
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    assert os.path.getsize(path) == int(size), f'{name}: size {os.path.getsize(path)} != {size}'
    assert h.hexdigest() == digest, f'{name}: sha256 {h.hexdigest()} != {digest}'
    print(f'    verified {name}: sha256 {digest}')
EOF
    ls "$dir"/"${pkg}"_*.orig.tar.* | head -n 1
}

# check_interpreter PY VARIANT: the interpreter is the one asked for and has the modules pip needs.
check_interpreter() {
    "$1" - "$2" <<'EOF'
import bz2, ctypes, ensurepip, lzma, sqlite3, ssl, sys, sysconfig, venv, zlib
want = sys.argv[1]
ft = bool(sysconfig.get_config_var('Py_GIL_DISABLED'))
got = '%d.%d%s' % (sys.version_info[0], sys.version_info[1], 't' if ft else '')
assert got == want, (got, want)
if ft:
    assert not sys._is_gil_enabled()
print(f'    {want}: {sys.version.splitlines()[0]}; {ssl.OPENSSL_VERSION}')
EOF
}

# build_source VARIANT PREFIX ORIG: configure, make, install.
build_source() {
    local v=$1 prefix=$2 orig=$3 build flags py
    build=$CACHE/build/$v
    rm -rf "$build" "$prefix"
    mkdir -p "$build"
    tar -xf "$orig" -C "$build" --strip-components=1
    flags=(--prefix="$prefix" --with-ensurepip=install)
    [ "${v%t}" != "$v" ] && flags+=(--disable-gil)
    echo "    configure ${flags[*]}; make -j$JOBS (log: $build/build.log)"
    # Without pyenv's shims on PATH: configure must not take one as its build Python.
    (cd "$build" && env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        sh -c "./configure ${flags[*]} && make -j$JOBS && make install") >"$build/build.log" 2>&1 \
        || { tail -n 40 "$build/build.log" >&2; die "build of $v (log: $build/build.log)"; }
    py=$(ls "$prefix"/bin/python3.1[0-9]t "$prefix"/bin/python3.1[0-9] 2>/dev/null | head -n 1)
    [ -e "$prefix/bin/python3" ] || ln -s "$(basename "$py")" "$prefix/bin/python3"
    rm -rf "$build"
    BUILT_WITH="configure ${flags[*]}"
}

# install_binary VARIANT PREFIX: Debian sid's binary packages, made to run here.
install_binary() {
    local v=$1 prefix=$2 pkg=python$1 arch root lib py d
    arch=$APTDIR/archives-$v
    rm -rf "$arch" "$prefix"
    mkdir -p "$arch/partial"
    # Dir::State::status=/dev/null: the whole dependency closure, glibc included.
    apt-get "${APT_OPTS[@]}" -o "Dir::Cache::Archives=$arch" install -y -q --download-only \
        "$pkg" "$pkg-venv" "lib$pkg-dev" >"$arch/apt.log" 2>&1 || { tail -n 20 "$arch/apt.log" >&2; die "download of $pkg"; }
    root=$prefix/root
    mkdir -p "$root"
    for d in "$arch"/*.deb; do dpkg-deb -x "$d" "$root"; done
    lib=$root/usr/lib/x86_64-linux-gnu
    py=$root/usr/bin/$pkg
    [ -x "$py" ] && [ -e "$root/usr/lib64/ld-linux-x86-64.so.2" ] || die "$pkg: unexpected package layout"
    # DT_RPATH (not RUNPATH): it also applies to the libraries the stdlib's extension modules load.
    patchelf --set-interpreter "$root/usr/lib64/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$py"
    # Debian's ensurepip reads the bundled pip/setuptools wheels from an absolute path.
    sed -i "s|/usr/share/python-wheels|$root/usr/share/python-wheels|g" \
        "$root/usr/lib/$pkg"/_sysconfigdata__*.py "$root/usr/lib/$pkg"/_sysconfig_vars__*.json
    # Debian's pyconfig.h includes the multiarch one through the system include path.
    cp --remove-destination "$root/usr/include/x86_64-linux-gnu/$pkg/pyconfig.h" "$root/usr/include/$pkg/pyconfig.h"
    mkdir -p "$prefix/bin"
    ln -s "$py" "$prefix/bin/python3"
    ln -s "$py" "$prefix/bin/$pkg"
    BUILT_WITH="Debian binary packages: $(cd "$arch" && ls "$pkg"_*.deb "lib$pkg"-stdlib_*.deb libc6_*.deb | tr '\n' ' ')"
    {
        echo "sha256 of every unpacked .deb:"
        (cd "$arch" && sha256sum ./*.deb)
    } >"$prefix/DEBS"
    rm -f "$arch"/*.deb
}

# ---------------------------------------------------------------- variants
UNAVAILABLE=()
for v in "${VARIANTS[@]}"; do
    pkg=python${v%t}
    kind=$([ "${v%t}" != "$v" ] && echo free-threaded || echo default)
    prefix=$CACHE/$v
    stamp=$prefix/BUILT-FROM
    versions=$(source_versions "$pkg")
    binary_version=$(apt-cache "${APT_OPTS[@]}" policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
    if [ "$FORCE" = 0 ] && [ -f "$stamp" ] && [ -x "$prefix/bin/python3" ] \
        && grep -qxF -f <(echo "$versions"; echo "$binary_version") <(sed -n '1s/^[^ ]* \([^ ]*\).*/\1/p' "$stamp"); then
        echo "$v: cached ($(head -n 1 "$stamp")) at $prefix/bin/python3"
        continue
    fi
    log "$v ($kind)"
    orig= version=
    for candidate in $versions; do
        echo "    source $pkg $candidate"
        rc=0
        orig=$(fetch_source "$pkg" "$candidate" "$CACHE/src/$pkg-$candidate") || rc=$?
        [ "$rc" = 2 ] && die "$pkg $candidate: a file does not match the checksums of its .dsc"
        if [ "$rc" = 0 ]; then
            version=$candidate
            break
        fi
    done
    if [ -n "$version" ]; then
        build_source "$v" "$prefix" "$orig"
        origin="source $(basename "$orig") sha256 $(sha256sum "$orig" | cut -d' ' -f1)"
    elif [ "$kind" = default ] && [ "$BINARY" = 1 ] && [ -n "$binary_version" ] && [ "$binary_version" != "(none)" ]; then
        echo "    no $pkg source package is served; Debian sid's binary packages $binary_version instead"
        version=$binary_version
        install_binary "${v%t}" "$prefix"
        origin="binary"
    else
        echo "    $v: no $pkg source package is served by the archive$([ "$kind" = free-threaded ] && echo ', and Debian ships no free-threaded binary')"
        UNAVAILABLE+=("$v")
        continue
    fi
    check_interpreter "$prefix/bin/python3" "$v" || die "$v: the interpreter is not what was asked for"
    { echo "$pkg $version $kind"; echo "$origin"; echo "$BUILT_WITH"; date -u +%FT%TZ; } >"$stamp"
    echo "$v: $prefix/bin/python3"
done

if [ ${#UNAVAILABLE[@]} -gt 0 ]; then
    echo "not available from Debian here: ${UNAVAILABLE[*]}" >&2
    exit 3
fi
