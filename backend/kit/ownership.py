"""Who may delete a team's object (ADR 0021): an admin of its team deletes anything in it; a member
deletes what they created; a viewer nothing."""

import uuid

from backend.auth.principal import UserPrincipal
from backend.errors import Forbidden
from backend.models import Role


def require_deleter(principal: UserPrincipal, team_id: uuid.UUID, created_by: uuid.UUID | None) -> None:
    """403 naming the role needed, unless the caller is an admin of the team or a member who made it."""
    principal.require(team_id, Role.member)
    if created_by != principal.user_id and principal.roles.get(team_id) != Role.admin:
        raise Forbidden(
            "this needs the admin role in the team (a member deletes only what they created)",
            code="forbidden",
        )
