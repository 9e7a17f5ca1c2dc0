"""The team audit log: one owner of what is recorded and how.

Every domain that creates, shares, revokes, deletes, invites, changes a role, enrols or revokes an
agent calls `record` in the same transaction as the change: the event exists if and only if the
change was committed."""

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from backend.audit import repository
from backend.auth.principal import UserPrincipal
from backend.models import AuditEvent, Role, User


def record(
    session: Session,
    *,
    team_id: uuid.UUID,
    action: str,
    target_kind: str,
    target_id: uuid.UUID | str | None = None,
    user_id: uuid.UUID | None = None,
    actor: str | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """Record `action` ("<kind>.<verb>", e.g. "share_link.revoked") in the team's log.

    The actor is a user (`user_id`; their e-mail is kept as the label so the entry stays readable
    after the account is deleted) or a non-user named by `actor` ("agent build-01", "operator")."""
    if user_id is not None and actor is None:
        user = session.get(User, user_id)
        actor = user.email if user is not None else str(user_id)
    event = AuditEvent(
        team_id=team_id,
        actor_user_id=user_id,
        actor=actor or "operator",
        action=action,
        target_kind=target_kind,
        target_id=str(target_id) if target_id is not None else None,
        details=details or {},
    )
    repository.add(session, event)
    return event


def page(
    session: Session,
    *,
    principal: UserPrincipal,
    team_id: uuid.UUID,
    action: str | None,
    since: datetime | None,
    limit: int,
    offset: int,
) -> tuple[list[AuditEvent], int]:
    """GET /teams/{team_id}/audit: admins of the team only."""
    principal.require(team_id, Role.admin)
    return repository.page(session, team_id, action=action, since=since, limit=limit, offset=offset)
