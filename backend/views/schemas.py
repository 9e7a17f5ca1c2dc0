"""A named view's answer: one table (columns that say what they are, rows of cells) plus the
charts the report draws. Every figure is in a base unit on the wire (B/s, ns, B, IO/s; % and × are
plain ratios), named by its cell; `display_units` says which of the report's units each base unit is
printed in (B/s as MB/s = 10^6 B/s, as CrystalDiskMark and the reports print; ns as µs; B as KiB).
The UI converts with lib/format.ts and the CSV with the same table, so both read as the report."""

import uuid
from typing import Literal

from pydantic import Field

from backend.kit.schema import OutputSchema
from backend.run.schemas import RunOrigin

# The units a view's figures travel in: bytes per second, nanoseconds, bytes, I/Os per second, and
# the dimensionless percent, ratio (×) and thread count. Never a report's MB/s or µs (team rule).
# File workloads add operations per second (file operations, PostMark transactions), and the
# reports' power and energy: W and J (the report's "run time x power W" is W·s).
# IOPS per watt (the qos view's figure at the target) is IO/s/W. A count per transaction (the
# InnoDB flushing view's fsyncs and flushes) is /tx.
BaseUnit = Literal[
    "B/s", "ns", "B", "IO/s", "%", "×", "threads", "op/s", "W", "J", "QphH", "SF", "IO/s/W", "/tx"
]

ViewName = Literal[
    "crystaldiskmark",
    "crystaldiskmark-table",
    "diskspd-bs-sweep",
    "kernel-help",
    "threads-latency",
    "disk-flash-memory",
    "vdbench-filesets",
    "postmark-levels",
    "tpch-qphh",
    "heap-btree-grid",
    "writeback",
    "qos",
    "innodb-flush",
]


class ViewInfo(OutputSchema):
    name: ViewName
    title: str
    description: str
    seed: str = Field(
        description="the published report (docs/sources.md) and the table or figure the view reproduces"
    )
    presets: list[str] = Field(description="the presets whose runs the view shows")
    min_runs: int
    max_runs: int


class ViewRun(OutputSchema):
    id: uuid.UUID
    name: str
    label: str = Field(description="how the view names the run: its device (or target) on its agent")
    preset: str | None = Field(description="the built-in preset the run ran; null for other workloads")
    shortened_by: float | None = Field(
        description="the factor the preset was shortened by (a quick look, flagged in the label); null = full"
    )
    scale: float | None = Field(
        description="a file workload's scale (1 = the preset's full size; below 1 flagged in the label); "
        "null for block runs"
    )
    device_name: str | None
    agent_name: str
    target_path: str
    origin: RunOrigin | None = Field(
        None,  # as RunRead.origin: optional in the UI's generated types
        description="an imported or published run's origin (its label is also in `label`); null: measured "
        "by an agent",
    )


class ViewCatalog(OutputSchema):
    views: list[ViewInfo]
    runs: list[ViewRun] = Field(description="the runs asked about (runs=...), with their presets")
    applicable: list[ViewName] = Field(description="views that can show all the runs asked about")


class ViewColumn(OutputSchema):
    key: str
    label: str = Field(description="the header as the view prints it, unit included")
    unit: BaseUnit | None = Field(
        description="the base unit of the column's figures on the wire; null for text and for a column "
        "whose rows differ (each cell names its unit)"
    )
    description: str = Field(description="what the column is: the statistic, the unit, the pass rule")
    kind: Literal["text", "number", "ratio", "passes"] = Field(
        description="passes: each cell lists every pass of a test (cell.passes)"
    )
    run_id: uuid.UUID | None = Field(description="the run whose figures the column holds, if one")
    group: str | None = Field(
        description="a header over several columns (Read, Write, an operation); the label repeats it"
    )


class ViewPass(OutputSchema):
    index: int = Field(description="the pass's place in the test, from 0 (discarded passes first)")
    bw_bytes: float = Field(description="the pass's bandwidth, B/s")
    status: Literal["discarded", "measured", "best"] = Field(
        description="discarded: run but not counted; best: the pass reported"
    )


class ViewCell(OutputSchema):
    value: float | str | None = Field(description="a figure in `unit`, or text")
    unit: BaseUnit | None = Field(description="the base unit of a figure; null for text and missing figures")
    note: str | None = Field(description="a mark beside the figure (best pass, discarded pass, ...)")
    passes: list[ViewPass] | None = Field(description="every pass of a test, for a column of kind passes")


class ViewRow(OutputSchema):
    group: str | None = Field(description="rows with the same group belong together (a run, a test)")
    cells: list[ViewCell] = Field(description="one per column, in column order")


class ChartPoint(OutputSchema):
    x: float
    y: float
    n: int = Field(
        1, description="how many measurements y is the mean of (1: a single measurement, no interval)"
    )
    ci95_low: float | None = Field(
        None, description="the 95 % confidence interval of the mean, in y's unit; null: n < 2"
    )
    ci95_high: float | None = Field(None, description="see ci95_low")


class ChartSeries(OutputSchema):
    label: str
    run_id: uuid.UUID | None
    dashed: bool
    points: list[ChartPoint]


class ChartAxis(OutputSchema):
    label: str
    unit: BaseUnit = Field(description="the base unit of the points on this axis")
    log: bool


class ViewChart(OutputSchema):
    key: str
    title: str
    x: ChartAxis
    y: ChartAxis
    series: list[ChartSeries]


class ViewTable(OutputSchema):
    view: ViewInfo
    runs: list[ViewRun]
    baseline_run_id: uuid.UUID | None = Field(description="the denominator of the Ratio column, if any")
    columns: list[ViewColumn]
    rows: list[ViewRow]
    charts: list[ViewChart]
    notes: list[str] = Field(description="how to read the view: units, best-of, medians, ratios")
    display_units: dict[str, str] = Field(
        description="base unit -> the report's unit the page and the CSV print it in (B/s -> MB/s = 10^6 "
        "B/s, ns -> µs, B -> KiB; ns -> ms in vdbench-filesets and s in postmark-levels, as their reports); "
        "a base unit not listed is printed as it is"
    )
