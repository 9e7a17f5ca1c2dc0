"""The two halves of a TPC-H run (`isolation` says who does what and why).

`coordinate()` runs in the coordinator: it makes the run directory, forks the worker as the
TPC-H user, relays its progress, asks it to stop (closing the control pipe: a coordinator
without CAP_KILL cannot signal another user's process) when the coordinator is interrupted,
and afterwards has the directory emptied as the TPC-H user and removes it.

`work()` runs in the worker, already that user, in the run directory: the whole run (generate,
start the DBMS, load, power and throughput tests), then the DBMS stopped and the directory
emptied whatever happened. It talks to the coordinator in JSON lines on the events pipe:
`{"progress": text}` while it runs, then one `{"outcome": "ok", "doc": {...}}`, `{"outcome":
"failed", "message"}`, `{"outcome": "unsupported", "message", "install"}` or `{"outcome":
"interrupted"}`; its exit code says the same (0, 1, 77, 130).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import data
from .dbms import Instance, Unsupported, create_instance
from .isolation import (
    RunAs,
    describe,
    empty_cwd,
    run_worker,
    serve_worker,
)
from .workload import is_disk_full

if TYPE_CHECKING:
    from .options import TpchOptions


class WorkerFailed(Exception):
    """The worker failed (exit 1); its message is the run's."""


class WorkerUnsupported(Unsupported):
    pass


def coordinate(
    opts: TpchOptions, user: RunAs, run_dir: Path, progress: Callable[[str], None]
) -> dict[str, Any]:
    """Make `run_dir` (in the target, by descriptor), run the worker in it as `user`, then remove
    it (isolation.run_worker). The worker's document; WorkerFailed, Unsupported or
    KeyboardInterrupt otherwise, always after the directory is gone."""
    preload(opts.dbms)
    # DuckDB's tpch extension, opened while the coordinator can read the agent's installation: the
    # worker, a user that may not reach its directories, copies it from this descriptor into the
    # run directory as itself (the coordinator, root without CAP_DAC_OVERRIDE under the unit, may
    # not write into a directory it handed to that user).
    extension_fd = os.open(data.extension_path(), os.O_RDONLY | os.O_CLOEXEC)
    try:
        outcome, code = run_worker(
            user,
            run_dir,
            progress,
            lambda events_fd, control_fd: work(opts, events_fd, control_fd, extension_fd),
            what="tpch",
            keep=frozenset({extension_fd}),
        )
    finally:
        os.close(extension_fd)
    kind = outcome.get("outcome")
    if kind == "ok" and isinstance(outcome.get("doc"), dict):
        doc: dict[str, Any] = outcome["doc"]
        return doc
    if kind == "unsupported":
        raise WorkerUnsupported(str(outcome.get("message")), str(outcome.get("install")))
    if kind == "interrupted":
        raise KeyboardInterrupt
    if kind == "failed":
        raise WorkerFailed(str(outcome.get("message")))
    raise WorkerFailed(f"tpch failed: the TPC-H worker ended with exit code {code} and no outcome")


def preload(dbms: str) -> None:
    """Import, before the fork, what the worker uses: after it drops to the TPC-H user, that user
    need not be able to read the agent's Python installation (only what is loaded already and
    the DBMS's and DuckDB's own files). Also saves every worker the import time."""
    import ctypes.util  # noqa: F401 - libpq is found through it
    import decimal  # noqa: F401

    import duckdb  # noqa: F401
    import duckdb_extension_tpch  # noqa: F401

    from . import data, spec, steps, workload  # noqa: F401

    if dbms == "postgresql":
        import psycopg
        import psycopg.pq  # noqa: F401 - loads libpq

        psycopg.connect  # noqa: B018 - resolves the lazily loaded implementation
    else:
        import pymysql  # type: ignore[import-untyped,unused-ignore]  # noqa: F401


def work(opts: TpchOptions, events_fd: int, control_fd: int, extension_fd: int) -> int:
    """The run, in the worker (the TPC-H user, in the run directory). Its exit code.
    `extension_fd`: DuckDB's tpch extension, read-only (the generator copies it: steps.run_in)."""
    from .steps import run_in

    def body(emit: Callable[[dict[str, Any]], None], stop: threading.Event) -> dict[str, Any]:
        run_dir = Path(os.getcwd())
        instance = None
        try:
            instance = create_instance(opts.dbms, run_dir / "dbms", opts.buffer_pool_bytes, Path("gen"))
            return run_in(opts, run_dir, instance, lambda text: emit({"progress": text}), stop, extension_fd)
        except (Unsupported, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is the run's message
            raise WorkerFailed(_failure(exc, instance, run_dir)) from exc  # the log is still there
        finally:
            try:
                if instance is not None:
                    instance.stop()
                    instance.remove_extra()
            finally:
                empty_cwd()

    return serve_worker(
        events_fd,
        control_fd,
        body,
        what="tpch",
        failed=WorkerFailed,
        unsupported=Unsupported,
        unsupported_outcome=lambda exc: {
            "outcome": "unsupported",
            "message": exc.message,
            "install": exc.install,
        },
    )


def _failure(exc: Exception, instance: Instance | None, run_dir: Path) -> str:
    """The run's message: a full target says so, also when only the server's log knows it."""
    log = instance.log_tail(12) if instance is not None else ""
    full = is_disk_full(exc) or is_disk_full(Exception(log))
    detail = describe(exc)
    if full and not is_disk_full(exc) and instance is not None:
        detail += f"; {instance.dbms}'s log: {log.split(' | ')[-1][:300]}"
    where = "target full" if full else "failed"
    return f"tpch {where}: {detail} (instance stopped, {run_dir} removed)"
