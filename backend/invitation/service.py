"""Invitations: a one-use, expiring, revocable link that lets a person join a team with a role.

The token is shown once (in the answer that creates it, and in the mail when SMTP is configured);
the server keeps its sha256. Accepting locks the invitation's row, so a link is used exactly once
even when two browsers accept it at the same moment (docs/adr/0019).

An invitation is only as good as its creator's rights: accepting it needs its creator to still be
an admin of the team (as an enrolment token's `replace` does), and a demoted or removed admin's
pending invitations are revoked then (backend/team). An account made by accepting one does not own
its e-mail until its owner proves it (docs/adr/0026): the link may have reached anyone. The preview
says the same whether or not the address has an account, and invitations are limited per creator
and per team (429)."""

import uuid
from datetime import timedelta

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth import repository as auth_repo
from backend.auth import service as auth_service
from backend.auth.principal import UserPrincipal
from backend.auth.schemas import LoginResponse
from backend.config import get_settings
from backend.errors import Conflict, Forbidden, Invalid, NotFound, TooManyRequests, Unauthorized
from backend.invitation import mail, repository
from backend.invitation.errors import InvitationGone
from backend.invitation.schemas import (
    InvitationAccept,
    InvitationCreate,
    InvitationCreated,
    InvitationPreview,
    InvitationRead,
    InvitationState,
)
from backend.kit.security import new_token, token_hash
from backend.kit.time import utcnow
from backend.models import Invitation, Membership, Role, User

INVITATION_TOKEN_PREFIX = "iwi_"


def state_of(inv: Invitation) -> InvitationState:
    if inv.accepted_at is not None:
        return "accepted"
    if inv.revoked_at is not None:
        return "revoked"
    if inv.expires_at <= utcnow():
        return "expired"
    return "pending"


def _read(inv: Invitation, invited_by: str | None) -> InvitationRead:
    return InvitationRead(
        id=inv.id,
        team_id=inv.team_id,
        email=inv.email,
        role=inv.role,
        state=state_of(inv),
        invited_by=invited_by,
        created_at=inv.created_at,
        expires_at=inv.expires_at,
        accepted_at=inv.accepted_at,
        revoked_at=inv.revoked_at,
    )


def url_of(raw: str) -> str:
    return f"{get_settings().public_url.rstrip('/')}/invite/{raw}"


def create(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, body: InvitationCreate
) -> InvitationCreated:
    """An admin invites an e-mail with a role; mailed too when SMTP is configured."""
    principal.require(team_id, Role.admin)
    team = repository.team(session, team_id)
    if team is None:
        raise NotFound("team not found")
    s = get_settings()
    ttl_s = body.ttl_s if body.ttl_s is not None else s.invitation_ttl_s
    if ttl_s > s.invitation_max_ttl_s:
        raise Invalid("ttl_s", f"must be at most {s.invitation_max_ttl_s} seconds")
    existing = auth_repo.user_by_email(session, body.email)
    if existing is not None and team_id in auth_repo.roles_of(session, existing.id):
        raise Conflict(f"{body.email} is already a member of this team", code="already_member")
    _within_limits(session, principal.user_id, team_id)
    raw = new_token(INVITATION_TOKEN_PREFIX)
    inv = Invitation(
        team_id=team_id,
        email=body.email,
        role=body.role,
        token_hash=token_hash(raw),
        created_by=principal.user_id,
        expires_at=utcnow() + timedelta(seconds=ttl_s),
    )
    repository.add(session, inv)
    audit.record(
        session,
        team_id=team_id,
        action="invitation.created",
        target_kind="invitation",
        target_id=inv.id,
        user_id=principal.user_id,
        details={"email": inv.email, "role": inv.role.value},
    )
    inviter = repository.user(session, principal.user_id)
    url = url_of(raw)
    mailed = mail.send_invitation(
        to=inv.email,
        team=team.name,
        inviter=inviter.display_name if inviter is not None else "An admin",
        role=inv.role.value,
        url=url,
        expires_at=inv.expires_at,
    )
    return InvitationCreated(
        id=inv.id, url=url, expires_at=inv.expires_at, email=inv.email, role=inv.role, mailed=mailed
    )


