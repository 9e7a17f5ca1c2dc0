"""Who owns an e-mail address (docs/adr/0026).

An account proves its address when its owner shows both halves at once: what the account knows and
what the mailbox receives.

- a verification mail: the link's token, confirmed while signed in as the account (a victim who
  clicks a link a squatter requested is not signed in as the squatter's account, so nothing
  happens);
- a password reset: the mailed token sets a new password, so whoever reads the mail now holds the
  account; every token of the account ends (a squatter is out);
- an instance administrator's reset link, for a server without mail: the administrator vouches by
  choosing whom to hand it to;
- a password given while linking single sign-on (oidc_service), or an account made by SSO.

Tokens are random (256 bits), stored as sha256, expire, work once (the row is locked while used),
and are void once the account's address changes; a new one of the same purpose voids the older.
Mails are limited per account (IOWATT_ACCOUNT_MAIL_PER_HOUR) and anonymous reset requests per
client address, and a reset request answers the same whether or not the address has an account."""

import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from backend.auth import mail, repository, throttle
from backend.auth import service as auth_service
from backend.auth.principal import UserPrincipal
from backend.auth.proof_schemas import AdminUserRead, EmailVerificationSent, ResetLinkCreated
from backend.auth.schemas import LoginResponse
from backend.config import get_settings
from backend.errors import AppError, Conflict, Forbidden, NotFound, TooManyRequests
from backend.kit.security import hash_password, new_token, token_hash
from backend.kit.time import utcnow
from backend.logs import log
from backend.models import AccountToken, ApiToken, Membership, User

ACCOUNT_TOKEN_PREFIX = "iwp_"
RESET_REQUESTS_PER_CLIENT_PER_HOUR = 20
RESET_ANSWER = (
    "if an account uses this address, a link to choose a new password is on its way; "
    "it works once, for an hour"
)


class MailUnavailable(AppError):
    """503: the mail server did not take the mail (try again later)."""

    status_code = 503
    code = "mail_unavailable"


class MailNotConfigured(NotFound):
    """404, as for single sign-on that is not set up: this server offers nothing by mail."""

    code = "mail_not_configured"


class AccountTokenGone(AppError):
    """410: the link is unknown, used, expired, or for another address."""

    status_code = 410
    code = "account_token_gone"


def _no_mail(what: str) -> MailNotConfigured:
    return MailNotConfigured(
        f"this server sends no mail (IOWATT_SMTP_URL is not set), so it cannot {what}: "
        "ask an instance administrator for a reset link"
    )


def prove(user: User) -> None:
    """Record that the account's owner proved its address (now)."""
    if user.email_verified_at is None:
        user.email_verified_at = utcnow()


def _issue(
    session: Session, *, user: User, purpose: str, ttl_s: int, issued_by: uuid.UUID | None
) -> tuple[str, AccountToken]:
    now = utcnow()
    session.execute(  # a new token of a purpose voids the older ones
        update(AccountToken)
        .where(
            AccountToken.user_id == user.id, AccountToken.purpose == purpose, AccountToken.used_at.is_(None)
        )
        .values(used_at=now)
    )
    raw = new_token(ACCOUNT_TOKEN_PREFIX)
    row = AccountToken(
        user_id=user.id,
        purpose=purpose,
        email=user.email,
        token_hash=token_hash(raw),
        issued_by=issued_by,
        expires_at=now + timedelta(seconds=ttl_s),
    )
    session.add(row)
    session.flush()
    return raw, row


def _mails_left(session: Session, user: User) -> int:
    """Mails the account may still be sent this hour (verification and reset requests)."""
    since = utcnow() - timedelta(hours=1)
    sent = session.scalar(
        select(func.count())
        .select_from(AccountToken)
        .where(
            AccountToken.user_id == user.id, AccountToken.issued_by.is_(None), AccountToken.created_at > since
        )
    )
    return get_settings().account_mail_per_hour - (sent or 0)


