"""Start skew of synchronized group runs (ADR 0038, issue 27): N group runs on two agents as two
hosts on this machine, and the distribution of how far from the server's instant each member's
engine started and how far apart the two started.

The stack is the test suite's (tests/stack.py: PostgreSQL, Redis, one API process, a Celery worker,
an agent with the real engine); the second host is a second agent in a network namespace of its
own behind a veth link (tests/netns.py, as the group-run tests' hosts; needs root). With
`--netns` both members are such hosts (the stack's agent stays idle), so both reach the server
over a link as measured hosts do; `--delay-ms D` adds D ms each way on the hosts' links (their
proxies hold every chunk that long: a round trip of 2 D more). Each group run: 1 MiB of 4 KiB
random writes per member on /dev/shm, no idle baseline (the skew does not depend on it), so the
whole takes under two minutes.

    .venv/bin/python bench/group_skew/run.py --runs 20 [--netns] [--delay-ms 1.5] [--json FILE]

Printed per run and in total: each member's recorded skew (its engine start, converted with its
measured clock offset, minus the instant), the same on the shared clock (both agents read this
machine's one clock, so the recorded skew minus the measured offset is the true one here), how
far apart the two members started (on the shared clock) and their clock round trips; then the
median, 90th percentile and largest of each, and how many runs were flagged unsynchronized.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests import netns  # noqa: E402
from tests.services import postgres, redis_server  # noqa: E402
from tests.stack import stack  # noqa: E402
from tests.waiting import wait_until  # noqa: E402

MS = 1e6


def quantiles(values: list[float]) -> dict[str, float]:
    s = sorted(values)
    p90 = s[min(len(s) - 1, round(0.9 * (len(s) - 1)))]
    return {"median": statistics.median(s), "p90": p90, "max": s[-1], "min": s[0]}


def one_group(api: Any, members: list[dict[str, str]]) -> dict[str, Any]:
    job = {"name": "randwrite-4k", "rw": "randwrite", "bs_bytes": 4096, "size_bytes": 1 << 20}
    body = {"members": members, "workload": {"jobs": [job]}, "name": "bench group skew", "idle_s": 0}
    r = api.post("/run-groups", json=body)
    r.raise_for_status()
    gid = r.json()["id"]

    def ended() -> dict[str, Any] | None:
        g: dict[str, Any] = api.get(f"/run-groups/{gid}").json()
        return g if g["status"] in ("succeeded", "failed", "cancelled") else None

    return wait_until(ended, timeout=120, interval=0.2, message="the group run ends")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20, help="group runs (default 20)")
    ap.add_argument("--netns", action="store_true", help="both members in network namespaces of their own")
    ap.add_argument(
        "--delay-ms", type=float, default=0.0, help="one-way delay on the hosts' links (default 0)"
    )
    ap.add_argument("--json", type=Path, help="write every run's figures and the summary here")
    args = ap.parse_args()
    if args.delay_ms < 0:
        ap.error("--delay-ms: must be 0 or more")
    own = Path(tempfile.mkdtemp(prefix="iowatt-skew-", dir="/dev/shm"))  # the stack's agent's target
    rows: list[dict[str, Any]] = []
    t0 = time.monotonic()
    try:
        with postgres() as pg, redis_server() as redis_url, stack(pg, redis_url, api_workers=1) as live:
            n = 2 if args.netns else 1
            if not args.netns:
                live.allow(str(own))
            with (
                netns.hosts(live, n, delay_s=args.delay_ms / 1000, store=False) as net,
                live.api() as api,
            ):
                where = (
                    "both in network namespaces"
                    if args.netns
                    else "the stack's agent and a network namespace"
                )
                print(
                    f"hosts: {where}, {args.delay_ms:g} ms each way on the links; "
                    f"load average {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                members = [{"agent_id": h.agent_id, "target_path": str(h.local)} for h in net.hosts]
                if not args.netns:
                    members.insert(0, {"agent_id": live.agent_id, "target_path": str(own)})
                for i in range(args.runs):
                    g = one_group(api, members)
                    if g["status"] != "succeeded":
                        print(f"run {i + 1}: {g['status']}: {g['stop_reason']}", flush=True)
                        continue
                    ms = g["members"]
                    recorded = [m["start_skew_ns"] / MS for m in ms]
                    shared = [(m["start_skew_ns"] - m["clock_offset_ns"]) / MS for m in ms]
                    row = {
                        "recorded_ms": recorded,
                        "shared_clock_ms": shared,
                        "apart_ms": abs(shared[0] - shared[1]),
                        "round_trip_ms": [m["clock_round_trip_ns"] / MS for m in ms],
                        "unsynchronized": g["unsynchronized"],
                        "load": os.getloadavg()[0],
                    }
                    rows.append(row)
                    print(
                        f"run {i + 1:3d}: recorded {recorded[0]:+7.2f} {recorded[1]:+7.2f} ms | shared clock "
                        f"{shared[0]:+7.2f} {shared[1]:+7.2f} ms | apart {row['apart_ms']:6.2f} ms | "
                        "round trips "
                        f"{row['round_trip_ms'][0]:5.2f} {row['round_trip_ms'][1]:5.2f} ms"
                        f"{' | unsynchronized' if g['unsynchronized'] else ''}",
                        flush=True,
                    )
    finally:
        shutil.rmtree(own, ignore_errors=True)
    if not rows:
        print("no group run succeeded", file=sys.stderr)
        return 1
    summary = {
        "runs": len(rows),
        "hosts": "netns" if args.netns else "stack+netns",
        "delay_ms_each_way": args.delay_ms,
        "recorded_abs_ms": quantiles([abs(x) for r in rows for x in r["recorded_ms"]]),
        "shared_clock_abs_ms": quantiles([abs(x) for r in rows for x in r["shared_clock_ms"]]),
        "apart_ms": quantiles([r["apart_ms"] for r in rows]),
        "round_trip_ms": quantiles([x for r in rows for x in r["round_trip_ms"]]),
        "unsynchronized": sum(r["unsynchronized"] for r in rows),
        "load_average": quantiles([r["load"] for r in rows]),
        "wall_s": round(time.monotonic() - t0, 1),
    }
    for k in ("recorded_abs_ms", "shared_clock_abs_ms", "apart_ms", "round_trip_ms"):
        q = summary[k]
        print(f"{k:20s} median {q['median']:6.2f}  p90 {q['p90']:6.2f}  max {q['max']:6.2f}")
    print(
        f"unsynchronized: {summary['unsynchronized']} of {len(rows)}; load average "
        f"{summary['load_average']['min']:.1f}-{summary['load_average']['max']:.1f}; {summary['wall_s']} s"
    )
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "summary": summary}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
