"""Start API processes as forks of one process that imported the app once (the fault rig's
several-process topology, tests/stack.py `stack(api_processes=N, api_forks=True)`).

    python -m tests.apiforks      # then one JSON line per process to start on its standard input

Each line is {"argv": [...], "env": {...}, "log": PATH}: `argv` is an API process's command as
bench/load/topology.py gives it (`python -m backend.serve --host H --port P --workers 1`); the
fork runs backend.serve's own `main()` with that command's arguments and that environment, in a
session of its own (its PID is its process group: `Stack.kill` signals it), its output appended to
PATH; its PID is answered on one line. backend.serve's `_fork_from_here` is what this process
prepares once: the imports, the ORM mappings, the dummy password hash, the frozen heap. A process
started again (a scenario killed it) then costs its lifespan (~0.3-0.5 CPU-s) instead of the
app's imports (~3.3 CPU-s, docs/benchmarks.md § Start-up), as a supervisor's restarted uvicorn
process does. Forks are reaped by the kernel (SIGCHLD ignored here); the caller watches /proc.
Nothing here opens a connection, a thread or an event loop before a fork."""

from __future__ import annotations

import json
import os
import signal
import sys


def _child(argv: list[str], env: dict[str, str], log: str) -> None:
    os.setsid()
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.environ.clear()
    os.environ.update(env)
    from backend import serve
    from backend.config import get_settings

    get_settings.cache_clear()  # this process's own environment (its metrics directory, say)
    i = argv.index("backend.serve")
    sys.argv = ["backend.serve", *argv[i + 1 :]]
    code = 1
    try:
        code = serve.main(sys.argv[1:])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> int:
    metrics = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if metrics:  # prometheus_client writes there from its import on (backend.serve makes it first too)
        os.makedirs(metrics, mode=0o700, exist_ok=True)
    from backend import serve

    os.environ.setdefault(serve.EXITS_WITH_APP, "1")
    serve._fork_from_here()  # noqa: SLF001 - the same preparation backend.serve's forks get
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks reaped as they end
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req["argv"], req["env"], req["log"])
        print(pid, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
