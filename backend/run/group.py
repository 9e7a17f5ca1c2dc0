"""Group runs: one workload on targets of several agents, started at one instant (ADR 0038).

A group is a `run_groups` row and one member run per agent. Members are created, dispatched
(all or none: service._dispatch_group), leased, started, reported and finished as any run; what
is the group's own is here:

- `create`: each member checked as POST /runs checks a run (its agent, targets and host policy;
  a 422 names `members.N.<field>`), all in one transaction;
- the start barrier: a member that has prepared (started, idle baseline taken) long-polls
  `ready` with its clock's offset; when the last member is ready the server sets `start_at`
  = now + a margin and answers every member; a member not ready within the prepare timeout of
  the first one, or a stopped group, answers `stop` instead (nothing has started: nothing is lost);
- `started`: the instant a member's engine started, on its clock, made the member's skew in
  server time; a skew past the tolerance (plus half the offset's round trip) marks the group
  unsynchronized;
- `read`: the members and, rebuilt from their stored results on every read (never appended
  to, so a retried upload can never count twice), the combined figure and summed energy, only
  when every member succeeded (never a silently partial figure of some members).
"""

import time
import uuid
from datetime import UTC, datetime, timedelta

from pydantic import ValidationError
from sqlalchemy.orm import Session, sessionmaker

from backend.agent import service as agent_service
from backend.agent import wake
from backend.agent.liveness import seen_at_work
from backend.audit import service as audit
from backend.auth import service as auth_service
from backend.auth.principal import AgentPrincipal, UserPrincipal
from backend.config import get_settings
from backend.errors import Conflict, Forbidden, Invalid, NotFound
from backend.kit.time import utcnow
from backend.models import FINAL_STATUSES, Role, Run, RunStatus
from backend.models.run_group import RunGroup
from backend.power import service as power_service
from backend.result import service as result_service
from backend.result.combine import LATENCY_NOT_COMBINED, combine
from backend.run import prepare, repository, service
from backend.run.group_schemas import (
    ReadyAck,
    ReadyReport,
    RunGroupCombined,
    RunGroupCreate,
    RunGroupMemberRead,
    RunGroupRead,
    RunGroupStatus,
    StartedAck,
    StartedReport,
)
from backend.run.schemas import RunCreate, fit_name

# the start instant is this far after the last member reported ready, plus twice the slowest
# member's measured round trip (the answers must reach every member before it), at most MAX
START_MARGIN_S = 0.2
MAX_START_MARGIN_S = 2.0
READY_RELOOK_S = 0.5  # a waiting member's barrier is looked at again this often (a lost wake-up)

_MEMBER_FIELDS = ("agent_id", "target_path", "targets")


def _member_field(i: int, field: str) -> str:
    return f"members.{i}.{field}" if field.split(".")[0] in _MEMBER_FIELDS else field


def create(session: Session, *, principal: UserPrincipal, body: RunGroupCreate) -> RunGroup:
    first: dict[uuid.UUID, int] = {}
    for i, m in enumerate(body.members):
        if m.agent_id in first:
            raise Invalid(
                f"members.{i}.agent_id",
                f"the same agent as members.{first[m.agent_id]}: a group run has one member per agent "
                "(several targets of one agent: that member's targets)",
            )
        first[m.agent_id] = i
    runs: list[Run] = []
    for i, m in enumerate(body.members):
        try:
            one = RunCreate(
                agent_id=m.agent_id,
                target_path=m.target_path,
                targets=m.targets,
                workload=body.workload,
                workload_id=body.workload_id,
                environment_id=body.environment_id,
                meter=body.meter,
                destructive=body.destructive,
                idle_s=body.idle_s,
                shorten=body.shorten,
            )
        except ValidationError as exc:  # pragma: no cover - the group's schema checked the same fields
            raise Invalid(f"members.{i}", exc.errors()[0]["msg"]) from exc
        try:
            run = service.create(session, principal=principal, body=one)
        except Invalid as exc:
            if isinstance(exc.detail, list):
                for d in exc.detail:
                    d["field"] = _member_field(i, str(d.get("field", "")))
                exc.message = "; ".join(f"{d['field']}: {d['message']}" for d in exc.detail[:5])
            raise
        if runs and run.team_id != runs[0].team_id:
            raise Invalid(f"members.{i}.agent_id", "every member's agent must be in the same team")
        runs.append(run)
    if body.prepare_timeout_s is not None:
        prepare_timeout_s = body.prepare_timeout_s
    else:
        prepare_timeout_s = prepare.default_timeout_s(
            (
                prepare.layout_bytes(run.workload_spec, len(m.targets) if m.targets else 1)
                for run, m in zip(runs, body.members, strict=True)
            ),
            body.idle_s,
        )
    default = runs[0].name.split(" on ")[0]
    group = RunGroup(
        team_id=runs[0].team_id,
        name=fit_name(body.name or f"{default} on {len(runs)} hosts"),
        created_by=principal.user_id,
        start_tolerance_ns=body.start_tolerance_ns,
        prepare_timeout_s=prepare_timeout_s,
        shared_store=body.shared_store,
    )
    session.add(group)
    session.flush()
    for run in runs:
        run.group_id = group.id
    session.flush()
    audit.record(
        session,
        team_id=group.team_id,
        action="run_group.created",
        target_kind="run_group",
        target_id=group.id,
        user_id=principal.user_id,
        details={"name": group.name, "members": [str(r.id) for r in runs]},
    )
    return group


