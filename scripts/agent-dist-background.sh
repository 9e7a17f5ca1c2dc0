#!/usr/bin/env bash
# `make up`'s agent bundles for other hosts (scripts/up.sh starts this in the background, at the
# lowest CPU and I/O priority: the first benchmark runs beside it; log: $LOGS/agent-dist.log).
# The server lists dist/agent at each request and build.sh renames each finished file into it
# (never a half-written one), so each bundle is served the moment it is there:
#
# 1. the host-frozen bundle (AGENT_DIST_ROOT=host, ~1 CPU-minute), when dist/agent has no tarball
#    for this machine and the Debian 11 build root is not cached yet: something to serve within
#    minutes. It needs this host's glibc (Debian 12: 2.35), which its MANIFEST.json records, the
#    enrolment page shows and install.sh checks (an older host is refused, naming both versions);
# 2. then the portable bundle, frozen in the Debian 11 build root (AGENT_DIST_ROOT=debian-bullseye:
#    glibc 2.28, RHEL 8, Debian 10, Ubuntu 20.04 and newer; `make agent-dist`'s), which replaces it.
#    The first time that makes the build root (~20 CPU-minutes: OpenSSL, CPython; cached in
#    ~/.cache/iowatt-agent-dist as `make agent-dist` caches it); after that ~1 CPU-minute, and
#    nothing when this tree's inputs were built before (AGENT_DIST_REUSE=1: the files are copied).
#    Needs root and mmdebstrap (`make deps-system-run` installs it); without them step 1's bundle
#    stays, and this log says why.
# A failed build leaves make up working (this log says why). One at a time per tree. up.sh starts it
# in a process group of its own with a pid file (.iowatt/run/agent-dist.pid); `make down` stops it
# (SIGTERM to the group: build.sh leaves no half-written file in dist/agent, and this log says so).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
mkdir -p dist
exec 8>dist/.agent-dist-background.lock
if ! flock -n 8; then
  echo "agent-dist: another make up's background build is running in this tree"
  exit 0
fi
say() { printf '%s agent-dist: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
trap 'say "stopped (make down): dist/agent keeps the whole files it has"; exit 143' TERM INT
build() {  # build ROOT: build.sh with that root, tarball, .deb and .rpm, reused when built before
  say "AGENT_DIST_ROOT=$1"
  AGENT_DIST_ROOT=$1 AGENT_DIST_KINDS="tar deb rpm" AGENT_DIST_REUSE=1 bash agent/packaging/build.sh
}
cached_root() { compgen -G "${IOWATT_DIST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iowatt-agent-dist}/buildroot-debian-bullseye-*/opt/iowatt-build/venv/pyvenv.cfg" >/dev/null; }

missing=
[ "$(id -u)" = 0 ] || missing="$missing root"
for t in mmdebstrap dpkg-source unshare chroot; do command -v "$t" >/dev/null || missing="$missing $t"; done

if ! ls dist/agent/iowatt-agent-*-linux-"$(uname -m)".tar.gz >/dev/null 2>&1 && { [ -n "$missing" ] || ! cached_root; }; then
  build host || say "the host-frozen bundle failed (above)"
fi
if [ -n "$missing" ]; then
  say "no portable bundle (glibc 2.28): it needs$missing; dist/agent keeps the bundle frozen with" \
      "this host's glibc ($(getconf GNU_LIBC_VERSION)), which install.sh checks each host against"
  exit 0
fi
cached_root || say "the Debian 11 build root is not cached: making it (~20 CPU-minutes, once)"
if build debian-bullseye; then
  say "done: dist/agent serves the bundle for glibc 2.28"
else
  say "the portable bundle failed (above); dist/agent keeps what it had"
  exit 1
fi
