import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, status
from fastapi.security import HTTPAuthorizationCredentials
from sqlalchemy.orm import Session, sessionmaker

from backend.agent import repository, service
from backend.agent.schemas import (
    AgentEnroll,
    AgentEnrolled,
    AgentRead,
    EnrollmentTokenCreate,
    EnrollmentTokenCreated,
    Heartbeat,
    HeartbeatAck,
    LeaseResponse,
)
from backend.auth import service as auth_service
from backend.auth.deps import AgentDep, SessionDep, UserDep, _bearer
from backend.auth.principal import AgentPrincipal
from backend.config import get_settings
from backend.db import get_session_factory
from backend.errors import Forbidden, Unauthorized
from backend.kit.schema import Page
from backend.kit.time import utcnow
from backend.models import Agent

router = APIRouter(prefix="/agents", tags=["agents"])


def _read(agent: Agent, current: dict[uuid.UUID, uuid.UUID]) -> AgentRead:
    return AgentRead(
        id=agent.id,
        team_id=agent.team_id,
        name=agent.name,
        hostname=agent.hostname,
        online=agent.online,
        state=agent.state,
        last_heartbeat_at=agent.last_heartbeat_at,
        enrolled_at=agent.enrolled_at,
        agent_version=agent.agent_version,
        inventory=agent.inventory,
        current_run_id=current.get(agent.id),
    )


@router.get("", response_model=Page[AgentRead])
def list_agents(principal: UserDep, session: SessionDep) -> Page[AgentRead]:
    agents = repository.list_in_teams(session, principal.team_ids)
    current = repository.current_runs(session, [a.id for a in agents])
    return Page[AgentRead](items=[_read(a, current) for a in agents], total=len(agents))


@router.get("/{agent_id}", response_model=AgentRead)
def get_agent(agent_id: uuid.UUID, principal: UserDep, session: SessionDep) -> AgentRead:
    agent = service.get(session, principal=principal, agent_id=agent_id)
    return _read(agent, repository.current_runs(session, [agent.id]))


@router.post("/enrollment-tokens", response_model=EnrollmentTokenCreated, status_code=status.HTTP_201_CREATED)
def create_enrollment_token(
    body: EnrollmentTokenCreate, principal: UserDep, session: SessionDep
) -> EnrollmentTokenCreated:
    raw, row = service.create_enrollment_token(session, principal=principal, body=body)
    return EnrollmentTokenCreated(id=row.id, team_id=row.team_id, token=raw, expires_at=row.expires_at)


@router.post("/enroll", response_model=AgentEnrolled, status_code=status.HTTP_201_CREATED)
def enroll(body: AgentEnroll, session: SessionDep) -> AgentEnrolled:
    raw, agent = service.enroll(session, body=body)
    return AgentEnrolled(
        agent_id=agent.id,
        agent_token=raw,
        team_id=agent.team_id,
        heartbeat_interval_s=get_settings().heartbeat_interval_s,
    )


@router.post("/{agent_id}/heartbeat", response_model=HeartbeatAck)
def heartbeat(agent_id: uuid.UUID, body: Heartbeat, principal: AgentDep, session: SessionDep) -> HeartbeatAck:
    service.heartbeat(session, principal=principal, agent_id=agent_id, body=body)
    return HeartbeatAck(server_time=utcnow(), heartbeat_interval_s=get_settings().heartbeat_interval_s)


@router.put("/{agent_id}/inventory", response_model=AgentRead)
def put_inventory(
    agent_id: uuid.UUID,
    inventory: Annotated[dict[str, Any], Body()],
    principal: AgentDep,
    session: SessionDep,
) -> AgentRead:
    agent = service.put_inventory(session, principal=principal, agent_id=agent_id, inventory=inventory)
    return _read(agent, repository.current_runs(session, [agent.id]))


def _agent_short_tx(
    factory: Annotated[sessionmaker[Session], Depends(get_session_factory)],
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> AgentPrincipal:
    """Authenticate in a short transaction of its own, so a long-poll holds no connection."""
    if creds is None:
        raise Unauthorized("missing bearer token", code="no_token")
    with factory() as session, session.begin():
        principal = auth_service.authenticate(session, raw_token=creds.credentials)
    if not isinstance(principal, AgentPrincipal):
        raise Forbidden("this needs an agent token", code="agent_only")
    return principal


@router.post("/{agent_id}/lease", response_model=LeaseResponse)
def lease(
    agent_id: uuid.UUID,
    principal: Annotated[AgentPrincipal, Depends(_agent_short_tx)],
    factory: Annotated[sessionmaker[Session], Depends(get_session_factory)],
    wait_s: Annotated[float, Query(ge=0, le=60, description="long-poll up to this many seconds")] = 25,
) -> LeaseResponse:
    principal.require_self(agent_id)
    return LeaseResponse(
        lease=service.long_poll_lease(factory, principal=principal, agent_id=agent_id, wait_s=wait_s)
    )
