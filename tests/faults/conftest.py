"""The fault-injection rig (issue 11): the whole platform as real processes (tests/stack.py) on a
PostgreSQL and a Redis of its own, so a scenario can restart or stop them without touching any
other test, and a TCP proxy between the agent and the API (proxy.py). The platform runs the Helm
chart's topology (issue 30): API_PROCESSES API processes on as many ports behind Caddy
(bench/load/topology.py), WORKERS Celery workers and one beat; the proxy sits between the agent and
Caddy. One rig for both modules (the `r` fixture, one xdist group): each scenario starts from the
whole rig up (`Rig.all_up`) and puts back what it changed (the agent's command, a proxy hook): a
second rig (PostgreSQL, the migrations, the API processes, workers, beat, agent, started and
stopped: ~20-30 CPU-s at load 20) bought no isolation.

Runs are tiny (a few MiB in a directory of the rig's own, 1–2 s of paced load, idle baselines of
a fraction of a second) and metered by a `command:` meter the host configured with
`iowatt-agent meters set`, so energy is computed for every run."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults.proxy import Proxy
from tests.services import Postgres, Redis, postgres, redis_instance
from tests.stack import FINAL, TLS, Stack, _wait_http, enrollment_token, new_log_lines, run_ended_in, stack
from tests.waiting import wait_until

METER = """#!/bin/sh
# a wall meter on a cable: prints 40 W ten times a second until it is "unplugged" (the flag file)
while true; do
  if [ -e "$1" ]; then echo "meter unplugged: no answer on /dev/ttyUSB0" >&2; exit 1; fi
  echo 40
  sleep 0.1
done
"""


# the Helm chart's topology, natively (docs/faults.md): API processes behind Caddy, Celery workers
API_PROCESSES = 2
WORKERS = 2

# the runs' I/O is paced: a run is something running (and writing) for 1-5 s while a fault strikes,
# never a speed; 4 KiB random writes as fast as the disk takes cost the engine 0.2-0.27 CPU-s a
# second (measured alone), paced at this rate 0.01-0.04
FAULT_RATE_IOPS = 500
# how often Rig.final reads the status of a run whose end the agent has not logged from the rig's
# database (Stack.status_of: a SELECT, where a GET /runs/{id} is 13-29 ms of the API's CPU)
FINAL_LOOK_S = 0.5
# Rig.energy_done: the energy is asked of the API once the database says it can be final, and
# every ENERGY_ASK_S otherwise. ENERGY_READY: the run's energy row is there, or the run has no
# metered power to compute it from (backend/power/service.py: then it is none or no_meter_data)
ENERGY_ASK_S = 3.0
ENERGY_READY = """
    SELECT 1 FROM runs r
    WHERE r.id = %s AND (
        EXISTS (SELECT 1 FROM run_energy e WHERE e.run_id = r.id)
        OR NOT EXISTS (SELECT 1 FROM run_power p WHERE p.run_id = r.id AND p.status = 'ok' AND p.samples > 0)
    )
