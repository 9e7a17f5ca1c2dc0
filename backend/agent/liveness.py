"""An agent's liveness stamp (`agents.online`, `agents.last_heartbeat_at`: beat's
`agent.mark_silent_offline`, the agents page's "last seen" and the offline alert read it), written
by whatever the agent itself sends: its heartbeats, its long-poll's looks, and a busy agent's run
reports (start, progress). The run reports count since an idle agent's heartbeats may be paced far
apart (ADR 0051): the agent that leased a run just after one must not look silent until the next.
Apart from agent.service so run.service can stamp without importing it (agent.service imports
run.service)."""

import uuid
from datetime import datetime

from sqlalchemy.orm import Session

from backend.auth.principal import AgentPrincipal
from backend.config import get_settings
from backend.kit.time import utcnow
from backend.models import Agent

# The stamp is written only when it is this old (at most a third of agent_offline_after_s), when the
# agent was offline, or when another agent process speaks (a new boot id). So an idle long-poll's
# look, most heartbeats and most progress reports are read-only for the agent's row: stamping at
# every look and heartbeat made 200 idle agents about 60 write commits a second (bench/load;
# docs/benchmarks.md § Load).
LIVENESS_STAMP_S = 15.0


def stamp_every_s() -> float:
    """How old a stamp must be before it is written again: LIVENESS_STAMP_S, at most a third of
    agent_offline_after_s (the one rule: stamp_alive's and the long-polls' re-check's)."""
    return min(LIVENESS_STAMP_S, get_settings().agent_offline_after_s / 3)


def stamp_alive(agent: Agent, now: datetime, boot_id: uuid.UUID | None) -> None:
    """Mark the agent online and seen at `now`, writing only when that tells something new."""
    every_s = stamp_every_s()
    last = agent.last_heartbeat_at
    if (
        not agent.online
        or last is None
        or not 0 <= (now - last).total_seconds() < every_s  # also a server clock set back
        or (boot_id is not None and boot_id != agent.boot_id)
    ):
        agent.online, agent.last_heartbeat_at = True, now


def seen_at_work(session: Session, *, principal: AgentPrincipal) -> None:
    """A run report of the agent's (start, progress) stamps it alive as a heartbeat does. Its row
    was read by the request's authentication (the identity map's, no statement) unless the
    principal came from elsewhere; a write only when the stamp is due."""
    found = principal.read_in(session)
    agent = found[0] if found is not None else session.get(Agent, principal.agent_id)
    if agent is not None and agent.revoked_at is None:
        stamp_alive(agent, utcnow(), None)
