"""`iowatt-agent bench --preset heap-btree --records N --target DIR [--json]` (the P3608
report's § 1.4, Table 3): the engine's `--heap-btree` mode over the ten buffer-cache fractions 10 %…100 %,
heap and B+tree, inserts then point queries. With --json the engine's document is printed whole:
its `heap_btree` list holds one entry per fraction × structure × operation (`structure`,
`operation`, `cache_fraction`, `ops_per_s`, `device_reads`, `device_writes`, `hit_ratio`, …).

Options (after --preset heap-btree; `--name value` or `--name=value`):
  --records N        records inserted per structure and fraction (default: 1,000,000, fewer when
                     the host's memory is small; the P3608 report inserted 50,000,000)
  --queries M        B+tree point queries (default min(N, 10000))
  --heap-queries M   heap point queries, each a sequential scan (default min(queries, 100))
  --randseed S       the records' and the queries' seed (default 1)
  --cache-fraction F[,F...]   instead of the ten fractions
  --structure heap|btree|both
  --check            verify every key and the B+tree's invariants after the inserts
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

PRESET = "heap-btree"
FRACTIONS = tuple(k / 10 for k in range(1, 11))
SEED_RECORDS = 50_000_000
DEFAULT_RECORDS = 1_000_000
MAX_RECORDS = 2_000_000_000
# bytes of buffer pool per record at fraction 1 (8 KiB pages of 204 records; a B+tree after
# random inserts is about 69 % full: ~1.5x the heap's pages, plus the sizing pass of the engine)
POOL_BYTES_PER_RECORD = 8192 / 204 * 2.1
VALUE_OPTIONS = ("records", "queries", "heap-queries", "randseed", "cache-fraction", "structure")
FLAG_OPTIONS = ("check",)


class HeapBtreeUsage(ValueError):
    """Bad options: exit 2."""


@dataclass
class HeapBtreeOptions:
    target: Path
    records: int
    records_given: bool
    engine_args: list[str] = field(default_factory=list)


def default_records(mem_bytes: int | None = None) -> int:
    """The preset's N when --records is not given: the P3608 report's 50 M scaled down to 1 M, and to what
    an eighth of this host's memory holds at fraction 1."""
    if mem_bytes is None:
        try:
            mem_bytes = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            mem_bytes = 0
    if mem_bytes <= 0:
        return DEFAULT_RECORDS
    fit = int(mem_bytes / 8 / POOL_BYTES_PER_RECORD)
    return max(1000, min(DEFAULT_RECORDS, fit // 1000 * 1000))


def _int_option(name: str, value: str, low: int, high: int) -> int:
    if not value.isdigit() or not low <= int(value) <= high:
        raise HeapBtreeUsage(f"--{name} must be an integer from {low} to {high}, got {value!r}")
    return int(value)


def parse_options(extra: list[str], target: str) -> HeapBtreeOptions:
    """bench's extra arguments for this preset; HeapBtreeUsage names the bad one."""
    given: dict[str, str] = {}
    i = 0
    while i < len(extra):
        arg = extra[i]
        if not arg.startswith("--") or len(arg) <= 2:
            raise HeapBtreeUsage(f"unexpected argument {arg!r} for --preset {PRESET}")
        name, eq, value = arg[2:].partition("=")
        name = name.replace("_", "-")
        if name in FLAG_OPTIONS:
            if eq and value not in ("0", "1"):
                raise HeapBtreeUsage(f"--{name} takes no value (or 0/1), got {value!r}")
            given[name] = value if eq else "1"
        elif name in VALUE_OPTIONS:
            if not eq:
                if i + 1 >= len(extra) or extra[i + 1].startswith("--"):
                    raise HeapBtreeUsage(f"--{name} needs a value")
                value = extra[i + 1]
                i += 1
            given[name] = value
        else:
            known = ", ".join(f"--{o}" for o in (*VALUE_OPTIONS, *FLAG_OPTIONS))
            raise HeapBtreeUsage(f"--{name} does not apply to --preset {PRESET} (it takes {known})")
        i += 1
    path = Path(os.path.realpath(os.path.abspath(target))) if target else Path()
    if not target or not path.is_dir():
        raise HeapBtreeUsage(f"--target {target!r}: --preset {PRESET} needs an existing directory")
    records_given = "records" in given
    records = (
        _int_option("records", given.pop("records"), 1, MAX_RECORDS) if records_given else default_records()
    )
    args = [f"--records={records}"]
    if "cache-fraction" not in given:
        args.append("--cache-fraction=" + ",".join(f"{f:.1f}" for f in FRACTIONS))
    for name in ("queries", "heap-queries", "randseed"):
        if name in given:
            args.append(f"--{name}={_int_option(name, given.pop(name), 0, 10**18)}")
    if "structure" in given and given["structure"] not in ("heap", "btree", "both"):
        raise HeapBtreeUsage(f"--structure must be heap, btree or both, got {given['structure']!r}")
    if given.pop("check", "0") == "1":
        args.append("--check")
    args += [f"--{name}={value}" for name, value in given.items()]  # cache-fraction, structure
    return HeapBtreeOptions(target=path, records=records, records_given=records_given, engine_args=args)


def engine_command(engine: Path, opts: HeapBtreeOptions) -> list[str]:
    """The engine's argv: the files go straight into the target, confined beneath it."""
    return [
        str(engine),
        "--heap-btree",
        f"--directory={opts.target}",
        f"--beneath={opts.target}",
        *opts.engine_args,
        "--output-format=json",
        "--progress=jsonl",
    ]


@dataclass
class EngineRun:
    code: int
    stdout: str
    messages: list[str]
    interrupted: bool


def run_engine(argv: list[str], on_progress: Any = None) -> EngineRun:
    """Run the engine in its own process group; SIGINT/SIGTERM here stop it (it removes its
    files and still prints its document)."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    messages: list[str] = []
    interrupted = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            line = line.rstrip("\n")
            if line.startswith("{"):
                try:
                    event = json.loads(line)
                except ValueError:
                    event = None
                if isinstance(event, dict) and event.get("event") == "progress":
                    if on_progress is not None:
                        on_progress(event)
                    continue
            if line:
                messages.append(line.removeprefix("iowatt-engine: "))

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        interrupted.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    in_main = threading.current_thread() is threading.main_thread()
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)} if in_main else {}
    try:
        assert proc.stdout is not None
        stdout = proc.stdout.read()
        code = proc.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    reader.join(timeout=5)
    return EngineRun(code=code, stdout=stdout, messages=messages, interrupted=interrupted.is_set())


def table_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3's layout: one row per fraction, operations per second and hit ratio per column."""
    rows: dict[float, dict[str, Any]] = {}
    for e in doc.get("heap_btree") or []:
        row = rows.setdefault(float(e["cache_fraction"]), {"cache_fraction": float(e["cache_fraction"])})
        key = f"{e['structure']}_{e['operation']}"
        row[key] = e["ops_per_s"]
        row[f"{key}_hit_ratio"] = e["hit_ratio"]
        row[f"{key}_device_reads"] = e["device_reads"]
    return [rows[f] for f in sorted(rows)]


COLUMNS = (
    ("heap_insert", "Heap insert"),
    ("heap_point_query", "Heap point query"),
    ("btree_insert", "B-tree insert"),
    ("btree_point_query", "B-tree point query"),
)


def render(doc: dict[str, Any], opts: HeapBtreeOptions) -> None:
    from rich.table import Table

    from .render import stdout_console

    run = doc.get("heap_btree_run") or {}
    console = stdout_console()
    chosen = (
        "given" if opts.records_given else f"scaled to this host; the P3608 report inserted {SEED_RECORDS:,}"
    )
    console.print(
        f"Heap vs B-tree: {opts.records:,} records ({chosen}) of {run.get('record_bytes')} bytes, "
        f"8 KiB pages, {run.get('replacement', 'clock').upper()} buffer pool, "
        f"{'O_DIRECT' if run.get('direct') else 'buffered (no O_DIRECT here)'}; "
        f"point queries: B-tree {run.get('queries')}, heap {run.get('heap_queries')} (sequential scans)",
        highlight=False,
    )
    table = Table(title="Throughput (operations/s) and buffer hit ratio (the P3608 report's Table 3)")
    table.add_column("Cache", justify="right")
    for _, title in COLUMNS:
        table.add_column(title, justify="right")
    rows = table_rows(doc)
    for row in rows:
        cells = [f"{row['cache_fraction'] * 100:.0f} %"]
        for key, _ in COLUMNS:
            if key in row:
                hit = row[f"{key}_hit_ratio"]
                cells.append(f"{row[key]:,.0f}" + (f" ({hit * 100:.0f} %)" if hit is not None else ""))
            else:
                cells.append("-")
        table.add_row(*cells)
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        cells = [f"{last['cache_fraction'] * 100:.0f}/{first['cache_fraction'] * 100:.0f} %"]
        for key, _ in COLUMNS:
            a, b = first.get(key), last.get(key)
            cells.append(f"{b / a:,.1f}x" if a and b else "-")
        table.add_row(*cells, style="bold")
    console.print(table)


def run_heap_btree_bench(
    extra: list[str], target: str, json_output: bool, engine: Path | None, meter: str | None
) -> int:
    """The CLI entry (bench.py's hook): the exit code, after printing."""
    from .engine import EngineNotFound, locate_engine
    from .render import err

    def error(message: str) -> None:
        err.print(f"[bold red]error:[/] {message}", highlight=False, markup=True, soft_wrap=True, emoji=False)

    if meter is not None:
        error(f"--meter is not supported with --preset {PRESET} yet")
        return 2
    try:
        opts = parse_options(extra, target)
        engine_path = locate_engine(engine)
    except (HeapBtreeUsage, EngineNotFound) as exc:
        error(str(exc))
        return 2

    last = {"percent": -10.0}

    def progress(event: dict[str, Any]) -> None:
        percent = float(event.get("percent") or 0)
        if percent - last["percent"] >= 10 or percent >= 100:
            last["percent"] = percent
            err.print(
                f"[dim]heap-btree:[/] {percent:5.1f} %  {event.get('structure')} {event.get('operation')}"
                f" at {float(event.get('cache_fraction') or 0) * 100:.0f} %",
                highlight=False,
            )

    result = run_engine(engine_command(engine_path, opts), progress)
    if result.interrupted:
        error("interrupted: engine stopped, its files removed")
        return 130
    if result.code != 0:
        error("; ".join(result.messages) or f"engine exited {result.code}")
        return result.code if result.code in (1, 2, 77) else 1
    try:
        doc = json.loads(result.stdout)
    except ValueError:
        error("the engine printed no JSON document")
        return 1
    if json_output:
        sys.stdout.write(result.stdout.strip() + "\n")
    else:
        render(doc, opts)
    return 0
