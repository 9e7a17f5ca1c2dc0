"""Every query of the sharing domain."""

import uuid
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from backend.models import Environment, Run, RunStatus, ShareLink, Team, User


def add(session: Session, link: ShareLink) -> None:
    session.add(link)
    session.flush()


def get(session: Session, link_id: uuid.UUID, *, lock: bool = False) -> ShareLink | None:
    q = select(ShareLink).where(ShareLink.id == link_id)
    if lock:
        q = q.with_for_update()
    return session.scalars(q).one_or_none()


def by_token_hash(session: Session, token_hash: str) -> ShareLink | None:
    return session.scalars(select(ShareLink).where(ShareLink.token_hash == token_hash)).one_or_none()


def count_view(session: Session, link_id: uuid.UUID, at: datetime) -> None:
    """One more view, counted in the database (two concurrent opens both count)."""
    session.execute(
        update(ShareLink)
        .where(ShareLink.id == link_id)
        .values(views=ShareLink.views + 1, last_viewed_at=at)
        .execution_options(synchronize_session=False)
    )


def page(session: Session, team_id: uuid.UUID, *, limit: int, offset: int) -> tuple[list[ShareLink], int]:
    where = ShareLink.team_id == team_id
    total = session.scalar(select(func.count()).select_from(ShareLink).where(where)) or 0
    rows = session.scalars(
        select(ShareLink)
        .where(where)
        .order_by(ShareLink.created_at.desc(), ShareLink.id)
        .limit(limit)
        .offset(offset)
    )
    return list(rows), total


def user_names(session: Session, user_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not user_ids:
        return {}
    return dict(
        session.execute(select(User.id, User.display_name).where(User.id.in_(user_ids))).tuples().all()
    )


def team_name(session: Session, team_id: uuid.UUID) -> str:
    return session.scalar(select(Team.name).where(Team.id == team_id)) or ""


def runs_in_teams(
    session: Session, run_ids: list[uuid.UUID], team_ids: list[uuid.UUID]
) -> dict[uuid.UUID, uuid.UUID]:
    """run id -> team id for those of `run_ids` that exist in `team_ids`."""
    if not run_ids or not team_ids:
        return {}
    rows = session.execute(select(Run.id, Run.team_id).where(Run.id.in_(run_ids), Run.team_id.in_(team_ids)))
    return dict(rows.tuples().all())


def runs_team(session: Session, run_id: uuid.UUID) -> uuid.UUID | None:
    return session.scalar(select(Run.team_id).where(Run.id == run_id))


def environment_names(session: Session, env_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not env_ids:
        return {}
    return dict(
        session.execute(select(Environment.id, Environment.name).where(Environment.id.in_(env_ids)))
        .tuples()
        .all()
    )


def succeeded_runs_of_campaign(session: Session, campaign_id: uuid.UUID) -> list[uuid.UUID]:
    rows = session.scalars(
        select(Run.id)
        .where(Run.campaign_id == campaign_id, Run.status == RunStatus.succeeded)
        .order_by(Run.created_at, Run.id)
    )
    return list(rows)
