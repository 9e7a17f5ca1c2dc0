import uuid

from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.campaign import repository
from backend.campaign.schemas import CampaignCreate, CampaignRead
from backend.comment import service as comment_service
from backend.errors import Invalid, NotFound
from backend.kit.ownership import require_deleter
from backend.models import FINAL_STATUSES, Campaign
from backend.run import deletion as run_deletion
from backend.run import service as run_service
from backend.run.schemas import RunCreate, fit_name


def create(session: Session, *, principal: UserPrincipal, body: CampaignCreate) -> Campaign:
    campaign: Campaign | None = None
    order: list[str] = []
    # repeat-major order (A B A B ...), so slow drift of the machine spreads over every target
    for rep in range(1, body.repeats + 1):
        for i, t in enumerate(body.targets):
            try:
                run_body = RunCreate(
                    agent_id=t.agent_id,
                    target_path=t.target_path,
                    workload=body.workload,
                    workload_id=body.workload_id,
                    environment_id=t.environment_id,
                    meter=body.meter,
                    destructive=body.destructive,
                    idle_s=body.idle_s,
                    scale=body.scale,
                    name=fit_name(f"{body.name} · {t.target_path} · #{rep}"),
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
                raise _for_target(exc, i) from exc
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
        details={"name": campaign.name, "runs": len(order)},
    )
    return campaign


def _for_target(exc: Invalid, index: int) -> Invalid:
    entries = (
        exc.detail if isinstance(exc.detail, list) and exc.detail else [{"field": "", "message": exc.message}]
    )
    detail = [{**d, "field": f"targets.{index}.{d['field']}".rstrip(".")} for d in entries]
    out = Invalid(detail[0]["field"], detail[0]["message"])
    out.code, out.detail = exc.code, detail
    out.message = "; ".join(f"{d['field']}: {d['message']}" for d in detail[:5])
    return out


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
                compare_url=f"/compare?runs={','.join(done_ids)}&group_by=device_environment",
            )
        )
    return out


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
