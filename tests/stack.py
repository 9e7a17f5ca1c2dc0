"""The whole platform as real processes for end-to-end and browser tests: the API (and built UI)
as production starts it, `python -m backend.serve` with API_WORKERS uvicorn processes behind one
port (docs/adr/0016), a Celery worker, an enrolled `iowatt-agent run` and the real engine, on a
private database. Or the Helm chart's topology (issue 30; the fault rig, tests/faults): N API
processes on N ports behind Caddy (bench/load/topology.py) and several Celery workers."""

import contextlib
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.load.topology import several_apis
from tests.conftest import REPO
from tests.services import Postgres, celery_worker_argv, free_port, on_one_cpu
from tests.waiting import WaitTimeout, wait_until

BIN = Path(sys.executable).parent
ENGINE = Path(REPO) / "agent" / "engine" / "build" / "iowatt-engine"
FINAL = {"succeeded", "failed", "cancelled"}
# A run for a test whose subject is not the workload (a page that shows runs, a review that cites
# one): a random read and a sequential write, 2 s each (a line of two per-second points per job),
# through the page cache (tmpfs targets have no O_DIRECT before Linux 6.6): 4 s of load instead of
# the `quick` preset's 9 s (tests/e2e/test_end_to_end.py runs that one as it is). Each job is paced
# (`rate_iops`: 2,000 reads of 4 KiB, 50 writes of 1 MiB a second): as fast as the page cache goes,
# the engine spent 0.6-0.8 CPU-s a run (mostly the write's copies), paced 0.1, for the same two
# points a job.
SHORT_RATE_IOPS = {"randread-4k": 2000, "seqwrite-1m": 50}
SHORT_WORKLOAD: dict[str, Any] = {
    "jobs": [
        {
            "name": name,
            "rw": rw,
            "bs_bytes": bs,
            "size_bytes": 16 * 1024 * 1024,
            "runtime_s": 2,
            "time_based": True,
            "direct": False,
            "rate_iops": SHORT_RATE_IOPS[name],
        }
        for name, rw, bs in (("randread-4k", "randread", 4096), ("seqwrite-1m", "write", 1024 * 1024))
    ]
}
API_WORKERS = 2  # as a 2-CPU host runs it (backend.serve's default: the CPUs, at most 3)
# The agent's heartbeat interval on a stack: the server's default (10 s). No shared-stack test waits
# for a heartbeat: the agent re-sends a changed policy or meter within 2 s whatever the interval (its
# heartbeat thread looks at the files every 2 s), its long-polls keep it online, and a queued run
# wakes its poll at once. Every 2 s, an idle stack cost ~1.3 CPU-s a minute; every 10 s, ~0.95
# (the API answering the heartbeats is most of it). The fault rig keeps 2 s: its scenarios time a
# restarted agent's first heartbeat and its state.
HEARTBEAT_S = 10
# How long the stack's agent's each lease request waits for a run (`iowatt-agent run --lease-wait`):
# the agent's own default, 25 s. A queued run wakes the waiting poll at once, a changed policy or
# meter goes with the heartbeat thread (above), and the agent stays online by its heartbeats, so no
# shared-stack test waits on the poll's length; every 5 s, an idle stack's API answered an empty
# poll 12 times a minute (~0.6 CPU-s a minute for the whole idle stack, against ~0.43 every 25 s).
# The fault rig keeps 5 s: its scenarios kill and restart agents around their polls.
LEASE_WAIT_S = 25
# The tests of the shared stack are split in these xdist groups (`--dist loadgroup`): each group runs in
# one test process, on that process's own stack, so two processes carry stack tests side by side.
# tests/e2e/test_zz_stack_left_clean.py runs last in each (docs/testing.md).
STACK_GROUPS = ("stack-a", "stack-b", "stack-c")
# what `iowatt-agent targets ...` and `iowatt-agent meters ...` change in the agent's state directory
# (targets, limits, DBMS consent; meters and the default meter) and in the systemd drop-in directory
AGENT_FILES = ("policy.json", "meters.json")
# one TLS context for every client the tests make (all of them speak http:// to 127.0.0.1): httpx
# builds one per Client and per httpx.get() otherwise, ~25 ms of CPU each, and the tests' polling
# loops make several a second (`http()`, or verify=TLS on httpx's functions)
TLS = ssl.create_default_context()
# what the stack's agent logs when a run of it ends (`Stack.wait` then asks the server): its
# result or failure delivered (spool.delivered, delivered_directly), or the run refused, lost,
# failed or crashed; RUN_LOOK_S: how often the run's status is read from the stack's database
# without such a line (`Stack.status_of`: a SELECT, not a GET /runs/{id} the API answers)
AGENT_RUN_ENDS = (b"delivered", b"run.failed", b"run.refused", b"run.lease_lost", b"run.crash", b"_failed ")
RUN_LOOK_S = 1.0


