import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, Response, status
from fastapi.security import HTTPAuthorizationCredentials
from iowatt_policy import effective_max_memory
from sqlalchemy.orm import Session, sessionmaker

from backend.agent import protocol, repository, service
from backend.agent import token as agent_token
from backend.agent.policy import reported_policy
from backend.agent.schemas import (
    AgentEnroll,
    AgentEnrolled,
    AgentRead,
    AgentTokenRotated,
    EnrollmentTokenCreate,
    EnrollmentTokenCreated,
    EnrollmentTokenRead,
    Heartbeat,
    HeartbeatAck,
    Inventory,
    LeaseRequest,
    LeaseResponse,
    PolicyRead,
)
from backend.auth import service as auth_service
from backend.auth.deps import AgentDep, SessionDep, UserDep, bearer
from backend.auth.principal import AgentPrincipal
from backend.config import get_settings
from backend.db import get_session_factory
from backend.errors import Forbidden, Unauthorized
from backend.kit.lanes import BULK, CONTROL
from backend.kit.schema import Page
from backend.kit.time import utcnow
from backend.models import Agent

router = APIRouter(prefix="/agents", tags=["agents"])


def policy_of(inventory: Inventory | dict[str, Any] | None) -> PolicyRead | None:
    """The policy part of an inventory (read, or stored) as libs/policy reads it (limits with the
    host's defaults filled in), or None."""
    reported = reported_policy(inventory)
    if reported is None:
        return None
    doc = reported.to_dict()
    doc["targets"] = [
        {"model": None, "serial_sha256": None, "size_bytes": None, "free_inodes": None, **t}
        for t in doc["targets"]
    ]
    doc["limits"]["max_memory_bytes"] = effective_max_memory(reported.limits, reported.mem_total_bytes).value
    return PolicyRead.model_validate(doc)


def _read(agent: Agent, current: dict[uuid.UUID, uuid.UUID], inventory: Inventory | None = None) -> AgentRead:
    """`inventory`: the agent's inventory already read (PUT /inventory's body); else the stored one
    is read once, for the answer and its policy (each read validates the whole document; it was
    read twice per agent: docs/benchmarks.md § A thousand agents)."""
    if inventory is None:
        inventory = Inventory.read(agent.inventory)
    return AgentRead(
        id=agent.id,
        team_id=agent.team_id,
        name=agent.name,
        hostname=agent.hostname,
        kind="external" if agent.kind == "external" else "agent",
        online=agent.online,
        state=agent.state,
        last_heartbeat_at=agent.last_heartbeat_at,
        enrolled_at=agent.enrolled_at,
        revoked_at=agent.revoked_at,
        token_expires_at=agent.token_expires_at,
        agent_version=agent.agent_version,
        inventory=inventory,
        policy=policy_of(inventory),
        current_run_id=current.get(agent.id),
    )


@router.get("", response_model=Page[AgentRead], dependencies=[BULK])
def list_agents(
    principal: UserDep,
    session: SessionDep,
    team_id: Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")] = None,
) -> Page[AgentRead]:
    agents = repository.list_in_teams(session, principal.teams_for(team_id))
    current = repository.current_runs(session, [a.id for a in agents])
    return Page[AgentRead](items=[_read(a, current) for a in agents], total=len(agents))


# --- enrolment tokens (before /{agent_id}, which would take "enrollment-tokens" for an id) -----


@router.post(
    "/enrollment-tokens",
    response_model=EnrollmentTokenCreated,
    status_code=status.HTTP_201_CREATED,
    summary="Create an enrolment token (team admin); the token is shown only here",
    dependencies=[BULK],
)
def create_enrollment_token(
    body: EnrollmentTokenCreate, principal: UserDep, session: SessionDep
) -> EnrollmentTokenCreated:
    raw, row = service.create_enrollment_token(session, principal=principal, body=body)
    return EnrollmentTokenCreated(
        id=row.id, team_id=row.team_id, token=raw, expires_at=row.expires_at, max_uses=row.max_uses
    )


