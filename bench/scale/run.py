"""The numbers at the size of a large team (issue 30): a database of 1,000,000 runs generated through
the real schema, and the API's answers on it.

The data (COPY into the migrated schema, chronological as a server would have written it): 20 teams of
very unequal size (the largest holds about a third of the runs), 300 agents spread over them with
three devices each, runs over the last 365 days (more on weekdays and in working hours) of the
built-in presets (quick, seq-rand-table, crystaldiskmark, diskspd-bs-sweep, threads-latency,
kernel-help) and of custom jobs, 93 % succeeded, 5 % failed, 2 % cancelled; each succeeded run has
its result and one result_jobs row per job with figures of its device; 10 % carry tags; plus one
series of 10,000 runs (tests/browser/series_seed.py). The bench user belongs to the largest team
and two small ones, as a member of a large team does.

Then a real API process (uvicorn, one process: the figures are per request) on that database,
each case `--requests` times after `--warmup` discarded: the runs list with each filter, a
20-run comparison, a named view at its maximum (30 runs) and a 200-run comparison grouped by
device, the 10,000-run series' history, and a /metrics scrape. Prints p50/p95/p99, the API
process's and PostgreSQL's CPU per request (what the machine's load does not change) and the load
average; `--explain` also writes the plans of every
statement slower than 20 ms (auto_explain) to the PostgreSQL log, printed at the end.

    nice -n 10 .venv/bin/python bench/scale/run.py --runs 1000000 --data /var/tmp/iowatt-scale

The cluster in --data is kept (seeding 1M runs takes minutes): a second run measures again; --fresh
generates again.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pwd
import random
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench" / "compare"))

from run import _cpu_s, _start_api  # type: ignore[attr-defined]  # noqa: E402  bench/compare/run.py

from tests.browser.series_seed import seed_series  # noqa: E402
from tests.services import PG_BIN, free_port, redis_server  # noqa: E402

PASSWORD = "bench-password"
DB = "iowatt_scale"
# (preset or None for a custom spec, share of runs)
MIX = [
    ("quick", 0.34),
    ("seq-rand-table", 0.14),
    ("crystaldiskmark", 0.12),
    ("diskspd-bs-sweep", 0.08),
    ("threads-latency", 0.06),
    ("kernel-help", 0.02),
    (None, 0.24),
]
CUSTOM_SPECS = [
    {
        "jobs": [
            {
                "name": f"{rw}-{bs // 1024}k",
                "rw": rw,
                "bs_bytes": bs,
                "size_bytes": 1 << 30,
                "runtime_s": 60,
                "time_based": True,
                "direct": True,
                "iodepth": qd,
                "ioengine": "io_uring",
            }
        ]
    }
    for rw, bs, qd in [
        ("randread", 4096, 32),
        ("randwrite", 4096, 32),
        ("read", 1 << 20, 8),
        ("write", 1 << 20, 8),
        ("randrw", 8192, 16),
        ("randread", 16384, 1),
    ]
]
TAGS = ["nightly", "release-candidate", "firmware-update", "raid10", "nvme-pool", "baseline", "ci"]
STATUS = [("succeeded", 0.93), ("failed", 0.05), ("cancelled", 0.02)]


def as_pg(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


class Cluster:
    """A PostgreSQL 15 in `data` (kept between runs), started on a free port."""

    def __init__(self, data: Path, *, explain: bool) -> None:
        self.data, self.explain, self.port = data, explain, free_port()

    def __enter__(self) -> Cluster:
        if not (self.data / "PG_VERSION").exists():
            self.data.mkdir(parents=True, exist_ok=True)
            if os.geteuid() == 0:
                pg = pwd.getpwnam("postgres")
                os.chown(self.data, pg.pw_uid, pg.pw_gid)
            subprocess.run(
                as_pg([str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"]),
                check=True,
                capture_output=True,
            )
        opts = (
            f"-p {self.port} -k /tmp -c listen_addresses=127.0.0.1 -c shared_buffers=512MB "
            "-c work_mem=16MB -c maintenance_work_mem=256MB -c max_wal_size=4GB -c synchronous_commit=off"
        )
        if self.explain:
            opts += (
                " -c shared_preload_libraries=auto_explain -c auto_explain.log_min_duration=20"
                " -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on -c "
                "auto_explain.log_timing=off"
            )
        log = self.data / "server.log"
        if log.exists():
            log.unlink()
        subprocess.run(
            as_pg([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(log), "-w", "-o", opts, "start"]),
            check=True,
            capture_output=True,
        )
        return self

    def __exit__(self, *_: object) -> None:
        subprocess.run(
            as_pg([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"]), capture_output=True
        )

    def dsn(self, db: str = DB) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={db}"

    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{DB}"


def _pick(rnd: random.Random, weighted: list[tuple[Any, float]]) -> Any:
    x, acc = rnd.random(), 0.0
    for value, w in weighted:
        acc += w
        if x < acc:
            return value
    return weighted[-1][0]


def _when(rnd: random.Random, start: datetime) -> datetime:
    """A moment of the year: weekdays 4x as likely as weekend days, working hours 3x."""
    while True:
        t = start + timedelta(seconds=rnd.uniform(0, 365 * 86400))
        w = (1.0 if t.weekday() < 5 else 0.25) * (1.0 if 8 <= t.hour < 19 else 0.33)
        if rnd.random() < w:
            return t


JOB_COLS = (
    "run_id, job_index, name, rw, bs_bytes, runtime_ns, usr_cpu_pct, sys_cpu_pct, "
    "read_iops, read_bw_bytes, read_io_bytes, read_total_ios, read_lat_mean_ns, read_clat_p50_ns, "
    "read_clat_p99_ns, read_clat_p999_ns, read_clat_max_ns, "
    "write_iops, write_bw_bytes, write_io_bytes, write_total_ios, write_lat_mean_ns, write_clat_p50_ns, "
    "write_clat_p99_ns, write_clat_p999_ns, write_clat_max_ns"
)


JOBS_SQL = f"""
INSERT INTO result_jobs ({JOB_COLS})
SELECT run_id, k, name, rw, bs, 60000000000, round((1 + 8 * random())::numeric, 2),
       round((3 + 27 * random())::numeric, 2),
       CASE WHEN r THEN iops END, CASE WHEN r THEN bw END, CASE WHEN r THEN bw * 60 END,
       CASE WHEN r THEN (iops * 60)::bigint END, CASE WHEN r THEN lat END, CASE WHEN r THEN lat * 0.9 END,
       CASE WHEN r THEN lat * 3 END, CASE WHEN r THEN lat * 6 END, CASE WHEN r THEN lat * 20 END,
       CASE WHEN w THEN iops END, CASE WHEN w THEN bw END, CASE WHEN w THEN bw * 60 END,
       CASE WHEN w THEN (iops * 60)::bigint END, CASE WHEN w THEN lat END, CASE WHEN w THEN lat * 0.9 END,
       CASE WHEN w THEN lat * 3 END, CASE WHEN w THEN lat * 6 END, CASE WHEN w THEN lat * 20 END
