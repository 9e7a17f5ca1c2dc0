"""Run lifecycle: queued → assigned → running → succeeded | failed | cancelled.

Every transition happens only here (one table, `TRANSITIONS`), under a row lock, so the
dispatcher, the agents, the lease reaper and an agent's own reports can race without losing or
duplicating a run. Other domains call the named functions (`dispatch`, `hand_out`,
`hand_out_after_lost`, `start`, `progress`, `succeed`, `fail`, `cancel`, `expire_stale_leases`,
`fail_lost`, `fail_lost_to_restart`, `fail_agent_runs`, `record_import`);
tests/backend/test_architecture.py keeps them from writing a run's status themselves.
"""

import uuid
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlencode

from iowatt_policy import Violation, check_run, shared_policy
from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, object_session

from backend.agent import repository as agent_repo
from backend.agent import wake
from backend.agent.liveness import seen_at_work
from backend.agent.policy import reported_policy
from backend.agent.schemas import Inventory, LeaseGroup
from backend.audit import service as audit
from backend.auth.principal import AgentPrincipal, UserPrincipal
from backend.compare.validity import flags_for
from backend.config import get_settings
from backend.device import service as device_service
from backend.environment import repository as environment_repo
from backend.environment import topology as env_topology
from backend.errors import Conflict, Invalid, NotFound
from backend.jobs import enqueue
from backend.kit.time import utcnow
from backend.models import (
    ACTIVE_STATUSES,
    FINAL_STATUSES,
    Agent,
    Device,
    ResultJob,
    Role,
    Run,
    RunStatus,
    RunTarget,
)
from backend.models.run_group import RunGroup
from backend.power import service as power_service
from backend.pts.service import verdicts as pts_verdicts
from backend.result import pagecache
from backend.result import repository as result_repo
from backend.result.summary import db_summaries, file_summaries
from backend.run import figures, repository
from backend.run.errors import HostPolicyRefused
from backend.run.schemas import (
    IDLE_PHASES,
    PROGRESS_SAMPLES,
    CombinedRead,
    DirSummary,
    FailureReport,
    JobSummary,
    LeaseRef,
    PassSummary,
    Progress,
    ProgressAck,
    ProgressReport,
    RunCreate,
    RunGroupRef,
    RunLive,
    RunOrigin,
    RunOriginFile,
    RunPage,
    RunRead,
    RunSort,
    RunSystem,
    RunTagsUpdate,
    RunTargetRead,
    RunValidityFlag,
    TagCount,
    TagList,
    fit_name,
)
from backend.run.share import run_share
from backend.workload import engine_limits
from backend.workload import service as workload_service
from backend.workload.facts import with_facts
from backend.workload.passes import best_of_jobs
from backend.workload.schemas import WorkloadSpec, load_spec, stored_spec, upgrade_spec

# --- the lifecycle: every change of a run's status happens below --------------------------------
#
# One table says which statuses each transition leaves from; `_move` refuses any other, so a
# caller that forgot a check gets a 409, never a run that goes back from a final status.

TRANSITIONS: dict[str, tuple[frozenset[RunStatus], RunStatus]] = {
    # the dispatcher gives a queued run to its agent (a lease the agent has not taken up yet)
    "assign": (frozenset({RunStatus.queued}), RunStatus.assigned),
    # the lease of an assigned run expired before the agent started it: queue it again
    "requeue": (frozenset({RunStatus.assigned}), RunStatus.queued),
    # the agent starts the engine
    "start": (frozenset({RunStatus.assigned}), RunStatus.running),
    # the result is stored; a run the lease reaper failed keeps the result it still delivers
    # (it was never re-run, so accepting it loses nothing and duplicates nothing)
    "succeed": (frozenset({RunStatus.running, RunStatus.failed}), RunStatus.succeeded),
    "fail": (frozenset({RunStatus.queued, RunStatus.assigned, RunStatus.running}), RunStatus.failed),
    "cancel": (frozenset({RunStatus.queued, RunStatus.assigned, RunStatus.running}), RunStatus.cancelled),
    # a finished result uploaded from outside (POST /results): the new run is stored succeeded
    "import": (frozenset({RunStatus.queued}), RunStatus.succeeded),
}

AGENT_RESTARTED = "the agent restarted during the run; its result was lost"


def _move(run: Run, transition: str, *, targets: list[RunTarget] | None = None) -> None:
    """`targets`: the run's targets (repository.targets_of) when the caller has read them already."""
    allowed, to = TRANSITIONS[transition]
    if run.status not in allowed:
        raise Conflict(f"run is {run.status.value}; it cannot {transition}", code="run_state")
    was_active = run.status in ACTIVE_STATUSES
    run.status = to
    if was_active != (to in ACTIVE_STATUSES):
        _hold_devices(run, to in ACTIVE_STATUSES, targets)


def _hold_devices(run: Run, held: bool, targets: list[RunTarget] | None = None) -> None:
    """A multi-target run holds each of its targets' devices while it is assigned or running (one
    row per device: targets that share a device hold it once); the partial unique index on
    run_targets makes a device held by two runs an IntegrityError at the flush. `targets`: as the
    caller read them in this transaction (dispatch and the result upload do), else read here."""
    session = object_session(run)
    if session is None:
        return
    seen: set[uuid.UUID] = set()
    if targets is None:
        with session.no_autoflush:  # dispatch flushes the move inside its savepoint, not here
            targets = repository.targets_of(session, [run.id])[run.id]
    for t in targets:
        t.held = held and t.device_id is not None and t.device_id not in seen
        if t.device_id is not None:
            seen.add(t.device_id)


def _finish(
    run: Run,
    transition: str,
    error: str | None,
    *,
    at: datetime | None = None,
    targets: list[RunTarget] | None = None,
) -> None:
    _move(run, transition, targets=targets)
    run.finished_at, run.error, run.lease_expires_at = at or utcnow(), error, None
    if run.group_id is not None and transition in ("fail", "cancel"):
        _stop_group(run, "failed" if transition == "fail" else "was cancelled", error)


def _stop_group(run: Run, what: str, error: str | None) -> None:
    """A member that failed or was cancelled (or lost) stops its group: the group keeps the first
    reason; running members are told in their next progress answer, members waiting at the start
    barrier in its answer, queued ones are cancelled by the dispatcher. The group row is locked
    after the member's: every transaction that waits takes them in that order."""
    session = object_session(run)
    if session is None or run.group_id is None:
        return
    agent = session.get(Agent, run.agent_id)
    who = f"{agent.name if agent else run.agent_id}:{run.target_path}"
    repository.stop_group(session, run.group_id, f"member {who} {what}" + (f": {error}" if error else ""))
    enqueue(session, "run.dispatch_pending")


# --- user side --------------------------------------------------------------------------------


def create(session: Session, *, principal: UserPrincipal, body: RunCreate) -> Run:
    return _create(session, principal=principal, body=body)[0]


def create_read(session: Session, *, principal: UserPrincipal, body: RunCreate) -> RunRead:
    """POST /runs: the new run and its answer, named from the agent's and devices' rows `create`
    read (no statement for their names; docs/benchmarks.md § Session 28)."""
    run, agent, devices = _create(session, principal=principal, body=body)
    names = {d.id: d.name for d in devices}
    return to_read(session, [run], created=True, agents={agent.id: agent}, device_names=names)[0]


