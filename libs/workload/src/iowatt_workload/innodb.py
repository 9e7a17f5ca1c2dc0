"""The InnoDB flushing-policy matrix (the kind `innodb_flush`, lease job mode `innodb-flush`): a
private MariaDB on the target under sysbench's `oltp_write_only`, once per setting of
`innodb_flush_log_at_trx_commit` (0, 1, 2) x `sync_binlog` (0, 1), with the binary log on.

Shared by the server (its InnodbFlushSpec, the run's facts), libs/policy (what a lease job may hold)
and the agent (the child that runs it): the bounds, the settings' one spelling on the wire
("F:S,F:S", e.g. "1:1,2:0"), the facts in the shape of the engine's `bounds`, and the
per-transaction figures computed from a setting's counters (docs/innodb-flush.md)."""

from __future__ import annotations

import math
import re
from typing import Any, Final, TypedDict

from iowatt_workload.sizes import MiB

INNODB_LABEL: Final = "sysbench oltp_write_only on a private MariaDB"
FLUSH_LOG_VALUES: Final = (0, 1, 2)  # innodb_flush_log_at_trx_commit
SYNC_BINLOG_VALUES: Final = (0, 1)  # sync_binlog
# every setting once, the strictest first (the Ratio column's denominator), as the view lists them
ALL_SETTINGS: Final[tuple[tuple[int, int], ...]] = ((1, 1), (1, 0), (2, 1), (2, 0), (0, 1), (0, 0))

INNODB_TABLES_MAX: Final = 64
INNODB_TABLE_SIZE_MAX: Final = 10_000_000  # rows per table
INNODB_THREADS_MAX: Final = 256
INNODB_SECONDS_MIN: Final = 1
INNODB_SECONDS_MAX: Final = 3600  # per setting
INNODB_WARMUP_S_MAX: Final = 600
INNODB_DEFAULT_BUFFER_POOL_BYTES: Final = 128 * MiB  # the tables fit: the log's flushing is measured
INNODB_BUFFER_POOL_BYTES_MIN: Final = 8 * MiB
INNODB_BUFFER_POOL_BYTES_MAX: Final = 1024 * 1024 * MiB  # 1 TiB; the host's memory limit refuses less
# sysbench's table row: id INT, k INT, c CHAR(120), pad CHAR(60), as InnoDB stores it (~ 200 B + index)
ROW_BYTES: Final = 240
PAGE_BYTES: Final = 16 * 1024  # InnoDB's page
# start, prepare (the tables are loaded at about 20,000 rows/s on a slow disk), stop
SETUP_S_PER_ROW: Final = 1 / 20_000
SETUP_S: Final = 60.0

_SETTINGS_RE = re.compile(r"^[012]:[01](,[012]:[01]){0,5}$")


class InnodbFacts(TypedDict):
    mode: str
    threads: int
    max_block_bytes: int
    bytes_written_max: int | None
    runtime_s_max: float | None
    dataset_bytes: int
    files: int
    directories: int


def settings_text(settings: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> str:
    """The wire's spelling: "F:S,F:S" (innodb_flush_log_at_trx_commit:sync_binlog)."""
    return ",".join(f"{f}:{s}" for f, s in settings)


def parse_settings(text: object) -> list[tuple[int, int]]:
    """The settings of "F:S,F:S" (each once, 1 to 6 of them). ValueError for anything else: the
    text reaches the DBMS's SET GLOBAL only as these numbers."""
    if not isinstance(text, str) or not _SETTINGS_RE.match(text):
        raise ValueError("settings are F:S pairs, comma-separated (F 0, 1 or 2; S 0 or 1), e.g. 1:1,2:0")
    pairs = [(int(p[0]), int(p[2])) for p in text.split(",")]
    if len(set(pairs)) != len(pairs):
        raise ValueError("each setting once")
    return pairs


def innodb_facts(
    *, tables: int, table_size: int, threads: int, seconds: int, warmup_s: int, settings: int
) -> InnodbFacts:
    """The run's facts in the shape of the engine's `bounds` (mode "innodb-flush"): `threads` =
    sysbench's threads, `runtime_s_max` = every setting's warm-up and measured seconds plus the
    set-up (start, prepare, stop), `bytes_written_max` null (a time-based OLTP load: the DBMS's
    writes are bounded by time, not by size), `dataset_bytes` the tables as InnoDB stores them."""
    for name, value, low, high in (
        ("tables", tables, 1, INNODB_TABLES_MAX),
        ("table_size", table_size, 1, INNODB_TABLE_SIZE_MAX),
        ("threads", threads, 1, INNODB_THREADS_MAX),
        ("seconds", seconds, INNODB_SECONDS_MIN, INNODB_SECONDS_MAX),
        ("warmup_s", warmup_s, 0, INNODB_WARMUP_S_MAX),
        ("settings", settings, 1, len(ALL_SETTINGS)),
    ):
        if not low <= value <= high:
            raise ValueError(f"{name} is from {low} to {high}")
    rows = tables * table_size
    return {
        "mode": "innodb-flush",
        "threads": threads,
        "max_block_bytes": PAGE_BYTES,
        "bytes_written_max": None,
        "runtime_s_max": float(settings * (seconds + warmup_s) + SETUP_S + rows * SETUP_S_PER_ROW),
        "dataset_bytes": rows * ROW_BYTES,
        "files": tables,
        "directories": 1,
    }


def _per(value: float | None, tx: int) -> float | None:
    return value / tx if value is not None and tx > 0 else None


def per_transaction(cell: dict[str, Any]) -> dict[str, float | None]:
    """A setting's per-transaction figures from its measured counters (the agent's cell: the
    sysbench `transactions` and the deltas over the measured window): fsyncs (InnoDB's own and
    the binary log's), bytes written (InnoDB's data and redo, the binary log's, and the device's),
    and the device's flush requests. None where a counter is missing or no transaction ran."""
    tx = int(cell.get("transactions") or 0)
    status = cell.get("status_delta") or {}
    device = cell.get("device_delta") or {}

    def num(d: dict[str, Any], key: str) -> float | None:
        v = d.get(key)
        return (
            float(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else None
        )

    innodb_fsyncs = num(status, "Innodb_data_fsyncs")
    binlog_syncs = num(cell, "binlog_fsyncs")
    fsyncs = None if innodb_fsyncs is None else innodb_fsyncs + (binlog_syncs or 0.0)
    innodb_bytes = num(status, "Innodb_data_written")
    binlog_bytes = num(status, "Binlog_bytes_written")
    return {
        "fsyncs_per_tx": _per(fsyncs, tx),
        "innodb_fsyncs_per_tx": _per(innodb_fsyncs, tx),
        "binlog_fsyncs_per_tx": _per(binlog_syncs, tx),
        "redo_bytes_per_tx": _per(num(status, "Innodb_os_log_written"), tx),
        "innodb_bytes_per_tx": _per(innodb_bytes, tx),
        "binlog_bytes_per_tx": _per(binlog_bytes, tx),
        "device_bytes_per_tx": _per(num(device, "write_bytes"), tx),
        "device_writes_per_tx": _per(num(device, "writes"), tx),
        "device_flushes_per_tx": _per(num(device, "flushes"), tx),
    }
