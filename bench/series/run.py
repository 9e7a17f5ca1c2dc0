"""A series' history at scale: GET /api/v1/series/{id}/history (downsampled on the server to
about 2,000 points) and the history page drawn in Chromium, for series of 1,000, 10,000 and more runs.

Starts a private PostgreSQL and Redis (like the tests), migrates, seeds each series with
tests/browser/series_seed.py (a few INSERT ... SELECT generate_series statements), starts uvicorn,
times the API (warm-up requests discarded; the API process's own CPU from /proc) and then the page
with tests/browser/series.mjs (its own Chromium at 1440x900: navigation start to the chart drawn,
best of two loads after a warm load).

    .venv/bin/python bench/series/run.py --runs 1000 10000 --requests 20 [--no-browser]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench" / "compare"))

from run import _cpu_s, _start_api  # type: ignore[attr-defined]  # noqa: E402  bench/compare/run.py

from tests.browser.series_seed import seed_series  # noqa: E402
from tests.services import free_port, postgres, redis_server  # noqa: E402

PASSWORD = "bench-password"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, nargs="+", default=[1000, 10_000])
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()

    from alembic import command
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from tests.conftest import alembic_config
    from tests.factories import create_agent, create_user

    with postgres() as pg, redis_server() as redis_url:
        url = pg.create_database("iowatt_bench_series")
        command.upgrade(alembic_config(url), "head")
        eng = create_engine(url)
        with Session(eng) as s:
            u = create_user(s, email="bench@iowatt.local", password=PASSWORD)
            a = create_agent(s, team=u.team)
            s.commit()
            token, team_id, agent_id = u.token, str(u.team.id), str(a.agent.id)
        eng.dispose()
        ids: dict[int, str] = {}
        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
            for n in args.runs:
                t = time.perf_counter()
                ids[n] = seed_series(
                    conn, team_id=team_id, agent_id=agent_id, device_id=None, n=n, name=f"bench {n}"
                )
                print(f"seeded {n} runs in {time.perf_counter() - t:.1f} s")
            conn.execute("ANALYZE")
        port = free_port()
        env = {**os.environ, "IOWATT_DATABASE_URL": url, "IOWATT_REDIS_URL": redis_url, "IOWATT_ENV": "test"}
        api = _start_api(REPO, port, env)
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(
                base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=60
            ) as c:
                for n, sid in ids.items():
                    times, cpu0 = [], 0.0
                    for i in range(args.warmup + args.requests):
                        t = time.perf_counter()
                        r = c.get(f"/series/{sid}/history", params={"metric": "read_iops"})
                        dt = (time.perf_counter() - t) * 1000
                        assert r.status_code == 200, r.text
                        if i == args.warmup - 1:
                            cpu0 = _cpu_s(api.pid)
                        if i >= args.warmup:
                            times.append(dt)
                    cpu_ms = (_cpu_s(api.pid) - cpu0) * 1000 / args.requests
                    body = r.json()
                    print(
                        f"GET /series/{{id}}/history, {n} runs -> {len(body['points'])} points "
                        f"({len(r.content) / 1e3:.0f} kB): median {statistics.median(times):.0f} ms, "
                        f"max {max(times):.0f} ms, API CPU {cpu_ms:.0f} ms per request; "
                        f"load average {os.getloadavg()[0]:.1f}"
                    )
            if not args.no_browser:
                out = subprocess.run(
                    ["node", str(REPO / "tests/browser/series.mjs")],
                    env={
                        **os.environ,
                        "IOWATT_URL": base,
                        "IOWATT_EMAIL": "bench@iowatt.local",
                        "IOWATT_PASSWORD": PASSWORD,
                        "IOWATT_SERIES_SETS": ";".join(f"{n}:{sid}" for n, sid in ids.items()),
                    },
                    capture_output=True,
                    text=True,
                )
                if out.returncode != 0:
                    raise RuntimeError(f"series.mjs failed:\n{out.stdout[-3000:]}{out.stderr[-2000:]}")
                for n, ms in re.findall(r"timing (\d+) runs: (\d+) ms", out.stdout):
                    print(f"history page, {n} runs: navigation start to the chart drawn {ms} ms (best of 2)")
        finally:
            api.terminate()
            api.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
