import uuid
from typing import Annotated

from fastapi import APIRouter, Query, status

from backend.alert import service
from backend.alert.schemas import (
    AlertKind,
    AlertPage,
    ChannelCreate,
    ChannelCreated,
    ChannelPage,
    ChannelRead,
    ChannelUpdate,
    TestSent,
)
from backend.auth.deps import SessionDep, UserDep
from backend.kit.lanes import BULK
from backend.kit.paging import Limit, Offset, TeamFilter

router = APIRouter(tags=["alerts"], dependencies=[BULK])


@router.post("/alert-channels", response_model=ChannelCreated, status_code=status.HTTP_201_CREATED)
def create_alert_channel(body: ChannelCreate, principal: UserDep, session: SessionDep) -> ChannelCreated:
    """A team's alert channel (its admins). A webhook's signing key is in this answer only. The
    URL must reach a public address unless the instance allows private ones (422 naming `url`)."""
    return service.create_channel(session, principal=principal, body=body)


@router.get("/alert-channels", response_model=ChannelPage)
def list_alert_channels(
    principal: UserDep,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
    team_id: TeamFilter = None,
) -> ChannelPage:
    rows, total = service.channels(session, principal=principal, team_id=team_id, limit=limit, offset=offset)
    return ChannelPage(items=[service.channel_read(c) for c in rows], total=total)


@router.patch("/alert-channels/{channel_id}", response_model=ChannelRead)
def update_alert_channel(
    channel_id: uuid.UUID, body: ChannelUpdate, principal: UserDep, session: SessionDep
) -> ChannelRead:
    return service.channel_read(
        service.update_channel(session, principal=principal, channel_id=channel_id, body=body)
    )


@router.delete("/alert-channels/{channel_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_alert_channel(channel_id: uuid.UUID, principal: UserDep, session: SessionDep) -> None:
    """Delete a channel with its delivery log (the alerts stay)."""
    service.delete_channel(session, principal=principal, channel_id=channel_id)


@router.post(
    "/alert-channels/{channel_id}/test", response_model=TestSent, status_code=status.HTTP_202_ACCEPTED
)
def test_alert_channel(channel_id: uuid.UUID, principal: UserDep, session: SessionDep) -> TestSent:
    """Queue a test alert to this channel; its delivery shows in GET /alerts."""
    alert_id, delivery_id = service.send_test(session, principal=principal, channel_id=channel_id)
    return TestSent(alert_id=alert_id, delivery_id=delivery_id)


@router.get("/alerts", response_model=AlertPage)
def list_alerts(
    principal: UserDep,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
    team_id: TeamFilter = None,
    kind: Annotated[AlertKind | None, Query(description="only alerts of this kind")] = None,
) -> AlertPage:
    """The team's alerts, newest first, each with its deliveries (the delivery log)."""
    items, total = service.alerts(
        session, principal=principal, team_id=team_id, kind=kind, limit=limit, offset=offset
    )
    return AlertPage(items=items, total=total)
