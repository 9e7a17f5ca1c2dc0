import asyncio
import math
import random
import time
import uuid
import weakref
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypeVar

import anyio.to_thread
from iowatt_workload import DEFAULT_IDLE_S
from sqlalchemy.orm import Session, sessionmaker

from backend.agent import repository, wake
from backend.agent import token as agent_token
from backend.agent.liveness import LIVENESS_STAMP_S as LIVENESS_STAMP_S
from backend.agent.liveness import stamp_alive as _stamp_alive
from backend.agent.liveness import stamp_every_s as _stamp_every_s
from backend.agent.policy import stored_inventory
from backend.agent.schemas import AgentEnroll, EnrollmentTokenCreate, Heartbeat, Inventory, Lease
from backend.audit import service as audit
from backend.auth import repository as auth_repo
from backend.auth import service as auth_service
from backend.auth.principal import AgentPrincipal, UserPrincipal
from backend.config import get_settings
from backend.db import get_sessionmaker
from backend.errors import Conflict, Forbidden, NotFound, Unauthorized
from backend.jobs import enqueue
from backend.kit.security import ENROLLMENT_TOKEN_PREFIX, new_token, token_hash
from backend.kit.time import utcnow
from backend.logs import log
from backend.models import Agent, EnrollmentToken, Role, RunStatus
from backend.run import service as run_service
from backend.workload.schemas import load_spec

# A heartbeat says "idle, no current run" as built, perhaps just before a lease reached the agent;
# with its retry (2 attempts of 30 s) it may arrive up to about a minute later. Only runs started
# earlier than this are taken as lost on a heartbeat's word (a lease poll needs no grace). A
# heartbeat with a boot id needs none for runs another agent process started (heartbeat below).
IDLE_HEARTBEAT_GRACE_S = 75

# --- enrolment tokens -----------------------------------------------------------------------------


def create_enrollment_token(
    session: Session, *, principal: UserPrincipal | None, body: EnrollmentTokenCreate
) -> tuple[str, EnrollmentToken]:
    """principal None: the server's operator (`iowatt-server enrollment-token` on the server host)."""
    if principal is not None:
        principal.require(body.team_id, Role.admin)
    raw = new_token(ENROLLMENT_TOKEN_PREFIX)
    row = EnrollmentToken(
        team_id=body.team_id,
        token_hash=token_hash(raw),
        expires_at=utcnow() + timedelta(seconds=body.ttl_s),
        created_by=principal.user_id if principal else None,
        operator=principal is None,
        max_uses=body.max_uses,
        uses=0,
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        team_id=row.team_id,
        action="enrollment_token.created",
        target_kind="enrollment_token",
        target_id=row.id,
        user_id=principal.user_id if principal else None,
        details={"max_uses": row.max_uses},
    )
    return raw, row


def _admin_teams(principal: UserPrincipal, team_id: uuid.UUID | None) -> list[uuid.UUID]:
    if team_id is not None:
        principal.require(team_id, Role.admin)
        return [team_id]
    teams = [t for t, role in principal.roles.items() if role is Role.admin]
    if not teams:
        raise Forbidden("this needs the admin role in a team", code="forbidden")
    return teams


def list_enrollment_tokens(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID | None
) -> list[EnrollmentToken]:
    return repository.enrollment_tokens(session, _admin_teams(principal, team_id))


def revoke_enrollment_token(session: Session, *, principal: UserPrincipal, token_id: uuid.UUID) -> None:
    row = session.get(EnrollmentToken, token_id, with_for_update=True)
    if row is None or row.team_id not in principal.team_ids:
        raise NotFound("enrollment token not found")
    principal.require(row.team_id, Role.admin)
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        audit.record(
            session,
            team_id=row.team_id,
            action="enrollment_token.revoked",
            target_kind="enrollment_token",
            target_id=row.id,
            user_id=principal.user_id,
        )


def _may_replace(session: Session, tok: EnrollmentToken) -> bool:
    """Only the operator's tokens and those of a user who is an admin of the team *now*."""
    if tok.operator:
        return True
    if tok.created_by is None:
        return False
    return auth_repo.roles_of(session, tok.created_by).get(tok.team_id) is Role.admin


