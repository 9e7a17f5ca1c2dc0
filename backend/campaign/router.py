import uuid
from typing import Annotated

from fastapi import APIRouter, Query, status

from backend.auth.deps import SessionDep, UserDep
from backend.campaign import service
from backend.campaign.schemas import CampaignCreate, CampaignPage, CampaignPlan, CampaignRead
from backend.kit.lanes import BULK, CONTROL
from backend.kit.paging import Limit, Offset, TeamFilter
from backend.workload.facts import ENGINE_UNAVAILABLE

router = APIRouter(prefix="/campaigns", tags=["campaigns"])


@router.post(
    "",
    response_model=CampaignRead,
    status_code=status.HTTP_201_CREATED,
    responses=ENGINE_UNAVAILABLE,
    dependencies=[CONTROL],
)
def create_campaign(body: CampaignCreate, principal: UserDep, session: SessionDep) -> CampaignRead:
    return service.to_read(session, [service.create(session, principal=principal, body=body)])[0]


@router.post("/plan", response_model=CampaignPlan, responses=ENGINE_UNAVAILABLE, dependencies=[BULK])
def plan_campaign(body: CampaignCreate, principal: UserDep, session: SessionDep) -> CampaignPlan:
    """What POST /campaigns would queue for this body — its cells (workload × sweep combination),
    runs and measuring time — without queueing anything. A sweep that cannot mean what it says is
    a 422 naming `sweep.*`, as POST /campaigns answers it."""
    return service.plan(session, principal=principal, body=body)


@router.get("", response_model=CampaignPage, dependencies=[BULK])
def list_campaigns(
    principal: UserDep,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
    team_id: TeamFilter = None,
) -> CampaignPage:
    rows, total = service.page(session, principal=principal, team_id=team_id, limit=limit, offset=offset)
    return CampaignPage(items=service.to_read(session, rows), total=total)


@router.get("/{campaign_id}", response_model=CampaignRead, dependencies=[BULK])
def get_campaign(campaign_id: uuid.UUID, principal: UserDep, session: SessionDep) -> CampaignRead:
    return service.to_read(session, [service.get(session, principal=principal, campaign_id=campaign_id)])[0]


@router.delete(
    "/{campaign_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`campaign_active`: some of its runs are assigned or running"}},
    dependencies=[BULK],
)
def delete_campaign(
    campaign_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    keep_runs: Annotated[bool, Query(description="keep its runs (they leave the campaign)")] = False,
) -> None:
    """Delete a campaign and its runs (an admin of its team, or the member who queued it; audited).
    Runs still assigned or running: 409 listing them in `detail.runs`; cancel them first."""
    service.delete(session, principal=principal, campaign_id=campaign_id, keep_runs=keep_runs)
