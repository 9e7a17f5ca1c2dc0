"""`iowatt-agent bench --preset tpch --dbms postgresql|mariadb --scale-factor SF [--streams S]
[--query-timeout SECONDS] [--buffer-pool SIZE] --target DIR [--json]`.

Checks everything first (exit 2), reports a host without the DBMS or the generator as
unsupported (exit 77, with the install command), then: a new directory inside DIR, the data
generated there, a private instance started there, the load, the power and the throughput test,
and, whatever happens (an error, a full disk, Ctrl-C, SIGTERM), the instance stopped and the
directory removed. Output: `{"tpch": {...}}` with --json, else tables; both say
"TPC-H-derived, not audited".

This module is the command line (its options, the refusals, the tables); the run is `run.py`'s
(the coordinator, which a server's lease runs too: lease.py), the worker's steps `steps.py`."""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

from iowatt_workload import (
    TPCH_BUFFER_POOL_BYTES_MAX,
    TPCH_BUFFER_POOL_BYTES_MIN,
    TPCH_DEFAULT_BUFFER_POOL_BYTES,
    TPCH_LABEL,
    TPCH_QUERY_TIMEOUT_S_MAX,
    TPCH_QUERY_TIMEOUT_S_MIN,
    TPCH_SCALE_FACTOR_MAX,
    TPCH_STREAMS_MAX,
    format_size,
    parse_size,
    tpch_min_streams,
)
from rich.markup import escape

from .. import policy as host_policy
from ..bench_args import BenchArgs
from .dbms import DBMS_NAMES, Unsupported
from .options import DEFAULT_QUERY_TIMEOUT_S, TpchOptions
from .run import TpchFailed, run


class TpchUsage(ValueError):
    """A bad argument (exit 2)."""


def buffer_pool_bytes(text: str) -> int:
    """--buffer-pool in the size syntax of every other size the agent reads (libs/workload's
    parse_size, fio's: `16m`, `1g`; `4KiB` is 4000 bytes, a fraction is refused); at least
    libs/workload's TPCH_BUFFER_POOL_BYTES_MIN (1 MiB), as a server's run."""
    try:
        value = parse_size(text)
    except ValueError:
        raise TpchUsage(f"--buffer-pool: not a size: {text!r} (e.g. 16m, 1g)") from None
    if not TPCH_BUFFER_POOL_BYTES_MIN <= value <= TPCH_BUFFER_POOL_BYTES_MAX:
        least, most = format_size(TPCH_BUFFER_POOL_BYTES_MIN), format_size(TPCH_BUFFER_POOL_BYTES_MAX)
        raise TpchUsage(f"--buffer-pool must be from {least} to {most}, got {text!r}")
    return value


def parse_options(extra: list[str], target: str) -> TpchOptions:
    """The tpch options from bench's extra arguments and --target; TpchUsage names the field."""
    parser = argparse.ArgumentParser(
        prog="iowatt-agent bench --preset tpch", add_help=False, exit_on_error=False
    )
    parser.add_argument("--dbms")
    parser.add_argument("--scale-factor")
    parser.add_argument("--streams")
    parser.add_argument("--query-timeout")
    parser.add_argument("--buffer-pool")
    try:
        ns, rest = parser.parse_known_args(extra)
    except argparse.ArgumentError as exc:
        raise TpchUsage(str(exc)) from None
    if rest:
        raise TpchUsage(f"--preset tpch does not take {' '.join(rest)}")
    if ns.dbms not in DBMS_NAMES:
        raise TpchUsage(f"--dbms must be postgresql or mariadb, got {ns.dbms!r}")
    try:
        sf = float(ns.scale_factor) if ns.scale_factor is not None else math.nan
    except ValueError:
        sf = math.nan
    # the bounds of a server's run (libs/workload's, as its TpchSpec and libs/policy have them)
    if not (sf > 0 and math.isfinite(sf) and sf <= TPCH_SCALE_FACTOR_MAX):
        raise TpchUsage(
            f"--scale-factor must be a number > 0 and at most {TPCH_SCALE_FACTOR_MAX:g} (0.01 for a "
            f"quick run, 1, 10 ...), got {ns.scale_factor!r}"
        )
    streams = tpch_min_streams(sf)
    if ns.streams is not None:
        if not ns.streams.isdigit() or not 1 <= int(ns.streams) <= TPCH_STREAMS_MAX:
            raise TpchUsage(f"--streams must be an integer from 1 to {TPCH_STREAMS_MAX}, got {ns.streams!r}")
        streams = int(ns.streams)
    timeout = DEFAULT_QUERY_TIMEOUT_S
    if ns.query_timeout is not None:
        try:
            timeout = float(ns.query_timeout)
        except ValueError:
            timeout = math.nan
        if not TPCH_QUERY_TIMEOUT_S_MIN <= timeout <= TPCH_QUERY_TIMEOUT_S_MAX:
            raise TpchUsage(
                f"--query-timeout must be seconds from {TPCH_QUERY_TIMEOUT_S_MIN:g} to "
                f"{TPCH_QUERY_TIMEOUT_S_MAX:g}, got {ns.query_timeout!r}"
            )
    pool = TPCH_DEFAULT_BUFFER_POOL_BYTES if ns.buffer_pool is None else buffer_pool_bytes(ns.buffer_pool)
    try:
        kind, real = host_policy.local_target(target)
    except ValueError as exc:
        raise TpchUsage(str(exc)) from None
    if kind != "directory":
        raise TpchUsage(
            f"--target for --preset tpch must be a directory (the DBMS's data goes in it), got a {kind}"
        )
    return TpchOptions(ns.dbms, sf, streams, timeout, pool, Path(real))


