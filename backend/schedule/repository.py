"""All SQL of the schedule domain."""

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from backend.kit.repository import page_of
from backend.models import Schedule, ScheduleSlot


def get(session: Session, schedule_id: uuid.UUID) -> Schedule | None:
    return session.get(Schedule, schedule_id)


def page(
    session: Session, team_ids: list[uuid.UUID], *, limit: int, offset: int
) -> tuple[list[Schedule], int]:
    return page_of(
        session,
        Schedule,
        Schedule.team_id.in_(team_ids),
        order_by=(Schedule.created_at.desc(), Schedule.id),
        limit=limit,
        offset=offset,
    )


def due(session: Session, now: datetime, *, limit: int) -> list[Schedule]:
    """Enabled schedules due by `now`, locked; rows another tick holds are skipped (two beat
    processes share the work instead of doubling it)."""
    return list(
        session.scalars(
            select(Schedule)
            .where(Schedule.enabled, Schedule.next_slot_at <= now)
            .order_by(Schedule.next_slot_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    )


def claim_slot(
    session: Session, schedule_id: uuid.UUID, slot_at: datetime, **values: Any
) -> ScheduleSlot | None:
    """Insert the slot unless it exists (the unique key is the last word on 'never twice')."""
    slot_id = session.scalar(
        insert(ScheduleSlot)
        .values(id=uuid.uuid4(), schedule_id=schedule_id, slot_at=slot_at, **values)
        .on_conflict_do_nothing(constraint="uq_schedule_slots_slot")
        .returning(ScheduleSlot.id)
    )
    return None if slot_id is None else session.get(ScheduleSlot, slot_id)


def last_slots(session: Session, schedule_ids: list[uuid.UUID]) -> dict[uuid.UUID, ScheduleSlot]:
    if not schedule_ids:
        return {}
    rows = session.scalars(
        select(ScheduleSlot)
        .where(ScheduleSlot.schedule_id.in_(schedule_ids))
        .distinct(ScheduleSlot.schedule_id)
        .order_by(ScheduleSlot.schedule_id, ScheduleSlot.slot_at.desc())
    )
    return {s.schedule_id: s for s in rows}


def slots(
    session: Session, schedule_id: uuid.UUID, *, limit: int, offset: int
) -> tuple[list[ScheduleSlot], int]:
    return page_of(
        session,
        ScheduleSlot,
        ScheduleSlot.schedule_id == schedule_id,
        order_by=(ScheduleSlot.slot_at.desc(),),
        limit=limit,
        offset=offset,
    )
