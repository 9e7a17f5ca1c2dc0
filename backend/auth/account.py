"""One's own account: change the password, change the e-mail (Settings → Account).

Both need the account's current password, checked as the login checks it: a wrong one counts as a
failed login of the account and of the client address (ADR 0010), so a stolen session cannot guess
it here faster than at the login. An account without a password (single sign-on) gets one by a reset
link first (409 `no_password`).

- **Password**: every other browser session of the account ends; this one stays (the person stays
  signed in where they changed it). Personal API tokens stay: scripts keep working, and Settings →
  API tokens lists them to revoke.
- **E-mail**: the new address is unproven (ADR 0026: a proof is a mail it received), so single
  sign-on does not link by it until a verification mail is confirmed; pending verification and reset
  links of the old address are void (they name the address they were issued for). An address
  another account uses is refused (409 `email_unavailable`): that tells a signed-in person who knows
  their own password that the address has an account, so an account may try at most
  EMAIL_CHANGES_PER_HOUR changes an hour (429 beyond).
"""

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.auth import repository, throttle
from backend.auth.account_schemas import EmailChange, PasswordChange, PasswordChanged
from backend.auth.principal import UserPrincipal
from backend.auth.schemas import UserRead
from backend.auth.service import user_read
from backend.errors import Conflict, Invalid, NotFound, TooManyRequests
from backend.kit.security import hash_password, verify_password
from backend.kit.time import utcnow
from backend.logs import log
from backend.models import AccountToken, ApiToken, User

EMAIL_CHANGES_PER_HOUR = 5


def _check_password(session: Session, principal: UserPrincipal, password: str, client: str) -> User:
    user = repository.user_by_id(session, principal.user_id)
    if user is None:
        raise NotFound("account not found")
    if user.password_hash is None:
        raise Conflict(
            "this account signs in with single sign-on and has no password: set one with a reset link "
            "(Forgot your password? on the login page) first",
            code="no_password",
        )
    blocked = throttle.check(user.email, client)
    if blocked is not None:
        raise TooManyRequests(
            f"too many wrong passwords from this {blocked.scope}: try again in {blocked.retry_after_s} s",
            retry_after_s=blocked.retry_after_s,
            code="login_throttled",
        )
    ok, _ = verify_password(password, user.password_hash)
    if not ok:
        throttle.record_failure(user.email, client)
        raise Invalid("current_password", "is not this account's password")
    return user


def change_password(
    session: Session, *, principal: UserPrincipal, body: PasswordChange, client: str
) -> PasswordChanged:
    user = _check_password(session, principal, body.current_password, client)
    user.password_hash = hash_password(body.new_password)
    others = [ApiToken.user_id == user.id, ApiToken.kind == "session", ApiToken.revoked_at.is_(None)]
    if principal.token_id is not None:
        others.append(ApiToken.id != principal.token_id)
    done = session.execute(update(ApiToken).where(*others).values(revoked_at=utcnow()))
    ended = int(getattr(done, "rowcount", 0))
    log.info("account.password_changed", user_id=str(user.id), sessions_revoked=ended)
    return PasswordChanged(sessions_revoked=ended)


def change_email(session: Session, *, principal: UserPrincipal, body: EmailChange, client: str) -> UserRead:
    limited = throttle.hit(
        "email-change", str(principal.user_id), limit=EMAIL_CHANGES_PER_HOUR, window_s=3600
    )
    if limited is not None:
        raise TooManyRequests(
            f"too many e-mail changes for this account: try again in {limited.retry_after_s} s",
            retry_after_s=limited.retry_after_s,
            code="email_change_throttled",
        )
    user = _check_password(session, principal, body.current_password, client)
    if body.email == user.email:
        return user_read(session, user=user)
    if repository.user_by_email(session, body.email) is not None:
        raise Conflict("another account uses this address", code="email_unavailable")
    old = user.email
    try:
        with session.begin_nested():  # another account took it meanwhile: the unique constraint says so
            user.email = body.email
            session.flush()
    except IntegrityError:
        raise Conflict("another account uses this address", code="email_unavailable") from None
    user.email_verified_at = None
    session.execute(  # verification and reset links sent to the old address end
        update(AccountToken)
        .where(AccountToken.user_id == user.id, AccountToken.used_at.is_(None))
        .values(used_at=utcnow())
    )
    session.flush()
    log.info("account.email_changed", user_id=str(user.id), old=old, new=user.email)
    return user_read(session, user=user)
