import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint, event, text
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, Session, mapped_column

from backend.models.base import Base, created_at, uuid_pk
from backend.models.run import Run

SNAPSHOT_VERSION = 1


class Environment(Base):
    """Where a device runs: its kind, its storage topology (RAID, controller, fabric, NAS, file
    system: backend/environment/schemas.py EnvironmentTopology) and its energy context."""

    __tablename__ = "environments"
    __table_args__ = (UniqueConstraint("team_id", "name"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    kind: Mapped[str] = mapped_column(String(40))
    description: Mapped[str] = mapped_column(String(2000), default="")
    notes: Mapped[str] = mapped_column(Text, default="", server_default="")
    # EnvironmentTopology.stored(): only the parts known; {} = nothing known (environments before 0016)
    topology: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    # carbon and cost context: a region code from the default table, or a fixed override
    region: Mapped[str | None] = mapped_column(String(20))
    grid_g_per_kwh: Mapped[float | None]
    grid_source: Mapped[str | None] = mapped_column(String(500))
    pue: Mapped[float] = mapped_column(default=1.0, server_default="1.0")
    electricity_price_per_kwh: Mapped[float | None]
    currency: Mapped[str] = mapped_column(String(3), default="EUR", server_default="EUR")
    created_at: Mapped[datetime] = created_at()

    def snapshot(self, at: datetime) -> dict[str, Any]:
        """The environment as it is now, as a run records it (EnvironmentSnapshot; migration 0016
        builds the same document in SQL for the runs stored before it)."""
        return {
            "version": SNAPSHOT_VERSION,
            "environment_id": str(self.id),
            "name": self.name,
            "kind": self.kind,
            "description": self.description or "",
            "topology": dict(self.topology or {}),
            "region": self.region,
            "grid_g_per_kwh": self.grid_g_per_kwh,
            "grid_source": self.grid_source,
            "pue": self.pue if self.pue is not None else 1.0,
            "electricity_price_per_kwh": self.electricity_price_per_kwh,
            "currency": self.currency or "EUR",
            "recorded_at": at.isoformat(),
        }


@event.listens_for(Session, "before_flush")
def _record_environment_of_new_runs(session: Session, _context: object, _instances: object) -> None:
    """Every run stored with an environment records it as it is then (ADR 0035): queued here, by
    a campaign, uploaded from CI or imported, whatever path made it, and a stored run given another
    environment records that one. Editing the environment later changes none of them; a run
    without one, detached from its deleted one, or given a snapshot already, keeps what it has."""
    now = datetime.now(UTC)
    pending = {o.id: o for o in session.new if isinstance(o, Environment)}  # not in the identity map yet
    runs = [o for o in session.new if isinstance(o, Run) and o.environment_snapshot is None]
    # a stored run given another environment records that one, as it is then; detached (None) keeps its own
    runs += [
        o
        for o in session.dirty
        if isinstance(o, Run)
        and sa_inspect(o).attrs.environment_id.history.has_changes()
        and not sa_inspect(o).attrs.environment_snapshot.history.has_changes()
    ]
    for obj in runs:
        if obj.environment_id is not None:
            env = pending.get(obj.environment_id) or session.get(Environment, obj.environment_id)
            if env is not None:
                obj.environment_snapshot = env.snapshot(now)
