from typing import Annotated

from fastapi import APIRouter, Depends, status

from backend.auth import repository, service
from backend.auth.deps import SessionDep, UserDep, get_raw_token
from backend.auth.schemas import LoginRequest, LoginResponse, TeamRole, TokenCreate, TokenCreated, UserRead
from backend.errors import NotFound
from backend.models import User

router = APIRouter(prefix="/auth", tags=["auth"])


def _user_read(session: SessionDep, user: User) -> UserRead:
    teams = [TeamRole(id=t.id, name=t.name, role=r) for t, r in repository.teams_of(session, user.id)]
    return UserRead(id=user.id, email=user.email, display_name=user.display_name, teams=teams)


@router.post("/login", response_model=LoginResponse)
def login(body: LoginRequest, session: SessionDep) -> LoginResponse:
    raw, row, user = service.login(session, email=body.email, password=body.password)
    return LoginResponse(
        access_token=raw, token_type="bearer", expires_at=row.expires_at, user=_user_read(session, user)
    )


@router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(
    principal: UserDep, session: SessionDep, raw_token: Annotated[str, Depends(get_raw_token)]
) -> None:
    """Revoke the token this request carries (the browser's session)."""
    service.logout(session, raw_token=raw_token)


@router.get("/me", response_model=UserRead)
def me(principal: UserDep, session: SessionDep) -> UserRead:
    user = session.get(User, principal.user_id)
    if user is None:
        raise NotFound("user not found")
    return _user_read(session, user)


@router.post("/tokens", response_model=TokenCreated, status_code=status.HTTP_201_CREATED)
def create_token(body: TokenCreate, principal: UserDep, session: SessionDep) -> TokenCreated:
    raw, row = service.issue_token(
        session, user_id=principal.user_id, name=body.name, kind="personal", ttl_s=body.ttl_s
    )
    return TokenCreated(id=row.id, name=row.name, token=raw, expires_at=row.expires_at)
