import uuid

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from backend.models import Workload


def visible(
    session: Session, team_ids: list[uuid.UUID], *, limit: int, offset: int = 0
) -> tuple[list[Workload], int]:
    """A page of the built-in workloads and the teams' own (built-in first, by name), and how many
    there are: a team's saved workloads grow without bound (issue 30)."""
    cond = or_(Workload.team_id.is_(None), Workload.team_id.in_(team_ids))
    order = (Workload.builtin.desc(), Workload.name, Workload.id)
    rows = list(session.scalars(select(Workload).where(cond).order_by(*order).limit(limit).offset(offset)))
    total = session.scalar(select(func.count()).select_from(Workload).where(cond)) or 0
    return rows, total


def get_visible(session: Session, workload_id: uuid.UUID, team_ids: list[uuid.UUID]) -> Workload | None:
    return session.scalar(
        select(Workload).where(
            Workload.id == workload_id, or_(Workload.team_id.is_(None), Workload.team_id.in_(team_ids))
        )
    )


def builtin_by_name(session: Session, name: str) -> Workload | None:
    return session.scalar(select(Workload).where(Workload.builtin.is_(True), Workload.name == name))
