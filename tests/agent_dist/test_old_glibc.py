"""The bundle `make agent-dist` builds for older hosts (frozen in a Debian 11 root: ADR 0036), run on
Debian 11's glibc 2.31; every file of it needs glibc 2.28 at most (RHEL 8).

`make agent-dist-check` runs this (IOWATT_AGENT_DIST_CHECK=1) after `make agent-dist`; `make test`
does not: the bundle it checks takes a CPython and OpenSSL build in a Debian 11 build root on a
machine without the cache (minutes of CPU, over the suite's budget), and the suite's own bundle is
frozen with the host's glibc (test_bundle holds it, and every ELF file of it, to its floor).

What it proves, on the tarball in dist/agent:
- every ELF file (the agent, libpython, each library and extension module, the engine) needs
  GLIBC_2.28 at most (RHEL 8's glibc: by symbol versions only, no 2.28 root file system can be made
  here), no library search path leaves the bundle, no library is
  expected from the host but glibc's (agent/packaging/bundle_check.py, as build.sh ran it);
- in a bare Debian 11 root file system (tests/agent_dist/rootfs.py, bullseye's Essential packages:
  glibc 2.31, no Python, no compiler), entered with chroot in a mount and pid namespace of its
  own: `iowatt-agent --version`; `iowatt-agent bench` of 1,024 random 4 KiB reads through io_uring
  with the bundle's engine; a TLS handshake with the bundle's OpenSSL (`enroll --fingerprint` with
  a wrong fingerprint against a TLS listener: it reads the certificate, prints its fingerprint and
  refuses); the .deb's maintainer scripts (dpkg -i: the user, the state directory, the unit;
  dpkg --purge); the .rpm's scriptlets (rpm --root: install, upgrade, removal; test_bare_host's
  check); and the served line, as test_bare_host runs it on Debian 12 (the same test body):
  curl fetches install.sh and the bundle from the shared stack over a pinned TLS connection, the
  script installs and enrols, the agent runs a benchmark the stack queues. The stack serves
  dist/agent: that test needs make agent-dist's bundle there (it fails on the suite's host-frozen one).
"""

import contextlib
import json
import os
import platform
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.test_transport import make_cert
from tests.agent_dist import rootfs
from tests.agent_dist import test_bare_host as debian_12
from tests.agent_dist.conftest import DIST, bundle_check
from tests.agent_dist.test_bare_host import https_stack  # noqa: F401 (a fixture: the TLS terminator)
from tests.stack import Stack

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1500),
    pytest.mark.skipif(
        os.environ.get("IOWATT_AGENT_DIST_CHECK") != "1",
        reason="make agent-dist-check runs it (IOWATT_AGENT_DIST_CHECK=1), on make agent-dist's bundle",
    ),
]

AGENT_GLIBC = (2, 28)
ENGINE_GLIBC = (2, 28)


