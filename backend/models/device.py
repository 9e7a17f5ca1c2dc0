import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class Device(Base):
    """A storage device (or RAM file system) on an agent's host; runs target one at a time."""

    __tablename__ = "devices"
    __table_args__ = (UniqueConstraint("agent_id", "key"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(300))
    name: Mapped[str] = mapped_column(String(300))
    kind: Mapped[str] = mapped_column(String(40))
    facts: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    # embodied carbon: media decides the default; an override with its source wins
    media: Mapped[str | None] = mapped_column(String(20))  # hdd | ssd | ram | virtual | unknown
    capacity_bytes: Mapped[int | None] = mapped_column(BigInteger)
    embodied_kg: Mapped[float | None]
    embodied_source: Mapped[str | None] = mapped_column(String(500))
    notes: Mapped[str] = mapped_column(Text, default="", server_default="")
    lifetime_years: Mapped[float] = mapped_column(default=5.0, server_default="5.0")
    created_at: Mapped[datetime] = created_at()