def new_log_lines(log: Path, offset: int) -> tuple[list[bytes], int]:
    """The whole lines `log` gained after byte `offset`, and the offset after them: a line still
    being written is left for the next read, with its end (the waits below and tests/faults)."""
    with open(log, "rb") as f:
        f.seek(offset)
        new = f.read()
    new = new[: new.rfind(b"\n") + 1]
    return new.split(b"\n")[:-1], offset + len(new)


def run_ended_in(lines: list[bytes], run_id: str) -> bool:
    """One of `lines` is the agent's log of run `run_id`'s end (AGENT_RUN_ENDS)."""
    key = run_id.encode()
    return any(key in line and m in line for line in lines for m in AGENT_RUN_ENDS)


def http(**kwargs: Any) -> httpx.Client:
    """httpx.Client(**kwargs) with the tests' one TLS context (TLS)."""
    return httpx.Client(verify=TLS, **kwargs)


@dataclass(frozen=True)
class State:
    """What a test may change on the shared stack, and must leave as it found it (docs/testing.md):
    the host's policy and meters (the agent's files, and the policy the server last got from it),
    the team's environments and own workloads, the admin's teams, and runs still in flight."""

    files: dict[str, bytes | None]  # path -> content; None: the file did not exist
    policy: dict[str, Any] | None
    environments: frozenset[str]
    workloads: frozenset[str]
    teams: frozenset[str]
    agents: frozenset[str]
    active_runs: frozenset[str]


