import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class Workload(Base):
    """A named, validated engine job spec. Built-in presets have no team."""

    __tablename__ = "workloads"
    __table_args__ = (UniqueConstraint("team_id", "name"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    description: Mapped[str] = mapped_column(String(2000), default="")
    spec: Mapped[dict[str, Any]] = mapped_column(JSONB)
    builtin: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = created_at()
