"""All SQL of the team export: every row of one team, streamed in batches (`yield_per`), so a big
team's export holds one batch in memory at a time."""

import uuid
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from backend.models import (
    Agent,
    AuditEvent,
    Campaign,
    Comment,
    Device,
    Environment,
    GridIntensityHour,
    Invitation,
    Membership,
    PowerSample,
    ResultJob,
    ResultSeriesPoint,
    Run,
    RunEnergy,
    RunPower,
    RunResult,
    RunTag,
    RunTarget,
    ShareLink,
    Team,
    User,
    Workload,
)

BATCH = 1000


def team(session: Session, team_id: uuid.UUID) -> Team | None:
    return session.get(Team, team_id)


def members(session: Session, team_id: uuid.UUID) -> list[tuple[Membership, User]]:
    return list(
        session.execute(
            select(Membership, User)
            .join(User, User.id == Membership.user_id)
            .where(Membership.team_id == team_id)
            .order_by(User.email)
        ).tuples()
    )


def _rows(session: Session, q: Select[Any]) -> Iterator[Any]:
    yield from session.scalars(q.execution_options(yield_per=BATCH))


def owned(session: Session, model: Any, team_id: uuid.UUID, order: Any) -> Iterator[Any]:
    """Rows of a table with a team_id column, in a stable order."""
    return _rows(session, select(model).where(model.team_id == team_id).order_by(order))


def agents(session: Session, team_id: uuid.UUID) -> Iterator[Agent]:
    return owned(session, Agent, team_id, Agent.enrolled_at)


def devices(session: Session, team_id: uuid.UUID) -> Iterator[Device]:
    return owned(session, Device, team_id, Device.created_at)


def environments(session: Session, team_id: uuid.UUID) -> Iterator[Environment]:
    return owned(session, Environment, team_id, Environment.created_at)


def workloads(session: Session, team_id: uuid.UUID) -> Iterator[Workload]:
    return owned(session, Workload, team_id, Workload.created_at)


def campaigns(session: Session, team_id: uuid.UUID) -> Iterator[Campaign]:
    return owned(session, Campaign, team_id, Campaign.created_at)


def runs(session: Session, team_id: uuid.UUID) -> Iterator[Run]:
    return owned(session, Run, team_id, Run.created_at)


def comments(session: Session, team_id: uuid.UUID) -> Iterator[Comment]:
    return owned(session, Comment, team_id, Comment.created_at)


def run_ids(session: Session, team_id: uuid.UUID) -> set[uuid.UUID]:
    """Ids of the team's runs that exist (a deleted run's row is gone)."""
    return set(session.scalars(select(Run.id).where(Run.team_id == team_id)))


def share_links(session: Session, team_id: uuid.UUID) -> Iterator[ShareLink]:
    return owned(session, ShareLink, team_id, ShareLink.created_at)


def invitations(session: Session, team_id: uuid.UUID) -> Iterator[Invitation]:
    return owned(session, Invitation, team_id, Invitation.created_at)


def audit_events(session: Session, team_id: uuid.UUID) -> Iterator[AuditEvent]:
    return owned(session, AuditEvent, team_id, AuditEvent.at)


def user_labels(session: Session, user_ids: set[uuid.UUID]) -> dict[uuid.UUID, tuple[str, str]]:
    if not user_ids:
        return {}
    rows = session.execute(select(User.id, User.email, User.display_name).where(User.id.in_(user_ids)))
    return {i: (e, n) for i, e, n in rows.tuples()}


def of_runs(session: Session, model: Any, team_id: uuid.UUID, *order: Any) -> Iterator[Any]:
    """Rows keyed by run_id of the team's runs."""
    q = select(model).join(Run, Run.id == model.run_id).where(Run.team_id == team_id).order_by(*order)
    return _rows(session, q)


def results(session: Session, team_id: uuid.UUID) -> Iterator[RunResult]:
    return of_runs(session, RunResult, team_id, RunResult.run_id)


def result_jobs(session: Session, team_id: uuid.UUID) -> Iterator[ResultJob]:
    return of_runs(session, ResultJob, team_id, ResultJob.run_id, ResultJob.job_index)


def run_targets(session: Session, team_id: uuid.UUID) -> Iterator[RunTarget]:
    """The targets of the team's multi-target runs (a single-target run has none)."""
    return of_runs(session, RunTarget, team_id, RunTarget.run_id, RunTarget.target_index)


def series(session: Session, team_id: uuid.UUID) -> Iterator[ResultSeriesPoint]:
    return of_runs(
        session,
        ResultSeriesPoint,
        team_id,
        ResultSeriesPoint.run_id,
        ResultSeriesPoint.job_index,
        ResultSeriesPoint.t_ns,
    )


def power(session: Session, team_id: uuid.UUID) -> Iterator[RunPower]:
    return of_runs(session, RunPower, team_id, RunPower.run_id)


def power_samples(session: Session, team_id: uuid.UUID) -> Iterator[tuple[uuid.UUID, int, float]]:
    q = (
        select(PowerSample.run_id, PowerSample.t_ns, PowerSample.value)
        .join(Run, Run.id == PowerSample.run_id)
        .where(Run.team_id == team_id)
        .order_by(PowerSample.run_id, PowerSample.t_ns)
        .execution_options(yield_per=BATCH)
    )
    for row in session.execute(q):
        yield row[0], row[1], row[2]


def energy(session: Session, team_id: uuid.UUID) -> Iterator[RunEnergy]:
    return of_runs(session, RunEnergy, team_id, RunEnergy.run_id)


def tags(session: Session, team_id: uuid.UUID) -> dict[uuid.UUID, list[str]]:
    out: dict[uuid.UUID, list[str]] = {}
    q = (
        select(RunTag.run_id, RunTag.tag)
        .join(Run, Run.id == RunTag.run_id)
        .where(Run.team_id == team_id)
        .order_by(RunTag.run_id, RunTag.tag)
    )
    for run_id, tag in session.execute(q).tuples():
        out.setdefault(run_id, []).append(tag)
    return out


def grid_hours(session: Session, team_id: uuid.UUID) -> Iterator[GridIntensityHour]:
    q = (
        select(GridIntensityHour)
        .join(Environment, Environment.id == GridIntensityHour.environment_id)
        .where(Environment.team_id == team_id)
        .order_by(GridIntensityHour.environment_id, GridIntensityHour.hour_utc)
    )
    return _rows(session, q)
