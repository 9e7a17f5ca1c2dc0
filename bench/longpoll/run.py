"""Long-poll benchmark (issue 9): N agents wait in lease long-polls while a second client measures
the latency of cheap requests. Target: with 500 idle long-polls, p95 of GET /api/v1/health < 100 ms.

Starts a private PostgreSQL and Redis (like the tests), migrates, starts ONE uvicorn process (as
`make up` does), enrols N agents through the API (real agent tokens, one enrolment token with
max_uses=N), then a separate load process keeps every agent in a long-poll (`wait_s`, re-polled at
once when it ends, as the agent does). The measuring client (this process, one keep-alive
connection) sends GET /api/v1/health and an authenticated GET /api/v1/runs?limit=1 at a fixed
rate: first with no long-poll waiting (baseline), then in `--rounds` rounds under load. Prints
per-round percentiles and the median over rounds; `--json FILE` also writes them.

    .venv/bin/python bench/longpoll/run.py --agents 500 --rounds 5 --seconds 20
"""

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.services import free_port, postgres, redis_server  # noqa: E402

INVENTORY = {
    "hostname": "bench",
    "block_devices": [],
    "mounts": [],
    "policy": {"targets": [{"path": "/srv/bench", "kind": "directory", "writable": True}], "meters": []},
}


@dataclass
class Counters:
    waiting: "Synchronized[int]"
    answered: "Synchronized[int]"
    errors: "Synchronized[int]"
    reasons: Any  # mp.Queue of the first error reasons


def _load(url: str, agents: list[tuple[str, str]], wait_s: float, stop: Any, c: Counters) -> None:
    """The load process: every agent in a long-poll, re-polled as soon as one ends."""

    async def agent(client: httpx.AsyncClient, agent_id: str, token: str, delay: float) -> None:
        await asyncio.sleep(delay)  # spread the first polls over a few seconds, as real agents start
        headers = {"Authorization": f"Bearer {token}"}
        while not stop.is_set():
            with c.waiting.get_lock():
                c.waiting.value += 1
            t_start = time.monotonic()
            try:
                r = await client.post(
                    f"{url}/api/v1/agents/{agent_id}/lease", params={"wait_s": wait_s}, headers=headers
                )
                ok = r.status_code == 200
                reason = "" if ok else f"HTTP {r.status_code}: {r.text[:200]}"
            except httpx.HTTPError as exc:
                cause = exc.__cause__ or exc.__context__
                ok, reason = (
                    False,
                    f"{type(exc).__name__} after {time.monotonic() - t_start:.1f} s: {cause!r}"[:200],
                )
            finally:
                with c.waiting.get_lock():
                    c.waiting.value -= 1
            counter = c.answered if ok else c.errors
            with counter.get_lock():
                counter.value += 1
                if not ok and counter.value <= 20:
                    c.reasons.put(reason)
            if not ok:
                await asyncio.sleep(1.0)

    async def main() -> None:
        # idle connections expire before uvicorn's 5 s keep-alive timeout closes them under a request
        limits = httpx.Limits(
            max_connections=len(agents) + 10, max_keepalive_connections=len(agents) + 10, keepalive_expiry=4.0
        )
        async with httpx.AsyncClient(limits=limits, timeout=wait_s + 30) as client:
            tasks = [
                asyncio.create_task(agent(client, a, t, 5.0 * i / len(agents)))
                for i, (a, t) in enumerate(agents)
            ]
            while not stop.is_set():
                await asyncio.sleep(0.2)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


