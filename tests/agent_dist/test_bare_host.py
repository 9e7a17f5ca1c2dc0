"""The agent on a host without a compiler or Python, installed by the line the enrolment-token page
shows, against the real stack over its pinned TLS.

The host is a minimal Debian root file system (tests/agent_dist/rootfs.py: Essential packages plus
curl and passwd; no gcc, make or python), entered with chroot in a mount and pid namespace. In it:
`curl ... install.sh | sh -s -- ...` downloads the script and the bundle from the stack through a
TLS terminator (as Caddy fronts the API in compose) with curl's public-key pin, checks the SHA-256,
installs, adds the service user, writes the unit, enrols with the certificate's fingerprint; then
the agent is started as the unit would start it (its ExecStart and Environment lines: systemd does
not run in a chroot; the unit itself is checked by the host's `systemd-analyze verify`) and runs a
benchmark the stack queues. The .deb's maintainer scripts run there too (dpkg -i, dpkg --purge), and
the .rpm's scriptlets (this machine's rpm with --root: install, an upgrade, removal).
"""

import contextlib
import hashlib
import os
import platform
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import tarfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.agent_dist import service
from tests.agent.test_transport import make_cert
from tests.agent_dist import rootfs
from tests.agent_dist.conftest import DIST
from tests.stack import Stack, enrollment_token
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="session")
def bare_tar() -> Path:
    missing = rootfs.missing_tools()
    if missing:
        pytest.skip(f"a bare host needs {', '.join(missing)}")
    try:
        return rootfs.ensure_tar()
    except FileNotFoundError as e:
        pytest.skip(f"no cached root file system and no {e}")


@pytest.fixture
def bare_host(bare_tar: Path, tmp_path: Path) -> Iterator[Path]:
    root = rootfs.unpack(bare_tar, tmp_path / "host")
    try:
        yield root
    finally:
        rootfs.remove(root)


