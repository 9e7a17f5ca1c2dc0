import uuid
from datetime import datetime

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from backend.models import ApiToken, Membership, Role, Team, User


def user_by_id(session: Session, user_id: uuid.UUID) -> User | None:
    return session.get(User, user_id)


def user_by_email(session: Session, email: str) -> User | None:
    return session.scalar(select(User).where(User.email == email.lower()))


def token_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    return session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash))


def token_and_user_active(
    session: Session, token_hash: str
) -> tuple[ApiToken, bool, dict[uuid.UUID, Role], str] | None:
    """A user token by its hash with its owner's `is_active`, role per team (as `roles_of`) and
    e-mail, in one query: every authenticated request asks this, and a second round trip for the
    roles was about a tenth of a simple request's CPU (the e-mail: the audit log's label of what the
    request records, which read the user's row again)."""
    roles = (
        select(func.json_object_agg(Membership.team_id, Membership.role))
        .where(Membership.user_id == ApiToken.user_id)
        .scalar_subquery()
    )
    row = session.execute(
        select(ApiToken, User.is_active, roles, User.email)
        .join(User, User.id == ApiToken.user_id)
        .where(ApiToken.token_hash == token_hash)
    ).first()
    if row is None:
        return None
    # the role column holds the enum's names (SQLAlchemy's Enum), as roles_of reads them
    roles_by_team = {uuid.UUID(team): Role[role] for team, role in (row[2] or {}).items()}
    return row[0], bool(row[1]), roles_by_team, row[3]


def tokens_of(
    session: Session, user_id: uuid.UUID, *, active_at: datetime | None, limit: int, offset: int
) -> tuple[list[ApiToken], int]:
    """A user's tokens, newest first; with active_at, only those neither revoked nor expired then."""
    cond = [ApiToken.user_id == user_id]
    if active_at is not None:
        cond += [
            ApiToken.revoked_at.is_(None),
            or_(ApiToken.expires_at.is_(None), ApiToken.expires_at > active_at),
        ]
    rows = list(
        session.scalars(
            select(ApiToken)
            .where(*cond)
            .order_by(ApiToken.created_at.desc(), ApiToken.id)
            .limit(limit)
            .offset(offset)
        )
    )
    total = session.scalar(select(func.count()).select_from(ApiToken).where(*cond)) or 0
    return rows, total


def token_of_user(session: Session, token_id: uuid.UUID, user_id: uuid.UUID) -> ApiToken | None:
    return session.scalar(select(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user_id))


def roles_of(session: Session, user_id: uuid.UUID, *, active_only: bool = False) -> dict[uuid.UUID, Role]:
    """The user's role per team; `active_only`: none when the account is deactivated (a schedule
    acting as the member who made it)."""
    q = select(Membership.team_id, Membership.role).where(Membership.user_id == user_id)
    if active_only:
        q = q.join(User, User.id == Membership.user_id).where(User.is_active)
    return {team_id: role for team_id, role in session.execute(q)}


def teams_of(session: Session, user_id: uuid.UUID) -> list[tuple[Team, Role]]:
    rows = session.execute(
        select(Team, Membership.role)
        .join(Membership, Membership.team_id == Team.id)
        .where(Membership.user_id == user_id)
        .order_by(Team.name)
    )
    return [(team, role) for team, role in rows]


def touch_token(session: Session, token_id: uuid.UUID, when: datetime) -> None:
    session.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=when))
