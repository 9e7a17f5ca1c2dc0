"""Start-up cost of the server's processes: CPU seconds (user + system, the whole process tree) and
wall seconds from the command's start until it serves, for an older copy of the code (`--before
DIR`, e.g. `git archive` of a commit's backend/ and worker/) and this checkout, in alternating pairs.

Cases (each a fresh process, as the test suite, `make up` and a restart start them):

- `api1`: `python -m backend.serve --workers 1` (one uvicorn process: imports, create_app(), the
  lifespan's start-up work) until its first 200 on GET /api/v1/health;
- `api2`: `python -m backend.serve --workers 2` (the supervisor and two processes, as tests/stack.py
  and a 2-CPU host run it) until every process has started its app and /api/v1/health answers 200;
- `import`: `python -c "import backend.main; backend.main.create_app()"` (what each pytest worker
  and every in-process test app pays), until it exits;
- `worker`: `celery -A worker.app worker --pool=solo` (as tests/stack.py starts it) until the worker
  is ready (its liveness beat, written on Celery's worker_ready, is in Redis);
- `worker_import`: `python -c` importing worker.app and the task modules it includes, until it exits.

Each case runs `--pairs` pairs, A B then B A then A B ... (A = before, B = this checkout); the first
pair is a warm-up and is discarded (it also writes each tree's bytecode caches). Prints, per case
and arm, the median CPU and wall seconds over the kept pairs, the median of the per-pair CPU ratios
B/A and the load average (one minute) over the case; `--json FILE` keeps every measurement.

    git archive HEAD~3 backend worker | tar -x -C /var/tmp/startup-before
    nice -n 5 .venv/bin/python bench/startup/run.py --before /var/tmp/startup-before --pairs 7

Starts a private PostgreSQL (a database copied from the template this checkout's migrations build)
and Redis; both arms use this checkout's libs/ and migrations (only backend/ and worker/ differ).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.services import celery_worker_argv, free_port, postgres, redis_server, stop  # noqa: E402

PY = str(REPO / ".venv/bin/python")
TICK = os.sysconf("SC_CLK_TCK")
CASES = ("api1", "api2", "import", "worker", "worker_import")
WORKER_IMPORT = "import worker.app\nfor m in worker.app.celery_app.conf.include:\n    __import__(m)"


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _tree_cpu_s(root: int) -> float:
    """User + system CPU of `root` and every live descendant, plus the children they reaped."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int(_stat(int(entry.name))[1])
            except (OSError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            f = _stat(pid)
        except OSError:
            continue
        total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
        todo.extend(children.get(pid, []))
    return total / TICK


def _poll(ready: Callable[[], bool], proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode} before it was ready")
        if ready():
            return
        time.sleep(0.02)
    raise RuntimeError(f"not ready within {timeout} s")


def _env(tree: Path, base: dict[str, str]) -> dict[str, str]:
    # the tree's backend/ and worker/ ahead of the editable install (which points at this checkout)
    return {**os.environ, **base, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": ""}


def _api(tree: Path, base: dict[str, str], workers: int, log: Path) -> tuple[float, float]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/api/v1/health"
    metrics = Path(tempfile.mkdtemp(prefix="iowatt-bench-metrics-"))
    env = {**_env(tree, base), "PROMETHEUS_MULTIPROC_DIR": str(metrics)}
    cmd = [PY, "-m", "backend.serve", "--port", str(port), "--workers", str(workers)]
    t0 = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)

    def ready() -> bool:
        if log.read_bytes().count(b"Application startup complete") < workers:
            return False
        try:
            return httpx.get(url, timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        _poll(ready, proc)
        wall, cpu = time.monotonic() - t0, _tree_cpu_s(proc.pid)
    finally:
        stop(proc, timeout=30)
        shutil.rmtree(metrics, ignore_errors=True)
    return cpu, wall


def _worker(tree: Path, base: dict[str, str], redis_url: str, log: Path) -> tuple[float, float]:
    import redis

    r = redis.Redis.from_url(redis_url)
    r.delete("iowatt:workers:seen")
    cmd = [PY, *celery_worker_argv()[1:]]  # the venv's interpreter, the tree's worker/ first
    t0 = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=tree, env=_env(tree, base), stdout=out, stderr=subprocess.STDOUT)

    def ready() -> bool:  # the worker_ready signal's liveness beat (worker/observe.py), "host/pid"
        keys = r.hkeys("iowatt:workers:seen")
        return any((k.decode() if isinstance(k, bytes) else k).endswith(f"/{proc.pid}") for k in keys)

    try:
        _poll(ready, proc)
        wall, cpu = time.monotonic() - t0, _tree_cpu_s(proc.pid)
    finally:
        stop(proc, timeout=30)
    return cpu, wall


def _code(tree: Path, base: dict[str, str], code: str) -> tuple[float, float]:
    t0 = time.monotonic()
    proc = subprocess.Popen([PY, "-c", code], cwd=tree, env=_env(tree, base))
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{code!r} exited with {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, time.monotonic() - t0


def measure(case: str, tree: Path, base: dict[str, str], redis_url: str, log: Path) -> tuple[float, float]:
    if case == "api1":
        return _api(tree, base, 1, log)
    if case == "api2":
        return _api(tree, base, 2, log)
    if case == "import":
        return _code(tree, base, "import backend.main\nbackend.main.create_app()")
    if case == "worker":
        return _worker(tree, base, redis_url, log)
    return _code(tree, base, WORKER_IMPORT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="a directory with the older backend/, worker/")
    ap.add_argument("--after", type=Path, default=REPO)
    ap.add_argument("--pairs", type=int, default=7, help="pairs per case, the first one discarded")
    ap.add_argument("--case", action="append", choices=CASES, help="only these cases (default: all)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    cases = args.case or list(CASES)
    out: dict[str, Any] = {"before": str(args.before), "after": str(args.after), "pairs": args.pairs}
    logs = Path(tempfile.mkdtemp(prefix="iowatt-bench-startup-"))
    with postgres() as pg, redis_server() as redis_url:
        base = {
            "IOWATT_DATABASE_URL": pg.migrated_database("iowatt_bench"),
            "IOWATT_REDIS_URL": redis_url,
            "IOWATT_ENV": "test",
        }
        for case in cases:
            rows: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
            loads = []
            for i in range(args.pairs):
                order = ("A", "B") if i % 2 == 0 else ("B", "A")
                for key in order:
                    tree = args.before if key == "A" else args.after
                    loads.append(os.getloadavg()[0])
                    rows[key].append(measure(case, tree, base, redis_url, logs / f"{case}-{key}-{i}.log"))
            kept = {k: v[1:] for k, v in rows.items()}
            ratios = [b[0] / a[0] for a, b in zip(kept["A"], kept["B"], strict=True)]
            res = {
                k: {
                    "cpu_s": statistics.median(c for c, _ in v),
                    "wall_s": statistics.median(w for _, w in v),
                }
                for k, v in kept.items()
            }
            out[case] = {
                **res,
                "cpu_ratio_b_a": statistics.median(ratios),
                "load": [min(loads), max(loads)],
                "runs": rows,
            }
            print(
                f"{case:14} before {res['A']['cpu_s']:.2f} CPU-s {res['A']['wall_s']:.2f} s   "
                f"after {res['B']['cpu_s']:.2f} CPU-s {res['B']['wall_s']:.2f} s   "
                f"CPU ratio {statistics.median(ratios):.2f}   load {min(loads):.1f}-{max(loads):.1f}",
                flush=True,
            )
    print(f"each start's log: {logs}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
