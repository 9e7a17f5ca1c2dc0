"""Teams are rows of the auth domain (teams, memberships): this domain only reads them."""

from sqlalchemy.orm import Session

from backend.auth import repository as auth_repo
from backend.auth.principal import UserPrincipal
from backend.auth.schemas import TeamRole


def list_teams(session: Session, *, principal: UserPrincipal) -> list[TeamRole]:
    """The caller's teams with the caller's role in each."""
    return [TeamRole(id=t.id, name=t.name, role=r) for t, r in auth_repo.teams_of(session, principal.user_id)]