FROM (
  SELECT run_id, k, name, rw, bs, r, w, bw, bw / bs AS iops, (1e9 * bs / bw)::bigint AS lat
  FROM (
    SELECT x.id AS run_id, (j.ord - 1)::int AS k, coalesce(j.job->>'name', 'job' || j.ord) AS name,
           coalesce(j.job->>'rw', 'read') AS rw, coalesce((j.job->>'bs_bytes')::bigint, 4096) AS bs,
           coalesce(j.job->>'rw', 'read') IN ('read', 'randread', 'rw', 'randrw') AS r,
           coalesce(j.job->>'rw', 'read') IN ('write', 'randwrite', 'rw', 'randrw') AS w,
           (CASE WHEN coalesce(j.job->>'rw', 'read') IN ('read', 'write') THEN 1.5e9 ELSE 2.5e8 END)
             * (0.3 + (abs(hashtext(x.device_id::text)) % 100) / 40.0) * (0.9 + 0.2 * random())
             * least(1.0, coalesce((j.job->>'bs_bytes')::bigint, 4096) / 65536.0 + 0.05) + 1 AS bw
    FROM runs x, jsonb_array_elements(x.workload_spec->'jobs') WITH ORDINALITY j(job, ord)
    WHERE x.status = 'succeeded'
  ) a
) b
"""


def seed(c: Cluster, n_runs: int, chunk: int = 50_000) -> dict[str, Any]:
    """The teams, users, agents, devices and n_runs runs; returns what the measurements need."""
    from alembic import command
    from sqlalchemy import create_engine, select
    from sqlalchemy.orm import Session

    from backend.models import Membership, Role, Team, Workload
    from backend.workload.service import ensure_builtins
    from tests.conftest import alembic_config
    from tests.factories import create_agent, create_user

    with psycopg.connect(c.dsn("postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DB}")
    command.upgrade(alembic_config(c.url()), "head")
    rnd = random.Random(30)
    eng = create_engine(c.url())
    with Session(eng) as s:
        ensure_builtins(s)
        u = create_user(s, email="bench@iowatt.local", password=PASSWORD)
        teams = [u.team] + [Team(name=f"team-{i:02d}") for i in range(1, 20)]
        s.add_all(teams[1:])
        s.flush()
        for t in teams[1:3]:
            s.add(Membership(user_id=u.user.id, team_id=t.id, role=Role.member))
        # team sizes: Zipf-like (the first ~ a third of all runs)
        weights = [1 / (i + 1) ** 1.1 for i in range(len(teams))]
        total_w = sum(weights)
        shares = [(t, w / total_w) for t, w in zip(teams, weights, strict=True)]
        agents: dict[uuid.UUID, list[uuid.UUID]] = {t.id: [] for t in teams}
        for i in range(300):
            team = _pick(rnd, shares)
            a = create_agent(s, team=team, name=f"host-{i:03d}", online=rnd.random() < 0.8)
            agents[team.id].append(a.agent.id)
        for t in teams:  # every team has at least one host
            if not agents[t.id]:
                agents[t.id].append(create_agent(s, team=t, name=f"host-{t.name}").agent.id)
        builtins = {
            w.name: (w.id, w.spec) for w in s.scalars(select(Workload).where(Workload.builtin.is_(True)))
        }
        s.commit()
        token, user_id = u.token, u.user.id
        team_ids = [t.id for t in teams]
        team_share = {t.id: w for t, w in shares}
    eng.dispose()
    start = datetime.now(UTC) - timedelta(days=365)
    with psycopg.connect(c.dsn()) as conn, conn.cursor() as cur:
        devices: dict[uuid.UUID, list[tuple[uuid.UUID, float]]] = {}
        with cur.copy(
            "COPY devices (id, team_id, agent_id, key, name, kind, facts, lifetime_years) FROM STDIN"
        ) as cp:
            for team_id, ags in agents.items():
                for a in ags:
                    devices[a] = []
                    for key, speed in (("nvme0n1", 2.5e9), ("sda", 5.0e8), ("md0", 1.2e9)):
                        d = uuid.uuid4()
                        devices[a].append((d, speed * rnd.uniform(0.7, 1.3)))
                        cp.write_row((d, team_id, a, f"block:{key}", f"{key}", "block", "{}", 5))
        team_of_agent = {a: t for t, ags in agents.items() for a in ags}
        all_agents = list(team_of_agent)
        agent_weights = [team_share[team_of_agent[a]] / len(agents[team_of_agent[a]]) for a in all_agents]
        # the workloads a run may have: the built-in presets' rows, and the custom specs (no row)
        kinds = [(builtins[p][0], p, builtins[p][1], w) for p, w in MIX if p]
        custom_w = next(w for p, w in MIX if p is None) / len(CUSTOM_SPECS)
        kinds += [(None, None, spec, custom_w) for spec in CUSTOM_SPECS]
        cur.execute(
            "CREATE TEMP TABLE scale_kinds (k int PRIMARY KEY, workload_id uuid, preset text, spec jsonb, "
            "label text)"
        )
        for k, (wid, preset, spec, _) in enumerate(kinds):
            cur.execute(
                "INSERT INTO scale_kinds VALUES (%s, %s, %s, %s::jsonb, %s)",
                (k, wid, preset, json.dumps(spec), preset or spec["jobs"][0]["name"]),
            )
        # one compact row per run, COPYed; the runs, results and tags are made from it in the server
        # (the spec is copied from scale_kinds, never parsed again)
        cur.execute(
            "CREATE TEMP TABLE scale_stage (i int, id uuid, team_id uuid, agent_id uuid, device_id uuid, "
            "k int, status run_status, created float8, start_s float4, run_s float4, by_user bool, "
            "tags text[])"
        )
        team_of_agent = {a: t for t, ags in agents.items() for a in ags}
        all_agents = list(team_of_agent)
        agent_weights = [team_share[team_of_agent[a]] / len(agents[team_of_agent[a]]) for a in all_agents]
        t0 = time.monotonic()
        times = sorted(_when(rnd, start).timestamp() for _ in range(n_runs))
        picks = rnd.choices(all_agents, weights=agent_weights, k=n_runs)
        kind_of = rnd.choices(range(len(kinds)), weights=[k[3] for k in kinds], k=n_runs)
        status_of = rnd.choices([st for st, _ in STATUS], weights=[w for _, w in STATUS], k=n_runs)
        own = set(team_ids[:3])
        print(f"  drawn in {time.monotonic() - t0:.0f} s", flush=True)
        for lo in range(0, n_runs, chunk):
            buf = io.StringIO()
            for i in range(lo, min(lo + chunk, n_runs)):
                agent = picks[i]
                team = team_of_agent[agent]
                tags = "\\N"
                if rnd.random() < 0.10:
                    tags = "{" + ",".join(rnd.sample(TAGS, rnd.randint(1, 2))) + "}"
                buf.write(
                    f"{i}\t{uuid.UUID(int=rnd.getrandbits(128), version=4)}\t{team}\t{agent}\t"
                    f"{rnd.choice(devices[agent])[0]}\t{kind_of[i]}\t{status_of[i]}\t{times[i]:.3f}\t"
                    f"{rnd.uniform(0.2, 5):.2f}\t{rnd.uniform(12, 900):.1f}\t"
                    f"{'t' if team in own and rnd.random() < 0.3 else 'f'}\t{tags}\n"
                )
            with cur.copy("COPY scale_stage FROM STDIN") as cp:
                cp.write(buf.getvalue())
            print(f"  {min(lo + chunk, n_runs):,} staged in {time.monotonic() - t0:.0f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
        t1 = time.monotonic()
        cur.execute(
            "INSERT INTO runs (id, team_id, name, status, agent_id, device_id, workload_id, workload_spec, "
            "preset, target_path, attempt, cancel_requested, created_at, "
            "started_at, finished_at, created_by, "
            "error) "
            "SELECT s.id, s.team_id, k.label || ' on ' || a.name || ' #' || s.i, s.status, s.agent_id, "
            "s.device_id, k.workload_id, k.spec, k.preset, '/srv/bench', 1, false, to_timestamp(s.created), "
            "to_timestamp(s.created + s.start_s), to_timestamp(s.created + s.start_s + s.run_s), "
            "CASE WHEN s.by_user THEN %s::uuid END, "
            "CASE WHEN s.status = 'failed' THEN 'the engine exited 1: No space left on device' END "
            "FROM scale_stage s JOIN scale_kinds k USING (k) JOIN agents a ON a.id = s.agent_id ORDER BY s.i",
            (user_id,),
        )
        cur.execute(
            "INSERT INTO run_results (run_id, upload_id, engine_result, engine_exit_code, agent_version, "
            "started_at, finished_at, uploaded_at) "
            "SELECT s.id, gen_random_uuid(), '{\"jobs\": []}', 0, 'bench', "
            "to_timestamp(s.created + s.start_s), "
            "to_timestamp(s.created + s.start_s + s.run_s), to_timestamp(s.created + s.start_s + s.run_s) "
            "FROM scale_stage s WHERE s.status = 'succeeded' ORDER BY s.i"
        )
        cur.execute(
            "INSERT INTO run_tags (run_id, tag) SELECT s.id, unnest(s.tags) FROM scale_stage s "
            "WHERE s.tags IS NOT NULL"
        )
        conn.commit()
        print(f"  runs, results and tags in {time.monotonic() - t1:.0f} s (load {os.getloadavg()[0]:.1f})",
              flush=True)  # fmt: skip
    with psycopg.connect(c.dsn(), autocommit=True) as conn:
        # each succeeded run's job rows, one per job of its spec, in the server (a Python row loop
        # cost ~2 ms a run): figures from the job's pattern and block size, the device's speed
        # (a stable factor per device) and noise
        t1 = time.monotonic()
        conn.execute(JOBS_SQL)
        print(f"  result_jobs in {time.monotonic() - t1:.0f} s (load {os.getloadavg()[0]:.1f})", flush=True)
        big_agent = agents[team_ids[0]][0]
        series = seed_series(
            conn,
            team_id=str(team_ids[0]),
            agent_id=str(big_agent),
            device_id=None,
            n=10_000,
            name="scale series",
        )
        conn.execute("VACUUM ANALYZE")
    meta = {"token": token, "series": series, "teams": [str(t) for t in team_ids], "runs": n_runs}
    (c.data / "iowatt-scale.json").write_text(json.dumps(meta))
    return meta


def pg_cpu_s(data: Path) -> float:
    """PostgreSQL's CPU seconds: the postmaster's live children (the backends, which the API's pool
    keeps) and what it reaped of those that ended, the postmaster's own aside."""
    pm = int((data / "postmaster.pid").read_text().split()[0])
    tck = os.sysconf("SC_CLK_TCK")
    fields = Path(f"/proc/{pm}/stat").read_text().rsplit(")", 1)[1].split()
    total = (int(fields[13]) + int(fields[14])) / tck  # cutime, cstime
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(f[1]) == pm:
            total += (int(f[11]) + int(f[12])) / tck
    return total


