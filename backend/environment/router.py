import uuid
from typing import Annotated

from fastapi import APIRouter, Body, Query, status

from backend.auth.deps import SessionDep, UserDep
from backend.environment import service
from backend.environment.schemas import (
    EnvironmentCreate,
    EnvironmentRead,
    EnvironmentUpdate,
    GridSeriesImported,
)
from backend.kit.schema import Page

router = APIRouter(prefix="/environments", tags=["environments"])


@router.get("", response_model=Page[EnvironmentRead])
def list_environments(
    principal: UserDep,
    session: SessionDep,
    team_id: Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")] = None,
) -> Page[EnvironmentRead]:
    rows = service.list_environments(session, principal=principal, team_id=team_id)
    return Page[EnvironmentRead](items=service.to_read(session, rows), total=len(rows))


@router.post("", response_model=EnvironmentRead, status_code=status.HTTP_201_CREATED)
def create_environment(body: EnvironmentCreate, principal: UserDep, session: SessionDep) -> EnvironmentRead:
    return service.to_read(session, [service.create(session, principal=principal, body=body)])[0]


@router.patch("/{environment_id}", response_model=EnvironmentRead)
def update_environment(
    environment_id: uuid.UUID, body: EnvironmentUpdate, principal: UserDep, session: SessionDep
) -> EnvironmentRead:
    env = service.update(session, principal=principal, env_id=environment_id, body=body)
    return service.to_read(session, [env])[0]


@router.put("/{environment_id}/grid-intensity", response_model=GridSeriesImported)
def import_grid_intensity(
    environment_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    csv_text: Annotated[str, Body(media_type="text/csv", description="hour_utc,g_per_kwh per line")],
) -> GridSeriesImported:
    return service.import_grid_series(session, principal=principal, env_id=environment_id, csv_text=csv_text)


@router.delete(
    "/{environment_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`environment_in_use`: runs or campaigns name it (ids in `detail`)"}},
)
def delete_environment(
    environment_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    force: Annotated[
        bool, Query(description="detach the runs that name it (they keep their results)")
    ] = False,
) -> None:
    """Delete an environment (team admins; audited as environment.deleted). Runs or campaigns that
    name it: 409 "used by N runs and M campaigns" with their ids in `detail`, unless `force=true`."""
    service.delete(session, principal=principal, env_id=environment_id, force=force)
