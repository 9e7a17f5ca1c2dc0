"""`iowatt-agent bench --preset tpch --dbms postgresql|mariadb --scale-factor SF [--streams S]
[--query-timeout SECONDS] [--buffer-pool SIZE] --target DIR [--json]`.

Checks everything first (exit 2), reports a host without the DBMS or the generator as
unsupported (exit 77, with the install command), then: a new directory inside DIR, the data
generated there, a private instance started there, the load, the power and the throughput test,
and, whatever happens (an error, a full disk, Ctrl-C, SIGTERM), the instance stopped and the
directory removed. Output: `{"tpch": {...}}` with --json, else tables; both say
"TPC-H-derived, not audited"."""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from .. import policy as host_policy
from .data import ANSWER_SCALE_FACTORS, extension_path, generate, remove_files
from .dbms import DEFAULT_BUFFER_POOL_BYTES, DbmsError, Instance, Unsupported, check_binaries
from .isolation import HERE, IsolationError, check_reachable, tpch_user
from .spec import LABEL, min_streams, power_at_size, qphh_at_size, throughput_at_size
from .worker import WorkerFailed, coordinate
from .workload import Workload

if TYPE_CHECKING:
    from ..bench import BenchArgs

DEFAULT_QUERY_TIMEOUT_S = 3600.0
RUN_DIR_PREFIX = "iowatt-tpch-"


class TpchUsage(ValueError):
    """A bad argument (exit 2)."""


class TpchFailed(Exception):
    """The run failed (exit 1); the instance and its directory are gone."""


@dataclass
class TpchOptions:
    dbms: str
    scale_factor: float
    streams: int
    query_timeout_s: float
    buffer_pool_bytes: int
    target: Path


def parse_size(text: str) -> int:
    units = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    unit = t[-1] if t and t[-1] in "kmg" else ""
    number = t[: len(t) - len(unit)]
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise TpchUsage(f"--buffer-pool: not a size: {text!r} (e.g. 16m, 1g)") from None
    if value < 1 << 20:
        raise TpchUsage(f"--buffer-pool must be at least 1m, got {text!r}")
    return int(value)


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
    if ns.dbms not in ("postgresql", "mariadb"):
        raise TpchUsage(f"--dbms must be postgresql or mariadb, got {ns.dbms!r}")
    try:
        sf = float(ns.scale_factor) if ns.scale_factor is not None else math.nan
    except ValueError:
        sf = math.nan
    if not (sf > 0 and math.isfinite(sf) and sf <= 100000):
        raise TpchUsage(
            f"--scale-factor must be a number > 0 (0.01 for a quick run, 1, 10 ...), got {ns.scale_factor!r}"
        )
    streams = min_streams(sf)
    if ns.streams is not None:
        if not ns.streams.isdigit() or not 1 <= int(ns.streams) <= 64:
            raise TpchUsage(f"--streams must be an integer from 1 to 64, got {ns.streams!r}")
        streams = int(ns.streams)
    timeout = DEFAULT_QUERY_TIMEOUT_S
    if ns.query_timeout is not None:
        try:
            timeout = float(ns.query_timeout)
        except ValueError:
            timeout = math.nan
        if not (timeout >= 0.01 and math.isfinite(timeout)):
            raise TpchUsage(f"--query-timeout must be seconds >= 0.01, got {ns.query_timeout!r}")
    pool = DEFAULT_BUFFER_POOL_BYTES if ns.buffer_pool is None else parse_size(ns.buffer_pool)
    try:
        kind, real = host_policy.local_target(target)
    except ValueError as exc:
        raise TpchUsage(str(exc)) from None
    if kind != "directory":
        raise TpchUsage(
            f"--target for --preset tpch must be a directory (the DBMS's data goes in it), got a {kind}"
        )
    return TpchOptions(ns.dbms, sf, streams, timeout, pool, Path(real))


def run(
    opts: TpchOptions, progress: Any, stop: threading.Event, run_dir: Path | None = None
) -> dict[str, Any]:
    """The whole run; the `tpch` object. Unsupported before anything is created; TpchFailed (or
    KeyboardInterrupt) after everything created is removed. `run_dir` (inside the target; made
    here, removed at the end): a server's lease names it by its run (`iowatt-tpch-<run id>`).

    This process only makes and removes the run directory; the run itself happens in a worker
    that is the unprivileged TPC-H user (`worker`, `isolation`: issue 22)."""
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


