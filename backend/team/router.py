import uuid
from typing import Any

from fastapi import APIRouter, status

from backend.auth.deps import SessionDep, UserDep
from backend.auth.schemas import TeamRole
from backend.kit.lanes import BULK
from backend.team import service
from backend.team.schemas import MemberRead, MemberUpdate, TeamCreate, TeamRead, TeamUpdate

router = APIRouter(prefix="/teams", tags=["teams"], dependencies=[BULK])

LAST_ADMIN: dict[int | str, dict[str, Any]] = {
    409: {"description": "`last_admin`: the team's last admin cannot leave, be removed or demoted"}
}


@router.get("", response_model=list[TeamRole])
def list_teams(principal: UserDep, session: SessionDep) -> list[TeamRole]:
    """The caller's teams with the caller's role in each."""
    return service.list_teams(session, principal=principal)


@router.post(
    "",
    response_model=TeamRead,
    status_code=status.HTTP_201_CREATED,
    responses={
        403: {"description": "`team_creation_restricted`: IOWATT_TEAM_CREATORS allows only instance admins"},
        409: {"description": "`team_name_taken`: one of the caller's teams has this name"},
    },
)
def create_team(body: TeamCreate, principal: UserDep, session: SessionDep) -> TeamRead:
    """Create a team; its creator becomes its first admin. Who may: IOWATT_TEAM_CREATORS
    (instance administrators by default, or every user)."""
    return service.create(session, principal=principal, name=body.name)


@router.get("/{team_id}", response_model=TeamRead)
def get_team(team_id: uuid.UUID, principal: UserDep, session: SessionDep) -> TeamRead:
    """A team the caller belongs to, with its member count and the caller's role (404 otherwise)."""
    return service.get(session, principal=principal, team_id=team_id)


@router.patch(
    "/{team_id}",
    response_model=TeamRead,
    responses={409: {"description": "`team_name_taken`: one of the caller's teams has this name"}},
)
def rename_team(team_id: uuid.UUID, body: TeamUpdate, principal: UserDep, session: SessionDep) -> TeamRead:
    """Rename the team (admins)."""
    return service.rename(session, principal=principal, team_id=team_id, name=body.name)


@router.get("/{team_id}/members", response_model=list[MemberRead])
def list_members(team_id: uuid.UUID, principal: UserDep, session: SessionDep) -> list[MemberRead]:
    """Who is in the team, admins first (any member may look)."""
    return service.members(session, principal=principal, team_id=team_id)


@router.patch("/{team_id}/members/{user_id}", response_model=MemberRead, responses=LAST_ADMIN)
def change_member_role(
    team_id: uuid.UUID, user_id: uuid.UUID, body: MemberUpdate, principal: UserDep, session: SessionDep
) -> MemberRead:
    """Change a member's role (admins). Demoting the last admin is a 409 `last_admin`."""
    return service.change_role(session, principal=principal, team_id=team_id, user_id=user_id, role=body.role)


@router.delete("/{team_id}/members/{user_id}", status_code=status.HTTP_204_NO_CONTENT, responses=LAST_ADMIN)
def remove_member(team_id: uuid.UUID, user_id: uuid.UUID, principal: UserDep, session: SessionDep) -> None:
    """Remove a member (admins), or leave: any member may remove themselves. The last admin can do
    neither (409 `last_admin`)."""
    service.remove(session, principal=principal, team_id=team_id, user_id=user_id)
