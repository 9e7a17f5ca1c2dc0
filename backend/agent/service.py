import time
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from backend.agent import repository, wake
from backend.agent.schemas import AgentEnroll, EnrollmentTokenCreate, Heartbeat, Lease
from backend.auth.principal import AgentPrincipal, UserPrincipal
from backend.config import get_settings
from backend.errors import Conflict, NotFound, Unauthorized
from backend.jobs import enqueue
from backend.kit.security import AGENT_TOKEN_PREFIX, ENROLLMENT_TOKEN_PREFIX, new_token, token_hash
from backend.kit.time import utcnow
from backend.models import Agent, EnrollmentToken, Role, RunStatus
from backend.workload.schemas import WorkloadSpec


def create_enrollment_token(
    session: Session, *, principal: UserPrincipal | None, body: EnrollmentTokenCreate
) -> tuple[str, EnrollmentToken]:
    if principal is not None:
        principal.require(body.team_id, Role.admin)
    raw = new_token(ENROLLMENT_TOKEN_PREFIX)
    expires = utcnow() + timedelta(seconds=body.ttl_s) if body.ttl_s else None
    row = EnrollmentToken(
        team_id=body.team_id,
        token_hash=token_hash(raw),
        expires_at=expires,
        created_by=principal.user_id if principal else None,
    )
    session.add(row)
    session.flush()
    return raw, row


def enroll(session: Session, *, body: AgentEnroll) -> tuple[str, Agent]:
    tok = repository.enrollment_by_hash(session, token_hash(body.enrollment_token))
    now = utcnow()
    if tok is None or tok.revoked_at is not None or (tok.expires_at is not None and tok.expires_at <= now):
        raise Unauthorized("unknown, expired or revoked enrollment token", code="bad_enrollment_token")
    raw = new_token(AGENT_TOKEN_PREFIX)
    agent = repository.by_name(session, tok.team_id, body.name)
    if agent is not None and not body.replace and agent.revoked_at is None:
        raise Conflict(
            f"an agent named {body.name!r} is already enrolled in this team; "
            "enrol with replace to take it over",
            code="agent_name_taken",
        )
    if agent is None:
        agent = Agent(team_id=tok.team_id, name=body.name, hostname=body.hostname, token_hash=token_hash(raw))
        session.add(agent)
    else:  # replacing rotates the token: the old agent process can no longer act
        agent.token_hash, agent.revoked_at, agent.hostname = token_hash(raw), None, body.hostname
    agent.agent_version = body.agent_version
    agent.inventory = body.inventory
    agent.online, agent.last_heartbeat_at, agent.state = True, now, "idle"
    tok.uses += 1
    session.flush()
    return raw, agent


def _own_agent(session: Session, principal: AgentPrincipal, agent_id: uuid.UUID) -> Agent:
    principal.require_self(agent_id)
    agent = session.get(Agent, agent_id)
    if agent is None or agent.revoked_at is not None:
        raise Unauthorized("agent revoked", code="bad_token")
    return agent


def heartbeat(session: Session, *, principal: AgentPrincipal, agent_id: uuid.UUID, body: Heartbeat) -> Agent:
    agent = _own_agent(session, principal, agent_id)
    was_offline = not agent.online
    agent.online, agent.last_heartbeat_at, agent.state = True, utcnow(), body.state
    if body.agent_version:
        agent.agent_version = body.agent_version
    if was_offline:  # runs queued while it was away can go now
        enqueue(session, "run.dispatch_pending")
    return agent


def put_inventory(
    session: Session, *, principal: AgentPrincipal, agent_id: uuid.UUID, inventory: dict[str, Any]
) -> Agent:
    agent = _own_agent(session, principal, agent_id)
    agent.inventory = inventory
    return agent


def try_lease(session: Session, *, principal: AgentPrincipal, agent_id: uuid.UUID) -> Lease | None:
    """Hand the agent the run the dispatcher assigned to it, if any."""
    agent = _own_agent(session, principal, agent_id)
    agent.online, agent.last_heartbeat_at = True, utcnow()
    run = repository.assigned_run(session, agent_id)
    if run is None:
        return None
    settings = get_settings()
    run.lease_expires_at = utcnow() + timedelta(seconds=settings.lease_start_timeout_s)
    spec = WorkloadSpec.model_validate(run.workload_spec)
    assert run.lease_id is not None and run.status == RunStatus.assigned
    return Lease(
        run_id=run.id,
        lease_id=run.lease_id,
        lease_expires_at=run.lease_expires_at,
        target_path=run.target_path,
        engine_job=spec.engine_job(),
        # the idle baseline before and after the load counts against the agent's hard timeout too
        timeout_s=spec.timeout_s() + int(2 * (run.idle_s if run.idle_s is not None else 60)),
        meter=run.meter,
        idle_s=run.idle_s,
    )


def long_poll_lease(
    make_session: sessionmaker[Session], *, principal: AgentPrincipal, agent_id: uuid.UUID, wait_s: float
) -> Lease | None:
    """Long-poll: short transactions around a Redis wait, so no database transaction stays open."""
    deadline = time.monotonic() + min(wait_s, get_settings().longpoll_max_wait_s)
    while True:
        with make_session() as session, session.begin():
            lease = try_lease(session, principal=principal, agent_id=agent_id)
        if lease is not None:
            return lease
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        wake.wait(agent_id, remaining)
        if time.monotonic() >= deadline:
            # one last look: a wake-up may have arrived just at the deadline
            with make_session() as session, session.begin():
                return try_lease(session, principal=principal, agent_id=agent_id)


def get(session: Session, *, principal: UserPrincipal, agent_id: uuid.UUID) -> Agent:
    agent = repository.get_in_teams(session, agent_id, principal.team_ids)
    if agent is None:
        raise NotFound("agent not found")
    return agent