def _within_limits(session: Session, user_id: uuid.UUID, team_id: uuid.UUID) -> None:
    """IOWATT_INVITATIONS_PER_CREATOR_PER_HOUR and _PER_TEAM_PER_DAY: the server's mail is not a
    relay (counted from the invitations themselves, so every API process agrees)."""
    s, now = get_settings(), utcnow()
    if repository.count_since(session, created_by=user_id, since=now - timedelta(hours=1)) >= (
        s.invitations_per_creator_per_hour
    ):
        raise TooManyRequests(
            f"at most {s.invitations_per_creator_per_hour} invitations per hour: try again later",
            retry_after_s=3600,
            code="invitations_throttled",
        )
    if repository.count_since(session, team_id=team_id, since=now - timedelta(days=1)) >= (
        s.invitations_per_team_per_day
    ):
        raise TooManyRequests(
            f"this team made {s.invitations_per_team_per_day} invitations today: try again tomorrow",
            retry_after_s=24 * 3600,
            code="invitations_throttled",
        )


def page(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, limit: int, offset: int
) -> tuple[list[InvitationRead], int]:
    principal.require(team_id, Role.admin)
    rows, total = repository.page(session, team_id, limit=limit, offset=offset)
    return [_read(inv, email) for inv, email in rows], total


def revoke(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, invitation_id: uuid.UUID
) -> None:
    """Revoke a pending (or expired) invitation; again is a no-op; an accepted one is a 409."""
    principal.require(team_id, Role.admin)
    inv = repository.in_team(session, team_id, invitation_id)
    if inv is None:
        raise NotFound("invitation not found")
    if inv.accepted_at is not None:
        raise Conflict(
            "this invitation was already accepted: remove the member instead", code="invitation_used"
        )
    if inv.revoked_at is None:
        inv.revoked_at = utcnow()
        audit.record(
            session,
            team_id=team_id,
            action="invitation.revoked",
            target_kind="invitation",
            target_id=inv.id,
            user_id=principal.user_id,
            details={"email": inv.email, "role": inv.role.value},
        )


def _usable(session: Session, raw: str, *, lock: bool) -> Invitation:
    """The invitation of a token: 404 unknown; 410 used, revoked or expired, saying which."""
    inv = (
        repository.by_hash(session, token_hash(raw), lock=lock)
        if raw.startswith(INVITATION_TOKEN_PREFIX)
        else None
    )
    if inv is None:
        raise NotFound(
            "no such invitation: check that the whole link was copied", code="invitation_not_found"
        )
    state = state_of(inv)
    if state == "pending":
        return inv
    team = repository.team(session, inv.team_id)
    when = {"accepted": inv.accepted_at, "revoked": inv.revoked_at, "expired": inv.expires_at}[state]
    at = f"{when:%Y-%m-%d %H:%M} UTC" if when is not None else ""
    message = {
        "accepted": f"this invitation was already used on {at}: it works once. Sign in instead, "
        "or ask a team admin for a new one",
        "revoked": f"this invitation was revoked on {at}: ask a team admin for a new one",
        "expired": f"this invitation expired on {at}: ask a team admin for a new one",
    }[state]
    raise InvitationGone(
        message,
        code=f"invitation_{'used' if state == 'accepted' else state}",
        detail={
            "state": state,
            "team_name": team.name if team else None,
            "at": when.isoformat() if when else None,
        },
    )


def preview(session: Session, *, raw: str) -> InvitationPreview:
    """GET /invitations/{token}: what the accept page shows, without login."""
    inv = _usable(session, raw, lock=False)
    _creator_still_admin(session, inv)
    team = repository.team(session, inv.team_id)
    assert team is not None  # the invitation's foreign key cascades
    inviter = repository.user(session, inv.created_by)
    return InvitationPreview(
        team_id=team.id,
        team_name=team.name,
        inviter=inviter.display_name if inviter is not None else None,
        email=inv.email,
        role=inv.role,
        state=state_of(inv),
        expires_at=inv.expires_at,
    )


