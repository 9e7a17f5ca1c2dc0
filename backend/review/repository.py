"""All SQL of the review domain."""

import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import User
from backend.models.review import Review, ReviewCandidate, ReviewComment


def get(
    session: Session, review_id: uuid.UUID, team_ids: list[uuid.UUID], *, lock: bool = False
) -> Review | None:
    q = select(Review).where(Review.id == review_id, Review.team_id.in_(team_ids))
    if lock:
        q = q.with_for_update()
    return session.scalar(q)


def page(
    session: Session, team_ids: list[uuid.UUID], *, limit: int, offset: int
) -> tuple[list[tuple[Review, int]], int]:
    counts = (
        select(ReviewCandidate.review_id, func.count().label("n"))
        .group_by(ReviewCandidate.review_id)
        .subquery()
    )
    q = (
        select(Review, func.coalesce(counts.c.n, 0))
        .outerjoin(counts, counts.c.review_id == Review.id)
        .where(Review.team_id.in_(team_ids))
        .order_by(Review.created_at.desc(), Review.id)
        .limit(limit)
        .offset(offset)
    )
    total = session.scalar(select(func.count()).select_from(Review).where(Review.team_id.in_(team_ids))) or 0
    return [(r, int(n)) for r, n in session.execute(q).all()], total


def candidates(session: Session, review_id: uuid.UUID) -> list[ReviewCandidate]:
    return list(
        session.scalars(
            select(ReviewCandidate)
            .where(ReviewCandidate.review_id == review_id)
            .order_by(ReviewCandidate.position, ReviewCandidate.created_at)
        )
    )


def candidate(session: Session, review_id: uuid.UUID, candidate_id: uuid.UUID) -> ReviewCandidate | None:
    return session.scalar(
        select(ReviewCandidate).where(
            ReviewCandidate.review_id == review_id, ReviewCandidate.id == candidate_id
        )
    )


def next_position(session: Session, review_id: uuid.UUID) -> int:
    top = session.scalar(
        select(func.max(ReviewCandidate.position)).where(ReviewCandidate.review_id == review_id)
    )
    return 0 if top is None else top + 1


def comments(
    session: Session, review_id: uuid.UUID, *, limit: int, offset: int
) -> tuple[list[ReviewComment], int]:
    """One page of the review's comments, oldest first (ties by id, so pages never overlap), and
    how many the review has."""
    where = ReviewComment.review_id == review_id
    total = session.scalar(select(func.count()).select_from(ReviewComment).where(where)) or 0
    rows = session.scalars(
        select(ReviewComment)
        .where(where)
        .order_by(ReviewComment.created_at, ReviewComment.id)
        .limit(limit)
        .offset(offset)
    )
    return list(rows), total


def comment(session: Session, comment_id: uuid.UUID) -> ReviewComment | None:
    return session.get(ReviewComment, comment_id)


def latest_comments(session: Session, review_id: uuid.UUID, limit: int) -> tuple[list[ReviewComment], int]:
    """The newest `limit` comments, oldest first, and how many the review has."""
    where = ReviewComment.review_id == review_id
    total = session.scalar(select(func.count()).select_from(ReviewComment).where(where)) or 0
    rows = session.scalars(
        select(ReviewComment)
        .where(where)
        .order_by(ReviewComment.created_at.desc(), ReviewComment.id.desc())
        .limit(limit)
    )
    return list(rows)[::-1], total


def names(session: Session, user_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not user_ids:
        return {}
    return dict(session.execute(select(User.id, User.display_name).where(User.id.in_(user_ids))).all())  # type: ignore[arg-type]


def max_version(session: Session, review_ids: list[uuid.UUID]) -> int:
    return session.scalar(select(func.max(Review.version)).where(Review.id.in_(review_ids))) or 1


def add(session: Session, obj: Review | ReviewCandidate | ReviewComment) -> None:
    session.add(obj)
    session.flush()