class Forked:
    """An API process tests/apiforks.py forked (not this process's child): `Popen`'s pid, poll,
    wait and returncode, read from /proc (the forker reaps it; its exit status is not known here:
    -1 once it is gone)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            stat = _stat(self.pid)
            if stat is None or stat[0] in ("Z", "X"):
                self.returncode = -1
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
            time.sleep(0.02)
        assert self.returncode is not None
        return self.returncode


def _fork(forker: subprocess.Popen[bytes], cmd: list[str], env: dict[str, str], log: Path) -> Forked:
    """Ask tests/apiforks.py (`forker`) to start API process `cmd` with `env`, its output in `log`."""
    assert forker.stdin is not None and forker.stdout is not None
    forker.stdin.write(json.dumps({"argv": cmd, "env": env, "log": str(log)}).encode() + b"\n")
    forker.stdin.flush()
    answer = forker.stdout.readline()
    if not answer.strip():
        raise RuntimeError(f"tests/apiforks.py ended (exit {forker.poll()}): {log.parent / 'apiforks.log'}")
    return Forked(int(answer))


@dataclass
class Stack:
    url: str
    token: str
    email: str
    password: str
    agent_id: str
    workdir: Path
    logs: Path
    procs: dict[str, subprocess.Popen[bytes] | Forked] = field(default_factory=dict)
    # how each process was started, so fault tests can kill and start it again (tests/faults)
    commands: dict[str, tuple[list[str], dict[str, str]]] = field(default_factory=dict)
    agent_url: str = ""
    initial: State | None = None  # as it was once the agent came online
    # what the last `live` test's restore() left it as (checked); None: unknown (tests/conftest.py)
    put_back_to: State | None = None
    db: Any = field(default=None, repr=False)  # status_of's connection to the stack's database
    # the Helm chart's topology (`stack(api_processes=N)`): each API process's port, by name
    # (api-0 ...); empty: one `backend.serve` on the URL's port
    api_ports: dict[str, int] = field(default_factory=dict)
    # tests/apiforks.py, when the API processes are its forks (`stack(api_forks=True)`)
    forker: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def members(self, name: str) -> list[str]:
        """The processes `name` stands for: itself, or every process of the group (`api`: api-0 ...
        api-(N-1) in the Helm chart's topology; `worker`: worker-0, worker-1 with several workers)."""
        if name in self.commands:
            return [name]
        found = sorted(n for n in self.commands if n.rsplit("-", 1)[0] == name)
        if not found:
            raise KeyError(name)
        return found

    @property
    def database_url(self) -> str:
        """The stack's database (SQLAlchemy URL), as its API processes have it."""
        return self.commands[self.members("api")[0]][1]["IOWATT_DATABASE_URL"]

    def status_of(self, run_id: str) -> str | None:
        """Run `run_id`'s status as the server stored it: one SELECT on a connection the Stack
        keeps (autocommit: each read sees what is committed), for the waits that poll a run.
        A GET /runs/{id} builds the whole run (jobs, targets, devices, energy): 13-14 ms of the
        API's CPU for a two-job run (50-request blocks), against 0.05 ms of the test's for this
        SELECT (and less of PostgreSQL's). None when the database does not answer (connected
        again at the next look: the fault rig restarts PostgreSQL) or has no such run."""
        import psycopg

        try:
            if self.db is None:
                url = self.database_url
                self.db = psycopg.connect(
                    url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True, connect_timeout=10
                )
            row = self.db.execute("SELECT status FROM runs WHERE id = %s", (run_id,)).fetchone()
        except psycopg.Error:
            self.close_db()
            return None
        return None if row is None else str(row[0])

    def close_db(self) -> None:
        if self.db is not None:
            with contextlib.suppress(Exception):
                self.db.close()
            self.db = None

    def start(self, name: str) -> None:
        """Start a process of the stack again with the command and environment it first had; a
        group (`members`): each of its processes that is not running."""
        for one in self.members(name):
            if one != name and self.alive(one):
                continue
            cmd, env = self.commands[one]
            if self.forker is not None and one in self.api_ports:
                self.procs[one] = _fork(self.forker, cmd, env, self.logs / f"{one}.log")
            else:
                self.procs[one] = _popen(cmd, env, self.logs / f"{one}.log")

    def kill(self, name: str, sig: int = 9) -> None:
        """Signal the process group (SIGKILL by default) and wait until every process of it is
        gone: the API is backend.serve's supervisor AND its uvicorn processes, and a child left
        alive would keep serving on the shared socket (and keep the port from the next start).
        A group (`members`: every API process of the Helm chart's topology, both workers): each
        is signalled, then each awaited."""
        procs = [(one, self.procs[one]) for one in self.members(name)]
        for _, p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, sig)
        for one, p in procs:
            p.wait(timeout=60)
            _until_group_gone(one, p.pid)

    def workers(self, name: str = "api") -> list[int]:
        """The uvicorn worker processes of the API's supervisor, oldest first: its children that are
        forks of it (backend.serve with more than one process: the same command line) or started by
        multiprocessing's spawn (`spawn_main`), not a helper such as multiprocessing's resource
        tracker."""
        sup = self.procs[name].pid
        own = _cmdline(sup)
        found = []
        for pid in _children(sup):
            stat = _stat(pid)
            if stat is None or int(stat[1]) != sup or int(stat[2]) != sup or stat[0] == "Z":
                continue
            cmd = _cmdline(pid)
            if b"spawn_main" in cmd or (cmd == own and cmd != b""):
                found.append((int(stat[19]), pid))
        return [pid for _, pid in sorted(found)]

    def alive(self, name: str) -> bool:
        """The process runs; a group (`members`): every process of it."""
        return all(self.procs[one].poll() is None for one in self.members(name))

    def api(self) -> httpx.Client:
        return http(
            base_url=f"{self.url}/api/v1", headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )

    def agent_cli(self, *args: str) -> str:
        """`iowatt-agent ARGS --state-dir` on the stack's host, as its operator runs it (targets,
        meters; `agent_command`); the running agent re-sends its policy at its next heartbeat."""
        return agent_command(
            [*args, "--state-dir", str(self.workdir / "agent-state")], dropin=self.workdir / "agent-dropin"
        )

    def allow(self, target: str, timeout_s: float = 60) -> None:
        """ADR 0009: the host lists the directory first (`iowatt-agent targets add`); the server
        knows once the agent re-sends its inventory (its heartbeat thread looks at the policy file
        every 2 s). Nothing to do when the server has it already (a test's second run there)."""
        with self.api() as api:

            def reported() -> bool:
                policy = api.get(f"/agents/{self.agent_id}").json().get("policy") or {}
                return target in {t["path"] for t in policy.get("targets", [])}

            if reported():
                return
            mark = self._agent_log_size()
            self.agent_cli("targets", "add", target)
            self._until_agent_sent(
                reported, mark, timeout_s, lambda: f"the agent reports target {target}; logs: {self.tail()}"
            )

    def queue(
        self,
        target: str,
        workload: dict[str, Any] | None = None,
        name: str | None = None,
        *,
        idle_s: float | None = 0,
    ) -> str:
        """Allow `target`, queue a run of `workload` (the `quick` preset by default) on it. No idle
        baseline unless asked (`idle_s`; None: the host's default, 30 s before and after the load
        when the host has a meter): only a test about energy waits through one."""
        self.allow(target)
        with self.api() as api:
            body: dict[str, Any] = {"agent_id": self.agent_id, "target_path": target, "name": name}
            if idle_s is not None:
                body["idle_s"] = idle_s
            if workload is None:
                quick = next(w for w in api.get("/workloads").json()["items"] if w["name"] == "quick")
                body["workload_id"] = quick["id"]
            else:
                body["workload"] = workload
            r = api.post("/runs", json=body)
            assert r.status_code == 201, r.text
            return str(r.json()["id"])

    def wait(self, run_id: str, timeout_s: float = 120) -> dict[str, Any]:
        """The run once it is final. A look at a run costs the API ~13-30 ms of CPU: it is asked
        when the stack's agent logs the run's end (its result or failure delivered, the lease
        refused or lost: `AGENT_RUN_ENDS`) or the database has it final (`status_of`, every
        RUN_LOOK_S: a run another host answers, one cancelled or failed on the server), not
        every 0.3-3 s as the run goes on."""
        log = self.logs / "agent.log"
        seen = {"offset": 0, "asked": -RUN_LOOK_S}
        with self.api() as api:
            last: dict[str, Any] = {}

            def agent_ended() -> bool:
                lines, seen["offset"] = new_log_lines(log, int(seen["offset"]))
                return run_ended_in(lines, run_id)

            def ended() -> dict[str, Any] | None:
                if not agent_ended():
                    if time.monotonic() - seen["asked"] < RUN_LOOK_S:
                        return None
                    seen["asked"] = time.monotonic()
                    if self.status_of(run_id) not in FINAL:
                        return None
                last.update(api.get(f"/runs/{run_id}").json())
                return dict(last) if last["status"] in FINAL else None

            seen["asked"] = time.monotonic() - RUN_LOOK_S  # the first look at once
            return wait_until(
                ended,
                timeout=timeout_s,
                interval=0.1,
                message=lambda: f"run {run_id} ends (it is {last.get('status')}); logs: {self.tail()}",
            )

    def _agent_log_size(self) -> int:
        log = self.logs / "agent.log"
        return log.stat().st_size if log.exists() else 0

    def _until_agent_sent(
        self,
        check: Callable[[], Any],
        mark: int,
        timeout_s: float,
        message: Callable[[], str],
        *,
        at_once: bool = False,
    ) -> None:
        """Wait until `check()` (a request to the API) holds after a change of the host's policy
        files: asked once the stack's agent logged `inventory.sent` after byte `mark` of its log
        (it re-sends a changed policy within 2 s), and every RUN_LOOK_S otherwise (a change that
        sends nothing new), instead of every 0.3 s meanwhile (~16 ms of the API's CPU a look);
        `at_once`: asked first right away (no file was changed)."""
        log = self.logs / "agent.log"
        asked = [time.monotonic() - (RUN_LOOK_S if at_once else 0)]
        read = [mark]  # the log's bytes looked at: a sending once looked at asks no more

        def sent() -> bool:
            lines, read[0] = new_log_lines(log, read[0])
            return any(b"inventory.sent" in line for line in lines)

        def ready() -> Any:
            if not sent() and time.monotonic() - asked[0] < RUN_LOOK_S:
                return None
            asked[0] = time.monotonic()
            return check()

        wait_until(ready, timeout=timeout_s, interval=0.1, message=message)

    # --- one test's changes, put back (the `live` fixture, tests/conftest.py) ---------------------

    def _files(self) -> dict[str, bytes | None]:
        found: dict[str, bytes | None] = {}
        for name in AGENT_FILES:
            p = self.workdir / "agent-state" / name
            found[str(p)] = p.read_bytes() if p.exists() else None
        dropin = self.workdir / "agent-dropin"
        for p in sorted(dropin.glob("*")) if dropin.is_dir() else []:
            found[str(p)] = p.read_bytes()
        return found

    def state(self) -> State:
        with self.api() as api:
            me = api.get("/auth/me").json()
            workloads = api.get("/workloads", params={"limit": 500}).json()["items"]
            in_flight = [("status", s) for s in ("queued", "assigned", "running")]
            active = api.get("/runs", params=[*in_flight, ("limit", "500")]).json()["items"]
            return State(
                files=self._files(),
                policy=api.get(f"/agents/{self.agent_id}").json().get("policy"),
                environments=frozenset(e["id"] for e in api.get("/environments").json()["items"]),
                workloads=frozenset(w["id"] for w in workloads if not w["builtin"]),
                teams=frozenset(t["id"] for t in me["teams"]),
                agents=frozenset(a["id"] for a in api.get("/agents").json()["items"]),
                active_runs=frozenset(r["id"] for r in active),
            )

    def differences(self, before: State, now: State | None = None) -> list[str]:
        """What is not as in `before` (`now`, or the stack as it is), one line each (empty: nothing)."""
        now = self.state() if now is None else now
        out = [
            f"{path}: {'changed' if now.files.get(path) is not None else 'removed'}"
            for path, content in before.files.items()
            if now.files.get(path) != content
        ]
        out += [f"{path}: added" for path in now.files.keys() - before.files.keys()]
        if now.policy != before.policy:
            out.append(f"the agent's policy as the server has it: {before.policy} -> {now.policy}")
        for what in ("environments", "workloads", "teams", "agents", "active_runs"):
            extra = getattr(now, what) - getattr(before, what)
            gone = getattr(before, what) - getattr(now, what)
            if extra:
                out.append(f"{what} added: {sorted(extra)}")
            if gone and what != "active_runs":
                out.append(f"{what} removed: {sorted(gone)}")
        return out

    def restore(self, before: State, timeout_s: float = 60) -> list[str]:
        """Put back what a test changed since `before`: cancel its runs still in flight, delete the
        environments, workloads and agents it made, leave the teams the admin joined, write the agent's
        policy and meters back, and wait until the server has that policy again. Returns what was
        put back (the test's log shows it)."""
        now = self.state()
        changed = self.differences(before, now)
        if not changed:
            return []
        with self.api() as api:
            for rid in now.active_runs - before.active_runs:
                api.post(f"/runs/{rid}/cancel")
            for env in now.environments - before.environments:
                api.delete(f"/environments/{env}", params={"force": "true"})
            for wid in now.workloads - before.workloads:
                api.delete(f"/workloads/{wid}")
            me = api.get("/auth/me").json()["id"]
            for team in now.teams - before.teams:
                api.delete(f"/teams/{team}/members/{me}")
            for agent in now.agents - before.agents:
                api.delete(f"/agents/{agent}")
        mark = self._agent_log_size()
        for path, content in before.files.items():
            p = Path(path)
            if content is None:
                p.unlink(missing_ok=True)
            elif not p.exists() or p.read_bytes() != content:
                tmp = p.with_name(p.name + ".restore")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(content)
                tmp.replace(p)
        for path in self._files().keys() - before.files.keys():
            Path(path).unlink(missing_ok=True)

        # the agent re-sends a changed policy within 2 s (its heartbeat thread looks at the files):
        # waited for with one request a look, once it logged the sending (a whole `state()` is
        # seven, ~80 ms of the API's CPU); then everything is checked (runs cancelled above end)
        def left() -> str:
            return f"the stack as before the test: {self.differences(before)}; logs: {self.tail()}"

        with self.api() as api:
            self._until_agent_sent(
                lambda: api.get(f"/agents/{self.agent_id}").json().get("policy") == before.policy,
                mark,
                timeout_s,
                left,
                at_once=now.files == before.files,
            )
        wait_until(lambda: not self.differences(before), timeout=timeout_s, interval=0.3, message=left)
        return changed

    def tail(self) -> str:
        return "\n".join(
            f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:] for p in sorted(self.logs.glob("*.log"))
        )


