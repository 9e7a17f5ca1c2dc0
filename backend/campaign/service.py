import re
import uuid
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.agent.policy import reported_policy
from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.campaign import matrix, repository
from backend.campaign.schemas import CampaignCell, CampaignCreate, CampaignPlan, CampaignRead, CampaignTarget
from backend.comment import service as comment_service
from backend.errors import Invalid, NotFound
from backend.kit.ownership import require_deleter
from backend.models import FINAL_STATUSES, Agent, Campaign, Role
from backend.run import deletion as run_deletion
from backend.run import service as run_service
from backend.run.schemas import RunCreate, fit_name
from backend.workload import service as workload_service
from backend.workload.schemas import WorkloadSpec, load_spec


def _specs(
    session: Session, principal: UserPrincipal, body: CampaignCreate
) -> list[tuple[str, WorkloadSpec]]:
    """The campaign's workloads (name, spec): the first (workload or workload_id), then workload_ids."""
    out: list[tuple[str, WorkloadSpec]] = []
    if body.workload is not None:
        out.append(("inline workload", body.workload))
    for i, wid in enumerate([body.workload_id, *body.workload_ids]):
        if wid is None:
            continue
        try:
            row = workload_service.get(session, principal=principal, workload_id=wid)
        except NotFound as exc:
            raise Invalid("workload_id" if i == 0 else f"workload_ids.{i - 1}", "workload not found") from exc
        out.append((row.name, load_spec(row.spec)))
    return out


def cells(
    session: Session, principal: UserPrincipal, body: CampaignCreate
) -> tuple[list[str], list[matrix.Cell]]:
    specs = _specs(session, principal, body)
    sweep = body.sweep.model_dump() if body.sweep else {}
    return [name for name, _ in specs], matrix.expand([spec for _, spec in specs], sweep)


def is_matrix(body: CampaignCreate) -> bool:
    """Anything beyond one workload as saved: more workloads, or any swept value."""
    sweep = body.sweep.model_dump() if body.sweep else {}
    return bool(body.workload_ids) or any(sweep.values())


def plan(session: Session, *, principal: UserPrincipal, body: CampaignCreate) -> CampaignPlan:
    names, cs = cells(session, principal, body)
    each = [matrix.seconds(c.spec) for c in cs]
    known = [s for s in each if s is not None]
    left_out: list[dict[str, str]] = []
    targets = body.targets
    if body.target_set is not None:  # what it would take now; each slot chooses again
        targets, left_out = resolve_target_set(session, principal=principal, body=body, role=Role.viewer)
        targets, left_out = available(session, targets, left_out, busy_too=False)
        targets, left_out = fitting(body, targets, left_out)
    runs = len(cs) * len(targets) * body.repeats
    return CampaignPlan(
        cells=[
            CampaignCell(workload=names[c.workload_index], params=c.params, label=c.label, seconds=s)
            for c, s in zip(cs, each, strict=True)
        ],
        runs=runs,
        targets=len(targets),
        repeats=body.repeats,
        per_slot=body.target_set is not None,
        left_out=left_out,
        measure_s=sum(known) * len(targets) * body.repeats if len(known) == len(each) else None,
    )


# ---- target sets: targets chosen when the campaign is queued -----------------------------------


def _left(agent: Agent | uuid.UUID, path: str, reason: str) -> dict[str, str]:
    return {
        "agent_id": str(agent.id if isinstance(agent, Agent) else agent),
        "target_path": path,
        "reason": reason,
    }


def check_target_set(session: Session, *, principal: UserPrincipal, body: CampaignCreate) -> uuid.UUID:
    """A target set's own checks (a schedule's, at creation: its targets are chosen per slot): the
    caller is a member of its team, its agents are the team's, its workloads and sweep expand.
    Returns the team."""
    ts = body.target_set
    assert ts is not None
    if ts.team_id not in principal.team_ids:
        raise Invalid("target_set.team_id", "not one of your teams")
    principal.require(ts.team_id, Role.member)
    agents = {a.id: a for a in repository.team_agents(session, ts.team_id)}
    for i, agent_id in enumerate(ts.agent_ids):
        if agent_id not in agents:
            raise Invalid(f"target_set.agent_ids.{i}", "no such agent in the team")
    if ts.environment_id is not None and not repository.environment_in_team(
        session, ts.environment_id, ts.team_id
    ):
        raise Invalid("target_set.environment_id", "no such environment in the team")
    cells(session, principal, body)  # a missing workload or a sweep that cannot mean what it says: 422
    return ts.team_id