@router.get(
    "/enrollment-tokens",
    response_model=Page[EnrollmentTokenRead],
    summary="Enrolment tokens of the teams you administer (never the token itself)",
    dependencies=[BULK],
)
def list_enrollment_tokens(
    principal: UserDep, session: SessionDep, team_id: uuid.UUID | None = None
) -> Page[EnrollmentTokenRead]:
    rows = service.list_enrollment_tokens(session, principal=principal, team_id=team_id)
    return Page[EnrollmentTokenRead](
        items=[EnrollmentTokenRead.model_validate(r) for r in rows], total=len(rows)
    )


@router.delete(
    "/enrollment-tokens/{token_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Revoke an enrolment token (team admin); agents enrolled with it stay",
    dependencies=[BULK],
)
def revoke_enrollment_token(token_id: uuid.UUID, principal: UserDep, session: SessionDep) -> Response:
    service.revoke_enrollment_token(session, principal=principal, token_id=token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{agent_id}", response_model=AgentRead, dependencies=[BULK])
def get_agent(agent_id: uuid.UUID, principal: UserDep, session: SessionDep) -> AgentRead:
    agent = service.get(session, principal=principal, agent_id=agent_id)
    return _read(agent, repository.current_runs(session, [agent.id]))


@router.post(
    "/{agent_id}/revoke",
    response_model=AgentRead,
    summary="Revoke an agent (team admin): its token is refused at once, its unfinished runs fail",
    dependencies=[BULK],
)
def revoke_agent(agent_id: uuid.UUID, principal: UserDep, session: SessionDep) -> AgentRead:
    agent = service.revoke(session, principal=principal, agent_id=agent_id)
    return _read(agent, {})


@router.delete(
    "/{agent_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete an agent (team admin): revoked, hidden, its name free again; its runs stay",
    dependencies=[BULK],
)
def delete_agent(agent_id: uuid.UUID, principal: UserDep, session: SessionDep) -> Response:
    service.delete(session, principal=principal, agent_id=agent_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/enroll",
    response_model=AgentEnrolled,
    status_code=status.HTTP_201_CREATED,
    responses={
        403: {
            "description": "replace with a token not made by a current admin of the team; "
            "`agent_protocol_unsupported`: the agent's protocol is more than one version away"
        }
    },
    dependencies=[CONTROL, Depends(protocol.check)],
)
def enroll(body: AgentEnroll, session: SessionDep) -> AgentEnrolled:
    raw, agent = service.enroll(session, body=body)
    return AgentEnrolled(
        agent_id=agent.id,
        agent_token=raw,
        token_expires_at=agent.token_expires_at,
        team_id=agent.team_id,
        heartbeat_interval_s=get_settings().heartbeat_interval_s,
    )


# The two dependencies below only read the request or the clock: coroutines, so they run on the
# event loop instead of a hop to the threadpool and back each (as backend/auth/deps.py's).
async def _raw_token(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
    """The bearer token itself (already authenticated by AgentDep): rotation and the heartbeat's
    expiry depend on which of the agent's tokens it is."""
    return creds.credentials if creds is not None else ""


RawTokenDep = Annotated[str, Depends(_raw_token)]


async def _received_at() -> datetime:
    """When the request reached the route, before its other dependencies (authentication reads the
    database): t1 of the agent's clock exchange, so the server's own work counts as its, not as
    the network's round trip."""
    return utcnow()


@router.post("/{agent_id}/heartbeat", response_model=HeartbeatAck, dependencies=[CONTROL])
def heartbeat(
    received_at: Annotated[datetime, Depends(_received_at)],
    agent_id: uuid.UUID,
    body: Heartbeat,
    principal: AgentDep,
    raw_token: RawTokenDep,
    session: SessionDep,
) -> HeartbeatAck:
    agent, idle = service.heartbeat(session, principal=principal, agent_id=agent_id, body=body)
    settings = get_settings()
    return HeartbeatAck(
        received_at=received_at,
        server_time=utcnow(),
        heartbeat_interval_s=service.heartbeat_interval(session, idle=idle),
        token_expires_at=agent_token.expiry_of(agent, raw_token),
        token_ttl_s=settings.agent_token_ttl_s,
    )


@router.post(
    "/{agent_id}/token",
    response_model=AgentTokenRotated,
    summary="Rotate the calling agent's token (docs/adr/0011): store the new one before using it",
    dependencies=[CONTROL],
)
def rotate_token(
    agent_id: uuid.UUID, principal: AgentDep, raw_token: RawTokenDep, session: SessionDep
) -> AgentTokenRotated:
    issued = agent_token.rotate(session, principal=principal, agent_id=agent_id, raw_token=raw_token)
    return AgentTokenRotated(agent_token=issued.token, token_expires_at=issued.expires_at)


@router.put("/{agent_id}/inventory", response_model=AgentRead, dependencies=[CONTROL])
def put_inventory(
    agent_id: uuid.UUID, inventory: Inventory, principal: AgentDep, session: SessionDep
) -> AgentRead:
    agent = service.put_inventory(session, principal=principal, agent_id=agent_id, inventory=inventory)
    return _read(agent, repository.current_runs(session, [agent.id]), inventory)


def _authenticate_short_tx(factory: sessionmaker[Session], raw_token: str) -> object:
    with factory() as session, session.begin():
        return auth_service.authenticate(session, raw_token=raw_token)


async def _agent_short_tx(
    factory: Annotated[sessionmaker[Session], Depends(get_session_factory)],
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> tuple[AgentPrincipal, str]:
    """Authenticate in a short transaction of its own, so a long-poll holds no connection; the raw
    token goes on to the long-poll, which checks it again at every look. On the long-polls' own
    threads (service.in_longpoll_thread), never the threads other requests share."""
    if creds is None:
        raise Unauthorized("missing bearer token", code="no_token")
    principal = await service.in_longpoll_thread(_authenticate_short_tx, factory, creds.credentials)
    if not isinstance(principal, AgentPrincipal):
        raise Forbidden("this needs an agent token", code="agent_only")
    return principal, creds.credentials


# the agent's long-polls elsewhere (a group run's start barrier, backend/run/group_router.py)
agent_short_tx = _agent_short_tx


async def _bearer_token(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
    """The poll's bearer token, not checked yet: the long-poll's first look authenticates it in the
    transaction of its look (one transaction per poll less than a check of its own first; the
    poll supersedes nobody until then, service.long_poll_lease)."""
    if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
        raise Unauthorized("missing bearer token", code="no_token")
    return creds.credentials


@router.post("/{agent_id}/lease", response_model=LeaseResponse, dependencies=[CONTROL])
async def lease(
    agent_id: uuid.UUID,
    raw_token: Annotated[str, Depends(_bearer_token)],
    factory: Annotated[sessionmaker[Session], Depends(get_session_factory)],
    wait_s: Annotated[
        float,
        Query(
            ge=0,
            le=300,
            description="long-poll up to this many seconds (the server honours up to its "
            "IOWATT_LONGPOLL_MAX_WAIT_S, 80 by default; ask for the answer's `poll_wait_s`)",
        ),
    ] = 25,
    body: Annotated[LeaseRequest | None, Body()] = None,
) -> LeaseResponse:
    """Async: the wait holds no worker thread (docs/adr/0002); database work runs in short
    threadpool calls. The body (the process's boot id) is optional: older agents send none."""
    boot_id = body.boot_id if body is not None else None
    lease, poll_wait_s = await service.long_poll_lease(
        factory, raw_token=raw_token, agent_id=agent_id, wait_s=wait_s, boot_id=boot_id
    )
    return LeaseResponse(lease=lease, poll_wait_s=poll_wait_s)
