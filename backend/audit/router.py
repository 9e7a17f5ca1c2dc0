import uuid
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from backend.audit import service
from backend.audit.schemas import AuditEventRead
from backend.auth.deps import SessionDep, UserDep
from backend.kit.lanes import BULK
from backend.kit.schema import Page

router = APIRouter(prefix="/teams", tags=["audit"], dependencies=[BULK])


@router.get("/{team_id}/audit", response_model=Page[AuditEventRead])
def list_audit_events(
    team_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    action: Annotated[
        str | None,
        Query(max_length=60, description='events whose action starts with this ("run.", "member.")'),
    ] = None,
    since: Annotated[datetime | None, Query(description="events at or after this time")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Page[AuditEventRead]:
    """The team's audit log, newest first: who created, shared, revoked, deleted, invited, changed a
    role, enrolled or revoked an agent. Team admins only (403 otherwise)."""
    rows, total = service.page(
        session, principal=principal, team_id=team_id, action=action, since=since, limit=limit, offset=offset
    )
    return Page[AuditEventRead](items=[AuditEventRead.model_validate(r) for r in rows], total=total)
