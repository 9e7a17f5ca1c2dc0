from fastapi import APIRouter

from backend.auth import repository
from backend.auth.deps import SessionDep, UserDep
from backend.auth.schemas import TeamRole

router = APIRouter(prefix="/teams", tags=["teams"])


@router.get("", response_model=list[TeamRole])
def list_teams(principal: UserDep, session: SessionDep) -> list[TeamRole]:
    return [
        TeamRole(id=t.id, name=t.name, role=r) for t, r in repository.teams_of(session, principal.user_id)
    ]