def enroll(session: Session, *, body: AgentEnroll) -> tuple[str, Agent]:
    """The new agent (or the replaced one) and its token, which expires (docs/adr/0011)."""
    tok = repository.enrollment_by_hash(session, token_hash(body.enrollment_token))
    now = utcnow()
    if (
        tok is None
        or tok.revoked_at is not None
        or (tok.expires_at is not None and tok.expires_at <= now)
        or tok.uses >= tok.max_uses
    ):
        raise Unauthorized(
            "unknown, expired, used up or revoked enrollment token", code="bad_enrollment_token"
        )
    agent = repository.by_name(session, tok.team_id, body.name)
    if agent is not None and agent.kind != "agent":
        raise Conflict(
            f"{body.name!r} names an external host of this team (its results are uploaded): "
            "enrol under another name",
            code="agent_name_taken",
        )
    if agent is not None and agent.revoked_at is not None:
        raise Conflict(
            f"the agent named {body.name!r} was revoked; its name stays taken until a team admin "
            "deletes it (DELETE /api/v1/agents/{id}), or enrol under another name",
            code="agent_revoked",
        )
    if agent is not None and not body.replace:
        raise Conflict(
            f"an agent named {body.name!r} is already enrolled in this team; "
            "enrol with replace to take it over",
            code="agent_name_taken",
        )
    if agent is not None and not _may_replace(session, tok):
        raise Forbidden(
            "replacing an enrolled agent needs an enrollment token created by an admin of the team",
            code="replace_needs_admin_token",
        )
    inventory = stored_inventory(body.inventory, "inventory.") if body.inventory is not None else None
    replacing = agent is not None
    if agent is None:
        agent = Agent(team_id=tok.team_id, name=body.name, hostname=body.hostname)
        issued = agent_token.issue(agent)
        session.add(agent)
    else:  # replacing issues a new token (and ends the previous one): the old process cannot act
        issued = agent_token.issue(agent)
        agent.hostname = body.hostname
        wake.wake_after_commit(session, agent.id)  # the old process's long-poll ends with a 401
    agent.agent_version = body.agent_version
    agent.inventory = inventory
    agent.online, agent.last_heartbeat_at, agent.state = True, now, "idle"
    tok.uses += 1
    session.flush()
    audit.record(
        session,
        team_id=agent.team_id,
        action="agent.enrolled",
        target_kind="agent",
        target_id=agent.id,
        actor=f"agent {agent.name}",
        details={"hostname": agent.hostname, "enrollment_token_id": str(tok.id), "replaced": replacing},
    )
    return issued.token, agent


# --- agents (user side) -------------------------------------------------------------------------


def get(session: Session, *, principal: UserPrincipal, agent_id: uuid.UUID) -> Agent:
    agent = repository.get_in_teams(session, agent_id, principal.team_ids)
    if agent is None:
        raise NotFound("agent not found")
    return agent


def _retire(session: Session, agent: Agent, reason: str) -> None:
    now = utcnow()
    if agent.revoked_at is None:
        agent.revoked_at = now
    agent.online, agent.state = False, "revoked"
    run_service.fail_agent_runs(session, agent_id=agent.id, reason=reason)
    wake.wake_after_commit(session, agent.id)  # a long-poll waiting now ends with a 401


def revoke(session: Session, *, principal: UserPrincipal, agent_id: uuid.UUID) -> Agent:
    """The agent's token is refused from now on; its unfinished runs fail; the name stays taken."""
    agent = repository.get_in_teams(session, agent_id, principal.team_ids, lock=True)
    if agent is None:
        raise NotFound("agent not found")
    principal.require(agent.team_id, Role.admin)
    if agent.revoked_at is None:
        _retire(session, agent, "the agent was revoked")
        audit.record(
            session,
            team_id=agent.team_id,
            action="agent.revoked",
            target_kind="agent",
            target_id=agent.id,
            user_id=principal.user_id,
            details={"name": agent.name},
        )
    return agent