def timed(
    c: httpx.Client, api_pid: int, path: str, params: Any, n: int, warmup: int, data: Path
) -> dict[str, float]:
    times = []
    cpu0 = pg0 = 0.0
    for i in range(warmup + n):
        t = time.perf_counter()
        r = c.get(path, params=params() if callable(params) else params)
        dt = (time.perf_counter() - t) * 1000
        assert r.status_code == 200, (path, r.status_code, r.text[:300])
        if i == warmup - 1 or (warmup == 0 and i == 0):
            cpu0, pg0 = _cpu_s(api_pid), pg_cpu_s(data)
        if i >= warmup:
            times.append(dt)
    times.sort()
    return {
        "n": n,
        "p50_ms": statistics.median(times),
        "p95_ms": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))],
        "p99_ms": times[min(len(times) - 1, round(0.99 * (len(times) - 1)))],
        "api_cpu_ms": (_cpu_s(api_pid) - cpu0) * 1000 / n,
        "pg_cpu_ms": (pg_cpu_s(data) - pg0) * 1000 / n,
        "load": os.getloadavg()[0],
    }


def cases_of(c: Cluster, meta: dict[str, Any]) -> tuple[list[tuple[str, str, Any]], int]:
    """The measured requests (name, path, params or a function drawing them) and the runs in the
    database."""
    rnd = random.Random(7)
    with psycopg.connect(c.dsn()) as conn:
        team = uuid.UUID(meta["teams"][0])
        some = conn.execute(
            "SELECT agent_id, device_id, workload_id FROM runs WHERE team_id = %s "
            "AND workload_id IS NOT NULL "
            "ORDER BY created_at DESC LIMIT 1",
            (team,),
        ).fetchone()
        assert some is not None
        agent, device, workload = (str(x) for x in some)
        quick = conn.execute(
            "SELECT id FROM runs WHERE team_id = %s AND preset = 'quick' AND status = 'succeeded' "
            "ORDER BY created_at DESC LIMIT 2000",
            (team,),
        ).fetchall()
        dfm = conn.execute(
            "SELECT id FROM runs WHERE team_id = %s AND preset = 'seq-rand-table' AND status = 'succeeded' "
            "ORDER BY created_at DESC LIMIT 500",
            (team,),
        ).fetchall()
        runs_total = conn.execute("SELECT count(*) FROM runs").fetchone()[0]  # type: ignore[index]
    quick_ids = [str(r[0]) for r in quick]
    dfm_ids = [str(r[0]) for r in dfm]
    month_from = (datetime.now(UTC) - timedelta(days=60)).isoformat()
    month_to = (datetime.now(UTC) - timedelta(days=30)).isoformat()
    cases: list[tuple[str, str, Any]] = [
        ("runs list (newest 50)", "/runs", {"limit": 50}),
        ("runs list, status=failed", "/runs", {"limit": 50, "status": "failed"}),
        (
            "runs list, status=running|queued",
            "/runs",
            [("limit", 50), ("status", "running"), ("status", "queued")],
        ),
        ("runs list, one device", "/runs", {"limit": 50, "device_id": device}),
        ("runs list, one agent", "/runs", {"limit": 50, "agent_id": agent}),
        ("runs list, one workload", "/runs", {"limit": 50, "workload_id": workload}),
        ("runs list, tag", "/runs", {"limit": 50, "tag": "firmware-update"}),
        ("runs list, a month", "/runs", {"limit": 50, "created_from": month_from, "created_to": month_to}),
        ("runs list, search q=", "/runs", {"limit": 50, "q": "host-01"}),
        ("runs list, sort by name", "/runs", {"limit": 50, "sort": "name"}),
        # what the runs page asks for since session 24: no job's figures (its table shows none)
        ("runs list, sort by name, jobs=false", "/runs", {"limit": 50, "sort": "name", "jobs": "false"}),
        ("runs list, page 20", "/runs", {"limit": 50, "offset": 950}),
        ("runs list, one team", "/runs", {"limit": 50, "team_id": meta["teams"][1]}),
        ("compare 20 runs", "/compare", lambda: {"runs": ",".join(rnd.sample(quick_ids, 20))}),
        (
            "view disk-flash-memory, 30 runs (its maximum)",
            "/views/table",
            lambda: {"view": "disk-flash-memory", "runs": ",".join(rnd.sample(dfm_ids, 30))},
        ),
        (
            "compare 200 runs, group_by=device",
            "/compare",
            lambda: {"runs": ",".join(rnd.sample(quick_ids, 200)), "group_by": "device"},
        ),
        ("series history, 10,000 runs", f"/series/{meta['series']}/history", {"metric": "read_iops"}),
    ]
    return cases, runs_total


