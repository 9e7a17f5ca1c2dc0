import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class Environment(Base):
    """Where a device runs: local, DAS, SAN, NAS, a RAID level...; carries energy context later."""

    __tablename__ = "environments"
    __table_args__ = (UniqueConstraint("team_id", "name"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    kind: Mapped[str] = mapped_column(String(40))
    description: Mapped[str] = mapped_column(String(2000), default="")
    notes: Mapped[str] = mapped_column(Text, default="", server_default="")
    # carbon and cost context: a region code from the default table, or a fixed override
    region: Mapped[str | None] = mapped_column(String(20))
    grid_g_per_kwh: Mapped[float | None]
    grid_source: Mapped[str | None] = mapped_column(String(500))
    pue: Mapped[float] = mapped_column(default=1.0, server_default="1.0")
    electricity_price_per_kwh: Mapped[float | None]
    currency: Mapped[str] = mapped_column(String(3), default="EUR", server_default="EUR")
    created_at: Mapped[datetime] = created_at()
