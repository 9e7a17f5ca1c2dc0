"""What an importer makes of one file another tool wrote.

Every importer (one module per format in this package) reads the tool's output as the tool writes
it and answers a `ParsedFile`: runs of jobs in the engine's base units (bytes, bytes/s, I/O per
second, ns), the settings the tool records under fio's option names, the host and device facts it
prints, and the list of what the format does not carry. Nothing is invented: a figure the file does
not give is None and named in `absent`. The registry, the route and the storage (backend/imports)
build on this; the parsers here have no database, HTTP or server code, so the CLI and tests use
them as they are.

Units, exactly: MB/s is 10**6 B/s, MiB/s 2**20 B/s, KiB 1024 B, µs 1000 ns, as each format states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


class ImportFormatError(ValueError):
    """The file is not what its format says: the API answers 422 with these fields."""

    def __init__(self, fmt: str, message: str, *, line: int | None = None, expected: str | None = None):
        self.format, self.line, self.expected = fmt, line, expected
        where = f" line {line}:" if line is not None else ":"
        tail = f" (expected {expected})" if expected else ""
        super().__init__(f"{fmt}{where} {message}{tail}")


@dataclass(frozen=True)
class Latency:
    """One latency distribution in ns; percentiles keyed by the percent (99.0, 99.99, ...)."""

    mean_ns: float | None = None
    min_ns: float | None = None
    max_ns: float | None = None
    stddev_ns: float | None = None
    percentiles_ns: dict[float, float] = field(default_factory=dict)
    # fio json+'s histogram: the bucket's latency in ns -> I/Os; None when the file has none
    bins: dict[int, int] | None = None


@dataclass(frozen=True)
class Direction:
    """One direction (read, write or trim) of a job, as the tool measured it."""

    bw_bytes: float | None = None  # bytes/s
    iops: float | None = None
    io_bytes: int | None = None  # bytes moved
    total_ios: int | None = None
    runtime_ms: float | None = None
    lat: Latency | None = None  # total (submission to completion), fio's lat_ns
    clat: Latency | None = None  # completion, fio's clat_ns
    slat: Latency | None = None


@dataclass(frozen=True)
class Interval:
    """One reporting interval of a job, as the tool printed it (vdbench's interval lines, DiskSpd's
    IOPS buckets): its number from 1, the seconds since the job started at its end when the tool
    says, and the figures of that interval in the same base units as the job's."""

    index: int
    end_s: float | None = None
    read: Direction | None = None
    write: Direction | None = None
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Job:
    """One job or test: a CrystalDiskMark test line, a DiskSpd target, a vdbench run, a fio job."""

    name: str
    # fio option names and base units: rw (read|write|randread|randwrite|rw|randrw|...), bs (bytes),
    # iodepth, numjobs, size (bytes), runtime_s, ramp_time_s, direct (bool), ioengine, rwmixread (%)
    settings: dict[str, Any] = field(default_factory=dict)
    read: Direction | None = None
    write: Direction | None = None
    trim: Direction | None = None
    # figures outside read/write, unit in the key: transactions_per_s, files_created_per_s, cpu_pct ...
    metrics: dict[str, float] = field(default_factory=dict)
    group: str | None = None  # fio's groupid, a vdbench run name, a CDM profile
    intervals: list[Interval] = field(default_factory=list)  # per-interval figures, when given


@dataclass(frozen=True)
class Run:
    """What becomes one stored run: one invocation of the tool on one target."""

    name: str
    jobs: list[Job]
    started_at: datetime | None = None
    finished_at: datetime | None = None
    host: dict[str, str] = field(default_factory=dict)  # hostname, os, kernel, cpu, memory_bytes ...
    device: dict[str, str] = field(default_factory=dict)  # model, target, size_bytes, file_system ...
    command_line: str | None = None
    absent: list[str] = field(default_factory=list)  # what this format does not carry, in words
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ParsedFile:
    format: str  # the registry key: fio-json, fio-terse, fio-normal, crystaldiskmark, diskspd-xml ...
    tool: str  # the tool's name as users know it: fio, CrystalDiskMark, KDiskMark, DiskSpd ...
    version: str | None
    runs: list[Run]
    warnings: list[str] = field(default_factory=list)


class Importer(Protocol):
    """One format. `sniff` looks at a file's name and first 64 KiB only and answers whether this
    importer recognises it (cheap, no exceptions); `parse` reads it whole and raises
    ImportFormatError naming the line and what was expected on anything it cannot read.

    Optional, found by the registry with getattr (imports-core): `aliases`, a tuple of other names a
    format hint may use ("json+", "terse"); `parse_file(name, fp)`, reading a binary file object
    instead of bytes, for formats whose files can be large (fio json+ streams it: the registry
    passes the upload's spooled file, so the API never holds a 200 MB file in memory)."""

    format: str
    tool: str

    def sniff(self, name: str, head: bytes) -> bool: ...

    def parse(self, name: str, data: bytes) -> ParsedFile: ...
