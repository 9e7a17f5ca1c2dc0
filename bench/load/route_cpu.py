"""CPU per request of the fleet's hot routes, in one process (issue 30).

`bench/load/run.py` measures latencies with the whole stack on the machine's two cores, where every
route waits for every other; this measures what one request of each route costs the API itself:
the app (`backend.main.create_app`, production settings apart from `IOWATT_ENV=dev`) in this
process, driven in process (`tests/asgi_client.py`, no sockets), against a private PostgreSQL and
Redis with N enrolled agents (the load simulator's inventory) and a team member. Per route: this
process's CPU (`time.process_time`, every thread: the app's event loop and its threadpool) over
`--calls` requests after a warm-up, the PostgreSQL server's meanwhile (its processes' CPU from /proc,
10 ms ticks: the SQL's share), and the SQL statements one request sends. Each request gets
its own session and commits, as in production. The figure includes the in-process client's own
share (building the request, reading the answer: the same for every version of the server).
`--profile DIR` profiles each route's blocks with yappi (CPU clock, every thread: the app runs on
the client's portal thread and the threadpool; yappi is not a dependency: `pip install --target D
yappi` and PYTHONPATH=D) into DIR/<route>.pstat (`python -m pstats`). The CPU figures are taken
without it. Builtins are left out of the profile unless YAPPI_BUILTINS=1: yappi's hook on every
builtin call charges a loop of them many times its cost (the NUL walk of a result upload's
engine document read ~26 ms a call profiled with them, ~1 ms measured).

    .venv/bin/python bench/load/route_cpu.py --agents 1000 --calls 300

The routes: an idle agent's heartbeat; its long-poll's look (`wait_s=0`: one look, no wait);
`POST /runs` (the built-in `quick` workload on the agent's allowed directory); `GET /runs?limit=50`;
`GET /runs/{id}`; an open page's poll of an active run (an 80-job run with its 300 progress reports,
bench/pages/live.py's): the whole run (`get_active`) or its progress since the page's last report
(`progress`, GET /runs/{id}/progress?since_t_s=, two new reports); and an agent's run from lease
to result: `POST /runs/{id}/start`, one progress report, `PUT /runs/{id}/result` (the load
simulator's engine document and 30 power samples), its summary split by request (`requests`:
look, start, progress, result, each's CPU and statements). Not routes but the worker's share of each
run (`track`, `energy`): the bodies of the `series.track_run` and `energy.compute_run` tasks a
stored result queues, called in this process on the runs `run` finished (with N agents cycled
through, each run is most often its agent's first: a new series).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.load import loadsim  # noqa: E402


@contextlib.contextmanager
def counting_statements() -> Iterator[list[int]]:
    """The SQL statements sent meanwhile (cursor executions of every engine)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    n = [0]

    def count(_c: object, _cur: object, statement: str, *_: object) -> None:
        n[0] += 1
        if os.environ.get("ROUTE_CPU_SQL"):
            print("   SQL:", " ".join(statement.split())[:300], file=sys.stderr)

    event.listen(Engine, "before_cursor_execute", count)
    try:
        yield n
    finally:
        event.remove(Engine, "before_cursor_execute", count)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its children, live (utime + stime) and reaped (cutime + cstime):
    the PostgreSQL server's (its postmaster's pid), whose backends do the SQL's share of a request."""
    tick = os.sysconf("SC_CLK_TCK")

    def fields(p: int | str) -> list[str]:
        return Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()

    own = fields(pid)
    total = sum(int(x) for x in own[11:15])  # utime stime cutime cstime
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                f = fields(d.name)
            except OSError:
                continue
            if int(f[1]) == pid:  # ppid
                total += int(f[11]) + int(f[12])
    return total / tick


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=200, help="measured requests per route")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=3, help="blocks per route, alternating between routes")
    ap.add_argument(
        "--only",
        help="comma-separated route keys (heartbeat,look,post_run,list,get_run,get_active,progress,run; "
        "track and energy: "
        "the worker's series.track_run and energy.compute_run bodies on the runs `run` finished)",
    )
    ap.add_argument("--profile", type=Path, help="yappi's profile of each route in DIR/<route>.pstat")
    ap.add_argument(
        "--inventory",
        type=Path,
        help="every agent's inventory: a real host's (`iowatt-agent inventory --json`, ~10 KB) with the "
        "simulator's policy, instead of the simulator's few hundred bytes",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from tests.services import postgres, redis_server

    with postgres() as pg, redis_server() as redis_url:
        db_url = pg.migrated_database("iowatt_routes")
        work = Path(tempfile.mkdtemp(prefix="iowatt-route-cpu-"))
        try:
            env = {
                "IOWATT_ENV": "dev",
                "IOWATT_STATE_DIR": str(work / "state"),
                "IOWATT_DATABASE_URL": db_url,
                "IOWATT_REDIS_URL": redis_url,
                "IOWATT_SECRET_KEY": "route-cpu-" + uuid.uuid4().hex,
                "PROMETHEUS_MULTIPROC_DIR": str(work / "metrics"),
            }
            (work / "metrics").mkdir()
            users = loadsim._bootstrap({**os.environ, **env}, work, 1)
            os.environ.update(env)
            pg_pid = int((pg.root / "data" / "postmaster.pid").read_text().split()[0])
            out = run(args, users[0], (work / "token").read_text().strip(), pg_pid)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out["summary"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


def run(args: argparse.Namespace, user_token: str, admin_token: str, pg_pid: int) -> dict[str, Any]:
    from backend.config import get_settings
    from backend.main import create_app
    from tests.asgi_client import InProcessClient

    get_settings.cache_clear()
    api = "/api/v1"
    with InProcessClient(create_app(), raise_server_exceptions=True) as c:
        admin = {"Authorization": f"Bearer {admin_token}"}
        user = {"Authorization": f"Bearer {user_token}"}
        team_id = c.get(f"{api}/auth/me", headers=admin).json()["teams"][0]["id"]
        inventory = dict(loadsim.INVENTORY)
        if args.inventory:
            inventory = json.loads(args.inventory.read_text()) | {"policy": loadsim.INVENTORY["policy"]}
            inventory["mounts"] = [*loadsim.INVENTORY["mounts"], *inventory.get("mounts", [])]
        agents: list[tuple[str, dict[str, str]]] = []
        for lo in range(0, args.agents, 1000):
            tok = c.post(
                f"{api}/agents/enrollment-tokens",
                json={"team_id": team_id, "max_uses": min(1000, args.agents - lo)},
                headers=admin,
            ).json()["token"]
            for k in range(lo, min(args.agents, lo + 1000)):
                inv = {**inventory, "hostname": f"load-{k:04d}"}
                r = c.post(
                    f"{api}/agents/enroll",
                    json={
                        "enrollment_token": tok,
                        "name": f"load-{k:04d}",
                        "hostname": f"load-{k:04d}",
                        "agent_version": loadsim.AGENT_VERSION,
                        "inventory": inv,
                    },
                )
                r.raise_for_status()
                agents.append((r.json()["agent_id"], {"Authorization": f"Bearer {r.json()['agent_token']}"}))
        boot = {a: str(uuid.uuid4()) for a, _ in agents}
        for a, h in agents:  # as the simulator: the inventory again, then heartbeats
            c.put(f"{api}/agents/{a}/inventory", json={**inventory, "hostname": a}, headers=h)
        quick = next(
            w["id"]
            for w in c.get(f"{api}/workloads", params={"limit": 200}, headers=user).json()["items"]
            if w["name"] == "quick"
        )
        template = loadsim.TEMPLATE.read_text()
        state: dict[str, Any] = {"i": 0, "runs": []}

        def nth() -> tuple[str, dict[str, str]]:
            state["i"] = (state["i"] + 1) % len(agents)
            return agents[state["i"]]

        def heartbeat() -> None:
            a, h = nth()
            body = {"state": "idle", "current_run_id": None, "current_lease_id": None, "boot_id": boot[a]}
            r = c.post(f"{api}/agents/{a}/heartbeat", json=body | {"agent_version": "load-sim"}, headers=h)
            assert r.status_code == 200, r.text

        def look() -> None:
            a, h = nth()
            r = c.post(f"{api}/agents/{a}/lease", params={"wait_s": 0}, json={"boot_id": boot[a]}, headers=h)
            assert r.status_code == 200 and r.json()["lease"] is None, r.text

        def post_run() -> None:
            a, _ = nth()
            body = {"agent_id": a, "target_path": loadsim.TARGET, "workload_id": quick, "idle_s": 0.5}
            r = c.post(f"{api}/runs", json=body, headers=user)
            assert r.status_code == 201, r.text
            state["runs"].append((r.json()["id"], a))

        def list_runs() -> None:
            r = c.get(f"{api}/runs", params={"limit": 50}, headers=user)
            assert r.status_code == 200, r.text

        def get_run() -> None:
            rid, _ = state["runs"][state["i"] % len(state["runs"])]
            state["i"] += 1
            assert c.get(f"{api}/runs/{rid}", headers=user).status_code == 200

        def live_run() -> tuple[str, float]:
            """One run left running for the `get_active` and `progress` routes, made at their first
            call: bench/pages/live.py's 80-job run with 300 progress reports (an open page's run an
            hour in), on an agent of its own that nothing else calls (an idle heartbeat of its agent
            would fail it as lost). Its id and the `t_s` of its third-last report: a page polling
            every 2 s holds all but the last two."""
            if "live" in state:
                return state["live"]
            from backend.db import unit_of_work
            from backend.run import service as run_service

            tok = c.post(
                f"{api}/agents/enrollment-tokens", json={"team_id": team_id, "max_uses": 1}, headers=admin
            ).json()["token"]
            r = c.post(
                f"{api}/agents/enroll",
                json={
                    "enrollment_token": tok,
                    "name": "load-live",
                    "hostname": "load-live",
                    "agent_version": loadsim.AGENT_VERSION,
                    "inventory": {**inventory, "hostname": "load-live"},
                },
            )
            a, h = r.json()["agent_id"], {"Authorization": f"Bearer {r.json()['agent_token']}"}
            job = {"rw": "randread", "size_bytes": 16 << 20, "time_based": True, "rate_iops": 50}
            jobs = [
                {**job, "name": f"job{i:02d}", "bs_bytes": 4096 << (i % 3), "runtime_s": 30}
                for i in range(80)
            ]
            body = {"agent_id": a, "target_path": loadsim.TARGET, "workload": {"jobs": jobs}, "idle_s": 0}
            r = c.post(f"{api}/runs", json=body, headers=user)
            assert r.status_code == 201, r.text
            rid = r.json()["id"]
            with unit_of_work() as s:
                run_service.dispatch(s, run_id=uuid.UUID(rid))
            boot = {"boot_id": str(uuid.uuid4())}
            lid = c.post(f"{api}/agents/{a}/lease", params={"wait_s": 0}, json=boot, headers=h).json()[
                "lease"
            ]["lease_id"]
            assert c.post(f"{api}/runs/{rid}/start", json={"lease_id": lid}, headers=h).status_code == 200
            for k in range(300):
                report = {
                    "lease_id": lid,
                    "job_index": k // 30,
                    "job_name": f"job{k // 30:02d}",
                    "percent": 100.0 * (k % 30) / 30,
                    "elapsed_ns": (k % 30) * 1_000_000_000,
                    "read_iops": 50.0 + k % 7,
                    "read_bw_bytes": 204800 + k,
                    "write_iops": 0.0,
                    "write_bw_bytes": 0,
                }
                assert c.post(f"{api}/runs/{rid}/progress", json=report, headers=h).status_code == 200
            samples = c.get(f"{api}/runs/{rid}", headers=user).json()["progress"]["samples"]
            state["live"] = (rid, samples[-3]["t_s"])
            return state["live"]

        def get_active() -> None:
            rid, _ = live_run()
            r = c.get(f"{api}/runs/{rid}", headers=user)
            assert r.status_code == 200 and len(r.json()["progress"]["samples"]) == 300, r.text

        def progress_since() -> None:
            rid, since = live_run()
            r = c.get(f"{api}/runs/{rid}/progress", params={"since_t_s": since}, headers=user)
            assert r.status_code == 200 and len(r.json()["progress"]["samples"]) == 2, r.text

        def agent_run() -> None:
            """A queued run dispatched (the worker's service call, not measured), then the agent's
            part: the lease (a look that finds it), start, one progress report, the result."""
            rid, a = state["runs"].pop()
            h = dict(agents)[a]
            from backend.db import unit_of_work
            from backend.run import service as run_service

            with pause(), unit_of_work() as s:
                run_service.dispatch(s, run_id=uuid.UUID(rid))
            with part("look"):
                r = c.post(
                    f"{api}/agents/{a}/lease", params={"wait_s": 0}, json={"boot_id": boot[a]}, headers=h
                )
            lease = r.json()["lease"]
            assert lease is not None and lease["run_id"] == rid, r.text
            lid = lease["lease_id"]
            with part("start"):
                assert c.post(f"{api}/runs/{rid}/start", json={"lease_id": lid}, headers=h).status_code == 200
            progress = {
                "lease_id": lid,
                "job_index": 0,
                "job_name": "randread-4k",
                "percent": 50.0,
                "elapsed_ns": 1_000_000_000,
                "read_iops": 250000.0,
                "read_bw_bytes": 1024000000,
                "write_iops": 0.0,
                "write_bw_bytes": 0,
            }
            with part("progress"):
                assert c.post(f"{api}/runs/{rid}/progress", json=progress, headers=h).status_code == 200
            t0 = datetime.now(UTC) - timedelta(seconds=3)
            started, finished = t0 + timedelta(seconds=0.5), t0 + timedelta(seconds=2.5)
            t_ns = list(range(0, 3_000_000_001, 100_000_000))
            value = [95.0 if 5e8 <= t < 2.5e9 else 80.0 for t in t_ns]
            envelope = {
                "lease_id": lid,
                "upload_id": str(uuid.uuid4()),
                "engine_result": "@ENGINE@",
                "engine_exit_code": 0,
                "started_at": started.isoformat(),
                "finished_at": finished.isoformat(),
                "agent_version": "load-sim",
                "power": loadsim._power(t0, 500_000_000, 2_000_000_000, t_ns, value, 10.0),
            }
            engine = template.replace(loadsim.TEMPLATE_PATH, f"{loadsim.TARGET}/iowatt-{rid}.dat")
            body = json.dumps(envelope).replace('"@ENGINE@"', engine).encode()
            with part("result"):
                r = c.put(
                    f"{api}/runs/{rid}/result", content=body, headers=h | {"Content-Type": "application/json"}
                )
            assert r.status_code == 201, r.text
            state["done_track"].append(rid)
            state["done_energy"].append(rid)

        def derived(task: Callable[[str], object], done: str) -> Callable[[], None]:
            """A Celery task body that each stored result queues (the worker's process, here in
            this one): on the runs `run` finished, oldest first."""

            def call() -> None:
                task(state[done].pop(0))

            return call

        from worker.tasks import energy as energy_tasks
        from worker.tasks import series as series_tasks

        state["done_track"], state["done_energy"] = [], []
        paused = [0.0]

        # the run's requests apart: their CPU in the measured blocks, their statements in the counted call
        parts: dict[str, list[float]] = {}
        part_stmts: dict[str, int] = {}
        counted: list[list[int]] = []  # the statement counter while the run's statements are counted

        @contextlib.contextmanager
        def part(name: str) -> Iterator[None]:
            t, n0 = time.process_time(), counted[0][0] if counted else 0
            try:
                yield
            finally:
                parts.setdefault(name, [0.0])[-1] += time.process_time() - t
                if counted:
                    part_stmts[name] = counted[0][0] - n0

        @contextlib.contextmanager
        def pause() -> Iterator[None]:
            t = time.process_time()
            try:
                yield
            finally:
                paused[0] += time.process_time() - t

        def health() -> None:
            assert c.get(f"{api}/health").status_code == 200

        def me() -> None:
            assert c.get(f"{api}/auth/me", headers=user).status_code == 200

        routes: dict[str, Callable[[], None]] = {
            "health": health,
            "me": me,
            "heartbeat": heartbeat,
            "look": look,
            "post_run": post_run,
            "list": list_runs,
            "get_run": get_run,
            # an open page of an active run, each poll: the whole run, or its progress since the
            # samples the page holds (GET /runs/{id}/progress?since_t_s=)
            "get_active": get_active,
            "progress": progress_since,
            "run": agent_run,  # uses the runs post_run queued: after it in each block
            # the worker's tasks per stored result (not routes): on the runs `run` finished
            "track": derived(series_tasks.track_run, "done_track"),
            "energy": derived(energy_tasks.compute_run, "done_energy"),
        }
        keys = args.only.split(",") if args.only else [k for k in routes if k not in ("health", "me")]
        if any(k in keys for k in ("track", "energy")) and "run" not in keys:
            keys.insert(min(keys.index(k) for k in ("track", "energy") if k in keys), "run")
        if "run" in keys and "post_run" not in keys:
            keys.insert(keys.index("run"), "post_run")
        per: dict[str, list[float]] = {k: [] for k in keys}
        stmts: dict[str, float] = {}
        sys_ms: dict[str, list[float]] = {k: [] for k in keys}
        pg_ms: dict[str, list[float]] = {k: [] for k in keys}
        if args.profile:
            import yappi  # type: ignore[import-not-found]

            args.profile.mkdir(parents=True, exist_ok=True)
            yappi.set_clock_type("cpu")
            for k in keys:  # a profiled block of each route, apart from the measured ones
                yappi.clear_stats()
                yappi.start(builtins=bool(os.environ.get("YAPPI_BUILTINS")))
                for _ in range(args.calls):
                    routes[k]()
                yappi.stop()
                yappi.get_func_stats().save(str(args.profile / f"{k}.pstat"), type="pstat")
        for k in keys:  # warm-up, and each route's statements per request
            for _ in range(args.warmup):
                routes[k]()
            if os.environ.get("ROUTE_CPU_SQL"):
                print(f"-- {k}", file=sys.stderr)
            with counting_statements() as n:
                counted.append(n)
                routes[k]()
                counted.clear()
            stmts[k] = n[0]
        for _ in range(args.blocks):
            for k in keys:
                paused[0] = 0.0
                for v in parts.values() if k == "run" else ():
                    v.append(0.0)
                t, u, db = time.process_time(), os.times(), tree_cpu_s(pg_pid)
                for _ in range(args.calls):
                    routes[k]()
                cpu = time.process_time() - t - paused[0]
                pg_ms[k].append((tree_cpu_s(pg_pid) - db) / args.calls * 1000)
                sys_ms[k].append((os.times().system - u.system) / args.calls * 1000)
                per[k].append(cpu / args.calls * 1000)
    summary = {
        k: {
            "cpu_ms_per_call_median": round(statistics.median(v), 3),
            "blocks_ms": [round(x, 3) for x in v],
            "of_which_system_ms": round(statistics.median(sys_ms[k]), 3),
            # the PostgreSQL server's CPU meanwhile (every backend: the pool's, autovacuum's)
            "postgres_cpu_ms_per_call_median": round(statistics.median(pg_ms[k]), 3),
            "sql_statements": stmts[k],
        }
        for k, v in per.items()
    }
    if "run" in per:  # the agent's requests of `run`, each per run
        summary["run"]["requests"] = {
            name: {
                "cpu_ms_median": round(statistics.median(v[1:]) / args.calls * 1000, 3),
                "sql_statements": part_stmts.get(name),
            }
            for name, v in parts.items()
        }
    return {"args": {k: str(v) for k, v in vars(args).items()}, "summary": summary}


if __name__ == "__main__":
    sys.exit(main())
