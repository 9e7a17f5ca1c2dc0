"""A named view's answer: one table (columns that say what they are, rows of cells) plus the
charts the seed draws. Values are in the column's unit, the seed's unit (MB/s = 10^6 B/s as
CrystalDiskMark and the seeds print), so the page and its CSV show the same figures."""

import uuid
from typing import Literal

from pydantic import Field

from backend.kit.schema import OutputSchema

ViewName = Literal[
    "crystaldiskmark",
    "crystaldiskmark-table",
    "diskspd-bs-sweep",
    "kernel-help",
    "threads-latency",
    "disk-flash-memory",
]


class ViewInfo(OutputSchema):
    name: ViewName
    title: str
    description: str
    seed: str = Field(description="the seed document and table or figure the view reproduces")
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
    device_name: str | None
    agent_name: str
    target_path: str


class ViewCatalog(OutputSchema):
    views: list[ViewInfo]
    runs: list[ViewRun] = Field(description="the runs asked about (runs=...), with their presets")
    applicable: list[ViewName] = Field(description="views that can show all the runs asked about")


class ViewColumn(OutputSchema):
    key: str
    label: str = Field(description="the header as the view prints it, unit included")
    unit: str | None = Field(description="unit of the values (MB/s = 10^6 B/s); null for text")
    description: str = Field(description="what the column is: the statistic, the unit, the pass rule")
    kind: Literal["text", "number", "ratio"]
    run_id: uuid.UUID | None = Field(description="the run whose figures the column holds, if one")
    group: str | None = Field(
        description="a header over several columns (Read, Write, an operation); the label repeats it"
    )


class ViewCell(OutputSchema):
    value: float | str | None
    note: str | None = Field(description="a mark beside the figure (best pass, discarded pass, ...)")


class ViewRow(OutputSchema):
    group: str | None = Field(description="rows with the same group belong together (a run, a test)")
    cells: list[ViewCell] = Field(description="one per column, in column order")


class ChartPoint(OutputSchema):
    x: float
    y: float


class ChartSeries(OutputSchema):
    label: str
    run_id: uuid.UUID | None
    dashed: bool
    points: list[ChartPoint]


class ChartAxis(OutputSchema):
    label: str
    unit: str
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
