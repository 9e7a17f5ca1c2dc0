"""Schedules: recurring campaigns (docs/adr/0039-schedules.md).

A schedule holds a campaign body and a rule (a cron expression read in an IANA time zone, or every
N hours). The worker's periodic tick (`schedule.tick`, beat) claims each due slot once — the due
rows are locked with SKIP LOCKED and the slot's unique key is the last word, so two beat processes
never queue one slot twice — and queues the campaign with the targets whose agents are online and
free; a target whose agent is offline, revoked or busy is left out with the reason, and a slot
with no target left is recorded as skipped. Slots missed while no tick ran (the worker down) are
recorded as skipped; only the latest due one is queued.
"""

import itertools
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from cronsim import CronSim
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth import repository as auth_repository
from backend.auth.principal import UserPrincipal
from backend.campaign import service as campaign_service
from backend.campaign.schemas import CampaignCreate
from backend.errors import AppError, Invalid, NotFound
from backend.kit.ownership import require_deleter
from backend.kit.time import utcnow
from backend.logs import log
from backend.models import Role, Schedule, ScheduleSlot
from backend.schedule import repository
from backend.schedule.schemas import ScheduleCreate, ScheduleRead, ScheduleUpdate, SlotRead

TICK_BATCH = 50  # schedules handled per tick; the rest wait for the next one (seconds later)
MISSED_RECORDED = 10  # missed slots recorded per schedule and tick (the count goes in the reason)


def instants(
    *, cron: str | None, every_hours: int | None, timezone: str, after: datetime
) -> Iterator[datetime]:
    """Due instants strictly after `after`, in UTC."""
    if cron is not None:
        tz = ZoneInfo(timezone)
        for t in CronSim(cron, after.astimezone(tz).replace(second=0, microsecond=0)):
            if t > after:
                yield t.astimezone(ZoneInfo("UTC"))
        return
    assert every_hours is not None
    step = timedelta(hours=every_hours)
    t = after.replace(second=0, microsecond=0) + step
    while True:
        yield t
        t += step


def _next(s: Schedule, after: datetime) -> datetime:
    return next(instants(cron=s.cron, every_hours=s.every_hours, timezone=s.timezone, after=after))


def _team_of_campaign(session: Session, principal: UserPrincipal, body: CampaignCreate) -> uuid.UUID:
    """Queue the campaign in a savepoint and roll it back: the same checks a slot will meet (agent
    access, host policy, workload), as 422s naming `campaign.*`, and the team it belongs to. A
    target set's targets are chosen at each slot: only its own checks answer now (its team, its
    agents, its workloads); each host's policy answers at the slot, leaving out what it refuses."""
    sp = session.begin_nested()
    try:
        if body.target_set is not None:
            team_id = campaign_service.check_target_set(session, principal=principal, body=body)
        else:
            team_id = campaign_service.create(session, principal=principal, body=body).team_id
    except Invalid as exc:
        sp.rollback()
        raise exc.under("campaign") from exc
    except AppError:
        sp.rollback()
        raise
    sp.rollback()
    return team_id


def create(session: Session, *, principal: UserPrincipal, body: ScheduleCreate) -> Schedule:
    team_id = _team_of_campaign(session, principal, body.campaign)
    principal.require(team_id, Role.member)
    now = utcnow()
    s = Schedule(
        team_id=team_id,
        name=body.name,
        cron=body.cron,
        every_hours=body.every_hours,
        timezone=body.timezone,
        campaign=body.campaign.model_dump(mode="json", exclude_unset=True),
        enabled=body.enabled,
        created_by=principal.user_id,
    )
    s.next_slot_at = _next(s, now)
    session.add(s)
    session.flush()
    _audit(session, s, principal, "schedule.created", {"name": s.name, "rule": _rule(s)})
    return s


def _rule(s: Schedule) -> str:
    return f"cron {s.cron} ({s.timezone})" if s.cron else f"every {s.every_hours} h"


def _audit(
    session: Session, s: Schedule, principal: UserPrincipal | None, action: str, details: dict[str, object]
) -> None:
    audit.record(
        session,
        team_id=s.team_id,
        action=action,
        target_kind="schedule",
        target_id=s.id,
        user_id=principal.user_id if principal else None,
        details=details,
    )


