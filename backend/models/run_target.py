import uuid
from typing import Any

from sqlalchemy import ForeignKey, Index, SmallInteger, String, false, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base


class RunTarget(Base):
    """One target of a multi-target run (a run on several targets of one agent at once); a
    single-target run has no rows here. Target 0 is also the run's own `target_path`/`device_id`.

    `held` is true while the run is assigned or running (set by the run's transitions only): one
    device is held by one run at a time, enforced by the partial unique index beside the runs'
    own. `engine_result` is that target's engine document as the agent uploaded it, `jobs` its
    key figures per job (JobSummary objects); the run's `run_results` row holds the combined
    document (backend/result/combine.py)."""

    __tablename__ = "run_targets"
    __table_args__ = (
        Index(
            "uq_run_targets_held_device",
            "device_id",
            unique=True,
            postgresql_where=text("held AND device_id IS NOT NULL"),
        ),
        Index("ix_run_targets_device", "device_id"),  # the runs list's device filter (migration 0022)
    )
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    target_index: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    target_path: Mapped[str] = mapped_column(String(4096))
    device_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("devices.id", ondelete="SET NULL"))
    held: Mapped[bool] = mapped_column(default=False, server_default=false())
    engine_exit_code: Mapped[int | None]
    engine_result: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    jobs: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB)
