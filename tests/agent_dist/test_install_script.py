"""The served install script, run for real against a small HTTP(S) server holding real bundle
files: it installs what matches the SHA-256 it carries and refuses anything else before unpacking,
checks the server's public key when given --pin, and refuses what it must refuse (no stack: the
installed agent enrolling on the shared stack is test_bundle.py's)."""

import http.server
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from backend.agent_dist import service
from backend.config import get_settings
from tests.agent.test_transport import make_cert
from tests.agent_dist.conftest import make_tarball

TAR = "iowatt-agent-9.9.9-linux-x86_64.tar.gz"
# no repository venv, no pyenv: what a bare host has
BARE_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}


@contextmanager
def serve(directory: Path, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """GET /api/v1/agent-dist/files/NAME from `directory`, on loopback."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            prefix = "/api/v1/agent-dist/files/"
            name = self.path.removeprefix(prefix)
            path = directory / name
            if not self.path.startswith(prefix) or "/" in name or not path.is_file():
                self.send_error(404)
                return
            body = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def run_script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "install.sh"
    script.write_text(service.install_script())
    opt, bin_dir, state = tmp_path / "opt" / "iowatt-agent", tmp_path / "bin", tmp_path / "state"
    where = ["--prefix", str(opt), "--bin-dir", str(bin_dir), "--state-dir", str(state)]
    return subprocess.run(
        ["sh", str(script), *where, *args],
        env=BARE_ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_installs_the_bundle_whose_sha256_it_carries(dist_dir: Path, tmp_path: Path) -> None:
    with serve(dist_dir) as url:
        r = run_script(tmp_path, "--server", url, "--no-service", "--no-enroll")
    assert r.returncode == 0, r.stderr
    assert "SHA-256 ok" in r.stderr
    opt = tmp_path / "opt" / "iowatt-agent"
    assert (opt / "iowatt-engine").is_file() and (opt / "iowatt-agent.service").is_file()
    assert (tmp_path / "bin" / "iowatt-agent").resolve() == opt / "iowatt-agent"
    version = subprocess.run([tmp_path / "bin" / "iowatt-agent", "--version"], capture_output=True, text=True)
    assert version.stdout == "iowatt-agent 9.9.9\n"
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700


def test_a_tampered_bundle_is_refused_before_anything_is_unpacked(dist_dir: Path, tmp_path: Path) -> None:
    script_first = service.install_script()  # the hash of the bundle as built
    (tmp_path / "install.sh").write_text(script_first)
    with (dist_dir / TAR).open("ab") as f:
        f.write(b"\0")  # one byte more on the way (a mirror, a proxy, a disk)
    get_settings.cache_clear()
    with serve(dist_dir) as url:
        r = subprocess.run(
            ["sh", str(tmp_path / "install.sh"), "--server", url, "--no-service", "--no-enroll",
             "--prefix", str(tmp_path / "opt" / "iowatt-agent"), "--bin-dir", str(tmp_path / "bin")],
            env=BARE_ENV, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert r.returncode == 3, r.stderr
    assert "SHA-256 mismatch" in r.stderr and "nothing was installed" in r.stderr
    assert not (tmp_path / "opt").exists() and not (tmp_path / "bin").exists()


def test_with_a_pin_the_downloads_check_the_servers_public_key(
    dist_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, other = make_cert("iowatt"), make_cert("impostor")
    cert_path, key_path = served.write(tmp_path, "server")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_path, key_path)
    monkeypatch.setenv("IOWATT_AGENT_TLS_CERT_FILE", str(cert_path))
    get_settings.cache_clear()
    tls = service.server_tls()
    assert tls is not None
    # the fingerprint is what `openssl x509 -fingerprint -sha256` prints (and enroll --fingerprint takes)
    assert tls.fingerprint_sha256.replace(":", "").lower() == "sha256" + served.sha256
    other_path, _ = other.write(tmp_path, "other")
    monkeypatch.setenv("IOWATT_AGENT_TLS_CERT_FILE", str(other_path))
    get_settings.cache_clear()
    wrong = service.server_tls()
    assert wrong is not None and wrong.pubkey_pin != tls.pubkey_pin
    with serve(dist_dir, ctx) as url:
        no = ("--no-service", "--no-enroll")
        refused = run_script(tmp_path, "--server", url, "--pin", wrong.pubkey_pin, *no)
        assert refused.returncode == 4, refused.stderr
        assert not (tmp_path / "opt").exists()
        ok = run_script(tmp_path, "--server", url, "--pin", tls.pubkey_pin, "--no-service", "--no-enroll")
        assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "opt" / "iowatt-agent" / "iowatt-agent").is_file()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--server", "http://iowatt.example", "--no-enroll"], "plain http only to loopback"),
        (["--server", "https://iowatt.example", "--token", "x"], "--token is refused"),
        (["--server", "https://iowatt.example"], "--token-file FILE is required"),
        (["--server", "https://iowatt.example", "--no-enroll", "--pin", "AB:CD"], "--pin must look like"),
        (["--server", "https://iowatt.example", "--no-enroll", "--prefix", "opt"], "absolute paths"),
        (["--server", "https://iowatt.example", "--no-enroll", "--prefix", "/"], "refusing /"),
        (["--server", "https://iowatt.example", "--no-enroll", "--bin-dir", "/x|y"], "only letters"),
        (["--server", "http://127.0.0.1:1", "--no-enroll", "--pin", "sha256//x"], "needs an https"),
        (["--token-file", "/dev/null"], "--server URL is required"),
    ],
)
def test_refusals(dist_dir: Path, tmp_path: Path, args: list[str], says: str) -> None:
    script = tmp_path / "install.sh"
    script.write_text(service.install_script())
    r = subprocess.run(["sh", str(script), *args], env=BARE_ENV, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, r.stderr
    assert says in r.stderr


FAKE_GETCONF = (
    '#!/bin/sh\n[ "$1" = GNU_LIBC_VERSION ] && [ -n "$GLIBC" ] && echo "glibc $GLIBC" && exit 0\nexit 1\n'
)
FAKE_LDD = '#!/bin/sh\necho "$LDD_SAYS" >&2\nexit 1\n'


def test_a_host_with_an_older_glibc_than_the_bundle_needs_is_refused_before_the_download(
    dist_dir: Path, tmp_path: Path
) -> None:
    """The floor is the bundle's MANIFEST.json (build.sh's check writes it; the server puts it in the
    script); the host's glibc is getconf's, else ldd's; either way refused naming both, exit 2,
    before anything is downloaded or installed."""
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    for name, text in (("getconf", FAKE_GETCONF), ("ldd", FAKE_LDD)):
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    host = subprocess.run(["getconf", "GNU_LIBC_VERSION"], capture_output=True, text=True, check=True)
    have = host.stdout.split()[1]
    newer = f"{int(have.split('.')[0])}.{int(have.split('.')[1]) + 1}"
    make_tarball(dist_dir / TAR, TAR.removesuffix(".tar.gz"), glibc=newer)
    get_settings.cache_clear()
    cases = [
        ({}, f"this host has glibc {have}; {TAR} needs glibc {newer} or newer"),  # this host's getconf
        ({"GLIBC": "2.17"}, f"this host has glibc 2.17; {TAR} needs glibc {newer} or newer"),
        ({"GLIBC": "", "LDD_SAYS": "ldd (GNU libc) 2.27"}, "this host has glibc 2.27;"),  # no getconf answer
        ({"GLIBC": "", "LDD_SAYS": "musl libc (x86_64)"}, "glibc version cannot be told"),
    ]
    with serve(dist_dir) as url:
        for extra, says in cases:
            env = {**BARE_ENV, **extra}
            if extra:
                env["PATH"] = f"{fakes}:{env['PATH']}"
            script = tmp_path / "install.sh"
            script.write_text(service.install_script())
            r = subprocess.run(
                ["sh", str(script), "--server", url, "--no-service", "--no-enroll",
                 "--prefix", str(tmp_path / "opt" / "iowatt-agent"), "--bin-dir", str(tmp_path / "bin")],
                env=env, capture_output=True, text=True, timeout=30,
            )  # fmt: skip
            assert r.returncode == 2, (extra, r.stderr)
            assert says in r.stderr and "nothing was installed" in r.stderr, (extra, r.stderr)
            assert "downloading" not in r.stderr
            assert not (tmp_path / "opt").exists() and not (tmp_path / "bin").exists()
    # a host at the floor exactly installs (one above it: the first test, 2.28)
    make_tarball(dist_dir / TAR, TAR.removesuffix(".tar.gz"), glibc=have)
    with serve(dist_dir) as url:
        ok = run_script(tmp_path, "--server", url, "--no-service", "--no-enroll")
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("fraction", [0.3, 0.6, 0.95])
def test_a_script_cut_short_runs_nothing(dist_dir: Path, tmp_path: Path, fraction: float) -> None:
    """curl | sh: a download cut off mid-way must not run the half it got."""
    text = service.install_script()
    cut = text[: int(len(text) * fraction)]
    opt = tmp_path / "opt" / "iowatt-agent"
    with serve(dist_dir) as url:
        r = subprocess.run(
            ["sh", "-s", "--", "--server", url, "--no-service", "--no-enroll", "--prefix", str(opt),
             "--bin-dir", str(tmp_path / "bin"), "--state-dir", str(tmp_path / "state")],
            input=cut, env=BARE_ENV, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    assert "downloading" not in r.stderr
    assert not (tmp_path / "opt").exists() and not (tmp_path / "state").exists()
