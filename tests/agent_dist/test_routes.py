"""GET /api/v1/agent-dist: the bundles with the SHA-256 of what is served, the install script, and
no file but a bundle, whatever the name asks for (who may call them: tests/security/test_authz_matrix.py)."""

import hashlib
import os
import subprocess
from pathlib import Path

from fastapi.testclient import TestClient

BASE = "/api/v1/agent-dist"
TAR = "iowatt-agent-9.9.9-linux-x86_64.tar.gz"


def test_the_manifest_lists_each_bundle_with_the_sha256_of_the_file_served(
    client: TestClient, dist_dir: Path
) -> None:
    (dist_dir / "notes.txt").write_text("not a bundle")
    (dist_dir / "iowatt-agent-9.9.8-linux-x86_64.tar.gz").symlink_to("/etc/hostname")  # a link: not served
    r = client.get(BASE)
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["version"] == "9.9.9"
    assert doc["install_script_url"] == f"{BASE}/install.sh"
    assert doc["tls"] is None
    by_name = {b["name"]: b for b in doc["bundles"]}
    assert set(by_name) == {TAR, "iowatt-agent_9.9.9_amd64.deb"}
    assert by_name["iowatt-agent_9.9.9_amd64.deb"]["arch"] == "x86_64"
    assert by_name["iowatt-agent_9.9.9_amd64.deb"]["kind"] == "deb"
    for name, b in by_name.items():
        served = client.get(b["url"])
        assert served.status_code == 200
        assert hashlib.sha256(served.content).hexdigest() == b["sha256"]
        assert b["size_bytes"] == len(served.content) == (dist_dir / name).stat().st_size
    side = client.get(f"{BASE}/files/{TAR}.sha256")
    assert side.status_code == 200 and side.text.split()[0] == by_name[TAR]["sha256"]
    # a rebuilt bundle is hashed again
    (dist_dir / TAR).write_bytes(b"rebuilt")
    os.utime(dist_dir / TAR, ns=(1, 1))
    again = {b["name"]: b for b in client.get(BASE).json()["bundles"]}
    assert again[TAR]["sha256"] == hashlib.sha256(b"rebuilt").hexdigest()


def test_no_name_reaches_a_file_that_is_not_a_bundle(
    client: TestClient, dist_dir: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret").write_text("s3cret")
    (dist_dir / "notes.txt").write_text("not a bundle")
    (dist_dir / "iowatt-agent-1.0-linux-x86_64.tar.gz").symlink_to(tmp_path / "secret")
    (dist_dir / "iowatt-agent-2.0-linux-x86_64.tar.gz").mkdir()
    for name in (
        "notes.txt",
        "..%2Fsecret",
        "..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        f"..%2Fdist%2F{TAR}",
        "iowatt-agent-1.0-linux-x86_64.tar.gz",  # a symbolic link
        "iowatt-agent-2.0-linux-x86_64.tar.gz",  # a directory
        "iowatt-agent-9.9.9-linux-x86_64.tar.gz%00",
        "iowatt-agent-9.9.9-linux-sparc.tar.gz",
        f"{TAR}.sha256.sha256",
    ):
        r = client.get(f"{BASE}/files/{name}")
        assert r.status_code in (404, 422), (name, r.status_code)
        assert "s3cret" not in r.text and "root:" not in r.text


def test_the_script_carries_the_newest_tarball_and_its_hash_and_is_valid_sh(
    client: TestClient, dist_dir: Path
) -> None:
    from tests.agent_dist.conftest import make_tarball

    old = make_tarball(dist_dir / "iowatt-agent-9.9.8-linux-x86_64.tar.gz", "iowatt-agent-9.9.8-linux-x86_64")
    sha = hashlib.sha256((dist_dir / TAR).read_bytes()).hexdigest()
    r = client.get(f"{BASE}/install.sh")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/x-shellscript")
    script = r.text
    assert f"  x86_64) bundle_name='{TAR}'; bundle_sha256='{sha}' ;;\n" in script
    assert old not in script and "aarch64) bundle_name" not in script
    assert "installer, version 9.9.9" in script
    subprocess.run(["sh", "-n"], input=script.encode(), check=True)
    # without bundles it is still valid sh, and says so when run
    for f in dist_dir.iterdir():
        f.unlink()
    empty = client.get(f"{BASE}/install.sh").text
    subprocess.run(["sh", "-n"], input=empty.encode(), check=True)
    assert "bundle_name='" not in empty
    assert client.get(BASE).json() == {
        "version": None,
        "bundles": [],
        "install_script_url": f"{BASE}/install.sh",
        "tls": None,
    }
