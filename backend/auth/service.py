import uuid
from datetime import timedelta

from sqlalchemy.orm import Session

from backend.agent import token as agent_token
from backend.auth import repository, throttle
from backend.auth.principal import AgentPrincipal, UserPrincipal
from backend.auth.schemas import MAX_TOKEN_TTL_S, LoginResponse, TeamRole, TokenRead, UserRead
from backend.config import get_settings
from backend.errors import Conflict, Invalid, NotFound, TooManyRequests, Unauthorized
from backend.kit.security import (
    AGENT_TOKEN_PREFIX,
    USER_TOKEN_PREFIX,
    burn_password_check,
    hash_password,
    new_token,
    token_hash,
    verify_password,
)
from backend.kit.time import utcnow
from backend.models import ApiToken, Membership, Role, Team, User
from backend.models.team import TOKEN_SCOPES


def create_user(
    session: Session,
    *,
    email: str,
    password: str,
    display_name: str,
    email_verified: bool,
    instance_admin: bool = False,
) -> User:
    """An account with a password. `email_verified`: whether its owner is known to receive mail
    at `email` (an operator's account); an account made from an invitation is not (ADR 0026)."""
    if repository.user_by_email(session, email) is not None:
        raise Conflict(f"a user with email {email} exists", code="email_taken")
    user = User(
        email=email.lower(),
        display_name=display_name,
        password_hash=hash_password(password),
        email_verified_at=utcnow() if email_verified else None,
        is_instance_admin=instance_admin,
    )
    session.add(user)
    session.flush()
    return user


def create_team(session: Session, *, name: str, owner: User) -> Team:
    team = Team(name=name)
    session.add(team)
    session.flush()
    session.add(Membership(user_id=owner.id, team_id=team.id, role=Role.admin))
    session.flush()
    return team


def issue_token(
    session: Session,
    *,
    user_id: uuid.UUID,
    name: str,
    kind: str,
    ttl_s: int | None,
    scope: str = "write",
) -> tuple[str, ApiToken]:
    if ttl_s is not None and not 0 < ttl_s <= max(MAX_TOKEN_TTL_S, get_settings().session_token_ttl_s):
        raise Invalid("ttl_s", f"must be between 1 and {MAX_TOKEN_TTL_S} seconds")
    if scope not in TOKEN_SCOPES:
        raise Invalid("scope", f"must be one of {', '.join(TOKEN_SCOPES)}")
    raw = new_token(USER_TOKEN_PREFIX)
    expires = utcnow() + timedelta(seconds=ttl_s) if ttl_s else None
    row = ApiToken(
        user_id=user_id,
        name=name,
        kind=kind,
        scope=scope,
        token_hash=token_hash(raw),
        expires_at=expires,
    )
    session.add(row)
    session.flush()
    return raw, row


BAD_CREDENTIALS = "wrong email or password"


def login(session: Session, *, email: str, password: str, client: str) -> LoginResponse:
    """A browser session for a correct e-mail and password.

    Failures are counted per account and per client address; past the limit every attempt is a
    429 with Retry-After, checked before any password work. An unknown e-mail, a wrong password
    and an inactive user get the same 401 after the same work (a hash verification)."""
    blocked = throttle.check(email, client)
    if blocked is not None:
        raise TooManyRequests(
            f"too many failed logins from this {blocked.scope}: try again in {blocked.retry_after_s} s",
            retry_after_s=blocked.retry_after_s,
            code="login_throttled",
        )
    user = repository.user_by_email(session, email)
    if user is None or user.password_hash is None:  # unknown, or an account without a password (SSO)
        burn_password_check(password)
        ok, rehash = False, False
    else:
        ok, rehash = verify_password(password, user.password_hash)
    if user is None or not ok or not user.is_active:
        throttle.record_failure(email, client)
        raise Unauthorized(BAD_CREDENTIALS, code="bad_credentials")
    if rehash:  # an scrypt hash from before Argon2id, or older Argon2 parameters
        user.password_hash = hash_password(password)
    throttle.record_success(email, client)
    return browser_session(session, user=user)


