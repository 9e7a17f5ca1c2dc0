"""The install line through a real Caddy with its internal CA (compose's deploy/Caddyfile: `tls
internal`), whose leaf certificates renew every few hours, so the line trusts Caddy's root instead of
pinning a leaf (ADR 0036): it downloads the CA without trust, stops unless its SHA-256 is the one the
server's manifest gives (what the enrolment-token page prints), then fetches the script and the bundle
with `curl --cacert` and enrols with `--ca-file`, through the proxy, against the shared stack.

The agent-dist routes come from this tree's app with IOWATT_AGENT_TLS_CA_FILE naming Caddy's root
(uvicorn in a thread of the test: the shared stack's server was started without it); Caddy sends every
other request, the enrolment among them, to the shared stack.
"""

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn

from backend.agent_dist import throttle
from backend.auth.throttle import get_redis
from backend.config import get_settings
from tests.agent_dist.conftest import make_tarball
from tests.agent_dist.test_install_script import BARE_ENV
from tests.services import free_port
from tests.stack import Stack, enrollment_token
from tests.waiting import wait_until

CADDY = shutil.which("caddy")
pytestmark = pytest.mark.skipif(
    CADDY is None, reason="caddy is not installed (scripts/install-ops-test-tools.sh)"
)

# the bundle's agent: --version answered by the shell (the script asks once), anything else is this
# tree's agent, so the enrolment is the real one
AGENT = f"""#!/bin/sh
case "$1" in
  --version) echo "iowatt-agent 9.9.9" ;;
  *) exec {Path(sys.executable).parent}/iowatt-agent "$@" ;;
esac
"""


@dataclass
class Proxied:
    url: str  # https://localhost:PORT, Caddy's internal certificate
    root: Path  # Caddy's local root, as `docker compose cp caddy:/data/caddy/pki/authorities/local/root.crt`


CADDYFILE = """{
	admin off
	skip_install_trust
	storage file_system {storage}
	http_port {http_port}
	https_port {https_port}
	auto_https disable_redirects
}

https://localhost:{https_port} {
	tls internal
	handle /api/v1/agent-dist* {
		reverse_proxy 127.0.0.1:{dist_port}
	}
	handle {
		reverse_proxy 127.0.0.1:{stack_port}
	}
}
"""


@contextlib.contextmanager
def this_trees_app() -> Iterator[int]:
    """This tree's API in a thread (uvicorn), for its agent-dist routes; yields its port."""
    from backend.main import create_app

    sock = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, timeout=30, interval=0.05, message="uvicorn started")
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextlib.contextmanager
def caddy(work: Path, *, dist_port: int, stack_port: int) -> Iterator[Proxied]:
    """A real Caddy with `tls internal` and its own storage in `work` (a new local CA each time)."""
    assert CADDY is not None
    https_port = free_port()
    text = CADDYFILE
    for key, value in {
        "storage": str(work / "data"),
        "http_port": str(free_port()),
        "https_port": str(https_port),
        "dist_port": str(dist_port),
        "stack_port": str(stack_port),
    }.items():
        text = text.replace("{" + key + "}", value)
    (work / "Caddyfile").write_text(text)
    env = {
        **BARE_ENV,
        "HOME": str(work),
        "XDG_DATA_HOME": str(work / "xdg"),
        "XDG_CONFIG_HOME": str(work / "xdg"),
    }
    log = (work / "caddy.log").open("wb")
    proc = subprocess.Popen(
        [CADDY, "run", "--adapter", "caddyfile", "--config", str(work / "Caddyfile")],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    root = work / "data" / "pki" / "authorities" / "local" / "root.crt"
    leaf = work / "data" / "certificates" / "local" / "localhost" / "localhost.crt"
    try:
        wait_until(
            lambda: proc.poll() is None and root.is_file() and leaf.is_file(),
            timeout=30,
            interval=0.05,
            message=lambda: (work / "caddy.log").read_text()[-2000:],
        )
        yield Proxied(url=f"https://localhost:{https_port}", root=root)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def curl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["curl", "-sS", *args], env=BARE_ENV, cwd=cwd, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def through_caddy(
    live: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Proxied, Path]]:
    """Caddy in front of the stack, the agent-dist routes from this tree's app with Caddy's root as
    IOWATT_AGENT_TLS_CA_FILE and a bundle whose agent is this tree's; yields Caddy and the bundles."""
    dist = tmp_path / "dist"
    dist.mkdir()
    make_tarball(dist / "iowatt-agent-9.9.9-linux-x86_64.tar.gz", "iowatt-agent-9.9.9-linux-x86_64", AGENT)
    work = tmp_path / "caddy"
    work.mkdir()
    monkeypatch.setenv("IOWATT_AGENT_DIST_DIR", str(dist))
    root = work / "data" / "pki" / "authorities" / "local" / "root.crt"
    monkeypatch.setenv("IOWATT_AGENT_TLS_CA_FILE", str(root))  # read per request: there once Caddy starts
    get_settings.cache_clear()
    stack_port = int(live.url.rsplit(":", 1)[1])
    try:
        with (
            this_trees_app() as dist_port,
            caddy(work, dist_port=dist_port, stack_port=stack_port) as proxied,
        ):
            yield proxied, dist
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
        get_redis().delete(throttle.key_for("127.0.0.1"))


