#!/usr/bin/env bash
# `make release`: every artefact of this version into dist/release/VERSION, reproducibly
# (docs/release.md: the checklist; ADR 0043). Same commit + same SOURCE_DATE_EPOCH (default: the
# commit's time) = the same bytes, SHA256SUMS included.
#   python/   wheels and sdists: libs (energy, policy, workload), agent, client, server
#   agent/    the agent bundles for hosts without Python (make agent-dist: tarball, .deb, .rpm)
#   ui/       the built UI
#   server/   the server's container build context: the source at this commit
#             (docker build -f deploy/Dockerfile.server . inside it)
#   sbom/     CycloneDX SBOMs of the server's and the agent's locked requirements, and of the npm
#             packages the UI is built from (frontend/package-lock.json)
#   SHA256SUMS
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
VERSION=$($PY -c 'import backend; print(backend.__version__)')
for component in agent/src/iowatt_agent/__init__.py client/src/iowatt_client/__init__.py; do
  grep -q "^__version__ = \"$VERSION\"$" "$component" || { echo "release: $component is not $VERSION" >&2; exit 1; }
done
grep -q "#define IOWATT_VERSION \"$VERSION\"" agent/engine/src/iowatt.h \
  || { echo "release: agent/engine/src/iowatt.h is not $VERSION" >&2; exit 1; }
if [ -n "$(git status --porcelain --untracked-files=no)" ] && [ -z "${RELEASE_ALLOW_DIRTY:-}" ]; then
  echo "release: the work tree has uncommitted changes (a release is built from a commit;" \
    "RELEASE_ALLOW_DIRTY=1 to try anyway)" >&2
  exit 1
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
OUT=dist/release/$VERSION
rm -rf "$OUT"
mkdir -p "$OUT"/{python,agent,ui,server,sbom}
echo "==> Python wheels and sdists"
for project in libs/energy libs/policy libs/workload agent client .; do
  $PY scripts/release_build.py python "$project" "$OUT/python" >/dev/null
done
echo "==> UI"
make -s ui
$PY scripts/release_build.py tree frontend/dist "$OUT/ui/iowatt-ui-$VERSION.tar.gz" "iowatt-ui-$VERSION" >/dev/null
echo "==> server build context"
git archive --format=tar --prefix="iowatt-$VERSION/" HEAD | gzip -n -9 > "$OUT/server/iowatt-$VERSION-src.tar.gz"
echo "==> agent bundles (make agent-dist)"
make -s agent-dist
cp dist/agent/iowatt-agent-"$VERSION"-* dist/agent/iowatt-agent_"$VERSION"_* "$OUT/agent/"
echo "==> SBOMs (CycloneDX)"
for part in server agent; do
  .venv/bin/cyclonedx-py requirements --output-reproducible --of JSON \
    -o "$OUT/sbom/iowatt-$part-$VERSION.cdx.json" "requirements/$part.txt"
done
$PY scripts/release_build.py npm-sbom frontend/package-lock.json "$OUT/sbom/iowatt-ui-$VERSION.cdx.json" >/dev/null
(cd "$OUT" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum) > "$OUT/SHA256SUMS"
echo "iowatt $VERSION: $OUT ($(wc -l < "$OUT/SHA256SUMS") files, SHA256SUMS)"