@dataclass
class RecordedHost:
    """A second host on a stack that runs nothing itself: each run queued to it is answered with a
    recorded engine document (a real TPC-H run's, say) through the agent API, as the agent answers
    a lease (lease, start, result with its power measurement). Its inventory is this machine's,
    with the targets, DBMS consent and meters a test gave it, built by the agent's own code; the
    power is measured for real by the agent's PowerSession around a short stand-in load."""

    stack: Stack
    agent_id: str
    token: str
    state: Path

    def client(self) -> httpx.Client:
        return http(
            base_url=f"{self.stack.url}/api/v1", headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )

    def cli(self, *args: str) -> str:
        """`iowatt-agent ARGS --state-dir` of this host (targets, allow-dbms, meters; `agent_command`)."""
        return agent_command(
            [*args, "--state-dir", str(self.state)], dropin=self.state.parent / "recorded-dropin"
        )

    def report_inventory(self, *, devices: Sequence[dict[str, Any]] = ()) -> None:
        """Report this machine's inventory with the host policy's targets; `devices`: raw device
        targets added to the reported policy as a host reports them (path, size_bytes, model,
        destructive ...), for tests whose recorded runs need a device this machine does not have."""
        from iowatt_agent.inventory import collect
        from iowatt_agent.policy import load_report

        inventory = collect(policy=load_report(self.state))
        doc = json.loads(inventory.model_dump_json(by_alias=True))
        for d in devices:
            doc["policy"]["targets"].append({"kind": "device", "writable": True, "destructive": False, **d})
        with self.client() as c:
            r = c.put(f"/agents/{self.agent_id}/inventory", json=doc)
            assert r.status_code == 200, r.text

    def heartbeat(self) -> None:
        """The host is alive (an agent heartbeats every few seconds; a RecordedHost when told)."""
        with self.client() as c:
            r = c.post(f"/agents/{self.agent_id}/heartbeat", json={"state": "idle"})
            assert r.status_code == 200, r.text

    def answer(self, run_id: str, doc: dict[str, Any], *, load_s: float = 2, idle_s: float = 1) -> None:
        """Take the lease of `run_id` (the stack's worker dispatches it) and upload `doc` as its
        result, with the power the run's meter measured over idle, `load_s` of stand-in load and idle."""
        from datetime import UTC, datetime

        from iowatt_agent.policy import load_meters
        from iowatt_agent.power import PowerSession

        with self.client() as c:

            def leased() -> dict[str, Any] | None:
                r = c.post(f"/agents/{self.agent_id}/lease", params={"wait_s": 2})
                assert r.status_code == 200, r.text
                lease: dict[str, Any] | None = r.json()["lease"]
                return lease

            lease = wait_until(leased, timeout=60, interval=0, message=f"a lease of run {run_id}")
            assert lease["run_id"] == run_id, (lease["run_id"], run_id)
            lid = lease["lease_id"]
            r = c.post(f"/runs/{run_id}/start", json={"lease_id": lid})
            assert r.status_code == 200, r.text
            started = datetime.now(UTC)
            power = None
            meters = load_meters(self.state)
            meter = lease["meter"] if lease["meter"] is not None else meters.default  # null: the host's
            if meter:
                entry = meters.meters[meter]
                session = PowerSession(entry.spec, idle_s=idle_s, target=lease["target_path"], name=meter)
                session.start()
                session.idle("idle_before")
                with session.phase("load"):
                    time.sleep(load_s)  # the stand-in for the recorded run's load: the meter samples it
                session.idle("idle_after")
                power = session.finish()
            body = {
                "lease_id": lid,
                "upload_id": str(uuid.uuid4()),
                "engine_result": doc,
                "engine_exit_code": 0,
                "started_at": started.isoformat(),
                "finished_at": datetime.now(UTC).isoformat(),
                "power": power,
            }
            r = c.put(f"/runs/{run_id}/result", json=body)
            assert r.status_code == 201, r.text


