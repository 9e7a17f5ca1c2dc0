"""An in-process app's requests inside a test's own transaction: for the tests that serve the app
from a database of their own (the authorization matrix's world, a restored backup)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from fastapi import FastAPI
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, sessionmaker


@contextlib.contextmanager
def sessions_on(app: FastAPI, conn: Connection) -> Iterator[Session]:
    """`app`'s request sessions and session factory on `conn` (a connection in the test's
    transaction, rolled back by the caller): each request is a savepoint of it, so a failing request
    rolls back its own writes, as a real one would, and not the test's. Yields the session the
    requests share (the test's fixtures go through it too); the overrides go at the end."""
    from backend.db import get_session, get_session_factory

    session = Session(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)

    def _session() -> Iterator[Session]:
        nested = session.begin_nested()
        try:
            yield session
            nested.commit()
        except BaseException:
            nested.rollback()
            raise

    factory = sessionmaker(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
    app.dependency_overrides[get_session] = _session
    app.dependency_overrides[get_session_factory] = lambda: factory
    try:
        yield session
    finally:
        app.dependency_overrides.pop(get_session, None)
        app.dependency_overrides.pop(get_session_factory, None)
        session.close()