def dist_dir() -> Path:
    """dist/agent, or IOWATT_DIST_DIR: another directory build.sh wrote to."""
    return Path(os.environ.get("IOWATT_DIST_DIR") or DIST)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tarball for this machine, unpacked."""
    dist = dist_dir()
    found = sorted(dist.glob(f"iowatt-agent-*-linux-{platform.machine()}.tar.gz"))
    if not found:
        pytest.fail(f"no bundle in {dist}: make agent-dist builds it")
    tarball = found[-1]
    out = tmp_path_factory.mktemp("bundle")
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(out)], check=True)
    return out / tarball.name.removesuffix(".tar.gz")


@pytest.fixture(scope="module")
def old_host(tmp_path_factory: pytest.TempPathFactory, bundle: Path) -> Iterator[Path]:
    """A bare Debian 11 host with the bundle in /opt/iowatt-agent."""
    missing = rootfs.missing_tools()
    if missing:
        pytest.fail(f"a Debian 11 root file system needs {', '.join(missing)}")
    root = rootfs.unpack(rootfs.ensure_tar(rootfs.OLD_SUITE), tmp_path_factory.mktemp("old") / "host")
    try:
        shutil.copytree(bundle, root / "opt" / "iowatt-agent", symlinks=True)
        yield root
    finally:
        rootfs.remove(root)


def test_every_elf_file_needs_glibc_2_28_at_most(bundle: Path) -> None:
    elves = bundle_check.inspect(bundle)
    assert len(elves) > 20 and any(e.path.name.startswith("libpython3.11.so") for e in elves)
    assert bundle_check.findings(bundle, elves, glibc=AGENT_GLIBC, engine_glibc=ENGINE_GLIBC) == []
    newest = max(e.newest for e in elves if e.newest and e.path.name != "iowatt-engine")
    print(f"{len(elves)} ELF files; the agent needs {bundle_check.fmt(newest)}")
    # the floor the bundle states (the server's install script holds hosts to it): what was found
    record = json.loads((bundle / bundle_check.MANIFEST).read_text())
    assert record == bundle_check.manifest(elves), record
    assert bundle_check.parse_version(record["glibc"]) <= max(AGENT_GLIBC, ENGINE_GLIBC), record


def test_on_debian_11_it_starts_benchmarks_and_speaks_tls(old_host: Path, tmp_path: Path) -> None:
    root = old_host
    libc = rootfs.run(root, ["/usr/bin/ldd", "--version"], timeout=60)
    assert "2.31" in libc.stdout.splitlines()[0], libc.stdout  # bullseye's glibc
    for tool in rootfs.ABSENT:
        assert not any((root / d / tool).exists() for d in ("usr/bin", "usr/local/bin")), tool
    agent = "/opt/iowatt-agent/iowatt-agent"

    version = rootfs.run(root, [agent, "--version"], timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("iowatt-agent "), version.stderr

    (root / "srv" / "bench").mkdir(parents=True)
    state = "/var/lib/iowatt-agent"
    added = rootfs.run(root, [agent, "targets", "add", "/srv/bench", "--state-dir", state], timeout=60)
    assert added.returncode == 0, added.stderr
    bench = rootfs.run(
        root,
        [agent, "bench", "--target", "/srv/bench", "--rw", "randread", "--bs", "4k", "--size", "4m",
         "--ioengine", "io_uring", "--iodepth", "4", "--direct", "0", "--json"],
        timeout=120,
    )  # fmt: skip
    assert bench.returncode == 0, bench.stderr[-2000:]
    (job,) = json.loads(bench.stdout)["jobs"]
    assert job["read"]["io_bytes"] == 4 * 1024 * 1024 and job["read"]["total_ios"] == 1024
    assert job["job options"]["ioengine"] == "io_uring"

    # TLS through the bundle's OpenSSL: the certificate is read (a handshake) and its fingerprint
    # printed; the wrong one given is refused before anything is sent
    cert = make_cert("iowatt")
    cert_path, key_path = cert.write(tmp_path, "server")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_path, key_path)
    with _tls_listener(ctx) as port:
        token = root / "root" / "token"
        token.parent.mkdir(exist_ok=True)
        token.write_text("not-a-token\n")
        token.chmod(0o600)
        wrong = "SHA256:" + ":".join(["00"] * 32)
        enrolled = rootfs.run(
            root,
            [agent, "enroll", "--server", f"https://127.0.0.1:{port}", "--fingerprint", wrong,
             "--token-file", "/root/token", "--state-dir", "/var/lib/iowatt-enrol", "--name", "old-glibc"],
            timeout=60,
        )  # fmt: skip
    pairs = [cert.sha256[i : i + 2].upper() for i in range(0, 64, 2)]
    assert enrolled.returncode != 0
    assert "SHA256:" + ":".join(pairs) in enrolled.stderr, enrolled.stderr
    assert "does not match --fingerprint" in enrolled.stderr, enrolled.stderr


@contextlib.contextmanager
def _tls_listener(ctx: ssl.SSLContext) -> Iterator[int]:
    """127.0.0.1:PORT completing TLS handshakes and closing (the chroot shares the network)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:  # shut down: the test is over
                return
            with contextlib.suppress(OSError, ssl.SSLError):
                raw.settimeout(10)
                ctx.wrap_socket(raw, server_side=True).close()
            raw.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield listener.getsockname()[1]
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        t.join(timeout=5)
        listener.close()


def test_on_debian_11_the_deb_installs_and_purges(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The .deb of the same build, on its own bare Debian 11 host (test_bare_host's check on 12)."""
    debs = sorted(dist_dir().glob("iowatt-agent_*_*.deb"))
    if not debs:
        pytest.fail(f"no .deb in {dist_dir()}: make agent-dist builds it")
    root = rootfs.unpack(rootfs.ensure_tar(rootfs.OLD_SUITE), tmp_path_factory.mktemp("deb") / "host")
    try:
        rootfs.install_deb(root, debs[-1])
        rootfs.purge_deb(root)
    finally:
        rootfs.remove(root)


def test_on_debian_11_the_rpm_installs_upgrades_and_removes(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The .rpm of the same build, on its own bare Debian 11 host (test_bare_host's check on 12: its
    `glibc >= 2.28` against glibc 2.31, the scriptlets, an upgrade, removal)."""
    if not shutil.which("rpm"):
        pytest.fail("no rpm here (Debian's rpm package: make deps-system installs it)")
    found = sorted(dist_dir().glob(f"iowatt-agent-*-linux-{platform.machine()}.tar.gz"))
    if not found:
        pytest.fail(f"no bundle in {dist_dir()}: make agent-dist builds it")
    tarball = found[-1]
    top = tarball.name.removesuffix(".tar.gz")
    rpm = debian_12.rpm_of(tarball, top)
    if not rpm.is_file():
        pytest.fail(f"no {rpm.name} in {dist_dir()}: make agent-dist builds it (nfpm)")
    root = rootfs.unpack(rootfs.ensure_tar(rootfs.OLD_SUITE), tmp_path_factory.mktemp("rpm") / "host")
    try:
        debian_12.check_rpm(tarball, top, rpm, root)
    finally:
        rootfs.remove(root)


@pytest.mark.xdist_group("stack-c")
def test_on_debian_11_the_served_line_installs_enrols_and_benchmarks(
    https_stack: tuple[str, Path],  # noqa: F811 (the fixture imported above)
    live: Stack,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
) -> None:
    found = sorted(DIST.glob(f"iowatt-agent-*-linux-{platform.machine()}.tar.gz"))
    if not found:
        pytest.fail(f"no bundle in {DIST} for the stack to serve: make agent-dist builds it")
    tarball = found[-1]
    root = rootfs.unpack(rootfs.ensure_tar(rootfs.OLD_SUITE), tmp_path_factory.mktemp("line") / "host")
    try:
        debian_12.test_the_served_line_installs_enrols_and_benchmarks_on_a_host_without_compiler_or_python(
            agent_bundle=(tarball, tarball.name.removesuffix(".tar.gz")),
            bare_host=root,
            https_stack=https_stack,
            live=live,
            tmp_path=tmp_path,
        )
    finally:
        rootfs.remove(root)