def _use(session: Session, raw: str, purpose: str) -> tuple[AccountToken, User]:
    """The token's row (locked) and account, if usable; 410 otherwise, saying nothing more."""
    gone = AccountTokenGone(
        "this link is unknown, used, expired or replaced by a newer one: ask for a new one"
    )
    if not raw.startswith(ACCOUNT_TOKEN_PREFIX):
        raise gone
    row = session.scalar(
        select(AccountToken).where(AccountToken.token_hash == token_hash(raw)).with_for_update()
    )
    if row is None or row.purpose != purpose or row.used_at is not None or row.expires_at <= utcnow():
        raise gone
    user = repository.user_by_id(session, row.user_id)
    if user is None or not user.is_active or user.email != row.email:
        raise gone
    return row, user


def _url(page: str, raw: str) -> str:
    return f"{get_settings().public_url.rstrip('/')}/{page}#token={raw}"


# --- e-mail verification -------------------------------------------------------------------------


def send_verification(session: Session, *, principal: UserPrincipal) -> EmailVerificationSent:
    """POST /auth/email-verification: mail the signed-in account a link proving its address."""
    user = repository.user_by_id(session, principal.user_id)
    if user is None:
        raise NotFound("account not found")
    if user.email_verified_at is not None:
        raise Conflict(f"{user.email} is verified already", code="email_verified")
    if not mail.available():
        raise _no_mail("verify an address")
    if _mails_left(session, user) <= 0:
        raise TooManyRequests(
            "this account was sent enough mail this hour: use the last link, or try again later",
            retry_after_s=3600,
            code="mail_throttled",
        )
    s = get_settings()
    raw, row = _issue(
        session, user=user, purpose="verify_email", ttl_s=s.email_verification_ttl_s, issued_by=None
    )
    sent = mail.send(
        to=user.email,
        subject="Verify your e-mail address on iowatt",
        body=(
            f"Someone signed in to the iowatt account of {user.email} at {s.public_url} asked to verify\n"
            "that this address belongs to them. If that was you, open this link while signed in\n"
            f"(it works once, until {row.expires_at:%Y-%m-%d %H:%M} UTC):\n\n"
            f"    {_url('verify-email', raw)}\n\n"
            "If it was not you, do not open it: someone may have made an account with your address.\n"
            f"Take it back by resetting its password at {s.public_url.rstrip('/')}/reset-password\n"
        ),
        what="email_verification",
    )
    if not sent:
        raise MailUnavailable("the mail server did not accept the mail: try again later")
    return EmailVerificationSent(email=user.email, expires_at=row.expires_at)


def confirm_verification(session: Session, *, principal: UserPrincipal, raw: str) -> None:
    """POST /auth/email-verification/confirm: the mailed token, from the account it was sent to."""
    row, user = _use(session, raw, "verify_email")
    if user.id != principal.user_id:
        # the token stays usable: its own account may still confirm it
        raise Forbidden(
            "this link verifies another account's address: sign in as that account", code="wrong_account"
        )
    row.used_at = utcnow()
    prove(user)
    log.info("account.email_verified", user_id=str(user.id), how="mail")


# --- password reset ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mail:
    """A mail to send once the request has committed and answered (the router's background task),
    so a request for a known address takes as long as one for an unknown address."""

    to: str
    subject: str
    body: str
    what: str

    def send(self) -> None:
        mail.send(to=self.to, subject=self.subject, body=self.body, what=self.what)


def request_reset(session: Session, *, email: str, client: str) -> Mail | None:
    """POST /auth/password-reset: a reset link to mail if an active account uses the address. The
    answer is the same either way (the mail goes after the answer); only a server without mail
    (404), a malformed address (422) or a client asking too often (429) answers otherwise, and none
    of these depends on whether the address has an account."""
    if not mail.available():
        raise _no_mail("mail a reset link")
    blocked = throttle.hit("password-reset", client, limit=RESET_REQUESTS_PER_CLIENT_PER_HOUR, window_s=3600)
    if blocked is not None:
        raise TooManyRequests(
            f"too many reset requests from this address: try again in {blocked.retry_after_s} s",
            retry_after_s=blocked.retry_after_s,
            code="reset_throttled",
        )
    user = repository.user_by_email(session, email.strip())
    if user is None or not user.is_active or _mails_left(session, user) <= 0:
        return None
    s = get_settings()
    raw, row = _issue(
        session, user=user, purpose="password_reset", ttl_s=s.password_reset_ttl_s, issued_by=None
    )
    log.info("account.reset_mailed", user_id=str(user.id))
    return Mail(
        to=user.email,
        subject="Choose a new password for iowatt",
        body=(
            f"Someone asked for a new password for the iowatt account of {user.email} at\n"
            f"{s.public_url}. Open this link to choose one (it works once, until\n"
            f"{row.expires_at:%Y-%m-%d %H:%M} UTC); every session of the account then ends:\n\n"
            f"    {_url('reset-password', raw)}\n\n"
            "If you did not ask, ignore this mail: nothing changes.\n"
        ),
        what="password_reset",
    )


