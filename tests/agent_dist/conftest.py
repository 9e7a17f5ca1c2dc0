"""Agent bundles for the server to serve: real files with the names `make agent-dist` gives."""

import fcntl
import hashlib
import importlib.util
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.config import get_settings

FAKE_AGENT = """#!/bin/sh
# stands in for the frozen agent in the install script's tests (the real one: test_bundle.py)
case "$1" in --version) echo "iowatt-agent 9.9.9" ;; *) echo "$@" >> "$(dirname "$0")/calls" ;; esac
"""


def make_tarball(path: Path, top: str, agent: str = FAKE_AGENT, glibc: str | None = "2.28") -> str:
    """A tarball laid out as the bundle (its MANIFEST.json first, as build.sh packs it: the glibc it
    needs, or none, as a bundle built before the manifest; agent, engine, unit, README); returns its
    SHA-256."""
    manifest = [(bundle_check.MANIFEST, json.dumps({"glibc": glibc}), 0o644)] if glibc else []
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text, mode in (
            *manifest,
            ("iowatt-agent", agent, 0o755),
            ("iowatt-engine", "#!/bin/sh\necho iowatt-engine-9.9.9\n", 0o755),
            ("iowatt-agent.service", "[Service]\nExecStart=/opt/iowatt-agent/iowatt-agent run\n", 0o644),
            ("README.md", "bundle\n", 0o644),
        ):
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())
    digest = hashlib.sha256(buf.getvalue()).hexdigest()
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    return digest


@pytest.fixture
def dist_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """IOWATT_AGENT_DIST_DIR for the in-process app, with one x86_64 tarball and a .deb."""
    d = tmp_path / "dist"
    d.mkdir()
    make_tarball(d / "iowatt-agent-9.9.9-linux-x86_64.tar.gz", "iowatt-agent-9.9.9-linux-x86_64")
    (d / "iowatt-agent_9.9.9_amd64.deb").write_bytes(b"!<arch>\n" + os.urandom(64))
    monkeypatch.setenv("IOWATT_AGENT_DIST_DIR", str(d))
    get_settings.cache_clear()
    yield d
    monkeypatch.undo()
    get_settings.cache_clear()


REPO = Path(__file__).resolve().parents[2]
# where `make agent-dist` writes and the shared stack's server serves from (its default)
DIST = REPO / "dist" / "agent"


def _bundle_check() -> types.ModuleType:
    """agent/packaging/bundle_check.py, the check build.sh runs on every bundle (a script there, not a
    package: build.sh runs it with the tools' Python)."""
    spec = importlib.util.spec_from_file_location("bundle_check", REPO / "agent/packaging/bundle_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bundle_check"] = module  # (its dataclass looks itself up there)
    spec.loader.exec_module(module)
    return module


bundle_check = _bundle_check()


def _newest_tarball() -> Path | None:
    found = sorted(DIST.glob(f"iowatt-agent-*-linux-{platform.machine()}.tar.gz"))
    return found[-1] if found else None


def missing_build_tools() -> list[str]:
    """What `agent/packaging/build.sh` needs that this machine lacks (it also downloads PyInstaller and
    ziglang from PyPI into its cache the first time)."""
    missing = [t for t in ("python3.11", "gcc", "make", "dpkg-deb", "objdump", "curl") if not shutil.which(t)]
    if "gcc" not in missing:
        arch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True).stdout.strip()
        missing += [a for a in ("liburing.a", "libaio.a") if not (Path("/usr/lib") / arch / a).is_file()]
    return missing


# how the tests run build.sh (test_bundle asks it for the reuse key with the same)
BUILD_ENV = {
    # the .rpm too (test_bare_host installs it with rpm --root; nfpm ~0.85 CPU-s at level 1)
    "AGENT_DIST_KINDS": "tar deb rpm",
    "IOWATT_DIST_DIR": str(DIST),
    "AGENT_DIST_REUSE": "1",
    # the same files, gzip's fastest level: ~6 of the cold build's CPU-s (build.sh)
    "AGENT_DIST_GZIP_LEVEL": "1",
}


@pytest.fixture(scope="session")
def agent_bundle() -> tuple[Path, str]:
    """This tree's tarball for this machine in dist/agent and its top directory. `agent/packaging/
    build.sh` runs once per test process (under a lock: xdist's workers share dist/agent) with
    AGENT_DIST_REUSE=1: the files a build of the very same inputs left in the tools' cache are
    copied (the key is every file and tool the build reads; <0.5 CPU-s), anything changed builds
    the tarball and the .deb again (~55 CPU-s with the tools' cache warm, ADR 0036). A bundle an
    older tree left in dist/agent (`make up`, an earlier session) is never taken for this tree's:
    it would test the old agent and engine. Without the build tools a tarball already there is used
    as it is; without either the tests skip."""
    missing = missing_build_tools()
    if missing:
        tarball = _newest_tarball()
        if tarball is None:
            pytest.skip(f"no agent bundle in {DIST} and no tools to build one: {', '.join(missing)}")
        return tarball, tarball.name.removesuffix(".tar.gz")
    DIST.parent.mkdir(parents=True, exist_ok=True)
    with open(DIST.parent / ".agent-dist.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run(
            # under umask 077, as make up runs it: the bundle's modes must not follow the caller's
            ["sh", "-c", 'umask 077 && exec bash "$0"', str(REPO / "agent" / "packaging" / "build.sh")],
            env={**os.environ, **BUILD_ENV},
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            pytest.fail(f"agent/packaging/build.sh failed ({r.returncode}):\n{r.stderr[-3000:]}")
    tarball = _newest_tarball()
    assert tarball is not None
    return tarball, tarball.name.removesuffix(".tar.gz")
