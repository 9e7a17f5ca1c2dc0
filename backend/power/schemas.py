import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, model_validator

from backend.kit.schema import InputSchema, OutputSchema

TierName = Literal["lab", "bmc", "pdu", "plug", "inband", "component", "estimate", "unknown"]
QuantityName = Literal["power", "power_avg", "energy_counter"]


MAX_SAMPLES = 2_000_000  # 6 h at 10 Hz is 216,000 (plus idle): ample, and still bounded
BIGINT = 2**63 - 1


class MeterInfo(InputSchema):
    name: str | None = Field(
        None,
        max_length=120,
        description="the meter's name on the host (ADR 0009); null from older agents and local bench",
    )
    spec: str | None = Field(
        None,
        max_length=1000,
        description="sent by agents older than ADR 0009; ignored, never stored or shown",
        json_schema_extra={"deprecated": True},
    )
    driver: str = Field(max_length=50)
    model: str = Field("", max_length=300)
    tier: TierName
    quantity: QuantityName
    accuracy_pct: float | None = Field(None, ge=0, le=100)
    accuracy_w: float | None = Field(None, ge=0)
    accuracy_declared: bool = False
    nominal_interval_s: float = Field(1.0, gt=0, le=3600)


class PhaseIn(InputSchema):
    name: str = Field(min_length=1, max_length=50)
    start_ns: int = Field(ge=0, le=BIGINT)
    end_ns: int = Field(ge=0, le=BIGINT)

    @model_validator(mode="after")
    def _ordered(self) -> "PhaseIn":
        if self.end_ns < self.start_ns:
            raise ValueError("end_ns is before start_ns")
        return self


class SamplesIn(InputSchema):
    t_ns: list[Annotated[int, Field(ge=-BIGINT, le=BIGINT)]] = Field(max_length=MAX_SAMPLES)
    value: list[float] = Field(max_length=MAX_SAMPLES)

    @model_validator(mode="after")
    def _same_length(self) -> "SamplesIn":
        if len(self.t_ns) != len(self.value):
            raise ValueError(f"t_ns has {len(self.t_ns)} entries but value has {len(self.value)}")
        return self


class PowerUpload(InputSchema):
    """The agent's power measurement of a run (docs/contracts.md §4)."""

    meter: MeterInfo
    status: Literal["ok", "no_meter_data"]
    reason: str | None = Field(None, max_length=2000)
    t0_utc: datetime
    phases: list[PhaseIn] = Field(max_length=100)
    samples: SamplesIn
    cleaning: dict[Annotated[str, Field(max_length=50)], Annotated[int, Field(ge=0, le=BIGINT)]] = Field(
        default_factory=dict, max_length=20
    )

    @model_validator(mode="after")
    def _load_phase(self) -> "PowerUpload":
        if self.status == "ok" and not any(p.name == "load" for p in self.phases):
            raise ValueError("phases must include the 'load' phase")
        return self


class PhaseRead(OutputSchema):
    name: str
    start_ns: int
    end_ns: int


class PhaseEnergy(OutputSchema):
    name: str
    duration_s: float
    mean_w: float
    energy_j: float
    samples: int
    coverage: float


class EnergyRead(OutputSchema):
    """A run's energy and carbon. `status`: ok | pending (being computed: ask again) | failed (not
    computed in time; `reason` says why) | no_meter_data | none. Every status but `pending` is final
    for a client: it stops polling."""

    status: Literal["ok", "pending", "failed", "no_meter_data", "none"]
    reason: str | None
    source: str | None = Field(description="the meter as shown: its name and driver (never its spec)")
    meter_name: str | None = Field(description='the meter\'s name on the host ("" when the agent gave none)')
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
    gco2e_per_tb: float | None  # operational CO2 per TB read and written (decimal TB)
    dynamic_gco2e: float | None
    embodied_gco2e: float | None
    embodied_source: str | None
    phases: list[PhaseEnergy]
    dropped: dict[str, int]


class PowerPoint(OutputSchema):
    t_s: float  # seconds since the load phase started (negative during idle before)
    w_mean: float
    w_min: float
    w_max: float


class PowerSeries(OutputSchema):
    run_id: uuid.UUID
    status: str
    reason: str | None
    tier: str
    tier_label: str
    estimated: bool
    source: str = Field(description="the meter as shown: its name and driver (never its spec)")
    meter_name: str
    meter_driver: str
    quantity: str
    t0_utc: datetime
    load_start_s: float
    phases: list[PhaseRead]
    points: list[PowerPoint]
