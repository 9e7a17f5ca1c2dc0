import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, status
from fastapi.security import HTTPAuthorizationCredentials

from backend.auth.deps import SessionDep, UserDep, bearer
from backend.auth.schemas import LoginResponse
from backend.invitation import service
from backend.invitation.schemas import (
    InvitationAccept,
    InvitationCreate,
    InvitationCreated,
    InvitationPreview,
    InvitationRead,
)
from backend.kit.lanes import BULK
from backend.kit.schema import Page

router = APIRouter(tags=["invitations"], dependencies=[BULK])

Token = Annotated[str, Path(min_length=1, max_length=200, description="the token of the invitation's link")]
GONE: dict[int | str, dict[str, Any]] = {
    410: {"description": "The invitation was used, expired or was revoked (`error` says which)"}
}


@router.post(
    "/teams/{team_id}/invitations",
    response_model=InvitationCreated,
    status_code=status.HTTP_201_CREATED,
    responses={409: {"description": "`already_member`: the e-mail's account is in the team"}},
)
def create_invitation(
    team_id: uuid.UUID, body: InvitationCreate, principal: UserDep, session: SessionDep
) -> InvitationCreated:
    """Invite an e-mail to the team with a role (admins). The answer carries the one-use link,
    shown only here; it is mailed too when the server has SMTP configured (`mailed`)."""
    return service.create(session, principal=principal, team_id=team_id, body=body)


@router.get("/teams/{team_id}/invitations", response_model=Page[InvitationRead])
def list_invitations(
    team_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Page[InvitationRead]:
    """The team's invitations, newest first, each with its state: pending, accepted, revoked or
    expired (admins)."""
    items, total = service.page(session, principal=principal, team_id=team_id, limit=limit, offset=offset)
    return Page[InvitationRead](items=items, total=total)


@router.delete(
    "/teams/{team_id}/invitations/{invitation_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`invitation_used`: accepted already (remove the member instead)"}},
)
def revoke_invitation(
    team_id: uuid.UUID, invitation_id: uuid.UUID, principal: UserDep, session: SessionDep
) -> None:
    """Revoke an invitation (admins): its link answers 410 from now on. Idempotent."""
    service.revoke(session, principal=principal, team_id=team_id, invitation_id=invitation_id)


@router.get("/invitations/{token}", response_model=InvitationPreview, responses=GONE)
def get_invitation(token: Token, session: SessionDep) -> InvitationPreview:
    """No login: the team, the inviter, the role and the e-mail of a usable invitation, for the
    accept page. A used, expired or revoked link is a 410 naming which; an unknown one a 404."""
    return service.preview(session, raw=token)


@router.post(
    "/invitations/{token}/accept",
    response_model=LoginResponse,
    responses={
        **GONE,
        409: {"description": "`already_member`, or `email_taken` (the account was created meanwhile)"},
    },
)
def accept_invitation(
    token: Token,
    body: InvitationAccept,
    session: SessionDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> LoginResponse:
    """No login needed: with a display name and a password, creates the account for the invited
    e-mail and joins the team. If an account with that e-mail exists, the request must carry that
    account's bearer token instead (401 `sign_in_required` without one) and only joins. Answers a
    browser session like /auth/login. One use, atomically."""
    raw_bearer = creds.credentials if creds is not None and creds.scheme.lower() == "bearer" else None
    return service.accept(session, raw=token, body=body, bearer=raw_bearer or None)
