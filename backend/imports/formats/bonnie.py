"""Bonnie++'s CSV lines (`bonnie++ ... -q` / `bon_csv2html` input), CSV format 1.97 to 2.0x.

One run per line (a line is one bonnie++ invocation; a header line is optional), one job per test.
The layout, from bonnie++'s bon_time.cpp (`PrintHeader`, `DoReportIO`, `DoReportFile`):
`format_version,bonnie_version,name,concurrency,seed,file_size,io_chunk_size,` then value and CPU %
of `putc`, `put_block`, `rewrite`, `getc`, `get_block` (K/sec: KiB/s), `seeks` (/sec), then
`num_files,max_size,min_size,num_dirs,file_chunk_size` and value and CPU % of `seq_create`,
`seq_stat`, `seq_del`, `ran_create`, `ran_stat`, `ran_del` (/sec), then the twelve tests' latencies
(`3045us`, `186ms`, `2s`: the largest single operation's time). `+++++` means too fast to measure
(under the minimum time: absent, not a number), an empty field a test not run. The file size is
MiB with bonnie++'s units (`31696M`, `32G`), `num_files` counts 1024 files.
Older CSVs (format 1.93-1.96) lack `concurrency`, `seed` and `file_chunk_size`: read by their
field count.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from .base import Direction, ImportFormatError, Job, Latency, ParsedFile, Run
from .text_common import dec, decode, guarded, nonempty, scaled

FMT = "bonnie-csv"
IO_TESTS = ("putc", "put_block", "rewrite", "getc", "get_block")
FILE_TESTS = ("seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del")
LATENCIES = [f"{t}_latency" for t in (*IO_TESTS, "seeks", *FILE_TESTS)]
NEW = [
    "format_version", "bonnie_version", "name", "concurrency", "seed", "file_size", "io_chunk_size",
    *[f"{t}{s}" for t in (*IO_TESTS, "seeks") for s in ("", "_cpu")],
    "num_files", "max_size", "min_size", "num_dirs", "file_chunk_size",
    *[f"{t}{s}" for t in FILE_TESTS for s in ("", "_cpu")],
    *LATENCIES,
]  # fmt: skip
OLD = [c for c in NEW if c not in ("concurrency", "seed", "file_chunk_size")]
OLD[OLD.index("io_chunk_size")] = "chunk_size"
VERSION = re.compile(r"^(1\.9[3-9]|2\.\d\d)[a-z]?$")
UNIT = {"": 1, " ": 1, "k": 1024, "m": 1024**2, "M": 1024**2, "G": 1024**3}


def _size(v: str, n: int, what: str, base_unit: str) -> int | None:
    """bonnie++'s print_size: a number and a unit letter (file size: M, G; chunk: k, m; bytes bare)."""
    if v == "":
        return None
    m = re.fullmatch(r"(\d{1,12})([kmMG]?)", v)
    if not m:
        raise ImportFormatError(FMT, f"unreadable size {v[:20]!r}", line=n, expected=what)
    unit = m.group(2) or base_unit
    return int(m.group(1)) * UNIT[unit]


def _latency(v: str, n: int, col: str) -> float | None:
    if v == "":
        return None
    m = re.fullmatch(r"(\d{1,12})(us|ms|s)", v)
    if not m:
        raise ImportFormatError(
            FMT, f"unreadable latency {v[:20]!r} in {col}", line=n, expected="N us, N ms or N s"
        )
    return float(int(m.group(1)) * {"us": 10**3, "ms": 10**6, "s": 10**9}[m.group(2)])


def _value(v: str, n: int, col: str) -> tuple[float | None, bool]:
    """(value, measured): '' not run, '+++++'/'+++' too fast to measure, else the number."""
    if v == "":
        return None, False
    if set(v) == {"+"}:
        return None, True
    return float(dec(FMT, v, n, col)), True


def _parse(name: str, data: bytes) -> ParsedFile:
    text = decode(FMT, data)
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:
        raise ImportFormatError(FMT, f"not CSV ({e})", expected="bonnie++'s CSV lines") from None
    runs: list[Run] = []
    versions: set[str] = set()
    for n, row in enumerate(rows, 1):
        if not row or not any(c.strip() for c in row):
            continue
        if row[0] == "format_version":
            continue  # the optional header line (bonnie++ -q prints it to stderr)
        if not VERSION.match(row[0]):
            raise ImportFormatError(
                FMT,
                f"format version {row[0][:20]!r} is not one this importer reads",
                line=n,
                expected="a Bonnie++ 1.93-2.x CSV line ('1.98,1.98,host,...')",
            )
        cols = NEW if len(row) == len(NEW) else OLD if len(row) == len(OLD) else None
        if cols is None:
            raise ImportFormatError(
                FMT,
                f"{len(row)} fields",
                line=n,
                expected=f"{len(NEW)} fields (format 1.97+) or {len(OLD)} (1.93-1.96)",
            )
        r = dict(zip(cols, (c.strip() for c in row), strict=True))
        versions.add(r["bonnie_version"][:20])
        runs.append(_run(r, n))
    if not runs:
        raise ImportFormatError(FMT, "no result line", line=len(rows), expected="a Bonnie++ CSV line")
    version = sorted(versions)[-1]
    return ParsedFile(format=FMT, tool="Bonnie++", version=version, runs=runs)


