"""GET /api/v1/agent-dist: the bundles with the SHA-256 of what is served, the install script, and
no file but a bundle, whatever the name asks for (who may call them: tests/security/test_authz_matrix.py)."""

import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.agent_dist import throttle
from backend.auth.throttle import get_redis
from backend.config import get_settings

BASE = "/api/v1/agent-dist"
TAR = "iowatt-agent-9.9.9-linux-x86_64.tar.gz"
RPM = "iowatt-agent-9.9.9-1.x86_64.rpm"


@pytest.fixture(autouse=True)
def _uncounted(db_url: str) -> Iterator[None]:
    """Every test starts with the in-process client's address uncounted (the routes are throttled).
    `db_url` points the settings at this process's Redis: a test without the client (the limit's
    setting) that ran first in its process reached for the default address and was refused."""
    get_redis().delete(throttle.key_for("testclient"))
    yield
    get_redis().delete(throttle.key_for("testclient"))


def test_the_manifest_lists_each_bundle_with_the_sha256_of_the_file_served(
    client: TestClient, dist_dir: Path
) -> None:
    (dist_dir / "notes.txt").write_text("not a bundle")
    (dist_dir / "iowatt-agent-9.9.8-linux-x86_64.tar.gz").symlink_to("/etc/hostname")  # a link: not served
    # the .rpm make up and compose build beside the .deb (its lead's magic, then bytes), with its
    # .sha256 as build.sh writes it
    rpm = b"\xed\xab\xee\xdb" + os.urandom(64)
    (dist_dir / RPM).write_bytes(rpm)
    (dist_dir / f"{RPM}.sha256").write_text(f"{hashlib.sha256(rpm).hexdigest()}  {RPM}\n")
    r = client.get(BASE)
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["version"] == "9.9.9"
    assert doc["install_script_url"] == f"{BASE}/install.sh"
    assert doc["tls"] is None
    by_name = {b["name"]: b for b in doc["bundles"]}
    assert set(by_name) == {TAR, "iowatt-agent_9.9.9_amd64.deb", RPM}
    assert by_name["iowatt-agent_9.9.9_amd64.deb"]["arch"] == "x86_64"
    assert by_name["iowatt-agent_9.9.9_amd64.deb"]["kind"] == "deb"
    assert (by_name[RPM]["kind"], by_name[RPM]["arch"], by_name[RPM]["version"]) == ("rpm", "x86_64", "9.9.9")
    # the glibc the tarball needs, read from its MANIFEST.json (the .deb and the .rpm state it as
    # their dependency)
    assert by_name[TAR]["glibc_floor"] == "2.28"
    assert by_name["iowatt-agent_9.9.9_amd64.deb"]["glibc_floor"] is None
    assert by_name[RPM]["glibc_floor"] is None
    for name, b in by_name.items():
        served = client.get(b["url"])
        assert served.status_code == 200
        assert hashlib.sha256(served.content).hexdigest() == b["sha256"]
        assert b["size_bytes"] == len(served.content) == (dist_dir / name).stat().st_size
    assert client.get(by_name[RPM]["url"]).headers["content-type"] == "application/x-rpm"
    for name in (TAR, RPM):
        side = client.get(f"{BASE}/files/{name}.sha256")
        assert side.status_code == 200 and side.text.split() == [by_name[name]["sha256"], name]
    # a rebuilt bundle is hashed again
    (dist_dir / TAR).write_bytes(b"rebuilt")
    os.utime(dist_dir / TAR, ns=(1, 1))
    again = {b["name"]: b for b in client.get(BASE).json()["bundles"]}
    assert again[TAR]["sha256"] == hashlib.sha256(b"rebuilt").hexdigest()
    assert again[TAR]["glibc_floor"] is None  # no tarball, no manifest: no floor, never a 500


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
    assert f"  x86_64) bundle_name='{TAR}'; bundle_sha256='{sha}'; bundle_glibc='2.28' ;;\n" in script
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
        "tls_ca": None,
    }