def delete(session: Session, *, principal: UserPrincipal, agent_id: uuid.UUID) -> None:
    """Revoke and hide the agent and free its name; its runs and results stay."""
    agent = repository.get_in_teams(session, agent_id, principal.team_ids, lock=True)
    if agent is None:
        raise NotFound("agent not found")
    principal.require(agent.team_id, Role.admin)
    _retire(session, agent, "the agent was deleted")
    agent.deleted_at = utcnow()
    audit.record(
        session,
        team_id=agent.team_id,
        action="agent.deleted",
        target_kind="agent",
        target_id=agent.id,
        user_id=principal.user_id,
        details={"name": agent.name},
    )


# --- agent side ---------------------------------------------------------------------------------


def mark_silent_offline(session: Session) -> list[uuid.UUID]:
    """Agents not heard from for `agent_offline_after_s` (no heartbeat since, or since enrolment if
    none) are marked offline; the ids of those just marked (beat's `agent.mark_silent_offline`)."""
    before = utcnow() - timedelta(seconds=get_settings().agent_offline_after_s)
    return repository.mark_silent_offline(session, before)


def _own_agent(session: Session, principal: AgentPrincipal, agent_id: uuid.UUID) -> Agent:
    principal.require_self(agent_id)
    agent = session.get(Agent, agent_id, populate_existing=True)
    if agent is None or agent.revoked_at is not None:
        raise Unauthorized("unknown or revoked agent token", code="bad_token")
    return agent


def _own_agent_holding(
    session: Session, principal: AgentPrincipal, agent_id: uuid.UUID
) -> tuple[Agent, bool]:
    """_own_agent and whether a run is assigned to it or running on it, in one plain read: an idle
    agent's heartbeat or long-poll look then needs no row lock (bench/load). A principal
    authenticated in this session brings both (`AgentPrincipal.read_in`): the row is not read
    again (one statement less per heartbeat and per look)."""
    principal.require_self(agent_id)
    found = principal.read_in(session) or repository.with_runs_held(session, agent_id)
    agent, holds_runs = found if found is not None else (None, False)
    if agent is None or agent.revoked_at is not None:
        raise Unauthorized("unknown or revoked agent token", code="bad_token")
    return agent, holds_runs


# how long a process reuses its count of online agents (idle heartbeats' pace): a query per 15 s
_ONLINE_COUNT_S = 15.0
_online_count: tuple[float, int] = (float("-inf"), 0)  # (monotonic s, agents online)


def _agents_online(session: Session) -> int:
    global _online_count
    taken, n = _online_count
    if time.monotonic() - taken >= _ONLINE_COUNT_S:
        n = repository.count_online(session)
        _online_count = (time.monotonic(), n)
    return n


# what every agent asked for before the server named a wait, and what it still names to a small fleet
DEFAULT_POLL_WAIT_S = 25


def poll_wait(session: Session) -> int:
    """The wait the server names for an agent's next long-poll (`LeaseResponse.poll_wait_s`). An
    idle agent's poll costs the API one look when it starts (authentication and a read, ~5-10 ms
    of CPU) and nothing while it waits, so an idle fleet costs its polls' rate: paced so the
    instance's agents start about `idle_polls_per_s` polls a second in all (1,000 agents: every
    80 s, not every 25), never shorter than 25 s, never longer than `longpoll_max_wait_s`. Past 25 s
    each answer is drawn within 80-100 % of the pace: agents that polled together (a fleet started
    at once) would otherwise keep polling together, the whole fleet's looks within a second at
    every wait. The count of online agents is the heartbeats' (a query per process per 15 s). A
    waiting poll keeps its agent online (`stamp_waiting`, ADR 0053)."""
    s = get_settings()
    paced = math.ceil(_agents_online(session) / s.idle_polls_per_s)
    if paced <= DEFAULT_POLL_WAIT_S:
        return min(DEFAULT_POLL_WAIT_S, s.longpoll_max_wait_s)
    target = min(paced, s.longpoll_max_wait_s)
    return max(min(DEFAULT_POLL_WAIT_S, target), round(target * random.uniform(0.8, 1.0)))