def _run(r: dict[str, str], n: int) -> Run:
    size = _size(r["file_size"], n, "a file size (31696M, 32G)", "M")
    chunk = _size(r.get("io_chunk_size", r.get("chunk_size", "")), n, "a chunk size (16k)", "")
    base: dict[str, Any] = {}
    if size is not None:
        base["size"] = size
    if (c := r.get("concurrency")) and c.isdigit():
        base["numjobs"] = int(c)
    jobs: list[Job] = []
    absent = {
        "IOPS of the block tests and I/O counts (Bonnie++ prints K/sec)",
        "mean latency and percentiles (Bonnie++ prints the largest)",
        "host and device facts (but the machine name)",
    }
    too_fast: list[str] = []
    for t in (*IO_TESTS, "seeks"):
        value, measured = _value(r[t], n, t)
        cpu, _ = _value(r[f"{t}_cpu"], n, f"{t}_cpu")
        lat = _latency(r[f"{t}_latency"], n, f"{t}_latency")
        if not measured:
            continue
        if value is None:
            too_fast.append(t)
        settings = dict(base)
        latency = Latency(max_ns=lat) if lat is not None else None
        metrics = {"cpu_pct": cpu} if cpu is not None else {}
        if t == "seeks":
            settings["rw"] = "randread"
            d = Direction(iops=value, lat=latency)
            jobs.append(Job(name=t, settings=settings, read=d, metrics=metrics))
            continue
        bw = scaled(dec(FMT, r[t], n, t), 1024) if value is not None else None
        if t in ("putc", "getc"):
            settings["bs"] = 1  # one character per call
        elif chunk is not None:
            settings["bs"] = chunk
        d = Direction(bw_bytes=bw, lat=latency)
        if t == "rewrite":
            settings["rw"] = "rw"
            jobs.append(Job(name=t, settings=settings, read=d, write=d, metrics=metrics))
        elif t in ("putc", "put_block"):
            settings["rw"] = "write"
            jobs.append(Job(name=t, settings=settings, write=d, metrics=metrics))
        else:
            settings["rw"] = "read"
            jobs.append(Job(name=t, settings=settings, read=d, metrics=metrics))
    files: dict[str, float] = {}
    if (nf := r.get("num_files", "")) != "":
        files["files"] = float(dec(FMT, nf, n, "num_files")) * 1024
    for t in FILE_TESTS:
        value, measured = _value(r[t], n, t)
        cpu, _ = _value(r[f"{t}_cpu"], n, f"{t}_cpu")
        lat = _latency(r[f"{t}_latency"], n, f"{t}_latency")
        if value is not None:
            files[f"{t}_per_s"] = value
        elif measured:
            too_fast.append(t)
        if cpu is not None:
            files[f"{t}_cpu_pct"] = cpu
        if lat is not None:
            files[f"{t}_lat_max_ns"] = lat
    if len(files) > 1 or any(k.endswith("_per_s") for k in files):
        jobs.append(Job(name="files", settings={}, metrics=files))
    if too_fast:
        absent.add(f"{', '.join(too_fast)}: too fast to measure ('+++++')")
    if chunk is None:
        absent.add("the block tests' chunk size (the default, not printed: 8 KiB in Bonnie++)")
    if not jobs:
        raise ImportFormatError(
            FMT, "a line without any result", line=n, expected="at least one measured test"
        )
    host = {"hostname": r["name"][:200]} if r["name"] else {}
    notes = [f"seed {r['seed']}"] if r.get("seed") else []
    return Run(name=f"Bonnie++ {r['name'] or n}", jobs=jobs, host=host, absent=sorted(absent), notes=notes)


class _Importer:
    format = FMT
    tool = "Bonnie++"
    aliases = ("bonnie++", "bonnie")

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            first = decode(FMT, head).lstrip().split("\n", 1)[0]
        except ImportFormatError:
            return False
        if first.startswith("format_version,bonnie_version,"):
            return True
        fields = first.split(",")
        return len(fields) in (len(NEW), len(OLD)) and bool(VERSION.match(fields[0]))

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(FMT, guarded(FMT, lambda: _parse(name, data)), "Bonnie++ CSV lines")


IMPORTERS = [_Importer()]
