import uuid
from typing import Literal

from pydantic import Field

from backend.kit.schema import OutputSchema
from backend.run.schemas import RUN_VALIDITY_FLAGS, RunRead, RunValidityFlagName, describe_flags

# env.<facet>: a field of the runs' environment snapshots (backend/environment/topology.py FACETS)
GroupBy = Literal[
    "none", "device", "environment", "device_environment", "workload", "target", "sweep",
    "env.kind", "env.raid_level", "env.raid_implementation", "env.member_count", "env.member_model",
    "env.media", "env.controller_cache_policy", "env.transport", "env.link_speed_bps",
    "env.nas_protocol", "env.nas_version", "env.fstype", "env.mount_options", "env.region", "env.pue",
]  # fmt: skip
FingerprintMode = Literal["workload", "workload_host"]
# What a metric measures (the UI picks charts and display units by it, never by key or unit).
MetricKind = Literal["iops", "bandwidth", "latency", "cpu", "power", "time", "energy", "efficiency", "carbon"]
Better = Literal["higher", "lower"]
IoDirection = Literal["read", "write"]


class StatsRead(OutputSchema):
    n: int
    mean: float
    stdev: float | None
    cv: float | None
    ci95_low: float | None
    ci95_high: float | None
    ci_method: Literal["log", "t"] | None = Field(
        description="log: mean ×/÷ exp(t·CV/√n), for positive quantities (never crosses zero); "
        "t: mean ± t·se; null when n < 2"
    )
    values: list[float]


class Change(OutputSchema):
    """A column's change against the baseline column, direction-aware (`backend/compare/change.py`)."""

    ratio: float = Field(description="value / baseline value")
    pct_change: float = Field(description="(ratio − 1) × 100, signed")
    factor: float | None = Field(description="max(ratio, 1/ratio) ≥ 1; null when the value is 0")
    verdict: Literal["better", "worse", "same"]
    phrase: str = Field(description='what to show: "133× lower latency", "25% slower", "same"')


class Metric(OutputSchema):
    """One row of the compare table; key, label, unit, kind, better, direction and percentile come
    from the one metric table (`backend/compare/service.py` METRICS / ENERGY_METRICS)."""

    key: str
    label: str
    unit: str
    kind: MetricKind
    better: Better
    direction: IoDirection | None = Field(description="a job metric's I/O direction; null for CPU and energy")
    percentile: float | None = Field(description="a latency percentile (99.0 for p99); null for the others")
    higher_is_better: bool = Field(
        description='deprecated: `better == "higher"`', json_schema_extra={"deprecated": True}
    )
    values: list[float | None]  # mean per column
    ratios: list[float | None]  # value / baseline column's value
    changes: list[Change | None] = Field(
        description="direction-aware change per column; null for the baseline column and where no ratio"
    )
    stats: list[StatsRead | None]
    within_noise: list[bool | None]


class JobComparison(OutputSchema):
    name: str
    metrics: list[Metric]


class Column(OutputSchema):
    key: str
    label: str
    run_ids: list[uuid.UUID]
    device_name: str | None
    environment_name: str | None
    is_baseline: bool


class Difference(OutputSchema):
    field: str
    values: dict[str, object]


class Comparability(OutputSchema):
    verdict: Literal["comparable", "not_comparable", "forced"]
    fingerprint: FingerprintMode
    fingerprints: dict[str, str]
    differences: list[Difference]


class ValidityFlag(OutputSchema):
    """A run's validity flag in a comparison: backend/compare/validity.py's rules."""

    flag: RunValidityFlagName = Field(description=describe_flags(RUN_VALIDITY_FLAGS.items()))
    message: str


class Comparison(OutputSchema):
    runs: list[RunRead]
    columns: list[Column]
    baseline: str
    group_by: GroupBy
    comparability: Comparability
    jobs: list[JobComparison]
    energy: list[Metric]  # run-level energy and carbon (whole load phase)
    validity: dict[str, list[ValidityFlag]]
    suggestions: list[str]
    filtered_out: list[uuid.UUID] = Field(
        description="runs asked for that the `env` filter left out (their environment did not match)"
    )


class CurvePoint(OutputSchema):
    percentile: float
    latency_ns: int


class LatencyCurve(OutputSchema):
    column: str
    direction: Literal["read", "write"]
    samples: int
    points: list[CurvePoint]


class LatencyCurves(OutputSchema):
    job: str
    columns: list[Column]
    curves: list[LatencyCurve]
