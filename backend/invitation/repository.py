import uuid
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.kit.time import utcnow
from backend.models import Invitation, Team, User


def add(session: Session, row: Invitation) -> None:
    session.add(row)
    session.flush()


def by_hash(session: Session, token_hash: str, *, lock: bool = False) -> Invitation | None:
    q = select(Invitation).where(Invitation.token_hash == token_hash)
    if lock:  # one use: a second accept waits here, then sees the first one's accepted_at
        q = q.with_for_update()
    return session.scalar(q)


def in_team(session: Session, team_id: uuid.UUID, invitation_id: uuid.UUID) -> Invitation | None:
    return session.scalar(
        select(Invitation)
        .where(Invitation.id == invitation_id, Invitation.team_id == team_id)
        .with_for_update()
    )


def page(
    session: Session, team_id: uuid.UUID, *, limit: int, offset: int
) -> tuple[list[tuple[Invitation, str | None]], int]:
    """A team's invitations with the inviter's e-mail, newest first."""
    rows = session.execute(
        select(Invitation, User.email)
        .outerjoin(User, User.id == Invitation.created_by)
        .where(Invitation.team_id == team_id)
        .order_by(Invitation.created_at.desc(), Invitation.id)
        .limit(limit)
        .offset(offset)
    )
    total = session.scalar(select(func.count()).select_from(Invitation).where(Invitation.team_id == team_id))
    return [(inv, email) for inv, email in rows], total or 0


def team(session: Session, team_id: uuid.UUID) -> Team | None:
    return session.get(Team, team_id)


def user(session: Session, user_id: uuid.UUID | None) -> User | None:
    return session.get(User, user_id) if user_id is not None else None


def count_since(
    session: Session,
    *,
    since: datetime,
    created_by: uuid.UUID | None = None,
    team_id: uuid.UUID | None = None,
) -> int:
    """Invitations made since `since` by a creator, or in a team."""
    q = select(func.count()).select_from(Invitation).where(Invitation.created_at > since)
    if created_by is not None:
        q = q.where(Invitation.created_by == created_by)
    if team_id is not None:
        q = q.where(Invitation.team_id == team_id)
    return session.scalar(q) or 0


def pending_by_creator(session: Session, *, team_id: uuid.UUID, created_by: uuid.UUID) -> list[Invitation]:
    """The usable invitations a user made in a team, locked."""
    return list(
        session.scalars(
            select(Invitation)
            .where(
                Invitation.team_id == team_id,
                Invitation.created_by == created_by,
                Invitation.accepted_at.is_(None),
                Invitation.revoked_at.is_(None),
                Invitation.expires_at > utcnow(),
            )
            .with_for_update()
        )
    )
