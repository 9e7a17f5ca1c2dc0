import uuid
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.campaign import matrix, repository
from backend.campaign.schemas import CampaignCell, CampaignCreate, CampaignPlan, CampaignRead
from backend.comment import service as comment_service
from backend.errors import Invalid, NotFound
from backend.kit.ownership import require_deleter
from backend.models import FINAL_STATUSES, Campaign
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
    runs = len(cs) * len(body.targets) * body.repeats
    return CampaignPlan(
        cells=[
            CampaignCell(workload=names[c.workload_index], params=c.params, label=c.label, seconds=s)
            for c, s in zip(cs, each, strict=True)
        ],
        runs=runs,
        targets=len(body.targets),
        repeats=body.repeats,
        measure_s=sum(known) * len(body.targets) * body.repeats if len(known) == len(each) else None,
    )


def create(session: Session, *, principal: UserPrincipal, body: CampaignCreate) -> Campaign:
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
