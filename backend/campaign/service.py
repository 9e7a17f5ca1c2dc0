import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.campaign.schemas import CampaignCreate, CampaignRead
from backend.errors import Invalid, NotFound
from backend.models import FINAL_STATUSES, Campaign, Run
from backend.run import service as run_service
from backend.run.schemas import RunCreate


def create(session: Session, *, principal: UserPrincipal, body: CampaignCreate) -> Campaign:
    campaign: Campaign | None = None
    order: list[str] = []
    # repeat-major order (A B A B ...), so slow drift of the machine spreads over every target
    for rep in range(1, body.repeats + 1):
        for i, t in enumerate(body.targets):
            try:
                run = run_service.create(
                    session,
                    principal=principal,
                    body=RunCreate(
                        agent_id=t.agent_id,
                        target_path=t.target_path,
                        workload=body.workload,
                        workload_id=body.workload_id,
                        environment_id=t.environment_id,
                        meter=body.meter,
                        idle_s=body.idle_s,
                        name=f"{body.name} · {t.target_path} · #{rep}",
                    ),
                )
            except Invalid as exc:  # name the target that failed
                detail = (
                    exc.detail[0]
                    if isinstance(exc.detail, list) and exc.detail
                    else {"field": "", "message": exc.message}
                )
                raise Invalid(f"targets.{i}.{detail['field']}", detail["message"]) from exc
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
    return campaign


def get(session: Session, *, principal: UserPrincipal, campaign_id: uuid.UUID) -> Campaign:
    c = session.get(Campaign, campaign_id)
    if c is None or c.team_id not in principal.team_ids:
        raise NotFound("campaign not found")
    return c


def to_read(session: Session, campaigns: list[Campaign]) -> list[CampaignRead]:
    ids = [c.id for c in campaigns]
    runs: dict[uuid.UUID, list[Run]] = {i: [] for i in ids}
    for r in session.scalars(select(Run).where(Run.campaign_id.in_(ids)).order_by(Run.created_at, Run.id)):
        assert r.campaign_id is not None
        runs[r.campaign_id].append(r)
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
                repeats=int(c.spec.get("repeats", 1)),
                run_ids=[r.id for r in rs],
                counts=counts,
                done=all(r.status in FINAL_STATUSES for r in rs),
                compare_url=f"/compare?runs={','.join(done_ids)}&group_by=device_environment",
            )
        )
    return out
