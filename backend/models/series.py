import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint, false, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class Series(Base):
    """What a team tracks over time: a workload (by fingerprint) on a target in an environment,
    optionally one metric of one job. Found from runs as their results are stored (backend/series)."""

    __tablename__ = "series"
    __table_args__ = (UniqueConstraint("team_id", "key", name="uq_series_team_key"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    # sha256 over canonical JSON of (fingerprint, target, environment, metric, job)
    key: Mapped[str] = mapped_column(String(64))
    workload_fingerprint: Mapped[str] = mapped_column(String(64))
    target_kind: Mapped[str] = mapped_column(String(16))  # device | path | group
    agent_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("agents.id", ondelete="SET NULL"), index=True
    )
    device_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("devices.id", ondelete="SET NULL"), index=True
    )
    target_path: Mapped[str | None] = mapped_column(String(4096))
    environment_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("environments.id", ondelete="SET NULL")
    )
    workload_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("workloads.id", ondelete="SET NULL"), index=True
    )
    metric: Mapped[str | None] = mapped_column(String(40))
    job_index: Mapped[int | None]
    name: Mapped[str] = mapped_column(String(200))
    pinned: Mapped[bool] = mapped_column(default=False, server_default=false())
    archived_at: Mapped[datetime | None]
    thresholds: Mapped[dict[str, Any]] = mapped_column(
        JSONB, default=dict, server_default=text("'{}'::jsonb")
    )
    run_count: Mapped[int] = mapped_column(default=0, server_default="0")
    last_run_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = created_at()


class SeriesRun(Base):
    __tablename__ = "series_runs"
    __table_args__ = (Index("ix_series_runs_series_at", "series_id", "at"),)
    series_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("series.id", ondelete="CASCADE"), primary_key=True
    )
    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    at: Mapped[datetime]  # the run's measured start (its result's), the history's x axis
    # validity flags that leave the run out of change detection: [{"flag", "message"}]
    excluded: Mapped[list[dict[str, Any]]] = mapped_column(
        JSONB, default=list, server_default=text("'[]'::jsonb")
    )
    # sha256 of the host facts and conditions (virtualised, unconditioned...): a new segment when they change
    segment: Mapped[str] = mapped_column(String(64))
    # kernel, firmware, fstype, mount_options, engine_version as the run recorded them
    facts: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))


class SeriesDetection(Base):
    """A change found in one metric of one job of a series: a change point in its history or a new
    run's test against its lookback window."""

    __tablename__ = "series_detections"
    __table_args__ = (
        UniqueConstraint(
            "series_id", "metric", "job_index", "kind", "run_id", name="uq_series_detections_change"
        ),
        Index("ix_series_detections_series_at", "series_id", "at"),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    series_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("series.id", ondelete="CASCADE"))
    metric: Mapped[str] = mapped_column(String(40))
    job_index: Mapped[int]
    kind: Mapped[str] = mapped_column(String(16))  # change_point | new_run
    direction: Mapped[str] = mapped_column(String(16))  # regression | improvement
    run_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    previous_run_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    at: Mapped[datetime]
    mean_before: Mapped[float]
    mean_after: Mapped[float]
    change_pct: Mapped[float]
    change_pct_low: Mapped[float | None]
    change_pct_high: Mapped[float | None]
    runs_before: Mapped[int]
    runs_after: Mapped[int]
    method: Mapped[str] = mapped_column(String(40))
    parameters: Mapped[dict[str, Any]] = mapped_column(JSONB)
    p_value: Mapped[float | None]
    # runs left out of the windows and why: [{"run_id", "reasons": [...]}]
    excluded: Mapped[list[dict[str, Any]]] = mapped_column(
        JSONB, default=list, server_default=text("'[]'::jsonb")
    )
    status: Mapped[str] = mapped_column(String(16), default="open", server_default="open")
    comment: Mapped[str] = mapped_column(Text, default="", server_default="")
    status_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    status_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = created_at()


class SeriesTeamSettings(Base):
    """A team's default detection thresholds (a series' own thresholds win)."""

    __tablename__ = "series_team_settings"
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True)
    thresholds: Mapped[dict[str, Any]] = mapped_column(
        JSONB, default=dict, server_default=text("'{}'::jsonb")
    )
