"""Procurement reviews on the wire: money as decimal strings (never floats), GB = 10^9 bytes,
energy in kWh per year, carbon in kg CO2e (the issue's CSV names: co2e_kg_lifetime)."""

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal, get_args

from pydantic import Field, field_validator

from backend.kit.schema import InputSchema, OutputSchema
from backend.review.currency import CURRENCIES
from backend.run.schemas import RUN_VALIDITY_FLAGS, RunValidityFlagName, describe_flags

Criterion = Literal[
    "tco",
    "performance",
    "co2e_lifetime",
    "cost_per_iops_set",
    "cost_per_gb_usable",
    "energy",
    "usable_capacity",
]
PerfMetric = Literal["iops", "rps", "mb_s"]
PowerSource = Literal["measured", "published", "estimated"]

MAX_MONEY = Decimal("1e12")


Money = Annotated[Decimal, Field(ge=0, le=MAX_MONEY, allow_inf_nan=False)]
Fraction01 = Annotated[Decimal, Field(ge=0, le=1, allow_inf_nan=False)]
Watts = Annotated[Decimal, Field(ge=0, le=10_000_000, allow_inf_nan=False)]


def _currency(v: str) -> str:
    code = v.strip().upper()
    if code not in CURRENCIES:
        raise ValueError(f"{v!r} is not an ISO 4217 currency code (EUR, USD, GBP, JPY, ...)")
    return code


class ReviewCreate(InputSchema):
    team_id: uuid.UUID
    name: str = Field(min_length=1, max_length=200)
    question: str = Field("", max_length=20_000, description="what the review decides")
    currency: str = Field(min_length=3, max_length=3, description="ISO 4217 code")
    horizon_years: Annotated[Decimal, Field(ge=Decimal("0.1"), le=50, allow_inf_nan=False)]
    duty_cycle: Fraction01 = Field(
        Decimal("0.5"), description="share of the hours under load (the rest idle), 0 to 1"
    )
    tariff_per_kwh: Annotated[Decimal, Field(ge=0, le=1000, allow_inf_nan=False)] | None = Field(
        None, description="currency per kWh; null: the environment's price (environment_id), else required"
    )
    tariff_source: str | None = Field(None, max_length=500)
    grid_g_per_kwh: Annotated[Decimal, Field(ge=0, le=5000, allow_inf_nan=False)] | None = Field(
        None, description="gCO2e/kWh; null: the environment's (override or region), else the world average"
    )
    grid_source: str | None = Field(None, max_length=500)
    pue: Annotated[Decimal, Field(ge=1, le=5, allow_inf_nan=False)] | None = Field(
        None, description="power usage effectiveness; null: the environment's, else 1"
    )
    environment_id: uuid.UUID | None = None
    weights: dict[Criterion, Annotated[Decimal, Field(ge=0, le=1000, allow_inf_nan=False)]] | None = Field(
        None, description="criterion → weight (≥ 0); null: tco 1, performance 1, co2e_lifetime 1"
    )

    _c = field_validator("currency")(_currency)


class ReviewUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=200)
    question: str | None = Field(None, max_length=20_000)
    currency: str | None = Field(None, min_length=3, max_length=3)
    horizon_years: Annotated[Decimal, Field(ge=Decimal("0.1"), le=50, allow_inf_nan=False)] | None = None
    duty_cycle: Fraction01 | None = None
    tariff_per_kwh: Annotated[Decimal, Field(ge=0, le=1000, allow_inf_nan=False)] | None = None
    tariff_source: str | None = Field(None, max_length=500)
    grid_g_per_kwh: Annotated[Decimal, Field(ge=0, le=5000, allow_inf_nan=False)] | None = None
    grid_source: str | None = Field(None, max_length=500)
    pue: Annotated[Decimal, Field(ge=1, le=5, allow_inf_nan=False)] | None = None
    weights: dict[Criterion, Annotated[Decimal, Field(ge=0, le=1000, allow_inf_nan=False)]] | None = None

    @field_validator("currency")
    @classmethod
    def _cur(cls, v: str | None) -> str | None:
        return None if v is None else _currency(v)


