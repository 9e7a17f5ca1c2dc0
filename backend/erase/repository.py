"""All SQL of the erase domain: what a team's or an account's deletion must check first."""

import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import ACTIVE_STATUSES, Membership, Role, Run, Team, User


def team(session: Session, team_id: uuid.UUID) -> Team | None:
    return session.scalar(select(Team).where(Team.id == team_id).with_for_update())


def active_runs(session: Session, team_id: uuid.UUID) -> list[str]:
    rows = session.scalars(
        select(Run.id).where(Run.team_id == team_id, Run.status.in_(ACTIVE_STATUSES)).order_by(Run.id)
    )
    return [str(r) for r in rows]


def user(session: Session, user_id: uuid.UUID) -> User | None:
    return session.scalar(select(User).where(User.id == user_id).with_for_update())


def memberships_of(session: Session, user_id: uuid.UUID) -> list[tuple[Team, Role, int, int]]:
    """The user's teams with their role there, the team's member count and admin count. The teams'
    rows are locked, so two admins leaving at once cannot both be "not the last"."""
    mine = list(
        session.execute(
            select(Team, Membership.role)
            .join(Membership, Membership.team_id == Team.id)
            .where(Membership.user_id == user_id)
            .order_by(Team.name)
            .with_for_update(of=Team)
        ).tuples()
    )
    ids = [t.id for t, _ in mine]
    counts = {
        tid: (n, a)
        for tid, n, a in session.execute(
            select(
                Membership.team_id,
                func.count(),
                func.count().filter(Membership.role == Role.admin),
            )
            .where(Membership.team_id.in_(ids))
            .group_by(Membership.team_id)
        ).tuples()
    }
    return [(t, r, *counts.get(t.id, (0, 0))) for t, r in mine]
