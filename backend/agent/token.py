"""Agent tokens: expiry and rotation (docs/adr/0011).

An agent holds one token; it expires `agent_token_ttl_s` after it was issued. Before that the agent
rotates it (`POST /agents/{id}/token`). The token it rotated away from stays valid as the
*previous* token until its own expiry, so a rotation whose answer was lost never locks the agent
out; once the new token is used for the first time, the previous one gets only
`agent_token_overlap_s` more (for requests already in flight, such as a long-poll).

Kept apart from service.py so backend.auth can authenticate agent tokens without importing the
agent service (which imports backend.auth)."""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from backend.agent import repository
from backend.auth.principal import AgentPrincipal
from backend.config import get_settings
from backend.errors import Unauthorized
from backend.kit.security import AGENT_TOKEN_PREFIX, new_token, token_hash
from backend.kit.time import utcnow
from backend.models import Agent

REENROL = (
    "re-enrol the agent on its host: iowatt-agent enroll --replace (with a team admin's enrolment token)"
)


@dataclass(frozen=True)
class Issued:
    token: str
    expires_at: datetime


def issue(agent: Agent) -> Issued:
    """A fresh token for `agent` (enrolment and replace): any previous token ends now."""
    raw = new_token(AGENT_TOKEN_PREFIX)
    agent.token_hash = token_hash(raw)
    agent.token_expires_at = utcnow() + timedelta(seconds=get_settings().agent_token_ttl_s)
    agent.previous_token_hash, agent.previous_token_expires_at = None, None
    return Issued(raw, agent.token_expires_at)


def _expired(when: datetime) -> Unauthorized:
    return Unauthorized(
        f"this agent token expired at {when.isoformat(timespec='seconds')}; {REENROL}",
        code="token_expired",
    )


def authenticate(session: Session, raw_token: str) -> AgentPrincipal:
    """The agent a bearer token belongs to: its current token, or its previous one while that is
    still valid. Unknown or revoked: 401 bad_token; expired: 401 token_expired."""
    digest = token_hash(raw_token)
    found = repository.by_token_hash(session, digest)
    agent, holds_runs = found if found is not None else (None, False)
    if agent is None or agent.revoked_at is not None:
        raise Unauthorized("unknown or revoked agent token", code="bad_token")
    now = utcnow()
    if digest == agent.token_hash:
        if agent.token_expires_at <= now:
            raise _expired(agent.token_expires_at)
        overlap_end = now + timedelta(seconds=get_settings().agent_token_overlap_s)
        prev_end = agent.previous_token_expires_at
        if agent.previous_token_hash is not None and prev_end is not None and prev_end > overlap_end:
            # the first use of this token: the previous one keeps only the short overlap
            repository.shorten_previous_token(session, agent.id, digest, overlap_end)
    else:
        prev_end = agent.previous_token_expires_at
        if prev_end is None or prev_end <= now:
            raise _expired(prev_end or now)
    return AgentPrincipal(agent_id=agent.id, team_id=agent.team_id, agent=agent, holds_runs=holds_runs)


def expiry_of(agent: Agent, raw_token: str) -> datetime:
    """When the token the agent called with stops working (the previous token's end if it used
    that one: it then rotates again)."""
    if token_hash(raw_token) == agent.previous_token_hash and agent.previous_token_expires_at:
        return agent.previous_token_expires_at
    return agent.token_expires_at


def rotate(session: Session, *, principal: AgentPrincipal, agent_id: uuid.UUID, raw_token: str) -> Issued:
    """A new token for the calling agent. Called with the current token, that one becomes the
    previous token (valid until its own expiry, or a short overlap once the new one is used).
    Called with the previous token (the answer to an earlier rotation was lost), the previous
    token stays as it was and the unused token from that rotation is dropped."""
    principal.require_self(agent_id)
    agent = repository.lock_live(session, agent_id)
    if agent is None or agent.revoked_at is not None:
        raise Unauthorized("unknown or revoked agent token", code="bad_token")
    digest = token_hash(raw_token)
    if digest == agent.token_hash:
        prev_hash, prev_end = agent.token_hash, agent.token_expires_at
    elif digest == agent.previous_token_hash and agent.previous_token_expires_at is not None:
        prev_hash, prev_end = agent.previous_token_hash, agent.previous_token_expires_at
    else:  # rotated meanwhile by a request with another token: this one is gone
        raise Unauthorized("unknown or revoked agent token", code="bad_token")
    # flush the new previous_token_hash only after the old value is gone (unique constraint)
    agent.previous_token_hash = None
    session.flush()
    issued = issue(agent)
    agent.previous_token_hash, agent.previous_token_expires_at = prev_hash, prev_end
    session.flush()
    return issued