class DeviceIn(InputSchema):
    model: str = Field(min_length=1, max_length=300)
    capacity_bytes: int = Field(gt=0, le=10**18, description="one drive's capacity, bytes")
    unit_price: Money = Field(description="one drive's price in the review's currency (decimal string)")
    media: Literal["hdd", "ssd", "ram"] | None = Field(
        None, description="for the embodied-carbon default when embodied_kg is not given"
    )
    embodied_kg: Annotated[Decimal, Field(ge=0, le=100_000, allow_inf_nan=False)] | None = Field(
        None, description="embodied carbon of one drive, kg CO2e"
    )
    embodied_source: str | None = Field(None, max_length=500)
    afr: Fraction01 = Field(Decimal(0), description="annual failure rate, 0 to 1 (0.0044 = 0.44 %)")
    device_id: uuid.UUID | None = Field(None, description="a device of the team this model is (optional)")


class PublishedPerformance(InputSchema):
    source: Literal["published"]
    metric: PerfMetric
    value: Annotated[Decimal, Field(ge=Decimal("0.000001"), le=10**12, allow_inf_nan=False)] = Field(
        description="the configuration's figure: IOPS, file reads/s (rps) or MB/s (10^6 B/s)"
    )
    reference: str = Field(min_length=1, max_length=500, description="where the figure comes from")
    mb_s: Annotated[Decimal, Field(ge=Decimal("0.000001"), le=10**9, allow_inf_nan=False)] | None = Field(
        None, description="its MB/s too, when published (for MB/s per watt)"
    )


# iops_at_target: a QoS run's IOPS at its latency target (docs/qos.md; job_index does not apply)
RunMetric = Literal["iops", "mb_s", "iops_at_target"]


class RunPerformance(InputSchema):
    source: Literal["run"]
    run_id: uuid.UUID
    job_index: int = Field(0, ge=0, le=10_000)
    metric: RunMetric = "iops"


class ComparisonPerformance(InputSchema):
    source: Literal["comparison"]
    run_ids: list[uuid.UUID] = Field(min_length=2, max_length=200, description="the comparison's runs")
    run_id: uuid.UUID = Field(description="which of its runs is this candidate's configuration")
    job_index: int = Field(0, ge=0, le=10_000)
    metric: RunMetric = "iops"


Performance = Annotated[
    PublishedPerformance | RunPerformance | ComparisonPerformance, Field(discriminator="source")
]


class PowerIn(InputSchema):
    idle_w: Watts
    load_w: Watts
    per: Literal["drive", "set"] = Field(description="figures of one drive (× count) or of the whole set")
    reference: str = Field(min_length=1, max_length=500)
    estimated: bool = Field(False, description="an estimate (e.g. from datasheet typicals), labelled so")


class JobPoint(InputSchema):
    label: str = Field(
        min_length=1, max_length=100, description="a load level (e.g. Song & Lee's Low, Medium, High)"
    )
    runtime_s: Annotated[Decimal, Field(ge=Decimal("0.000001"), le=10**9, allow_inf_nan=False)]
    power_w: Watts


class CandidateCreate(InputSchema):
    name: str = Field(min_length=1, max_length=200)
    device: DeviceIn
    count: int = Field(ge=1, le=100_000)
    protection: str = Field(
        min_length=1,
        max_length=40,
        description='jbod | raid0 | raid1 | raid5 | raid6 | raid10 | "ec:K+M" | "replica:N"',
    )
    hot_spares: int = Field(0, ge=0, le=100_000)
    over_provisioning: Annotated[Decimal, Field(ge=0, le=Decimal("0.9"), allow_inf_nan=False)] = Field(
        Decimal(0), description="share of usable space kept free (SSD over-provisioning, file-system reserve)"
    )
    performance: Performance
    power: PowerIn | None = None
    job_points: list[JobPoint] = Field(default_factory=list, max_length=50)
    reported: dict[str, Annotated[Decimal, Field(allow_inf_nan=False, ge=-(10**12), le=10**12)]] = Field(
        default_factory=dict,
        description="figures a published report gives for this candidate (keys as in the CSV: "
        "cost_per_iops_single, cost_per_gb_usable, ...); differences beyond its rounding are flagged",
    )


class CandidateUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=200)
    device: DeviceIn | None = None
    count: int | None = Field(None, ge=1, le=100_000)
    protection: str | None = Field(None, min_length=1, max_length=40)
    hot_spares: int | None = Field(None, ge=0, le=100_000)
    over_provisioning: Annotated[Decimal, Field(ge=0, le=Decimal("0.9"), allow_inf_nan=False)] | None = None
    performance: Performance | None = None
    power: PowerIn | None = None
    job_points: list[JobPoint] | None = Field(None, max_length=50)
    reported: dict[str, Annotated[Decimal, Field(allow_inf_nan=False, ge=-(10**12), le=10**12)]] | None = None


class DecisionCreate(InputSchema):
    candidate_id: uuid.UUID
    reason: str = Field(min_length=1, max_length=20_000)


class ReviewCommentCreate(InputSchema):
    body: str = Field(min_length=1, max_length=20_000)


# --- output ---------------------------------------------------------------------------------------


# A linked run's flags as the run page shows them, and what the review itself finds about the link.
ReviewValidityFlagName = Literal[
    RunValidityFlagName,
    "run_missing",
    "no_result",
    "energy_pending",
    "energy_failed",
    "energy_no_meter_data",
    "energy_none",
    "no_steady_state",
]
REVIEW_VALIDITY_FLAGS: dict[ReviewValidityFlagName, str] = {
    **{k: v for k, v in RUN_VALIDITY_FLAGS.items()},
    "run_missing": "the linked run no longer exists (review/service.py)",
    "no_result": "the linked run has no result for the chosen job (review/service.py)",
    "energy_pending": (
        "the linked run's energy is still being computed (EnergyRead.status pending; review/service.py)"
    ),
    "energy_failed": (
        "the linked run's energy could not be computed (EnergyRead.status failed; review/service.py)"
    ),
    "energy_no_meter_data": (
        "the linked run's meter sent no data (EnergyRead.status no_meter_data; review/service.py)"
    ),
    "energy_none": "the linked run had no meter (EnergyRead.status none; review/service.py)",
    "no_steady_state": "the linked run is not a SNIA PTS run and its device is not a hard disk: it gives "
    "no steady-state figure (review/service.py; a steady PTS run gives its window average instead)",
}


class ValidityNote(OutputSchema):
    flag: ReviewValidityFlagName = Field(description=describe_flags(REVIEW_VALIDITY_FLAGS.items()))
    message: str


if set(get_args(ReviewValidityFlagName)) != set(REVIEW_VALIDITY_FLAGS):  # pragma: no cover - import-time
    raise RuntimeError("ReviewValidityFlagName and REVIEW_VALIDITY_FLAGS disagree")


class Discrepancy(OutputSchema):
    field: str
    reported: Decimal
    computed: Decimal | None
    message: str


class JobEnergy(OutputSchema):
    label: str
    runtime_s: Decimal
    power_w: Decimal
    energy_j: Decimal = Field(description="run time × power")


class TcoParts(OutputSchema):
    purchase: Decimal
    energy: Decimal
    replacements: Decimal