def start_read(session: Session, *, principal: AgentPrincipal, run_id: uuid.UUID, body: LeaseRef) -> RunRead:
    """The agent's start and its answer: what a started run can have (`to_read`'s `started`), its
    agent's name from the row authentication read."""
    run = start(session, principal=principal, run_id=run_id, body=body)
    held = principal.read_in(session)
    return to_read(session, [run], started=True, agents={run.agent_id: held[0]} if held else None)[0]


def _create(
    session: Session, *, principal: UserPrincipal, body: RunCreate
) -> tuple[Run, Agent, list[Device]]:
    agent = agent_repo.get_in_teams(session, body.agent_id, principal.team_ids)
    if agent is None or agent.revoked_at is not None:
        raise Invalid("agent_id", "no such agent in your teams")
    principal.require(agent.team_id, Role.member)
    if agent.kind != "agent":
        raise Invalid(
            "agent_id",
            f"{agent.name!r} is an external host: its results are uploaded (POST /api/v1/results), "
            "it runs nothing from the server",
        )
    if body.workload_id is not None:
        wl = workload_service.get(session, principal=principal, workload_id=body.workload_id)
        try:  # a new run follows today's rules, even from a workload saved under older ones
            spec = WorkloadSpec.model_validate(upgrade_spec(wl.spec))
        except ValidationError as e:
            raise Invalid(
                "workload_id", f"the saved workload no longer passes today's limits: {e.errors()[0]['msg']}"
            ) from e
        workload_id, default_name = wl.id, wl.name
        preset = wl.name if wl.builtin else None  # recorded: the views read it, never guess it
    else:
        assert body.workload is not None
        spec, workload_id, default_name = body.workload, None, _default_name(body.workload)
        preset = None
    spec = _sized(spec, body)
    check_capabilities(agent, body, spec)
    if body.environment_id is not None:
        env = environment_repo.get(session, body.environment_id)
        if env is None or env.team_id != agent.team_id:
            raise Invalid("environment_id", "no such environment in the agent's team")
    # a file workload is checked by the engine's parser; its facts are stored with the run
    try:
        spec = with_facts(spec, at="workload")
    except Invalid as exc:
        if body.workload_id is None:
            raise
        raise Invalid(
            "workload_id", f"the engine refuses the saved workload: {exc.detail[0]['message']}"
        ) from exc
    if body.workload_id is None:  # named after what the engine made of it (a job file's sections)
        default_name = _default_name(spec)
    paths = check_targets(agent, body, spec)
    check_host_policy(agent, body, spec)
    devices = [device_service.resolve(session, agent=agent, target_path=p) for p in paths]
    where = paths[0] if len(paths) == 1 else f"{paths[0]} +{len(paths) - 1} targets"
    run = Run(
        team_id=agent.team_id,
        name=fit_name(body.name or f"{default_name} on {agent.name}:{where}"),
        status=RunStatus.queued,
        agent_id=agent.id,
        device_id=devices[0].id,
        environment_id=body.environment_id,
        workload_id=workload_id,
        preset=preset,
        workload_spec=stored_spec(spec),
        target_path=paths[0],
        created_by=principal.user_id,
        meter=body.meter,
        destructive=body.destructive,
        idle_s=body.idle_s,
    )
    session.add(run)
    session.flush()
    if len(paths) > 1:
        session.add_all(
            RunTarget(run_id=run.id, target_index=i, target_path=p, device_id=d.id)
            for i, (p, d) in enumerate(zip(paths, devices, strict=True))
        )
        session.flush()
    audit.record(
        session,
        team_id=run.team_id,
        action="run.created",
        target_kind="run",
        target_id=run.id,
        user_id=principal.user_id,
        actor=principal.email,  # read with the token: the user's row is not read again
        details={"name": run.name, "agent": agent.name, "target_path": run.target_path}
        | ({"targets": paths} if len(paths) > 1 else {}),
    )
    enqueue(session, "run.dispatch", run_id=str(run.id))
    return run, agent, devices


def _default_name(spec: WorkloadSpec) -> str:
    return spec.kind_def.default_name(spec)


def check_capabilities(agent: Agent, body: RunCreate, spec: WorkloadSpec) -> None:
    """The workload's kind must be one the agent runs (its inventory's `capabilities`;
    an agent that reports none is older: block workloads only) -> else 422 at the workload's
    field, asking to upgrade the agent. A TPC-H run also needs the DBMS's server on the host
    (capabilities.tpch_dbms) -> else 422 at workload.tpch.dbms with the install command."""
    inv = Inventory.read(agent.inventory) if isinstance(agent.inventory, dict) else None
    caps = inv.capabilities if inv is not None else None
    kinds = list(caps.workload_kinds) if caps is not None else ["block"]
    where = "workload_id" if body.workload_id is not None else "workload"
    if spec.kind not in kinds:
        host = (inv.hostname if inv is not None else None) or agent.name
        raise Invalid(
            where if body.workload_id is not None else f"{where}.kind",
            f"agent {agent.name!r} does not run {spec.kind} workloads (it runs: "
            f"{', '.join(kinds) or 'none'}): upgrade the agent on {host} (pip install -U iowatt-agent)",
        )
    refusal = spec.kind_def.host_refusal(spec, list(caps.tpch_dbms)) if caps is not None else None
    if refusal is not None:
        field, message = refusal
        raise Invalid(
            where if body.workload_id is not None else f"{where}.{field}", f"agent {agent.name!r} {message}"
        )


def _sized(spec: WorkloadSpec, body: RunCreate) -> WorkloadSpec:
    """The run's shorten (block workloads) or scale (file workloads) applied; the other one is a
    422 naming the field given."""
    if body.shorten is not None:
        if spec.kind_def.sizing == "none":
            raise Invalid("shorten", f"{spec.kind_def.label} runs as written: change its runtime or size")
        if spec.kind_def.sizing != "shorten":
            raise Invalid(
                "shorten",
                f"a {spec.kind} workload is made smaller with scale (files, sizes, time), not shorten",
            )
        spec = spec.shortened(body.shorten)
    if body.scale is not None:
        if spec.kind_def.sizing == "none":
            raise Invalid("scale", f"{spec.kind_def.label} runs as written: change its runtime or size")
        if spec.kind_def.sizing != "scale":
            raise Invalid("scale", "a block workload is made shorter with shorten, not scale")
        try:
            spec = spec.scaled(body.scale)
        except ValueError as exc:
            raise Invalid("scale", str(exc)) from exc
    return spec


