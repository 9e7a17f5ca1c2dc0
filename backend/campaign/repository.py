"""All SQL of the campaign domain."""

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.kit.repository import page_of
from backend.models import Campaign, Run


def get(session: Session, campaign_id: uuid.UUID) -> Campaign | None:
    return session.get(Campaign, campaign_id)


def page(
    session: Session, team_ids: list[uuid.UUID], *, limit: int, offset: int
) -> tuple[list[Campaign], int]:
    """A page of the teams' campaigns, newest first, and how many there are."""
    return page_of(
        session,
        Campaign,
        Campaign.team_id.in_(team_ids),
        order_by=(Campaign.created_at.desc(),),
        limit=limit,
        offset=offset,
    )


def runs_of(session: Session, campaign_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[Run]]:
    out: dict[uuid.UUID, list[Run]] = {i: [] for i in campaign_ids}
    for r in session.scalars(
        select(Run).where(Run.campaign_id.in_(campaign_ids)).order_by(Run.created_at, Run.id)
    ):
        assert r.campaign_id is not None
        out[r.campaign_id].append(r)
    return out