def get(session: Session, *, principal: UserPrincipal, group_id: uuid.UUID) -> RunGroup:
    group = repository.group(session, group_id)
    if group is None or group.team_id not in principal.team_ids:
        raise NotFound("group run not found")
    principal.require(group.team_id, Role.viewer)
    return group


def status_of(group: RunGroup, members: list[Run]) -> RunGroupStatus:
    """The group's status from its members' (so the two never disagree)."""
    statuses = {m.status for m in members}
    if all(s in FINAL_STATUSES for s in statuses):
        if statuses == {RunStatus.succeeded} and group.stop_reason is None:
            return "succeeded"
        if group.cancelled or (RunStatus.failed not in statuses and group.stop_reason is None):
            return "cancelled"
        return "failed" if RunStatus.failed in statuses or group.stop_reason else "cancelled"
    if group.stop_reason is not None:
        return "cancelled" if group.cancelled else "failed"
    if statuses == {RunStatus.queued}:
        return "queued"
    if group.start_at is not None and group.start_at <= utcnow():
        return "running"
    return "preparing"


def missed(run: Run, group: RunGroup) -> bool:
    if run.start_skew_ns is None:
        return False
    return abs(run.start_skew_ns) > group.start_tolerance_ns + (run.clock_round_trip_ns or 0) // 2


def read(session: Session, group: RunGroup) -> RunGroupRead:
    members = repository.group_members(session, group.id)
    ids = [m.id for m in members]
    agents = repository.agents_by_id(session, {m.agent_id for m in members})
    jobs = repository.jobs_of(session, ids)
    energy = power_service.energy_of(session, ids)
    docs = []
    for m in members:
        res = result_service.get_result(session, run=m)
        if res is not None:
            docs.append((m, res.engine_result))
    combined = None
    # the group's figure only when every member succeeded and its result is stored: the figure of
    # some members is not the group's (a member lost mid-run, the others cancelled), and is never
    # shown as if it were; each member's own figures stay in `members`
    whole = (
        bool(members) and len(docs) == len(members) and all(m.status == RunStatus.succeeded for m in members)
    )
    if whole:
        try:
            doc = combine([d for _, d in docs])
        except ValueError:
            doc = None
        if doc is not None:
            with_meter = [energy[m.id] for m, _ in docs if energy[m.id].total_j is not None]
            combined = RunGroupCombined(
                members=len(docs),
                jobs=result_service.job_summaries(group.id, doc),
                latency="not_combined"
                if doc["iowatt"]["combined"]["latency"] == LATENCY_NOT_COMBINED
                else "merged",
                energy_j=sum(e.total_j or 0.0 for e in with_meter) if with_meter else None,
                load_w_mean=sum(e.load_w_mean or 0.0 for e in with_meter) if with_meter else None,
                energy_complete=len(with_meter) == len(docs),
            )
    skews = [abs(m.start_skew_ns) for m in members if m.start_skew_ns is not None]
    return RunGroupRead(
        id=group.id,
        team_id=group.team_id,
        name=group.name,
        status=status_of(group, members),
        created_at=group.created_at,
        start_tolerance_ns=group.start_tolerance_ns,
        prepare_timeout_s=group.prepare_timeout_s,
        start_at=group.start_at,
        stop_reason=group.stop_reason,
        unsynchronized=group.unsynchronized,
        max_start_skew_ns=max(skews) if skews else None,
        shared_store=group.shared_store,
        members=[
            RunGroupMemberRead(
                run_id=m.id,
                agent_id=m.agent_id,
                agent_name=agents[m.agent_id].name,
                target_path=m.target_path,
                status=m.status,
                error=m.error,
                ready_at=m.ready_at,
                clock_offset_ns=m.clock_offset_ns,
                clock_round_trip_ns=m.clock_round_trip_ns,
                start_skew_ns=m.start_skew_ns,
                missed_start=missed(m, group),
                jobs=[service.job_summary(j) for j in jobs[m.id]],
                energy_j=energy[m.id].total_j,
            )
            for m in members
        ],
        combined=combined,
    )


# --- the start barrier (agent side) -----------------------------------------------------------


def _member(session: Session, principal: AgentPrincipal, run_id: uuid.UUID, lease_id: uuid.UUID) -> Run:
    run = service.leased_run(session, principal=principal, run_id=run_id, lease_id=lease_id)
    if run.group_id is None:
        raise Conflict("the run is not a member of a group run", code="not_in_group")
    return run


