import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class Schedule(Base):
    """A recurring campaign: a cron expression in a time zone, or every N hours.

    `next_slot_at` is the next instant it is due (UTC); the periodic tick claims due slots."""

    __tablename__ = "schedules"
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    cron: Mapped[str | None] = mapped_column(String(200))
    every_hours: Mapped[int | None] = mapped_column(Integer)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    campaign: Mapped[dict[str, Any]] = mapped_column(JSONB)  # a CampaignCreate body
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    next_slot_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()


class ScheduleSlot(Base):
    """One due instant of a schedule, claimed once (the unique key: two ticks never run one slot
    twice): queued with its campaign, or skipped with the reason."""

    __tablename__ = "schedule_slots"
    __table_args__ = (UniqueConstraint("schedule_id", "slot_at", name="uq_schedule_slots_slot"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    schedule_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"))
    slot_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(16))  # queued | skipped
    reason: Mapped[str | None] = mapped_column(String(500))
    campaign_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("campaigns.id", ondelete="SET NULL"))
    skipped_targets: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)
    created_at: Mapped[datetime] = created_at()
