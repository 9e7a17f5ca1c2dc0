import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, status

from backend.auth import account, service
from backend.auth.account_schemas import EmailChange, PasswordChange, PasswordChanged
from backend.auth.deps import SessionDep, UserDep
from backend.auth.schemas import (
    LoginRequest,
    LoginResponse,
    TokenCreate,
    TokenCreated,
    TokenRead,
    UserRead,
)
from backend.kit.http import client_address
from backend.kit.lanes import BULK
from backend.kit.schema import Page

router = APIRouter(prefix="/auth", tags=["auth"], dependencies=[BULK])


@router.post("/login", response_model=LoginResponse)
def login(body: LoginRequest, session: SessionDep, request: Request) -> LoginResponse:
    """A browser session token. Failed logins are throttled per account and per client address
    (429 with Retry-After); an unknown e-mail and a wrong password get the same 401."""
    return service.login(
        session, email=body.email, password=body.password, client=client_address(request.scope)
    )


@router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(principal: UserDep, session: SessionDep) -> None:
    """End the browser session whose token this request carries. Called with a personal API token
    it answers 409 `not_a_session` and changes nothing: revoke such a token with
    `DELETE /auth/tokens/{id}`."""
    service.logout(session, principal=principal)


@router.get("/me", response_model=UserRead)
def me(principal: UserDep, session: SessionDep) -> UserRead:
    return service.me(session, principal=principal)


@router.get("/tokens", response_model=Page[TokenRead])
def list_tokens(
    principal: UserDep,
    session: SessionDep,
    include_inactive: Annotated[
        bool, Query(description="also revoked and expired tokens (default: only usable ones)")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Page[TokenRead]:
    """The caller's own tokens (browser sessions and personal API tokens), newest first; never
    their secrets."""
    rows, total = service.list_tokens(
        session, principal=principal, include_inactive=include_inactive, limit=limit, offset=offset
    )
    return Page[TokenRead](items=[service.token_read(r, principal=principal) for r in rows], total=total)


@router.post("/tokens", response_model=TokenCreated, status_code=status.HTTP_201_CREATED)
def create_token(body: TokenCreate, principal: UserDep, session: SessionDep) -> TokenCreated:
    """A personal API token for scripts and CI; its secret is shown only in this answer. `scope`
    narrows what it may do within the user's roles: `read`, `write` (default) or `upload` (only adds
    results: the token a CI pipeline holds). A token never gets more than the token creating it."""
    raw, row = service.issue_token(
        session,
        user_id=principal.user_id,
        name=body.name,
        kind="personal",
        ttl_s=body.ttl_s,
        scope=body.scope,
    )
    return TokenCreated(id=row.id, name=row.name, scope=row.scope, token=raw, expires_at=row.expires_at)


@router.delete("/tokens/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_token(token_id: uuid.UUID, principal: UserDep, session: SessionDep) -> None:
    """Revoke one of the caller's tokens at once (idempotent); it can never be used again."""
    service.revoke_token(session, principal=principal, token_id=token_id)


CHECKED: dict[int | str, dict[str, Any]] = {
    409: {"description": "`no_password`: the account signs in with single sign-on and has no password"},
    429: {"description": "`login_throttled`: too many wrong passwords (as the login counts them)"},
}


@router.post("/password", response_model=PasswordChanged, responses=CHECKED)
def change_password(
    body: PasswordChange, principal: UserDep, session: SessionDep, request: Request
) -> PasswordChanged:
    """Change the caller's password; the current one is required (a wrong one is a 422 on
    `current_password` and counts as a failed login). Every other browser session of the account
    ends, this one stays; personal API tokens stay (revoke them with `DELETE /auth/tokens/{id}`)."""
    return account.change_password(
        session, principal=principal, body=body, client=client_address(request.scope)
    )


@router.post(
    "/email",
    response_model=UserRead,
    responses={
        **CHECKED,
        409: {"description": "`email_unavailable`: another account uses the address; `no_password`"},
        429: {"description": "`email_change_throttled` (5 an hour) or `login_throttled`"},
    },
)
def change_email(body: EmailChange, principal: UserDep, session: SessionDep, request: Request) -> UserRead:
    """Change the caller's e-mail; the current password is required. The new address is not
    verified until a verification mail sent to it is confirmed (docs/adr/0026); links sent to the
    old address end."""
    return account.change_email(session, principal=principal, body=body, client=client_address(request.scope))
