"""Comments on runs, comparisons and campaigns.

A comment belongs to one team (its target's) and names its target by kind and key: a run's or a
campaign's id, or for a comparison the canonical key — its run ids in lower case, sorted, unique,
joined by "," — so the same set of runs finds the same thread whatever the URL's order. The body is
stored exactly as written (plain text or Markdown); the UI renders Markdown without raw HTML, so
nothing in a body ever becomes markup (ADR 0021)."""

import uuid
from typing import Any

from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.campaign import repository as campaign_repo
from backend.comment import repository
from backend.comment.schemas import MAX_COMPARISON_RUNS, CommentCreate, CommentRead, CommentUpdate
from backend.errors import Forbidden, Invalid, NotFound
from backend.kit.time import utcnow
from backend.models import Comment, Role
from backend.run import repository as run_repo

DELETED_AUTHOR = "deleted user"


def _uuid(value: str, field: str) -> uuid.UUID:
    try:
        return uuid.UUID(value.strip())
    except ValueError:
        raise Invalid(field, f"{value.strip()[:60]!r} is not a UUID") from None


def canonical_key(target_kind: str, target_key: str) -> str:
    """The stored key: a UUID in canonical form; for a comparison, its run ids sorted and unique."""
    if target_kind != "comparison":
        return str(_uuid(target_key, "target_key"))
    ids = sorted({str(_uuid(x, "target_key")) for x in target_key.split(",") if x.strip()})
    if not ids:
        raise Invalid("target_key", "a comparison's key lists its run ids, comma-separated")
    if len(ids) > MAX_COMPARISON_RUNS:
        raise Invalid("target_key", f"at most {MAX_COMPARISON_RUNS} runs per comparison")
    return ",".join(ids)


def _target_teams(session: Session, principal: UserPrincipal, target_kind: str, key: str) -> set[uuid.UUID]:
    """The teams the target belongs to, among the caller's; 404 when the caller cannot see it."""
    if target_kind == "run":
        runs = run_repo.by_ids(session, [uuid.UUID(key)], principal.team_ids)
        if not runs:
            raise NotFound("run not found")
        return {runs[0].team_id}
    if target_kind == "campaign":
        c = campaign_repo.get(session, uuid.UUID(key))
        if c is None or c.team_id not in principal.team_ids:
            raise NotFound("campaign not found")
        return {c.team_id}
    ids = [uuid.UUID(x) for x in key.split(",")]
    runs = run_repo.by_ids(session, ids, principal.team_ids)
    missing = sorted(set(key.split(",")) - {str(r.id) for r in runs})
    if missing:
        raise NotFound(f"runs not found: {', '.join(missing)}", detail={"missing": missing})
    return {r.team_id for r in runs}


def to_read(session: Session, comments: list[Comment]) -> list[CommentRead]:
    names = repository.author_names(session, {c.author_id for c in comments if c.author_id is not None})
    return [
        CommentRead(
            id=c.id,
            team_id=c.team_id,
            target_kind=c.target_kind,
            target_key=c.target_key,
            author_id=c.author_id,
            author_name=names.get(c.author_id, DELETED_AUTHOR) if c.author_id else DELETED_AUTHOR,
            body=c.body,
            body_format=c.body_format,
            created_at=c.created_at,
            edited_at=c.edited_at,
        )
        for c in comments
    ]


def page(
    session: Session,
    *,
    principal: UserPrincipal,
    target_kind: str,
    target_key: str,
    limit: int,
    offset: int,
) -> tuple[list[Comment], int]:
    key = canonical_key(target_kind, target_key)
    teams = _target_teams(session, principal, target_kind, key)
    return repository.page(
        session, team_ids=sorted(teams), target_kind=target_kind, target_key=key, limit=limit, offset=offset
    )


def create(session: Session, *, principal: UserPrincipal, body: CommentCreate) -> Comment:
    key = canonical_key(body.target_kind, body.target_key)
    teams = _target_teams(session, principal, body.target_kind, key)
    if body.team_id is not None:
        if body.team_id not in teams:
            raise Invalid("team_id", "the target does not belong to this team")
        team_id = body.team_id
    elif len(teams) == 1:
        team_id = next(iter(teams))
    else:
        raise Invalid(
            "team_id", "the comparison's runs belong to several teams: say which one the comment is for"
        )
    principal.require(team_id, Role.member)
    comment = Comment(
        team_id=team_id,
        target_kind=body.target_kind,
        target_key=key,
        author_id=principal.user_id,
        body=body.body,
        body_format=body.body_format,
    )
    session.add(comment)
    session.flush()
    audit.record(
        session,
        team_id=team_id,
        action="comment.created",
        target_kind="comment",
        target_id=comment.id,
        user_id=principal.user_id,
        details={"on": body.target_kind, "key": key},
    )
    return comment


def _get(session: Session, principal: UserPrincipal, comment_id: uuid.UUID) -> Comment:
    c = repository.get(session, comment_id, principal.team_ids)
    if c is None:
        raise NotFound("comment not found")
    return c


def update(
    session: Session, *, principal: UserPrincipal, comment_id: uuid.UUID, body: CommentUpdate
) -> Comment:
    """Only the author edits a comment (an admin may delete it, not put words in its author's
    mouth), and only while they may still write in its team: an author demoted to viewer keeps
    their words as they are (the role is checked now, as for a new comment)."""
    c = _get(session, principal, comment_id)
    if c.author_id != principal.user_id:
        raise Forbidden("only its author may edit a comment", code="not_author")
    principal.require(c.team_id, Role.member)
    values: dict[str, Any] = body.model_dump(exclude_unset=True)
    for field, value in values.items():
        if value is None:
            raise Invalid(field, "cannot be null")
        setattr(c, field, value)
    if values:
        c.edited_at = utcnow()
    session.flush()
    return c


def delete(session: Session, *, principal: UserPrincipal, comment_id: uuid.UUID) -> None:
    """The author or an admin of the comment's team deletes it."""
    c = _get(session, principal, comment_id)
    if c.author_id != principal.user_id:
        principal.require(c.team_id, Role.admin)
    audit.record(
        session,
        team_id=c.team_id,
        action="comment.deleted",
        target_kind="comment",
        target_id=c.id,
        user_id=principal.user_id,
        details={
            "on": c.target_kind,
            "key": c.target_key,
            "author_id": str(c.author_id) if c.author_id else None,
        },
    )
    session.delete(c)
    session.flush()


def forget_run(session: Session, *, team_id: uuid.UUID, run_id: uuid.UUID) -> int:
    """A deleted run's comments go with it, and those on comparisons that included it."""
    return repository.delete_for_run(session, team_id, run_id)


def forget_campaign(session: Session, *, team_id: uuid.UUID, campaign_id: uuid.UUID) -> int:
    return repository.delete_for_campaign(session, team_id, campaign_id)
