"""Page ready-times (issue 25): the pages users open most, timed in Chromium, never asserted.

Starts a private PostgreSQL and Redis (bench/compare's helpers), migrates, seeds 200 succeeded runs
of one three-job workload (bench/compare's seed: key figures and per-second series) and two
kernel-help runs (110 jobs each, the preset's own spec and a figure per job), starts uvicorn serving
the built UI (frontend/dist: `npm run build` first), then times with bench/pages/page.mjs, each page
loaded once to cache the app's code, then ROUNDS navigations, navigation start → the page's data
drawn:

    dashboard   /                                   the latest runs' comparison, three bar charts
    runs        /runs                               200 runs, the list's first page
    compare-30  /compare?runs=<30 ids>              the metric table and the headline charts
    run-kh      /runs/<kernel-help run>             the preset's matrix and charts, the jobs' page
    view-kh     /views/kernel-help?runs=<2 runs>    the named view's grid and its five charts

    nice -n 19 .venv/bin/python bench/pages/run.py --rounds 5

Prints the median and the spread per page with the load average; docs/benchmarks.md records them.
"""

import argparse
import importlib.util
import json
import os
import random
import re
import statistics
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

_spec = importlib.util.spec_from_file_location("bench_compare", REPO / "bench/compare/run.py")
assert _spec is not None and _spec.loader is not None
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)

KH_RUNS = 2


def seed_kernel_help(dsn: str, team_id: str, agent_id: str) -> list[str]:
    """KH_RUNS runs of the kernel-help preset: its spec as stored, one result row per job (110),
    bandwidth in the direction it does; created before the other runs (the dashboard compares the
    latest like runs, not these)."""
    from backend.workload.builtin import BUILTINS
    from backend.workload.schemas import stored_spec

    spec = BUILTINS["kernel-help"][1]
    doc = json.dumps(stored_spec(spec))
    rnd = random.Random(7)
    ids = [str(uuid.uuid4()) for _ in range(KH_RUNS)]
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        for i, rid in enumerate(ids):
            cur.execute(
                "INSERT INTO runs (id, team_id, name, status, agent_id, workload_spec, target_path, attempt, "
                "cancel_requested, preset, created_at, started_at, finished_at) VALUES (%s, %s, %s, "
                "'succeeded', %s, %s, %s, 1, false, 'kernel-help', %s, %s, %s)",
                (
                    rid,
                    team_id,
                    f"kernel-help {i}",
                    agent_id,
                    doc,
                    f"/srv/kh{i}",
                    *["2025-12-31 00:00:00+00"] * 3,
                ),
            )
            cur.execute(
                "INSERT INTO run_results (run_id, upload_id, engine_result, engine_exit_code, agent_version, "
                "started_at, finished_at, uploaded_at) VALUES (%s, %s, %s, 0, 'bench', %s, %s, %s)",
                (
                    rid,
                    uuid.uuid4(),
                    json.dumps({"jobs": [{"jobname": j.name} for j in spec.jobs]}),
                    *["2025-12-31"] * 3,
                ),
            )
            with cur.copy(
                "COPY result_jobs (run_id, job_index, name, rw, bs_bytes, runtime_ns, usr_cpu_pct, "
                "sys_cpu_pct, read_iops, read_bw_bytes, read_io_bytes, read_total_ios, read_lat_mean_ns, "
                "read_clat_p99_ns, write_iops, write_bw_bytes, write_io_bytes, write_total_ios, "
                "write_lat_mean_ns, write_clat_p99_ns) FROM STDIN"
            ) as cp:
                for k, j in enumerate(spec.jobs):
                    bs = j.bs_bytes or 4096
                    bw = rnd.uniform(50e6, 3e9)
                    iops = bw / bs
                    ios = int(64 * 2**20 / bs)
                    fig = (iops, int(bw), 64 * 2**20, ios, 1e9 / iops, int(2e9 / iops))
                    none = (None,) * 6
                    read, write = (none, fig) if "write" in j.rw else (fig, none)
                    cp.write_row(
                        (rid, k, j.name, j.rw, bs, int(64 * 2**20 / bw * 1e9), 1.0, 5.0, *read, *write)
                    )
        conn.commit()
    return ids


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200, help="runs in the list (and to compare from)")
    ap.add_argument("--compare", type=int, default=30, help="runs in the comparison")
    ap.add_argument("--rounds", type=int, default=5, help="timed navigations per page")
    ap.add_argument("--json", type=Path, help="write the times here")
    args = ap.parse_args()
    if not (REPO / "frontend/dist/index.html").exists():
        sys.exit("frontend/dist is missing: (cd frontend && npm run build)")
    from alembic import command

    from tests.conftest import alembic_config

    with compare.postgres() as pg, compare.redis_server() as redis_url:
        url = pg.create_database("iowatt_bench_pages")
        command.upgrade(alembic_config(url), "head")
        dsn = url.replace("+psycopg", "")
        _token, run_ids = compare.seed(dsn, args.runs)
        with psycopg.connect(dsn) as conn:
            team_id, agent_id = conn.execute("SELECT team_id, agent_id FROM runs LIMIT 1").fetchone()  # type: ignore[misc]
        kh = seed_kernel_help(dsn, str(team_id), str(agent_id))
        port = compare.free_port()
        env = {**os.environ, "IOWATT_DATABASE_URL": url, "IOWATT_REDIS_URL": redis_url, "IOWATT_ENV": "test"}
        api = compare._start_api(REPO, port, env)
        try:
            picked = random.Random(4).sample(run_ids, args.compare)
            pages = {
                "dashboard": "/",
                "runs": "/runs",
                f"compare-{args.compare}": f"/compare?runs={','.join(picked)}",
                "run-kh": f"/runs/{kh[0]}",
                "view-kh": f"/views/kernel-help?runs={','.join(kh)}",
            }
            load_before = os.getloadavg()
            out = subprocess.run(
                [
                    "node",
                    str(REPO / "bench/pages/page.mjs"),
                    f"http://127.0.0.1:{port}",
                    "bench@iowatt.local",
                    compare.BENCH_PASSWORD,
                    str(args.rounds),
                    *(f"{k}={v}" for k, v in pages.items()),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode != 0:
                raise RuntimeError(f"page timing failed: {out.stdout[-2000:]}{out.stderr[-3000:]}")
            times: dict[str, list[int]] = json.loads(out.stdout.strip().splitlines()[-1])
            load_after = os.getloadavg()
        finally:
            api.terminate()
            api.wait()
    print(
        f"{args.runs + KH_RUNS} runs stored; {args.rounds} timed loads per page after one warm-up; load "
        f"average {load_before[0]:.1f} before, {load_after[0]:.1f} after (1 min), {os.cpu_count()} CPUs"
    )
    print("| page | path | median | min–max |")
    print("|---|---|---|---|")
    for name, ms in times.items():
        path = re.sub(r"[0-9a-f-]{36}", "<id>", pages[name].split("?")[0])
        print(f"| {name} | `{path}` | {statistics.median(ms):.0f} ms | {min(ms)}–{max(ms)} ms |")
    if args.json:
        doc = {
            "times_ms": times,
            "pages": pages,
            "load": [load_before, load_after],
            "runs": args.runs + KH_RUNS,
        }
        args.json.write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
