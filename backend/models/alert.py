import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class AlertChannel(Base):
    """Where a team's alerts go: a signed webhook, or an Apprise URL (e-mail, Slack, Teams, ...)."""

    __tablename__ = "alert_channels"
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    kind: Mapped[str] = mapped_column(String(16))  # webhook | apprise
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str | None] = mapped_column(String(128))  # a webhook's HMAC-SHA256 key
    events: Mapped[list[str]] = mapped_column(JSONB)
    agent_offline_min: Mapped[int] = mapped_column(default=10)
    enabled: Mapped[bool] = mapped_column(default=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()


class Alert(Base):
    """Something a team is told about, raised once per subject (the key)."""

    __tablename__ = "alerts"
    __table_args__ = (
        UniqueConstraint("team_id", "kind", "key", name="uq_alerts_subject"),
        Index("ix_alerts_team_created", "team_id", "created_at"),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    key: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(String(300))
    text: Mapped[str] = mapped_column(Text)
    link: Mapped[str] = mapped_column(String(500))
    details: Mapped[dict[str, Any]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = created_at()


class AlertDelivery(Base):
    """One alert to one channel: sent once, retried with backoff until it is or gives up."""

    __tablename__ = "alert_deliveries"
    __table_args__ = (
        UniqueConstraint("alert_id", "channel_id", name="uq_alert_deliveries_pair"),
        Index("ix_alert_deliveries_due", "state", "next_attempt_at"),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    alert_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"))
    channel_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("alert_channels.id", ondelete="CASCADE"), index=True
    )
    state: Mapped[str] = mapped_column(String(16), default="pending")  # pending | sent | failed
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime]
    last_error: Mapped[str | None] = mapped_column(String(500))
    response_status: Mapped[int | None]
    sent_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = created_at()