def test_the_routes_are_throttled_per_client_address(
    client: TestClient, dist_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past IOWATT_AGENT_DIST_REQUESTS_PER_MIN in the window, every route answers 429 with
    Retry-After, found or not (a name guessed in a loop is counted too), before reading the disk."""
    monkeypatch.setattr(get_settings(), "agent_dist_requests_per_min", 5)
    paths = [BASE, f"{BASE}/install.sh", f"{BASE}/files/{TAR}", f"{BASE}/files/nope.tar.gz", f"{BASE}/ca.pem"]
    assert [client.get(p).status_code for p in paths] == [200, 200, 200, 404, 404]
    for p in paths:
        r = client.get(p)
        assert r.status_code == 429, (p, r.status_code)
        assert r.json()["error"] == "agent_dist_throttled"
        assert 1 <= int(r.headers["Retry-After"]) <= 60
    # the shared links' window is another count
    assert get_redis().get("iowatt:shared-rate:testclient") is None
    get_redis().delete(throttle.key_for("testclient"))
    assert client.get(f"{BASE}/files/{TAR}").status_code == 200


def test_the_limit_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    from backend.config import Settings

    monkeypatch.delenv("IOWATT_AGENT_DIST_REQUESTS_PER_MIN", raising=False)
    assert Settings().agent_dist_requests_per_min == 60
    monkeypatch.setenv("IOWATT_AGENT_DIST_REQUESTS_PER_MIN", "600")
    assert Settings().agent_dist_requests_per_min == 600
    for bad in ("0", "many"):
        monkeypatch.setenv("IOWATT_AGENT_DIST_REQUESTS_PER_MIN", bad)
        with pytest.raises(ValidationError, match="agent_dist_requests_per_min"):
            Settings()


def test_a_missing_or_unreadable_certificate_gives_no_pins_not_an_error(
    client: TestClient, dist_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compose passes IOWATT_AGENT_TLS_CERT_FILE as `${VAR:-}`: empty is no certificate; a
    directory, a missing file or a file that is not PEM gives the line without pins."""
    from backend.config import Settings

    monkeypatch.setenv("IOWATT_AGENT_TLS_CERT_FILE", "")
    assert Settings().agent_tls_cert_file is None
    (tmp_path / "garbage.pem").write_text("not a certificate")
    for bad in (str(tmp_path), str(tmp_path / "missing.pem"), str(tmp_path / "garbage.pem")):
        monkeypatch.setenv("IOWATT_AGENT_TLS_CERT_FILE", bad)
        get_settings.cache_clear()
        r = client.get(BASE)
        assert r.status_code == 200 and r.json()["tls"] is None, (bad, r.text)
    get_settings.cache_clear()


def test_the_servers_ca_is_served_as_its_certificates_alone_with_their_sha256(
    client: TestClient, dist_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """IOWATT_AGENT_TLS_CA_FILE (Caddy's internal root in compose): GET ca.pem serves its CA
    certificates written out afresh (a key kept in the same file is never served), and the manifest
    carries the SHA-256 of exactly those bytes; a leaf, a file without a certificate or no setting
    gives no CA and 404 agent_ca_not_configured."""
    from cryptography import x509

    from tests.agent.test_transport import make_cert

    assert client.get(f"{BASE}/ca.pem").json()["error"] == "agent_ca_not_configured"
    root, intermediate = make_cert("iowatt root", ca=True), make_cert("iowatt intermediate", ca=True)
    ca_path, key_path = root.write(tmp_path, "root", chain=(intermediate,))
    with ca_path.open("ab") as f:  # an operator's slip: the CA's key in the same file
        f.write(key_path.read_bytes())
    monkeypatch.setenv("IOWATT_AGENT_TLS_CA_FILE", str(ca_path))
    get_settings.cache_clear()
    ca = client.get(BASE).json()["tls_ca"]
    served = client.get(ca["url"])
    assert served.status_code == 200 and served.headers["content-type"] == "application/x-pem-file"
    assert served.content == root.pem + intermediate.pem and b"PRIVATE KEY" not in served.content
    assert ca["sha256"] == hashlib.sha256(served.content).hexdigest()
    assert ca["fingerprint_sha256"].replace(":", "").lower() == "sha256" + root.sha256
    assert ca["subject"] == "CN=iowatt root" and ca["url"] == f"{BASE}/ca.pem"
    assert [c.subject for c in x509.load_pem_x509_certificates(served.content)] == [
        root.cert.subject,
        intermediate.cert.subject,
    ]
    leaf_path, _ = make_cert("iowatt.example", issuer=root).write(tmp_path, "leaf")
    (tmp_path / "garbage.pem").write_text("not a certificate")
    for bad in (
        str(leaf_path),
        str(tmp_path / "garbage.pem"),
        str(tmp_path / "missing.pem"),
        "/dev/null",
        "",
    ):
        monkeypatch.setenv("IOWATT_AGENT_TLS_CA_FILE", bad)
        get_settings.cache_clear()
        assert client.get(BASE).json()["tls_ca"] is None, bad
        r = client.get(f"{BASE}/ca.pem")
        assert r.status_code == 404 and r.json()["error"] == "agent_ca_not_configured", bad
    get_settings.cache_clear()
