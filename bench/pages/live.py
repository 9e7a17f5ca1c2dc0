"""A run page left open on an active run: the browser's CPU while the page polls (session 27).

Starts the whole platform as the tests do (tests/stack.py: PostgreSQL, Redis, the API, a Celery
worker, an enrolled agent with the real engine), queues one long run paced at 50 IOPS (JOBS jobs
of JOB_S seconds, so the engine costs little), starts one more API process per UI build given
(NAME=DIST: the same database, each serving its own build), waits until the run's live chart holds
its last 300 reports (PROGRESS_SAMPLES: what an hour-long run's page shows), then measures with
bench/pages/live.mjs: the run page opened in Chromium at 1440x900 and left open SECONDS, the
builds alternating for ROUNDS rounds; per page the renderer's CPU (SystemInfo.getProcessInfo) and
the main thread's figures (Performance.getMetrics). Prints one JSON line per page and a summary.

    (cd frontend && npx vite build --outDir /tmp/ui-before)   # at the commit to compare against
    (cd frontend && npm run build)                            # this tree's UI, frontend/dist
    nice -n 19 .venv/bin/python bench/pages/live.py before=/tmp/ui-before after=frontend/dist

Never asserted; docs/benchmarks.md § A run page left open records the figures.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("IOWATT_ARGON2_MEMORY_KIB", "1024")  # as the tests hash (tests/conftest.py)
os.environ.setdefault("IOWATT_ARGON2_TIME_COST", "1")
os.environ.setdefault("IOWATT_ARGON2_PARALLELISM", "1")
os.environ["IOWATT_ENV"] = "test"

from tests.services import free_port, postgres, redis_server  # noqa: E402
from tests.stack import _wait_http, stack  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+", help="NAME=DIST: a built UI (frontend/dist or a copy)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=60, help="how long each page is left open")
    ap.add_argument("--jobs", type=int, default=80)
    ap.add_argument("--job-s", type=int, default=30)
    ap.add_argument("--samples", type=int, default=300, help="reports on the chart before measuring")
    args = ap.parse_args()
    builds = {name: str(Path(dist).resolve()) for name, dist in (b.split("=", 1) for b in args.builds)}
    for name, dist in builds.items():
        if not (Path(dist) / "index.html").exists():
            ap.error(f"{name}: {dist}/index.html is missing: build the UI first")

    target = tempfile.mkdtemp(prefix="iowatt-live-page-", dir="/var/tmp")
    try:
        return measure(builds, args, target)
    finally:
        shutil.rmtree(target, ignore_errors=True)  # after the stack's agent has stopped


def measure(builds: dict[str, str], args: argparse.Namespace, target: str) -> int:
    with postgres() as pg, redis_server() as redis_url, stack(pg, redis_url, api_workers=1) as s:
        job = {"rw": "randread", "size_bytes": 16 << 20, "time_based": True, "direct": True, "rate_iops": 50}
        jobs = [
            {**job, "name": f"job{i:02d}", "bs_bytes": 4096 << (i % 3), "runtime_s": args.job_s}
            for i in range(args.jobs)
        ]
        run_id = s.queue(target, workload={"jobs": jobs}, name="a long run left open")
        cmd, env = s.commands["api"]
        procs: list[subprocess.Popen[bytes]] = []
        urls = {}
        pids: dict[str, int] = {}
        try:
            for name, dist in builds.items():
                port = free_port()
                c = list(cmd)
                c[c.index("--port") + 1] = str(port)
                procs.append(
                    subprocess.Popen(
                        c,
                        env={**env, "IOWATT_FRONTEND_DIST": dist},
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                )
                urls[name] = f"http://127.0.0.1:{port}"
                pids[name] = procs[-1].pid  # its process group (start_new_session)
            for u in urls.values():
                _wait_http(f"{u}/api/v1/health", timeout_s=180)  # a niced start on a busy machine
            with s.api() as api:
                while True:
                    run = api.get(f"/runs/{run_id}").json()
                    have = len((run.get("progress") or {}).get("samples") or [])
                    if have >= args.samples:
                        break
                    if run["status"] not in ("queued", "assigned", "running"):
                        raise SystemExit(f"the run ended before the chart filled: {run['status']}")
                    time.sleep(5)
                size = len(api.get(f"/runs/{run_id}").content)
                print(f"# GET /runs/{{id}} answers {size} bytes (the whole run)", flush=True)
                since = run["progress"]["samples"][-3]["t_s"]
                size = len(api.get(f"/runs/{run_id}/progress", params={"since_t_s": since}).content)
                print(f"# GET /runs/{{id}}/progress?since_t_s= answers {size} bytes", flush=True)
            config = {
                "urls": urls,
                "login": s.url,
                "email": s.email,
                "password": s.password,
                "path": f"/runs/{run_id}",
                "rounds": args.rounds,
                "seconds": args.seconds,
                "pids": pids,
            }
            return subprocess.run(
                ["node", str(REPO / "bench/pages/live.mjs"), json.dumps(config)], check=False
            ).returncode
        finally:
            for p in procs:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=20)
            with s.api() as api:
                api.post(f"/runs/{run_id}/cancel")


if __name__ == "__main__":
    sys.exit(main())
