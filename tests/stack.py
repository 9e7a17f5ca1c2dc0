"""The whole platform as real processes for end-to-end and browser tests: uvicorn (API + built
UI), a Celery worker, an enrolled `iowatt-agent run` and the real engine, on a private database."""

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from alembic import command

from tests.conftest import REPO, alembic_config
from tests.services import Postgres, free_port

BIN = Path(sys.executable).parent
ENGINE = Path(REPO) / "agent" / "engine" / "build" / "iowatt-engine"
FINAL = {"succeeded", "failed", "cancelled"}


@dataclass
class Stack:
    url: str
    token: str
    email: str
    password: str
    agent_id: str
    workdir: Path
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def api(self) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.url}/api/v1", headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )

    def allow(self, target: str, timeout_s: float = 60) -> None:
        """ADR 0009: the host lists the directory first (`iowatt-agent targets add`); the server
        knows once the agent re-sends its inventory (at its next long-poll)."""
        state = self.workdir / "agent-state"
        env = {**os.environ, "IOWATT_AGENT_SYSTEMD_DROPIN_DIR": str(self.workdir / "agent-dropin")}
        subprocess.run(
            [str(BIN / "iowatt-agent"), "targets", "add", target, "--state-dir", str(state)],
            env=env,
            check=True,
            capture_output=True,
        )
        deadline = time.monotonic() + timeout_s
        with self.api() as api:
            while True:
                policy = api.get(f"/agents/{self.agent_id}").json().get("policy") or {}
                if target in {t["path"] for t in policy.get("targets", [])}:
                    return
                if time.monotonic() > deadline:
                    raise AssertionError(f"the agent did not report target {target}; logs: {self.tail()}")
                time.sleep(0.3)

    def queue(self, target: str, workload: dict[str, Any] | None = None, name: str | None = None) -> str:
        self.allow(target)
        with self.api() as api:
            body: dict[str, Any] = {"agent_id": self.agent_id, "target_path": target, "name": name}
            if workload is None:
                quick = next(w for w in api.get("/workloads").json()["items"] if w["name"] == "quick")
                body["workload_id"] = quick["id"]
            else:
                body["workload"] = workload
            r = api.post("/runs", json=body)
            assert r.status_code == 201, r.text
            return str(r.json()["id"])

    def wait(self, run_id: str, timeout_s: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        with self.api() as api:
            while True:
                run = api.get(f"/runs/{run_id}").json()
                if run["status"] in FINAL:
                    return dict(run)
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"run {run_id} still {run['status']} after {timeout_s} s; logs: {self.tail()}"
                    )
                time.sleep(0.3)

    def tail(self) -> str:
        return "\n".join(
            f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:] for p in sorted(self.logs.glob("*.log"))
        )


def _wait_http(url: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout_s} s")


@contextlib.contextmanager
def stack(pg: Postgres, redis_url: str) -> Iterator[Stack]:
    if not ENGINE.exists():
        raise RuntimeError(f"{ENGINE} is missing: run `make engine`")
    work = Path(tempfile.mkdtemp(prefix="iowatt-e2e-"))
    logs = work / "logs"
    logs.mkdir()
    db = pg.create_database("iowatt_e2e")
    command.upgrade(alembic_config(db), "head")
    # a Redis database of its own, so tasks queued by the in-process API tests never reach this worker
    redis_e2e = redis_url.rsplit("/", 1)[0] + "/3"
    env = {
        **os.environ,
        "IOWATT_DATABASE_URL": db,
        "IOWATT_REDIS_URL": redis_e2e,
        "IOWATT_ENV": "test",
        "IOWATT_HEARTBEAT_INTERVAL_S": "2",
    }
    procs: dict[str, subprocess.Popen[bytes]] = {}

    def spawn(name: str, *cmd: str, extra: dict[str, str] | None = None) -> None:
        out = open(logs / f"{name}.log", "wb")  # noqa: SIM115 - closed when the process ends
        procs[name] = subprocess.Popen(
            list(cmd),
            cwd=REPO,
            env={**env, **(extra or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    try:
        subprocess.run(
            [
                str(BIN / "iowatt-server"),
                "bootstrap",
                "--credentials-file",
                str(work / "creds"),
                "--token-file",
                str(work / "token"),
            ],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
        )
        creds = dict(line.split("=", 1) for line in (work / "creds").read_text().split())
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        spawn(
            "api",
            str(BIN / "uvicorn"),
            "backend.main:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        )
        spawn(
            "worker",
            str(BIN / "celery"),
            "-A",
            "worker.app",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "--without-mingle",
            "--without-gossip",
        )
        _wait_http(f"{url}/api/v1/health")
        token = subprocess.run(
            [str(BIN / "iowatt-server"), "enrollment-token"],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        state = work / "agent-state"
        subprocess.run(
            [
                str(BIN / "iowatt-agent"),
                "enroll",
                "--server",
                url,
                "--token-file",
                "-",
                "--name",
                "e2e",
                "--state-dir",
                str(state),
            ],
            cwd=REPO,
            env=env,
            input=token.encode(),
            check=True,
            capture_output=True,
        )
        spawn(
            "agent",
            str(BIN / "iowatt-agent"),
            "run",
            "--state-dir",
            str(state),
            "--engine",
            str(ENGINE),
            "--lease-wait",
            "5",
        )
        s = Stack(
            url=url,
            token=(work / "token").read_text().strip(),
            email=creds["email"],
            password=creds["password"],
            agent_id="",
            workdir=work,
            logs=logs,
            procs=procs,
        )
        deadline = time.monotonic() + 30
        with s.api() as api:
            while not s.agent_id:
                online = [a for a in api.get("/agents").json()["items"] if a["online"]]
                if online:
                    s.agent_id = online[0]["id"]
                elif time.monotonic() > deadline:
                    raise RuntimeError("the agent did not come online:\n" + s.tail())
                else:
                    time.sleep(0.3)
        yield s
    finally:
        for name in ("agent", "worker", "api"):
            p = procs.get(name)
            if p is None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, 15)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
