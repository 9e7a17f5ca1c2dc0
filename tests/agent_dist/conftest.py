"""Agent bundles for the server to serve: real files with the names `make agent-dist` gives."""

import hashlib
import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.config import get_settings

FAKE_AGENT = """#!/bin/sh
# stands in for the frozen agent in the install script's tests (the real one: test_bundle.py)
case "$1" in --version) echo "iowatt-agent 9.9.9" ;; *) echo "$@" >> "$(dirname "$0")/calls" ;; esac
"""


def make_tarball(path: Path, top: str, agent: str = FAKE_AGENT) -> str:
    """A tarball laid out as the bundle (agent, engine, unit, README); returns its SHA-256."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text, mode in (
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
