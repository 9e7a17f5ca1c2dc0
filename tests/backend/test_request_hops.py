"""What a request runs on the threadpool: the database's work (the session's end, authentication,
the route), never the checks that only look at the request and its principal (backend/auth/deps.py,
backend/main.py's NUL check), the session factory of `GET /health` and the long-polls, or the
request session's start (no I/O, backend/db.py): each hop there and back was a share of every
request's CPU."""

import functools
from collections.abc import Callable
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.factories import create_agent, create_user


def _name(func: Callable[..., Any]) -> str:
    while isinstance(func, functools.partial):
        func = func.func
    return getattr(func, "__qualname__", repr(func))


def test_the_requests_checks_run_on_the_event_loop(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    hops: list[str] = []
    run_sync = anyio.to_thread.run_sync

    async def counted(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(_name(func))
        return await run_sync(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    checks = ("_no_nul_in_params", "get_user", "get_uploader", "get_agent", "_user_dep", "_agent_dep")

    assert client.get("/api/v1/environments", headers=u.headers).status_code == 200  # a user's route
    user_hops = list(hops)
    hops.clear()
    hb = {"state": "idle"}
    r = client.post(f"/api/v1/agents/{a.agent.id}/heartbeat", json=hb, headers=a.headers)  # an agent's
    assert r.status_code == 200, r.text
    agent_hops = list(hops)
    hops.clear()
    assert client.get("/api/v1/health").status_code == 200  # a route with a factory, no session
    health_hops = list(hops)
    hops.clear()
    r = client.get("/api/v1/environments?name=a%00b", headers=u.headers)  # the NUL check still answers
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "name"
    r = client.get("/api/v1/environments", headers=a.headers)  # and the user check
    assert r.status_code == 403 and r.json()["error"] == "user_only"

    for seen in (user_hops, agent_hops, health_hops):
        assert seen and not [h for h in seen if h.split(".")[0] in checks], seen
    # the session's start (this test's savepoint: tests/conftest.py) and end, authentication, the
    # route and FastAPI's check of its answer
    assert len(user_hops) <= 5, user_hops
    assert len(health_hops) <= 2, health_hops  # the route and the check of its answer


def test_the_request_session_starts_on_the_event_loop(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """backend.db.get_session itself (the client fixture replaces it with a savepoint of the
    test's transaction): made without a hop, its first statement on the caller's thread, its end
    (commit or rollback, close) one hop; an error in the route is raised after the rollback."""
    from sqlalchemy import text

    from backend.db import get_session

    hops: list[str] = []
    run_sync = anyio.to_thread.run_sync

    async def counted(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(_name(func))
        return await run_sync(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)

    async def requests() -> None:
        ok = get_session()
        s = await anext(ok)
        assert hops == [] and not s.in_transaction()  # no connection taken yet
        assert s.execute(text("SELECT 1")).scalar_one() == 1
        with pytest.raises(StopAsyncIteration):
            await anext(ok)
        assert hops == ["_GeneratorContextManager.__exit__"] and not s.in_transaction()

        hops.clear()
        failing = get_session()
        s = await anext(failing)
        s.execute(text("SELECT 1"))
        with pytest.raises(ValueError, match="the route failed"):
            await failing.athrow(ValueError("the route failed"))
        assert hops == ["_GeneratorContextManager.__exit__"] and not s.in_transaction()

    anyio.run(requests)


def test_the_pool_keeps_its_connections(db_url: str) -> None:
    """Every connection the pool made stays open when given back, up to what a process uses at
    once (REQUEST_SESSIONS + LONGPOLL_THREADS + 2 spare): with pool_size=10, max_overflow=20 the
    ones past the tenth were closed and made again, a new PostgreSQL backend each (bench/load)."""
    from sqlalchemy import text

    from backend.agent.service import LONGPOLL_THREADS
    from backend.db import POOL_CONNECTIONS, REQUEST_SESSIONS, make_engine

    assert REQUEST_SESSIONS + LONGPOLL_THREADS + 2 == POOL_CONNECTIONS
    engine = make_engine(db_url)
    try:

        def backends() -> set[int]:
            conns = [engine.connect() for _ in range(REQUEST_SESSIONS)]
            pids = {c.execute(text("SELECT pg_backend_pid()")).scalar_one() for c in conns}
            for c in conns:
                c.close()
            return pids

        first = backends()
        assert len(first) == REQUEST_SESSIONS
        assert backends() == first  # the same backends again: none closed, none made
        assert engine.pool.checkedin() == REQUEST_SESSIONS
    finally:
        engine.dispose()
