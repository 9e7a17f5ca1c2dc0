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


def start_api(cmd: list[str], env: dict[str, str], log: Path, port: int) -> subprocess.Popen[bytes]:
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
    `backend.serve --workers 2` runs, with each process reachable on its own (both started, then
    both awaited)."""
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
    started: list[tuple[subprocess.Popen[bytes], Path, int]] = []
    try:
        for name in ("a", "b"):
            port = free_port()
            while any(port == p for _, _, p in started):
                port = free_port()
            cmd = [
                sys.executable,
                "-m",
                "uvicorn",
                "backend.main:create_app",
                "--factory",
                "--port",
                str(port),
            ]
            log = tmp / f"{name}.log"
            started.append((start_api(cmd, env, log, port), log, port))
        a, b = (until_up(*s) for s in started)
        yield Pair(a=a, b=b, db_url=url, metrics_dir=metrics)
    finally:
        for proc, _, _ in started:
            stop_api(proc)