def check_targets(agent: Agent, body: RunCreate, spec: WorkloadSpec) -> list[str]:
    """The run's targets: target_path, or targets (a multi-target run: each a path of the run's
    agent, each once, a block workload, an agent that runs them) -> else 422 naming the field.
    Their number is bounded by the request schema (iowatt_policy.MAX_TARGETS)."""
    if body.target_path is None and body.targets is None:
        raise Invalid("target_path", "give target_path, or targets to run on several targets at once")
    if body.target_path is not None and body.targets is not None:
        raise Invalid("targets", "give target_path or targets, not both")
    paths = body.target_paths
    for i, t in enumerate(body.targets or []):
        if t.agent_id is not None and t.agent_id != agent.id:
            raise Invalid(
                f"targets.{i}.agent_id",
                "a multi-target run runs on the targets of one agent (agent_id); targets on several "
                "hosts at once are a group run",
            )
    first: dict[str, int] = {}
    for i, path in enumerate(paths):
        if path in first:
            raise Invalid(f"targets.{i}.target_path", f"the same target as targets.{first[path]}: {path}")
        first[path] = i
    if len(paths) > 1:
        if spec.kind != "block":
            where = "workload_id" if body.workload_id is not None else "workload.kind"
            raise Invalid(where, f"a multi-target run runs block workloads, not {spec.kind}")
        inv = Inventory.read(agent.inventory) if isinstance(agent.inventory, dict) else None
        caps = inv.capabilities if inv is not None else None
        if caps is None or not caps.multi_target:
            host = (inv.hostname if inv is not None else None) or agent.name
            raise Invalid(
                "targets",
                f"agent {agent.name!r} does not run multi-target runs: upgrade the agent on {host} "
                "(pip install -U iowatt-agent)",
            )
    return paths


def check_host_policy(agent: Agent, body: RunCreate, spec: WorkloadSpec) -> None:
    """The early, friendly answer: the policy the agent last reported refuses the run -> 422 with
    each violation and the host command that would allow it. The agent re-checks every lease
    against its current policy (authoritative), so a stale copy here never lets a run through.

    A multi-target run is checked on every target, each against the host's policy with its
    host-wide limits shared between the targets (`iowatt_policy.shared_policy`, as the agent
    checks it); a target's violations name `targets.N.target_path`, and one violation of the
    workload is told once."""
    policy = reported_policy(agent.inventory)
    if policy is None:
        raise Invalid(
            "agent_id",
            f"agent {agent.name!r} has reported no host policy, so it runs nothing from the server: "
            "upgrade iowatt-agent on the host to a version that reports one and allow targets there "
            "(iowatt-agent targets add PATH)",
        )
    paths = body.target_paths
    judged = shared_policy(policy, len(paths))
    violations: list[Violation] = []
    for i, path in enumerate(paths):
        for v in check_run(
            judged,
            target_path=path,
            engine_job=spec.engine_job(),
            meter=body.meter,
            destructive=body.destructive,
            engine=engine_limits.policy_options(),  # the options a server may send: the engine's facts
            **_file_facts(spec),
        ):
            if body.targets is not None and v.field == "target_path":
                v = Violation(v.rule, f"targets.{i}.target_path", v.message, v.fix)
            if v not in violations:
                violations.append(v)
    if violations:
        raise HostPolicyRefused(
            violations, workload_field="workload_id" if body.workload_id is not None else "workload"
        )


def _file_facts(spec: WorkloadSpec) -> dict[str, Any]:
    """check_run's file_facts: the engine's bounds the server got (a file workload), else nothing."""
    if not spec.is_file:
        return {}
    return {"file_facts": spec.kind_def.policy_facts(spec)}  # a job file: the engine's parse of it


def get(session: Session, *, principal: UserPrincipal, run_id: uuid.UUID) -> Run:
    run = repository.get_in_teams(session, run_id, principal.team_ids)
    if run is None:
        raise NotFound("run not found")
    return run


def live(
    session: Session, *, principal: UserPrincipal, run_id: uuid.UUID, since_t_s: float | None
) -> RunLive:
    """An active run's status and latest report with the samples after `since_t_s` (one query)."""
    found = repository.live_in_teams(session, run_id, principal.team_ids, since_t_s)
    if found is None:
        raise NotFound("run not found")
    status, cancel_requested, report = found
    return RunLive(
        status=status,
        cancel_requested=cancel_requested,
        progress=progress_read(report) if report else None,
        samples_kept=PROGRESS_SAMPLES,
    )


def cancel(session: Session, *, principal: UserPrincipal, run_id: uuid.UUID) -> Run:
    run = repository.get_in_teams(session, run_id, principal.team_ids, lock=True)
    if run is None:
        raise NotFound("run not found")
    principal.require(run.team_id, Role.member)
    if run.status in FINAL_STATUSES:
        raise Conflict(f"run is already {run.status.value}", code="run_finished")
    if run.status in (RunStatus.queued, RunStatus.assigned):
        _finish(run, "cancel", "cancelled before it started")
    else:  # running: the agent sees cancel_requested in its next progress answer and stops the engine
        run.cancel_requested = True
    return run


