import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class AuditEvent(Base):
    """One thing someone did in a team: created, shared, revoked, deleted, invited, changed a role,
    enrolled or revoked an agent. Written in the same transaction as the change (backend/audit)."""

    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_events_team_at", "team_id", "at"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    at: Mapped[datetime] = created_at()
    # who: a user (kept as a label if the user is deleted later), an agent, or the server operator
    actor_user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    actor: Mapped[str] = mapped_column(String(400))
    action: Mapped[str] = mapped_column(String(60))  # e.g. "run.deleted", "member.role_changed"
    target_kind: Mapped[str] = mapped_column(String(40))  # run, share_link, invitation, member, ...
    target_id: Mapped[str | None] = mapped_column(String(200))
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