def render(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from ..render import stdout_console

    console = stdout_console()
    console.print(
        f"[bold]{TPCH_LABEL}[/]: {doc['dbms_version']}, SF {doc['scale_factor']:g}, {doc['streams']} streams"
    )
    summary = Table(title=f"TPC-H-derived metrics ({TPCH_LABEL})")
    for name in ("load_s", "power_at_size", "throughput_s", "throughput_at_size", "qphh_at_size"):
        summary.add_column(name, justify="right")
    summary.add_row(*(f"{doc[k]:.3f}" if doc[k] is not None else "n/a" for k in summary_keys()))
    console.print(summary)
    if doc["metrics_note"]:
        console.print(f"[yellow]{doc['metrics_note']}[/]")
    table = Table(title="query times (s)")
    table.add_column("query", justify="right")
    streams = sorted({q["stream"] for q in doc["queries"]})
    for s in streams:
        table.add_column("power" if s == 0 else f"stream {s}", justify="right")
    cells: dict[tuple[int, int], str] = {}
    for q in doc["queries"]:
        mark = " TIMEOUT" if q["timed_out"] else (" WRONG" if q["answer_ok"] is False else "")
        cells[(q["query"], q["stream"])] = f"{q['seconds']:.3f}{mark}"
    for n in range(1, 23):
        table.add_row(f"Q{n}", *(cells.get((n, s), "") for s in streams))
    console.print(table)
    rf = ", ".join(
        f"{r['test']} {r['function']} #{r['set']} {r['seconds']:.3f}" for r in doc["refresh"]["timings"]
    )
    console.print(f"refresh functions (s): {rf}")
    a = doc["answers"]
    console.print(
        f"answers: {a['ok']}/{a['checked']} match ({a['reference']}); buffer pool "
        f"{doc['buffer_pool']['bytes']} bytes: {doc['buffer_pool']['note']}"
    )
    console.print(f"[bold]{TPCH_LABEL}[/]")


def summary_keys() -> tuple[str, ...]:
    return ("load_s", "power_at_size", "throughput_s", "throughput_at_size", "qphh_at_size")


def not_for_tpch(a: BenchArgs) -> list[str]:
    """bench's options that an engine run uses and a DBMS run cannot: refused, not ignored."""
    given = [f"--{k}" for k, v in a.options.items() if v is not None and k != "name"]
    if a.options.get("name") not in (None, "bench"):
        given.append("--name")
    for flag, value, unset in (
        ("--meter", a.meter, None),
        ("--idle", a.idle, None),
        ("--grid", a.grid, None),
        ("--grid-g-per-kwh", a.grid_g_per_kwh, None),
        ("--pue", a.pue, 1.0),
        ("--scale", a.scale, None),
        ("--output-format", a.output_format, "json"),
    ):
        if value != unset:
            given.append(flag)
    return given


def run_tpch_bench(a: BenchArgs) -> int:
    """The CLI entry (bench.py's hook): the exit code, after printing."""
    from ..render import err

    def error(message: str) -> None:
        err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True, emoji=False)

    refused = not_for_tpch(a)
    if refused:
        error(
            f"--preset tpch does not take {', '.join(refused)} "
            "(a DBMS workload, not an engine job; no meter yet)"
        )
        return 2
    try:
        opts = parse_options(a.extra, a.target)
    except TpchUsage as exc:
        error(str(exc))
        return 2
    stop = threading.Event()

    def progress(text: str) -> None:
        err.print(f"[dim]tpch ({TPCH_LABEL}):[/] {text}", highlight=False)

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if not stop.is_set():  # once: a second signal must not interrupt the clean-up
            stop.set()
            raise KeyboardInterrupt

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    started = time.monotonic()
    try:
        doc = run(opts, progress, stop)
    except Unsupported as exc:
        error(f"unsupported on this host: {exc}")
        return 77
    except TpchFailed as exc:
        error(str(exc))
        return 1
    except KeyboardInterrupt:
        error("interrupted: DBMS stopped, its directory removed")
        return 130
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    doc["elapsed_s"] = round(time.monotonic() - started, 3)
    if a.json_output:
        sys.stdout.write(json.dumps({"tpch": doc}) + "\n")
    else:
        render(doc)
    return 0