def _creator_still_admin(session: Session, inv: Invitation) -> None:
    """The invitation's creator must still be an admin of the team now (or still exist): an
    invitation never grants what its creator no longer may. Otherwise it is as good as revoked."""
    role = auth_repo.roles_of(session, inv.created_by).get(inv.team_id) if inv.created_by else None
    if role is Role.admin:
        return
    team = repository.team(session, inv.team_id)
    raise InvitationGone(
        "the admin who made this invitation is no longer an admin of the team: "
        "ask a team admin for a new one",
        code="invitation_revoked",
        detail={"state": "revoked", "team_name": team.name if team else None, "at": None},
    )


def revoke_pending_of(session: Session, *, team_id: uuid.UUID, user_id: uuid.UUID, by: uuid.UUID) -> int:
    """Revoke the pending invitations `user_id` made in the team (they were demoted or left);
    recorded in the team's audit log. The number revoked."""
    rows = repository.pending_by_creator(session, team_id=team_id, created_by=user_id)
    now = utcnow()
    for inv in rows:
        inv.revoked_at = now
        audit.record(
            session,
            team_id=team_id,
            action="invitation.revoked",
            target_kind="invitation",
            target_id=inv.id,
            user_id=by,
            details={"email": inv.email, "role": inv.role.value, "reason": "creator no longer admin"},
        )
    session.flush()
    return len(rows)


def _caller_is(session: Session, bearer: str | None, user: User) -> None:
    """An existing account joins only with its own token in the request."""
    if bearer is None:
        raise Unauthorized(
            f"an account for {user.email} exists: sign in as it, then accept the invitation",
            code="sign_in_required",
        )
    principal = auth_service.authenticate(session, raw_token=bearer)
    if not isinstance(principal, UserPrincipal) or principal.user_id != user.id:
        raise Forbidden(
            f"this invitation is for {user.email}: sign in as that account to accept it", code="wrong_account"
        )
    if principal.scope != "write":
        raise Forbidden(
            f"this token's scope is {principal.scope}: it cannot join a team", code=f"scope_{principal.scope}"
        )


def _new_account(session: Session, inv: Invitation, body: InvitationAccept) -> User:
    if not body.display_name:
        raise Invalid("display_name", "is required to create the account")
    if not body.password:
        raise Invalid("password", "is required to create the account (at least 8 characters)")
    try:
        with session.begin_nested():  # another invitation for this e-mail accepted at the same moment
            # whoever holds the link chose this password: the address is not proven (ADR 0026)
            return auth_service.create_user(
                session,
                email=inv.email,
                password=body.password,
                display_name=body.display_name,
                email_verified=False,
            )
    except IntegrityError:
        raise Conflict(
            f"an account for {inv.email} was just created: sign in as it, then accept", code="email_taken"
        ) from None


def accept(session: Session, *, raw: str, body: InvitationAccept, bearer: str | None) -> LoginResponse:
    """Join the team: create the account for the invited e-mail (display name and password), or,
    when that account exists, join it (the request carries its token). One use, atomically.
    Answers a browser session as /auth/login does."""
    inv = _usable(session, raw, lock=True)
    _creator_still_admin(session, inv)
    user = auth_repo.user_by_email(session, inv.email)
    if user is not None:
        _caller_is(session, bearer, user)
        if inv.team_id in auth_repo.roles_of(session, user.id):
            raise Conflict("you are already a member of this team", code="already_member")
        created = False
    else:
        user = _new_account(session, inv, body)
        created = True
    session.add(Membership(user_id=user.id, team_id=inv.team_id, role=inv.role))
    inv.accepted_at, inv.accepted_by = utcnow(), user.id
    session.flush()
    audit.record(
        session,
        team_id=inv.team_id,
        action="invitation.accepted",
        target_kind="invitation",
        target_id=inv.id,
        user_id=user.id,
        details={"email": inv.email, "role": inv.role.value, "account_created": created},
    )
    return auth_service.browser_session(session, user=user)
