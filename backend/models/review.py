import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, Integer, Numeric, String, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk

# money and rates are NUMERIC, never floats
MONEY = Numeric(18, 4)


class Review(Base):
    """A procurement review: the question, the economic context (currency, horizon, duty cycle,
    tariff, grid intensity, PUE), criteria weights and, once decided, the decision with a frozen copy
    of every figure. A new version is a new row whose `parent_id` names the one it was copied from."""

    __tablename__ = "reviews"
    __table_args__ = (
        CheckConstraint("duty_cycle >= 0 AND duty_cycle <= 1", name="duty_cycle"),
        CheckConstraint("horizon_years > 0", name="horizon_years"),
        CheckConstraint("pue >= 1", name="pue"),
        Index("ix_reviews_team_created", "team_id", "created_at"),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    question: Mapped[str] = mapped_column(Text, default="", server_default="")
    currency: Mapped[str] = mapped_column(String(3))
    horizon_years: Mapped[Decimal] = mapped_column(Numeric(6, 2))
    duty_cycle: Mapped[Decimal] = mapped_column(Numeric(6, 5))
    tariff_per_kwh: Mapped[Decimal] = mapped_column(Numeric(12, 6))
    tariff_source: Mapped[str] = mapped_column(String(500))
    grid_g_per_kwh: Mapped[Decimal] = mapped_column(Numeric(10, 3))
    grid_source: Mapped[str] = mapped_column(String(500))
    pue: Mapped[Decimal] = mapped_column(Numeric(5, 3))
    environment_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("environments.id", ondelete="SET NULL")
    )
    weights: Mapped[dict[str, Any]] = mapped_column(JSONB)  # criterion -> decimal string
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    parent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("reviews.id", ondelete="SET NULL"))
    decided_at: Mapped[datetime | None]
    decided_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    decided_by_name: Mapped[str | None] = mapped_column(String(200))
    decision_candidate_id: Mapped[uuid.UUID | None]
    decision_reason: Mapped[str | None] = mapped_column(Text)
    # every computed figure as it stood when decided (the frozen review reads from here)
    decided_snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())


class ReviewCandidate(Base):
    """A device model × count × protection × price, with its performance and power (published
    figures with their source, or a linked run read live) and lifetime data."""

    __tablename__ = "review_candidates"
    __table_args__ = (
        CheckConstraint("count >= 1", name="count"),
        CheckConstraint("unit_price >= 0", name="unit_price"),
        CheckConstraint("hot_spares >= 0", name="hot_spares"),
        Index("ix_review_candidates_review", "review_id", "position"),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    review_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("reviews.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(200))
    model: Mapped[str] = mapped_column(String(300))
    capacity_bytes: Mapped[int] = mapped_column(BigInteger)
    unit_price: Mapped[Decimal] = mapped_column(MONEY)
    count: Mapped[int] = mapped_column(Integer)
    protection: Mapped[str] = mapped_column(String(40))
    hot_spares: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    over_provisioning: Mapped[Decimal] = mapped_column(Numeric(6, 5), default=0, server_default="0")
    afr: Mapped[Decimal] = mapped_column(Numeric(7, 6), default=0, server_default="0")
    embodied_kg_per_drive: Mapped[Decimal | None] = mapped_column(Numeric(12, 3))
    embodied_source: Mapped[str | None] = mapped_column(String(500))
    device_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("devices.id", ondelete="SET NULL"))
    # {source: published|run|comparison, metric, value, reference, run_id, run_ids, job_index}
    performance: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # {source: published|run, idle_w, load_w, per: drive|set, reference} or null
    power: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # [{label, runtime_s, power_w}]: per-job points (e.g. Song & Lee's PostMark levels)
    job_points: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list, server_default="[]")
    # figures a published report gave for this candidate, to check ours against
    reported: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    created_at: Mapped[datetime] = created_at()


class ReviewComment(Base):
    """A comment in a review's discussion (kept across the decision: discussing is not editing)."""

    __tablename__ = "review_comments"
    __table_args__ = (Index("ix_review_comments_review", "review_id", "created_at"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    review_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("reviews.id", ondelete="CASCADE"))
    author_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at()
