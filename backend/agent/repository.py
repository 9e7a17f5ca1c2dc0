import uuid
from datetime import datetime

from sqlalchemy import Exists, exists, func, or_, select, update
from sqlalchemy.orm import Session

from backend.models import ACTIVE_STATUSES, Agent, EnrollmentToken, Run, RunStatus


def enrollment_by_hash(session: Session, token_hash: str) -> EnrollmentToken | None:
    return session.scalar(
        select(EnrollmentToken).where(EnrollmentToken.token_hash == token_hash).with_for_update()
    )


def enrollment_tokens(session: Session, team_ids: list[uuid.UUID]) -> list[EnrollmentToken]:
    return list(
        session.scalars(
            select(EnrollmentToken)
            .where(EnrollmentToken.team_id.in_(team_ids))
            .order_by(EnrollmentToken.created_at.desc(), EnrollmentToken.id)
        )
    )


def by_token_hash(session: Session, digest: str) -> tuple[Agent, bool] | None:
    """The agent whose current or previous token has this hash (docs/adr/0011), re-read, and
    whether a run is assigned to it or running on it (as `with_runs_held`): every agent request
    reads its agent here, and the heartbeat and the long-poll's look need nothing more of it."""
    q = (
        select(Agent, _runs_held())
        .where(or_(Agent.token_hash == digest, Agent.previous_token_hash == digest))
        .execution_options(populate_existing=True)
    )
    row = session.execute(q).first()
    return None if row is None else (row[0], bool(row[1]))


def _runs_held() -> Exists:
    return exists().where(Run.agent_id == Agent.id, Run.status.in_(ACTIVE_STATUSES))


def shorten_previous_token(session: Session, agent_id: uuid.UUID, digest: str, until: datetime) -> None:
    """The current token (`digest`) was used: its predecessor ends at `until` at the latest. Only
    while `digest` is still current, so a rotation committed meanwhile is not undone."""
    session.execute(
        update(Agent)
        .where(
            Agent.id == agent_id,
            Agent.token_hash == digest,
            Agent.previous_token_hash.is_not(None),
            Agent.previous_token_expires_at > until,
        )
        .values(previous_token_expires_at=until)
        .execution_options(synchronize_session=False)
    )


def lock_live(session: Session, agent_id: uuid.UUID) -> Agent | None:
    """The agent (not deleted), locked and re-read."""
    return session.scalar(
        select(Agent)
        .where(Agent.id == agent_id, Agent.deleted_at.is_(None))
        .with_for_update()
        .execution_options(populate_existing=True)
    )


def by_name(session: Session, team_id: uuid.UUID, name: str) -> Agent | None:
    """The live (not deleted) agent of this name, locked."""
    return session.scalar(
        select(Agent)
        .where(Agent.team_id == team_id, Agent.name == name, Agent.deleted_at.is_(None))
        .with_for_update()
    )


def get_in_teams(
    session: Session, agent_id: uuid.UUID, team_ids: list[uuid.UUID], *, lock: bool = False
) -> Agent | None:
    q = select(Agent).where(Agent.id == agent_id, Agent.team_id.in_(team_ids), Agent.deleted_at.is_(None))
    return session.scalar(q.with_for_update() if lock else q)


def list_in_teams(session: Session, team_ids: list[uuid.UUID]) -> list[Agent]:
    return list(
        session.scalars(
            select(Agent).where(Agent.team_id.in_(team_ids), Agent.deleted_at.is_(None)).order_by(Agent.name)
        )
    )


def current_runs(session: Session, agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID]:
    rows = session.execute(
        select(Run.agent_id, Run.id).where(Run.agent_id.in_(agent_ids), Run.status.in_(ACTIVE_STATUSES))
    )
    return {agent_id: run_id for agent_id, run_id in rows}


def with_runs_held(session: Session, agent_id: uuid.UUID) -> tuple[Agent, bool] | None:
    """The agent, re-read, and whether any run is assigned to it or running on it: one plain read,
    no row lock (all an idle long-poll's look needs)."""
    q = select(Agent, _runs_held()).where(Agent.id == agent_id).execution_options(populate_existing=True)
    row = session.execute(q).first()
    return None if row is None else (row[0], bool(row[1]))


def count_online(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Agent).where(Agent.online)) or 0


def mark_silent_offline(session: Session, before: datetime) -> list[uuid.UUID]:
    rows = session.execute(
        update(Agent)
        .where(Agent.online.is_(True), func.coalesce(Agent.last_heartbeat_at, Agent.enrolled_at) < before)
        .values(online=False)
        .returning(Agent.id)
    )
    return [r[0] for r in rows]


def stamp_waiting(
    session: Session, agent_ids: list[uuid.UUID], *, now: datetime, stale_before: datetime
) -> int:
    """One UPDATE: these agents (online, not revoked) seen at `now` where last seen before
    `stale_before` (agent.service.stamp_waiting). How many rows it wrote."""
    result = session.execute(
        update(Agent)
        .where(
            Agent.id.in_(agent_ids),
            Agent.online.is_(True),
            Agent.revoked_at.is_(None),
            func.coalesce(Agent.last_heartbeat_at, Agent.enrolled_at) < stale_before,
        )
        .values(last_heartbeat_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def needing_a_look(session: Session, agent_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    """Of these agents, those a waiting long-poll should look for now: a run is assigned to them
    (the look hands it out) or they were revoked (it answers 401). One query for every long-poll
    waiting in an API process (agent.service's periodic re-check)."""
    assigned = select(Run.agent_id).where(Run.agent_id.in_(agent_ids), Run.status == RunStatus.assigned)
    revoked = select(Agent.id).where(Agent.id.in_(agent_ids), Agent.revoked_at.is_not(None))
    return [agent_id for agent_id in session.scalars(assigned.union(revoked)) if agent_id is not None]