def resolve_target_set(
    session: Session, *, principal: UserPrincipal, body: CampaignCreate, role: Role = Role.member
) -> tuple[list[CampaignTarget], list[dict[str, str]]]:
    """The targets a target set names now: each listed target of the kinds asked, on the team's
    agents (those asked) that run server work, in agent name and host order; and what was not
    taken, with the reason (an agent gone, revoked, reporting no policy or listing none of these
    kinds). `role`: what the caller needs in the team (a plan is read by anyone in it)."""
    ts = body.target_set
    assert ts is not None
    if ts.team_id not in principal.team_ids:
        raise Invalid("target_set.team_id", "not one of your teams")
    principal.require(ts.team_id, role)
    agents = repository.team_agents(session, ts.team_id)
    present = {a.id for a in agents}
    wanted = set(ts.agent_ids)
    targets: list[CampaignTarget] = []
    left_out = [_left(i, "", "the agent no longer exists") for i in ts.agent_ids if i not in present]
    for a in agents:
        if (wanted and a.id not in wanted) or a.kind != "agent":
            continue  # an external host (results uploaded from CI) runs nothing from the server
        if a.revoked_at is not None:
            left_out.append(_left(a, "", "the agent is revoked"))
            continue
        policy = reported_policy(a.inventory)
        listed = [t for t in (policy.targets if policy else []) if t.kind in ts.kinds]
        if not listed:
            left_out.append(_left(a, "", f"the host lists no {' or '.join(ts.kinds)} target"))
        targets += [
            CampaignTarget(agent_id=a.id, target_path=t.path, environment_id=ts.environment_id)
            for t in listed
        ]
    return targets, left_out


def available(
    session: Session,
    targets: list[CampaignTarget],
    left_out: list[dict[str, str]],
    *,
    busy_too: bool,
) -> tuple[list[CampaignTarget], list[dict[str, str]]]:
    """The targets whose agents can take a run now: existing, not revoked, online and (`busy_too`,
    a schedule's slot) not holding a run; the others left out with the reason."""
    agents = repository.agents(session, list({t.agent_id for t in targets}))
    busy = repository.busy_agents(session, list(agents)) if busy_too else set()
    kept: list[CampaignTarget] = []
    out = list(left_out)
    for t in targets:
        a = agents.get(t.agent_id)
        reason = (
            "the agent no longer exists"
            if a is None or a.deleted_at is not None
            else "the agent is revoked"
            if a.revoked_at is not None
            else "the agent is offline"
            if not a.online
            else "the agent is busy with another run"
            if t.agent_id in busy
            else None
        )
        if reason is None:
            kept.append(t)
        else:
            out.append(_left(t.agent_id, t.target_path, reason))
    return kept, out


def fitting(
    body: CampaignCreate, targets: list[CampaignTarget], left_out: list[dict[str, str]]
) -> tuple[list[CampaignTarget], list[dict[str, str]]]:
    """A target set's targets up to the campaign's run limit; the rest left out, saying so."""
    cap = body.max_targets()
    over = [
        _left(t.agent_id, t.target_path, f"over the campaign's limit ({cap} targets of this workload plan)")
        for t in targets[cap:]
    ]
    return targets[:cap], left_out + over


_TARGET_FIELD = re.compile(r"targets\.(\d+)(\.|$)")


class NothingLeft(Invalid):
    """422 naming `target_set`: every target chosen was left out (`left_out` says why each)."""

    def __init__(self, left_out: list[dict[str, str]]) -> None:
        reasons = "; ".join(sorted({d["reason"] for d in left_out})) or "no agent of the team lists one"
        super().__init__("target_set", f"no target is left to queue on: {reasons}"[:500])
        self.left_out = left_out