def measure(c: Cluster, meta: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    cases, runs_total = cases_of(c, meta)
    out: dict[str, Any] = {"runs_in_database": runs_total, "cases": {}}
    with redis_server() as redis_url:
        port = free_port()
        env = {
            **os.environ,
            "IOWATT_DATABASE_URL": c.url(),
            "IOWATT_REDIS_URL": redis_url,
            "IOWATT_ENV": "test",
        }
        api = _start_api(REPO, port, env)
        try:
            with httpx.Client(
                base_url=f"http://127.0.0.1:{port}/api/v1",
                headers={"Authorization": f"Bearer {meta['token']}"},
                timeout=120,
            ) as cl:
                only = set(args.only or [])
                for name, path, params in cases:
                    if only and not any(o in name for o in only):
                        continue
                    n = (
                        args.requests
                        if "200 runs" not in name and "10,000" not in name
                        else max(10, args.requests // 5)
                    )
                    res = timed(cl, api.pid, path, params, n, args.warmup, c.data)
                    out["cases"][name] = res
                    print(
                        f"{name:48s} p50 {res['p50_ms']:7.1f} ms  p95 {res['p95_ms']:7.1f} ms  p99 "
                        f"{res['p99_ms']:7.1f} ms  API CPU {res['api_cpu_ms']:6.1f} ms  PostgreSQL CPU "
                        f"{res['pg_cpu_ms']:6.1f} ms  load "
                        f"{res['load']:.1f}",
                        flush=True,
                    )
                with httpx.Client(timeout=120) as plain:
                    t = time.perf_counter()
                    for _ in range(5):
                        assert plain.get(f"http://127.0.0.1:{port}/metrics").status_code == 200
                    out["metrics_scrape_ms"] = (time.perf_counter() - t) * 1000 / 5
                    print(f"/metrics scrape: {out['metrics_scrape_ms']:.0f} ms", flush=True)
        finally:
            api.terminate()
            api.wait()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1_000_000)
    ap.add_argument("--data", type=Path, default=Path("/var/tmp/iowatt-scale"))
    ap.add_argument("--fresh", action="store_true", help="generate the data again")
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--explain", action="store_true", help="auto_explain statements slower than 20 ms")
    ap.add_argument("--only", nargs="*", help="only the cases whose name contains one of these")
    ap.add_argument("--seed-only", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    meta_file = args.data / "iowatt-scale.json"
    with Cluster(args.data, explain=args.explain) as c:
        if args.fresh or not meta_file.exists() or json.loads(meta_file.read_text())["runs"] != args.runs:
            t = time.monotonic()
            meta = seed(c, args.runs)
            print(f"seeded {args.runs:,} runs in {time.monotonic() - t:.0f} s", flush=True)
        else:
            meta = json.loads(meta_file.read_text())
            from alembic import command

            from tests.conftest import alembic_config

            t = time.monotonic()
            command.upgrade(alembic_config(c.url()), "head")  # later migrations (indexes) on this data
            print(f"migrated to head in {time.monotonic() - t:.0f} s", flush=True)
        if args.seed_only:
            return 0
        with psycopg.connect(c.dsn()) as conn:
            sizes = conn.execute(
                "SELECT relname, n_live_tup, "
                "pg_size_pretty(pg_total_relation_size(relid)) FROM pg_stat_user_tables "
                "WHERE relname IN ('runs', 'result_jobs', 'run_results', 'run_tags', "
                "'series_runs') ORDER BY 1"
            ).fetchall()
        print("tables:", ", ".join(f"{n} {rows:,} rows {size}" for n, rows, size in sizes))
        res = measure(c, meta, args)
        res["machine"] = {"cpus": os.cpu_count(), "when": datetime.now(UTC).isoformat(timespec="seconds")}
        if args.json:
            args.json.write_text(json.dumps(res, indent=2))
        if args.explain:
            print((c.data / "server.log").read_text(errors="replace")[-60000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
