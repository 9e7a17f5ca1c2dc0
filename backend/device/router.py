import uuid
from typing import Annotated

from fastapi import APIRouter, Query, status

from backend.auth.deps import SessionDep, UserDep
from backend.carbon.service import device_embodied
from backend.device import service
from backend.device.schemas import DeviceRead, DeviceUpdate
from backend.kit.lanes import BULK
from backend.kit.schema import Page
from backend.models import Device

router = APIRouter(prefix="/devices", tags=["devices"], dependencies=[BULK])


def _read(d: Device) -> DeviceRead:
    emb = device_embodied(d)
    return DeviceRead(
        id=d.id,
        team_id=d.team_id,
        agent_id=d.agent_id,
        key=d.key,
        name=d.name,
        kind=d.kind,
        media=d.media,
        capacity_bytes=d.capacity_bytes,
        embodied_kg=emb[0] if emb else None,
        embodied_source=emb[1] if emb else None,
        embodied_is_default=d.embodied_kg is None,
        lifetime_years=d.lifetime_years,
        notes=d.notes,
        facts=d.facts,
        created_at=d.created_at,
    )


@router.get("", response_model=Page[DeviceRead])
def list_devices(
    principal: UserDep,
    session: SessionDep,
    agent_id: uuid.UUID | None = None,
    team_id: Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")] = None,
) -> Page[DeviceRead]:
    rows = service.list_devices(session, principal=principal, agent_id=agent_id, team_id=team_id)
    return Page[DeviceRead](items=[_read(d) for d in rows], total=len(rows))


@router.patch("/{device_id}", response_model=DeviceRead)
def update_device(
    device_id: uuid.UUID, body: DeviceUpdate, principal: UserDep, session: SessionDep
) -> DeviceRead:
    return _read(service.update(session, principal=principal, device_id=device_id, body=body))


@router.delete(
    "/{device_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`device_in_use` (runs name it) or `device_busy` (a run holds it)"}},
)
def delete_device(
    device_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    force: Annotated[
        bool, Query(description="detach the runs that name the device (they keep their results)")
    ] = False,
) -> None:
    """Delete a device (team admins; audited as device.deleted). Runs that name it: 409 listing
    them (`detail.runs`, `detail.run_count`) unless `force=true`; an active run on it: 409."""
    service.delete(session, principal=principal, device_id=device_id, force=force)
