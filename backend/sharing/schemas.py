"""Share links: what a member creates, what the team lists, what a link opened without login shows."""

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AwareDatetime, Field

from backend.compare.schemas import (
    Column,
    Comparability,
    FingerprintMode,
    GroupBy,
    JobComparison,
    LatencyCurves,
    Metric,
    ValidityFlag,
)
from backend.kit.schema import InputSchema, OutputSchema
from backend.models import RunStatus
from backend.power.schemas import PhaseEnergy
from backend.review.schemas import (
    CandidateRead,
    FormulaRead,
    JobCrossover,
    RankRow,
    SensitivityRow,
)
from backend.run.schemas import JobSummary, PassSummary, RunOrigin
from backend.workload.schemas import (
    FileFacts,
    HeapBtreeSpec,
    PostmarkSpec,
    StoredJobSpec,
    TpchSpec,
    WorkloadKind,
    WorkloadSpec,
)

ShareKind = Literal["run", "comparison", "campaign", "review"]
ChartKind = Literal["bars", "sweep", "latency", "series", "energy"]
ALL_CHARTS: tuple[ChartKind, ...] = ("bars", "sweep", "latency", "series", "energy")
TableLayout = Literal["auto", "metrics", "runs"]
SeriesMetric = Literal["mbps", "iops"]
# creator_left: the creator is no longer a member of the team, which ends the link (ADR 0018)
ShareState = Literal["active", "expired", "revoked", "creator_left"]

# as many runs as a comparison takes (backend/compare/service.py MAX_RUNS)
MAX_SHARED_RUNS = 200


class ComparisonTarget(InputSchema):
    """A comparison exactly as the compare page shows it: its runs, baseline, grouping and view
    options (the page's URL state, frontend/src/lib/compareState.ts)."""

    runs: list[uuid.UUID] = Field(min_length=1, max_length=MAX_SHARED_RUNS)
    baseline: uuid.UUID | None = Field(None, description="a run id; null: the first run's column")
    group_by: GroupBy = "none"
    fingerprint: FingerprintMode = "workload"
    force: bool = Field(False, description="compare even when the workloads differ")
    job: str | None = Field(None, max_length=200, description="the job the per-job charts show")
    charts: list[ChartKind] = Field(default_factory=lambda: list(ALL_CHARTS), max_length=5)
    table: TableLayout = "auto"
    series_metric: SeriesMetric = "mbps"
    env: list[Annotated[str, Field(max_length=300)]] = Field(
        default_factory=list,
        max_length=20,
        description="FIELD:VALUE filters on the runs' recorded environments, as compare's env= "
        "(raid_level:raid10, kind:san; none: runs without it): the link shows only matching runs",
    )


class ShareLinkCreate(InputSchema):
    kind: ShareKind
    target: uuid.UUID | ComparisonTarget = Field(
        description="run, campaign and review: its id; comparison: the runs, baseline, grouping and "
        "view options"
    )
    expires_at: AwareDatetime | None = Field(None, description="UTC; null: until revoked")
    title: str = Field("", max_length=300)


class ShareLinkCreated(OutputSchema):
    id: uuid.UUID
    url: str = Field(description="the link to hand out; shown once (only its hash is stored)")
    expires_at: datetime | None


class ShareLinkRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    kind: ShareKind
    title: str
    target: dict[str, object]
    created_by: uuid.UUID | None
    created_by_name: str | None = Field(description="the creator's display name; null once deleted")
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    state: ShareState
    views: int
    last_viewed_at: datetime | None


class ShareLinkPage(OutputSchema):
    """A page of a team's share links, newest first."""

    items: list[ShareLinkRead]
    total: int


# --- the public payload: an allowlist (ADR 0018) -------------------------------------------------
# Every shared figure is read into one of these schemas, field by field (pydantic ignores what a
# schema does not declare), so a field added to a logged-in schema later is not shared until it is
# added here on purpose. tests/backend/test_share_links.py walks each kind's whole JSON for the
# team's private text.


class SharedEnergy(OutputSchema):
    """A run's energy as a link shows it: the figures, the meter's kind (driver and tier) and the
    carbon context; not the meter's name or "source" (the team's name for it, which can be a BMC's
    address) and not `reason` (an error message that can quote the meter's URL or the host)."""

    status: Literal["ok", "pending", "failed", "no_meter_data", "none"]
    meter_driver: str | None
    tier: str | None
    tier_label: str | None
    estimated: bool
    samples: int | None
    idle_w: float | None
    idle_drift_w: float | None
    load_w_mean: float | None
    runtime_s: float | None
    total_j: float | None
    dynamic_j: float | None
    uncertainty_j: float | None
    dynamic_uncertainty_j: float | None
    j_per_gb: float | None
    dynamic_j_per_gb: float | None
    j_per_mio: float | None
    iops_per_w: float | None
    mb_s_per_w: float | None
    coverage: float | None
    accuracy_pct: float | None
    accuracy_declared: bool | None
    flags: list[str]
    grid_g_per_kwh: float | None
    grid_source: str | None
    carbon_method: str | None
    pue: float | None
    operational_gco2e: float | None
    gco2e_per_tb: float | None
    dynamic_gco2e: float | None
    embodied_gco2e: float | None
    embodied_source: str | None
    phases: list[PhaseEnergy]
    dropped: dict[str, int]


