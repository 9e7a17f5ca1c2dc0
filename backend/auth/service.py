import uuid
from datetime import timedelta

from sqlalchemy.orm import Session

from backend.auth import repository
from backend.auth.principal import AgentPrincipal, UserPrincipal
from backend.config import get_settings
from backend.errors import Conflict, Unauthorized
from backend.kit.security import (
    AGENT_TOKEN_PREFIX,
    USER_TOKEN_PREFIX,
    hash_password,
    new_token,
    token_hash,
    verify_password,
)
from backend.kit.time import utcnow
from backend.models import ApiToken, Membership, Role, Team, User


def create_user(session: Session, *, email: str, password: str, display_name: str) -> User:
    if repository.user_by_email(session, email) is not None:
        raise Conflict(f"a user with email {email} exists", code="email_taken")
    user = User(email=email.lower(), display_name=display_name, password_hash=hash_password(password))
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
    session: Session, *, user_id: uuid.UUID, name: str, kind: str, ttl_s: int | None
) -> tuple[str, ApiToken]:
    raw = new_token(USER_TOKEN_PREFIX)
    expires = utcnow() + timedelta(seconds=ttl_s) if ttl_s else None
    row = ApiToken(user_id=user_id, name=name, kind=kind, token_hash=token_hash(raw), expires_at=expires)
    session.add(row)
    session.flush()
    return raw, row


def login(session: Session, *, email: str, password: str) -> tuple[str, ApiToken, User]:
    user = repository.user_by_email(session, email)
    if user is None or not user.is_active or not verify_password(password, user.password_hash):
        raise Unauthorized("wrong email or password", code="bad_credentials")
    raw, row = issue_token(
        session,
        user_id=user.id,
        name="browser session",
        kind="session",
        ttl_s=get_settings().session_token_ttl_s,
    )
    return raw, row, user


def logout(session: Session, *, raw_token: str) -> None:
    row = repository.token_by_hash(session, token_hash(raw_token))
    if row is not None and row.revoked_at is None:
        row.revoked_at = utcnow()


def authenticate(session: Session, *, raw_token: str) -> UserPrincipal | AgentPrincipal:
    """Resolve a bearer token; unknown, expired or revoked tokens are 401."""
    digest = token_hash(raw_token)
    now = utcnow()
    if raw_token.startswith(AGENT_TOKEN_PREFIX):
        agent = repository.agent_by_token_hash(session, digest)
        if agent is None or agent.revoked_at is not None:
            raise Unauthorized("unknown or revoked agent token", code="bad_token")
        return AgentPrincipal(agent_id=agent.id, team_id=agent.team_id)
    if raw_token.startswith(USER_TOKEN_PREFIX):
        row = repository.token_by_hash(session, digest)
        if (
            row is None
            or row.revoked_at is not None
            or (row.expires_at is not None and row.expires_at <= now)
        ):
            raise Unauthorized("unknown, expired or revoked token", code="bad_token")
        if row.last_used_at is None or (now - row.last_used_at).total_seconds() > 60:
            repository.touch_token(session, row.id, now)
        return UserPrincipal(user_id=row.user_id, roles=repository.roles_of(session, row.user_id))
    raise Unauthorized("unknown token format", code="bad_token")
