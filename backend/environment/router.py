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
    RunEnvironment,
    TopologySuggestion,
)
from backend.kit.lanes import BULK
from backend.kit.schema import Page

envs = APIRouter(prefix="/environments", tags=["environments"])
# a run's environment as recorded (the run page): under /runs, served by this domain
runs = APIRouter(prefix="/runs", tags=["environments"])
router = APIRouter(dependencies=[BULK])


@envs.get("", response_model=Page[EnvironmentRead])
def list_environments(
    principal: UserDep,
    session: SessionDep,
    team_id: Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")] = None,
) -> Page[EnvironmentRead]:
    rows = service.list_environments(session, principal=principal, team_id=team_id)
    return Page[EnvironmentRead](items=service.to_read(session, rows), total=len(rows))


@envs.post("", response_model=EnvironmentRead, status_code=status.HTTP_201_CREATED)
def create_environment(body: EnvironmentCreate, principal: UserDep, session: SessionDep) -> EnvironmentRead:
    return service.to_read(session, [service.create(session, principal=principal, body=body)])[0]


@envs.patch("/{environment_id}", response_model=EnvironmentRead)
def update_environment(
    environment_id: uuid.UUID, body: EnvironmentUpdate, principal: UserDep, session: SessionDep
) -> EnvironmentRead:
    env = service.update(session, principal=principal, env_id=environment_id, body=body)
    return service.to_read(session, [env])[0]


@envs.put("/{environment_id}/grid-intensity", response_model=GridSeriesImported)
def import_grid_intensity(
    environment_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    csv_text: Annotated[str, Body(media_type="text/csv", description="hour_utc,g_per_kwh per line")],
) -> GridSeriesImported:
    return service.import_grid_series(session, principal=principal, env_id=environment_id, csv_text=csv_text)


@envs.delete(
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


@envs.get("/{environment_id}/topology-suggestion", response_model=TopologySuggestion)
def suggest_topology(
    environment_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    agent_id: Annotated[
        uuid.UUID | None, Query(description="the agent to read; default: the newest run's in the environment")
    ] = None,
    target_path: Annotated[
        str | None, Query(max_length=4096, description="a path on its host; default: the newest run's")
    ] = None,
) -> TopologySuggestion:
    """The topology the agent's inventory shows under a target (file system and mount options,
    btrfs/md/LVM level and members, fabric, write cache). Nothing is stored."""
    return service.suggest_topology(
        session, principal=principal, env_id=environment_id, agent_id=agent_id, target_path=target_path
    )


@runs.get("/{run_id}/environment", response_model=RunEnvironment)
def run_environment(run_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunEnvironment:
    """The run's environment as it was when the run was queued or uploaded, and what changed since."""
    return service.run_environment(session, principal=principal, run_id=run_id)


router.include_router(envs)
router.include_router(runs)
