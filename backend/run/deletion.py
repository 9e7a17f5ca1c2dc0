"""Deleting a run (ADR 0021): the run row goes, and the database cascades its result, key figures,
series, power samples, energy and tags; its comments (and those of comparisons that included it)
go in the same transaction, which also writes `run.deleted` to the team's audit log.

An assigned or running run holds its device and an agent's lease: it must be cancelled first (409).
A queued run is locked first, so a dispatcher racing with the deletion skips it (SKIP LOCKED).

Its queries live here rather than in repository.py, which the runs-list work reshapes at the same
time; other domains' deletions (devices, environments, campaigns) call the functions below."""

import uuid
from typing import Any, NamedTuple, cast

from sqlalchemy import ColumnElement, func, or_, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.comment import service as comment_service
from backend.errors import Conflict, NotFound
from backend.kit.ownership import require_deleter
from backend.models import ACTIVE_STATUSES, Run, RunTarget
from backend.run import repository


def delete(session: Session, *, principal: UserPrincipal, run_id: uuid.UUID) -> None:
    run = repository.get_in_teams(session, run_id, principal.team_ids, lock=True)
    if run is None:
        raise NotFound("run not found")
    require_deleter(principal, run.team_id, run.created_by)
    if run.status in ACTIVE_STATUSES:
        raise Conflict(
            f"the run is {run.status.value}: cancel it first (POST /api/v1/runs/{run.id}/cancel), "
            "then delete it once it has stopped",
            code="run_active",
        )
    _remove(session, principal=principal, run=run)
    session.flush()


def _remove(session: Session, *, principal: UserPrincipal, run: Run, via: str | None = None) -> None:
    comments = comment_service.forget_run(session, team_id=run.team_id, run_id=run.id)
    details: dict[str, object] = {"name": run.name, "status": run.status.value, "comments": comments}
    if via is not None:
        details["via"] = via
    audit.record(
        session,
        team_id=run.team_id,
        action="run.deleted",
        target_kind="run",
        target_id=run.id,
        user_id=principal.user_id,
        details=details,
    )
    session.delete(run)


def delete_campaign_runs(
    session: Session, *, principal: UserPrincipal, campaign_id: uuid.UUID, team_id: uuid.UUID
) -> int:
    """Delete a campaign's runs (the caller's right to delete the campaign is checked already).
    409 naming the runs still assigned or running."""
    runs = list(
        session.scalars(
            select(Run)
            .where(Run.campaign_id == campaign_id, Run.team_id == team_id)
            .order_by(Run.id)
            .with_for_update()
        )
    )
    active = [str(r.id) for r in runs if r.status in ACTIVE_STATUSES]
    if active:
        raise Conflict(
            f"{len(active)} run(s) of the campaign are assigned or running: cancel them first, then delete",
            code="campaign_active",
            detail={"runs": active},
        )
    for r in runs:
        _remove(session, principal=principal, run=r, via=f"campaign {campaign_id}")
    session.flush()
    return len(runs)


def detach_campaign_runs(session: Session, *, campaign_id: uuid.UUID) -> int:
    """Keep a deleted campaign's runs: they leave it."""
    result = session.execute(update(Run).where(Run.campaign_id == campaign_id).values(campaign_id=None))
    return int(cast("CursorResult[Any]", result).rowcount or 0)  # DML answers with a cursor result


class Usage(NamedTuple):
    """The runs that name a device or an environment: how many, the first ids, the active ones."""

    total: int
    run_ids: list[str]
    active_ids: list[str]


USAGE_IDS = 100  # ids listed in a 409's body (the count is exact)


def _names(column: str, value: uuid.UUID) -> ColumnElement[bool]:
    """The runs that name `value` in `column`; a device also through any target of a
    multi-target run (run_targets), not only its first."""
    own: ColumnElement[bool] = getattr(Run, column) == value
    if column != "device_id":
        return own
    return or_(own, Run.id.in_(select(RunTarget.run_id).where(RunTarget.device_id == value)))


def usage(session: Session, *, column: str, value: uuid.UUID) -> Usage:
    uses = _names(column, value)
    count = session.scalar(select(func.count()).select_from(Run).where(uses)) or 0
    ids = session.scalars(select(Run.id).where(uses).order_by(Run.created_at.desc()).limit(USAGE_IDS))
    active = session.scalars(select(Run.id).where(uses, Run.status.in_(ACTIVE_STATUSES)))
    return Usage(count, [str(i) for i in ids], [str(i) for i in active])


def detach(session: Session, *, column: str, value: uuid.UUID) -> int:
    """The runs that name a device or an environment forget it (their results stay); a device
    also leaves the targets of multi-target runs. Answers how many runs named it."""
    uses = _names(column, value)
    count = session.scalar(select(func.count()).select_from(Run).where(uses)) or 0
    session.execute(update(Run).where(getattr(Run, column) == value).values({column: None}))
    if column == "device_id":
        session.execute(update(RunTarget).where(RunTarget.device_id == value).values(device_id=None))
    return int(count)