def get(session: Session, *, principal: UserPrincipal, schedule_id: uuid.UUID) -> Schedule:
    s = repository.get(session, schedule_id)
    if s is None or s.team_id not in principal.team_ids:
        raise NotFound("schedule not found")
    return s


def page(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID | None, limit: int, offset: int
) -> tuple[list[Schedule], int]:
    return repository.page(session, principal.teams_for(team_id), limit=limit, offset=offset)


def update(
    session: Session, *, principal: UserPrincipal, schedule_id: uuid.UUID, body: ScheduleUpdate
) -> Schedule:
    s = get(session, principal=principal, schedule_id=schedule_id)
    require_deleter(principal, s.team_id, s.created_by)
    changes = body.model_dump(exclude_unset=True)
    if changes.get("cron") is not None:
        s.cron, s.every_hours = changes["cron"], None
    if changes.get("every_hours") is not None:
        s.cron, s.every_hours = None, changes["every_hours"]
    if changes.get("timezone") is not None:
        s.timezone = changes["timezone"]
    if changes.get("name") is not None:
        s.name = changes["name"]
    if changes.get("enabled") is not None:
        s.enabled = changes["enabled"]
    if {"cron", "every_hours", "timezone", "enabled"} & changes.keys():
        s.next_slot_at = _next(s, utcnow())  # re-enabled: due from now on, missed slots are not run
    session.flush()
    _audit(
        session, s, principal, "schedule.updated", {"name": s.name, "rule": _rule(s), "enabled": s.enabled}
    )
    return s


def delete(session: Session, *, principal: UserPrincipal, schedule_id: uuid.UUID) -> None:
    s = get(session, principal=principal, schedule_id=schedule_id)
    require_deleter(principal, s.team_id, s.created_by)
    _audit(session, s, principal, "schedule.deleted", {"name": s.name})
    session.delete(s)
    session.flush()


def to_read(session: Session, schedules: list[Schedule]) -> list[ScheduleRead]:
    last = repository.last_slots(session, [s.id for s in schedules])
    out = []
    for s in schedules:
        body = CampaignCreate.model_validate(s.campaign)
        upcoming = list(
            itertools.islice(
                instants(
                    cron=s.cron,
                    every_hours=s.every_hours,
                    timezone=s.timezone,
                    after=s.next_slot_at - timedelta(microseconds=1),
                ),
                3,
            )
        )
        out.append(
            ScheduleRead(
                id=s.id,
                team_id=s.team_id,
                name=s.name,
                cron=s.cron,
                every_hours=s.every_hours,
                timezone=s.timezone,
                enabled=s.enabled,
                next_slot_at=s.next_slot_at,
                upcoming=upcoming,
                runs_per_slot=None if body.target_set else body.cells() * len(body.targets) * body.repeats,
                campaign=body,
                created_by=s.created_by,
                created_at=s.created_at,
                last_slot=SlotRead.model_validate(last[s.id]) if s.id in last else None,
            )
        )
    return out


def slots(
    session: Session, *, principal: UserPrincipal, schedule_id: uuid.UUID, limit: int, offset: int
) -> tuple[list[ScheduleSlot], int]:
    s = get(session, principal=principal, schedule_id=schedule_id)
    return repository.slots(session, s.id, limit=limit, offset=offset)


# ---- the periodic tick ----------------------------------------------------------------------


def tick(session: Session, *, now: datetime | None = None) -> list[ScheduleSlot]:
    """Claim and act on every due slot; returns the slots this tick recorded."""
    now = now or utcnow()
    done: list[ScheduleSlot] = []
    for s in repository.due(session, now, limit=TICK_BATCH):
        due = [s.next_slot_at]
        for t in instants(cron=s.cron, every_hours=s.every_hours, timezone=s.timezone, after=s.next_slot_at):
            if t > now:
                s.next_slot_at = t
                break
            due.append(t)
            if len(due) > 10_000:  # an every-minute rule after a week down: skip ahead
                s.next_slot_at = _next(s, now)
                break
        *missed, slot_at = due
        for t in missed[-MISSED_RECORDED:]:
            row = repository.claim_slot(
                session,
                s.id,
                t,
                status="skipped",
                skipped_targets=[],
                reason=f"missed: no scheduler tick ran in time ({len(missed)} slots missed)",
            )
            if row is not None:
                done.append(row)
        row = _run_slot(session, s, slot_at)
        if row is not None:
            done.append(row)
    session.flush()
    return done


