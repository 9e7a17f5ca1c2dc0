"""What a request runs on the threadpool: the database's work (the session, authentication, the
route), never the checks that only look at the request and its principal (backend/auth/deps.py,
backend/main.py's NUL check): each hop there and back was a share of every request's CPU."""

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
    r = client.get("/api/v1/environments?name=a%00b", headers=u.headers)  # the NUL check still answers
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "name"
    r = client.get("/api/v1/environments", headers=a.headers)  # and the user check
    assert r.status_code == 403 and r.json()["error"] == "user_only"

    for seen in (user_hops, agent_hops):
        assert seen and not [h for h in seen if h.split(".")[0] in checks], seen
    # the session's start and end, authentication, the route and FastAPI's check of its answer
    assert len(user_hops) <= 5, user_hops