def confirm_reset(session: Session, *, raw: str, password: str) -> LoginResponse:
    """POST /auth/password-reset/confirm: set the password; the address is proven; every token of
    the account ends (whoever held it before is out); answers a browser session."""
    row, user = _use(session, raw, "password_reset")
    now = utcnow()
    row.used_at = now
    user.password_hash = hash_password(password)
    prove(user)
    session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    session.execute(  # an older verification link of the account is void too
        update(AccountToken)
        .where(AccountToken.user_id == user.id, AccountToken.used_at.is_(None))
        .values(used_at=now)
    )
    log.info("account.password_reset", user_id=str(user.id), by_admin=row.issued_by is not None)
    return auth_service.browser_session(session, user=user)


# --- instance administrators ---------------------------------------------------------------------


def require_instance_admin(session: Session, principal: UserPrincipal) -> User:
    user = repository.user_by_id(session, principal.user_id)
    if user is None or not user.is_instance_admin:
        raise Forbidden("this needs an instance administrator", code="not_instance_admin")
    return user


def list_users(
    session: Session, *, principal: UserPrincipal, q: str | None, limit: int, offset: int
) -> tuple[list[AdminUserRead], int]:
    """GET /admin/users: accounts whose e-mail or name contains `q`, by e-mail."""
    require_instance_admin(session, principal)
    cond = []
    if q:
        pattern = "%" + q.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        cond.append(
            func.lower(User.email).like(pattern, escape="\\")
            | func.lower(User.display_name).like(pattern, escape="\\")
        )
    teams = (
        select(func.count(Membership.id))
        .where(Membership.user_id == User.id)
        .scalar_subquery()
        .label("teams")
    )
    rows: list[tuple[User, int]] = [
        (u, int(n))
        for u, n in session.execute(
            select(User, teams).where(*cond).order_by(User.email).limit(limit).offset(offset)
        ).tuples()
    ]
    total = session.scalar(select(func.count()).select_from(User).where(*cond)) or 0
    return [
        AdminUserRead(
            id=u.id,
            email=u.email,
            display_name=u.display_name,
            is_active=u.is_active,
            is_instance_admin=u.is_instance_admin,
            email_verified=u.email_verified_at is not None,
            password_set=u.password_hash is not None,
            sso_linked=u.oidc_subject is not None,
            team_count=n,
            created_at=u.created_at,
        )
        for u, n in rows
    ], total


def issue_reset_link(session: Session, *, principal: UserPrincipal, user_id: uuid.UUID) -> ResetLinkCreated:
    """POST /admin/users/{user_id}/reset-link: a one-use link the administrator hands to the
    account's owner (over a channel they trust): whoever uses it sets the password and owns the
    address; the account's sessions and tokens end then, not now."""
    admin = require_instance_admin(session, principal)
    user = repository.user_by_id(session, user_id)
    if user is None:
        raise NotFound("account not found")
    if not user.is_active:
        raise Conflict("this account is deactivated", code="account_inactive")
    raw, row = _issue(
        session,
        user=user,
        purpose="password_reset",
        ttl_s=get_settings().admin_reset_link_ttl_s,
        issued_by=admin.id,
    )
    log.info("account.reset_link_issued", user_id=str(user.id), by=str(admin.id))
    return ResetLinkCreated(url=_url("reset-password", raw), expires_at=row.expires_at)
