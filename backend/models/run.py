import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Enum, ForeignKey, Index, String, false, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column, relationship

from backend.models.agent import Agent
from backend.models.base import Base, created_at, uuid_pk
from backend.models.run_group import RunGroup  # noqa: F401 - registers run_groups (runs.group_id)


class RunStatus(str, enum.Enum):
    queued = "queued"
    assigned = "assigned"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


ACTIVE_STATUSES = (RunStatus.assigned, RunStatus.running)
FINAL_STATUSES = (RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled)


class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (
        # One run at a time per device, enforced by the database, not only by the dispatcher.
        Index(
            "uq_runs_active_device",
            "device_id",
            unique=True,
            postgresql_where=text("status IN ('assigned', 'running') AND device_id IS NOT NULL"),
        ),
        Index("ix_runs_team_created", "team_id", "created_at"),
        Index("ix_runs_status", "status"),
        # the runs list at a million runs (migration 0022, docs/benchmarks.md § A million runs)
        Index("ix_runs_created_id", "created_at", "id"),
        Index("ix_runs_device_created", "device_id", "created_at"),
        Index("ix_runs_workload_created", "workload_id", "created_at"),
        Index("ix_runs_name", "name"),
        # one agent's runs, newest first, and their bounded count from the index alone (migration
        # 0025); also every lookup by agent
        Index("ix_runs_agent_created", "agent_id", "created_at", postgresql_include=["team_id"]),
        # the runs list's text search (ILIKE '%word%' on the name; migration 0024, pg_trgm)
        Index("ix_runs_name_trgm", "name", postgresql_using="gin", postgresql_ops={"name": "gin_trgm_ops"}),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    # "agent": queued here and run by an agent; "import": a finished result uploaded (uploader scope)
    source: Mapped[str] = mapped_column(String(16), default="agent", server_default="agent")
    status: Mapped[RunStatus] = mapped_column(Enum(RunStatus, name="run_status"), default=RunStatus.queued)
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"))
    device_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("devices.id", ondelete="SET NULL"))
    environment_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("environments.id", ondelete="SET NULL")
    )
    # the environment as it was when the run was stored (Environment.snapshot, recorded by
    # models/environment.py on insert; EnvironmentSnapshot): editing it later rewrites no run
    environment_snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    workload_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("workloads.id", ondelete="SET NULL"))
    workload_spec: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # the built-in preset the run was created from (its workload's name, run/service.create); null = an
    # inline or saved workload, an imported result, or a run stored before migration 0014 recorded it
    preset: Mapped[str | None] = mapped_column(String(120))
    target_path: Mapped[str] = mapped_column(String(4096))
    campaign_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("campaigns.id", ondelete="SET NULL"), index=True
    )
    # the NAME of a meter the host configured ("" = none, null = the host's default); never a spec
    meter: Mapped[str | None] = mapped_column(String(120))
    # the run's key of the two-key rule for raw devices (ADR 0009 §5)
    destructive: Mapped[bool] = mapped_column(default=False, server_default=false())
    idle_s: Mapped[float | None]  # idle baseline before and after the load, seconds
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
    assigned_at: Mapped[datetime | None]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    lease_id: Mapped[uuid.UUID | None]
    # the agent process (its heartbeat's boot id) that started the run; null = unknown
    started_boot_id: Mapped[uuid.UUID | None]
    lease_expires_at: Mapped[datetime | None]
    attempt: Mapped[int] = mapped_column(default=0)
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    error: Mapped[str | None] = mapped_column(String(4000))
    progress: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # imported and published runs (backend/imports): {"kind": "imported"|"published", "tool", "version",
    # "format", "file_id", "file_name", "sha256", ...}; null for runs measured by an agent
    origin: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # a member of a group run (models/run_group.py) and its start barrier: when it reported ready,
    # its clock's offset from the server's (server minus agent) with the round trip that bounds it
    # (the true offset lies within half of it), and how far its engine's start missed the group's
    # start_at (in server time; positive = late)
    group_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("run_groups.id", ondelete="SET NULL"), index=True
    )
    ready_at: Mapped[datetime | None]
    clock_offset_ns: Mapped[int | None] = mapped_column(BigInteger)
    clock_round_trip_ns: Mapped[int | None] = mapped_column(BigInteger)
    start_skew_ns: Mapped[int | None] = mapped_column(BigInteger)

    agent: Mapped[Agent] = relationship(lazy="raise")
