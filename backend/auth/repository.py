import uuid
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from backend.models import Agent, ApiToken, Membership, Role, Team, User


def user_by_email(session: Session, email: str) -> User | None:
    return session.scalar(select(User).where(User.email == email.lower()))


def token_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    return session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash))


def agent_by_token_hash(session: Session, token_hash: str) -> Agent | None:
    return session.scalar(select(Agent).where(Agent.token_hash == token_hash))


def roles_of(session: Session, user_id: uuid.UUID) -> dict[uuid.UUID, Role]:
    rows = session.execute(select(Membership.team_id, Membership.role).where(Membership.user_id == user_id))
    return {team_id: role for team_id, role in rows}


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
