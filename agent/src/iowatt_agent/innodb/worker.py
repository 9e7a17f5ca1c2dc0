"""The two halves of an InnoDB flushing-policy run, as TPC-H's (`tpch.worker`, `tpch.isolation`
say who does what and why): the coordinator makes the run directory in the target by descriptor,
hands it to the DBMS user and forks the worker, which drops to that user at once, works in the
run directory and reports JSON lines on a pipe (`{"progress": text}`, then one `{"outcome": "ok",
"doc"}`, `{"outcome": "failed", "message"}` or `{"outcome": "interrupted"}`); afterwards the
coordinator has the directory emptied as that user and removes it.

The worker: a private MariaDB with the binary log on (`FlushMariaDB`: TPC-H's instance, socket
only, no TCP listener), sysbench's tables prepared, then per setting: `SET GLOBAL
innodb_flush_log_at_trx_commit` and `sync_binlog` (the two integers of the checked settings), an
optional warm-up run (discarded), the dirty pages flushed so a setting does not pay for the one
before it, the counters read (SHOW GLOBAL STATUS, and the target's block device in
/proc/diskstats), the measured sysbench run, the counters read again."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iowatt_workload.innodb import INNODB_LABEL, per_transaction

from ..tpch.dbms import LOCAL, DbmsError, MariaDB, Unsupported, mariadb_binaries
from ..tpch.isolation import (
    RunAs,
    clean_env,
    describe,
    empty_cwd,
    run_worker,
    serve_worker,
)
from . import sysbench

# SHOW GLOBAL STATUS counters kept per setting (their deltas over the measured window)
STATUS = (
    "Com_commit",
    "Innodb_data_fsyncs",
    "Innodb_data_written",
    "Innodb_os_log_written",
    "Innodb_log_writes",
    "Innodb_log_waits",
    "Innodb_dblwr_writes",
    "Innodb_dblwr_pages_written",
    "Innodb_pages_written",
    "Binlog_commits",
    "Binlog_group_commits",
    "Binlog_bytes_written",
)
VARIABLES = (
    "version",
    "innodb_buffer_pool_size",
    "innodb_flush_method",
    "innodb_log_file_size",
    "innodb_doublewrite",
    "log_bin",
    "binlog_format",
    "skip_networking",
)
SETTLE_TIMEOUT_S = 60.0  # for the dirty pages to reach zero between settings
PREPARE_TIMEOUT_S = 3600.0
RUN_SLACK_S = 120.0  # beyond a sysbench run's --time before it is killed


class WorkerFailed(Exception):
    """The run failed (exit 1); its message is the run's."""


@dataclass
class Options:
    """A checked lease job's values (lease.options_of)."""

    settings: list[tuple[int, int]]
    tables: int
    table_size: int
    threads: int
    seconds: int
    warmup_s: int
    buffer_pool_bytes: int


@dataclass
class FlushMariaDB(MariaDB):
    """TPC-H's private MariaDB with the binary log on (sync_binlog means nothing without it) and a
    database `sbtest` for sysbench's tables."""

    database: str = "sbtest"
    # --secure-file-priv must name an existing directory: an empty one (no file is ever loaded)
    files_dir: Path = Path("files")

    def start(self) -> None:
        os.mkdir(self.files_dir, 0o700)
        super().start()

    def _log_options(self) -> list[str]:
        binlog = Path(os.getcwd()) / LOCAL / "data" / "binlog"
        return [f"--log-bin={binlog}", "--server-id=1", "--binlog-format=ROW"]


# --- the coordinator ---------------------------------------------------------------------------------


def coordinate(opts: Options, user: RunAs, run_dir: Path, progress: Callable[[str], None]) -> dict[str, Any]:
    """Make `run_dir` (in the target, by descriptor), run the worker in it as `user`, then remove
    it (TPC-H's coordinator: tpch.isolation.run_worker). The worker's document; WorkerFailed or
    KeyboardInterrupt otherwise, always after the directory is emptied."""
    import pymysql  # type: ignore[import-untyped,unused-ignore]  # noqa: F401 - before the fork (tpch.worker.preload)

    outcome, code = run_worker(
        user,
        run_dir,
        progress,
        lambda events_fd, control_fd: work(opts, events_fd, control_fd),
        what="innodb-flush",
    )
    kind = outcome.get("outcome")
    if kind == "ok" and isinstance(outcome.get("doc"), dict):
        doc: dict[str, Any] = outcome["doc"]
        return doc
    if kind == "interrupted":
        raise KeyboardInterrupt
    if kind == "failed":
        raise WorkerFailed(str(outcome.get("message")))
    raise WorkerFailed(f"innodb-flush failed: the worker ended with exit code {code} and no outcome")


# --- the worker (the DBMS user, in the run directory) ------------------------------------------------