def measure(base: str, token: str, seconds: float, rate: float, c: Counters | None) -> dict[str, Any]:
    """Requests at a fixed rate, alternating health and an authenticated list; latencies in ms."""
    lat: dict[str, list[float]] = {"health": [], "runs": []}
    waiting_min = None
    failures = 0
    with httpx.Client(base_url=base, timeout=30) as client:
        end = time.monotonic() + seconds
        nxt = time.monotonic()
        i = 0
        while time.monotonic() < end:
            key = "health" if i % 2 == 0 else "runs"
            t0 = time.perf_counter()
            try:
                if key == "health":
                    r = client.get("/api/v1/health")
                else:
                    r = client.get(
                        "/api/v1/runs", params={"limit": 1}, headers={"Authorization": f"Bearer {token}"}
                    )
                ok = r.status_code == 200
            except httpx.TimeoutException:  # no answer within the client's 30 s: counted at 30 s
                ok = False
            ms = (time.perf_counter() - t0) * 1000
            failures += 0 if ok else 1
            lat[key].append(ms)
            if c is not None:
                w = c.waiting.value
                waiting_min = w if waiting_min is None else min(waiting_min, w)
            i += 1
            nxt += 1 / rate
            time.sleep(max(0.0, nxt - time.monotonic()))
    out: dict[str, Any] = {"failures": failures, "waiting_min": waiting_min}
    for key, values in lat.items():
        if not values:  # a server so blocked that this round never got to ask
            out[key] = {
                "n": 0,
                "p50": float("nan"),
                "p95": float("nan"),
                "p99": float("nan"),
                "max": float("nan"),
            }
            continue
        out[key] = {
            "n": len(values),
            "p50": _pct(values, 50),
            "p95": _pct(values, 95),
            "p99": _pct(values, 99),
            "max": max(values),
        }
    return out


def _setup_db(pg: Any, server_repo: Path) -> str:
    from alembic import command

    from tests.conftest import alembic_config

    url = pg.create_database("iowatt_bench_longpoll")
    cfg = alembic_config(url)
    cfg.set_main_option("script_location", str(server_repo / "migrations"))
    command.upgrade(cfg, "head")
    return url


def _admin(server_repo: Path, env: dict[str, str]) -> str:
    """An admin API token, made by the server's own CLI (works for older checkouts too)."""
    token_file = Path(tempfile.mkdtemp(prefix="iowatt-bench-admin-")) / "token"
    subprocess.run(
        [sys.executable, "-m", "backend.cli", "bootstrap", "--token-file", str(token_file)]
        + ["--credentials-file", str(token_file.with_name("creds"))],
        cwd=server_repo,
        env=env,
        check=True,
        capture_output=True,
    )
    return token_file.read_text().strip()


def _enrol(base: str, token: str, n: int, legacy: bool) -> list[tuple[str, str]]:
    agents = []
    hdr = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, timeout=30) as client:
        team_id = client.get("/api/v1/auth/me", headers=hdr).json()["teams"][0]["id"]
        left = n
        while left:
            batch = min(left, 1000)
            # servers before issue 9: tokens were reusable and had no max_uses
            body = {"team_id": team_id} if legacy else {"team_id": team_id, "max_uses": batch}
            r = client.post("/api/v1/agents/enrollment-tokens", json=body, headers=hdr)
            r.raise_for_status()
            enrol = r.json()["token"]
            for _ in range(batch):
                k = len(agents)
                body = {
                    "enrollment_token": enrol,
                    "name": f"bench-{k:05d}",
                    "hostname": f"bench-{k:05d}",
                    "agent_version": "bench",
                    "inventory": INVENTORY,
                }
                a = client.post("/api/v1/agents/enroll", json=body)
                a.raise_for_status()
                agents.append((a.json()["agent_id"], a.json()["agent_token"]))
            left -= batch
    return agents


