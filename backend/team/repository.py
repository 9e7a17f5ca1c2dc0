"""The team domain's SQL: teams and their memberships (the rows the auth domain authenticates with)."""

import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import Membership, Role, Team, User


def by_id(session: Session, team_id: uuid.UUID) -> Team | None:
    return session.get(Team, team_id)


def member_count(session: Session, team_id: uuid.UUID) -> int:
    return (
        session.scalar(select(func.count()).select_from(Membership).where(Membership.team_id == team_id)) or 0
    )


def members(session: Session, team_id: uuid.UUID) -> list[tuple[Membership, User]]:
    """A team's members with their accounts: admins first, then by name."""
    rows = session.execute(
        select(Membership, User)
        .join(User, User.id == Membership.user_id)
        .where(Membership.team_id == team_id)
        .order_by(User.display_name, User.email)
    )
    return sorted(((m, u) for m, u in rows), key=lambda mu: -mu[0].role.rank)


def lock_memberships(session: Session, team_id: uuid.UUID) -> list[Membership]:
    """Every membership of the team, locked until the transaction ends: two admins demoting each
    other (or leaving) at the same time take turns, so the second sees the first's change."""
    return list(
        session.scalars(
            select(Membership).where(Membership.team_id == team_id).order_by(Membership.id).with_for_update()
        )
    )


def membership(session: Session, team_id: uuid.UUID, user_id: uuid.UUID) -> Membership | None:
    return session.scalar(
        select(Membership).where(Membership.team_id == team_id, Membership.user_id == user_id)
    )


def add_member(session: Session, *, team_id: uuid.UUID, user_id: uuid.UUID, role: Role) -> Membership:
    row = Membership(team_id=team_id, user_id=user_id, role=role)
    session.add(row)
    session.flush()
    return row
