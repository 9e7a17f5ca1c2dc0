import uuid
from typing import Annotated

from fastapi import APIRouter, Query, status

from backend.auth.deps import SessionDep, UserDep
from backend.comment import service
from backend.comment.schemas import CommentCreate, CommentRead, CommentUpdate, TargetKind
from backend.kit.lanes import BULK
from backend.kit.schema import Page

router = APIRouter(prefix="/comments", tags=["comments"], dependencies=[BULK])


@router.get("", response_model=Page[CommentRead])
def list_comments(
    principal: UserDep,
    session: SessionDep,
    target_kind: TargetKind,
    target_key: Annotated[
        str,
        Query(
            min_length=1,
            max_length=2000,
            description="a run's or campaign's id; a comparison's run ids, comma-separated, any order",
        ),
    ],
    limit: Annotated[int, Query(ge=1, le=500)] = 200,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Page[CommentRead]:
    """A target's comments, oldest first (any role of the target's team)."""
    rows, total = service.page(
        session,
        principal=principal,
        target_kind=target_kind,
        target_key=target_key,
        limit=limit,
        offset=offset,
    )
    return Page[CommentRead](items=service.to_read(session, rows), total=total)


@router.post("", response_model=CommentRead, status_code=status.HTTP_201_CREATED)
def create_comment(body: CommentCreate, principal: UserDep, session: SessionDep) -> CommentRead:
    """Comment on a run, a comparison or a campaign (members and admins)."""
    return service.to_read(session, [service.create(session, principal=principal, body=body)])[0]


@router.patch("/{comment_id}", response_model=CommentRead)
def update_comment(
    comment_id: uuid.UUID, body: CommentUpdate, principal: UserDep, session: SessionDep
) -> CommentRead:
    """Edit a comment: its author only."""
    c = service.update(session, principal=principal, comment_id=comment_id, body=body)
    return service.to_read(session, [c])[0]


@router.delete("/{comment_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_comment(comment_id: uuid.UUID, principal: UserDep, session: SessionDep) -> None:
    """Delete a comment: its author, or an admin of its team."""
    service.delete(session, principal=principal, comment_id=comment_id)
