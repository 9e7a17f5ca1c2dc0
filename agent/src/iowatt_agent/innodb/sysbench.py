"""sysbench (Debian's package, 1.0.x) as the load generator: its command line, built only from
checked integers and paths the worker made, and its text report read into numbers.

The report (`--histogram=on`) holds the latency histogram (values in milliseconds, the bucket's
representative value, and a count per bucket), the SQL statistics (transactions, queries, ignored
errors, reconnects with their rates) and the general and latency statistics. p95 and p99 are read
from the histogram (sysbench prints only one percentile, computed from the same buckets: the
smallest bucket value whose cumulative count reaches the percentile); `percentile_95_ms` is
sysbench's own, kept beside them."""

from __future__ import annotations

import math
import os
import re
import shutil
from pathlib import Path
from typing import Any

SYSBENCH_INSTALL = "apt-get install -y sysbench (Debian/Ubuntu), dnf install -y sysbench (Fedora/EPEL)"
SYSBENCH_ENV = "IOWATT_SYSBENCH"
TEST = "oltp_write_only"
MAX_REPORT_CHARS = 1 << 20  # a report longer than this is not sysbench's


class ReportError(ValueError):
    """The text is not a sysbench report with the figures the run needs."""


def sysbench_binary() -> Path | None:
    """sysbench: $IOWATT_SYSBENCH, else /usr/bin, /usr/local/bin or PATH; None when missing."""
    env = os.environ.get(SYSBENCH_ENV)
    for candidate in [Path(env)] if env else [Path("/usr/bin/sysbench"), Path("/usr/local/bin/sysbench")]:
        if os.access(candidate, os.X_OK):
            return candidate
    found = None if env else shutil.which("sysbench")
    return Path(found) if found else None


def command(
    binary: Path,
    action: str,
    *,
    socket: Path,
    tables: int,
    table_size: int,
    threads: int,
    seconds: int,
    seed: int = 1,
) -> list[str]:
    """`sysbench oltp_write_only ACTION` against the private instance's socket. Every value is an
    integer the lease check has bounded, or a path the worker made; ValueError otherwise."""
    if action not in ("prepare", "run"):
        raise ValueError(f"sysbench action {action!r}")
    for name, value in (
        ("tables", tables),
        ("table_size", table_size),
        ("threads", threads),
        ("seconds", seconds),
        ("seed", seed),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"sysbench {name} must be a non-negative integer")
    if not socket.is_absolute() or "\n" in str(socket):
        raise ValueError("the socket must be an absolute path")
    argv = [
        str(binary),
        TEST,
        "--db-driver=mysql",
        f"--mysql-socket={socket}",
        "--mysql-user=root",
        "--mysql-password=",
        "--mysql-db=sbtest",
        f"--tables={tables}",
        f"--table-size={table_size}",
        f"--threads={threads}",
        f"--rand-seed={seed}",
    ]
    if action == "run":
        argv += [
            f"--time={seconds}",
            "--events=0",
            "--histogram=on",
            "--percentile=95",
            "--report-interval=0",
        ]
    return [*argv, action]


_NUM = r"([0-9]+(?:\.[0-9]+)?)"
_COUNTS = {
    "transactions": re.compile(rf"^\s*transactions:\s+(\d+)\s+\(\s*{_NUM} per sec\.\)", re.M),
    "queries": re.compile(rf"^\s*queries:\s+(\d+)\s+\(\s*{_NUM} per sec\.\)", re.M),
    "errors": re.compile(rf"^\s*ignored errors:\s+(\d+)\s+\(\s*{_NUM} per sec\.\)", re.M),
    "reconnects": re.compile(rf"^\s*reconnects:\s+(\d+)\s+\(\s*{_NUM} per sec\.\)", re.M),
}
_TOTAL_TIME = re.compile(rf"^\s*total time:\s+{_NUM}s\s*$", re.M)
_LATENCY = re.compile(rf"^\s*(min|avg|max|95th percentile|sum):\s+{_NUM}\s*$", re.M)
_HIST_HEAD = re.compile(r"^\s*Latency histogram \(values are in milliseconds\)\s*$", re.M)
_HIST_ROW = re.compile(rf"^\s*{_NUM}\s+\|\**\s+(\d+)\s*$")