@contextlib.contextmanager
def recorded_host(s: Stack, name: str = "recorded") -> Iterator[RecordedHost]:
    """Enrol a RecordedHost on `s` (`iowatt-agent enroll`, as a host does); deleted afterwards."""
    from iowatt_agent.credentials import load_config

    state = s.workdir / f"{name}-state"
    token = enrollment_token(s.url, s.token)
    agent_command(
        ["enroll", "--server", s.url, "--token-file", "-", "--name", name, "--state-dir", str(state)],
        dropin=s.workdir / f"{name}-dropin",
        stdin=token,
    )
    cfg = load_config(state)
    host = RecordedHost(stack=s, agent_id=str(cfg.agent_id), token=cfg.agent_token, state=state)
    try:
        yield host
    finally:
        with s.api() as api:
            api.delete(f"/agents/{host.agent_id}")
        shutil.rmtree(state, ignore_errors=True)


def agent_command(args: Sequence[str], *, dropin: Path | None, stdin: str | None = None) -> str:
    """`iowatt-agent ARGS` (`targets add`, `meters set`, `enroll`, ...) run in this process by
    typer's runner: the agent's own command code, as the host's operator runs it, without a Python
    start per call (~0.35 CPU-s each; the stack and browser tests make about a hundred). Returns its
    standard output; a non-zero exit raises CalledProcessError with the output. The agent that runs
    the benchmarks (`iowatt-agent run`) stays a process of its own; the command line itself is
    tested in tests/agent. `dropin`: IOWATT_AGENT_SYSTEMD_DROPIN_DIR (None: unset)."""
    from iowatt_agent import cli
    from typer.testing import CliRunner

    res = CliRunner().invoke(
        cli.app,
        list(args),
        env={"IOWATT_AGENT_SYSTEMD_DROPIN_DIR": None if dropin is None else str(dropin)},
        input=stdin,
    )
    if res.exit_code != 0:
        raise subprocess.CalledProcessError(
            res.exit_code, ["iowatt-agent", *args], output=f"{res.output}\n{res.exception!r}"
        )
    return res.stdout


