"""All SQL of the campaign domain."""

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.kit.repository import page_of
from backend.models import ACTIVE_STATUSES, Agent, Campaign, Environment, Run


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


def team_agents(session: Session, team_id: uuid.UUID) -> list[Agent]:
    """The team's agents (not deleted), by name."""
    return list(
        session.scalars(
            select(Agent)
            .where(Agent.team_id == team_id, Agent.deleted_at.is_(None))
            .order_by(Agent.name, Agent.id)
        )
    )


def environment_in_team(session: Session, environment_id: uuid.UUID, team_id: uuid.UUID) -> bool:
    env = session.get(Environment, environment_id)
    return env is not None and env.team_id == team_id


def agents(session: Session, agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, Agent]:
    return {a.id: a for a in session.scalars(select(Agent).where(Agent.id.in_(agent_ids)))}


def busy_agents(session: Session, agent_ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Agents holding a run now (assigned or running)."""
    return set(
        session.scalars(
            select(Run.agent_id)
            .where(Run.agent_id.in_(agent_ids), Run.status.in_(ACTIVE_STATUSES))
            .distinct()
        )
    )