def heartbeat_interval(session: Session, *, idle: bool) -> int:
    """The heartbeat interval the server asks of an agent (it follows each answer's). A busy agent
    (or one a run waits for): `heartbeat_interval_s`. An idle one long-polls, and each poll stamps
    it alive, so its heartbeats only refresh its state, its token's expiry and its clock samples:
    paced so the instance's idle agents send about `idle_heartbeats_per_s` in all (1,000 agents:
    every 200 s instead of 10), within [heartbeat_interval_s, idle_heartbeat_max_s]. Not bound to
    agent_offline_after_s: an idle agent's polls and a busy one's run reports stamp it alive
    (backend/agent/liveness.py; ADR 0051, docs/benchmarks.md § A thousand agents, the CPU budget)."""
    s = get_settings()
    if not idle:
        return s.heartbeat_interval_s
    paced = math.ceil(_agents_online(session) / s.idle_heartbeats_per_s)
    if paced <= s.heartbeat_interval_s:
        return s.heartbeat_interval_s
    # each answer within ±25 % of the pace: agents that started together (a fleet deployed at once,
    # bench/load's) would otherwise beat together at every interval, the whole fleet within a few
    # seconds; random answers spread them over the interval in a few beats (the mean stays the pace)
    jittered = round(paced * random.uniform(0.75, 1.25))  # reseeded in each forked API process
    return max(s.heartbeat_interval_s, min(jittered, s.idle_heartbeat_max_s))


def heartbeat(
    session: Session, *, principal: AgentPrincipal, agent_id: uuid.UUID, body: Heartbeat
) -> tuple[Agent, bool]:
    """The agent's heartbeat; whether it is idle (no run held, idle by its own word)."""
    agent, holds_runs = _own_agent_holding(session, principal, agent_id)
    was_offline = not agent.online
    _stamp_alive(agent, utcnow(), body.boot_id)  # before the boot id below is taken over
    agent.state = body.state
    if body.agent_version:
        agent.agent_version = body.agent_version
    if was_offline:  # runs queued while it was away can go now
        enqueue(session, "run.dispatch_pending")
    if body.boot_id is not None:
        # the process that sent it: its runs started by another process (a restart) fail at once
        agent.boot_id = body.boot_id
    if body.boot_id is not None and holds_runs:  # (an idle agent has nothing to lose)
        run_service.fail_lost_to_restart(
            session, agent_id=agent.id, boot_id=body.boot_id, held_lease_id=body.current_lease_id
        )
    if holds_runs and body.state == "idle" and body.current_run_id is None and body.current_lease_id is None:
        # a restarted agent's own word: its running run was lost. A heartbeat built before a run
        # started may arrive late (retried), so only runs started a grace earlier count.
        # Never a run this same process started: it still holds it (uploading, spooled, or about
        # to report a failure); the lease's expiry is the backstop.
        run_service.fail_lost(
            session,
            agent_id=agent.id,
            idle_since=utcnow() - timedelta(seconds=IDLE_HEARTBEAT_GRACE_S),
            boot_id=body.boot_id,
        )
    return agent, body.state == "idle" and not holds_runs


def put_inventory(
    session: Session, *, principal: AgentPrincipal, agent_id: uuid.UUID, inventory: Inventory
) -> Agent:
    agent = _own_agent(session, principal, agent_id)
    agent.inventory = stored_inventory(inventory, "")
    return agent


