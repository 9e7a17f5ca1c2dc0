"""Two real API processes for the tests of the long-poll and of several API processes
(test_longpoll.py, test_multiproc.py): started once per test process and shared by both modules,
which run in one xdist group (LIVE_API_GROUP). Each test makes its own user, agents and runs on the
pair's database, so no test sees another's.

Ungrouped, `--dist loadgroup` spread those modules' tests over all four test processes, and each
process started its own: four single APIs and three pairs, ~2-3 CPU-s of imports each, for the
same eighteen tests."""

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO
from tests.oidc.provider import OidcProvider, oidc_provider
from tests.services import Postgres, free_port
from tests.stack import TLS

# the xdist group of the modules that use `pair` (one test process, one pair)
LIVE_API_GROUP = "live-api"


@dataclass
class Api:
    url: str  # .../api/v1
    base: str
    proc: subprocess.Popen[bytes]
    log: Path
    pid: int = 0  # the process that serves it (0: proc's)

    def __post_init__(self) -> None:
        self.pid = self.pid or self.proc.pid


def start_api(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def until_up(proc: subprocess.Popen[bytes], log: Path, port: int) -> Api:
    """The API once its /health answers (stopped, with its log's end, when it never does)."""
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base}/api/v1/health", timeout=2, verify=TLS).status_code == 200:
                return Api(url=f"{base}/api/v1", base=base, proc=proc, log=log)
        if time.monotonic() > deadline or proc.poll() is not None:
            stop_api(proc)
            raise RuntimeError(f"the API did not come up:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


def stop_api(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, 15)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
    return out


@dataclass
class Pair:
    a: Api
    b: Api
    db_url: str
    metrics_dir: Path


@pytest.fixture(scope="session")
def pair(
    pg: Postgres, redis_url: str, db_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pair]:
    """Two API processes on their own ports, one database, one Redis, one metrics directory: what
    `backend.serve --workers 2` runs (the second process a fork of the first), with each process
    reachable on its own."""
    url = pg.migrated_database("iowatt_multiproc")  # the migrated template, copied
    tmp = tmp_path_factory.mktemp("multiproc")
    metrics = tmp / "metrics"
    metrics.mkdir()
    env = {
        **os.environ,
        "IOWATT_DATABASE_URL": url,
        "IOWATT_REDIS_URL": redis_url,
        "IOWATT_ENV": "test",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
    }
    a_port = free_port()
    b_port = free_port()
    while b_port == a_port:
        b_port = free_port()
    log = tmp / "pair.log"
    # both processes from one import, the second a fork of the first (tests/backend/api_pair.py),
    # as backend.serve starts its processes: ~2 CPU-s of imports once instead of twice
    cmd = [sys.executable, "-m", "tests.backend.api_pair", str(a_port), str(b_port)]
    proc = start_api(cmd, env, log)
    try:
        a = until_up(proc, log, a_port)
        b = until_up(proc, log, b_port)
        forks = children(proc.pid)
        assert len(forks) == 1, f"the pair's second process: {forks}"
        yield Pair(
            a=a,
            b=Api(url=b.url, base=b.base, proc=proc, log=log, pid=forks[0]),
            db_url=url,
            metrics_dir=metrics,
        )
    finally:
        stop_api(proc)


# --- the OpenID Connect provider of test_oidc.py and test_oidc_proof.py --------------------------

OIDC_PUBLIC_URL = "http://testserver"
OIDC_CALLBACK = f"{OIDC_PUBLIC_URL}/api/v1/auth/oidc/callback"


@pytest.fixture(scope="session")
def oidc_idp() -> Iterator[OidcProvider]:
    """A real provider (panva's oidc-provider) for the in-process sign-in tests: one per test
    process, for both modules (they run in one xdist group, test_oidc.OIDC_GROUP); the tests'
    `oidc` fixture puts its users back before each test. Module-scoped in each module, ungrouped,
    every test process that drew one of their tests started one per module: up to eight node
    starts of ~0.8 CPU-s for 27 tests."""
    with oidc_provider([OIDC_CALLBACK]) as p:
        yield p