def _bootstrap(env: dict[str, str], work: Path) -> None:
    """`iowatt-server bootstrap` on the stack's database (the admin, its team and API token, in
    `work`/creds and `work`/token), run in this process by typer's runner as `agent_command` runs
    the agent's commands: a process of its own cost ~1.4 CPU-s of imports per stack. The settings
    are read from the stack's environment for the call and from this process's again after it."""
    from typer.testing import CliRunner

    from backend.cli import app
    from backend.db import get_engine
    from tests.conftest import reset_settings_caches

    reset_settings_caches()
    try:
        res = CliRunner().invoke(
            app,
            ["bootstrap", "--credentials-file", str(work / "creds"), "--token-file", str(work / "token")],
            env={k: env[k] for k in ("IOWATT_DATABASE_URL", "IOWATT_REDIS_URL", "IOWATT_ENV")},
        )
        get_engine().dispose()  # the stack's database: its connections are not this process's
    finally:
        reset_settings_caches()
    if res.exit_code != 0:
        raise RuntimeError(f"iowatt-server bootstrap: exit {res.exit_code}: {res.output} {res.exception!r}")


def enrollment_token(url: str, admin_token: str) -> str:
    """A one-use enrolment token for the admin's first team, as the UI's token page makes one
    (`iowatt-server enrollment-token` cost a process start, ~1.2 CPU-s, per stack and host)."""
    with http(
        base_url=f"{url}/api/v1", headers={"Authorization": f"Bearer {admin_token}"}, timeout=30
    ) as api:
        team = api.get("/auth/me").json()["teams"][0]["id"]
        r = api.post("/agents/enrollment-tokens", json={"team_id": team, "ttl_s": 600})
        assert r.status_code == 201, r.text
        return str(r.json()["token"])


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


