#!/usr/bin/env bash
# The tools the deployment tests need (tests/deploy, issue 30), installed when missing or of
# another version (idempotent, quiet when done):
#   promtool  deploy/monitoring's alert rules (`promtool check rules`, `promtool test rules`): the
#             one binary taken from Debian's `prometheus` package (apt-get download, unpacked:
#             installing the package would add a Prometheus server and its web assets)
#   helm      deploy/helm (`helm lint`, `helm template`): built from its Go module with the
#             machine's Go (no release binary can be downloaded here) by `make helm` only (a cold
#             build is ~7 CPU-minutes); the result is kept in IOWATT_TOOLS_CACHE and installed by
#             every later run on this machine (docs/adr/0042-deployment-checks.md)
#   caddy     the several-API-process topology of the load smoke test (deploy/caddy): the binary
#             of Debian's `caddy` package, unpacked as promtool's (the package adds a service)
set -euo pipefail
HELM_VERSION=v4.3.2
PROMTOOL_VERSION=2.42.0  # bookworm's prometheus
CADDY_VERSION=2.6.2  # bookworm's caddy
BIN=${IOWATT_TOOLS_BIN:-/usr/local/bin}
CACHE=${IOWATT_TOOLS_CACHE:-/var/cache/iowatt-tools}

if [ "$(id -u)" -ne 0 ] && [ -z "${IOWATT_TOOLS_BIN:-}" ]; then
  command -v promtool >/dev/null && command -v helm >/dev/null && command -v caddy >/dev/null && exit 0
  echo "iowatt: promtool, helm or caddy is missing — run as root, or set IOWATT_TOOLS_BIN to a writable directory on PATH" >&2
  exit 1
fi
mkdir -p "$BIN" "$CACHE"

# the one binary of a Debian package: debian_binary PACKAGE BINARY
debian_binary() {
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && { apt-get download -qq "$1" >/dev/null 2>&1 || { apt-get update -qq && apt-get download -qq "$1"; }; })
  dpkg-deb --fsys-tarfile "$tmp/$1"_*.deb | tar -xO "./usr/bin/$2" > "$tmp/$2"
  install -m 0755 "$tmp/$2" "$BIN/$2"
  rm -rf "$tmp"
}

if ! "$BIN/promtool" --version 2>/dev/null | grep -q "version $PROMTOOL_VERSION"; then
  echo "iowatt: installing promtool $PROMTOOL_VERSION (from Debian's prometheus package)"
  debian_binary prometheus promtool
fi
if ! "$BIN/caddy" version 2>/dev/null | grep -q "^v\{0,1\}$CADDY_VERSION"; then
  echo "iowatt: installing caddy $CADDY_VERSION (from Debian's caddy package)"
  debian_binary caddy caddy
fi

# helm: only `make helm` (this script's argument `helm`) builds it, a cold build being ~7 CPU-minutes
# (make test's whole set-up is under one); without it tests/deploy/test_helm.py checks the committed
# rendering. A build already in the cache is installed either way.
if [ "${1:-}" != helm ] && [ ! -x "$CACHE/helm-$HELM_VERSION" ]; then
  exit 0
fi
# (a helm built from its module says only "v4.3" of its version: the cached build is the reference)
if ! { [ -x "$CACHE/helm-$HELM_VERSION" ] && cmp -s "$CACHE/helm-$HELM_VERSION" "$BIN/helm"; }; then
  # one build at a time on a machine: a second `make deps` waits for the first one's
  exec 9>"$CACHE/.helm-build.lock"
  flock 9
  if [ ! -x "$CACHE/helm-$HELM_VERSION" ]; then
    GO=$(command -v go || echo /usr/local/go/bin/go)
    echo "iowatt: building helm $HELM_VERSION with $("$GO" version | cut -d' ' -f3) (once per machine: a few minutes)"
    GOBIN="$CACHE/build" GOFLAGS=-buildvcs=false nice -n 10 "$GO" install -trimpath -ldflags='-s -w' \
      "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
    mv "$CACHE/build/helm" "$CACHE/helm-$HELM_VERSION"
  fi
  install -m 0755 "$CACHE/helm-$HELM_VERSION" "$BIN/helm"
fi
