"""Database engine and the request/task unit of work.

One request or one task is one transaction: `get_session` commits when the route returns
without error and rolls back otherwise. Celery tasks queued during the request are outbox rows
of that same transaction, sent after it commits (see `backend.outbox`).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

from backend.config import get_settings
from backend.logs import log


@lru_cache
def get_engine() -> Engine:
    settings = get_settings()
    return create_engine(settings.database_url, pool_pre_ping=True, pool_size=10, max_overflow=20)


@lru_cache
def get_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(), expire_on_commit=False)


@contextmanager
def unit_of_work() -> Iterator[Session]:
    """A transaction for code outside a request (tasks, CLI): commit on success."""
    session = get_sessionmaker()()
    try:
        yield session
        session.commit()
    except BaseException:
        try:
            session.rollback()
        except Exception as exc:  # the original error is the one worth raising
            log.warning("db.rollback_failed", error=str(exc)[:200])
        raise
    finally:
        session.close()


def get_session() -> Iterator[Session]:
    """FastAPI dependency: the request's unit of work (exit code runs before the response)."""
    with unit_of_work() as session:
        yield session


def get_session_factory() -> sessionmaker[Session]:
    """FastAPI dependency for routes that manage short transactions themselves (long-polls)."""
    return get_sessionmaker()