def create_on(
    session: Session,
    *,
    principal: UserPrincipal,
    body: CampaignCreate,
    targets: list[CampaignTarget],
    left_out: list[dict[str, str]],
) -> Campaign:
    """Queue a target set's campaign on the targets chosen for it: a target the host refuses for
    this workload (its policy, a kind the agent does not run, a file workload on a device) is left
    out with the host's reason and the rest is queued; nothing left: NothingLeft (a 422 naming
    `target_set`)."""
    targets, left_out = list(targets), list(left_out)
    while targets:
        sp = session.begin_nested()
        try:
            campaign = _create(
                session, principal=principal, body=body.model_copy(update={"targets": targets})
            )
        except Invalid as exc:
            sp.rollback()
            first = exc.detail[0] if isinstance(exc.detail, list) and exc.detail else {}
            m = _TARGET_FIELD.match(str(first.get("field", "")))
            if m is None or int(m.group(1)) >= len(targets):
                raise  # the campaign's own fields (workload, scale, sweep): as POST /campaigns answers
            t = targets.pop(int(m.group(1)))
            left_out.append(_left(t.agent_id, t.target_path, str(first.get("message", exc.message))[:300]))
            continue
        sp.commit()
        campaign.spec = {**campaign.spec, "targets_left_out": left_out}
        session.flush()
        return campaign
    raise NothingLeft(left_out)


def create(session: Session, *, principal: UserPrincipal, body: CampaignCreate) -> Campaign:
    """Queue the campaign: on its targets, or on the targets its target set names now (agents
    online now; a busy agent's runs wait their turn)."""
    if body.target_set is None:
        return _create(session, principal=principal, body=body)
    check_target_set(session, principal=principal, body=body)
    targets, left_out = resolve_target_set(session, principal=principal, body=body)
    targets, left_out = available(session, targets, left_out, busy_too=False)
    targets, left_out = fitting(body, targets, left_out)
    return create_on(session, principal=principal, body=body, targets=targets, left_out=left_out)


def _create(session: Session, *, principal: UserPrincipal, body: CampaignCreate) -> Campaign:
    campaign: Campaign | None = None
    order: list[str] = []
    names, cs = cells(session, principal, body) if is_matrix(body) else ([], [])
    # one plain workload: its runs name it by id, as before; a matrix: each cell's spec inline
    ids = [body.workload_id, *body.workload_ids]  # index 0 is None for an inline workload
    plan_cells: list[tuple[str, WorkloadSpec | None, uuid.UUID | None]] = (
        [
            # a saved workload run as saved keeps its id; a swept cell carries its own spec
            (names[c.workload_index], None, ids[c.workload_index])
            if not c.params and ids[c.workload_index] is not None
            else (
                " · ".join(x for x in (names[c.workload_index] if len(names) > 1 else "", c.label) if x),
                c.spec,
                None,
            )
            for c in cs
        ]
        if cs
        else [("", body.workload, body.workload_id)]
    )
    # repeat-major order (A B A B ...), so slow drift of the machine spreads over every target
    for rep in range(1, body.repeats + 1):
        for cell_name, spec, workload_id in plan_cells:
            for i, t in enumerate(body.targets):
                label = (
                    f"{body.name} · {cell_name} · {t.target_path} · #{rep}"
                    if cell_name
                    else (f"{body.name} · {t.target_path} · #{rep}")
                )
                try:
                    run_body = RunCreate(
                        agent_id=t.agent_id,
                        target_path=t.target_path,
                        workload=spec,
                        workload_id=workload_id,
                        environment_id=t.environment_id,
                        meter=body.meter,
                        destructive=body.destructive,
                        idle_s=body.idle_s,
                        scale=body.scale,
                        name=fit_name(label),
                    )
                except ValidationError as exc:  # the campaign's schema checks the same: never a 500
                    err = exc.errors()[0]
                    field = ".".join(str(p) for p in err["loc"]) or "body"
                    raise Invalid(f"targets.{i}.{field}", err["msg"]) from exc
                try:
                    run = run_service.create(session, principal=principal, body=run_body)
                except Invalid as exc:  # name the target that failed, for every field but the campaign's own
                    if isinstance(exc.detail, list) and exc.detail and exc.detail[0].get("field") == "scale":
                        raise
                    raise exc.under(f"targets.{i}") from exc
                if campaign is not None and run.team_id != campaign.team_id:
                    # a campaign is one team's: its runs, share links and exports hold only that team's
                    raise Invalid(
                        f"targets.{i}.agent_id",
                        "this agent belongs to another team than the campaign's first target: a campaign's "
                        "agents must all be of one team",
                    )
                if campaign is None:
                    campaign = Campaign(
                        team_id=run.team_id,
                        name=body.name,
                        spec=body.model_dump(mode="json"),
                        created_by=principal.user_id,
                    )
                    session.add(campaign)
                    session.flush()
                run.campaign_id = campaign.id
                order.append(str(run.id))
    assert campaign is not None
    campaign.spec = {**campaign.spec, "run_order": order}  # runs share a created_at; keep the queue order
    session.flush()
    audit.record(
        session,
        team_id=campaign.team_id,
        action="campaign.created",
        target_kind="campaign",
        target_id=campaign.id,
        user_id=principal.user_id,
        details={"name": campaign.name, "runs": len(order), "cells": max(1, len(cs))},
    )
    return campaign


