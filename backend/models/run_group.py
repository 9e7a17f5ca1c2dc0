import uuid
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, String, false
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class RunGroup(Base):
    """A group run: one workload on targets of several agents, started at one instant (ADR 0038).

    Each member is an ordinary run with `group_id` (one agent each). The group's status is
    derived from its members' (backend/run/group.py), so the two never disagree; the row keeps
    what belongs to the group alone: the start barrier (`start_at`, server time, set when the
    last member reported ready), its tolerance, why the group stopped early (`stop_reason`, the
    first member that failed, was cancelled or lost, written once), whether the user cancelled
    it, whether a member missed the start (`unsynchronized`) and, when the members' targets are
    one store seen from several hosts (a SAN LUN, a network file system), its name."""

    __tablename__ = "run_groups"
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
    start_tolerance_ns: Mapped[int] = mapped_column(BigInteger)
    prepare_timeout_s: Mapped[float]
    start_at: Mapped[datetime | None]
    stop_reason: Mapped[str | None] = mapped_column(String(4000))
    cancelled: Mapped[bool] = mapped_column(default=False, server_default=false())
    unsynchronized: Mapped[bool] = mapped_column(default=False, server_default=false())
    shared_store: Mapped[str | None] = mapped_column(String(200))
