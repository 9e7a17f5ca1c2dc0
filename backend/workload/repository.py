import uuid

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from backend.models import Workload


def visible(session: Session, team_ids: list[uuid.UUID]) -> tuple[list[Workload], int]:
    cond = or_(Workload.team_id.is_(None), Workload.team_id.in_(team_ids))
    rows = list(
        session.scalars(select(Workload).where(cond).order_by(Workload.builtin.desc(), Workload.name))
    )
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