def to_read(
    session: Session,
    runs: list[Run],
    *,
    jobs: dict[uuid.UUID, list[ResultJob]] | None = None,
    agents: dict[uuid.UUID, Agent] | None = None,
    device_names: dict[uuid.UUID, str] | None = None,
    created: bool = False,
    started: bool = False,
    with_jobs: bool = True,
    with_samples: bool = True,
) -> list[RunRead]:
    """RunRead for many runs with a fixed number of queries (no N+1). A caller that has already
    loaded the runs' result jobs, agents or device names (compare) passes them instead of a query.
    `created`: runs this transaction created (POST /runs answers with its run): nothing is stored
    for them yet (result jobs, energy, tags, result documents), so those four reads are skipped
    (docs/benchmarks.md § A thousand agents on two cores). `started`: runs this transaction moved
    from assigned to running (the agent's start): a run gets its result only while running (then it
    leaves running), and a retried assignment is one never started, so it has no result jobs,
    energy or result documents either; its tags, which a member may set while it waits, are read
    (docs/benchmarks.md § Session 28). `with_jobs` false (GET /runs?jobs=false):
    `jobs` and `passes` are left empty and the result jobs are read only for multi-target runs,
    whose `combined` needs them (docs/benchmarks.md § A million runs, session 24). `with_samples` false
    (GET /runs?samples=false): each progress without its samples (the lists that draw only a bar)."""
    ids = [r.id for r in runs]
    stored = [] if created or started else ids  # the runs whose results and energy are read
    tagged = [] if created else ids  # the runs whose tags are read
    targets = repository.targets_of(session, ids)
    rows = (
        {rid: [figures.values_of(j) for j in js] for rid, js in jobs.items()}
        if jobs is not None
        else repository.job_rows(
            session, stored if with_jobs else [i for i in stored if targets[i]], figures.COLUMNS
        )
    )
    if agents is None:
        agent_names = repository.agent_names(session, {r.agent_id for r in runs})
    else:
        agent_names = {agent_id: a.name for agent_id, a in agents.items()}
    devices = (
        device_names
        if device_names is not None
        else repository.device_names(session, [r.device_id for r in runs if r.device_id])
    )
    energy = power_service.energy_of(session, stored)
    tags = repository.tags_of(session, tagged)
    file_parts, db_parts, pts_parts = result_repo.document_parts(session, stored)  # one query
    file_workloads = file_summaries(session, runs, file_parts)
    databases = db_summaries(session, runs, db_parts)
    pts = pts_verdicts(session, runs, pts_parts)
    group_ids = {r.group_id for r in runs if r.group_id is not None}
    groups = repository.groups_by_id(session, group_ids)
    group_sizes = repository.group_sizes(session, group_ids)
    target_devices = repository.device_names(
        session, [t.device_id for ts in targets.values() for t in ts if t.device_id]
    )
    # runs of one list mostly share a spec: validate each distinct one once (a shared, read-only model);
    # runs given one dict (GET /runs: repository._with_shared_specs) are one spec without its repr
    specs: dict[str, WorkloadSpec] = {}
    by_doc: dict[int, WorkloadSpec] = {}  # id() of a dict the runs hold (alive through the loop)
    spec_of: dict[uuid.UUID, WorkloadSpec] = {}
    for r in runs:
        spec = by_doc.get(id(r.workload_spec))
        if spec is None:
            key = repr(r.workload_spec)  # a big preset's spec: ~0.2 ms
            if key not in specs:
                specs[key] = load_spec(r.workload_spec)
            spec = by_doc[id(r.workload_spec)] = specs[key]
        spec_of[r.id] = spec
    # each run's jobs and passes (figures.py: plain rows, validated in one call per run)
    summed = {r.id: figures.summaries(r.workload_spec, rows.get(r.id, [])) for r in runs}
    return [
        RunRead(
            id=r.id,
            team_id=r.team_id,
            name=r.name,
            status=r.status,
            agent_id=r.agent_id,
            agent_name=agent_names[r.agent_id],
            target_path=r.target_path,
            device_id=r.device_id,
            device_name=devices.get(r.device_id) if r.device_id else None,
            environment_id=r.environment_id,
            workload_id=r.workload_id,
            preset=r.preset,
            workload=spec_of[r.id],
            created_at=r.created_at,
            created_by=r.created_by,
            assigned_at=r.assigned_at,
            started_at=r.started_at,
            finished_at=r.finished_at,
            attempt=r.attempt,
            cancel_requested=r.cancel_requested,
            error=r.error,
            progress=progress_read(r.progress, with_samples=with_samples) if r.progress else None,
            jobs=summed[r.id][0] if with_jobs else [],
            passes=summed[r.id][1] if with_jobs else [],
            meter=r.meter,
            destructive=r.destructive,
            idle_s=r.idle_s,
            energy=energy.get(r.id) or power_service.no_energy(),
            source="import" if r.source == "import" else "agent",
            tags=tags.get(r.id, []),
            origin=origin_of(r),
            file_workload=file_workloads[r.id],
            tpch=databases[r.id][0],
            heap_btree=databases[r.id][1],
            pts=pts[r.id],
            targets=[_target_read(t, target_devices) for t in targets[r.id]],
            combined=_combined_read(targets[r.id], summed[r.id][0]),
            group=_group_ref(r, groups, group_sizes),
        )
        for r in runs
    ]


def _group_ref(
    run: Run, groups: dict[uuid.UUID, RunGroup], sizes: dict[uuid.UUID, int]
) -> RunGroupRef | None:
    group = groups.get(run.group_id) if run.group_id is not None else None
    if group is None:
        return None
    return RunGroupRef(
        group_id=group.id,
        members=sizes.get(group.id, 0),
        unsynchronized=group.unsynchronized,
        clock_offset_ns=run.clock_offset_ns,
        clock_round_trip_ns=run.clock_round_trip_ns,
        start_skew_ns=run.start_skew_ns,
    )


COMBINED_RATES = "bytes and I/Os summed over the targets; bytes/s and IOPS over the longest target's runtime"
COMBINED_ENERGY = (
    "the host's: one meter measures the whole host while every target runs, so the run's energy is "
    "the host's and is not split between targets"
)


def _target_read(t: RunTarget, devices: dict[uuid.UUID, str]) -> RunTargetRead:
    return RunTargetRead(
        target_index=t.target_index,
        target_path=t.target_path,
        device_id=t.device_id,
        device_name=devices.get(t.device_id) if t.device_id else None,
        engine_exit_code=t.engine_exit_code,
        jobs=[JobSummary.model_validate(j) for j in t.jobs or []],
    )


def _combined_read(targets: list[RunTarget], jobs: list[JobSummary]) -> CombinedRead | None:
    """A multi-target run's `combined`: whether its percentiles were merged shows in its combined
    rows (a direction with I/O and no p50 was not merged: combine.py leaves them out)."""
    if not targets:
        return None
    latency: Literal["merged", "not_combined"] | None = None
    if jobs:
        lost = any(
            side is not None
            and side.total_ios > 0
            and side.clat_p50_ns is None
            and side.lat_mean_ns is not None
            for j in jobs
            for side in (j.read, j.write)
        )
        latency = "not_combined" if lost else "merged"
    return CombinedRead(targets=len(targets), latency=latency, rates=COMBINED_RATES, energy=COMBINED_ENERGY)


# --- runs list, tags, imported runs ------------------------------------------------------------------


def page(
    session: Session,
    *,
    principal: UserPrincipal,
    team_id: uuid.UUID | None = None,
    filters: repository.RunFilter,
    sort: RunSort,
    limit: int,
    offset: int,
    with_jobs: bool = True,
    with_samples: bool = True,
) -> RunPage:
    """GET /runs: the runs of one of the caller's teams (`team_id`) or of all of them matching
    `filters`, one page in `sort` order (`with_jobs` false: without the items' jobs and passes;
    `with_samples` false: without their progress reports' samples)."""
    teams = principal.teams_for(team_id)
    if (
        filters.created_from is not None
        and filters.created_to is not None
        and filters.created_to <= filters.created_from
    ):
        raise Invalid("created_to", "must be later than created_from")
    if filters.env:  # each distinct recorded environment judged once, as compare judges a run's
        env = list(filters.env)
        filters = replace(
            filters,
            env_snapshots=tuple(
                s for s in repository.environment_snapshots(session, teams) if env_topology.matches(s, env)
            ),
            env_none=env_topology.matches(None, env),
        )
    runs, total, exact = repository.page(
        session, teams, filters=filters, sort=sort, limit=limit, offset=offset
    )
    return RunPage(
        items=to_read(session, runs, with_jobs=with_jobs, with_samples=with_samples),
        total=total,
        total_exact=exact,
    )


def set_tags(session: Session, *, principal: UserPrincipal, run_id: uuid.UUID, body: RunTagsUpdate) -> Run:
    """PUT /runs/{id}/tags: members of the run's team replace its tags."""
    run = get(session, principal=principal, run_id=run_id)
    principal.require(run.team_id, Role.member)
    repository.set_tags(session, run.id, body.tags)
    return run


def team_tags(session: Session, *, principal: UserPrincipal, team_id: uuid.UUID | None) -> TagList:
    """GET /tags: the tags of one team of the caller's (any role), or of all of them."""
    if team_id is not None:
        principal.require(team_id, Role.viewer)
    teams = [team_id] if team_id is not None else principal.team_ids
    return TagList(items=[TagCount(tag=t, runs=n) for t, n in repository.team_tags(session, teams)])


