"""All SQL of the campaign domain."""

import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import Campaign, Run


def get(session: Session, campaign_id: uuid.UUID) -> Campaign | None:
    return session.get(Campaign, campaign_id)


def page(
    session: Session, team_ids: list[uuid.UUID], *, limit: int, offset: int
) -> tuple[list[Campaign], int]:
    """A page of the teams' campaigns, newest first, and how many there are."""
    cond = Campaign.team_id.in_(team_ids)
    rows = session.scalars(
        select(Campaign).where(cond).order_by(Campaign.created_at.desc()).limit(limit).offset(offset)
    )
    total = session.scalar(select(func.count()).select_from(Campaign).where(cond)) or 0
    return list(rows), total


def runs_of(session: Session, campaign_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[Run]]:
    out: dict[uuid.UUID, list[Run]] = {i: [] for i in campaign_ids}
    for r in session.scalars(
        select(Run).where(Run.campaign_id.in_(campaign_ids)).order_by(Run.created_at, Run.id)
    ):
        assert r.campaign_id is not None
        out[r.campaign_id].append(r)
    return out
