"""Load benchmark (issue 11): 200 simulated agents and 20 users against the real stack.

Starts a private PostgreSQL (fsync on, as `make up`) and Redis on free ports, migrates, starts the
API (`backend.serve`: several uvicorn processes), a Celery worker and beat exactly as
`scripts/up.sh` does, enrols the agents through the API,
then runs `--rounds` rounds: users queue runs on idle agents, list, open and compare runs for
`--seconds`; every queued run is awaited. Then the power-sample ingest comparison (the result
upload vs raw COPY of the same rows into power_samples), then the database check: every queued run
succeeded exactly once with one result. Prints medians over rounds; `--json FILE` keeps everything.
Exit status 1 when a run was lost or duplicated. bench/load/README.md explains the figures.

    .venv/bin/python bench/load/run.py                      # default: about 2.5 minutes
    .venv/bin/python bench/load/run.py --rounds 3 --seconds 60 --ingest-repeats 5 --json /tmp/load.json
"""

import argparse
import asyncio
import json
import math
import os
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.load import loadsim  # noqa: E402
from tests.services import redis_instance  # noqa: E402


def _fmt(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _heartbeats_line(n: int, p50: float, p95: float) -> str:
    if not n:  # never a p95 of 0: nothing was measured
        return (
            "HEARTBEATS: NONE IN THE ROUND, no heartbeat latency measured (a longer round, or "
            "--phase steady: bench/load/README.md § Heartbeats and polls in phase)"
        )
    return f"heartbeats: {n} in the round, p50 {_fmt(p50)} ms, p95 {_fmt(p95)} ms"


def summarize(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Per round the percentiles; over rounds their medians."""
    per = []
    for r in rounds:
        per.append(
            {
                "runs_queued": r["runs_queued"],
                "runs_stored": r["runs_stored"],
                "dispatch_p50_ms": loadsim.pct(r["dispatch_ms"], 50),
                "dispatch_p95_ms": loadsim.pct(r["dispatch_ms"], 95),
                "dispatch_p99_ms": loadsim.pct(r["dispatch_ms"], 99),
                "dispatch_max_ms": max(r["dispatch_ms"], default=float("nan")),
                "dispatch_from_created_p95_ms": loadsim.pct(r["dispatch_from_created_ms"], 95),
                "start_p95_ms": loadsim.pct(r["start_ms"], 95),
                "heartbeats": r["heartbeats"]["n"],
                "heartbeat_p50_ms": r["heartbeats"]["p50_ms"],
                "heartbeat_p95_ms": r["heartbeats"]["p95_ms"],
                "load_average": r["load_average"],
            }
        )
    med = {k: statistics.median(p[k] for p in per) for k in per[0] if k != "load_average"}
    # a round without heartbeats has no heartbeat latency: the median of the rounds that had some
    beat_p = [p for p in per if p["heartbeats"]]
    for k in ("heartbeat_p50_ms", "heartbeat_p95_ms"):
        med[k] = statistics.median(p[k] for p in beat_p) if beat_p else float("nan")
    routes: dict[str, dict[str, float]] = {}
    for name in sorted({n for r in rounds for n in r["routes"]}):
        rows = [r["routes"][name] for r in rounds if name in r["routes"]]
        routes[name] = {
            "n": sum(x["n"] for x in rows),
            "non_2xx": sum(x["non_2xx"] for x in rows),
            **{k: statistics.median(x[k] for x in rows) for k in ("p50", "p95", "p99", "max")},
        }
    return {"rounds": per, "median": med, "routes": routes}


async def _main(p: loadsim.Platform, cfg: loadsim.Config, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with loadsim.running(p, cfg) as sim:
        print(f"{len(sim.agents)} agents online, {len(sim.users)} users", flush=True)
        if args.idle_measure_s > 0:
            idle = out["idle"] = await loadsim.idle_cost(sim, args.idle_measure_s)
            print(
                f"idle ({len(sim.agents)} agents polling, {idle['seconds']:.0f} s): "
                f"{idle['write_transactions_per_s']:.1f} write transactions/s, "
                f"{idle['commits_per_s']:.1f} commits/s, {idle['wal_bytes_per_s'] / 1024:,.0f} KiB WAL/s, "
                f"API CPU {idle['api_cpu_s_per_s']:.2f} s/s",
                flush=True,
            )
        rounds = []
        for k in range(args.rounds):
            t0 = time.monotonic()
            r = await sim.round()
            rounds.append(r)
            print(
                f"round {k + 1}: {r['runs_queued']} runs queued in {r['queued_for_s']:.0f} s, "
                f"{r['runs_stored']} stored ({time.monotonic() - t0:.0f} s); dispatch p50 "
                f"{_fmt(loadsim.pct(r['dispatch_ms'], 50))} "
                f"p95 {_fmt(loadsim.pct(r['dispatch_ms'], 95))} ms; "
                f"load average {r['load_average'][0]:.1f}; this simulator's loop late by p50 "
                f"{r['sim_loop_lag_ms']['p50']:.0f}, p95 {r['sim_loop_lag_ms']['p95']:.0f}, max "
                f"{r['sim_loop_lag_ms']['max']:.0f} ms, its CPU {r['sim_cpu_s_per_s']:.2f} s/s",
                flush=True,
            )
            print(
                "   ",
                _heartbeats_line(r["heartbeats"]["n"], r["heartbeats"]["p50_ms"], r["heartbeats"]["p95_ms"]),
            )
            for e in r["errors"][:5]:
                print("   ", e)
        out["rounds_raw"] = rounds
        if args.ingest_repeats:
            out["ingest"] = await loadsim.ingest_bench(
                sim, samples=args.ingest_samples, repeats=args.ingest_repeats, copy_format=args.ingest_copy
            )
            ing = out["ingest"]
            print(
                f"power-sample ingest ({args.ingest_samples:,} samples, {args.ingest_repeats} repeats): "
                f"API {ing['median_api_rows_per_s']:,.0f}/s vs {args.ingest_copy} COPY "
                f"{ing['median_copy_rows_per_s']:,.0f}/s, "
                f"median ratio {ing['median_ratio']:.2f}",
                flush=True,
            )
        out["ingest_runs"] = list(sim.ingest_runs)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=200)
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1, help="measured rounds; medians are over rounds")
    ap.add_argument("--seconds", type=float, default=45.0, help="how long users queue and browse per round")
    ap.add_argument("--run-s", type=float, default=2.0, help="the simulated engine's runtime per run")
    ap.add_argument("--idle-s", type=float, default=0.5, help="idle baseline before and after each run")
    ap.add_argument(
        "--think-s",
        type=float,
        default=5.0,
        help="users' mean pause between actions: a person's pace (5 s); 1 s is the stress round (README § Users)",
    )
    ap.add_argument("--queue-share", type=float, default=0.35, help="share of user actions that queue a run")
    ap.add_argument("--max-runs", type=int, help="queue at most this many runs per round")
    ap.add_argument("--ingest-samples", type=int, default=100_000)
    ap.add_argument("--ingest-repeats", type=int, default=3, help="0 skips the ingest comparison")
    ap.add_argument(
        "--ingest-copy",
        choices=["text", "binary"],
        default="text",
        help="the raw COPY's format the upload is compared with (the API's own is binary)",
    )
    ap.add_argument("--worker-concurrency", type=int, default=2, help="as make up")
    ap.add_argument(
        "--api-workers",
        type=int,
        help="API processes (default: as make up, IOWATT_API_WORKERS or the CPUs, ≤ 3)",
    )
    ap.add_argument(
        "--api-processes",
        type=int,
        default=0,
        help="N > 0: N API processes on N ports behind Caddy (the Helm chart's topology, issue 30)",
    )
    ap.add_argument("--workers", type=int, default=1, help="Celery worker processes (-n worker-K)")
    ap.add_argument("--pg-fsync-off", action="store_true", help="PostgreSQL without fsync (as the tests')")
    ap.add_argument(
        "--idle-measure-s", type=float, default=15.0, help="first measure idle agents' server cost (0 skips)"
    )
    ap.add_argument(
        "--server-tree",
        type=Path,
        help="run the server (API, workers, beat) from this tree (an older commit's backend/, worker/, "
        "libs/ from git archive): a side-by-side measurement with this simulator",
    )
    ap.add_argument(
        "--phase",
        choices=["steady", "start"],
        default="steady",
        help="steady: the agents' heartbeats and polls spread over their intervals, as a fleet that "
        "has run a while (each agent's second one at a uniformly drawn point of the first named "
        "interval); start: as a fleet started at once (README § Heartbeats and polls in phase)",
    )
    ap.add_argument(
        "--stack-nice",
        type=int,
        default=5,
        help="run the stack's processes (API, workers, beat, Caddy, PostgreSQL) this much nicer than "
        "the simulator, which stands for clients on other machines: its late event loop is not "
        "measured as the server's latency (0: all alike, as before session 26)",
    )
    ap.add_argument("--json", type=Path, help="write every measurement here")
    ap.add_argument(
        "--keep",
        type=Path,
        help="keep the server's logs in DIR/logs and every measurement in DIR/load.json (with each "
        "run's trace): `bench/load/trace.py DIR` then follows each run through the API and the worker",
    )
    args = ap.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        args.json = args.json or args.keep / "load.json"
    if args.server_tree:
        loadsim.SERVER_TREE = args.server_tree.resolve()
    loadsim.STACK_NICE = args.stack_nice
    cfg = loadsim.Config(
        agents=args.agents,
        users=args.users,
        seconds=args.seconds,
        run_s=args.run_s,
        idle_s=args.idle_s,
        think_s=args.think_s,
        queue_share=args.queue_share,
        max_runs=args.max_runs,
        phase=args.phase,
    )
    # SIGTERM (`timeout`, kill) acts as Ctrl-C: asyncio.run cancels the simulation, the context
    # managers stop the stack. Python's own SIGINT handler first: a command started with `&` by a
    # non-interactive shell (the quiet window's `run.py ... & cpu_split.py $!`) inherits SIGINT
    # ignored, and then neither signal stopped it (its stack was left running)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    t_all = time.monotonic()
    with (
        loadsim.postgres(fsync=not args.pg_fsync_off) as pg_port,
        redis_instance() as redis,
        loadsim.platform(
            pg_port,
            redis.url,
            users=args.users,
            worker_concurrency=args.worker_concurrency,
            api_workers=args.api_workers,
            api_processes=args.api_processes,
            workers=args.workers,
            keep=args.keep,
        ) as p,
    ):
        print(f"stack up in {time.monotonic() - t_all:.0f} s: {p.url}", flush=True)
        raw = asyncio.run(_main(p, cfg, args))
        check = loadsim.check_database(p.conninfo, raw["rounds_raw"])
    summary = summarize(raw["rounds_raw"])
    med = summary["median"]
    print(f"\nmedians over {args.rounds} round(s), {args.agents} agents, {args.users} users:")
    print(
        f"  dispatch (POST /runs sent -> lease received, idle agent): p50 {_fmt(med['dispatch_p50_ms'])} ms, "
        f"p95 {_fmt(med['dispatch_p95_ms'])} ms, p99 {_fmt(med['dispatch_p99_ms'])} ms; "
        f"run started (start answered) p95 {_fmt(med['start_p95_ms'])} ms"
    )
    print(
        "  "
        + _heartbeats_line(
            sum(p["heartbeats"] for p in summary["rounds"]), med["heartbeat_p50_ms"], med["heartbeat_p95_ms"]
        )
    )
    print(f"  {'route':44} {'n':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for name, r in summary["routes"].items():
        print(
            f"  {name:44} {r['n']:>7} {_fmt(r['p50']):>8} {_fmt(r['p95']):>8} {_fmt(r['p99']):>8} "
            f"{r['non_2xx']:>8}"
        )
    extra = len(raw["ingest_runs"])
    print(
        f"  database: {check['queued']} runs queued by users (+{extra} ingest runs), "
        f"{check['runs_in_database']} in the database; lost {len(check['lost'])}, duplicated "
        f"{len(check['duplicated'])}, leased more than once {len(check['leased_more_than_once'])}, "
        f"energy missing {len(check['energy_missing'])}"
    )
    print(f"  total {time.monotonic() - t_all:.0f} s")
    if args.json:
        for r in raw["rounds_raw"]:  # the per-run lists are long and say nothing more than the summary
            for key in ("dispatch_ms", "dispatch_from_created_ms", "start_ms"):
                r[key] = sorted(round(x, 1) for x in r[key])
            for key in ("run_ids", "samples_sent", "agent_stored", "agent_duplicates", "lease_ids"):
                r.pop(key)
        args.json.write_text(
            json.dumps(
                {
                    "args": vars(args) | {"json": str(args.json)},
                    "summary": summary,
                    "ingest": raw.get("ingest"),
                    "idle": raw.get("idle"),
                    "database": check,
                    "rounds": raw["rounds_raw"],
                },
                indent=1,
                default=str,
            )
        )
    bad = check["lost"] or check["duplicated"] or check["runs_in_database"] != check["queued"] + extra
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