def ready_look(
    session: Session, *, principal: AgentPrincipal, run_id: uuid.UUID, body: ReadyReport
) -> ReadyAck | None:
    """One look at the barrier for a ready member: records its readiness (the first time) and
    clock, sets the group's start instant when every member is ready, or stops the group when
    one is not ready within the prepare timeout. None: not decided yet (wait and look again)."""
    run = _member(session, principal, run_id, body.lease_id)
    now = utcnow()
    if run.status != RunStatus.running:
        raise Conflict(f"run is {run.status.value}, not running", code="lease_lost")
    seen_at_work(session, principal=principal)  # a member at the barrier sends no progress (ADR 0051)
    run.lease_expires_at = now + timedelta(seconds=get_settings().lease_progress_timeout_s)
    if run.ready_at is None:
        run.ready_at = now
    if body.clock is not None:
        run.clock_offset_ns, run.clock_round_trip_ns = body.clock.offset_ns, body.clock.round_trip_ns
    assert run.group_id is not None
    group = repository.group(session, run.group_id, lock=True)  # after the member's row
    assert group is not None
    if group.stop_reason is not None:
        return ReadyAck(start_at=None, stop=group.stop_reason, server_time=utcnow())
    if group.start_at is not None:
        return ReadyAck(start_at=group.start_at, stop=None, server_time=utcnow())
    session.flush()
    members = repository.group_members(session, group.id)
    waiting = [m for m in members if m.ready_at is None or m.status != RunStatus.running]
    if not waiting:
        trip_s = max((m.clock_round_trip_ns or 0) for m in members) / 1e9
        group.start_at = now + timedelta(seconds=min(MAX_START_MARGIN_S, START_MARGIN_S + 2 * trip_s))
        for m in members:
            if m.agent_id != run.agent_id:
                wake.wake_after_commit(session, m.agent_id)
        return ReadyAck(start_at=group.start_at, stop=None, server_time=utcnow())
    first_ready = min(m.ready_at for m in members if m.ready_at is not None)
    if now - first_ready > timedelta(seconds=group.prepare_timeout_s):
        agents = repository.agents_by_id(session, {m.agent_id for m in waiting})
        names = ", ".join(f"{agents[m.agent_id].name}:{m.target_path}" for m in waiting)
        group.stop_reason = f"not ready within {group.prepare_timeout_s:g} s of the first member: {names}"
        for m in members:
            if m.agent_id != run.agent_id:
                wake.wake_after_commit(session, m.agent_id)
        return ReadyAck(start_at=None, stop=group.stop_reason, server_time=utcnow())
    return None


def _look(
    make_session: sessionmaker[Session], raw_token: str, run_id: uuid.UUID, body: ReadyReport
) -> ReadyAck | None:
    with make_session() as session, session.begin():
        principal = auth_service.authenticate(session, raw_token=raw_token)
        if not isinstance(principal, AgentPrincipal):
            raise Forbidden("this needs an agent token", code="agent_only")
        return ready_look(session, principal=principal, run_id=run_id, body=body)


async def long_poll_ready(
    make_session: sessionmaker[Session],
    *,
    raw_token: str,
    agent_id: uuid.UUID,
    run_id: uuid.UUID,
    body: ReadyReport,
    wait_s: float,
) -> ReadyAck:
    """Wait (without a thread or a connection) until the group's start instant is set or the group
    stops, looking again when woken and every READY_RELOOK_S; at the deadline answer
    `start_at: null` (the agent asks again)."""
    deadline = time.monotonic() + min(wait_s, get_settings().longpoll_max_wait_s)
    async with wake.listen(agent_id) as waiter:
        while True:
            ack = await agent_service.in_longpoll_thread(_look, make_session, raw_token, run_id, body)
            if ack is not None:
                return ack
            remaining = deadline - time.monotonic()
            if remaining <= 0 or waiter.superseded:
                return ReadyAck(start_at=None, stop=None, server_time=utcnow())
            await waiter.wait(min(remaining, READY_RELOOK_S))


def started(
    session: Session, *, principal: AgentPrincipal, run_id: uuid.UUID, body: StartedReport
) -> StartedAck:
    """The instant the member's engine started (its clock), as skew from the group's instant."""
    run = _member(session, principal, run_id, body.lease_id)
    assert run.group_id is not None
    group = repository.group(session, run.group_id)
    if group is None or group.start_at is None:
        raise Conflict("the group has no start instant yet", code="not_started")
    offset = run.clock_offset_ns or 0
    skew = _ns(body.started_at) + offset - _ns(group.start_at)
    if run.start_skew_ns is None:
        run.start_skew_ns = skew
    late = missed(run, group)
    bound_too_wide = (run.clock_round_trip_ns or 0) // 2 > group.start_tolerance_ns
    if late or bound_too_wide:
        repository.mark_unsynchronized(session, group.id)
    return StartedAck(start_skew_ns=run.start_skew_ns, missed_start=late)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _ns(t: datetime) -> int:
    return (t - _EPOCH) // timedelta(microseconds=1) * 1000
