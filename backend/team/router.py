from fastapi import APIRouter

from backend.auth.deps import SessionDep, UserDep
from backend.auth.schemas import TeamRole
from backend.team import service

router = APIRouter(prefix="/teams", tags=["teams"])


@router.get("", response_model=list[TeamRole])
def list_teams(principal: UserDep, session: SessionDep) -> list[TeamRole]:
    return service.list_teams(session, principal=principal)
