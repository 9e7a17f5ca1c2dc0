import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from backend.auth.deps import SessionDep, UserDep
from backend.kit.lanes import BULK
from backend.kit.schema import Page
from backend.series import service
from backend.series.schemas import (
    DetectionRead,
    DetectionUpdate,
    MetricName,
    SeriesCreate,
    SeriesHistory,
    SeriesRead,
    SeriesUpdate,
    SeriesVerdict,
    TeamThresholdsRead,
    ThresholdsIn,
)

router = APIRouter(prefix="/series", tags=["series"], dependencies=[BULK])


@router.get("", response_model=Page[SeriesRead])
def list_series(
    principal: UserDep,
    session: SessionDep,
    team_id: Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")] = None,
    device_id: uuid.UUID | None = None,
    agent_id: uuid.UUID | None = None,
    workload_id: uuid.UUID | None = None,
    run_id: Annotated[uuid.UUID | None, Query(description="the series this run belongs to")] = None,
    archived: Annotated[
        bool | None, Query(description="true: archived only; false: not archived; none: all")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Page[SeriesRead]:
    """Series of your teams, pinned first, then by their last run."""
    items, total = service.list_series(
        session,
        principal=principal,
        team_id=team_id,
        device_id=device_id,
        agent_id=agent_id,
        workload_id=workload_id,
        run_id=run_id,
        archived=archived,
        limit=limit,
        offset=offset,
    )
    return Page[SeriesRead](items=items, total=total)


@router.post(
    "",
    response_model=SeriesRead,
    status_code=status.HTTP_201_CREATED,
    responses={200: {"model": SeriesRead, "description": "the run's series existed: named/pinned as asked"}},
)
def create_series(
    body: SeriesCreate, principal: UserDep, session: SessionDep, response: Response
) -> SeriesRead:
    """Track a run over time (team members): its series, made when there is none yet (201; a run
    stored before series existed, say), with every earlier run of the same workload fingerprint,
    target and environment joined to it and their history searched for changes; an existing
    series is answered (200), named and pinned as asked."""
    out, made = service.create(session, principal=principal, body=body)
    if not made:
        response.status_code = status.HTTP_200_OK
    return out


@router.get("/thresholds", response_model=TeamThresholdsRead)
def get_series_team_thresholds(
    principal: UserDep, session: SessionDep, team_id: uuid.UUID
) -> TeamThresholdsRead:
    """A team's default detection thresholds (a series' own win) and the values in effect."""
    return service.team_thresholds(session, principal=principal, team_id=team_id)


@router.put("/thresholds", response_model=TeamThresholdsRead)
def put_series_team_thresholds(
    principal: UserDep, session: SessionDep, team_id: uuid.UUID, body: ThresholdsIn
) -> TeamThresholdsRead:
    """Set a team's default detection thresholds (team admins); a field left out: the default."""
    return service.set_team_thresholds(session, principal=principal, team_id=team_id, body=body)


@router.get("/{series_id}", response_model=SeriesRead)
def get_one_series(series_id: uuid.UUID, principal: UserDep, session: SessionDep) -> SeriesRead:
    return service.get(session, principal=principal, series_id=series_id)


@router.patch("/{series_id}", response_model=SeriesRead)
def update_series(
    series_id: uuid.UUID, body: SeriesUpdate, principal: UserDep, session: SessionDep
) -> SeriesRead:
    """Name, pin, archive a series or set its own thresholds (team members)."""
    return service.update(session, principal=principal, series_id=series_id, body=body)


@router.get("/{series_id}/history", response_model=SeriesHistory)
def get_series_history(
    series_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    metric: MetricName = "read_iops",
    job_index: Annotated[int, Query(ge=0, le=10_000)] = 0,
    max_points: Annotated[
        int, Query(ge=10, le=5000, description="more runs: downsampled to about this")
    ] = 2000,
) -> SeriesHistory:
    """One metric of one job over the series' runs, with each run's validity, the host-fact
    changes between runs and the changes found."""
    return service.history(
        session,
        principal=principal,
        series_id=series_id,
        metric=metric,
        job_index=job_index,
        max_points=max_points,
    )


@router.get("/{series_id}/detections", response_model=list[DetectionRead])
def list_series_detections(
    series_id: uuid.UUID, principal: UserDep, session: SessionDep
) -> list[DetectionRead]:
    return service.detections(session, principal=principal, series_id=series_id)


@router.patch("/{series_id}/detections/{detection_id}", response_model=DetectionRead)
def update_series_detection(
    series_id: uuid.UUID,
    detection_id: uuid.UUID,
    body: DetectionUpdate,
    principal: UserDep,
    session: SessionDep,
) -> DetectionRead:
    """Acknowledge (a real change: later runs are compared with what follows it), dismiss (noise:
    later runs are compared across it) or reopen a detection, with a comment (team members)."""
    return service.update_detection(
        session, principal=principal, series_id=series_id, detection_id=detection_id, body=body
    )


@router.get("/{series_id}/verdict", response_model=SeriesVerdict)
def get_series_verdict(
    series_id: uuid.UUID, principal: UserDep, session: SessionDep, run: uuid.UUID
) -> SeriesVerdict:
    """The verdict on one run of the series: each job's metrics against the valid runs before it,
    at the series' thresholds (what `iowatt ci` prints)."""
    return service.run_verdict(session, principal=principal, series_id=series_id, run_id=run)
