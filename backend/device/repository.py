"""SQL of the device domain. (Device identity's own queries are still in service.py.)"""

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import Device


def list_in_teams(
    session: Session, team_ids: list[uuid.UUID], *, agent_id: uuid.UUID | None = None
) -> list[Device]:
    q = select(Device).where(Device.team_id.in_(team_ids))
    if agent_id is not None:
        q = q.where(Device.agent_id == agent_id)
    return list(session.scalars(q.order_by(Device.name)))