def _run_slot(session: Session, s: Schedule, slot_at: datetime) -> ScheduleSlot | None:
    body = CampaignCreate.model_validate(s.campaign)
    principal = _owner(session, s)
    if principal is None:
        return _skip(session, s, slot_at, "the member who created this schedule is no longer in its team", [])
    left_out: list[dict[str, str]] = []
    targets = body.targets
    if body.target_set is not None:  # chosen now, from what the hosts list now
        try:
            targets, left_out = campaign_service.resolve_target_set(session, principal=principal, body=body)
        except AppError as exc:
            return _skip(session, s, slot_at, f"could not choose targets: {exc.message}"[:500], [])
    kept, left_out = campaign_service.available(session, targets, left_out, busy_too=True)
    if body.target_set is not None:
        kept, left_out = campaign_service.fitting(body, kept, left_out)
    if not kept:
        reasons = sorted({d["reason"] for d in left_out}) or ["no agent of the team lists a target"]
        return _skip(session, s, slot_at, "no target was free: " + "; ".join(reasons), left_out)
    name = f"{s.name} · {slot_at.astimezone(ZoneInfo(s.timezone)):%Y-%m-%d %H:%M %Z}"[:200]
    considered = len(body.targets) if body.target_set is None else len(kept) + len(left_out)
    sp = session.begin_nested()
    try:
        if body.target_set is not None:  # a target its host refuses is left out, the rest queued
            campaign = campaign_service.create_on(
                session,
                principal=principal,
                body=body.model_copy(update={"name": name}),
                targets=kept,
                left_out=left_out,
            )
            left_out = list(campaign.spec.get("targets_left_out", []))
        else:
            run_body = body.model_copy(update={"targets": kept, "name": name})
            campaign = campaign_service.create(session, principal=principal, body=run_body)
    except campaign_service.NothingLeft as exc:  # every host refused this workload: why, each
        sp.rollback()
        reasons = sorted({d["reason"] for d in exc.left_out})
        return _skip(session, s, slot_at, "no target was free: " + "; ".join(reasons), exc.left_out)
    except AppError as exc:  # the host policy changed, the workload was deleted, ...: say so
        sp.rollback()
        return _skip(session, s, slot_at, f"could not queue: {exc.message}"[:500], left_out)
    sp.commit()
    row = repository.claim_slot(
        session,
        s.id,
        slot_at,
        status="queued",
        campaign_id=campaign.id,
        skipped_targets=left_out,
        reason=None if not left_out else f"{len(left_out)} of {considered} targets left out",
    )
    if row is None:  # another tick took this slot after all: undo ours
        raise RuntimeError(f"slot {slot_at.isoformat()} of schedule {s.id} was claimed twice")
    log.info(
        "schedule.slot_queued",
        schedule_id=str(s.id),
        campaign_id=str(campaign.id),
        slot_at=slot_at.isoformat(),
    )
    return row


def _skip(
    session: Session, s: Schedule, slot_at: datetime, reason: str, left_out: list[dict[str, str]]
) -> ScheduleSlot | None:
    log.info("schedule.slot_skipped", schedule_id=str(s.id), slot_at=slot_at.isoformat(), reason=reason)
    return repository.claim_slot(
        session, s.id, slot_at, status="skipped", reason=reason[:500], skipped_targets=left_out
    )


def _owner(session: Session, s: Schedule) -> UserPrincipal | None:
    """The schedule acts as the member who created it, with their roles today."""
    if s.created_by is None:
        return None
    roles = auth_repository.roles_of(session, s.created_by, active_only=True)
    held = roles.get(s.team_id)
    if held is None or held.rank < Role.member.rank:
        return None
    return UserPrincipal(user_id=s.created_by, roles=roles, scope="write")
