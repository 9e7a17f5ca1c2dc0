import uuid

from fastapi import APIRouter, Request, status

from backend.auth.deps import SessionDep, UserDep
from backend.erase import service
from backend.erase.schemas import AccountDelete, TeamDelete
from backend.kit.http import client_address
from backend.kit.lanes import BULK

router = APIRouter(tags=["deletion"], dependencies=[BULK])


@router.delete(
    "/teams/{team_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`team_active`: runs of the team are assigned or running"}},
)
def delete_team(team_id: uuid.UUID, body: TeamDelete, principal: UserDep, session: SessionDep) -> None:
    """Delete a team and everything in it (team admins; `confirm_name` must equal the team's name,
    422 otherwise). Export it first: POST /teams/{team_id}/export. Runs still assigned or running:
    409. Its people keep their accounts."""
    service.delete_team(session, principal=principal, team_id=team_id, body=body)


@router.delete(
    "/auth/me",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`last_admin` or `sole_member`: hand over or delete the team first"}},
)
def delete_account(body: AccountDelete, principal: UserDep, session: SessionDep, request: Request) -> None:
    """Delete the caller's own account, confirmed with its password (or its e-mail for an account
        without one). The last admin of a team with other members: 409 (hand over first); the only
        member of a team: 409 (delete the team first). Comments stay, by "deleted user". Wrong passwords
    count towards the login throttle (429 with Retry-After past it)."""
    service.delete_account(session, principal=principal, body=body, client=client_address(request.scope))
