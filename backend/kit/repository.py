"""Domain-agnostic persistence helpers."""

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.errors import Conflict


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
