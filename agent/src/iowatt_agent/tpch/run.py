"""A TPC-H run from the coordinator's side (`bench --preset tpch` and a server's lease, lease.py):
check the host, make the run's directory, have the worker (worker.py, as the TPC-H user) run
the steps (steps.py) in it, and return the `tpch` document."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

from .data import extension_path
from .dbms import check_binaries
from .isolation import IsolationError, check_reachable, tpch_user
from .options import RUN_DIR_PREFIX, TpchOptions
from .worker import WorkerFailed, coordinate


class TpchFailed(Exception):
    """The run failed (exit 1); the instance and its directory are gone."""


def run(
    opts: TpchOptions, progress: Any, stop: threading.Event, run_dir: Path | None = None
) -> dict[str, Any]:
    """The whole run; the `tpch` object. Unsupported before anything is created; TpchFailed (or
    KeyboardInterrupt) after everything created is removed. `run_dir` (inside the target; made
    here, removed at the end): a server's lease names it by its run (`iowatt-tpch-<run id>`).

    This process only makes and removes the run directory; the run itself happens in a worker
    that is the unprivileged TPC-H user (`worker`, `isolation`)."""
    extension_path()
    check_binaries(opts.dbms)
    run_dir = run_dir or opts.target / f"{RUN_DIR_PREFIX}{uuid.uuid4().hex[:12]}"
    try:
        user = tpch_user(opts.dbms)
        check_reachable(run_dir, user)  # before any work: the DBMS opens its data directory by path
        return coordinate(opts, user, run_dir, progress)
    except (IsolationError, WorkerFailed) as exc:
        text = str(exc)
        raise TpchFailed(text if text.startswith("tpch ") else f"tpch failed: {text}") from None
