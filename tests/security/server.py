"""A real API server for fuzzing: uvicorn on a free port, its own migrated database, Redis, and
team A's world (tests/security/world.py) built through it.

Fuzzing goes over real HTTP to a real uvicorn rather than in-process because (1) a request must
commit for real, so the unit of work, constraint violations at commit and the response written after
the commit are what is fuzzed, with no test-only session override; (2) the server's settings live
in its own process environment, so the fuzz database never leaks into the other tests of the same
pytest worker (they share `get_settings()` caches and a rolled-back test database); (3) the long run
(bench/fuzz/run.py) uses the same helper, so the short run in `make test` and the recorded long run
exercise the same server.
"""

import contextlib
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from tests.conftest import REPO
from tests.security.world import World, build
from tests.services import Postgres, free_port

BIN = Path(sys.executable).parent
# one TLS context for this module's clients (they speak http:// to 127.0.0.1): httpx builds one per
# Client and per httpx.get() otherwise, ~30 ms of CPU each, and the wait for the server below asks
# every 0.1 s (tests/stack.py's TLS is the same; importing tests.stack here hung the world's build)
TLS = ssl.create_default_context()


@dataclass
class Server:
    url: str  # http://127.0.0.1:PORT
    world: World
    log: Path
    proc: subprocess.Popen[bytes]

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]


@contextlib.contextmanager
def api_server(
    pg: Postgres, redis_url: str, *, db: str, redis_db: int = 5, openapi: dict[str, Any] | None = None
) -> Iterator[Server]:
    """`openapi`: the caller's own build of the OpenAPI document (create_app().openapi()), which the
    world is built from; the server's is the same document (backend/main.py builds it from the code
    alone) and costs its process ~1.9 CPU-s to build for this one request. Without it, the server's
    /openapi.json."""
    url = pg.migrated_database(db)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = Path(tempfile.mkdtemp(prefix="iowatt-fuzz-")) / "api.log"
    env = {
        **os.environ,
        "IOWATT_DATABASE_URL": url,
        # a Redis database of its own: wake-ups and login throttling never meet the other tests'
        "IOWATT_REDIS_URL": redis_url.rsplit("/", 1)[0] + f"/{redis_db}",
        "IOWATT_ENV": "test",
    }
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                str(BIN / "uvicorn"),
                "backend.main:create_app",
                "--factory",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    engine = create_engine(url)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/api/v1/health", timeout=2, verify=TLS).status_code in (200, 503):
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the API did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.1)
        if openapi is None:
            openapi = httpx.get(f"{base}/openapi.json", timeout=10, verify=TLS).json()
        with (
            Session(engine, expire_on_commit=False) as session,
            httpx.Client(base_url=base, timeout=30, verify=TLS) as http,
        ):
            world = build(session, http, commit=session.commit, openapi=openapi)
        yield Server(url=base, world=world, log=log, proc=proc)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        engine.dispose()
