"""The InnoDB flushing-policy table (the storage-methods article's "Mysql (InnoDB) disk flushing
policy"): one row per setting of innodb_flush_log_at_trx_commit x sync_binlog, and per run its
transactions per second, the ratio to the run's strictest setting (1/1), latency (average, p95,
p99), fsyncs, log bytes, device bytes and device flushes per transaction, and energy per
transaction where a meter measured the setting's window (docs/innodb-flush.md).

The per-transaction figures are libs/workload's `per_transaction` of the stored counters (the
same function the agent used), never the agent's own copy of them."""

from typing import Any

from iowatt_workload.innodb import ALL_SETTINGS, per_transaction

from backend.views.builders.common import View, _cell, _col, _table
from backend.views.loading import Loaded
from backend.views.schemas import ChartAxis, ChartPoint, ChartSeries, ViewChart, ViewInfo, ViewRow, ViewTable

# what is on disk when COMMIT returns (2: the redo log is in the OS's cache, flushed once a second;
# 0: in InnoDB's log buffer, written and flushed once a second)
MEANING = {
    (1, 1): "redo log and binlog",
    (1, 0): "redo log",
    (2, 1): "binlog (redo log in the OS)",
    (2, 0): "nothing (redo log in the OS)",
    (0, 1): "binlog",
    (0, 0): "nothing",
}


def cells_of(doc: dict[str, Any] | None) -> dict[tuple[int, int], dict[str, Any]]:
    """A stored `innodb_flush` document's settings by (flush_log, sync_binlog)."""
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for c in (doc or {}).get("cells") or []:
        if isinstance(c, dict):
            key = (c.get("innodb_flush_log_at_trx_commit"), c.get("sync_binlog"))
            if key in MEANING:
                out[key] = c  # type: ignore[index]
    return out


def figures(cell: dict[str, Any] | None, watts: float | None) -> dict[str, float | None]:
    """One setting's figures in base units (op/s, ns, /tx, B, J): sysbench's rate and latency, the
    per-transaction counters, and energy per transaction = the mean power over the measured
    window x its duration / its transactions (None without a meter or transactions)."""
    if cell is None:
        return {}
    lat = cell.get("latency_ns") or {}
    per = per_transaction(cell)
    tx = int(cell.get("transactions") or 0)
    duration_s = float(cell.get("duration_ns") or 0) / 1e9
    log_bytes = [v for v in (per["redo_bytes_per_tx"], per["binlog_bytes_per_tx"]) if v is not None]
    return {
        "tps": float(cell["tps"]) if isinstance(cell.get("tps"), int | float) else None,
        "lat_avg": lat.get("avg"),
        "lat_p95": lat.get("p95"),
        "lat_p99": lat.get("p99"),
        "fsyncs": per["fsyncs_per_tx"],
        "log_bytes": sum(log_bytes) if log_bytes else None,
        "device_bytes": per["device_bytes_per_tx"],
        "device_flushes": per["device_flushes_per_tx"],
        "j": watts * duration_s / tx if watts is not None and tx > 0 and duration_s > 0 else None,
    }


COLUMNS = [  # (key, header, unit, what)
    ("tps", "Transactions/s", "op/s", "sysbench's transactions per second over the measured window"),
    ("rel", "vs 1/1", "×", "transactions per second ÷ the same run's 1/1 setting (the durable one)"),
    ("lat_avg", "Latency avg (ms)", "ns", "sysbench's average transaction latency"),
    ("lat_p95", "p95 (ms)", "ns", "95th percentile from sysbench's latency histogram"),
    ("lat_p99", "p99 (ms)", "ns", "99th percentile from sysbench's latency histogram"),
    (
        "fsyncs",
        "fsyncs/tx",
        "/tx",
        "InnoDB's fsyncs (Innodb_data_fsyncs, redo log included) plus the binary log's (one per group "
        "commit with sync_binlog=1: derived) per transaction",
    ),
    (
        "log_bytes",
        "Log bytes/tx (KiB)",
        "B",
        "redo log (Innodb_os_log_written) plus binary log (Binlog_bytes_written) bytes per transaction",
    ),
    (
        "device_bytes",
        "Device bytes/tx (KiB)",
        "B",
        "bytes written to the target's block device per transaction (/proc/diskstats: everything on "
        "the device in the window)",
    ),
    (
        "device_flushes",
        "Device flushes/tx",
        "/tx",
        "flush requests the device completed per transaction (/proc/diskstats; Linux 5.5+)",
    ),
    (
        "j",
        "Energy/tx (J)",
        "J",
        "the meter's mean power over the setting's window x its duration ÷ its transactions (whole "
        "host as metered; empty without a meter)",
    ),
]