def run_in(
    opts: TpchOptions, run_dir: Path, instance: Instance, progress: Any, stop: threading.Event
) -> dict[str, Any]:
    """The run itself, in the worker: its working directory is `run_dir` (all paths relative)."""
    sf, streams = opts.scale_factor, opts.streams
    progress(f"generating data at SF {sf:g} with DuckDB's dbgen")
    gen = generate(HERE / "gen", sf, refresh_sets=streams + 1)
    progress(f"starting a private {opts.dbms} in {instance.directory}")
    try:
        instance.start()
    except DbmsError as exc:
        raise DbmsError(f"{exc} {instance.log_tail()}".strip()) from None
    work = Workload(instance, gen, opts.query_timeout_s)
    load_s = work.load(progress)
    remove_files(gen)
    settings = instance.settings()
    power_q, power_rf = work.power_test(progress)
    if stop.is_set():
        raise KeyboardInterrupt
    tp_q, tp_rf, throughput_s = work.throughput_test(streams, stop, progress)
    if stop.is_set():
        raise KeyboardInterrupt
    timings = [*power_q, *tp_q]
    incomplete = [t for t in timings if t.timed_out or t.error]
    metrics: dict[str, float | None] = {
        "power_at_size": None,
        "throughput_at_size": None,
        "qphh_at_size": None,
    }
    if not incomplete:
        by_query = {t.query: t.seconds for t in power_q}
        power = power_at_size(sf, [by_query[q] for q in range(1, 23)], [r.seconds for r in power_rf])
        throughput = throughput_at_size(sf, streams, throughput_s)
        metrics = {
            "power_at_size": power,
            "throughput_at_size": throughput,
            "qphh_at_size": qphh_at_size(power, throughput),
        }
    checked = [t for t in timings if t.answer_ok is not None]
    return {
        "label": LABEL,
        "dbms": opts.dbms,
        "dbms_version": instance.version,
        "scale_factor": sf,
        "streams": streams,
        "streams_minimum": min_streams(sf),
        "generate_s": round(gen.generate_s, 6),
        "load_s": round(load_s, 6),
        **{k: (None if v is None else round(v, 6)) for k, v in metrics.items()},
        "metrics_note": (
            None
            if not incomplete
            else f"not computed: {len(incomplete)} queries timed out or failed (marked in queries)"
        ),
        "throughput_s": round(throughput_s, 6),
        "refresh": {
            "present": True,
            "functions": "RF1 inserts SF x 1500 new orders with their lineitems; RF2 deletes them",
            "orders_per_function": gen.refresh_orders,
            "data": "the generator's orders and lineitems re-keyed into the order keys dbgen leaves "
            "unused (DuckDB's dbgen writes no update sets)",
            "timings": [r.as_dict() for r in (*power_rf, *tp_rf)],
        },
        "queries": [t.as_dict() for t in timings],
        "answers": {
            "checked": len(checked),
            "ok": sum(1 for t in checked if t.answer_ok),
            "reference": gen.reference_source,
            "reference_matches_tpch_answers": gen.reference_checked,
            "tpch_answers_scale_factors": list(ANSWER_SCALE_FACTORS),
        },
        "query_timeout_s": opts.query_timeout_s,
        "timeouts": sum(1 for t in timings if t.timed_out),
        "substitution_parameters": "the spec's validation values (qgen -d), the same in every stream",
        "query_order": "power test Q1..Q22; throughput stream s: a permutation seeded by s",
        "schema": "the spec's tables and types, primary keys, indexes on the foreign-key columns",
        "buffer_pool": {
            "bytes": settings.get("buffer_pool_bytes"),
            "note": "small on purpose, so the device under test serves most reads"
            + (
                " (the default)"
                if opts.buffer_pool_bytes == DEFAULT_BUFFER_POOL_BYTES
                else " (--buffer-pool)"
            ),
        },
        "settings": settings,
        "generator": gen.generator,
        "target": str(opts.target),
        "instance_directory": str(instance.directory),
    }


def render(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from ..render import stdout_console

    console = stdout_console()
    console.print(
        f"[bold]{LABEL}[/]: {doc['dbms_version']}, SF {doc['scale_factor']:g}, {doc['streams']} streams"
    )
    summary = Table(title=f"TPC-H-derived metrics ({LABEL})")
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
    console.print(f"[bold]{LABEL}[/]")


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
        err.print(f"[dim]tpch ({LABEL}):[/] {text}", highlight=False)

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


def leftover_run_dirs(target: Path) -> list[Path]:
    """Run directories a killed agent left in `target` (for tests and the leftovers sweep)."""
    return sorted(p for p in target.glob(f"{RUN_DIR_PREFIX}*") if p.is_dir())