def _summary(rounds: list[dict[str, Any]], key: str) -> dict[str, float]:
    return {p: statistics.median(r[key][p] for r in rounds) for p in ("p50", "p95", "p99", "max")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each measured round")
    ap.add_argument("--rate", type=float, default=20.0, help="measured requests per second")
    ap.add_argument("--wait-s", type=float, default=25.0, help="the agents' long-poll wait_s")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument(
        "--server-repo",
        type=Path,
        default=REPO,
        help="run the server (and its migrations) from this checkout, e.g. a `git worktree` of an older "
        "commit, to measure before/after",
    )
    ap.add_argument("--legacy-enrol", action="store_true", help="the server predates max_uses (issue 9)")
    args = ap.parse_args()
    server_repo = args.server_repo.resolve()

    with postgres() as pg, redis_server() as redis_url:
        db_url = _setup_db(pg, server_repo)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            "IOWATT_DATABASE_URL": db_url,
            "IOWATT_REDIS_URL": redis_url,
            "IOWATT_ENV": "test",
        }
        token = _admin(server_repo, env)
        log = Path(tempfile.mkdtemp(prefix="iowatt-bench-longpoll-")) / "api.log"
        with open(log, "wb") as out:
            api = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "backend.main:create_app", "--factory", "--port", str(port)]
                + ["--no-access-log"],
                cwd=server_repo,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        stop = mp.Event()
        load: mp.Process | None = None
        try:
            deadline = time.monotonic() + 30
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise SystemExit(f"uvicorn did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.2)
            t0 = time.monotonic()
            agents = _enrol(base, token, args.agents, args.legacy_enrol)
            print(f"enrolled {len(agents)} agents through the API in {time.monotonic() - t0:.1f} s")
            baseline = measure(base, token, args.seconds, args.rate, None)
            print(f"baseline (no long-poll): {json.dumps({k: baseline[k] for k in ('health', 'runs')})}")
            counters = Counters(mp.Value("i", 0), mp.Value("i", 0), mp.Value("i", 0), mp.Queue())
            load = mp.Process(target=_load, args=(base, agents, args.wait_s, stop, counters), daemon=True)
            load.start()
            deadline = time.monotonic() + 60
            while counters.waiting.value < args.agents and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(3.0)  # every first poll is past its start-up work and waiting
            print(f"{counters.waiting.value} long-polls waiting")
            rounds = []
            for k in range(args.rounds):
                res = measure(base, token, args.seconds, args.rate, counters)
                res["answered_polls"], res["poll_errors"] = counters.answered.value, counters.errors.value
                rounds.append(res)
                print(
                    f"round {k + 1}: health p50 {res['health']['p50']:.1f} p95 {res['health']['p95']:.1f} "
                    f"p99 {res['health']['p99']:.1f} ms | runs p50 {res['runs']['p50']:.1f} "
                    f"p95 {res['runs']['p95']:.1f} ms | waiting >= {res['waiting_min']} | "
                    f"failures {res['failures']} | polls answered {res['answered_polls']}, "
                    f"errors {res['poll_errors']}"
                )
            result = {
                "server_repo": str(server_repo),
                "agents": args.agents,
                "wait_s": args.wait_s,
                "rounds": args.rounds,
                "seconds": args.seconds,
                "rate": args.rate,
                "baseline": baseline,
                "under_load": rounds,
                "median": {"health": _summary(rounds, "health"), "runs": _summary(rounds, "runs")},
                "load_average": os.getloadavg(),
            }
            m = result["median"]
            print(
                f"median of {args.rounds} rounds with {args.agents} long-polls: "
                f"health p95 {m['health']['p95']:.1f} ms, runs p95 {m['runs']['p95']:.1f} ms "
                f"(baseline health p95 {baseline['health']['p95']:.1f} ms)"
            )
            reasons = []
            while not counters.reasons.empty():
                reasons.append(counters.reasons.get())
            result["poll_error_reasons"] = reasons
            if reasons:
                print("long-poll errors:", *sorted(set(reasons)), sep="\n  ")
            if args.json:
                args.json.write_text(json.dumps(result, indent=2))
        finally:
            stop.set()
            if load is not None:
                load.join(timeout=10)
                if load.is_alive():
                    load.kill()
            api.terminate()
            try:
                api.wait(timeout=15)
            except subprocess.TimeoutExpired:
                api.kill()


if __name__ == "__main__":
    main()