def work(opts: Options, events_fd: int, control_fd: int) -> int:
    """The run, in the worker. Its exit code (0, 1, 77, 130)."""

    def body(emit: Callable[[dict[str, Any]], None], _stop: threading.Event) -> dict[str, Any]:
        instance: FlushMariaDB | None = None
        try:
            mariadbd, install_db = mariadb_binaries()
            binary = sysbench.sysbench_binary()
            if binary is None:
                raise Unsupported("sysbench not found", sysbench.SYSBENCH_INSTALL)
            instance = FlushMariaDB(
                "mariadb",
                Path(os.getcwd()) / LOCAL,
                opts.buffer_pool_bytes,
                mariadbd=mariadbd,
                install_db=install_db,
            )
            return run_matrix(opts, instance, binary, lambda text: emit({"progress": text}))
        except (Unsupported, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is the run's message
            tail = instance.log_tail(3) if instance is not None else ""
            detail = describe(exc) + (f"; mariadbd's log: {tail[-300:]}" if tail else "")
            raise WorkerFailed(
                f"innodb-flush failed: {detail} (instance stopped, directory removed)"
            ) from exc
        finally:
            try:
                if instance is not None:
                    instance.stop()
            finally:
                empty_cwd()

    return serve_worker(
        events_fd,
        control_fd,
        body,
        what="innodb-flush",
        failed=WorkerFailed,
        unsupported=Unsupported,
        unsupported_outcome=lambda exc: {"outcome": "failed", "message": f"unsupported on this host: {exc}"},
    )


def _query(instance: MariaDB, sql: str) -> list[tuple[Any, ...]]:
    conn = instance.connect()
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        conn.close()


def status(instance: MariaDB) -> dict[str, int]:
    """The STATUS counters (a name the server lacks is left out)."""
    names = ", ".join(f"'{n.lower()}'" for n in STATUS)  # constants of this module
    rows = _query(
        instance,
        "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
        f"WHERE LOWER(VARIABLE_NAME) IN ({names})",
    )
    by_lower = {n.lower(): n for n in STATUS}
    out = {}
    for name, value in rows:
        with contextlib.suppress(ValueError, TypeError):
            out[by_lower[str(name)]] = int(value)
    return out


def variables(instance: MariaDB) -> dict[str, str]:
    names = ", ".join(f"'{n}'" for n in VARIABLES)
    rows = _query(
        instance,
        "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES "
        f"WHERE LOWER(VARIABLE_NAME) IN ({names})",
    )
    return {str(k): str(v) for k, v in rows}


def set_policy(instance: MariaDB, flush_log: int, sync_binlog: int) -> None:
    """SET GLOBAL the two settings (integers of the checked settings: 0-2 and 0-1), and read them
    back."""
    if flush_log not in (0, 1, 2) or sync_binlog not in (0, 1):
        raise ValueError("a setting outside the matrix")
    _query(instance, f"SET GLOBAL innodb_flush_log_at_trx_commit = {flush_log:d}")
    _query(instance, f"SET GLOBAL sync_binlog = {sync_binlog:d}")
    got = dict(
        (str(k).lower(), str(v))
        for k, v in _query(
            instance,
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE "
            "LOWER(VARIABLE_NAME) IN ('innodb_flush_log_at_trx_commit', 'sync_binlog')",
        )
    )
    if got != {"innodb_flush_log_at_trx_commit": str(flush_log), "sync_binlog": str(sync_binlog)}:
        raise DbmsError(f"the server did not take the setting {flush_log}:{sync_binlog} ({got})")


def settle(instance: MariaDB, timeout_s: float = SETTLE_TIMEOUT_S) -> float:
    """Have InnoDB write its dirty pages now (innodb_max_dirty_pages_pct 0) and wait until none is
    left or `timeout_s`; the setting is restored. Seconds it took."""
    t0 = time.monotonic()
    (old,) = _query(instance, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct")[0]
    _query(instance, "SET GLOBAL innodb_max_dirty_pages_pct = 0")
    try:
        while time.monotonic() - t0 < timeout_s:
            rows = _query(
                instance,
                "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                "WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_PAGES_DIRTY'",
            )
            if not rows or int(rows[0][0]) == 0:
                break
            time.sleep(0.1)
    finally:
        _query(instance, f"SET GLOBAL innodb_max_dirty_pages_pct = {float(old):g}")
    return time.monotonic() - t0


def device_of(path: Path) -> tuple[int, int] | None:
    """The (major, minor) of the block device holding `path`, when /proc/diskstats lists it (None:
    tmpfs, overlay and the like have no device of their own)."""
    st = os.stat(path)
    dev = (os.major(st.st_dev), os.minor(st.st_dev))
    return dev if disk_counters(dev) is not None else None


def disk_counters(dev: tuple[int, int]) -> dict[str, Any] | None:
    """The device's write counters from /proc/diskstats: its name, writes completed, bytes written
    (sectors x 512) and flush requests completed (null before Linux 5.5)."""
    try:
        with open("/proc/diskstats") as f:
            for line in f:
                p = line.split()
                if len(p) >= 14 and (int(p[0]), int(p[1])) == dev:
                    return {
                        "name": p[2],
                        "writes": int(p[7]),
                        "write_bytes": int(p[9]) * 512,
                        "flushes": int(p[18]) if len(p) >= 20 else None,
                    }
    except (OSError, ValueError):
        return None
    return None


def _delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for key, value in after.items():
        old = before.get(key)
        if isinstance(value, int) and isinstance(old, int):
            out[key] = value - old
        elif key != "name":
            out[key] = None
    return out


def _sysbench(argv: list[str], timeout_s: float) -> str:
    res = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        stdin=subprocess.DEVNULL,
        close_fds=True,
        env=clean_env(home=os.getcwd()),
    )
    if res.returncode != 0:
        detail = (res.stderr or res.stdout).strip().splitlines()
        raise WorkerFailed(
            f"sysbench {argv[-1]} failed (exit {res.returncode}): {' | '.join(detail[-3:])[:400]}"
        )
    return res.stdout


def run_matrix(
    opts: Options, instance: FlushMariaDB, binary: Path, progress: Callable[[str], None]
) -> dict[str, Any]:
    """The whole matrix in the run directory: start, prepare, each setting, stop (the caller
    stops the instance whatever happens). The `innodb_flush` document."""
    progress("starting mariadb")
    instance.start()
    assert instance.socket_dir is not None
    socket = instance.socket_dir / "mysqld.sock"

    def cmd(action: str, seconds: int) -> list[str]:
        return sysbench.command(
            binary,
            action,
            socket=socket,
            tables=opts.tables,
            table_size=opts.table_size,
            threads=opts.threads,
            seconds=seconds,
        )

    progress("preparing the tables")
    t0 = time.monotonic()
    _sysbench(cmd("prepare", 0), PREPARE_TIMEOUT_S)
    prepare_s = time.monotonic() - t0
    version_text = subprocess.run(
        [str(binary), "--version"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        stdin=subprocess.DEVNULL,
        env=clean_env(home=os.getcwd()),
    ).stdout.strip()
    dev = device_of(Path("."))
    cells = []
    for i, (flush_log, sync_binlog) in enumerate(opts.settings):
        label = f"innodb_flush_log_at_trx_commit={flush_log} sync_binlog={sync_binlog}"
        progress(f"setting {i + 1}/{len(opts.settings)}: {label}")
        set_policy(instance, flush_log, sync_binlog)
        if opts.warmup_s:
            _sysbench(cmd("run", opts.warmup_s), opts.warmup_s + RUN_SLACK_S)
        settle_s = settle(instance)
        before_status, before_disk = status(instance), disk_counters(dev) if dev else None
        start_utc_ns, m0 = time.time_ns(), time.monotonic_ns()
        report = _sysbench(cmd("run", opts.seconds), opts.seconds + RUN_SLACK_S)
        duration_ns = time.monotonic_ns() - m0
        after_status, after_disk = status(instance), disk_counters(dev) if dev else None
        parsed = sysbench.parse_report(report)
        status_delta = _delta(after_status, before_status)
        group_commits = status_delta.get("Binlog_group_commits")
        cell: dict[str, Any] = {
            "innodb_flush_log_at_trx_commit": flush_log,
            "sync_binlog": sync_binlog,
            "start_utc_ns": start_utc_ns,
            "duration_ns": duration_ns,
            "settle_s": round(settle_s, 3),
            **{k: parsed[k] for k in ("transactions", "queries", "errors", "reconnects", "total_time_ns")},
            "tps": parsed["transactions_per_s"],
            "qps": parsed["queries_per_s"],
            "latency_ns": parsed["latency_ns"],
            "histogram": parsed["histogram"],
            "status_delta": status_delta,
            "device_delta": _delta(after_disk, before_disk) if after_disk and before_disk else None,
            # the binary log is fsynced once per group commit with sync_binlog=1, never with 0
            # (MariaDB counts no binlog fsyncs itself: derived, docs/innodb-flush.md)
            "binlog_fsyncs": (group_commits if sync_binlog == 1 else 0)
            if group_commits is not None
            else None,
        }
        cell["per_tx"] = per_transaction(cell)
        cells.append(cell)
    return {
        "label": INNODB_LABEL,
        "test": sysbench.TEST,
        "dbms_version": instance.version,
        "sysbench_version": version_text[:100],
        "tables": opts.tables,
        "table_size": opts.table_size,
        "threads": opts.threads,
        "seconds": opts.seconds,
        "warmup_s": opts.warmup_s,
        "buffer_pool_bytes": opts.buffer_pool_bytes,
        "prepare_s": round(prepare_s, 3),
        "device": (disk_counters(dev) or {}).get("name") if dev else None,
        "variables": variables(instance),
        "cells": cells,
    }