"""


def workload(runtime_s: float = 1.0, size_mib: int = 4, rw: str = "randwrite") -> dict[str, Any]:
    return {
        "jobs": [
            {
                "name": "fault-" + rw,
                "rw": rw,
                "bs_bytes": 4096,
                "size_bytes": size_mib * 1024 * 1024,
                "runtime_s": runtime_s,
                "time_based": True,
                "ioengine": "psync",
                "rate_iops": FAULT_RATE_IOPS,
            }
        ]
    }


@dataclass
class Rig:
    s: Stack
    pg: Postgres
    redis: Redis
    proxy: Proxy | None
    target: Path
    unplug: Path  # the meter prints nothing but an error while this file exists

    @property
    def state(self) -> Path:
        return self.s.workdir / "agent-state"

    def api(self) -> Any:
        return self.s.api()

    def create(self, runtime_s: float = 1.0, *, idle_s: float = 0.2, **body: Any) -> Any:
        """POST /runs; returns the response (the caller checks its status)."""
        with self.api() as api:
            return api.post(
                "/runs",
                json={
                    "agent_id": self.s.agent_id,
                    "target_path": str(self.target),
                    "workload": workload(runtime_s),
                    "idle_s": idle_s,
                    **body,
                },
            )

    def queue(self, runtime_s: float = 1.0, **kw: Any) -> str:
        r = self.create(runtime_s, **kw)
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    def ledger(self) -> None:
        """Issue 11's end state: 0 lost, 0 duplicated, 0 stuck. Every run of the agent is final;
        a succeeded run has exactly one result and its energy computed, a failed one says why and
        has none; no task is left unsent in the outbox."""
        self.idle(60)
        # every run's results counted in one query, and its energy as the runs' list shows it (the
        # API's own EnergyRead, as GET /runs/{id} has it): a run still `pending` there is awaited
        results = dict(sql(self, "SELECT run_id::text, count(*) FROM run_results GROUP BY run_id"))
        for run in self.runs():
            rows = results.get(run["id"], 0)
            if run["status"] == "succeeded":
                assert rows == 1, (run["id"], rows)
                if (run["energy"] or {}).get("status") in (None, "pending"):
                    self.energy_done(run["id"], 30)
            else:
                assert rows == 0 and run["error"], run
        self.until(
            "the outbox empty",
            lambda: sql(self, "SELECT count(*) FROM outbox_tasks WHERE sent_at IS NULL") == [(0,)],
            15,
        )

    def agent(self) -> dict[str, Any]:
        with self.api() as api:
            return dict(api.get(f"/agents/{self.s.agent_id}").json())

    def run(self, run_id: str) -> dict[str, Any]:
        with self.api() as api:
            r = api.get(f"/runs/{run_id}")
            assert r.status_code == 200, r.text
            return dict(r.json())

    def runs(self) -> list[dict[str, Any]]:
        with self.api() as api:
            return list(api.get("/runs", params={"limit": 500}).json()["items"])

    def until(self, what: str, check: Callable[[], Any], timeout_s: float, every_s: float = 0.5) -> float:
        """Poll `check` until it returns something true (errors count as "not yet": a part of the
        stack may be down on purpose); the seconds it took, or fail naming `what` with the logs.
        Twice a second unless asked: each look is a request the API answers (and a client), and
        the scenarios wait for seconds at a time; a moment to catch (a run running, a process
        gone) asks for a shorter `every_s`."""
        t0 = time.monotonic()
        wait_until(
            check,
            timeout=timeout_s,
            interval=every_s,
            message=lambda: f"{what}\n{self.s.tail()}",
            ignore=(Exception,),
        )
        return time.monotonic() - t0

    def status_in(self, run_id: str, statuses: set[str], timeout_s: float) -> dict[str, Any]:
        """The run (from the API) once its status, read from the database meanwhile
        (`Stack.status_of`, not a GET /runs/{id} a look), is one of `statuses`."""
        # "running" is a moment a scenario acts in (kills, stops Redis): caught within 0.2 s
        every = 0.2 if statuses == {"running"} else 0.5
        self.until(
            f"run {run_id} {sorted(statuses)}",
            lambda: self.s.status_of(run_id) in statuses,
            timeout_s,
            every,
        )
        return self.run(run_id)

    def trace(self, run_id: str, until: set[str], timeout_s: float) -> list[tuple[float, str]]:
        """The run's status changes (seconds from now, status) until it reaches one of `until`:
        shows a detour through a wrong state that a single final read would miss. Read from the
        database every 0.1 s (`Stack.status_of`), where the API's whole run was 13-29 ms of its CPU a look."""
        t0 = time.monotonic()
        seen: list[tuple[float, str]] = []

        def reached() -> bool:
            status = self.s.status_of(run_id)
            if status is None:
                return False
            if not seen or seen[-1][1] != status:
                seen.append((round(time.monotonic() - t0, 1), status))
            return status in until

        self.until(f"run {run_id} {sorted(until)} (so far {seen})", reached, timeout_s, every_s=0.1)
        return seen

    def final(self, run_id: str, timeout_s: float = 60) -> dict[str, Any]:
        """The run once it is final: asked when the rig's agent logged the run's end (its result or
        failure delivered, the lease refused or lost: tests/stack.py's AGENT_RUN_ENDS, from the
        log's start, so an end logged before counts) and every FINAL_LOOK_S otherwise (a run the
        server ends, an agent killed) once the database has it final (`Stack.status_of`, read
        every FINAL_LOOK_S): a look at the API is 13-29 ms of its CPU."""
        log = self.s.logs / "agent.log"
        seen = {"read": 0, "asked": -FINAL_LOOK_S}
        last: list[dict[str, Any]] = []

        def agent_ended() -> bool:
            lines, seen["read"] = new_log_lines(log, int(seen["read"]))
            return run_ended_in(lines, run_id)

        def ended() -> bool:
            if not agent_ended():
                if time.monotonic() - seen["asked"] < FINAL_LOOK_S:
                    return False
                seen["asked"] = time.monotonic()
                if self.s.status_of(run_id) not in FINAL:
                    return False
            last[:] = [self.run(run_id)]
            return last[0]["status"] in FINAL

        self.until(f"run {run_id} {sorted(FINAL)}", ended, timeout_s, every_s=0.1)
        return last[0]

    def energy_done(self, run_id: str, timeout_s: float = 30) -> dict[str, Any]:
        """The run's energy once the worker computed it (not `pending`), as the API answers it: asked
        once the rig's database has the run's energy row or nothing to compute it from (the
        service's `pending` is a metered run's samples without that row), and every ENERGY_ASK_S
        otherwise, instead of a GET /runs/{id} (13-29 ms of the API's CPU) every 0.5 s."""
        last: list[dict[str, Any]] = []
        asked = [-ENERGY_ASK_S]

        def computed() -> bool:
            if time.monotonic() - asked[0] < ENERGY_ASK_S and not sql(self, ENERGY_READY, uuid.UUID(run_id)):
                return False
            asked[0] = time.monotonic()
            last[:] = [self.run(run_id)["energy"] or {}]
            return last[0].get("status") not in (None, "pending")

        self.until(f"energy of {run_id}", computed, timeout_s)
        return dict(last[0])

    def idle(self, timeout_s: float = 60) -> None:
        """Nothing queued, assigned or running: the queue is not blocked. Counted in the rig's
        database: GET /runs lists every run of the rig with its jobs and energy (by the modules' end
        ~40 runs, a tenth of a second or more of the API's CPU a look)."""
        active = "SELECT count(*) FROM runs WHERE status::text <> ALL(%s)"
        self.until("no active run", lambda: sql(self, active, sorted(FINAL)) == [(0,)], timeout_s)

    def agent_cli(self, *args: str) -> str:
        return self.s.agent_cli(*args)

    def all_up(self) -> None:
        """The whole rig as a scenario starts from: Redis and every process running (a scenario
        that failed half-way may have left one down), no proxy hook, the network not cut."""
        if self.redis.proc is None:
            self.redis.start()
        for name in ("api", "caddy", "worker", "beat", "agent"):
            if not self.s.alive(name):
                self.s.start(name)  # a group: the processes of it that are down
        for port in self.s.api_ports.values():  # each API process, then through Caddy
            _wait_http(f"http://127.0.0.1:{port}/api/v1/health")
        _wait_http(f"{self.s.url}/api/v1/health")
        if self.proxy is not None:
            self.proxy.hook = None
            self.proxy.restore()

    def worker_logs(self) -> dict[Path, int]:
        """Each Celery worker's log and its size now (`logged_since` reads what came after)."""
        logs = [self.s.logs / f"{name}.log" for name in self.s.members("worker")]
        return {log: log.stat().st_size if log.exists() else 0 for log in logs}

    def logged_since(self, marks: dict[Path, int]) -> bytes:
        """What the logs of `marks` gained after their marks (a restarted worker appends)."""
        out = b""
        for log, offset in marks.items():
            with log.open("rb") as f:
                f.seek(offset)
                out += f.read()
        return out

    def rejected(self) -> list[str]:
        """Uploads the agent gave up on (spool/rejected/: a permanent 4xx), with the reason."""
        return [p.read_text()[:500] for p in (self.state / "spool" / "rejected").glob("*") if p.is_file()]

    def leftovers(self, run_id: str = "") -> list[str]:
        """Data files in the target and job files of the run (of any run by default) and spool
        temp files the agent left behind."""
        found = [p.name for p in self.target.glob(f"iowatt-{run_id}*")]
        found += [f"jobs/{p.name}" for p in (self.state / "jobs").glob(f"{run_id}*")]
        spool = self.state / "spool"
        found += [
            f"spool/{p.name}"
            for p in spool.glob("*")
            if p.is_file() and p.suffix != ".json" and p.name != "filler"
        ]
        return found


