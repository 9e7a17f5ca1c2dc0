"""Compare-speed benchmark (issues 5, 12): GET /api/v1/compare for 30 runs with 100,000 runs and their
series in the database (per grouping: runs as columns, repeats grouped by device), JSON and CSV,
and the compare page's time to interactive in Chromium.

Starts a private PostgreSQL and Redis (like the tests), migrates, seeds N runs (3 jobs each with
key figures and per-second series) with COPY, starts uvicorn, then times the API with warm-up
requests discarded, and optionally the page with playwright-core.

    .venv/bin/python bench/compare/run.py --runs 100000 --compare 30 --requests 200 [--browser]

With `--old REV` it starts a second API from `git archive REV` on the same database and times old
and new side by side (the house method): each request's 30 ids go to both, in alternating order
(A B, B A, A B, ...), the first pair discarded as a warm-up; it reports the median of the per-pair
time ratios (new / old), each side's p50/p95 and CPU per request, and checks that both answer the
same bytes.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import psycopg
from rich.console import Console

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.services import free_port, postgres, redis_server  # noqa: E402

console = Console()
JOBS = [("randread-4k", "randread", 4096), ("seqread-1m", "read", 1 << 20), ("seqwrite-1m", "write", 1 << 20)]
SERIES_POINTS = 10
BENCH_PASSWORD = "bench-password"


def seed(dsn: str, n_runs: int) -> tuple[str, list[str]]:
    """Users, one agent, two devices and n_runs succeeded runs with key figures and series (COPY)."""
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from tests.factories import create_agent, create_user

    eng = create_engine(dsn.replace("postgresql://", "postgresql+psycopg://"))
    with Session(eng) as s:
        u = create_user(s, email="bench@iowatt.local", password=BENCH_PASSWORD)
        a = create_agent(s, team=u.team)
        s.commit()
        token, team_id, agent_id = u.token, u.team.id, a.agent.id
    eng.dispose()
    spec = json.dumps(
        {
            "jobs": [
                {
                    "name": n,
                    "rw": rw,
                    "bs_bytes": bs,
                    "size_bytes": 1 << 26,
                    "offset_bytes": 0,
                    "runtime_s": 3,
                    "time_based": True,
                    "ramp_time_s": 0,
                    "rwmixread": 50,
                    "numjobs": 1,
                    "iodepth": 1,
                    "ioengine": "psync",
                    "direct": True,
                    "invalidate": True,
                    "readahead": "default",
                }
                for n, rw, bs in JOBS
            ],
            "passes": 1,
            "discard_passes": 0,
        }
    )
    rnd = random.Random(1)
    run_ids = [uuid.uuid4() for _ in range(n_runs)]
    t0 = time.monotonic()
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        dev_ids = []
        for key in ("block:vda", "tmpfs:/dev/shm"):
            cur.execute(
                "INSERT INTO devices (id, team_id, agent_id, key, name, kind, facts, lifetime_years) "
                "VALUES (%s, %s, %s, %s, %s, 'block', '{}', 5) RETURNING id",
                (uuid.uuid4(), team_id, agent_id, key, key),
            )
            dev_ids.append(cur.fetchone()[0])  # type: ignore[index]
        with cur.copy(
            "COPY runs (id, team_id, name, status, agent_id, device_id, workload_spec, target_path, "
            "attempt, cancel_requested, created_at, started_at, finished_at) FROM STDIN"
        ) as cp:
            for i, rid in enumerate(run_ids):
                ts = "2026-01-01 00:00:00+00"
                cp.write_row(
                    (
                        rid,
                        team_id,
                        f"run {i}",
                        "succeeded",
                        agent_id,
                        dev_ids[i % 2],
                        spec,
                        "/srv/bench",
                        1,
                        False,
                        ts,
                        ts,
                        ts,
                    )
                )
        with cur.copy(
            "COPY run_results (run_id, upload_id, engine_result, engine_exit_code, agent_version, "
            "started_at, finished_at, uploaded_at) FROM STDIN"
        ) as cp:
            doc = json.dumps({"jobs": [{"jobname": n} for n, _, _ in JOBS]})
            for rid in run_ids:
                cp.write_row((rid, uuid.uuid4(), doc, 0, "bench", "2026-01-01", "2026-01-01", "2026-01-01"))
        with cur.copy(
            "COPY result_jobs (run_id, job_index, name, rw, bs_bytes, runtime_ns, usr_cpu_pct, "
            "sys_cpu_pct, read_iops, read_bw_bytes, read_io_bytes, read_total_ios, read_lat_mean_ns, "
            "read_clat_p50_ns, read_clat_p99_ns, read_clat_p999_ns, read_clat_max_ns) FROM STDIN"
        ) as cp:
            for rid in run_ids:
                for k, (n, rw, bs) in enumerate(JOBS):
                    iops = rnd.uniform(1000, 50000)
                    cp.write_row(
                        (
                            rid,
                            k,
                            n,
                            rw,
                            bs,
                            3 * 10**9,
                            1.0,
                            5.0,
                            iops,
                            int(iops * bs),
                            int(iops * bs * 3),
                            int(iops * 3),
                            20000.0,
                            18000,
                            90000,
                            400000,
                            900000,
                        )
                    )
        with cur.copy(
            "COPY result_series (run_id, job_index, t_ns, read_iops, read_bw_bytes, read_clat_p99_ns, "
            "write_iops, write_bw_bytes, write_clat_p99_ns) FROM STDIN"
        ) as cp:
            for rid in run_ids:
                for k in range(len(JOBS)):
                    for p in range(SERIES_POINTS):
                        cp.write_row((rid, k, (p + 1) * 10**9, 1000.0, 4096000, 90000, 0.0, 0, None))
        conn.commit()
        cur.execute("ANALYZE")
    console.print(
        f"seeded {n_runs:,} runs, {n_runs * len(JOBS):,} job rows, "
        f"{n_runs * len(JOBS) * SERIES_POINTS:,} series points in {time.monotonic() - t0:.0f} s"
    )
    return token, [str(r) for r in run_ids]


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (the API's own work, whatever else loads the machine)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_api(app_dir: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    log = open(tempfile.mktemp(prefix="iowatt-bench-api-", suffix=".log"), "wb")  # noqa: SIM115
    api = subprocess.Popen(
        [
            str(REPO / ".venv/bin/uvicorn"),
            "backend.main:create_app",
            "--factory",
            "--app-dir",
            str(app_dir),
            "--port",
            str(port),
            "--no-access-log",
        ],
        cwd=app_dir,
        env=env,
        stdout=log,
        stderr=log,
    )
    for _ in range(150):
        if api.poll() is not None:
            break  # it exited: no use waiting
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health").status_code == 200:
                return api
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    api.terminate()  # not left running (or half started) when it did not answer in time
    api.wait()
    raise RuntimeError(f"the API in {app_dir} did not start (log: {log.name})")


def _pct(times: list[float], q: float) -> float:
    s = sorted(times)
    return s[max(0, int(len(s) * q) - 1)]


def side_by_side(
    clients: dict[str, httpx.Client],
    pids: dict[str, int],
    run_ids: list[str],
    args: argparse.Namespace,
    cases: list[tuple[str, str]],
) -> None:
    """Old (A) and new (B) on the same requests in alternating order; warm-up pairs discarded."""
    rnd = random.Random(3)
    for group_by, fmt in cases:
        times: dict[str, list[float]] = {"old": [], "new": []}
        cpu: dict[str, float] = {}
        ratios = []
        same = 0
        for i in range(args.warmup + args.requests):
            params = {
                "runs": ",".join(rnd.sample(run_ids, args.compare)),
                "group_by": group_by,
                "format": fmt,
            }
            if i == args.warmup:
                cpu = {k: _cpu_s(pid) for k, pid in pids.items()}
            order = ("old", "new") if i % 2 == 0 else ("new", "old")
            dt: dict[str, float] = {}
            body: dict[str, bytes] = {}
            for side in order:
                t = time.perf_counter()
                r = clients[side].get("/compare", params=params)
                dt[side] = (time.perf_counter() - t) * 1000
                assert r.status_code == 200, r.text
                body[side] = r.content
            if body["old"] != body["new"]:
                raise AssertionError(f"old and new answer differently for {params}")
            same += 1
            if i >= args.warmup:
                for side in dt:
                    times[side].append(dt[side])
                ratios.append(dt["new"] / dt["old"])
        cpu_ms = {k: (_cpu_s(pid) - cpu[k]) * 1000 / args.requests for k, pid in pids.items()}
        console.print(
            f"GET /compare ({args.compare} runs, group_by={group_by}, {fmt}), {args.requests} pairs after "
            f"{args.warmup} warm-up pairs, {same} byte-identical answers: median new/old ratio "
            f"{statistics.median(ratios):.2f}; old p50 {_pct(times['old'], 0.5):.1f} ms, "
            f"p95 {_pct(times['old'], 0.95):.1f} ms, CPU {cpu_ms['old']:.1f} ms/request; new p50 "
            f"{_pct(times['new'], 0.5):.1f} ms, p95 {_pct(times['new'], 0.95):.1f} ms, CPU "
            f"{cpu_ms['new']:.1f} ms/request; load average {os.getloadavg()[0]:.1f}",
            soft_wrap=True,
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--compare", type=int, default=30, help="runs per comparison")
    ap.add_argument(
        "--group-by", nargs="+", default=["none", "device"], help="groupings to time, each on its own"
    )
    ap.add_argument("--csv", action="store_true", help="also time format=csv")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--browser", action="store_true", help="also time the compare page in Chromium")
    ap.add_argument(
        "--old", metavar="REV", help="also start the API of this git revision; time both side by side"
    )
    args = ap.parse_args()
    from alembic import command

    from tests.conftest import alembic_config

    with postgres() as pg, redis_server() as redis_url:
        url = pg.create_database("iowatt_bench")
        command.upgrade(alembic_config(url), "head")
        token, run_ids = seed(url.replace("+psycopg", ""), args.runs)
        port = free_port()
        env = {**os.environ, "IOWATT_DATABASE_URL": url, "IOWATT_REDIS_URL": redis_url, "IOWATT_ENV": "test"}
        api = _start_api(REPO, port, env)
        try:
            base = f"http://127.0.0.1:{port}"
            rnd = random.Random(2)
            cases = [(g, "json") for g in args.group_by] + ([(args.group_by[0], "csv")] if args.csv else [])
            if args.old:
                old_dir = Path(tempfile.mkdtemp(prefix="iowatt-bench-old-"))
                subprocess.run(
                    f"git -C {REPO} archive {args.old} backend libs | tar -x -C {old_dir}",
                    shell=True,
                    check=True,
                )
                old_port = free_port()
                old_api = _start_api(old_dir, old_port, env)
                headers = {"Authorization": f"Bearer {token}"}
                try:
                    with (
                        httpx.Client(
                            base_url=f"http://127.0.0.1:{old_port}/api/v1", headers=headers
                        ) as c_old,
                        httpx.Client(base_url=f"{base}/api/v1", headers=headers) as c_new,
                    ):
                        side_by_side(
                            {"old": c_old, "new": c_new},
                            {"old": old_api.pid, "new": api.pid},
                            run_ids,
                            args,
                            cases,
                        )
                finally:
                    old_api.terminate()
                    old_api.wait()
                    shutil.rmtree(old_dir, ignore_errors=True)
                return 0
            with httpx.Client(base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {token}"}) as c:
                for group_by, fmt in cases:
                    times = []
                    cpu0 = 0.0
                    for i in range(args.warmup + args.requests):
                        ids = ",".join(rnd.sample(run_ids, args.compare))
                        t = time.perf_counter()
                        r = c.get("/compare", params={"runs": ids, "group_by": group_by, "format": fmt})
                        dt = (time.perf_counter() - t) * 1000
                        assert r.status_code == 200, r.text
                        if i == args.warmup - 1:
                            cpu0 = _cpu_s(api.pid)
                        if i >= args.warmup:
                            times.append(dt)
                    cpu_ms = (_cpu_s(api.pid) - cpu0) * 1000 / args.requests
                    times.sort()
                    p50, p95, p99 = (times[int(len(times) * q) - 1] for q in (0.5, 0.95, 0.99))
                    console.print(
                        f"GET /compare ({args.compare} runs, group_by={group_by}, {fmt}) over "
                        f"{args.requests} requests: p50 {p50:.1f} ms, p95 {p95:.1f} ms, p99 {p99:.1f} ms, "
                        f"mean {statistics.mean(times):.1f} ms; API CPU {cpu_ms:.1f} ms per request; "
                        f"load average {os.getloadavg()[0]:.1f}"
                    )
            if args.browser:
                paths = [
                    f"/compare?runs={','.join(rnd.sample(run_ids, args.compare))}&group_by=device"
                    for _ in range(6)
                ]
                out = subprocess.run(
                    [
                        "node",
                        str(REPO / "bench/compare/page.mjs"),
                        base,
                        "bench@iowatt.local",
                        BENCH_PASSWORD,
                        *paths,
                    ],
                    capture_output=True,
                    text=True,
                )
                if out.returncode != 0:
                    raise RuntimeError(f"page timing failed: {out.stderr[-3000:]}")
                page_ms = json.loads(out.stdout.strip().splitlines()[-1])["times_ms"][
                    1:
                ]  # first is a warm-up
                console.print(
                    f"compare page to interactive (table + chart visible), {len(page_ms)} loads after a "
                    f"warm-up: median {statistics.median(page_ms):.0f} ms, max {max(page_ms):.0f} ms"
                )
        finally:
            api.terminate()
            api.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
