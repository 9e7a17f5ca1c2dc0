"""Run the API: N uvicorn worker processes behind one port (docs/adr/0016-api-processes.md).

    python -m backend.serve --host 127.0.0.1 --port 8000 [--workers N]

`make up` (scripts/up.sh), the compose file's `api` service and bench/load start the API this
way. One process was CPU-bound under bench/load's 200 agents and 20 users (every route's p95
about 1 s): a Python process serves on one core at a time (the GIL).

N is `--workers`, else `IOWATT_API_WORKERS`, else the CPUs this process may run on, at most
`DEFAULT_MAX_WORKERS`: each process may hold up to 30 PostgreSQL connections (backend.db), and
PostgreSQL allows 100 by default, the worker and beat included. uvicorn supervises the processes
(a dead one is started again) and shares the listening socket among them. With more than one, the
supervisor imports the app and the processes are forks of it (`_fork_from_here`): the imports are
paid once, not once per process.

The per-process Prometheus metrics (request latency, duplicate uploads) are summed across the
processes through prometheus_client's multiprocess mode: PROMETHEUS_MULTIPROC_DIR names a
directory where each process keeps its own file (backend.metrics). When the variable is set, its
old files are removed at start (a restarted API starts from zero, as one process did); otherwise a
private temporary directory is made, and removed at exit.
"""

import argparse
import gc
import os
import shutil
import sys
import tempfile
from pathlib import Path

DEFAULT_MAX_WORKERS = 3
# set for the API's processes: read by backend.main's lifespan (the one other reader)
EXITS_WITH_APP = "IOWATT_API_EXITS_WITH_APP"
MAX_WORKERS = 32


def api_workers(env: dict[str, str] | None = None) -> int:
    """IOWATT_API_WORKERS, else the usable CPUs, at most DEFAULT_MAX_WORKERS."""
    raw = (os.environ if env is None else env).get("IOWATT_API_WORKERS", "").strip()
    if not raw:
        return max(1, min(len(os.sched_getaffinity(0)), DEFAULT_MAX_WORKERS))
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_WORKERS:
        raise ValueError(f"IOWATT_API_WORKERS must be a whole number from 1 to {MAX_WORKERS}, not {raw!r}")
    return int(raw)


# How long a stopping API waits for the requests it is answering before it cancels them. An idle
# agent's lease request waits up to 25 s for work (its long-poll; up to IOWATT_LONGPOLL_MAX_WAIT_S,
# 80 s, in a large fleet: ADR 0053), and uvicorn waited for it without a bound: every stop of an
# API that agents were polling took up to 25 s, past compose's 10 s
# stop_grace (then SIGKILL: no lifespan shutdown). A poll cancelled here ends as a closed
# connection, which the agent retries as after any network error (the server is going away); every
# other request is short (the PDF's Chromium is bounded by its own timeout, backend/review/pdf.py).
DEFAULT_SHUTDOWN_GRACE_S = 5
MAX_SHUTDOWN_GRACE_S = 300


def shutdown_grace_s(env: dict[str, str] | None = None) -> int:
    """IOWATT_API_SHUTDOWN_GRACE_S, else DEFAULT_SHUTDOWN_GRACE_S (seconds, 0 to MAX_SHUTDOWN_GRACE_S)."""
    raw = (os.environ if env is None else env).get("IOWATT_API_SHUTDOWN_GRACE_S", "").strip()
    if not raw:
        return DEFAULT_SHUTDOWN_GRACE_S
    if not raw.isdigit() or int(raw) > MAX_SHUTDOWN_GRACE_S:
        raise ValueError(
            f"IOWATT_API_SHUTDOWN_GRACE_S must be a whole number of seconds from 0 to "
            f"{MAX_SHUTDOWN_GRACE_S}, not {raw!r}"
        )
    return int(raw)


def _metrics_dir() -> tuple[Path, bool]:
    """(the directory, whether it is ours to remove at exit)."""
    named = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip()
    if not named:
        return Path(tempfile.mkdtemp(prefix="iowatt-metrics-")), True
    path = Path(named)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    for old in path.glob("*.db"):
        old.unlink()
    return path, False


def _fork_from_here() -> None:
    """Import the app here, in the supervisor, and start its processes as forks of this one: each
    inherits the imported modules, the ORM mappings, the pydantic models and the routers (about
    3.5 CPU-s of imports in every process otherwise: docs/benchmarks.md § Start-up), and only calls
    create_app() and runs the lifespan itself (the dummy password hash the lifespan wants is made
    here too, once: backend.kit.security.prepare_password_check). uvicorn starts its processes
    from a fresh interpreter (multiprocessing's spawn context): its `uvicorn._subprocess.spawn` is
    replaced by a fork context whose processes first put back the signal handlers a fresh
    interpreter has (the supervisor's own ones queue signals for its loop). Nothing here opens a
    connection, a thread or an event loop: each process opens its own in the lifespan, as before.
    A process the supervisor starts again after a crash is a fork too, so it starts as cheaply."""
    import multiprocessing.context
    import signal

    import uvicorn._subprocess
    from uvicorn.supervisors.multiprocess import SIGNALS

    import backend.main  # noqa: F401 - what the processes inherit
    from backend.kit.security import prepare_password_check

    class Forked(multiprocessing.context.ForkProcess):
        def run(self) -> None:
            for sig in SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            super().run()

    class ForkContext:
        Process = Forked

    prepare_password_check()  # the lifespan's one Argon2id hash, made once for all the processes
    # what the processes inherit is never collected again: kept out of the cyclic GC's walks (and
    # its writes, which would copy the shared pages into each process)
    gc.freeze()
    uvicorn._subprocess.spawn = ForkContext()  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backend.serve", description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument(
        "--workers", type=int, help="API processes (default: IOWATT_API_WORKERS or the CPUs, ≤ 3)"
    )
    args = ap.parse_args(argv)
    try:
        workers = api_workers() if args.workers is None else args.workers
        grace = shutdown_grace_s()
    except ValueError as exc:
        ap.error(str(exc))  # exit status 2
    if not 1 <= workers <= MAX_WORKERS:
        ap.error(f"--workers must be from 1 to {MAX_WORKERS}")
    path, ours = _metrics_dir()
    # before any worker imports prometheus_client: it picks its value class at import
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    # each API process exits when its app stops: the app need not thaw what it froze (backend.main)
    os.environ[EXITS_WITH_APP] = "1"
    import uvicorn

    if workers > 1:
        _fork_from_here()

    print(f"iowatt API: {workers} process(es) on {args.host}:{args.port}", file=sys.stderr, flush=True)
    try:
        # no uvicorn access log: backend.logs writes one structured line per request
        uvicorn.run(
            "backend.main:create_app",
            factory=True,
            host=args.host,
            port=args.port,
            workers=workers,
            access_log=False,
            timeout_graceful_shutdown=grace,
        )
    finally:
        if ours:
            shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