@contextlib.contextmanager
def rig(*, proxy: bool = False, meter: bool = True, **stack_opts: Any) -> Iterator[Rig]:
    """A private PostgreSQL and Redis, the stack (with beat) on them, a target directory the host
    allowed and (by default) a `command:` meter as the host's default."""
    work = Path(tempfile.mkdtemp(prefix="iowatt-faults-"))
    px: list[Proxy] = []

    def through_proxy(url: str) -> str:
        px.append(Proxy(int(url.rsplit(":", 1)[1])))
        return px[0].url

    try:
        # real Argon2id at test cost for the bootstrap's admin (as tests/conftest.py's db_url)
        os.environ.setdefault("IOWATT_ARGON2_MEMORY_KIB", "1024")
        os.environ.setdefault("IOWATT_ARGON2_TIME_COST", "1")
        os.environ.setdefault("IOWATT_ARGON2_PARALLELISM", "1")
        to_agent = through_proxy if proxy else None
        with (
            postgres() as pg,
            redis_instance() as redis,
            stack(
                pg,
                redis.url,
                beat=True,
                agent_url=to_agent,
                heartbeat_s=2,
                lease_wait_s=5,
                api_processes=API_PROCESSES,
                api_forks=True,
                workers=WORKERS,
                **stack_opts,
            ) as s,
        ):
            target = work / "target"
            target.mkdir()
            unplug = work / "unplugged"
            r = Rig(s=s, pg=pg, redis=redis, proxy=px[0] if px else None, target=target, unplug=unplug)
            if meter:
                script = work / "wall-meter.sh"
                script.write_text(METER)
                script.chmod(0o755)
                r.agent_cli("meters", "set", "wall", f"command:{script} {unplug}", "--default")
            s.allow(str(target))  # waits until the agent reported its new policy (meter too)
            if meter:
                r.until(
                    "the agent reports its meter",
                    lambda: any(m["name"] == "wall" for m in r.agent()["policy"]["meters"]),
                    30,
                )
            yield r
    finally:
        for p in px:
            p.close()
        shutil.rmtree(work, ignore_errors=True)


