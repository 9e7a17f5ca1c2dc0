"""Releases (issue 30, docs/release.md): one semantic version per release, kept in one place per
component and printed by every command's --version; `make release`'s archives are reproducible (one
small artefact built twice: the same bytes; the full release is not built in `make test`)."""

import hashlib
import importlib.metadata
import re
import subprocess
import tomllib
import zipfile
from pathlib import Path

import iowatt_agent
import iowatt_client
import pytest
from typer.testing import CliRunner

import backend
from tests.conftest import REPO

ROOT = Path(REPO)
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$")


def test_every_component_has_one_semantic_version_and_says_it() -> None:
    from backend.cli import app

    version = backend.__version__
    assert SEMVER.match(version), version
    engine_h = (ROOT / "agent" / "engine" / "src" / "iowatt.h").read_text()
    assert f'#define IOWATT_VERSION "{version}"' in engine_h
    assert iowatt_agent.__version__ == iowatt_client.__version__ == version
    # the packages take their version from those modules (pyproject `dynamic`), never a second copy
    for pyproject, module in (
        ("pyproject.toml", "backend.__version__"),
        ("agent/pyproject.toml", "iowatt_agent.__version__"),
        ("client/pyproject.toml", "iowatt_client.__version__"),
    ):
        text = (ROOT / pyproject).read_text()
        assert 'dynamic = ["version"]' in text, pyproject
        assert not re.search(r"^version = \"", text, re.M), pyproject
        meta = tomllib.loads(text)
        if meta["build-system"]["build-backend"] == "flit_core.buildapi":
            # flit reads `__version__` of the module named after the project, and nothing else
            assert f"{meta['project']['name'].replace('-', '_')}.__version__" == module, pyproject
        else:
            assert f'version = {{attr = "{module}"}}' in text, pyproject
    for dist, expected in (("iowatt-server", version), ("iowatt-agent", version), ("iowatt-client", version)):
        assert importlib.metadata.version(dist) == expected, f"{dist}: reinstall (make deps-py)"
    out = CliRunner().invoke(app, ["--version"])
    assert out.exit_code == 0 and out.output.strip() == f"iowatt-server {version}"
    engine = ROOT / "agent" / "engine" / "build" / "iowatt-engine"
    assert subprocess.run([engine, "--version"], capture_output=True, text=True).stdout.strip() == (
        f"iowatt-engine-{version}"
    )
    assert f"## {version} - " in (ROOT / "CHANGELOG.md").read_text()


def test_a_release_artefact_is_the_same_bytes_when_built_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("release_build", ROOT / "scripts" / "release_build.py")
    assert spec and spec.loader
    rb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rb)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01
    first = rb.build_python("libs/policy", tmp_path / "a")
    second = rb.build_python("libs/policy", tmp_path / "b")
    digests = [[hashlib.sha256(p.read_bytes()).hexdigest() for p in made] for made in (first, second)]
    assert digests[0] == digests[1]
    assert {p.suffix for p in first} == {".gz", ".whl"}
    wheel = next(p for p in first if p.suffix == ".whl")
    with zipfile.ZipFile(wheel) as z:
        assert {i.date_time for i in z.infolist()} == {(2026, 1, 1, 0, 0, 0)}


def test_the_agent_bundles_base_library_is_the_same_bytes_whatever_order_pyinstaller_wrote(
    tmp_path: Path,
) -> None:
    """Two builds of one commit gave agent bundles that differed in one file, PyInstaller's
    base_library.zip: the same members in another order. With SOURCE_DATE_EPOCH (make release)
    build.sh sorts them (agent/packaging/sort_zip.py) and clamps every file's time to it."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("sort_zip", ROOT / "agent" / "packaging" / "sort_zip.py")
    assert spec and spec.loader
    sz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sz)
    members = {f"m{i}.pyc": bytes([i]) * 50 for i in range(5)} | {"pkg/__init__.py": b"X = 1\n"}
    made = []
    for name, order in (("a", sorted(members)), ("b", sorted(members, reverse=True))):
        path = tmp_path / f"{name}.zip"
        with zipfile.ZipFile(path, "w") as z:  # as PyInstaller writes it: a ZipInfo of the name only
            for member in order:
                z.writestr(zipfile.ZipInfo(member), members[member])
        path.chmod(0o644)
        sz.sort_members(path)
        made.append(path.read_bytes())
        assert path.stat().st_mode & 0o777 == 0o644
    assert made[0] == made[1]
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        assert [i.filename for i in z.infolist()] == sorted(members)
        assert {m: z.read(m) for m in members} == members
    sys.path.insert(0, str(tmp_path / "a.zip"))  # still importable, as the frozen agent reads it
    try:
        assert importlib.import_module("pkg").X == 1
    finally:
        sys.path.remove(str(tmp_path / "a.zip"))
        sys.modules.pop("pkg", None)
    build = (ROOT / "agent" / "packaging" / "build.sh").read_text()
    assert 'sort_zip.py "$STAGE/_internal/base_library.zip"' in build
    assert "epoch=${SOURCE_DATE_EPOCH:-}" in build  # a reused bundle was built for the same time


def test_the_uis_npm_packages_have_a_cyclonedx_sbom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """make release's sbom/iowatt-ui-VERSION.cdx.json: the packages `npm ci --omit=dev` installs from
    frontend/package-lock.json (what the UI is built from), valid CycloneDX 1.6, the same bytes
    twice; the UI's test tools (dev) are not in it."""
    import importlib.util
    import json

    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    spec = importlib.util.spec_from_file_location("release_build", ROOT / "scripts" / "release_build.py")
    assert spec and spec.loader
    rb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rb)
    lock_path = ROOT / "frontend" / "package-lock.json"
    made = [rb.npm_sbom(lock_path, tmp_path / f"{n}.cdx.json").read_text() for n in "ab"]
    assert made[0] == made[1]
    bom = json.loads(made[0])
    # valid CycloneDX, checked on a sample of each kind of component (a scoped, optional one and an
    # unscoped, required one: every field the generator writes); the whole 213 take the strict
    # validator 7.4 CPU-s, the sample 0.04
    sample = [
        next(c for c in bom["components"] if "group" in c and c["scope"] == "optional"),
        next(c for c in bom["components"] if "group" not in c and c["scope"] == "required"),
    ]
    small = {
        **bom,
        "components": sample,
        "dependencies": [{**bom["dependencies"][0], "dependsOn": [c["bom-ref"] for c in sample]}],
    }
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(small)) is None
    lock = json.loads(lock_path.read_text())["packages"]
    wanted = {
        (v.get("name") or k.rsplit("node_modules/", 1)[1], v["version"])
        for k, v in lock.items()
        if k and not v.get("dev")
    }
    got = {
        (f"{c['group']}/{c['name']}" if "group" in c else c["name"], c["version"]) for c in bom["components"]
    }
    assert got == wanted
    react = next(c for c in bom["components"] if c["name"] == "react" and "group" not in c)
    assert react["purl"] == f"pkg:npm/react@{react['version']}" and react["hashes"][0]["alg"] == "SHA-512"
    assert len(react["hashes"][0]["content"]) == 128
    assert not {"vitest", "@biomejs/biome", "playwright-core"} & {n for n, _ in got}  # dev: not built in
    assert "npm-sbom frontend/package-lock.json" in (ROOT / "scripts" / "release.sh").read_text()
