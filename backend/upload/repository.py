"""SQL of the upload domain: the external hosts uploaded results name."""

import uuid

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.models import Agent


def live_host(session: Session, team_id: uuid.UUID, name: str) -> Agent | None:
    """The team's live (not deleted) agent or external host of this name."""
    return session.scalar(
        select(Agent).where(Agent.team_id == team_id, Agent.name == name, Agent.deleted_at.is_(None))
    )


def add_host(session: Session, host: Agent) -> Agent:
    """Insert a new external host; when another upload made one of this name meanwhile, that one."""
    try:
        with session.begin_nested():
            session.add(host)
            session.flush()
    except IntegrityError:  # uq_agents_team_name_live: a concurrent upload named it first
        found = live_host(session, host.team_id, host.name)
        if found is None:
            raise
        return found
    return host