class CandidateRead(OutputSchema):
    id: uuid.UUID
    position: int
    name: str
    model: str
    capacity_bytes: int
    unit_price: Decimal
    count: int
    hot_spares: int
    over_provisioning: Decimal
    protection: str
    afr: Decimal
    device_id: uuid.UUID | None
    performance_source: Literal["published", "run", "comparison"]
    performance_metric: str
    performance_value: Decimal | None = Field(description="of the configuration; null: the run has no result")
    performance_reference: str = Field(description="the published source, or the run it was read from")
    run_id: uuid.UUID | None
    run_ids: list[uuid.UUID]
    validity: list[ValidityNote] = Field(description="the linked run's validity flags (run/compare domains)")
    mb_s: Decimal | None
    power_source: PowerSource | None
    power_reference: str | None
    idle_w: Decimal | None = Field(description="the set's idle power, W")
    load_w: Decimal | None = Field(description="the set's power under load, W")
    drives: int
    data_drives: int
    raw_bytes: int
    usable_bytes: int
    protection_overhead: Decimal = Field(description="(raw − usable) / usable; 1 = 100 %")
    price_total: Decimal
    cost_per_iops_single: Decimal | None = Field(description="unit price / performance (IOPS or RPS)")
    cost_per_iops_set: Decimal | None = Field(description="set price / performance")
    cost_per_gb_raw: Decimal = Field(description="per GB of raw capacity, GB = 10^9 bytes")
    cost_per_gb_usable: Decimal | None = Field(description="per GB of usable capacity, GB = 10^9 bytes")
    cost_per_gb_usable_per_iops: Decimal | None = Field(
        description="set price per usable GB per IOPS/RPS (8 places), GB = 10^9 bytes"
    )
    iops_per_w: Decimal | None
    mb_s_per_w: Decimal | None
    energy_kwh_per_year: Decimal | None = Field(description="the devices' energy, 8,766 h a year")
    facility_kwh_per_year: Decimal | None = Field(description="× PUE")
    energy_cost_per_year: Decimal | None
    operational_kg_per_year: Decimal | None
    replacements: Decimal
    embodied_kg: Decimal | None
    embodied_source: str | None
    tco: Decimal
    tco_parts: TcoParts
    co2e_kg_lifetime: Decimal | None
    job_energy: list[JobEnergy]
    discrepancies: list[Discrepancy]


class RankRow(OutputSchema):
    rank: int
    candidate_id: uuid.UUID
    name: str
    score: Decimal
    scores: dict[str, Decimal] = Field(description="normalised score per criterion, 1 = best")


class SensitivityRow(OutputSchema):
    parameter: Literal["price", "tariff", "grid_intensity", "duty_cycle", "horizon"]
    base: Decimal
    low: Decimal
    high: Decimal
    flip_at: Decimal | None
    new_leader: str | None
    message: str


class JobCrossover(OutputSchema):
    labels: list[str]
    winners: list[str] = Field(description="per label, the candidate with the least energy per job")
    crossover: str | None = Field(description="the first label whose winner differs from the one before")
    message: str


class Decision(OutputSchema):
    candidate_id: uuid.UUID
    candidate_name: str
    decided_by: uuid.UUID | None
    decided_by_name: str
    decided_at: datetime
    reason: str


class FormulaRead(OutputSchema):
    name: str
    formula: str
    source: str


class ReviewRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
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
    environment_id: uuid.UUID | None
    weights: dict[str, Decimal]
    version: int
    parent_id: uuid.UUID | None
    created_by: uuid.UUID | None
    created_at: datetime
    updated_at: datetime
    decision: Decision | None
    hours_per_year: int
    gb_bytes: int
    candidates: list[CandidateRead]
    ranking: list[RankRow]
    normalisation: str
    leader: str | None
    sensitivity: list[SensitivityRow]
    job_crossover: JobCrossover | None
    methodology: list[FormulaRead]


class ReviewSummary(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    currency: str
    version: int
    parent_id: uuid.UUID | None
    candidates: int
    decided_at: datetime | None
    created_at: datetime


class ReviewPage(OutputSchema):
    items: list[ReviewSummary]
    total: int


class ReviewCommentRead(OutputSchema):
    id: uuid.UUID
    review_id: uuid.UUID
    author_id: uuid.UUID | None
    author_name: str
    body: str
    created_at: datetime