def try_lease(
    session: Session,
    *,
    principal: AgentPrincipal,
    agent_id: uuid.UUID,
    polled_at: datetime,
    boot_id: uuid.UUID | None = None,
) -> Lease | None:
    """Hand the agent the run the dispatcher assigned to it, if any. `polled_at`: when the server
    received the poll; `boot_id`: the polling process's (None from older agents). An agent asks
    for work only when it runs nothing, so its runs started before then by another process (or
    by one of unknown boot id) were lost in a restart: they fail now (run_service.fail_lost). A
    run the polling process started is still its own: its result may be uploading or waiting in
    its spool (a network cut), so it is left to that process and to the lease's expiry."""
    agent, holds_runs = _own_agent_holding(session, principal, agent_id)  # no row lock when idle
    _stamp_alive(agent, utcnow(), boot_id)  # an idle look of a live agent writes nothing
    if boot_id is not None:
        agent.boot_id = boot_id  # a run this poll hands out records it when it starts
    if not holds_runs:
        return None  # nothing to hand out, nothing lost
    run, paths = run_service.hand_out_after_lost(
        session, agent_id=agent_id, idle_since=polled_at, boot_id=boot_id
    )
    if run is None:
        return None
    spec = load_spec(run.workload_spec)  # never fails on a row an older schema wrote
    assert run.lease_id is not None and run.status == RunStatus.assigned
    return Lease(
        run_id=run.id,
        lease_id=run.lease_id,
        lease_expires_at=run.lease_expires_at,
        target_path=run.target_path,
        targets=paths,
        engine_job=spec.engine_job(),
        # the idle baseline before and after the load counts against the agent's hard timeout too
        timeout_s=spec.timeout_s() + int(2 * (run.idle_s if run.idle_s is not None else DEFAULT_IDLE_S)),
        meter=run.meter,
        destructive=run.destructive,
        idle_s=run.idle_s,
        group=run_service.lease_group(session, run),
    )


# Long-polls' database hops (authentication, each look) run on threads of their own, never on
# the 40 threads every other request shares. 200 waiting agents re-look every 5 s; on the shared
# threads those hops filled all 40 while they waited for a pooled connection, and the connections
# were held by requests waiting for a thread to finish: the API stopped (bench/load).
LONGPOLL_THREADS = 8
_longpoll_limiters: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter]" = (
    weakref.WeakKeyDictionary()
)
_T = TypeVar("_T")


async def in_longpoll_thread(func: Callable[..., _T], *args: object) -> _T:
    """`func(*args)` on the long-polls' own threads (one limiter per event loop)."""
    loop = asyncio.get_running_loop()
    limiter = _longpoll_limiters.get(loop)
    if limiter is None:
        limiter = _longpoll_limiters[loop] = anyio.CapacityLimiter(LONGPOLL_THREADS)
    return await anyio.to_thread.run_sync(func, *args, limiter=limiter)


def _look(
    make_session: sessionmaker[Session],
    raw_token: str,
    agent_id: uuid.UUID,
    polled_at: datetime,
    boot_id: uuid.UUID | None,
    name_wait: bool = False,
) -> tuple[Lease | None, int | None]:
    """One look of a long-poll in its own short transaction, and (`name_wait`: the poll's first
    look) the wait to name for the agent's next poll. The token is checked again each time, so a
    poll that was waiting when its agent was revoked, deleted or replaced (a new token) ends with
    401 instead of taking a lease."""
    with make_session() as session, session.begin():
        principal = auth_service.authenticate(session, raw_token=raw_token)
        if not isinstance(principal, AgentPrincipal):
            raise Forbidden("this needs an agent token", code="agent_only")
        lease = try_lease(
            session, principal=principal, agent_id=agent_id, polled_at=polled_at, boot_id=boot_id
        )
        return lease, poll_wait(session) if name_wait else None