class TlsTerminator:
    """https://127.0.0.1:PORT in front of the stack's http:// port, as Caddy fronts the API."""

    def __init__(self, upstream_port: int, context: ssl.SSLContext) -> None:
        self.upstream_port, self.context = upstream_port, context
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        try:
            client = self.context.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):  # a client that refused the certificate (a pin test)
            raw.close()
            return
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))

        def pump(src: socket.socket, dst: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while data := src.recv(65536):
                    dst.sendall(data)
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join(timeout=120)
        client.close()
        upstream.close()

    def close(self) -> None:
        self.closed = True
        self.listener.close()


@pytest.fixture
def https_stack(live: Stack, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    cert = make_cert("iowatt")
    cert_path, key_path = cert.write(tmp_path, "server")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_path, key_path)
    port = int(live.url.rsplit(":", 1)[1])
    term = TlsTerminator(port, ctx)
    try:
        yield f"https://127.0.0.1:{term.port}", cert_path
    finally:
        term.close()


@pytest.mark.xdist_group("stack-c")
def test_the_served_line_installs_enrols_and_benchmarks_on_a_host_without_compiler_or_python(
    agent_bundle: tuple[Path, str],
    bare_host: Path,
    https_stack: tuple[str, Path],
    live: Stack,
    tmp_path: Path,
) -> None:
    root = bare_host
    for tool in rootfs.ABSENT:
        found = [d for d in ("usr/bin", "usr/sbin", "usr/local/bin") if (root / d / tool).exists()]
        assert not found, f"the bare host has {tool} in {found}"
    url, cert_path = https_stack
    # the pin and fingerprint the server publishes in GET /agent-dist when IOWATT_AGENT_TLS_CERT_FILE
    # names this certificate (the same function; test_install_script checks the manifest carries them)
    tls = service._tls_of(str(cert_path), cert_path.stat().st_mtime_ns)
    token = root / "root" / "iowatt-enroll.token"
    token.parent.mkdir(exist_ok=True)
    fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(enrollment_token(live.url, live.token))
    name = f"bare-{uuid.uuid4().hex[:8]}"
    # the UI's line (frontend: the enrolment-token page), without sudo: the chroot's shell is root's
    line = (
        f"curl -fsSL -k --pinnedpubkey {tls.pubkey_pin} {url}/api/v1/agent-dist/install.sh"
        f" | sh -s -- --server {url} --pin {tls.pubkey_pin} --fingerprint {tls.fingerprint_sha256}"
        f" --token-file /root/iowatt-enroll.token --name {name}"
    )
    r = rootfs.run(root, ["/bin/sh", "-c", line], timeout=300)
    assert r.returncode == 0, r.stderr
    tarball, top = agent_bundle
    assert f"downloading {tarball.name}" in r.stderr and "SHA-256 ok" in r.stderr
    assert "no systemd here: start the agent with /opt/iowatt-agent/iowatt-agent run" in r.stderr
    # what the script set up: the service user, the state directory (0700, enrolled), the unit
    assert "\niowatt-tpch:" in "\n" + (root / "etc/passwd").read_text()
    state = root / "var/lib/iowatt-agent"
    assert state.stat().st_mode & 0o777 == 0o700 and (state / "agent.json").is_file()
    unit = (root / "etc/systemd/system/iowatt-agent.service").read_text()
    # the unit, checked by the host's systemd with its paths pointing into the bare host
    host_unit = tmp_path / "unit" / "iowatt-agent.service"
    host_unit.parent.mkdir()
    host_unit.write_text(unit.replace("/opt/iowatt-agent/", f"{root}/opt/iowatt-agent/"))
    verified = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(host_unit)], capture_output=True, text=True
    )
    assert verified.returncode == 0 and not verified.stderr.strip(), verified.stderr
    exec_start = next(line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("ExecStart="))
    environment = [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("Environment=")]
    assert exec_start.startswith("/opt/iowatt-agent/iowatt-agent run --state-dir /var/lib/iowatt-agent")
    assert "IOWATT_ENGINE=/opt/iowatt-agent/iowatt-engine" in environment

    target = "/srv/bench"
    (root / target.lstrip("/")).mkdir(parents=True)
    added = rootfs.run(root, ["/usr/local/bin/iowatt-agent", "targets", "add", target], timeout=60)
    assert added.returncode == 0, added.stderr
    log = tmp_path / "agent.log"
    # as systemd would start it: the unit's environment, its ExecStart (a short long-poll for the test)
    argv = ["/usr/bin/env", *environment, *shlex.split(exec_start), "--lease-wait", "2"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            rootfs.command(root, argv),
            env=rootfs.ENV,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        with live.api() as api:
            me: dict[str, Any] = wait_until(
                lambda: next((a for a in api.get("/agents").json()["items"] if a["name"] == name), None),
                timeout=30,
                message="the bare host's agent is listed",
            )

            def reported() -> bool:  # its policy arrives with its first inventory
                policy = api.get(f"/agents/{me['id']}").json().get("policy") or {}
                return target in {t["path"] for t in policy.get("targets", [])}

            wait_until(reported, timeout=60, interval=0.3, message=lambda: log.read_text()[-2000:])
            job = {"name": "bare", "rw": "randread", "bs_bytes": 4096, "size_bytes": 4 << 20,
                   "ioengine": "io_uring", "iodepth": 4, "direct": False}  # fmt: skip
            body = {"agent_id": me["id"], "target_path": target, "workload": {"jobs": [job]}, "idle_s": 0}
            created = api.post("/runs", json=body)
            assert created.status_code == 201, created.text
        run = live.wait(created.json()["id"])
        assert run["status"] == "succeeded", (run["error"], log.read_text()[-2000:])
        (j,) = run["jobs"]
        assert j["read"]["io_bytes"] == 4 << 20 and j["read"]["total_ios"] == 1024
        with live.api() as api:
            result = api.get(f"/runs/{run['id']}/result").json()["engine_result"]
            agent = api.get(f"/agents/{me['id']}").json()
        assert result["jobs"][0]["job options"]["ioengine"] == "io_uring"
        assert agent["online"]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_the_deb_installs_and_purges_on_a_host_without_compiler_or_python(
    agent_bundle: tuple[Path, str], bare_host: Path
) -> None:
    debs = sorted(DIST.glob("iowatt-agent_*_*.deb"))
    if not debs:
        pytest.skip(f"no .deb in {DIST}: `make agent-dist` builds it (ADR 0036)")
    root = bare_host
    rootfs.install_deb(root, debs[-1])
    features = rootfs.run(root, ["/opt/iowatt-agent/iowatt-engine", "--help"], timeout=60)
    assert "io_uring" in features.stdout and "libaio" in features.stdout
    rootfs.purge_deb(root)


def _member_sha256(tarball: Path, name: str) -> str:
    """The SHA-256 of one file of the tarball, read as a stream (no copy on disk)."""
    with tarfile.open(tarball, "r|gz") as tar:
        for member in tar:
            if member.name == name:
                f = tar.extractfile(member)
                assert f is not None
                return hashlib.file_digest(f, "sha256").hexdigest()
    raise AssertionError(f"{name} not in {tarball}")


def test_the_rpm_installs_upgrades_and_removes_on_a_host_without_compiler_or_python(
    agent_bundle: tuple[Path, str], bare_host: Path
) -> None:
    """The .rpm (nfpm's, from the same tree as the .deb) on the bare host, installed by this machine's
    rpm into the root (rootfs.rpm: --root, --dbpath; --nodeps and why: rootfs.RPM_NODEPS): its
    scriptlets make the user and the state directory; an upgrade keeps the enrolment; removal
    takes the files and the unit and leaves the state (the credentials) and the user, as rpm leaves
    data (agent/packaging/rpm/postun)."""
    if not shutil.which("rpm"):
        pytest.skip("no rpm here (Debian's rpm package: make deps-system installs it)")
    tarball, top = agent_bundle
    rpm = rpm_of(tarball, top)
    if not rpm.is_file():
        pytest.skip(f"no {rpm.name} in {DIST}: build.sh packs it with nfpm, which needs go the first time")
    check_rpm(tarball, top, rpm, bare_host)


def rpm_of(tarball: Path, top: str) -> Path:
    """The .rpm build.sh packed beside the tarball, of the same version."""
    version = top.removeprefix("iowatt-agent-").removesuffix(f"-linux-{platform.machine()}")
    return tarball.with_name(f"iowatt-agent-{version}-1.{platform.machine()}.rpm")


def check_rpm(tarball: Path, top: str, rpm: Path, root: Path) -> None:
    """The .rpm on a bare host (test_old_glibc runs it on Debian 11 too)."""
    # the dependency --nodeps leaves to the test: the bundle's glibc floor (its MANIFEST.json, as the
    # server reads it), which the root's glibc meets
    st = tarball.stat()
    floor = service._glibc_floor(str(tarball), top, st.st_size, st.st_mtime_ns)
    requires = rootfs.rpm(root, "-qp", "--requires", str(rpm))
    assert requires.returncode == 0 and f"glibc >= {floor}" in requires.stdout.splitlines(), requires.stdout
    getconf = rootfs.run(root, ["getconf", "GNU_LIBC_VERSION"], timeout=60)
    have = getconf.stdout.split()[1]
    assert tuple(map(int, have.split("."))) >= tuple(map(int, floor.split("."))), (have, floor)

    rootfs.install_rpm(root, rpm)
    # the same build as the tarball (not an older .rpm left in dist/agent): the same engine, which runs
    engine = root / "opt/iowatt-agent/iowatt-engine"
    assert hashlib.sha256(engine.read_bytes()).hexdigest() == _member_sha256(tarball, f"{top}/iowatt-engine")
    features = rootfs.run(root, ["/opt/iowatt-agent/iowatt-engine", "--help"], timeout=60)
    assert "io_uring" in features.stdout and "libaio" in features.stdout
    enrolled = root / "var/lib/iowatt-agent/agent.json"
    enrolled.write_text('{"agent_id": "kept"}')

    rootfs.install_rpm(root, rpm, upgrade=True)
    assert enrolled.read_text() == '{"agent_id": "kept"}'

    erased = rootfs.rpm(root, "-e", "iowatt-agent")
    assert erased.returncode == 0, erased.stdout + erased.stderr
    assert rootfs.rpm(root, "-q", "iowatt-agent").returncode != 0
    assert not (root / "opt/iowatt-agent").exists() and not (root / "usr/bin/iowatt-agent").is_symlink()
    assert not (root / "usr/lib/systemd/system/iowatt-agent.service").exists()
    assert enrolled.read_text() == '{"agent_id": "kept"}'
    assert "\niowatt-tpch:" in "\n" + (root / "etc/passwd").read_text()
