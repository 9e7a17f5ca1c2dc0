import uuid
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from backend.auth.deps import AgentDep, SessionDep, UserDep
from backend.environment.topology import parse_filters
from backend.errors import NotFound
from backend.kit.lanes import BULK, CONTROL
from backend.models import RunStatus
from backend.power import service as power_service
from backend.power.schemas import PowerSeries
from backend.result import service as result_service
from backend.result.schemas import ResultRead, RunSeries
from backend.run import deletion, repository, service
from backend.run.schemas import (
    MAX_OFFSET,
    MAX_TAG,
    MAX_TAGS,
    MAX_TEXT_QUERY,
    FailureReport,
    LeaseRef,
    ProgressAck,
    ProgressReport,
    ResultStored,
    ResultUpload,
    RunCreate,
    RunLive,
    RunPage,
    RunRead,
    RunSort,
    RunSource,
    RunSystem,
    RunTagsUpdate,
    TagList,
)
from backend.workload.facts import ENGINE_UNAVAILABLE

router = APIRouter(prefix="/runs", tags=["runs"])
# the team's tags for the runs filter (GET /api/v1/tags): main.py includes it beside `router`
tags_router = APIRouter(prefix="/tags", tags=["runs"], dependencies=[BULK])


def as_utc(value: datetime | None) -> datetime | None:
    """A query's timestamp without an offset is UTC (the wire's time zone)."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


@tags_router.get("", response_model=TagList)
def list_tags(
    principal: UserDep,
    session: SessionDep,
    team_id: Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")] = None,
) -> TagList:
    return service.team_tags(session, principal=principal, team_id=team_id)


@router.post(
    "",
    response_model=RunRead,
    status_code=status.HTTP_201_CREATED,
    responses=ENGINE_UNAVAILABLE,
    dependencies=[CONTROL],
)
def create_run(body: RunCreate, principal: UserDep, session: SessionDep) -> RunRead:
    return service.create_read(session, principal=principal, body=body)


@router.get("", response_model=RunPage, dependencies=[BULK])
def list_runs(
    principal: UserDep,
    session: SessionDep,
    status_: Annotated[
        list[RunStatus] | None,
        Query(alias="status", description="any of these statuses (repeat the parameter)"),
    ] = None,
    agent_id: uuid.UUID | None = None,
    device_id: uuid.UUID | None = None,
    environment_id: uuid.UUID | None = None,
    workload_id: uuid.UUID | None = None,
    campaign_id: uuid.UUID | None = None,
    source: RunSource | None = None,
    tag: Annotated[
        list[Annotated[str, Query(max_length=MAX_TAG)]] | None,
        Query(max_length=MAX_TAGS, description="runs carrying every one of these tags (repeat)"),
    ] = None,
    created_from: Annotated[
        datetime | None, Query(description="created at or after (UTC when no offset is given)")
    ] = None,
    created_to: Annotated[datetime | None, Query(description="created before (UTC when no offset)")] = None,
    q: Annotated[
        str | None,
        Query(
            max_length=MAX_TEXT_QUERY,
            description="words that must each appear (case-insensitive) in the run's name, its "
            "device's name or model, its workload's or agent's name, or one of its tags",
        ),
    ] = None,
    sort: Annotated[
        RunSort, Query(description='created, name or status; "-" first: descending')
    ] = "-created",
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    team_id: Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")] = None,
    env: Annotated[
        list[Annotated[str, Query(max_length=300)]] | None,
        Query(
            max_length=20,
            description="FIELD:VALUE of the runs' recorded environments, as compare's env= "
            "(raid_level:raid10, kind:san; none: runs without it); repeat: every field must match, "
            "values of one field any of them",
        ),
    ] = None,
    jobs: Annotated[
        bool,
        Query(
            description="false: each item's `jobs` and `passes` are left empty (not read), for a list "
            "that shows no job's figures (the runs page): a page of 50 CrystalDiskMark runs is 1.8 MB "
            "with them, 0.9 MB without, and a quarter of the server's work"
        ),
    ] = True,
    samples: Annotated[
        bool,
        Query(
            description="false: each active item's `progress.samples` is left empty (its live chart's "
            "reports, up to 300, ~33 KB a running run), for a list that draws only the run's bar (the "
            "runs page, the dashboard: polled every 2 s while a run is active)"
        ),
    ] = True,
) -> RunPage:
    filters = repository.RunFilter(
        statuses=tuple(status_ or ()),
        agent_id=agent_id,
        device_id=device_id,
        environment_id=environment_id,
        workload_id=workload_id,
        campaign_id=campaign_id,
        source=source,
        tags=tuple(t.strip() for t in tag or () if t.strip()),
        created_from=as_utc(created_from),
        created_to=as_utc(created_to),
        text=q,
        env=tuple(parse_filters(env or [])),
    )
    return service.page(
        session,
        principal=principal,
        team_id=team_id,
        filters=filters,
        sort=sort,
        limit=limit,
        offset=offset,
        with_jobs=jobs,
        with_samples=samples,
    )


@router.put("/{run_id}/tags", response_model=RunRead, dependencies=[BULK])
def put_tags(run_id: uuid.UUID, body: RunTagsUpdate, principal: UserDep, session: SessionDep) -> RunRead:
    """Replace the run's tags (members of its team)."""
    run = service.set_tags(session, principal=principal, run_id=run_id, body=body)
    return service.to_read(session, [run])[0]


