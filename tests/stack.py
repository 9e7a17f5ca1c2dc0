"""The whole platform as real processes for end-to-end and browser tests: the API (and built UI)
as production starts it, `python -m backend.serve` with API_WORKERS uvicorn processes behind one
port (docs/adr/0016), a Celery worker, an enrolled `iowatt-agent run` and the real engine, on a
private database."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from alembic import command

from tests.conftest import REPO, alembic_config
from tests.services import Postgres, free_port
from tests.waiting import WaitTimeout, wait_until

BIN = Path(sys.executable).parent
ENGINE = Path(REPO) / "agent" / "engine" / "build" / "iowatt-engine"
FINAL = {"succeeded", "failed", "cancelled"}
API_WORKERS = 2  # as a 2-CPU host runs it (backend.serve's default: the CPUs, at most 3)


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
    # how each process was started, so fault tests can kill and start it again (tests/faults)
    commands: dict[str, tuple[list[str], dict[str, str]]] = field(default_factory=dict)
    agent_url: str = ""

    def start(self, name: str) -> None:
        """Start a process of the stack again with the command and environment it first had."""
        cmd, env = self.commands[name]
        self.procs[name] = _popen(cmd, env, self.logs / f"{name}.log")

    def kill(self, name: str, sig: int = 9) -> None:
        """Signal the process group (SIGKILL by default) and wait until every process of it is
        gone: the API is backend.serve's supervisor AND its uvicorn processes, and a child left
        alive would keep serving on the shared socket (and keep the port from the next start)."""
        p = self.procs[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, sig)
        p.wait(timeout=60)
        wait_until(
            lambda: not group_members(p.pid),
            timeout=60,
            interval=0.05,
            message=lambda: f"{name}'s process group {p.pid} gone (left: {group_members(p.pid)})",
        )

    def workers(self, name: str = "api") -> list[int]:
        """The uvicorn worker processes of the API's supervisor (started by multiprocessing's spawn),
        oldest first."""
        sup = self.procs[name].pid
        found = []
        for pid in group_members(sup):
            stat = _stat(pid)
            if stat is not None and int(stat[1]) == sup and b"spawn_main" in _cmdline(pid):
                found.append((int(stat[19]), pid))
        return [pid for _, pid in sorted(found)]

    def alive(self, name: str) -> bool:
        return self.procs[name].poll() is None

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
        with self.api() as api:

            def reported() -> bool:
                policy = api.get(f"/agents/{self.agent_id}").json().get("policy") or {}
                return target in {t["path"] for t in policy.get("targets", [])}

            wait_until(
                reported,
                timeout=timeout_s,
                interval=0.3,
                message=lambda: f"the agent reports target {target}; logs: {self.tail()}",
            )

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
        with self.api() as api:
            last: dict[str, Any] = {}

            def ended() -> dict[str, Any] | None:
                last.update(api.get(f"/runs/{run_id}").json())
                return dict(last) if last["status"] in FINAL else None

            return wait_until(
                ended,
                timeout=timeout_s,
                interval=0.3,
                message=lambda: f"run {run_id} ends (it is {last.get('status')}); logs: {self.tail()}",
            )

    def tail(self) -> str:
        return "\n".join(
            f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:] for p in sorted(self.logs.glob("*.log"))
        )


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name: [state, ppid, pgrp, ..., starttime at 19]."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def group_members(pgid: int) -> list[int]:
    """The live processes of a process group (zombies waiting to be reaped count as gone)."""
    live = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            stat = _stat(int(d.name))
            if stat is not None and int(stat[2]) == pgid and stat[0] != "Z":
                live.append(int(d.name))
    return live


def _popen(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    out = open(log, "ab")  # noqa: SIM115 - closed when the process ends
    return subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )


def _wait_http(url: str, timeout_s: float = 60) -> None:
    try:
        wait_until(
            lambda: httpx.get(url, timeout=2).status_code == 200,
            timeout=timeout_s,
            interval=0.2,
            ignore=(httpx.HTTPError,),
        )
    except WaitTimeout as e:
        raise RuntimeError(f"{url} did not answer within {timeout_s} s") from e


@contextlib.contextmanager
def stack(
    pg: Postgres,
    redis_url: str,
    *,
    beat: bool = False,
    agent_args: Sequence[str] = (),
    agent_env: dict[str, str] | None = None,
    agent_url: Callable[[str], str] | None = None,
    redis_db: int = 3,
) -> Iterator[Stack]:
    """`beat` adds Celery beat; `agent_args`/`agent_env` go to `iowatt-agent run`; `agent_url` maps
    the API's URL to the one the agent enrols with (a proxy in between, tests/faults)."""
    if not ENGINE.exists():
        raise RuntimeError(f"{ENGINE} is missing: run `make engine`")
    work = Path(tempfile.mkdtemp(prefix="iowatt-e2e-"))
    logs = work / "logs"
    logs.mkdir()
    db = pg.create_database("iowatt_e2e")
    command.upgrade(alembic_config(db), "head")
    # a Redis database of its own, so tasks queued by the in-process API tests never reach this worker
    redis_e2e = redis_url.rsplit("/", 1)[0] + f"/{redis_db}"
    env = {
        **os.environ,
        "IOWATT_DATABASE_URL": db,
        "IOWATT_REDIS_URL": redis_e2e,
        "IOWATT_ENV": "test",
        "IOWATT_HEARTBEAT_INTERVAL_S": "2",
    }
    procs: dict[str, subprocess.Popen[bytes]] = {}
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}

    def spawn(name: str, *cmd: str, extra: dict[str, str] | None = None) -> None:
        commands[name] = (list(cmd), {**env, **(extra or {})})
        procs[name] = _popen(*commands[name], logs / f"{name}.log")

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
        # as make up and compose start it: a supervisor and API_WORKERS processes on one socket,
        # their Prometheus files in a directory of this stack's own
        spawn(
            "api",
            sys.executable,
            "-m",
            "backend.serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(API_WORKERS),
            extra={"PROMETHEUS_MULTIPROC_DIR": str(work / "api-metrics")},
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
        if beat:
            spawn(
                "beat",
                str(BIN / "celery"),
                "-A",
                "worker.app",
                "beat",
                "--loglevel=INFO",
                "--schedule",
                str(work / "celerybeat-schedule"),
            )
        _wait_http(f"{url}/api/v1/health")
        enrol_url = agent_url(url) if agent_url else url
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
                enrol_url,
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
            *agent_args,
            extra=agent_env,
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
            commands=commands,
            agent_url=enrol_url,
        )
        with s.api() as api:
            try:
                online = wait_until(
                    lambda: [a for a in api.get("/agents").json()["items"] if a["online"]],
                    timeout=30,
                    interval=0.3,
                )
            except WaitTimeout as e:
                raise RuntimeError("the agent did not come online:\n" + s.tail()) from e
            s.agent_id = online[0]["id"]
        yield s
    finally:
        # all asked to stop at once (the agent drains, the worker finishes its task), then awaited
        for name in ("agent", "beat", "worker", "api"):
            p = procs.get(name)
            if p is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, 15)
        for name in ("agent", "beat", "worker", "api"):
            p = procs.get(name)
            if p is None:
                continue
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
        # logs, agent state and tokens of this stack: a failing test has printed the logs' tails
        shutil.rmtree(work, ignore_errors=True)
