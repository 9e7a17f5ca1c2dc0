import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session, selectinload

from backend.models import ACTIVE_STATUSES, Agent, Device, ResultJob, Run, RunStatus


def get_in_teams(
    session: Session, run_id: uuid.UUID, team_ids: list[uuid.UUID], *, lock: bool = False
) -> Run | None:
    q = select(Run).where(Run.id == run_id, Run.team_id.in_(team_ids))
    if lock:
        q = q.with_for_update(of=Run)
    return session.scalar(q)


def get_for_agent(session: Session, run_id: uuid.UUID, agent_id: uuid.UUID) -> Run | None:
    return session.scalar(select(Run).where(Run.id == run_id, Run.agent_id == agent_id).with_for_update())


def get_locked(session: Session, run_id: uuid.UUID) -> Run | None:
    return session.scalar(select(Run).where(Run.id == run_id).with_for_update(skip_locked=True))


def page(
    session: Session,
    team_ids: list[uuid.UUID],
    *,
    filters: dict[str, Any],
    limit: int,
    offset: int,
) -> tuple[list[Run], int]:
    """A page of runs, newest first; `filters` maps Run columns to required values (None: any)."""
    conds: list[ColumnElement[bool]] = [Run.team_id.in_(team_ids)]
    conds += [getattr(Run, column) == value for column, value in filters.items() if value is not None]
    rows = session.scalars(
        select(Run)
        .where(*conds)
        .options(selectinload(Run.agent))
        .order_by(Run.created_at.desc(), Run.id)
        .limit(limit)
        .offset(offset)
    )
    total = session.scalar(select(func.count()).select_from(Run).where(*conds)) or 0
    return list(rows), total


def by_ids(session: Session, run_ids: list[uuid.UUID], team_ids: list[uuid.UUID]) -> list[Run]:
    return list(
        session.scalars(
            select(Run).where(Run.id.in_(run_ids), Run.team_id.in_(team_ids)).options(selectinload(Run.agent))
        )
    )


def jobs_of(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ResultJob]]:
    out: dict[uuid.UUID, list[ResultJob]] = {rid: [] for rid in run_ids}
    for job in session.scalars(
        select(ResultJob).where(ResultJob.run_id.in_(run_ids)).order_by(ResultJob.job_index)
    ):
        out[job.run_id].append(job)
    return out


def device_names(session: Session, device_ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not device_ids:
        return {}
    rows = session.execute(select(Device.id, Device.name).where(Device.id.in_(device_ids)))
    return {device_id: name for device_id, name in rows}


def queued_ids(session: Session, limit: int = 200) -> list[uuid.UUID]:
    return list(
        session.scalars(
            select(Run.id).where(Run.status == RunStatus.queued).order_by(Run.created_at).limit(limit)
        )
    )


def _any_active(session: Session, cond: ColumnElement[bool]) -> bool:
    q = select(Run.id).where(cond, Run.status.in_(ACTIVE_STATUSES)).limit(1)
    return session.scalar(q) is not None


def agent_busy(session: Session, agent_id: uuid.UUID) -> bool:
    return _any_active(session, Run.agent_id == agent_id)


def device_busy(session: Session, device_id: uuid.UUID) -> bool:
    return _any_active(session, Run.device_id == device_id)


def stale_leases(session: Session, now: datetime, limit: int = 200) -> list[Run]:
    return list(
        session.scalars(
            select(Run)
            .where(Run.status.in_(ACTIVE_STATUSES), Run.lease_expires_at < now)
            .order_by(Run.lease_expires_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    )


def unfinished_of_agent(session: Session, agent_id: uuid.UUID) -> list[Run]:
    return list(
        session.scalars(
            select(Run)
            .where(Run.agent_id == agent_id, Run.status.in_((RunStatus.queued, *ACTIVE_STATUSES)))
            .with_for_update()
        )
    )


def running_of_agent(session: Session, agent_id: uuid.UUID, *, started_before: datetime) -> list[Run]:
    """The agent's running runs started before `started_before`, locked (skipping a row another
    transaction holds: a run being reported right now is not lost)."""
    return list(
        session.scalars(
            select(Run)
            .where(
                Run.agent_id == agent_id,
                Run.status == RunStatus.running,
                Run.started_at < started_before,
            )
            .with_for_update(skip_locked=True)
        )
    )


def assigned_to(session: Session, agent_id: uuid.UUID) -> Run | None:
    """The run waiting for this agent to pick it up (locked so two polls cannot both take it)."""
    return session.scalar(
        select(Run)
        .where(Run.agent_id == agent_id, Run.status == RunStatus.assigned)
        .order_by(Run.assigned_at)
        .limit(1)
        .with_for_update(skip_locked=True)
    )


def agents_by_id(session: Session, agent_ids: set[uuid.UUID]) -> dict[uuid.UUID, Agent]:
    if not agent_ids:
        return {}
    return {a.id: a for a in session.scalars(select(Agent).where(Agent.id.in_(agent_ids)))}


def lock_agent(session: Session, agent_id: uuid.UUID) -> Agent | None:
    """The run's agent, locked: the dispatcher checks it is online, idle and not revoked."""
    return session.get(Agent, agent_id, with_for_update=True)


def device(session: Session, device_id: uuid.UUID | None) -> Device | None:
    return session.get(Device, device_id) if device_id else None
