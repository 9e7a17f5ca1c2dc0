import uuid

from fastapi import APIRouter, status

from backend.auth.deps import SessionDep, UserDep
from backend.kit.lanes import BULK
from backend.kit.paging import Limit, Offset, TeamFilter
from backend.schedule import service
from backend.schedule.schemas import (
    ScheduleCreate,
    SchedulePage,
    ScheduleRead,
    ScheduleUpdate,
    SlotPage,
    SlotRead,
)
from backend.workload.facts import ENGINE_UNAVAILABLE

router = APIRouter(prefix="/schedules", tags=["schedules"], dependencies=[BULK])


@router.post(
    "", response_model=ScheduleRead, status_code=status.HTTP_201_CREATED, responses=ENGINE_UNAVAILABLE
)
def create_schedule(body: ScheduleCreate, principal: UserDep, session: SessionDep) -> ScheduleRead:
    """A recurring campaign. Its campaign is checked as POST /campaigns checks it (422s name
    `campaign.*`) and queued nothing now; the worker queues it at each due slot."""
    return service.to_read(session, [service.create(session, principal=principal, body=body)])[0]


@router.get("", response_model=SchedulePage)
def list_schedules(
    principal: UserDep,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
    team_id: TeamFilter = None,
) -> SchedulePage:
    rows, total = service.page(session, principal=principal, team_id=team_id, limit=limit, offset=offset)
    return SchedulePage(items=service.to_read(session, rows), total=total)


@router.get("/{schedule_id}", response_model=ScheduleRead)
def get_schedule(schedule_id: uuid.UUID, principal: UserDep, session: SessionDep) -> ScheduleRead:
    return service.to_read(session, [service.get(session, principal=principal, schedule_id=schedule_id)])[0]


@router.patch("/{schedule_id}", response_model=ScheduleRead)
def update_schedule(
    schedule_id: uuid.UUID, body: ScheduleUpdate, principal: UserDep, session: SessionDep
) -> ScheduleRead:
    """Rename, pause/resume, or change the rule (an admin of its team, or the member who made it).
    A changed rule or a resumed schedule is next due after now: missed slots are not run."""
    s = service.update(session, principal=principal, schedule_id=schedule_id, body=body)
    return service.to_read(session, [s])[0]


@router.delete("/{schedule_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_schedule(schedule_id: uuid.UUID, principal: UserDep, session: SessionDep) -> None:
    """Delete a schedule and its slot history (its campaigns and runs stay)."""
    service.delete(session, principal=principal, schedule_id=schedule_id)


@router.get("/{schedule_id}/slots", response_model=SlotPage)
def list_schedule_slots(
    schedule_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
) -> SlotPage:
    """Each due slot, newest first: queued (with its campaign) or skipped (with the reason)."""
    rows, total = service.slots(
        session, principal=principal, schedule_id=schedule_id, limit=limit, offset=offset
    )
    return SlotPage(items=[SlotRead.model_validate(r) for r in rows], total=total)
