import uuid
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import AuditEvent


def add(session: Session, event: AuditEvent) -> None:
    session.add(event)


def page(
    session: Session,
    team_id: uuid.UUID,
    *,
    action: str | None,
    since: datetime | None,
    limit: int,
    offset: int,
) -> tuple[list[AuditEvent], int]:
    """A team's events, newest first."""
    q = select(AuditEvent).where(AuditEvent.team_id == team_id)
    if action:
        q = q.where(AuditEvent.action.startswith(action))
    if since is not None:
        q = q.where(AuditEvent.at >= since)
    total = session.scalar(select(func.count()).select_from(q.subquery())) or 0
    rows = session.scalars(q.order_by(AuditEvent.at.desc(), AuditEvent.id).limit(limit).offset(offset))
    return list(rows), total
