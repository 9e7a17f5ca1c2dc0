#!/bin/sh
# compose's agent-dist service (deploy/Dockerfile.agent-dist): the bundles built in the image (SRC)
# into the volume the api serves read-only (DST), by the rule build.sh publishes by: each file
# copied whole under a name the server does not serve (.NAME.tmp), then renamed over the old one,
# each .sha256 before its file; then the files of an older build that this one has not are removed
# (each file before its .sha256). The api lists DST at each request: it never serves a half-copied
# file, and the bundles of the image are served the moment each is there.
set -eu
SRC=${1:?usage: agent-dist-publish.sh SRC DST}
DST=${2:?usage: agent-dist-publish.sh SRC DST}
umask 022
cd "$SRC"
for pass in sha256 files; do
  for f in *; do
    [ -f "$f" ] || continue
    case $pass:$f in sha256:*.sha256|files:*) ;; *) continue ;; esac
    case $pass:$f in files:*.sha256) continue ;; esac
    cp "$f" "$DST/.$f.tmp"
    mv -f "$DST/.$f.tmp" "$DST/$f"
  done
done
cd "$DST"
for f in *; do
  [ -f "$f" ] || continue
  case $f in *.sha256) continue ;; esac
  [ -e "$SRC/$f" ] || { rm -f "$f" "$f.sha256"; echo "agent-dist: removed $f (not in this build)"; }
done
for f in *.sha256; do  # a lone .sha256 (its file removed by hand)
  if [ -f "$f" ] && [ ! -e "$SRC/$f" ]; then rm -f "$f"; fi
done
ls -l "$DST" | sed 1d | sed 's/^/agent-dist: serving /'
