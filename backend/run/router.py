import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from backend.auth.deps import AgentDep, SessionDep, UserDep
from backend.errors import NotFound
from backend.models import RunStatus
from backend.power import service as power_service
from backend.power.schemas import PowerSeries
from backend.result import service as result_service
from backend.result.schemas import ResultRead, RunSeries
from backend.run import deletion, repository, service
from backend.run.schemas import (
    MAX_OFFSET,
    FailureReport,
    LeaseRef,
    ProgressAck,
    ProgressReport,
    ResultStored,
    ResultUpload,
    RunCreate,
    RunPage,
    RunRead,
    RunSystem,
)

router = APIRouter(prefix="/runs", tags=["runs"])


@router.post("", response_model=RunRead, status_code=status.HTTP_201_CREATED)
def create_run(body: RunCreate, principal: UserDep, session: SessionDep) -> RunRead:
    run = service.create(session, principal=principal, body=body)
    return service.to_read(session, [run])[0]


@router.get("", response_model=RunPage)
def list_runs(
    principal: UserDep,
    session: SessionDep,
    status_: Annotated[RunStatus | None, Query(alias="status")] = None,
    agent_id: uuid.UUID | None = None,
    device_id: uuid.UUID | None = None,
    environment_id: uuid.UUID | None = None,
    workload_id: uuid.UUID | None = None,
    campaign_id: uuid.UUID | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> RunPage:
    runs, total = repository.page(
        session,
        principal.team_ids,
        filters={
            "status": status_,
            "agent_id": agent_id,
            "device_id": device_id,
            "environment_id": environment_id,
            "workload_id": workload_id,
            "campaign_id": campaign_id,
        },
        limit=limit,
        offset=offset,
    )
    return RunPage(items=service.to_read(session, runs), total=total)


@router.get("/{run_id}", response_model=RunRead)
def get_run(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunRead:
    return service.to_read(session, [service.get(session, principal=principal, run_id=run_id)])[0]


@router.delete("/{run_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_run(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> None:
    """Delete a run with its result, series, power samples, energy, tags and comments (audited as
    run.deleted). An admin of its team, or the member who queued it; an assigned or running run
    must be cancelled first (409)."""
    deletion.delete(session, principal=principal, run_id=run_id)


@router.post("/{run_id}/cancel", response_model=RunRead)
def cancel_run(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunRead:
    return service.to_read(session, [service.cancel(session, principal=principal, run_id=run_id)])[0]


@router.get("/{run_id}/result", response_model=ResultRead)
def get_result(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> ResultRead:
    run = service.get(session, principal=principal, run_id=run_id)
    res = result_service.get_result(session, run=run)
    if res is None:
        raise NotFound(f"run is {run.status.value} and has no result yet", code="no_result")
    return ResultRead.model_validate(res)


@router.get("/{run_id}/power", response_model=PowerSeries)
def get_power(
    run_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    points: Annotated[int, Query(ge=10, le=5000, description="at most this many points")] = 1500,
) -> PowerSeries:
    run = service.get(session, principal=principal, run_id=run_id)
    return power_service.series(session, run=run, points=points)


@router.get("/{run_id}/system", response_model=RunSystem)
def get_system(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunSystem:
    """Host, device, file system, cache mode and validity flags of one run (the run page's header)."""
    return service.system(session, run=service.get(session, principal=principal, run_id=run_id))


@router.get("/{run_id}/series", response_model=RunSeries)
def get_series(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunSeries:
    return result_service.series(session, run=service.get(session, principal=principal, run_id=run_id))


# --- agent side -----------------------------------------------------------------------------


@router.post("/{run_id}/start", response_model=RunRead, tags=["agent-protocol"])
def start_run(run_id: uuid.UUID, body: LeaseRef, principal: AgentDep, session: SessionDep) -> RunRead:
    return service.to_read(session, [service.start(session, principal=principal, run_id=run_id, body=body)])[
        0
    ]


@router.post("/{run_id}/progress", response_model=ProgressAck, tags=["agent-protocol"])
def report_progress(
    run_id: uuid.UUID, body: ProgressReport, principal: AgentDep, session: SessionDep
) -> ProgressAck:
    return service.progress(session, principal=principal, run_id=run_id, body=body)


@router.put(
    "/{run_id}/result",
    response_model=ResultStored,
    status_code=status.HTTP_201_CREATED,
    responses={200: {"model": ResultStored, "description": "the same upload was already stored"}},
    tags=["agent-protocol"],
)
def upload_result(
    run_id: uuid.UUID, body: ResultUpload, principal: AgentDep, session: SessionDep, response: Response
) -> ResultStored:
    stored = result_service.store(session, principal=principal, run_id=run_id, body=body)
    if stored.duplicate:
        response.status_code = status.HTTP_200_OK
    return stored


@router.post("/{run_id}/failure", response_model=RunRead, tags=["agent-protocol"])
def report_failure(
    run_id: uuid.UUID, body: FailureReport, principal: AgentDep, session: SessionDep
) -> RunRead:
    return service.to_read(session, [service.fail(session, principal=principal, run_id=run_id, body=body)])[0]