def browser_session(session: Session, *, user: User) -> LoginResponse:
    """A new browser session for `user`, answered as every sign-in answers it (a password, an
    accepted invitation, a password reset)."""
    raw, row = issue_token(
        session,
        user_id=user.id,
        name="browser session",
        kind="session",
        ttl_s=get_settings().session_token_ttl_s,
    )
    return LoginResponse(
        access_token=raw, token_type="bearer", expires_at=row.expires_at, user=user_read(session, user=user)
    )


def user_read(session: Session, *, user: User) -> UserRead:
    """The user with their teams and role in each."""
    teams = [TeamRole(id=t.id, name=t.name, role=r) for t, r in repository.teams_of(session, user.id)]
    return UserRead(
        id=user.id,
        email=user.email,
        display_name=user.display_name,
        teams=teams,
        password_set=user.password_hash is not None,
        email_verified=user.email_verified_at is not None,
        is_instance_admin=user.is_instance_admin,
        can_create_teams=may_create_teams(user),
    )


def may_create_teams(user: User) -> bool:
    """IOWATT_TEAM_CREATORS: instance administrators only (the default), or every user."""
    return get_settings().team_creators == "users" or user.is_instance_admin


def me(session: Session, *, principal: UserPrincipal) -> UserRead:
    """GET /auth/me: the caller (a deleted user's token no longer authenticates; 404 all the same)."""
    user = repository.user_by_id(session, principal.user_id)
    if user is None:
        raise NotFound("user not found")
    return user_read(session, user=user)


def logout(session: Session, *, principal: UserPrincipal) -> None:
    """End the browser session this request carries. A personal API token is not ended by a
    logout (a script sharing it would stop silently): that is a 409 saying to revoke it."""
    if principal.token_kind != "session" or principal.token_id is None:
        raise Conflict(
            "logout ends a browser session; this is a personal API token: revoke it with "
            f"DELETE /api/v1/auth/tokens/{principal.token_id}",
            code="not_a_session",
        )
    row = session.get(ApiToken, principal.token_id)
    if row is not None and row.revoked_at is None:
        row.revoked_at = utcnow()


def list_tokens(
    session: Session, *, principal: UserPrincipal, include_inactive: bool, limit: int, offset: int
) -> tuple[list[ApiToken], int]:
    return repository.tokens_of(
        session,
        principal.user_id,
        active_at=None if include_inactive else utcnow(),
        limit=limit,
        offset=offset,
    )


def token_read(row: ApiToken, *, principal: UserPrincipal) -> TokenRead:
    """A listed token; `current` marks the one the caller is using (revoking it signs them out)."""
    fields = ("id", "name", "kind", "scope", "created_at", "expires_at", "last_used_at", "revoked_at")
    return TokenRead.model_validate(
        {**{f: getattr(row, f) for f in fields}, "current": row.id == principal.token_id}
    )


def revoke_token(session: Session, *, principal: UserPrincipal, token_id: uuid.UUID) -> None:
    """Revoke one of the caller's own tokens (idempotent); another user's token is a 404."""
    row = repository.token_of_user(session, token_id, principal.user_id)
    if row is None:
        raise NotFound("token not found")
    if row.revoked_at is None:
        row.revoked_at = utcnow()


def authenticate(session: Session, *, raw_token: str) -> UserPrincipal | AgentPrincipal:
    """Resolve a bearer token; unknown, expired or revoked tokens are 401."""
    digest = token_hash(raw_token)
    now = utcnow()
    if raw_token.startswith(AGENT_TOKEN_PREFIX):  # expiry and rotation: docs/adr/0011
        return agent_token.authenticate(session, raw_token)
    if raw_token.startswith(USER_TOKEN_PREFIX):
        found = repository.token_and_user_active(session, digest)
        row, active, roles, email = found if found is not None else (None, False, {}, None)
        if (
            row is None
            or row.revoked_at is not None
            or (row.expires_at is not None and row.expires_at <= now)
        ):
            raise Unauthorized("unknown, expired or revoked token", code="bad_token")
        if not active:
            raise Unauthorized("this user is deactivated", code="user_inactive")
        if row.last_used_at is None or (now - row.last_used_at).total_seconds() > 60:
            repository.touch_token(session, row.id, now)
        return UserPrincipal(
            user_id=row.user_id,
            roles=roles,
            token_id=row.id,
            token_kind=row.kind,
            scope=row.scope,
            email=email,
        )
    raise Unauthorized("unknown token format", code="bad_token")
