"""Token rotation end to end (docs/adr/0011): the real agent code against the real server app
(real PostgreSQL and Redis, as in test_real_server.py) with a 10 s token lifetime. The agent
enrols, rotates when half the lifetime is left, keeps working with the new token past the first
token's expiry, and the first token is then refused with 401 token_expired."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent.client import ApiClient
from iowatt_agent.credentials import load_config
from iowatt_agent.loop import AgentLoop, LoopSettings

from backend.config import get_settings
from backend.kit.security import token_hash
from backend.models import Agent
from tests.agent.test_real_server import enroll, server  # noqa: F401 (the fixture)

TTL_S = 10


def _sleep_until(when: datetime) -> None:
    time.sleep(max(0.0, (when - datetime.now(UTC)).total_seconds()))


def _heartbeat(client: Any, agent_id: Any, token: str) -> Any:
    return client.post(
        f"/api/v1/agents/{agent_id}/heartbeat",
        json={"state": "idle"},
        headers={"Authorization": f"Bearer {token}"},
    )


def test_a_short_lived_token_is_rotated_and_the_agent_outlives_it(
    server: dict[str, Any],  # noqa: F811
    session: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(get_settings(), "agent_token_ttl_s", TTL_S)
    state = tmp_path / "state"
    assert enroll(state, server["enrollment_token"], "--name", "lab-1").exit_code == 0
    first = load_config(state)
    assert first.token_expires_at is not None
    assert 0 < (first.token_expires_at - datetime.now(UTC)).total_seconds() <= TTL_S
    loop = AgentLoop(
        first,
        state_dir=state,
        engine=Path("/nonexistent-engine"),  # no run here: only heartbeats and long-polls
        client_factory=lambda: ApiClient(
            "http://testserver", first.agent_token, transport=server["transport"], sleep=lambda s: None
        ),
        settings=LoopSettings(lease_wait_s=0),
        send_inventory=False,
    )
    loop.startup()  # the whole lifetime is left: no rotation yet
    assert load_config(state).agent_token == first.agent_token

    _sleep_until(first.token_expires_at - timedelta(seconds=TTL_S / 2 - 0.5))
    loop.heartbeat_once()  # less than half left: rotates
    second = load_config(state)
    assert second.agent_token != first.agent_token and loop.config.agent_token == second.agent_token
    assert second.token_expires_at is not None and second.token_expires_at > first.token_expires_at
    agent = session.get(Agent, first.agent_id, populate_existing=True)
    assert agent is not None and agent.token_hash == token_hash(second.agent_token)

    assert loop.lease_once() is None  # the worker's client goes on with the new token
    client = server["client"]
    # the new token was used; the first one still works for the short overlap (in-flight requests)
    assert _heartbeat(client, first.agent_id, first.agent_token).status_code == 200

    _sleep_until(first.token_expires_at)  # the behaviour under test: the token's expiry (time passes)
    time.sleep(0.2)  # past it on the server's clock too
    refused = _heartbeat(client, first.agent_id, first.agent_token)
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"] == "token_expired"
    assert "iowatt-agent enroll --replace" in refused.json()["message"]
    loop.heartbeat_once()  # the agent is past its first token's expiry and still accepted
    assert loop.lease_once() is None and loop.fatal is None
    assert load_config(state).agent_token == loop.config.agent_token
