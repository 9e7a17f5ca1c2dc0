import uuid

from fastapi import APIRouter
from sqlalchemy import select

from backend.auth.deps import SessionDep, UserDep
from backend.device.schemas import DeviceRead
from backend.kit.schema import Page
from backend.models import Device

router = APIRouter(prefix="/devices", tags=["devices"])


@router.get("", response_model=Page[DeviceRead])
def list_devices(
    principal: UserDep, session: SessionDep, agent_id: uuid.UUID | None = None
) -> Page[DeviceRead]:
    q = select(Device).where(Device.team_id.in_(principal.team_ids))
    if agent_id is not None:
        q = q.where(Device.agent_id == agent_id)
    rows = list(session.scalars(q.order_by(Device.name)))
    return Page[DeviceRead](items=[DeviceRead.model_validate(d) for d in rows], total=len(rows))