def _innodb(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [
        _col("flush_log", "innodb_flush_log_at_trx_commit", None, "the redo log's flushing setting", "text"),
        _col("sync_binlog", "sync_binlog", None, "the binary log's sync setting", "text"),
        _col(
            "meaning",
            "On disk at commit",
            None,
            "what is on stable storage when COMMIT returns (redo log 'in the OS': written, fsynced once a "
            "second; otherwise InnoDB writes and fsyncs it once a second)",
            "text",
        ),
    ]
    for i, r in enumerate(runs):
        cols += [
            _col(
                f"run{i}_{key}",
                f"{r.info.label}: {head}",
                unit,  # type: ignore[arg-type]
                f"{what} ({r.info.name})",
                "ratio" if key == "rel" else "number",
                run_id=r.run.id,
                group=r.info.label,
            )
            for key, head, unit, what in COLUMNS
        ]
    per_run = []
    for r in runs:
        watts = r.innodb_watts or {}
        per_run.append({k: figures(c, watts.get(k)) for k, c in cells_of(r.innodb).items()})
    settings = [s for s in ALL_SETTINGS if any(s in f for f in per_run)]
    rows = []
    for s in settings:
        cells = [_cell(str(s[0])), _cell(str(s[1])), _cell(MEANING[s])]
        for r, figs in zip(runs, per_run, strict=True):
            f = figs.get(s, {})
            strict = figs.get((1, 1), {}).get("tps")
            tps = f.get("tps")
            rel = tps / strict if tps is not None and strict else None
            estimated = r.energy is not None and r.energy.estimated and f.get("j") is not None
            for key, _, _, _ in COLUMNS:
                value = rel if key == "rel" else f.get(key)
                cells.append(_cell(value, note="estimated power" if key == "j" and estimated else None))
        rows.append(ViewRow(group=None, cells=cells))
    charts = [
        ViewChart(
            key="innodb-fsyncs-tps",
            title="Transactions per second against fsyncs per transaction, one point per setting",
            x=ChartAxis(label="fsyncs per transaction", unit="/tx", log=False),
            y=ChartAxis(label="Transactions per second", unit="op/s", log=False),
            series=[
                ChartSeries(
                    label=r.info.label,
                    run_id=r.run.id,
                    dashed=False,
                    points=sorted(
                        (
                            ChartPoint(x=f["fsyncs"], y=f["tps"])
                            for f in figs.values()
                            if f.get("fsyncs") is not None and f.get("tps") is not None
                        ),
                        key=lambda p: p.x,
                    ),
                )
                for r, figs in zip(runs, per_run, strict=True)
            ],
        )
    ]
    docs = [r.innodb for r in runs if r.innodb]
    shape = sorted(
        {
            f"{d.get('tables')} tables x {d.get('table_size')} rows, {d.get('threads')} threads, "
            f"{d.get('seconds')} s per setting after {d.get('warmup_s')} s of warm-up"
            for d in docs
        }
    )
    notes = [
        "The storage-methods article's InnoDB disk flushing policy, measured: sysbench's oltp_write_only "
        "on a private MariaDB on the target (binary log on, O_DIRECT), once per setting; the dirty "
        "pages are written out before each setting so none pays for the one before.",
        f"Load: {'; '.join(shape) or 'unknown'}.",
        "1/1 is the only setting that loses no committed transaction in a crash of the host; with 2 a "
        "crash of the host (not of MariaDB) loses up to a second of them, with 0 a crash of either.",
        "Device figures count everything written to the target's block device during the window "
        "(/proc/diskstats); empty for a target without a device of its own (tmpfs).",
        "Energy per transaction is the whole host's as its meter measured it, over the setting's "
        "measured window; empty without a meter.",
    ]
    return _table(info, runs, cols, rows, notes, charts=charts, shown={"ns": "ms"})


VIEWS: list[View] = [
    (
        ViewInfo(
            name="innodb-flush",
            title="InnoDB flushing policy",
            description="Transactions per second, latency, fsyncs, bytes written and energy per "
            "transaction for each innodb_flush_log_at_trx_commit x sync_binlog setting, under "
            "sysbench's oltp_write_only on a private MariaDB.",
            seed="the storage-methods article: 'Mysql (InnoDB) disk flushing policy'",
            presets=["innodb-flush"],
            min_runs=1,
            max_runs=8,
        ),
        _innodb,
    )
]
