"""Follow each run of a kept load run (`bench/load/run.py --keep DIR`) through the server's logs.

    .venv/bin/python bench/load/trace.py DIR [--slowest 15]

Per run, the moments of its dispatch, as seconds after the simulated user sent `POST /runs`:

- `post_end`: the API's `http.request` line of that POST (its `X-Request-ID` is the simulator's):
  the request done, committed, its outbox row sent to the broker;
- `created`: the simulator read the 201;
- `received`: the Celery worker's main process took the `run.dispatch` task from Redis (its
  "Task ... received" line), `task_start` / `task_end`: the task's body (`task.done` minus its
  `duration_ms`, under the POST's request id), `assigned`: the `run.assigned` line (and which task
  assigned it: `run.dispatch`, or `run.dispatch_pending` when the first look left it queued);
- `poll_end`: the API's line of the long-poll that handed the lease (its own request id), with
  how long that poll had waited, `leased`: the simulator read the lease.

Prints the percentiles of each step and the slowest runs whole, so a tail shows where it waits.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_CELERY_RECEIVED = re.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): INFO/MainProcess\] Task (?P<name>[\w.]+)"
    r"\[(?P<id>[0-9a-f-]+)\] received"
)


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _celery_ts(text: str) -> float:
    # Celery's own lines are in the worker's local time; the load stack runs with TZ unset (UTC)
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC).timestamp()


def read_logs(logs: Path) -> dict[str, Any]:
    by_request: dict[str, list[dict[str, Any]]] = defaultdict(list)
    received: dict[str, float] = {}
    assigned: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in sorted(logs.glob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    doc = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(doc, dict) or "timestamp" not in doc:
                    continue
                doc["_t"] = _ts(doc["timestamp"])
                doc["_file"] = path.name
                if doc.get("event") == "run.assigned" and doc.get("run_id"):
                    assigned[doc["run_id"]].append(doc)
                if doc.get("request_id"):
                    by_request[doc["request_id"]].append(doc)
            else:
                m = _CELERY_RECEIVED.match(line)
                if m:
                    received[m["id"]] = _celery_ts(m["ts"])
    return {"by_request": by_request, "received": received, "assigned": assigned}


def trace_run(run: dict[str, Any], logs: dict[str, Any]) -> dict[str, Any]:
    t0 = run["posted"]
    out: dict[str, Any] = {"run_id": run["run_id"]}

    def rel(t: float | None) -> float | None:
        return None if t is None or t0 is None else round(t - t0, 3)

    out["created"] = rel(run["created"])
    out["leased"] = rel(run["leased"])
    for doc in logs["by_request"].get(run["post_request_id"] or "", []):
        if doc.get("event") == "http.request":
            out["post_end"] = rel(doc["_t"])
            out["post_ms"] = doc.get("duration_ms")
        elif doc.get("event") == "task.done" and doc.get("task") == "run.dispatch":
            end = doc["_t"]
            out.setdefault("task_start", rel(end - (doc.get("duration_ms") or 0) / 1000))
            out.setdefault("task_end", rel(end))
            received = logs["received"].get(doc.get("task_id", ""))
            if received is not None:
                out.setdefault("received", rel(received))
    first = (logs["assigned"].get(run["run_id"]) or [None])[0]
    if first is not None:
        out["assigned"] = rel(first["_t"])
        out["assigned_by"] = first.get("task")
    for doc in logs["by_request"].get(run["lease_request_id"] or "", []):
        if doc.get("event") == "http.request":
            out["poll_end"] = rel(doc["_t"])
            out["poll_waited_ms"] = doc.get("duration_ms")
    return out


STEPS = ["post_end", "created", "received", "task_start", "task_end", "assigned", "poll_end", "leased"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path, help="the directory of bench/load/run.py --keep")
    ap.add_argument("--slowest", type=int, default=15)
    ap.add_argument("--json", type=Path, help="write every run's trace here")
    args = ap.parse_args()
    doc = json.loads((args.dir / "load.json").read_text())
    logs = read_logs(args.dir / "logs")
    runs = [trace_run(r, logs) for rnd in doc["rounds"] for r in rnd.get("trace", [])]
    if not runs:
        print("no traced runs (a load.json from before --keep?)", file=sys.stderr)
        return 1
    print(f"{len(runs)} runs; seconds after POST /runs was sent (p50 / p95 / max, n):")
    for step in STEPS:
        xs = sorted(r[step] for r in runs if r.get(step) is not None)
        if xs:
            p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
            print(f"  {step:12} {statistics.median(xs):7.3f} {p95:7.3f} {xs[-1]:7.3f}  n={len(xs)}")
    by = defaultdict(int)
    for r in runs:
        by[r.get("assigned_by") or "not assigned in the logs"] += 1
    print("  assigned by: " + ", ".join(f"{k} {v}" for k, v in sorted(by.items())))
    slow = sorted((r for r in runs if r.get("leased") is not None), key=lambda r: -r["leased"])
    print(f"\nthe {args.slowest} slowest (s after POST sent; poll_waited: that poll's whole wait):")
    print("  " + " ".join(f"{s:>10}" for s in STEPS) + "  assigned_by       poll_waited")
    for r in slow[: args.slowest]:
        cells = " ".join(f"{r[s]:>10.3f}" if r.get(s) is not None else f"{'-':>10}" for s in STEPS)
        waited = r.get("poll_waited_ms") or "-"
        print(f"  {cells}  {r.get('assigned_by') or '-':16} {waited} ms  {r['run_id']}")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
