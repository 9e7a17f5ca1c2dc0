"""Routes of group runs (ADR 0038): /run-groups for users, the start barrier under /runs/{id}
for a member's agent."""

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, status
from sqlalchemy.orm import Session, sessionmaker

from backend.agent.router import agent_short_tx
from backend.auth.deps import AgentDep, SessionDep, UserDep
from backend.auth.principal import AgentPrincipal
from backend.db import get_session_factory
from backend.kit.lanes import BULK, CONTROL
from backend.run import group, service
from backend.run.group_schemas import (
    ReadyAck,
    ReadyReport,
    RunGroupCreate,
    RunGroupRead,
    StartedAck,
    StartedReport,
)
from backend.workload.facts import ENGINE_UNAVAILABLE

router = APIRouter(prefix="/run-groups", tags=["runs"])
barrier_router = APIRouter(prefix="/runs", tags=["agent-protocol"], dependencies=[CONTROL])


@router.post(
    "",
    response_model=RunGroupRead,
    status_code=status.HTTP_201_CREATED,
    responses=ENGINE_UNAVAILABLE,
    dependencies=[CONTROL],
)
def create_group(body: RunGroupCreate, principal: UserDep, session: SessionDep) -> RunGroupRead:
    """Queue a group run: one member run per agent, assigned together when every agent is free,
    started at one instant the server sets once every member has prepared."""
    return group.read(session, group.create(session, principal=principal, body=body))


@router.get("/{group_id}", response_model=RunGroupRead, dependencies=[BULK])
def get_group(group_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunGroupRead:
    return group.read(session, group.get(session, principal=principal, group_id=group_id))


@router.post("/{group_id}/cancel", response_model=RunGroupRead, dependencies=[CONTROL])
def cancel_group(group_id: uuid.UUID, principal: UserDep, session: SessionDep) -> RunGroupRead:
    """Cancel every member (members of the team): queued and assigned ones at once, running ones
    at their next progress report."""
    return group.read(session, service.cancel_group(session, principal=principal, group_id=group_id))


@barrier_router.post("/{run_id}/ready", response_model=ReadyAck)
async def report_ready(
    run_id: uuid.UUID,
    body: ReadyReport,
    caller: Annotated[tuple[AgentPrincipal, str], Depends(agent_short_tx)],
    factory: Annotated[sessionmaker[Session], Depends(get_session_factory)],
    wait_s: Annotated[float, Query(ge=0, le=30, description="long-poll up to this many seconds")] = 25,
) -> ReadyAck:
    """A group member has prepared (started, idle baseline taken): long-polls until the server
    sets the instant every member starts at (`start_at`, server time) or the group stops."""
    principal, raw_token = caller
    return await group.long_poll_ready(
        factory, raw_token=raw_token, agent_id=principal.agent_id, run_id=run_id, body=body, wait_s=wait_s
    )


@barrier_router.post("/{run_id}/started", response_model=StartedAck)
def report_started(
    run_id: uuid.UUID, body: StartedReport, principal: AgentDep, session: SessionDep
) -> StartedAck:
    """The instant the member's engine started, on the agent's clock: its skew from start_at."""
    return group.started(session, principal=principal, run_id=run_id, body=body)