@router.get("/{run_id}", response_model=RunRead, dependencies=[BULK])
def get_run(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunRead:
    return service.to_read(session, [service.get(session, principal=principal, run_id=run_id)])[0]


@router.get("/{run_id}/progress", response_model=RunLive, dependencies=[BULK])
def get_progress(
    run_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    since_t_s: Annotated[
        float | None,
        Query(
            ge=0,
            allow_inf_nan=False,
            description="the `t_s` (seconds since the run started) of the last of the engine's reports "
            "you hold: only later ones are sent; none: all that are kept",
        ),
    ] = None,
) -> RunLive:
    """An active run's status and latest progress report, for a page that follows it: ~0.5 KB a poll
    where GET /runs/{id} sends the whole run (an 80-job run with its 300 reports: ~66 KB). When
    `status` is no longer the one you hold, read the run again."""
    return service.live(session, principal=principal, run_id=run_id, since_t_s=since_t_s)


@router.delete(
    "/{run_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`run_active`: the run is assigned or running; cancel it first"}},
    dependencies=[BULK],
)
def delete_run(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> None:
    """Delete a run with its result, series, power samples, energy, tags and comments (audited as
    run.deleted). An admin of its team, or the member who queued it; an assigned or running run
    must be cancelled first (409)."""
    deletion.delete(session, principal=principal, run_id=run_id)


@router.post("/{run_id}/cancel", response_model=RunRead, dependencies=[CONTROL])
def cancel_run(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunRead:
    return service.to_read(session, [service.cancel(session, principal=principal, run_id=run_id)])[0]


@router.get("/{run_id}/result", response_model=ResultRead, dependencies=[BULK])
def get_result(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> ResultRead:
    run = service.get(session, principal=principal, run_id=run_id)
    res = result_service.get_result(session, run=run)
    if res is None:
        raise NotFound(f"run is {run.status.value} and has no result yet", code="no_result")
    return ResultRead.model_validate(res)


@router.get("/{run_id}/power", response_model=PowerSeries, dependencies=[BULK])
def get_power(
    run_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    points: Annotated[int, Query(ge=10, le=5000, description="at most this many points")] = 1500,
) -> PowerSeries:
    run = service.get(session, principal=principal, run_id=run_id)
    return power_service.series(session, run=run, points=points)


@router.get("/{run_id}/system", response_model=RunSystem, dependencies=[BULK])
def get_system(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunSystem:
    """Host, device, file system, cache mode and validity flags of one run (the run page's header)."""
    return service.system(session, run=service.get(session, principal=principal, run_id=run_id))


@router.get("/{run_id}/series", response_model=RunSeries, dependencies=[BULK])
def get_series(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunSeries:
    return result_service.series(session, run=service.get(session, principal=principal, run_id=run_id))


# --- agent side -----------------------------------------------------------------------------


@router.post("/{run_id}/start", response_model=RunRead, tags=["agent-protocol"], dependencies=[CONTROL])
def start_run(run_id: uuid.UUID, body: LeaseRef, principal: AgentDep, session: SessionDep) -> RunRead:
    return service.start_read(session, principal=principal, run_id=run_id, body=body)


@router.post(
    "/{run_id}/progress", response_model=ProgressAck, tags=["agent-protocol"], dependencies=[CONTROL]
)
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
    dependencies=[CONTROL],
)
def upload_result(
    run_id: uuid.UUID, body: ResultUpload, principal: AgentDep, session: SessionDep, response: Response
) -> ResultStored:
    stored = result_service.store(session, principal=principal, run_id=run_id, body=body)
    if stored.duplicate:
        response.status_code = status.HTTP_200_OK
    return stored


@router.post("/{run_id}/failure", response_model=RunRead, tags=["agent-protocol"], dependencies=[CONTROL])
def report_failure(
    run_id: uuid.UUID, body: FailureReport, principal: AgentDep, session: SessionDep
) -> RunRead:
    return service.to_read(session, [service.fail(session, principal=principal, run_id=run_id, body=body)])[0]
