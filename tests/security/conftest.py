"""The matrix's world lives in one transaction per module, rolled back at the end; every request
the matrix makes runs inside a savepoint of its own that is rolled back after the answer, so each
principal meets the same world whatever the previous request did (a revoke, a delete, a cancel)."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from tests.asgi_client import InProcessClient
from tests.security import world as world_mod
from tests.sessions import sessions_on


@dataclass
class Matrix:
    client: TestClient
    session: Session
    world: world_mod.World
    openapi: dict[str, Any]

    @contextmanager
    def isolated(self) -> Iterator[None]:
        sp = self.session.begin_nested()
        self.session.connection()  # emit the SAVEPOINT now: the long-poll writes through its own sessions
        try:
            yield
        finally:
            if sp.is_active:
                sp.rollback()
            self.session.expire_all()


@pytest.fixture(scope="module")
def matrix(engine: Engine) -> Iterator[Matrix]:
    from backend.main import create_app

    conn = engine.connect()
    trans = conn.begin()
    app = create_app()
    try:
        # raise_server_exceptions=False: a 500 is an answer the matrix reports, not a crash of the test
        with sessions_on(app, conn) as session, InProcessClient(app, raise_server_exceptions=False) as client:
            openapi = app.openapi()
            w = world_mod.build(session, client, commit=session.flush, openapi=openapi)
            yield Matrix(client=client, session=session, world=w, openapi=openapi)
    finally:
        trans.rollback()
        conn.close()