def _ns(ms: str) -> int:
    return round(float(ms) * 1e6)


def histogram(text: str) -> list[tuple[int, int]]:
    """The latency histogram's rows as (bucket value in ns, count), in the report's order (rising);
    [] when the report has none."""
    head = _HIST_HEAD.search(text)
    if head is None:
        return []
    rows: list[tuple[int, int]] = []
    for line in text[head.end() :].splitlines()[2:]:  # the empty rest of the head line, the column heads
        m = _HIST_ROW.match(line)
        if m is None:
            break
        rows.append((_ns(m.group(1)), int(m.group(2))))
    return rows


def percentile_ns(rows: list[tuple[int, int]], pct: float) -> int | None:
    """The smallest bucket value whose cumulative count reaches `pct` % of all, rounded to a whole
    count (sysbench's rule: its own 95th percentile agrees); None without counts."""
    total = sum(c for _, c in rows)
    if total <= 0:
        return None
    need = max(1, math.floor(total * pct / 100.0 + 0.5))  # sysbench's sb_histogram: rounded
    seen = 0
    for value, count in sorted(rows):
        seen += count
        if seen >= need:
            return value
    return sorted(rows)[-1][0]


def parse_report(text: str) -> dict[str, Any]:
    """The figures of a `sysbench ... run` report: transactions, queries, ignored errors and
    reconnects (counts and sysbench's per-second rates), total time (ns), latency min, avg, max
    and sysbench's 95th percentile (ns), p95 and p99 from the histogram (ns; null without one) and
    the histogram's rows. ReportError when a figure the run needs is missing or out of range."""
    if not isinstance(text, str) or len(text) > MAX_REPORT_CHARS:
        raise ReportError("not a sysbench report (too long)")
    out: dict[str, Any] = {}
    for key, rx in _COUNTS.items():
        m = rx.search(text)
        if m is None:
            if key in ("transactions", "queries"):
                raise ReportError(f"the report has no {key} line")
            out[key], out[f"{key}_per_s"] = 0, 0.0
            continue
        out[key], out[f"{key}_per_s"] = int(m.group(1)), float(m.group(2))
    m = _TOTAL_TIME.search(text)
    if m is None:
        raise ReportError("the report has no total time")
    out["total_time_ns"] = round(float(m.group(1)) * 1e9)
    latency = {name: _ns(value) for name, value in _LATENCY.findall(text)}
    if "avg" not in latency:
        raise ReportError("the report has no average latency")
    rows = histogram(text)
    out["latency_ns"] = {
        "min": latency.get("min"),
        "avg": latency["avg"],
        "max": latency.get("max"),
        "sysbench_p95": latency.get("95th percentile"),
        "p95": percentile_ns(rows, 95.0),
        "p99": percentile_ns(rows, 99.0),
    }
    out["histogram"] = [[v, c] for v, c in rows]
    return out


def summary_lines(doc: dict[str, Any]) -> list[str]:
    """`bench`'s lines of an InnoDB flushing result: one per setting, with units."""
    from iowatt_workload.innodb import per_transaction

    head = f"{doc.get('label')}: {doc.get('dbms_version')}"
    lines = [f"{head}, {doc.get('threads')} threads, {doc.get('seconds')} s each"]
    for c in doc.get("cells") or []:
        per = per_transaction(c)
        lat = c.get("latency_ns") or {}
        fsyncs = per["fsyncs_per_tx"]
        device = per["device_bytes_per_tx"]
        lines.append(
            f"innodb_flush_log_at_trx_commit={c.get('innodb_flush_log_at_trx_commit')} "
            f"sync_binlog={c.get('sync_binlog')}: {float(c.get('tps') or 0):,.1f} tx/s, "
            f"latency avg {float(lat.get('avg') or 0) / 1e6:.2f} ms, "
            f"p99 {float(lat.get('p99') or 0) / 1e6:.2f} ms, "
            f"{'-' if fsyncs is None else f'{fsyncs:.2f}'} fsyncs/tx, "
            f"{'-' if device is None else f'{device / 1024:,.1f} KiB'} written/tx"
        )
    return lines