def record_import(
    session: Session,
    *,
    team_id: uuid.UUID,
    agent_id: uuid.UUID,
    device_id: uuid.UUID,
    environment_id: uuid.UUID | None,
    name: str,
    workload_spec: dict[str, Any],
    target_path: str,
    created_by: uuid.UUID,
    started_at: datetime,
    finished_at: datetime,
    tags: list[str],
) -> Run:
    """A finished result uploaded from outside (backend/upload): a run of source "import" that was
    never queued to an agent, stored succeeded when its engine finished. Nothing is dispatched."""
    run = Run(
        team_id=team_id,
        name=fit_name(name),
        source="import",
        status=RunStatus.queued,  # only until the transition below: never flushed queued
        agent_id=agent_id,
        device_id=device_id,
        environment_id=environment_id,
        workload_id=None,
        workload_spec=workload_spec,
        target_path=target_path,
        created_by=created_by,
        meter="",
        idle_s=None,
    )
    _finish(run, "import", None, at=finished_at)
    run.started_at = started_at
    session.add(run)
    session.flush()
    repository.add_tags(session, run.id, tags)
    return run


def set_origin(session: Session, *, run_id: uuid.UUID, origin: dict[str, Any]) -> None:
    """An imported or published run's origin (backend/imports), recorded in the import's transaction."""
    run = session.get(Run, run_id)
    if run is None:
        raise NotFound("run not found")
    run.origin = origin
    session.flush()


def origin_of(run: Run) -> RunOrigin | None:
    o = run.origin
    if not isinstance(o, dict) or o.get("kind") not in ("imported", "published"):
        return None
    tool = str(o.get("tool") or "another tool")
    kind = o["kind"]
    version = o.get("version") or None
    label = (
        f"imported from {tool}{f' {version}' if version else ''}"
        if kind == "imported"
        else f"published by {tool}: not measured here"
    )
    source = f"/api/v1/runs/{run.id}/source"
    files = [f for f in o.get("files") or [] if isinstance(f, dict) and f.get("file_name")]
    return RunOrigin(
        kind=kind,
        tool=tool,
        version=o.get("version"),
        format=str(o.get("format") or ""),
        file_name=o.get("file_name"),
        sha256=o.get("sha256"),
        reference=o.get("reference"),
        label=label,
        source_url=source if o.get("file_id") else None,
        files=[
            RunOriginFile(
                file_name=str(f["file_name"]),
                sha256=f.get("sha256"),
                url=f"{source}?{urlencode({'file': str(f['file_name'])})}",
            )
            for f in files
        ]
        if len(files) > 1
        else [],
    )


def origin_flags(run: Run) -> list[dict[str, str]]:
    """The `imported` or `published` validity flag of a run with an origin (beside compare/validity's)."""
    o = origin_of(run)
    if o is None:
        return []
    if o.kind == "published":
        ref = f" ({o.reference})" if o.reference else ""
        message = f"{o.label}: figures published by the vendor or a review{ref}"
        return [{"flag": "published", "message": message}]
    return [
        {
            "flag": "imported",
            "message": f"{o.label} ({o.format}): settings, host and device were not controlled by iowatt",
        }
    ]


def with_origin_flags(run: Run, flags: list[dict[str, str]]) -> list[dict[str, str]]:
    """A run's validity flags with its origin's first; a published run has no runtime to be short.
    A member of an unsynchronized group run carries that flag too (group_flags)."""
    o = origin_of(run)
    if o is not None and o.kind == "published":
        flags = [f for f in flags if f.get("flag") != "short_run"]
    return origin_flags(run) + flags + group_flags(run)


def group_flags(run: Run) -> list[dict[str, str]]:
    """The `unsynchronized` flag of a member of a group run whose members missed its start instant."""
    session = object_session(run)
    if run.group_id is None or session is None:
        return []
    group = repository.group(session, run.group_id)
    if group is None or not group.unsynchronized:
        return []
    return [
        {
            "flag": "unsynchronized",
            "message": "a member of this group run started further from the group's start instant than "
            f"its tolerance ({group.start_tolerance_ns / 1e6:g} ms): the hosts did not load the store at "
            "the same time",
        }
    ]


def progress_read(stored: dict[str, Any], *, with_samples: bool = True) -> Progress:
    """A run's stored progress; rows written before phases, samples and the run's share read as a job
    with none (`with_samples` false: none, whatever the row holds)."""
    name = str(stored.get("job_name", ""))
    phase = name if name in IDLE_PHASES else "job"
    if not with_samples:
        stored = {k: v for k, v in stored.items() if k != "samples"}
    # a row written before the whole run's share was stored: the report's own percent, time left unknown
    before = {
        "samples": [],
        "run_percent": stored.get("percent", 0.0),
        "run_eta_s": None,
        "run_eta_at_least": False,
    }
    return Progress.model_validate({**before, **stored, "phase": phase})


def pass_summaries(spec: dict[str, Any], jobs: list[ResultJob]) -> list[PassSummary]:
    """Best-of-passes per test: libs/workload's one rule (backend/workload/passes.py)."""
    return [figures.pass_summary(b) for b in best_of_jobs(spec, jobs)]


def job_summary(j: ResultJob) -> JobSummary:
    """One result row's JobSummary (figures.py's mapping, as a RunRead's `jobs` hold it)."""
    return JobSummary.model_validate(figures.job_fields(figures.values_of(j)))


# --- dispatch (worker) ------------------------------------------------------------------------


def dispatch(session: Session, *, run_id: uuid.UUID) -> uuid.UUID | None:
    """Assign a queued run to its agent when the agent is online and idle and the device is free.

    Idempotent: a run that is not queued (or is locked by another dispatcher) is left alone.
    Returns the agent's id when the run was assigned; the caller wakes that agent after commit.
    """
    run = repository.queued_locked(session, run_id)
    if run is None:
        return None
    if run.group_id is not None:
        return _dispatch_group(session, run, run.group_id)
    agent = repository.lock_agent(session, run.agent_id)
    if agent is None or not agent.online or agent.revoked_at is not None or agent.state == "draining":
        return None
    if agent.kind != "agent":  # an external host (uploads only) is never dispatched to
        return None
    if repository.agent_busy(session, agent.id):
        return None
    targets = repository.targets_of(session, [run.id])[run.id]
    devices = {d for d in [run.device_id, *(t.device_id for t in targets)] if d is not None}
    if devices and repository.device_busy(session, list(devices)):
        return None
    now = utcnow()
    _move(run, "assign", targets=targets)
    run.assigned_at, run.lease_id = now, uuid.uuid4()
    run.lease_expires_at = now + timedelta(seconds=get_settings().lease_start_timeout_s)
    run.attempt += 1
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:  # another run took the device between our check and the flush
        session.expire(run)
        return None
    return agent.id