@pytest.mark.xdist_group("stack-c")
def test_the_line_trusts_caddys_internal_ca_after_checking_it_and_enrols_through_caddy(
    through_caddy: tuple[Proxied, Path], live: Stack, tmp_path: Path
) -> None:
    proxied, _ = through_caddy
    server = proxied.url
    # the host's CA store does not hold Caddy's root: the line without a CA would stop here
    blind = curl("-f", "-o", "/dev/null", f"{server}/api/v1/agent-dist")
    assert blind.returncode == 60, blind.stderr
    # the manifest as the enrolment-token page reads it (over the operator's trusted session)
    manifest = curl("-f", "--cacert", str(proxied.root), f"{server}/api/v1/agent-dist")
    assert manifest.returncode == 0, manifest.stderr
    ca = json.loads(manifest.stdout)["tls_ca"]
    assert ca["url"] == "/api/v1/agent-dist/ca.pem" and "Caddy Local Authority" in ca["subject"]
    # the served CA is Caddy's root as compose's operator copies it out of the caddy volume
    assert ca["sha256"] == hashlib.sha256(proxied.root.read_bytes()).hexdigest()

    host = tmp_path / "host"
    (host / "cwd").mkdir(parents=True)
    token = host / "enroll.token"
    fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(enrollment_token(live.url, live.token))
    name = f"caddy-{uuid.uuid4().hex[:8]}"
    where = (
        f"--prefix {host}/opt/iowatt-agent --bin-dir {host}/bin --state-dir {host}/state"
        f" --no-service --name {name}"
    )

    def line(sha256: str) -> str:
        # frontend/src/lib/installLine.ts with the server's CA (its vitest checks the same text),
        # without sudo (the test is root) and with this test's paths
        return (
            f"curl -fsSk -o iowatt-ca.pem '{server}{ca['url']}'"
            f" && echo '{sha256}  iowatt-ca.pem' | sha256sum -c --quiet"
            f" && curl -fsSL --cacert iowatt-ca.pem '{server}/api/v1/agent-dist/install.sh'"
            f" | sh -s -- --server '{server}' --ca-file \"$PWD/iowatt-ca.pem\" --token-file {token} {where}"
        )

    # a CA that is not the one the page shows (a forged proxy's, a mistyped hash) stops the line
    forged = subprocess.run(
        ["sh", "-c", line("0" * 64)],
        cwd=host / "cwd",
        env=BARE_ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert forged.returncode != 0 and "FAILED" in forged.stdout + forged.stderr
    assert not (host / "opt").exists() and not (host / "state").exists()

    r = subprocess.run(
        ["sh", "-c", line(ca["sha256"])],
        cwd=host / "cwd",
        env=BARE_ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SHA-256 ok" in r.stderr
    # the agent trusts Caddy's root alone, kept in its state directory: every renewed leaf it signs
    # verifies, and nothing from the host's CA store is needed
    config = json.loads((host / "state" / "agent.json").read_text())
    assert config["tls"]["mode"] == "ca", config["tls"]
    assert (host / "state" / config["tls"]["file"]).read_bytes() == proxied.root.read_bytes()
    with live.api() as api:
        agents = api.get("/agents").json()["items"]
    assert any(a["name"] == name for a in agents)
