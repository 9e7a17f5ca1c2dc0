import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base


class PowerSample(Base):
    """One wattmeter reading of a run (idle before, load, idle after), bulk-loaded with COPY.

    `t_ns` is on the agent's monotonic clock since the run's `RunPower.t0_utc`; `value` is W for
    `power`/`power_avg` meters and J for `energy_counter` meters (see RunPower.meter.quantity).
    """

    __tablename__ = "power_samples"
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    t_ns: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    value: Mapped[float]


class RunPower(Base):
    """How a run's power was measured: meter, phases in the agent's clock, what the agent dropped."""

    __tablename__ = "run_power"
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    meter: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[str] = mapped_column(String(20))  # ok | no_meter_data
    reason: Mapped[str | None] = mapped_column(String(2000))
    t0_utc: Mapped[datetime]
    phases: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    agent_cleaning: Mapped[dict[str, int]] = mapped_column(JSONB)
    server_cleaning: Mapped[dict[str, int]] = mapped_column(JSONB)
    samples: Mapped[int]


class RunEnergy(Base):
    """Energy and carbon of a run, recomputed by the worker from the stored samples."""

    __tablename__ = "run_energy"
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    summary: Mapped[dict[str, Any]] = mapped_column(JSONB)  # iowatt_energy.EnergySummary, whole
    tier: Mapped[str] = mapped_column(String(20))
    estimated: Mapped[bool]
    idle_w: Mapped[float | None]
    load_w_mean: Mapped[float]
    runtime_s: Mapped[float]
    total_j: Mapped[float]
    dynamic_j: Mapped[float | None]
    uncertainty_j: Mapped[float]
    j_per_gb: Mapped[float | None]
    j_per_mio: Mapped[float | None]
    iops_per_w: Mapped[float | None]
    mb_s_per_w: Mapped[float | None]
    grid_g_per_kwh: Mapped[float]
    grid_source: Mapped[str] = mapped_column(String(500))
    carbon_method: Mapped[str] = mapped_column(String(20))  # annual | hourly | override
    pue: Mapped[float]
    operational_gco2e: Mapped[float]
    dynamic_gco2e: Mapped[float | None]
    embodied_gco2e: Mapped[float | None]
    embodied_source: Mapped[str | None] = mapped_column(String(500))
    computed_at: Mapped[datetime]


class GridIntensityHour(Base):
    """An imported hourly grid-intensity series for an environment (UTC hour starts)."""

    __tablename__ = "grid_intensity_hours"
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    hour_utc: Mapped[datetime] = mapped_column(primary_key=True)
    g_per_kwh: Mapped[float]