def _dispatch_group(session: Session, run: Run, group_id: uuid.UUID) -> uuid.UUID | None:
    """All or none: every member of the group is assigned in this transaction when every member's
    agent is online, idle and not draining and every device is free; else the group stays queued.
    It never waits for a lock (a group, member or agent another transaction holds: the next
    dispatch tries again), so two dispatchers of one group, or of two groups, cannot deadlock.
    A stopped group's queued members are cancelled. The other members' agents are woken after
    the commit; `run`'s agent id is returned for the caller to wake."""
    group = repository.group(session, group_id, skip_locked=True)
    if group is None:
        return None
    members = repository.group_members(session, group_id, skip_locked=True)
    if len(members) != repository.count_group_members(session, group_id):
        return None
    if group.stop_reason is not None:
        for m in members:
            if m.status == RunStatus.queued:
                _finish(m, "cancel", f"the group stopped: {group.stop_reason}")
        return None
    if any(m.status != RunStatus.queued for m in members):
        return None
    agent_ids = sorted({m.agent_id for m in members})
    agents = repository.lock_agents_skip(session, agent_ids)
    if len(agents) != len(agent_ids):
        return None
    for agent in agents:
        if (
            not agent.online
            or agent.revoked_at is not None
            or agent.state == "draining"
            or agent.kind != "agent"
        ):
            return None
        if repository.agent_busy(session, agent.id):
            return None
    targets = repository.targets_of(session, [m.id for m in members])
    devices = {
        d for m in members for d in [m.device_id, *(t.device_id for t in targets[m.id])] if d is not None
    }
    if devices and repository.device_busy(session, list(devices)):
        return None
    now = utcnow()
    expires = now + timedelta(seconds=get_settings().lease_start_timeout_s)
    for m in members:
        _move(m, "assign")
        m.assigned_at, m.lease_id, m.lease_expires_at = now, uuid.uuid4(), expires
        m.attempt += 1
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:  # another run took a device between our check and the flush
        for m in members:
            session.expire(m)
        return None
    for agent_id in agent_ids:
        if agent_id != run.agent_id:
            wake.wake_after_commit(session, agent_id)
    return run.agent_id


def cancel_group(session: Session, *, principal: UserPrincipal, group_id: uuid.UUID) -> RunGroup:
    """Cancel every member: queued and assigned ones now, running ones at their next progress
    report (or in the start barrier's answer). Members first, then the group row (the order every
    transaction that waits keeps)."""
    group = repository.group(session, group_id)
    if group is None or group.team_id not in principal.team_ids:
        raise NotFound("group run not found")
    principal.require(group.team_id, Role.member)
    members = repository.group_members(session, group_id)
    locked = [repository.get_for_agent(session, m.id, m.agent_id) for m in members]  # id order
    group = repository.group(session, group_id, lock=True)
    assert group is not None
    if all(m is None or m.status in FINAL_STATUSES for m in locked):
        raise Conflict("every member of the group run has finished", code="run_finished")
    group.cancelled = True
    if group.stop_reason is None:
        group.stop_reason = "cancelled by a user"
    session.flush()
    for m in locked:
        if m is None or m.status in FINAL_STATUSES:
            continue
        if m.status in (RunStatus.queued, RunStatus.assigned):
            _finish(m, "cancel", "cancelled before it started")
        else:
            m.cancel_requested = True
    return group


def group_stop_reason(session: Session, run: Run) -> str | None:
    """Why the run's group stopped, if it is a member of one that did."""
    if run.group_id is None:
        return None
    group = repository.group(session, run.group_id)
    return group.stop_reason if group is not None else None


def lease_group(session: Session, run: Run) -> LeaseGroup | None:
    """A lease's `group`: what a member's agent needs to meet the others at the start barrier."""
    if run.group_id is None:
        return None
    group = repository.group(session, run.group_id)
    if group is None:
        return None
    return LeaseGroup(
        group_id=group.id,
        members=repository.count_group_members(session, group.id),
        start_tolerance_ns=group.start_tolerance_ns,
        prepare_timeout_s=group.prepare_timeout_s,
    )


def queued_ids(session: Session) -> list[uuid.UUID]:
    """Queued runs, oldest first (at most the repository's batch): what `run.dispatch_pending` tries."""
    return repository.queued_ids(session)


def expire_stale_leases(session: Session) -> tuple[list[uuid.UUID], list[uuid.UUID]]:
    """Assigned-but-not-started runs go back to the queue (or fail after max attempts);
    running runs whose agent went silent fail. Never re-run a started run: no duplicates."""
    settings = get_settings()
    requeued, failed = [], []
    for run in repository.stale_leases(session, utcnow()):
        # a group's member is never queued again alone: its group was assigned all together
        if (
            run.status == RunStatus.assigned
            and run.attempt < settings.run_max_attempts
            and run.group_id is None
        ):
            _move(run, "requeue")
            run.lease_id, run.lease_expires_at, run.assigned_at = None, None, None
            requeued.append(run.id)
        elif run.status == RunStatus.assigned and run.group_id is not None:
            _finish(run, "fail", "the agent did not pick its member of the group run up in time")
            failed.append(run.id)
        elif run.status == RunStatus.assigned:
            _finish(run, "fail", f"the agent did not pick the run up in {run.attempt} attempts")
            failed.append(run.id)
        else:
            _finish(run, "fail", "lease expired: the agent stopped reporting progress")
            failed.append(run.id)
    return requeued, failed


def fail_agent_runs(session: Session, *, agent_id: uuid.UUID, reason: str) -> list[uuid.UUID]:
    """The agent was revoked or deleted: its queued and active runs fail with `reason`."""
    runs = repository.unfinished_of_agent(session, agent_id)
    for run in runs:
        _finish(run, "fail", reason)
    return [r.id for r in runs]


def fail_lost(
    session: Session, *, agent_id: uuid.UUID, idle_since: datetime, boot_id: uuid.UUID | None = None
) -> list[uuid.UUID]:
    """The agent says it runs nothing (its worker asks for work, or a heartbeat says idle with no
    current run): its runs that started before `idle_since` were lost, typically because the
    agent restarted mid-run. Fail them now rather than after the lease expires, and let the next
    run go. `idle_since` is when the server received the report (minus a grace for a heartbeat
    built before a run started); a run started after it may be the one the agent is starting.

    `boot_id`: the reporting agent process's (None from older agents). A run that same process
    started (`started_boot_id`) is never failed here: the process did not restart, so it still
    holds the run (its result is uploading or waits in its spool after a network cut, or it will
    report a failure); the lease's expiry remains the backstop. Runs started by another process,
    or by one of unknown boot id, are failed as before.

    Assigned runs are left alone: they never started, so nothing was lost, and the agent's next
    lease poll hands them to the new process (`hand_out`)."""
    runs = repository.running_of_agent(session, agent_id, started_before=idle_since)
    if boot_id is not None:
        runs = [run for run in runs if run.started_boot_id != boot_id]
    return _fail_as_lost(session, runs)


def fail_lost_to_restart(
    session: Session, *, agent_id: uuid.UUID, boot_id: uuid.UUID, held_lease_id: uuid.UUID | None
) -> list[uuid.UUID]:
    """A heartbeat of agent process `boot_id`, which holds `held_lease_id` (or no lease): the
    agent's running runs that another process started (`started_boot_id`) and whose lease this
    one does not hold were lost with that process. They fail at once, whatever the state the
    heartbeat reports; no grace is needed, since a late heartbeat of the old process can only
    carry the old boot id.

    A run whose lease the process holds is its own: it takes the run's boot id over (the run may
    have started before the process's first heartbeat reached the server). A run started by this
    same process, or by one whose boot id is unknown (an older agent), is left to `fail_lost`'s
    grace: an idle report of a live process may have been built before the lease reached it, or
    come while the run's result waits in its spool."""
    lost = []
    for run in repository.running_of_agent(session, agent_id, started_before=utcnow()):
        if held_lease_id is not None and run.lease_id == held_lease_id:
            run.started_boot_id = boot_id
        elif run.started_boot_id is not None and run.started_boot_id != boot_id:
            lost.append(run)
    return _fail_as_lost(session, lost)


