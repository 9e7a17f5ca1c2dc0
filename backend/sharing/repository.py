"""Every query of the sharing domain."""

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session

from backend.environment import topology as env_topology
from backend.models import Environment, Membership, Run, RunStatus, ShareLink, Team, User
from backend.models.review import ReviewCandidate


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


def members_of(session: Session, team_id: uuid.UUID, user_ids: set[uuid.UUID]) -> set[uuid.UUID]:
    """Those of `user_ids` who are members of the team now (any role)."""
    if not user_ids:
        return set()
    rows = session.scalars(
        select(Membership.user_id).where(Membership.team_id == team_id, Membership.user_id.in_(user_ids))
    )
    return set(rows)


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


def runs_matching_environment(
    session: Session, run_ids: list[uuid.UUID], filters: list[tuple[str, str]]
) -> list[uuid.UUID]:
    """Those of `run_ids`, in order, whose recorded environment matches every FIELD:VALUE filter
    (backend/environment/topology.py `matches`, as compare's env= reads it)."""
    q = select(Run.id, Run.environment_snapshot).where(Run.id.in_(run_ids))
    rows = dict(session.execute(q).tuples().all())
    return [r for r in run_ids if r in rows and env_topology.matches(rows[r], filters)]


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


# --- what a cached shared view depends on (backend/sharing/cache.py) ------------------------------

_RUNS_STAMP = text(
    """
    SELECT coalesce(md5(string_agg(concat_ws('|', r.id, r.name, r.status, r.finished_at, d.name, env.name,
                                             rr.upload_id, rp.status, e.computed_at), ','
                                   ORDER BY r.id)), '')
    FROM runs r
    LEFT JOIN devices d ON d.id = r.device_id
    LEFT JOIN environments env ON env.id = r.environment_id
    LEFT JOIN run_results rr ON rr.run_id = r.id
    LEFT JOIN run_power rp ON rp.run_id = r.id
    LEFT JOIN run_energy e ON e.run_id = r.id
    WHERE r.team_id = :team AND (r.id = ANY(:ids) OR r.campaign_id = :campaign)
    """
)


def runs_stamp(
    session: Session, team_id: uuid.UUID, run_ids: list[uuid.UUID], campaign_id: uuid.UUID | None = None
) -> str:
    """A digest of everything of these runs (or of all of a campaign's runs) that a shared view
    shows: names, states, device and environment names, the result, the energy. Indexed look-ups
    of at most a few hundred rows; no figure is computed."""
    return str(
        session.scalar(_RUNS_STAMP, {"team": team_id, "ids": list(run_ids), "campaign": campaign_id}) or ""
    )


def review_stamp(session: Session, review_id: uuid.UUID) -> tuple[str, list[uuid.UUID]]:
    """A digest of the review's row and its candidates' rows, and the runs its candidates link
    when it is undecided (a decided review answers its frozen snapshot: no run matters)."""
    row = session.execute(
        text(
            "SELECT md5(rv::text), (SELECT coalesce(md5(string_agg(c::text, ',' ORDER BY c.id)), '') "
            "FROM review_candidates c WHERE c.review_id = rv.id), rv.decided_snapshot IS NOT NULL "
            "FROM reviews rv WHERE rv.id = :id"
        ),
        {"id": review_id},
    ).one_or_none()
    if row is None:
        return "gone", []
    if row[2]:
        return f"decided:{row[0]}", []
    perf: Sequence[dict[str, Any]] = session.scalars(
        select(ReviewCandidate.performance).where(ReviewCandidate.review_id == review_id)
    ).all()
    runs: set[uuid.UUID] = set()
    for p in perf:
        for rid in [p.get("run_id"), *(p.get("run_ids") or [])]:
            try:
                runs.add(uuid.UUID(str(rid)))
            except ValueError:
                continue
    return f"{row[0]}:{row[1]}", sorted(runs)


def campaign_stamp(session: Session, campaign_id: uuid.UUID) -> str:
    return str(
        session.scalar(text("SELECT md5(c::text) FROM campaigns c WHERE c.id = :id"), {"id": campaign_id})
        or "gone"
    )


def names_stamp(session: Session, team_id: uuid.UUID, user_id: uuid.UUID | None) -> str:
    """The team's name and the sharer's display name, as the view prints them."""
    team = session.scalar(select(Team.name).where(Team.id == team_id)) or ""
    user = session.scalar(select(User.display_name).where(User.id == user_id)) if user_id else None
    return f"{team}|{user or ''}"