def get(session: Session, *, principal: UserPrincipal, campaign_id: uuid.UUID) -> Campaign:
    c = repository.get(session, campaign_id)
    if c is None or c.team_id not in principal.team_ids:
        raise NotFound("campaign not found")
    return c


def page(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID | None = None, limit: int, offset: int
) -> tuple[list[Campaign], int]:
    return repository.page(session, principal.teams_for(team_id), limit=limit, offset=offset)


def to_read(session: Session, campaigns: list[Campaign]) -> list[CampaignRead]:
    runs = repository.runs_of(session, [c.id for c in campaigns])
    out = []
    for c in campaigns:
        position = {rid: i for i, rid in enumerate(c.spec.get("run_order", []))}
        rs = sorted(runs[c.id], key=lambda r: position.get(str(r.id), len(position)))
        counts: dict[str, int] = {}
        for r in rs:
            counts[r.status.value] = counts.get(r.status.value, 0) + 1
        done_ids = [str(r.id) for r in rs if r.status.value == "succeeded"]
        out.append(
            CampaignRead(
                id=c.id,
                team_id=c.team_id,
                name=c.name,
                created_at=c.created_at,
                created_by=c.created_by,
                repeats=int(c.spec.get("repeats", 1)),
                run_ids=[r.id for r in rs],
                counts=counts,
                done=all(r.status in FINAL_STATUSES for r in rs),
                compare_url=f"/compare?runs={','.join(done_ids)}&group_by={_group_by(c.spec)}",
                targets_left_out=list(c.spec.get("targets_left_out", [])),
            )
        )
    return out


def _group_by(spec: dict[str, Any]) -> str:
    """A matrix compares its cells on each target (the swept fields name the columns)."""
    sweep = spec.get("sweep") or {}
    swept = any(len(v) > 1 for v in sweep.values() if isinstance(v, list))
    # the cells differ in their workloads on purpose: compared as they are (force)
    return "sweep&force=true" if spec.get("workload_ids") or swept else "device_environment"


def delete(session: Session, *, principal: UserPrincipal, campaign_id: uuid.UUID, keep_runs: bool) -> None:
    """Delete a campaign with its runs (ADR 0021): an admin of its team, or the member who queued
    it. Runs still assigned or running: 409 listing them (cancel first). `keep_runs`: the runs stay
    and leave the campaign. Audited as campaign.deleted (and run.deleted per run)."""
    c = get(session, principal=principal, campaign_id=campaign_id)
    require_deleter(principal, c.team_id, c.created_by)
    if keep_runs:
        runs = run_deletion.detach_campaign_runs(session, campaign_id=c.id)
    else:
        runs = run_deletion.delete_campaign_runs(
            session, principal=principal, campaign_id=c.id, team_id=c.team_id
        )
    comment_service.forget_campaign(session, team_id=c.team_id, campaign_id=c.id)
    audit.record(
        session,
        team_id=c.team_id,
        action="campaign.deleted",
        target_kind="campaign",
        target_id=c.id,
        user_id=principal.user_id,
        details={
            "name": c.name,
            "runs_deleted": 0 if keep_runs else runs,
            "runs_kept": runs if keep_runs else 0,
        },
    )
    session.delete(c)
    session.flush()