async def long_poll_lease(
    make_session: sessionmaker[Session],
    *,
    raw_token: str,
    agent_id: uuid.UUID,
    wait_s: float,
    boot_id: uuid.UUID | None = None,
) -> tuple[Lease | None, int]:
    """Long-poll: short transactions in the threadpool around an asyncio wait for the agent's
    wake-up, so a waiting agent holds neither a database connection nor a thread. The waiter is
    registered before the first look, so a wake-up between a look and the wait is not lost. The
    first look authenticates the poll (each look checks the token again), and only then does the
    poll supersede the agent's older ones (`announce`): a caller without the agent's token ends
    nobody's poll, and the route needs no transaction of its own to authenticate first (one
    transaction and one threadpool hop less per poll; docs/benchmarks.md § A thousand agents, the
    CPU budget). A wake-up also comes when the agent is revoked or replaced: the next look then
    answers 401. A wake-up lost in Redis is made up for by this process's periodic re-check
    (`_recheck`), which also keeps the agent of a waiting poll online (`stamp_waiting`: a wait
    may outlast agent_offline_after_s). Returns the lease, if any, and the wait to name for the
    agent's next poll (`poll_wait`, from the first look)."""
    deadline = time.monotonic() + min(wait_s, get_settings().longpoll_max_wait_s)
    polled_at = utcnow()
    async with wake.listen(agent_id, announce=False) as waiter:
        _start_recheck()
        lease, named = await in_longpoll_thread(
            _look, make_session, raw_token, agent_id, polled_at, boot_id, True
        )
        next_wait = named if named is not None else DEFAULT_POLL_WAIT_S
        if lease is not None:
            return lease, next_wait
        if waiter.superseded:  # a newer poll of this agent waits now (wake.py): it gets the work
            return None, next_wait
        await waiter.announce()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or waiter.superseded:
                return None, next_wait
            await waiter.wait(remaining)
            if waiter.superseded:
                return None, next_wait
            lease, _ = await in_longpoll_thread(_look, make_session, raw_token, agent_id, polled_at, boot_id)
            if lease is not None:
                return lease, next_wait


# The re-check that makes up for lost wake-ups (wake.py: publishing is best-effort). One query
# every wake.RECHECK_S for all the long-polls waiting in this process, instead of each poll looking
# again on its own: with 200 idle agents those looks (authentication and a read, 40 a second) were
# the largest part of the idle API's CPU (bench/load; docs/benchmarks.md § Load).
_rechecks: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]]" = (
    weakref.WeakKeyDictionary()
)


def _start_recheck() -> None:
    loop = asyncio.get_running_loop()
    task = _rechecks.get(loop)
    if task is None or task.done():
        _rechecks[loop] = loop.create_task(_recheck(), name="iowatt-longpoll-recheck")


def stamp_waiting(session: Session, agent_ids: list[uuid.UUID]) -> int:
    """Stamp alive, in one statement, the agents whose long-polls wait in this process (their first
    look authenticated them; `wake.polling_agents`): a poll may wait longer than
    agent_offline_after_s (`poll_wait`), and waiting it sends nothing. The rule is the looks' and
    heartbeats' (liveness.stamp_alive): only stamps older than LIVENESS_STAMP_S are written, and an
    agent marked offline or revoked meanwhile is left to its next look. How many were stamped."""
    now = utcnow()
    return repository.stamp_waiting(
        session, agent_ids, now=now, stale_before=now - timedelta(seconds=_stamp_every_s())
    )


def _needing_a_look(agent_ids: list[uuid.UUID], polling: list[uuid.UUID]) -> list[uuid.UUID]:
    """The re-check's transaction: which waiting polls should look now, and the stamp of the agents
    whose polls wait (a read and, when some polled, an UPDATE: two statements for every poll
    waiting in the process, none per poll)."""
    with get_sessionmaker()() as session, session.begin():
        if polling:
            stamp_waiting(session, polling)
        return repository.needing_a_look(session, agent_ids)


async def _recheck() -> None:
    """Every RECHECK_S, wake the waiting polls whose agent has a run assigned or was revoked, and
    stamp the agents of the polls waiting alive (a wait may outlast agent_offline_after_s)."""
    while True:
        await asyncio.sleep(wake.RECHECK_S)
        hub = wake.current_hub()  # None while the subscription is down: the waits are short then
        if hub is None:
            continue
        agent_ids = wake.waiting_agents(hub)
        if not agent_ids:
            continue
        try:
            found = await in_longpoll_thread(_needing_a_look, agent_ids, wake.polling_agents(hub))
        except Exception as exc:  # noqa: BLE001 - the database is down: the next round tries again
            log.warning("agent.longpoll_recheck_failed", error=str(exc).splitlines()[0][:200])
            continue
        hub.wake(found)
