"""All SQL of the comment domain."""

import uuid
from typing import Any, cast

from sqlalchemy import CursorResult, delete, func, or_, select
from sqlalchemy.orm import Session

from backend.models import Comment, User


def get(session: Session, comment_id: uuid.UUID, team_ids: list[uuid.UUID]) -> Comment | None:
    return session.scalar(
        select(Comment).where(Comment.id == comment_id, Comment.team_id.in_(team_ids)).with_for_update()
    )


def author_names(session: Session, user_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not user_ids:
        return {}
    rows = session.execute(select(User.id, User.display_name).where(User.id.in_(user_ids))).tuples()
    return {user_id: name for user_id, name in rows}


def page(
    session: Session,
    *,
    team_ids: list[uuid.UUID],
    target_kind: str,
    target_key: str,
    limit: int,
    offset: int,
) -> tuple[list[Comment], int]:
    """A target's comments in the given teams, oldest first (a thread reads top-down)."""
    conds = (
        Comment.team_id.in_(team_ids),
        Comment.target_kind == target_kind,
        Comment.target_key == target_key,
    )
    rows = session.scalars(
        select(Comment).where(*conds).order_by(Comment.created_at, Comment.id).limit(limit).offset(offset)
    )
    total = session.scalar(select(func.count()).select_from(Comment).where(*conds)) or 0
    return list(rows), total


def delete_for_run(session: Session, team_id: uuid.UUID, run_id: uuid.UUID) -> int:
    """The comments on a run and on every comparison that includes it (such a comparison can no
    longer be opened)."""
    key = str(run_id)
    result = cast(
        "CursorResult[Any]",
        session.execute(
            delete(Comment).where(
                Comment.team_id == team_id,
                or_(
                    (Comment.target_kind == "run") & (Comment.target_key == key),
                    (Comment.target_kind == "comparison") & Comment.target_key.contains(key),
                ),
            )
        ),
    )  # a DELETE's result is a cursor result (SQLAlchemy 2.1 types it as a plain Result)
    return int(result.rowcount or 0)


def delete_for_campaign(session: Session, team_id: uuid.UUID, campaign_id: uuid.UUID) -> int:
    result = cast(
        "CursorResult[Any]",
        session.execute(
            delete(Comment).where(
                Comment.team_id == team_id,
                Comment.target_kind == "campaign",
                Comment.target_key == str(campaign_id),
            )
        ),
    )
    return int(result.rowcount or 0)
