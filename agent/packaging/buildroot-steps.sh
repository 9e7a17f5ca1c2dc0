#!/usr/bin/env bash
# The Debian 11 build root's recipe (ADR 0036), the one copy of it: the steps that fetch Debian 12's
# OpenSSL and CPython sources and build them inside a Debian 11 root. Two callers run them in turn:
#   agent/packaging/buildroot.sh (`make agent-dist`, `make up`): in a root mmdebstrap made, cached
#     in IOWATT_DIST_CACHE (`sources` on this Debian 12 host, the others inside the root);
#   deploy/Dockerfile.agent-dist (compose's agent-dist service): `FROM debian:bullseye` is the root
#     (`sources` in a `FROM debian:bookworm` stage).
#
#   buildroot-steps.sh packages        the root's packages beyond Debian's buildd variant (one a line)
#   buildroot-steps.sh sources DIR     (on Debian 12 or any host with apt) bookworm's openssl and
#                                      python3.11 source packages, unpacked in DIR (Debian's patches
#                                      applied), with an apt state of their own in DIR/.apt
#   buildroot-steps.sh openssl DIR     (in the root, as root) OpenSSL's libraries into PREFIX
#   buildroot-steps.sh libpath         (in the root) the dynamic loader finds PREFIX/lib
#   buildroot-steps.sh cpython DIR     (in the root) CPython into PREFIX, then its modules checked
#   buildroot-steps.sh mark            (in the root) /etc/iowatt-buildroot: what build.sh reads to
#                                      freeze in place (it is running inside such a root)
#
# Sourced (buildroot.sh), it only sets SUITE, SOURCES, PREFIX and BUILD_PACKAGES.
set -euo pipefail

SUITE=bullseye     # the root: Debian 11, glibc 2.31 (built to need <= 2.28: below)
SOURCES=bookworm   # the suite whose source packages are built
PREFIX=/opt/iowatt-python  # inside the root: OpenSSL and CPython
# beyond buildd (Essential + build-essential): the libraries CPython's modules link
BUILD_PACKAGES=(libffi-dev zlib1g-dev liblzma-dev libbz2-dev uuid-dev pkg-config binutils)

steps_say() { printf 'agent-dist (build root): %s\n' "$*" >&2; }

step_sources() {
  # bookworm's openssl and python3.11, fetched and unpacked with an apt state of their own (this
  # host's keyring checks bookworm's signatures)
  local dir=$1 apt=$1/.apt
  rm -rf "$dir" && mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/parts"
  # (the archive's point releases; the security archive's source files are not reachable here)
  printf 'deb-src http://deb.debian.org/debian %s main\ndeb-src http://deb.debian.org/debian %s-updates main\n' \
    "$SOURCES" "$SOURCES" > "$apt/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt" -o Debug::NoLocking=1
              -o APT::Sandbox::User=root)
  steps_say "sources of $SOURCES's openssl and python3.11 (apt-get source)"
  apt-get "${opts[@]}" -qq update
  (cd "$dir" && apt-get "${opts[@]}" -qq source --download-only openssl python3.11 >/dev/null)
  rm -rf "$apt"
  for dsc in "$dir"/openssl_*.dsc "$dir"/python3.11_*.dsc; do
    (cd "$dir" && dpkg-source -q -x "$(basename "$dsc")" >/dev/null 2>&1)
  done
  # Debian's backport of the CVE-2026-4224 fix makes pyexpat.c include an internal header, which
  # Debian's own build allows (pyexpat is built into its interpreter); built as an extension
  # module, it needs the define every other such module of 3.11 starts with
  local pyexpat; pyexpat=$(echo "$dir"/python3.11-*/Modules/pyexpat.c)
  if grep -q '^#include "pycore_' "$pyexpat" && ! grep -q 'Py_BUILD_CORE_MODULE' "$pyexpat"; then
    sed -i '1i #ifndef Py_BUILD_CORE_BUILTIN\n#  define Py_BUILD_CORE_MODULE 1\n#endif' "$pyexpat"
  fi
}

step_openssl() {
  # OpenSSL: the libraries only (no engines' or providers' modules, no programs or manual pages);
  # its configuration directory is Debian's (/usr/lib/ssl; absent on RHEL: defaults), a system path
  local dir=$1 target
  case $(uname -m) in x86_64) target=linux-x86_64 ;; aarch64) target=linux-aarch64 ;;
    *) steps_say "unsupported architecture $(uname -m)"; exit 2 ;; esac
  cd "$dir"/openssl-*/
  ./Configure "$target" --prefix="$PREFIX" --libdir=lib --openssldir=/usr/lib/ssl shared no-tests
  make -j"$(nproc)" build_libs
  make install_dev
}

step_libpath() {
  echo "$PREFIX/lib" > /etc/ld.so.conf.d/iowatt-python.conf
  ldconfig
}

step_cpython() {
  # CPython: a shared libpython (PyInstaller loads it), no search path baked in (ldconfig finds
  # /opt/iowatt-python/lib inside the root; in the bundle PyInstaller's loader does), no ensurepip,
  # no debugging information (-g: PyInstaller would ship it). Nothing in it needs glibc > 2.28
  # (RHEL 8): configure is told sem_clockwait (2.30) is missing, so lock timeouts wait with
  # sem_timedwait on the wall clock, as CPython does on glibc < 2.30; and every C file of its build
  # (CFLAGS_NODIST: not the flags it hands to other projects' extensions) includes
  # python-glibc-compat.h, which binds exp, exp2, log, log2 and pow to their pre-2.29 versions
  local dir=$1 compat=$1/python-glibc-compat.h
  install -m 0644 "$(dirname "${BASH_SOURCE[0]}")/python-glibc-compat.h" "$compat"
  cd "$dir"/python3.11-*/
  [ -f Makefile ] || ./configure --prefix="$PREFIX" --enable-shared --with-openssl="$PREFIX" \
    --without-ensurepip OPT='-DNDEBUG -fwrapv -O2 -Wall' ac_cv_func_sem_clockwait=no \
    CFLAGS_NODIST="-include $compat"
  grep -q "^CONFIGURE_CFLAGS_NODIST=.*-include $compat" Makefile \
    || { steps_say "configure dropped python-glibc-compat.h"; exit 1; }
  if grep -q 'define HAVE_SEM_CLOCKWAIT' pyconfig.h; then steps_say "configure found sem_clockwait"; exit 1; fi
  make -j"$(nproc)"
  rm -rf "$PREFIX/lib/python3.11"
  make install
  ldconfig
  "$PREFIX/bin/python3.11" -c \
    'import ssl, ctypes, lzma, bz2, zlib, uuid, decimal, pyexpat, xml.etree.ElementTree, sys; print(sys.version, ssl.OPENSSL_VERSION)' >&2 \
    || { steps_say "CPython lacks a module the agent needs"; exit 1; }
}

step_mark() {
  printf 'debian-%s %s\n' "$SUITE" "$PREFIX/bin/python3.11" > /etc/iowatt-buildroot
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case ${1:-} in
    packages) printf '%s\n' "${BUILD_PACKAGES[@]}" ;;
    sources|openssl|cpython) [ $# = 2 ] || { echo "usage: $0 $1 DIR" >&2; exit 2; }; "step_$1" "$2" ;;
    libpath|mark) "step_$1" ;;
    *) echo "usage: buildroot-steps.sh packages | sources DIR | openssl DIR | libpath | cpython DIR | mark" >&2; exit 2 ;;
  esac
fi