def _fail_as_lost(session: Session, runs: list[Run]) -> list[uuid.UUID]:
    for run in runs:
        _finish(run, "fail", AGENT_RESTARTED)
    if runs:
        enqueue(session, "run.dispatch_pending")
    return [r.id for r in runs]


# --- agent side -------------------------------------------------------------------------------


def leased_run(session: Session, *, principal: AgentPrincipal, run_id: uuid.UUID, lease_id: uuid.UUID) -> Run:
    """The agent's run, locked, when `lease_id` is still its lease (else 404 / 409 lease_lost)."""
    return _leased(repository.get_for_agent(session, run_id, principal.agent_id), lease_id)


def _leased(run: Run | None, lease_id: uuid.UUID) -> Run:
    if run is None:
        raise NotFound("run not found for this agent")
    if run.lease_id != lease_id:
        raise Conflict("this lease is no longer valid for the run", code="lease_lost")
    return run


def target_jobs(session: Session, run: Run, index: int) -> tuple[str, list[ResultJob]]:
    """Target `index` of a multi-target run: its path and its key figures per job as result rows
    (not stored: compare reads them where it reads a run's own), else 422 naming `targets`."""
    targets = repository.targets_of(session, [run.id])[run.id]
    if not targets:
        raise Invalid("targets", f"run {run.id} has one target: compare the run itself")
    if not 0 <= index < len(targets):
        raise Invalid("targets", f"run {run.id} has targets 0…{len(targets) - 1}, not {index}")
    t = targets[index]
    rows = []
    for j in t.jobs or []:
        cols: dict[str, Any] = {
            k: j.get(k)
            for k in ("job_index", "name", "rw", "bs_bytes", "runtime_ns", "usr_cpu_pct", "sys_cpu_pct")
        }
        cols |= {
            "kernel_worker_cpu_pct": j.get("kernel_worker_cpu_pct"),
            "target_nowait": j.get("target_nowait"),
        }
        for d in ("read", "write"):
            side = j.get(d) or {}
            cols |= {f"{d}_{f}": side.get(f) for f in DirSummary.model_fields}
        rows.append(ResultJob(run_id=run.id, **cols))
    return t.target_path, rows


def hand_out(session: Session, *, agent_id: uuid.UUID) -> Run | None:
    """The run the dispatcher assigned to this agent, if any, with its lease renewed from now
    (the agent has lease_start_timeout_s to start it)."""
    run = repository.assigned_to(session, agent_id)
    if run is None:
        return None
    run.lease_expires_at = utcnow() + timedelta(seconds=get_settings().lease_start_timeout_s)
    return run


def hand_out_after_lost(
    session: Session, *, agent_id: uuid.UUID, idle_since: datetime, boot_id: uuid.UUID | None
) -> tuple[Run | None, list[str] | None]:
    """A lease poll of an agent that holds runs: `fail_lost`, then `hand_out` with the run's
    targets (`target_paths`), from one read of the agent's runs."""
    held = repository.held_by_agent(session, agent_id, started_before=idle_since)
    lost = [
        r
        for r, _ in held
        if r.status == RunStatus.running and (boot_id is None or r.started_boot_id != boot_id)
    ]
    _fail_as_lost(session, lost)
    assigned = next(((r, p) for r, p in held if r.status == RunStatus.assigned), None)
    if assigned is None:
        return None, None
    run, paths = assigned
    run.lease_expires_at = utcnow() + timedelta(seconds=get_settings().lease_start_timeout_s)
    return run, paths


def start(session: Session, *, principal: AgentPrincipal, run_id: uuid.UUID, body: LeaseRef) -> Run:
    run = leased_run(session, principal=principal, run_id=run_id, lease_id=body.lease_id)
    seen_at_work(session, principal=principal)  # its idle heartbeats may be minutes apart (ADR 0051)
    if run.status == RunStatus.running:
        return run  # a retried start
    if run.status != RunStatus.assigned:
        raise Conflict(f"run is {run.status.value}, not assigned", code="lease_lost")
    now = utcnow()
    _move(run, "start")
    run.started_at = now
    agent = session.get(Agent, principal.agent_id)  # loaded already: it authenticated the request
    run.started_boot_id = agent.boot_id if agent is not None else None  # the process starting it
    run.lease_expires_at = now + timedelta(seconds=get_settings().lease_progress_timeout_s)
    return run


def progress(
    session: Session, *, principal: AgentPrincipal, run_id: uuid.UUID, body: ProgressReport
) -> ProgressAck:
    run = leased_run(session, principal=principal, run_id=run_id, lease_id=body.lease_id)
    if run.status != RunStatus.running:
        raise Conflict(f"run is {run.status.value}, not running", code="lease_lost")
    seen_at_work(session, principal=principal)  # alive while busy, whatever its heartbeats' pace
    now = utcnow()
    run.lease_expires_at = now + timedelta(seconds=get_settings().lease_progress_timeout_s)
    data = body.model_dump(mode="json", exclude={"lease_id"})
    samples = list((run.progress or {}).get("samples") or [])
    if body.job_name not in IDLE_PHASES:  # the idle phases' ticks carry no rates
        start = run.started_at or now
        samples.append(
            {
                "t_s": round((now - start).total_seconds(), 3),
                "job_index": body.job_index,
                **{k: data[k] for k in ("read_iops", "read_bw_bytes", "write_iops", "write_bw_bytes")},
            }
        )
    share = run_share(
        run.workload_spec.get("jobs"),
        idle_s=run.idle_s,
        phase=body.job_name if body.job_name in IDLE_PHASES else "job",
        job_index=body.job_index,
        percent=body.percent,
        elapsed_ns=body.elapsed_ns,
        run_s=(now - run.started_at).total_seconds() if run.started_at else None,
    )
    # the share never goes back: it drops when a size-bound job starts and its length first shows
    # (a 10 s job, one of unknown length, a 10 s job: 50 % as the second starts, 21 % once it shows
    # 50 s long); it holds until the run catches up, and the time left says "at least" meanwhile
    held = max(float((run.progress or {}).get("run_percent") or 0.0), share.percent)
    run.progress = {
        **data,
        "updated_at": now.isoformat(),
        "samples": samples[-PROGRESS_SAMPLES:],
        "run_percent": round(held, 3),
        "run_eta_s": round(share.eta_s, 3),
        "run_eta_at_least": share.eta_at_least,
    }
    stopped = group_stop_reason(session, run) is not None  # a member of a stopped group stops too
    return ProgressAck(
        cancel_requested=run.cancel_requested or stopped, lease_expires_at=run.lease_expires_at
    )