def _children(pid: int) -> list[int]:
    """The processes `pid` started (/proc/PID/task/TID/children of each of its threads): a look at
    a few files where a walk over /proc reads every process's stat (hundreds on a shared machine;
    the fault scenarios ask for the API's processes up to 50 times a second). Every process of
    /proc when the kernel does not list children."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
    kids: list[int] = []
    for task in tasks:
        try:
            kids += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:
            return [int(d.name) for d in Path("/proc").iterdir() if d.name.isdigit()]
        except OSError:
            continue
    return kids


def _until_group_gone(name: str, pgid: int) -> None:
    wait_until(
        lambda: not group_members(pgid),
        timeout=60,
        interval=0.05,
        message=lambda: f"{name}'s process group {pgid} gone (left: {group_members(pgid)})",
    )


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
        with http(timeout=2) as c:
            wait_until(
                lambda: c.get(url).status_code == 200,
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
    api_workers: int = API_WORKERS,
    heartbeat_s: int = HEARTBEAT_S,
    lease_wait_s: int = LEASE_WAIT_S,
    api_processes: int = 0,
    api_forks: bool = False,
    workers: int = 1,
) -> Iterator[Stack]:
    """`beat` adds Celery beat; `api_workers` uvicorn processes serve the API; `agent_args` and
    `agent_env` go to `iowatt-agent run`; `agent_url` maps the API's URL to the one the agent
    enrols with (a proxy in between, tests/faults); `heartbeat_s`: the heartbeat interval the
    server asks of the agent (IOWATT_HEARTBEAT_INTERVAL_S); `lease_wait_s`: the agent's long-poll
    wait (`--lease-wait`).

    `api_processes` N > 0: the Helm chart's topology instead of one `backend.serve` (issue 30):
    N API processes (`backend.serve --workers 1`) on N ports behind Caddy, whose address is the
    stack's URL (bench/load/topology.py, as the load smoke test runs it; `Stack.api_ports`,
    processes `api-0` ... and `caddy`). `workers` Celery workers (`worker`, or `worker-0`,
    `worker-1` ... named `-n worker-K@%h`); `Stack.kill("api")` / `kill("worker")` then kill
    every one of them (`Stack.members`). `api_forks`: those API processes are forks of one process
    that imported the app once (tests/apiforks.py; each runs backend.serve's own main()), so that
    starting one again costs its lifespan, not the app's imports."""
    if not ENGINE.exists():
        raise RuntimeError(f"{ENGINE} is missing: run `make engine`")
    work = Path(tempfile.mkdtemp(prefix="iowatt-e2e-"))
    logs = work / "logs"
    logs.mkdir()
    db = pg.migrated_database("iowatt_e2e")
    # a Redis database of its own, so tasks queued by the in-process API tests never reach this worker
    redis_e2e = redis_url.rsplit("/", 1)[0] + f"/{redis_db}"
    env = {
        **os.environ,
        "IOWATT_DATABASE_URL": db,
        "IOWATT_REDIS_URL": redis_e2e,
        "IOWATT_ENV": "test",
        "IOWATT_HEARTBEAT_INTERVAL_S": str(heartbeat_s),
        # the tests' alert receivers listen on 127.0.0.1 in the test process (ADR 0041's address rule)
        "IOWATT_ALERT_PRIVATE_TARGETS": "true",
        # no shutdown grace: an API of a test's stack is stopped only at the stack's end (the fault
        # rig kills them), where the one request still running is the agent's long-poll, which
        # outlives the agent by up to its 25 s wait; each stack's stop waited the default 5 s for it,
        # the three shared stacks and the fault rig at the very end of the suite (test_multiproc
        # checks the grace itself)
        "IOWATT_API_SHUTDOWN_GRACE_S": "0",
    }
    procs: dict[str, subprocess.Popen[bytes] | Forked] = {}
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    forker: subprocess.Popen[bytes] | None = None

    def spawn(name: str, *cmd: str, extra: dict[str, str] | None = None) -> None:
        commands[name] = (list(cmd), {**env, **(extra or {})})
        procs[name] = _popen(*commands[name], logs / f"{name}.log")

    s: Stack | None = None
    try:
        _bootstrap(env, work)
        creds = dict(line.split("=", 1) for line in (work / "creds").read_text().split())
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        api_ports: dict[str, int] = {}
        if api_processes:
            ports = [free_port() for _ in range(api_processes)]
            api_ports = {f"api-{k}": p for k, p in enumerate(ports)}
            for proc in several_apis(ports, port, env, work):
                if api_forks and proc.name in api_ports:
                    if forker is None:
                        forker = subprocess.Popen(
                            [sys.executable, "-m", "tests.apiforks"],
                            cwd=REPO,
                            env=proc.env,
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            stderr=open(logs / "apiforks.log", "ab"),  # noqa: SIM115 - the child keeps it
                            start_new_session=True,
                        )
                        procs["apiforks"] = forker
                    commands[proc.name] = (proc.argv, proc.env)
                    procs[proc.name] = _fork(forker, proc.argv, proc.env, logs / f"{proc.name}.log")
                else:
                    spawn(proc.name, *proc.argv, extra=proc.env)
        else:
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
                str(api_workers),
                extra={"PROMETHEUS_MULTIPROC_DIR": str(work / "api-metrics")},
            )
        if workers == 1:
            spawn("worker", *celery_worker_argv())
        for k in range(workers if workers > 1 else 0):
            spawn(f"worker-{k}", *celery_worker_argv("-n", f"worker-{k}@%h"))
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
        for own in api_ports.values():  # each process, then through Caddy
            _wait_http(f"http://127.0.0.1:{own}/api/v1/health")
        _wait_http(f"{url}/api/v1/health")
        enrol_url = agent_url(url) if agent_url else url
        token = enrollment_token(url, (work / "token").read_text().strip())
        state = work / "agent-state"
        agent_command(
            [
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
            dropin=None,
            stdin=token,
        )
        spawn(
            "agent",
            # on one CPU (its engine's runs: flat out for their seconds, tests/services.py)
            *on_one_cpu(
                [
                    str(BIN / "iowatt-agent"),
                    "run",
                    "--state-dir",
                    str(state),
                    "--engine",
                    str(ENGINE),
                    "--lease-wait",
                    str(lease_wait_s),
                    *agent_args,
                ]
            ),
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
            api_ports=api_ports,
            forker=forker,
        )
        # the agent's start (imports, its first heartbeat and inventory) takes seconds, longer on
        # a busy machine: the server is asked once the agent logged its inventory sent, not every
        # 0.3 s meanwhile (the failure below names what is missing when it never does)
        with contextlib.suppress(WaitTimeout):
            wait_until(
                lambda: b"inventory.sent" in (logs / "agent.log").read_bytes(), timeout=60, interval=0.1
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
            # its first inventory carries its policy: the state every test starts from
            wait_until(
                lambda: api.get(f"/agents/{s.agent_id}").json().get("policy"),
                timeout=30,
                interval=0.3,
                message=lambda: f"the agent reports its policy; logs: {s.tail()}",
            )
        s.initial = s.state()
        yield s
    finally:
        if s is not None:
            s.close_db()
        # all asked to stop at once (the agent drains, the worker finishes its task), then awaited
        order = ("agent", "beat", "worker", "caddy", "api", "apiforks")
        names = [n for kind in order for n in sorted(procs) if kind in (n, n.rsplit("-", 1)[0])]
        for name in names:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(procs[name].pid, 15)
        for name in names:
            p = procs[name]
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
        # logs, agent state and tokens of this stack: a failing test has printed the logs' tails;
        # IOWATT_TEST_STACK_LOGS=DIR keeps the logs (DIR/<stack's directory name>/, to count requests)
        keep = os.environ.get("IOWATT_TEST_STACK_LOGS")
        if keep:
            shutil.copytree(logs, Path(keep) / work.name, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
