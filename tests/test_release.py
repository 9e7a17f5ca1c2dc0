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