# both fault modules' scenarios run in this group, on one test process and its one rig
GROUP = "faults"


@pytest.fixture(scope="session")
def r() -> Iterator[Rig]:
    """The rig of both fault modules (xdist group GROUP): started once, each scenario starting
    from it whole (`Rig.all_up`) and putting back what it changed."""
    with rig(proxy=True) as x:
        yield x


def report(scenario: str, **measured: Any) -> None:
    """One line per measurement in the test's output (`-s` or the failure report shows it):
    docs/faults.md records these figures."""
    print(
        f"[faults] {scenario}: "
        + ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in measured.items())
    )


def engine_pids(state: Path) -> list[int]:
    """The engines this agent started (each runs in its own process group, ADR 0001)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"iowatt-engine") and str(state).encode() in b" ".join(argv):
            pids.append(int(d.name))
    return pids


def sql(r: Rig, query: str, *args: Any) -> list[tuple[Any, ...]]:
    """Read the stack's database directly (what the API shows could hide a duplicate row)."""
    import psycopg

    url = r.s.database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url) as c:
        return list(c.execute(query, args).fetchall())


def measured_samples(r: Rig, run_id: str) -> int:
    """The number of power samples the agent measured for the run (its log's power.measured)."""
    log = (r.s.logs / "agent.log").read_text(errors="replace")
    found = re.findall(rf"power\.measured run_id={run_id} status=\w+ samples=(\d+)", log)
    assert found, f"the agent logged no power.measured for {run_id}"
    return int(found[-1])


# one established TCP connection into an API process, as `ss -tin` shows it: (the API process's
# port, the peer's port) -> (the process's name, bytes it received, bytes it sent)
Sockets = dict[tuple[int, int], tuple[str, int, int]]
_SS_LINE = re.compile(r"^\s*\d+\s+\d+\s+\S+:(\d+)\s+\S+:(\d+)[^\n]*\n\s+([^\n]*)", re.M)


