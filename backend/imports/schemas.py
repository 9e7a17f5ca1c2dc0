"""POST /api/v1/imports: another tool's output file as runs; POST /imports/published: a datasheet's
figures as a run. What the API answers is what the importer found, in base units."""

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema

HOST_PATTERN = r"^[A-Za-z0-9_.\-]+$"
MAX_TEXT_BYTES_NOTE = "IOWATT_IMPORT_MAX_BYTES (256 MiB by default)"
UNITS = {
    "bw_bytes": "bytes/s",
    "iops": "I/O per second",
    "io_bytes": "bytes",
    "runtime_ms": "ms",
    "*_ns": "ns",
    "bs": "bytes",
    "size": "bytes",
    "runtime_s": "s",
    "ramp_time_s": "s",
}


class ImportLabels(InputSchema):
    """Where the imported runs go: the team, and the labels the file may not carry."""

    team_id: uuid.UUID
    host: str | None = Field(
        None,
        min_length=1,
        max_length=120,
        pattern=HOST_PATTERN,
        description="the machine that ran it (an external host of the team, made on first use); "
        'null: the host the file names, else "imported"',
    )
    device: str | None = Field(
        None, min_length=1, max_length=200, description="the device's model; null: what the file says"
    )
    environment_id: uuid.UUID | None = None
    name: str | None = Field(
        None, min_length=1, max_length=200, description="the run's name; null: the file's"
    )
    format: str | None = Field(
        None, min_length=1, max_length=40, description="the format, when detection should not guess"
    )


class ImportText(ImportLabels):
    """Pasted text: the file's content as a string (JSON body). A file's bytes go as the body
    (application/octet-stream) with these fields as query parameters."""

    text: str = Field(min_length=1, description=f"the tool's output, at most {MAX_TEXT_BYTES_NOTE}")
    file_name: str = Field("pasted.txt", min_length=1, max_length=255)


class ImportedLatency(OutputSchema):
    mean_ns: float | None
    min_ns: float | None
    max_ns: float | None
    stddev_ns: float | None
    percentiles_ns: dict[str, float] = Field(description='percent ("99", "99.9") -> ns')


class ImportedDirection(OutputSchema):
    bw_bytes: float | None = Field(description="bytes/s")
    iops: float | None
    io_bytes: int | None
    total_ios: int | None
    runtime_ms: float | None
    lat: ImportedLatency | None = Field(description="total latency (submission to completion)")
    clat: ImportedLatency | None = Field(description="completion latency")
    slat: ImportedLatency | None = Field(description="submission latency")


class ImportedJob(OutputSchema):
    name: str
    group: str | None
    settings: dict[str, Any] = Field(
        description="fio's option names in base units (bs bytes, runtime_s s, ...)"
    )
    read: ImportedDirection | None
    write: ImportedDirection | None
    trim: ImportedDirection | None
    metrics: dict[str, float] = Field(description="figures outside read/write, the unit in the key")


class ImportedRun(OutputSchema):
    name: str
    run_id: uuid.UUID | None = Field(description="the stored run (null on a dry run)")
    url: str | None
    host: str = Field(description="the external host it is stored under")
    device: str = Field(description="the device model it is stored under")
    started_at: datetime | None
    finished_at: datetime | None
    host_facts: dict[str, str]
    device_facts: dict[str, str]
    command_line: str | None
    absent: list[str] = Field(description="what this format does not carry (never invented)")
    notes: list[str]
    jobs: list[ImportedJob]


class ImportResult(OutputSchema):
    format: str
    tool: str
    version: str | None
    file_name: str
    sha256: str = Field(description="of the original bytes")
    size_bytes: int
    dry_run: bool
    duplicate: bool = Field(
        description="this file (its SHA-256) was imported into the team before: nothing added"
    )
    runs: list[ImportedRun]
    warnings: list[str]
    units: dict[str, str] = Field(default_factory=lambda: dict(UNITS))


PublishedUnit = Literal[
    "B/s", "KB/s", "MB/s", "GB/s", "KiB/s", "MiB/s", "GiB/s", "IOPS", "kIOPS", "ns", "us", "µs", "ms"
]


class PublishedFigure(InputSchema):
    test: str = Field(min_length=1, max_length=120, description='e.g. "SEQ1M Q8T1 read", "4K random read"')
    value: float = Field(ge=0, le=1e15, allow_inf_nan=False)
    unit: PublishedUnit = Field(description="MB/s = 10^6 B/s, MiB/s = 2^20 B/s; latencies are means")
    direction: Literal["read", "write"] | None = Field(
        None, description='null: "write" when the test names it, else read'
    )
    bs_bytes: int | None = Field(None, gt=0, le=2**40)
    iodepth: int | None = Field(None, gt=0, le=65536)
    numjobs: int | None = Field(None, gt=0, le=65536)


class PublishedImport(InputSchema):
    """A datasheet's or review's numbers, stored as a run marked published: not measured here."""

    team_id: uuid.UUID
    vendor: str = Field(min_length=1, max_length=60)
    model: str = Field(min_length=1, max_length=200)
    capacity_bytes: int | None = Field(None, gt=0, le=2**63 - 1)
    reference: str = Field(
        min_length=1, max_length=500, description="where the figures are published (URL, page)"
    )
    name: str | None = Field(None, min_length=1, max_length=200)
    environment_id: uuid.UUID | None = None
    figures: list[PublishedFigure] = Field(min_length=1, max_length=200)


class ImportFormat(OutputSchema):
    """One format the importers read (GET /imports/formats)."""

    format: str = Field(description="the key to give as the `format` hint")
    tool: str
    aliases: list[str] = Field(description="other names the hint accepts")
    versions: list[str] = Field(description="the tool's versions (or the format's) read")
    file_kinds: list[str] = Field(description="which of the tool's files or outputs")
