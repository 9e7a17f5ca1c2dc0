"""Proving an e-mail address, resetting a password, and the instance administrator's account
actions (docs/adr/0026). The links the server mails or an administrator hands over open the SPA's
/verify-email and /reset-password pages with the token in the fragment (never in a server log)."""

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Query, Request, status

from backend.auth import proof
from backend.auth.deps import SessionDep, UserDep
from backend.auth.proof_schemas import (
    AdminUserRead,
    EmailVerificationSent,
    PasswordResetConfirm,
    PasswordResetRequest,
    PasswordResetRequested,
    ResetLinkCreated,
    TokenConfirm,
)
from backend.auth.schemas import LoginResponse
from backend.kit.http import client_address
from backend.kit.lanes import BULK
from backend.kit.schema import Page

router = APIRouter(tags=["auth"], dependencies=[BULK])

NO_MAIL: dict[int | str, dict[str, Any]] = {
    404: {"description": "`mail_not_configured`: this server sends no mail (IOWATT_SMTP_URL)"},
    503: {"description": "`mail_unavailable`: the mail server did not take the mail"},
}
GONE: dict[int | str, dict[str, Any]] = {
    410: {"description": "`account_token_gone`: the link is unknown, used, expired or replaced"}
}


@router.post(
    "/auth/email-verification",
    response_model=EmailVerificationSent,
    status_code=status.HTTP_202_ACCEPTED,
    responses={**NO_MAIL, 409: {"description": "`email_verified`: the address is proven already"}},
)
def send_email_verification(principal: UserDep, session: SessionDep) -> EmailVerificationSent:
    """Mail the caller's address a one-use link (24 h) that proves it when opened while signed in as
    this account. At most IOWATT_ACCOUNT_MAIL_PER_HOUR mails per account (429 beyond)."""
    return proof.send_verification(session, principal=principal)


@router.post("/auth/email-verification/confirm", status_code=status.HTTP_204_NO_CONTENT, responses=GONE)
def confirm_email_verification(body: TokenConfirm, principal: UserDep, session: SessionDep) -> None:
    """Prove the caller's address with the mailed token. A token mailed to another account is a
    403 `wrong_account` and stays usable by its own account."""
    proof.confirm_verification(session, principal=principal, raw=body.token)


@router.post(
    "/auth/password-reset",
    response_model=PasswordResetRequested,
    status_code=status.HTTP_202_ACCEPTED,
    responses=NO_MAIL,
)
def request_password_reset(
    body: PasswordResetRequest, session: SessionDep, request: Request, background: BackgroundTasks
) -> PasswordResetRequested:
    """No login: mail a one-use reset link (1 h) if an account uses the address. The answer is the
    same whether or not one does, and comes as fast (the mail is sent after it). Limited per client
    address (429) and per account (silently)."""
    pending = proof.request_reset(session, email=body.email, client=client_address(request.scope))
    if pending is not None:  # after the commit and the answer (FastAPI runs it last)
        background.add_task(pending.send)
    return PasswordResetRequested(message=proof.RESET_ANSWER)


@router.post("/auth/password-reset/confirm", response_model=LoginResponse, responses=GONE)
def confirm_password_reset(body: PasswordResetConfirm, session: SessionDep) -> LoginResponse:
    """No login: set a new password with a mailed token or an administrator's reset link. The
    address is proven from now on, every session and API token of the account ends, and the answer
    is a new browser session, as /auth/login answers."""
    return proof.confirm_reset(session, raw=body.token, password=body.password)


@router.get("/admin/users", response_model=Page[AdminUserRead], tags=["admin"])
def list_users(
    principal: UserDep,
    session: SessionDep,
    q: Annotated[str | None, Query(max_length=320, description="part of an e-mail or a name")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Page[AdminUserRead]:
    """The server's accounts, by e-mail (instance administrators only)."""
    items, total = proof.list_users(session, principal=principal, q=q, limit=limit, offset=offset)
    return Page[AdminUserRead](items=items, total=total)


@router.post(
    "/admin/users/{user_id}/reset-link",
    response_model=ResetLinkCreated,
    status_code=status.HTTP_201_CREATED,
    tags=["admin"],
    responses={409: {"description": "`account_inactive`: the account is deactivated"}},
)
def issue_reset_link(user_id: uuid.UUID, principal: UserDep, session: SessionDep) -> ResetLinkCreated:
    """A one-use password reset link for an account (instance administrators only), shown only
    here: hand it to the address's real owner. Whoever opens it chooses the password and owns the
    address; the account's sessions end then. A newer link voids an older one."""
    return proof.issue_reset_link(session, principal=principal, user_id=user_id)