def api_sockets(r: Rig) -> Sockets:
    """Every TCP connection into an API process now (Caddy's, a test's), with the bytes each
    carried (the kernel's counts, `ss -tin`): which process a request reached is seen from here,
    since Caddy chooses (least connections) once the request is on its way."""
    names = {port: name for name, port in r.s.api_ports.items()}
    ports = " or ".join(f"sport = :{p}" for p in names)
    out = subprocess.run(
        ["ss", "-Htin", "state", "established", f"( {ports} )"], capture_output=True, text=True, check=True
    ).stdout
    found: Sockets = {}
    for m in _SS_LINE.finditer(out):
        local, peer, info = int(m[1]), int(m[2]), m[3]
        if local in names:
            rcv = re.search(r"bytes_received:(\d+)", info)
            snd = re.search(r"bytes_sent:(\d+)", info)
            found[(local, peer)] = (names[local], int(rcv[1]) if rcv else 0, int(snd[1]) if snd else 0)
    return found


def received_by(r: Rig, before: Sockets, nbytes: int) -> str | None:
    """The API process one of whose connections received at least `nbytes` since `before` (a
    request of that size reached it), or None yet."""
    grew = [(rcv - before.get(key, (name, 0, 0))[1], name) for key, (name, rcv, _) in api_sockets(r).items()]
    most = max(grew, default=(0, ""))
    return most[1] if most[0] >= nbytes else None


def waiting_in(r: Rig, before: Sockets) -> set[str]:
    """The API processes with a connection that received something since `before` and sent
    nothing since: a request waiting for its answer (a long-poll) in each."""
    waiting = set()
    for key, (name, rcv, snd) in api_sockets(r).items():
        _, rcv0, snd0 = before.get(key, (name, 0, 0))
        if rcv > rcv0 and snd == snd0:
            waiting.add(name)
    return waiting


@contextlib.contextmanager
def on_process(r: Rig, name: str) -> Iterator[http.client.HTTPConnection]:
    """A connection to API process `name` itself (its own port, not through Caddy)."""
    c = http.client.HTTPConnection("127.0.0.1", r.s.api_ports[name], timeout=60)
    try:
        yield c
    finally:
        c.close()


def ask_process(r: Rig, name: str, path: str) -> int:
    """GET `path` (as the admin) from API process `name`: the status."""
    with on_process(r, name) as c:
        c.request("GET", path, headers={"Authorization": f"Bearer {r.s.token}"})
        resp = c.getresponse()
        resp.read()
        return resp.status


def ask_each_process(r: Rig, path: str) -> dict[str, int]:
    """GET `path` (as the admin) from every API process: {name: status}."""
    return {name: ask_process(r, name, path) for name in r.s.members("api")}


def fake_agent(r: Rig, target: Path, name: str = "fake") -> tuple[str, str]:
    """A second enrolled host whose protocol the test speaks itself: (agent id, token). Its
    `iowatt-agent targets add`, `enroll` and `inventory` run in this process (typer's runner):
    this host is the test's double, not what is tested (three agent processes: ~1.5 CPU-s)."""
    from iowatt_agent import cli
    from typer.testing import CliRunner

    state = r.s.workdir / f"{name}-agent"
    token = enrollment_token(r.s.url, r.s.token)
    cli_env = {"IOWATT_AGENT_SYSTEMD_DROPIN_DIR": str(r.s.workdir / f"{name}-dropin")}

    def agent(*args: str, stdin: str | None = None) -> str:
        res = CliRunner().invoke(cli.app, [*args, "--state-dir", str(state)], env=cli_env, input=stdin)
        assert res.exit_code == 0, (args, res.output, res.exception)
        return res.stdout

    agent("targets", "add", str(target))
    agent("enroll", "--server", r.s.url, "--token-file", "-", "--name", name, stdin=token)
    cfg = json.loads((state / "agent.json").read_text())
    inventory = agent("inventory", "--json")
    put = httpx.put(
        f"{r.s.url}/api/v1/agents/{cfg['agent_id']}/inventory",
        content=inventory,
        headers={"Authorization": f"Bearer {cfg['agent_token']}", "Content-Type": "application/json"},
        verify=TLS,
    )
    assert put.status_code == 200, put.text
    return str(cfg["agent_id"]), str(cfg["agent_token"])
