import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class EnrollmentToken(Base):
    """Lets a host enrol as an agent of one team; reusable until it expires or is revoked."""

    __tablename__ = "enrollment_tokens"
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    uses: Mapped[int] = mapped_column(default=0)


class Agent(Base):
    __tablename__ = "agents"
    __table_args__ = (UniqueConstraint("team_id", "name"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    hostname: Mapped[str] = mapped_column(String(255))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    agent_version: Mapped[str] = mapped_column(String(50), default="")
    state: Mapped[str] = mapped_column(String(20), default="idle")
    inventory: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    online: Mapped[bool] = mapped_column(default=False)
    last_heartbeat_at: Mapped[datetime | None]
    enrolled_at: Mapped[datetime] = created_at()
    revoked_at: Mapped[datetime | None]