def fail(session: Session, *, principal: AgentPrincipal, run_id: uuid.UUID, body: FailureReport) -> Run:
    run = leased_run(session, principal=principal, run_id=run_id, lease_id=body.lease_id)
    tail = body.stderr_tail.strip()[-1500:]
    code = f" (engine exit {body.exit_code})" if body.exit_code is not None else ""
    # the agent's reason often quotes the engine's last line already: do not say it twice
    detail = f": {tail}" if tail and tail.splitlines()[-1] not in body.reason else ""
    if run.status == RunStatus.failed and run.error == AGENT_RESTARTED and not body.cancelled:
        # a report spooled before the agent restarted, delivered after its first poll failed the
        # run: the agent's own reason is the true one (the status stays; only the reason is told)
        run.error = f"{body.reason}{code}{detail}"
        return run
    if run.status in FINAL_STATUSES:
        return run  # a retried report, or the reaper got there first
    stopped = group_stop_reason(session, run) if body.cancelled and not run.cancel_requested else None
    if stopped is not None:
        _finish(run, "cancel", f"the group stopped: {stopped}")
    elif body.cancelled or run.cancel_requested:
        _finish(run, "cancel", "cancelled while running")
    else:
        _finish(run, "fail", f"{body.reason}{code}{detail}")
    enqueue(session, "run.dispatch_pending")
    return run


def succeed(
    session: Session,
    *,
    run: Run,
    engine_started_at: datetime,
    engine_finished_at: datetime,
    targets: list[RunTarget] | None = None,
) -> None:
    """The run's result was stored: it succeeded when its engine finished. `finished_at` is the
    engine's end as the agent measured it, not the upload time (a spooled result may arrive
    much later; the upload time is `RunResult.uploaded_at`). An agent clock that disagrees with
    the server's (the end falls before the run started or after now) is not trusted: the end is
    then estimated as the server's start plus the engine's duration, at most now. A cancelled
    run keeps its status (its result is stored all the same)."""
    if run.status not in TRANSITIONS["succeed"][0]:
        enqueue(session, "run.dispatch_pending")
        return
    now = utcnow()
    end = engine_finished_at
    if run.started_at is None:
        end = now
    elif not run.started_at <= end <= now:
        end = min(now, run.started_at + max(engine_finished_at - engine_started_at, timedelta(0)))
    _finish(run, "succeed", None, at=end, targets=targets)
    if run.progress:
        run.progress = {
            **run.progress,
            "percent": 100.0,
            "run_percent": 100.0,
            "run_eta_s": 0.0,
            "run_eta_at_least": False,
        }
    enqueue(session, "run.dispatch_pending")


def validity(session: Session, *, run: Run) -> list[RunValidityFlag]:
    """The run's validity flags as `system` gives them, without the rest of its header (the page
    cache record, the host's whole inventory): what a run's series judges once per run."""
    agent = repository.agents_by_id(session, {run.agent_id}).get(run.agent_id)
    return _validity(session, run, agent, repository.device(session, run.device_id), _cache_mode(run))


def _cache_mode(run: Run) -> Literal["direct", "buffered", "mixed", "unstated"]:
    jobs = run.workload_spec.get("jobs", [])
    direct = [bool(j.get("direct")) for j in jobs]
    if run.workload_spec.get("kind", "block") != "block":  # a file workload: its file sets' openflags
        direct = [bool((run.workload_spec.get("facts") or {}).get("o_direct"))]
    cache: Literal["direct", "buffered", "mixed", "unstated"] = (
        "direct" if direct and all(direct) else ("buffered" if not any(direct) else "mixed")
    )
    if any("direct" in (j.get("unstated") or []) for j in jobs if isinstance(j, dict)):
        cache = "unstated"  # an imported file that did not say: its placeholder is no answer
    return cache


def validities(session: Session, *, runs: list[Run]) -> dict[uuid.UUID, list[RunValidityFlag]]:
    """`validity` of many runs at once, with to_read's fixed number of queries instead of a dozen
    a run: what a series' bulk backfill judges per batch."""
    if not runs:
        return {}
    agents = repository.agents_by_id(session, {r.agent_id for r in runs})
    devs = {r.device_id: repository.device(session, r.device_id) for r in runs if r.device_id}
    names = {i: d.name for i, d in devs.items() if d is not None}
    reads = to_read(session, runs, agents=agents, device_names=names)
    return {
        r.id: _flags(r, read, agents.get(r.agent_id), devs.get(r.device_id) if r.device_id else None)
        for r, read in zip(runs, reads, strict=True)
    }


def _validity(
    session: Session, run: Run, agent: Agent | None, dev: Device | None, cache: str
) -> list[RunValidityFlag]:
    # the agent and device already loaded are handed to to_read (two queries fewer)
    read = to_read(
        session,
        [run],
        agents={agent.id: agent} if agent is not None else None,
        device_names={dev.id: dev.name} if dev is not None else None,
    )[0]
    return _flags(run, read, agent, dev, cache)


def _flags(
    run: Run, read: RunRead, agent: Agent | None, dev: Device | None, cache: str | None = None
) -> list[RunValidityFlag]:
    """The validity flags of a run read (`to_read`), plus buffered I/O on a raw device."""
    cache = cache if cache is not None else _cache_mode(run)
    flags = [RunValidityFlag(**f) for f in with_origin_flags(run, flags_for(run, read, agent, dev))]
    raw = run.target_path.startswith("/dev/") and not run.target_path.startswith("/dev/shm")
    if raw and cache not in ("direct", "unstated"):
        flags.insert(
            0,
            RunValidityFlag(
                flag="buffered_device",
                message="buffered I/O on a block device: the page cache answers part of it, "
                "not the device (use direct I/O)",
            ),
        )
    return flags


def system(session: Session, *, run: Run) -> RunSystem:
    """The run page's header: host, device, file system, cache mode and the run's validity flags
    (backend/compare/validity.py's rules, plus buffered I/O on a raw device)."""
    agent = repository.agents_by_id(session, {run.agent_id}).get(run.agent_id)
    dev = repository.device(session, run.device_id)
    inv = (Inventory.read(agent.inventory) if agent else None) or Inventory()
    facts: dict[str, Any] = (dev.facts if dev else None) or {}
    cache = _cache_mode(run)
    flags = _validity(session, run, agent, dev, cache)

    def text(value: object) -> str | None:
        return str(value) if value not in (None, "") else None

    return RunSystem(
        hostname=inv.hostname,
        kernel=inv.os.kernel if inv.os else None,
        distro=inv.os.distro if inv.os else None,
        virtualization=inv.virtualization,
        cpu_model=inv.cpu.model if inv.cpu else None,
        mem_bytes=inv.mem_bytes,
        device_name=dev.name if dev else None,
        device_model=text(facts.get("model")),
        device_kind=dev.kind if dev else None,
        interface=text(facts.get("interface")),
        media=dev.media if dev else None,
        fstype=text(facts.get("fstype")),
        mountpoint=text(facts.get("mountpoint")),
        mount_options=text(facts.get("mount_options")),
        cache=cache,
        page_cache=pagecache.facts(pagecache.read_doc(result_repo.page_cache(session, run.id))),
        validity=flags,
    )