class SharedVdbench(OutputSchema):
    """A vdbench workload without its parameter text (the team's file: anchors, comments, names)."""

    scale: float
    elapsed_s: int | None


class SharedWorkload(OutputSchema):
    """A run's workload as a link shows it: block jobs, PostMark's settings (numbers), TPC-H's and
    the heap/B-tree sweep's parameters, the engine's facts; vdbench only as its scale and run time."""

    kind: WorkloadKind
    jobs: list[StoredJobSpec]  # an imported job's unstated settings read back as null
    passes: int
    discard_passes: int
    shortened_by: float | None
    scaled_by: float | None
    postmark: PostmarkSpec | None
    vdbench: SharedVdbench | None
    tpch: TpchSpec | None
    heap_btree: HeapBtreeSpec | None
    facts: FileFacts | None

    @classmethod
    def of(cls, spec: WorkloadSpec) -> "SharedWorkload":
        return cls(
            kind=spec.kind,
            jobs=spec.jobs,
            passes=spec.passes,
            discard_passes=spec.discard_passes,
            shortened_by=spec.shortened_by,
            scaled_by=spec.scaled_by,
            postmark=spec.postmark,
            vdbench=SharedVdbench(scale=spec.vdbench.scale, elapsed_s=spec.vdbench.elapsed_s)
            if spec.vdbench is not None
            else None,
            tpch=spec.tpch,
            heap_btree=spec.heap_btree,
            facts=spec.facts,
        )


class SharedRun(OutputSchema):
    """A run as a shared view shows it: what it measured and on which device and environment; no
    ids of the team's agents, devices or environments, no target paths, host policy or errors."""

    id: uuid.UUID
    name: str
    status: RunStatus
    device_name: str | None
    environment_name: str | None
    workload: SharedWorkload
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    jobs: list[JobSummary]
    passes: list[PassSummary]
    energy: SharedEnergy
    origin: RunOrigin | None = Field(
        None,  # as RunRead.origin: optional in the UI's generated types
        description="an imported or published run's origin, labelled on the link as in the app (\"imported "
        "from fio\"); without the file's name and hash (file_name and sha256 are always null here); null: "
        "measured by an agent",
    )


class SharedComparison(OutputSchema):
    """The comparison of the logged-in compare page (backend/compare Comparison), with SharedRun
    for the runs and column keys that name no host, path or id."""

    runs: list[SharedRun]
    columns: list[Column]
    baseline: str
    group_by: GroupBy
    comparability: Comparability
    jobs: list[JobComparison]
    energy: list[Metric]
    validity: dict[str, list[ValidityFlag]]
    suggestions: list[str]


class SharedOptions(OutputSchema):
    """The view options frozen with the link (a comparison's page state)."""

    group_by: GroupBy
    fingerprint: FingerprintMode
    force: bool
    job: str | None
    charts: list[ChartKind]
    table: TableLayout
    series_metric: SeriesMetric
    env: list[str] = Field(description="the environment filters frozen with the link (FIELD:VALUE)")


class SharedCampaign(OutputSchema):
    name: str
    created_at: datetime
    repeats: int
    counts: dict[str, int]
    done: bool


class SharedDecision(OutputSchema):
    candidate_id: uuid.UUID
    candidate_name: str
    decided_by_name: str
    decided_at: datetime
    reason: str


class SharedReview(OutputSchema):
    """A procurement review as a link shows it (backend/review ReviewRead without the team's,
    environment's and users' ids): decided, the figures frozen at its decision; undecided, its
    figures computed now (`decided` false: the page says "not decided yet")."""

    id: uuid.UUID
    name: str
    question: str
    currency: str
    horizon_years: Decimal
    duty_cycle: Decimal
    tariff_per_kwh: Decimal
    tariff_source: str
    grid_g_per_kwh: Decimal
    grid_source: str
    pue: Decimal
    weights: dict[str, Decimal]
    version: int
    created_at: datetime
    updated_at: datetime
    decided: bool = Field(description="true: the figures are the decision's frozen snapshot")
    decision: SharedDecision | None
    hours_per_year: int
    gb_bytes: int = Field(description="GB = 10^9 bytes in every cost per GB")
    candidates: list[CandidateRead] = Field(
        description="every figure; `device_id` is always null (not shared)"
    )
    ranking: list[RankRow]
    normalisation: str
    leader: str | None
    sensitivity: list[SensitivityRow]
    job_crossover: JobCrossover | None
    methodology: list[FormulaRead]


class SharedView(OutputSchema):
    """What a share link shows, read live for the frozen target: what was deleted since is absent
    (`runs_deleted` says how many of the frozen runs)."""

    kind: ShareKind
    title: str
    team_name: str
    shared_by: str | None = Field(description="the creator's display name; null once deleted")
    created_at: datetime
    expires_at: datetime | None
    options: SharedOptions
    runs_total: int = Field(description="runs the link froze (a campaign: its runs now)")
    runs_deleted: int = Field(description="of those, how many were deleted since")
    comparison: SharedComparison | None = Field(description="null when no frozen run is left")
    latency: LatencyCurves | None = Field(
        description="the latency-percentile curves of the frozen job (the compare page's latency chart, "
        "column keys as in `comparison`); null when that chart is off or there is nothing to draw"
    )
    campaign: SharedCampaign | None
    review: SharedReview | None = Field(
        description="kind review: the review (null when it was deleted); other kinds: null"
    )
