"""Before and after side by side on the million runs of bench/scale/run.py: two API processes on one
database, one serving an older copy of the code (`--before DIR`, e.g. `git archive` of a commit's
backend/, libs/ and migrations/), the other this checkout, measured in alternating pairs so both
see the same load.

Each case runs `--rounds` pairs, A B then B A then A B ... (A = before, B = after); each arm of a
pair sends the same `--requests` requests (the same drawn run ids); the first pair is a warm-up and
is discarded. Prints, per case, each arm's median p50 and p95 over the kept pairs, the median of
the per-pair p95 ratios B/A, both API processes' CPU per request, PostgreSQL's CPU per request
(every backend of the cluster: a measure the machine's load does not change) and the load average
range (one minute) over the case.

    git archive 989cd92 backend libs migrations | tar -x -C /var/tmp/before
    nice -n 5 .venv/bin/python bench/scale/ab.py --before /var/tmp/before --rounds 5 --requests 20

The database is the cluster in --data (bench/scale/run.py seeds it; not here), started on a free port
unless `--port` names one already running. The schema is the one at this checkout's migrations'
head for both arms: an index a later migration adds serves the older code too where its queries
can use it (say so beside the numbers).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

# bench/scale/run.py under another name (it imports bench/compare/run.py as `run` itself)
_spec = importlib.util.spec_from_file_location("scale_run", Path(__file__).resolve().parent / "run.py")
assert _spec is not None and _spec.loader is not None
scale = importlib.util.module_from_spec(_spec)
sys.modules["scale_run"] = scale
_spec.loader.exec_module(scale)
REPO, Cluster, cases_of = scale.REPO, scale.Cluster, scale.cases_of
_cpu_s, _start_api, free_port, redis_server, pg_cpu_s = (
    scale._cpu_s,
    scale._start_api,
    scale.free_port,
    scale.redis_server,
    scale.pg_cpu_s,
)


class Running(Cluster):  # type: ignore[misc,valid-type]
    """A cluster already running on `port` (left running)."""

    def __init__(self, data: Path, port: int) -> None:
        super().__init__(data, explain=False)
        self.port = port

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *_: object) -> None:
        pass


def _path(tree: Path) -> str:
    """The tree's own libs and agent ahead of the editable installs (which point at this checkout)."""
    dirs = [tree, *sorted(tree.glob("libs/*/src")), tree / "agent" / "src", tree / "client" / "src"]
    return os.pathsep.join(str(d) for d in dirs if d.is_dir())


def _p(times: list[float], q: float) -> float:
    s = sorted(times)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def arm(cl: httpx.Client, pid: int, path: str, params: list[Any], data: Path) -> dict[str, float]:
    times = []
    cpu0, pg0 = _cpu_s(pid), pg_cpu_s(data)
    for p in params:
        t = time.perf_counter()
        r = cl.get(path, params=p)
        times.append((time.perf_counter() - t) * 1000)
        assert r.status_code == 200, (path, r.status_code, r.text[:300])
    return {
        "p50_ms": statistics.median(times),
        "p95_ms": _p(times, 0.95),
        "cpu_ms": (_cpu_s(pid) - cpu0) * 1000 / len(params),
        "pg_cpu_ms": (pg_cpu_s(data) - pg0) * 1000 / len(params),
        "load": os.getloadavg()[0],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True, help="a directory with the older backend/")
    ap.add_argument("--after", type=Path, default=REPO, help="a directory with the newer backend/")
    ap.add_argument("--data", type=Path, default=Path("/var/tmp/iowatt-scale"))
    ap.add_argument("--port", type=int, help="the cluster already runs on this port")
    ap.add_argument("--rounds", type=int, default=5, help="pairs per case, the first discarded")
    ap.add_argument("--requests", type=int, default=20, help="per arm of a pair")
    ap.add_argument("--only", nargs="*", help="only the cases whose name contains one of these")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    meta = json.loads((args.data / "iowatt-scale.json").read_text())
    cluster = Running(args.data, args.port) if args.port else Cluster(args.data, explain=False)
    out: dict[str, Any] = {"cases": {}, "before": str(args.before), "rounds": args.rounds}
    with cluster as c, redis_server() as redis_url:
        cases, runs_total = cases_of(c, meta)
        out["runs_in_database"] = runs_total
        env = {
            **os.environ,
            "IOWATT_DATABASE_URL": c.url(),
            "IOWATT_REDIS_URL": redis_url,
            "IOWATT_ENV": "test",
            # a `git archive` of backend/ has no engine, which the app looks for at its start
            "IOWATT_ENGINE_PATH": os.environ.get(
                "IOWATT_ENGINE_PATH", str(REPO / "agent" / "engine" / "build" / "iowatt-engine")
            ),
        }
        ports = {"A": free_port(), "B": free_port()}
        apis: dict[str, Any] = {}
        clients = {
            k: httpx.Client(
                base_url=f"http://127.0.0.1:{ports[k]}/api/v1",
                headers={"Authorization": f"Bearer {meta['token']}"},
                timeout=120,
            )
            for k in ("A", "B")
        }
        try:
            # started inside the try: when B does not start, A is stopped too (it was left running)
            for k, d in (("A", args.before), ("B", args.after)):
                apis[k] = _start_api(d, ports[k], {**env, "PYTHONPATH": _path(d)})
            for name, path, params in cases:
                if args.only and not any(o in name for o in args.only):
                    continue
                pairs: list[dict[str, dict[str, float]]] = []
                for r in range(args.rounds):
                    drawn = [params() if callable(params) else params for _ in range(args.requests)]
                    pair = {}
                    for k in ("A", "B") if r % 2 == 0 else ("B", "A"):
                        pair[k] = arm(clients[k], apis[k].pid, path, drawn, args.data)
                    if r > 0:  # the first pair warms both up
                        pairs.append(pair)
                ratios = [p["B"]["p95_ms"] / p["A"]["p95_ms"] for p in pairs]
                loads = [p[k]["load"] for p in pairs for k in ("A", "B")]
                metrics = ("p50_ms", "p95_ms", "cpu_ms", "pg_cpu_ms")
                res = {k: {m: statistics.median(p[k][m] for p in pairs) for m in metrics} for k in ("A", "B")}
                res["p95_ratio_median"] = statistics.median(ratios)  # type: ignore[assignment]
                res["load"] = [min(loads), max(loads)]  # type: ignore[assignment]
                out["cases"][name] = res
                a, b = res["A"], res["B"]
                print(
                    f"{name:44s} A p50 {a['p50_ms']:7.1f} p95 {a['p95_ms']:7.1f} cpu {a['cpu_ms']:6.1f} "
                    f"pg {a['pg_cpu_ms']:6.1f} | B p50 {b['p50_ms']:7.1f} p95 {b['p95_ms']:7.1f} "
                    f"cpu {b['cpu_ms']:6.1f} pg {b['pg_cpu_ms']:6.1f} | "
                    f"B/A p95 {res['p95_ratio_median']:.2f} | load {min(loads):.1f}-{max(loads):.1f}",
                    flush=True,
                )
        finally:
            for k in ("A", "B"):
                clients[k].close()
            for api in apis.values():
                api.terminate()
                api.wait()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
