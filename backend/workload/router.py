import uuid
from typing import Annotated

from fastapi import APIRouter, Query, status

from backend.auth.deps import SessionDep, UserDep
from backend.kit.lanes import BULK
from backend.kit.schema import Page
from backend.workload import repository, service
from backend.workload.facts import ENGINE_UNAVAILABLE
from backend.workload.schemas import WorkloadCreate, WorkloadRead

router = APIRouter(prefix="/workloads", tags=["workloads"], dependencies=[BULK])


@router.get("", response_model=Page[WorkloadRead])
def list_workloads(
    principal: UserDep,
    session: SessionDep,
    team_id: Annotated[
        uuid.UUID | None,
        Query(description="one of your teams (and the built-in workloads); none: all of them"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="at most this many (built-in first)")] = 500,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Page[WorkloadRead]:
    rows, total = repository.visible(session, principal.teams_for(team_id), limit=limit, offset=offset)
    return Page[WorkloadRead](items=[WorkloadRead.model_validate(r) for r in rows], total=total)


@router.post(
    "",
    response_model=WorkloadRead,
    status_code=status.HTTP_201_CREATED,
    responses=ENGINE_UNAVAILABLE,
)
def create_workload(body: WorkloadCreate, principal: UserDep, session: SessionDep) -> WorkloadRead:
    return WorkloadRead.model_validate(service.create(session, principal=principal, body=body))


@router.get("/{workload_id}", response_model=WorkloadRead)
def get_workload(workload_id: uuid.UUID, principal: UserDep, session: SessionDep) -> WorkloadRead:
    return WorkloadRead.model_validate(service.get(session, principal=principal, workload_id=workload_id))


@router.delete(
    "/{workload_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`preset`: built-in presets cannot be deleted"}},
)
def delete_workload(workload_id: uuid.UUID, principal: UserDep, session: SessionDep) -> None:
    """Delete a team workload (team admins; audited). Built-in presets: 409. Runs made from it keep
    their copy of the spec."""
    service.delete(session, principal=principal, workload_id=workload_id)
