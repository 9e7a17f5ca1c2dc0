import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema
from backend.series.stats import METRICS

MetricName = Literal[
    "read_iops",
    "write_iops",
    "read_bw_bytes",
    "write_bw_bytes",
    "read_lat_mean_ns",
    "write_lat_mean_ns",
    "read_clat_p99_ns",
    "write_clat_p99_ns",
]
DetectionStatus = Literal["open", "acknowledged", "dismissed"]
Direction = Literal["higher_is_better", "lower_is_better"]

if set(MetricName.__args__) != set(METRICS):  # type: ignore[attr-defined]  # pragma: no cover
    raise RuntimeError("MetricName and stats.METRICS disagree")


class ThresholdsIn(InputSchema):
    """Detection thresholds; a field left out takes the team's value, then the default."""

    test: Literal["t_test", "welch", "mann_whitney"] | None = Field(
        None,
        description="the per-new-run test: Student's (pooled variance), Welch's t-test or Mann-Whitney U",
    )
    alpha: float | None = Field(
        None, gt=0, lt=0.5, description="one-sided p-value below which a new run differs"
    )
    z_min: float | None = Field(
        None, ge=0, le=100, description="|change| / the window's standard deviation, at least"
    )
    min_change_pct: float | None = Field(
        None, ge=0, le=1000, description="|change|, % of the window mean, at least"
    )
    max_change_abs: float | None = Field(
        None, gt=0, description="a change larger than this (metric units) counts whatever its percentage"
    )
    lookback: int | None = Field(
        None, ge=3, le=500, description="runs in the window a new run is tested against"
    )
    min_window: int | None = Field(None, ge=2, le=500, description="fewer valid runs before: no verdict")
    max_suffix: int | None = Field(
        None, ge=1, le=10, description="the new run and up to N-1 runs before it are tested"
    )
    cp_penalty: float | None = Field(
        None, gt=0, le=100, description="change points: penalty per change × log(n)"
    )
    cp_min_size: int | None = Field(
        None, ge=2, le=100, description="change points: runs per segment, at least"
    )
    cp_alpha: float | None = Field(None, gt=0, lt=0.5, description="change points: Welch's p-value, below")


class ThresholdsRead(OutputSchema):
    test: Literal["t_test", "welch", "mann_whitney"]
    alpha: float
    z_min: float
    min_change_pct: float
    max_change_abs: float | None
    lookback: int
    min_window: int
    max_suffix: int
    cp_penalty: float
    cp_min_size: int
    cp_alpha: float


class TeamThresholdsRead(OutputSchema):
    team_id: uuid.UUID
    thresholds: ThresholdsIn = Field(description="what the team set (null: the default)")
    effective: ThresholdsRead


class SeriesRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    workload_fingerprint: str
    target_kind: Literal["device", "path", "group"]
    agent_id: uuid.UUID | None
    device_id: uuid.UUID | None
    target_path: str | None
    environment_id: uuid.UUID | None
    workload_id: uuid.UUID | None
    metric: MetricName | None
    job_index: int | None
    pinned: bool
    archived_at: datetime | None
    thresholds: ThresholdsIn = Field(
        description="the series' own (null fields: the team's, then the default)"
    )
    effective_thresholds: ThresholdsRead
    run_count: int
    last_run_at: datetime | None
    open_regressions: int
    created_at: datetime


class SeriesCreate(InputSchema):
    """Track a run's workload on its target over time: its series, made if there is none yet
    (the earlier runs of the same workload, target and environment join it)."""

    run_id: uuid.UUID = Field(description="a run of the team with its result stored")
    name: str | None = Field(None, min_length=1, max_length=200)
    pinned: bool | None = None


class SeriesUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=200)
    pinned: bool | None = None
    archived: bool | None = None
    thresholds: ThresholdsIn | None = None
    metric: MetricName | None = Field(
        None,
        description="narrow the series to this metric: change detection, alerts and the verdict "
        "consider it alone (null: every metric); the history keeps every run",
    )
    job_index: int | None = Field(
        None, ge=0, le=10_000, description="narrow the series to this job (null: every job)"
    )


class SeriesExclusion(OutputSchema):
    """Why a run is left out of its series' tests: one of its validity flags, as stored when it
    joined (or a changed host fact)."""

    flag: str
    message: str


class HistoryPoint(OutputSchema):
    run_id: uuid.UUID
    at: datetime
    value: float | None
    low: float | None = Field(
        description="several runs (a campaign's repeats, or downsampled): their lowest value (null: one run)"
    )
    high: float | None
    runs: int = Field(
        description="runs this point stands for: 1, a campaign's repeats (their mean) or a downsampled run"
    )
    excluded: list[SeriesExclusion]
    segment: str


class HostChange(OutputSchema):
    run_id: uuid.UUID
    at: datetime
    changes: dict[str, list[str | None]] = Field(description="fact -> [before, after]")


class DetectionRead(OutputSchema):
    id: uuid.UUID
    series_id: uuid.UUID
    metric: MetricName
    job_index: int
    kind: Literal["change_point", "new_run"]
    direction: Literal["regression", "improvement"]
    run_id: uuid.UUID | None
    previous_run_id: uuid.UUID | None
    at: datetime
    mean_before: float
    mean_after: float
    change_pct: float
    change_pct_low: float | None
    change_pct_high: float | None
    runs_before: int
    runs_after: int
    method: str
    parameters: dict[str, object]
    p_value: float | None
    excluded: list[dict[str, object]]
    status: DetectionStatus
    comment: str
    status_by: uuid.UUID | None
    status_at: datetime | None


class DetectionUpdate(InputSchema):
    status: DetectionStatus
    comment: str = Field("", max_length=4000)


class SeriesHistory(OutputSchema):
    series_id: uuid.UUID
    metric: MetricName
    direction: Direction
    job_index: int
    jobs: list[str] = Field(description="the series' job names, by index")
    total_runs: int
    downsampled: bool
    points: list[HistoryPoint]
    host_changes: list[HostChange]
    detections: list[DetectionRead]


class MetricVerdict(OutputSchema):
    metric: MetricName
    job_index: int
    direction: Direction
    status: Literal["regression", "improvement", "no_change", "insufficient_history", "excluded"]
    reasons: list[str]
    value: float | None
    mean_before: float | None
    change_pct: float | None
    change_pct_low: float | None
    change_pct_high: float | None
    p_value: float | None
    z: float | None
    runs_before: int
    runs_after: int
    first_run_id: uuid.UUID | None
    previous_run_id: uuid.UUID | None
    method: str


class SeriesVerdict(OutputSchema):
    series_id: uuid.UUID
    run_id: uuid.UUID
    status: Literal["regression", "improvement", "no_change", "insufficient_history", "excluded"]
    thresholds: ThresholdsRead
    metrics: list[MetricVerdict]
