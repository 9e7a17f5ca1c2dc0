"""Domain-agnostic persistence helpers."""

from typing import Any, TypeVar

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.errors import Conflict

T = TypeVar("T")


def add_unique(session: Session, row: object, conflict: Conflict) -> None:
    """Insert a row whose unique constraint may be taken; a clash is the given 409, and the
    request's transaction stays usable (the insert runs in a savepoint)."""
    try:
        with session.begin_nested():
            session.add(row)
            session.flush()
    except IntegrityError as exc:
        raise conflict from exc


def update_unique(session: Session, row: object, values: dict[str, object], conflict: Conflict) -> None:
    """Set attributes on a row whose new values may clash with a unique constraint (a rename):
    a clash is the given 409, and the request's transaction stays usable (savepoint)."""
    try:
        with session.begin_nested():
            for field, value in values.items():
                setattr(row, field, value)
            session.flush()
    except IntegrityError as exc:
        raise conflict from exc


def page_of(
    session: Session,
    model: type[T],
    *where: ColumnElement[bool],
    order_by: tuple[Any, ...],
    limit: int,
    offset: int,
) -> tuple[list[T], int]:
    """A page of `model`'s rows that match `where`, in `order_by`, and how many match."""
    rows = session.scalars(select(model).where(*where).order_by(*order_by).limit(limit).offset(offset))
    total = session.scalar(select(func.count()).select_from(model).where(*where)) or 0
    return list(rows), total
