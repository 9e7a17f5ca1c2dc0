"""The agent rotates its token before it expires (docs/adr/0011), against a fake API that models
the server's rules: a token works until its expiry; after a rotation the previous token works
until the new one is used. Checked: the heartbeat's expiry triggers the rotation (not before half
the lifetime), the new token is on disk before any request carries it, every client switches, a
lost answer or a failed write keeps the old token and the next heartbeat succeeds, an expired
token is fatal with the re-enrol command."""

from __future__ import annotations

import itertools
import json
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from iowatt_agent import heartbeat as heartbeat_module
from iowatt_agent.client import ApiClient
from iowatt_agent.credentials import AgentConfig, load_config, save_config
from iowatt_agent.heartbeat import token_due
from iowatt_agent.loop import AgentLoop, FatalAgentError, LoopSettings
from iowatt_agent.schemas import HeartbeatResponse

from tests.agent.fakes import AGENT_TOKEN, FakeApi, Reply, error

DAY = 24 * 3600.0


class RotatingApi(FakeApi):
    """FakeApi with expiring, rotating agent tokens. `state_dir`: where the agent keeps
    agent.json; every request with a token other than the first is checked against it."""

    def __init__(
        self, state_dir: Path, *, ttl_s: float = 30 * DAY, left_s: float = 30 * DAY, overlap_s: float = 0
    ) -> None:
        super().__init__()
        self.state_dir = state_dir
        self.ttl_s = ttl_s
        self.overlap_s = overlap_s
        self.previous_until: datetime | None = None  # set when the new token is first used
        now = datetime.now(UTC)
        self.expiry: dict[str, datetime] = {AGENT_TOKEN: now + timedelta(seconds=left_s)}
        self.current = AGENT_TOKEN
        self.previous: str | None = None
        self.used: list[str] = []
        self.requests: list[tuple[str, str]] = []  # (path, token) of every accepted request
        self.not_on_disk: list[str] = []
        self._serial = itertools.count(1)

    def _rotate(self, token: str) -> Reply:
        new = f"rotated-{next(self._serial)}"
        self.expiry[new] = datetime.now(UTC) + timedelta(seconds=self.ttl_s)
        if token == self.current:
            self.previous, self.previous_until = token, None
        elif self.current != AGENT_TOKEN:
            self.expiry.pop(self.current, None)  # the unused token of a lost answer
        self.current = new
        return Reply(200, {"agent_token": new, "token_expires_at": self.expiry[new].isoformat()})

    def default(self, method: str, path: str, headers: dict[str, str], body: Any) -> Reply:
        token = headers.get("authorization", "").removeprefix("Bearer ")
        if not path.startswith(("/api/v1/agents/", "/api/v1/runs/")) or path.endswith("/enroll"):
            return super().default(method, path, headers, body)
        if token not in (self.current, self.previous):
            return error(401, "bad_token", "unknown or revoked agent token")
        if (
            token == self.previous
            and self.previous_until is not None
            and self.previous_until <= datetime.now(UTC)
        ):
            self.previous = None
            return error(401, "bad_token", "unknown or revoked agent token")
        if self.expiry[token] <= datetime.now(UTC):
            return error(
                401, "token_expired", "this agent token expired; re-enrol: iowatt-agent enroll --replace"
            )
        if token != AGENT_TOKEN and load_config(self.state_dir).agent_token != token:
            self.not_on_disk.append(token)
        self.used.append(token)
        self.requests.append((path, token))
        if token == self.current and self.previous is not None and self.previous_until is None:
            # the new token was used: the old one ends after the overlap
            self.previous_until = datetime.now(UTC) + timedelta(seconds=self.overlap_s)
        agent = f"/api/v1/agents/{self.agent_id}"
        if path == f"{agent}/token" and method == "POST":
            return self._rotate(token)
        if path == f"{agent}/heartbeat":
            self.heartbeats.append(body)
            return Reply(
                200,
                {
                    "server_time": datetime.now(UTC).isoformat(),
                    "heartbeat_interval_s": 0.2,
                    "token_expires_at": self.expiry[token].isoformat(),
                    "token_ttl_s": self.ttl_s,
                },
            )
        return super().default(method, path, {**headers, "authorization": f"Bearer {AGENT_TOKEN}"}, body)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def _loop(api: RotatingApi, state: Path, fake_engine: Path) -> AgentLoop:
    config = AgentConfig(
        server_url="http://server.test", agent_id=api.agent_id, agent_token=AGENT_TOKEN, name="t"
    )
    save_config(state, config)  # what `enroll` left
    return AgentLoop(
        config,
        state_dir=state,
        engine=fake_engine,
        client_factory=lambda: ApiClient(
            "http://server.test", AGENT_TOKEN, transport=api.transport(), sleep=lambda s: None
        ),
        settings=LoopSettings(),
        send_inventory=False,
    )


def _rotations(api: FakeApi) -> int:
    return len(api.calls_to(r"POST /api/v1/agents/.*/token"))


def test_token_due_at_half_the_lifetime_or_7_days_without_one() -> None:
    now = datetime.now(UTC)

    def ack(left_s: float, ttl_s: float | None) -> HeartbeatResponse:
        return HeartbeatResponse(
            server_time=now,
            heartbeat_interval_s=10,
            token_expires_at=now + timedelta(seconds=left_s),
            token_ttl_s=ttl_s,
        )

    assert not token_due(ack(16 * DAY, 30 * DAY)) and token_due(ack(14 * DAY, 30 * DAY))
    assert not token_due(ack(8 * DAY, None)) and token_due(ack(6 * DAY, None))
    assert token_due(ack(-1, 30 * DAY))
    assert not token_due(HeartbeatResponse(server_time=now, heartbeat_interval_s=10))  # older server


def test_no_rotation_while_more_than_half_the_lifetime_is_left(state: Path, fake_engine: Path) -> None:
    api = RotatingApi(state, left_s=20 * DAY)
    loop = _loop(api, state, fake_engine)
    loop.heartbeat_once()
    assert _rotations(api) == 0 and load_config(state).agent_token == AGENT_TOKEN


def test_rotates_when_the_heartbeat_says_expiry_is_near_stores_it_then_uses_it_everywhere(
    state: Path, fake_engine: Path
) -> None:
    api = RotatingApi(state, left_s=10 * DAY)
    loop = _loop(api, state, fake_engine)
    loop.heartbeat_once()
    assert _rotations(api) == 1
    on_disk = load_config(state)
    assert on_disk.agent_token == api.current == loop.config.agent_token == "rotated-1"
    assert on_disk.token_expires_at == api.expiry["rotated-1"]
    assert (state / "agent.json").stat().st_mode & 0o777 == 0o600
    # every client now sends the new token: heartbeat, lease (worker), spool
    loop.heartbeat_once()
    assert loop.client.lease(api.agent_id, 0) is None
    loop.spool_client.heartbeat(
        api.agent_id, heartbeat_module.HeartbeatRequest(state="idle", current_run_id=None, agent_version="t")
    )
    assert api.used[-3:] == ["rotated-1"] * 3
    assert _rotations(api) == 1  # the new token has its whole lifetime: no second rotation
    assert api.not_on_disk == []


def test_a_lost_answer_keeps_the_old_token_and_the_next_heartbeat_rotates(
    state: Path, fake_engine: Path
) -> None:
    api = RotatingApi(state, left_s=5 * DAY)

    def lost() -> Exception:
        api._rotate(api.current if api.previous is None else api.previous)  # done on the server...
        return httpx.ReadError("connection reset")  # ...but the answer never arrives

    api.script["POST /api/v1/agents/.*/token"] = [lost, lost]  # both attempts of the first try
    loop = _loop(api, state, fake_engine)
    loop.heartbeat_once()
    assert _rotations(api) == 2 and loop.config.agent_token == AGENT_TOKEN
    assert load_config(state).agent_token == AGENT_TOKEN
    # the old token still works; the next heartbeat rotates again, and this answer arrives
    loop.heartbeat_once()
    assert _rotations(api) == 3
    assert load_config(state).agent_token == loop.config.agent_token == api.current == "rotated-3"
    loop.heartbeat_once()
    assert api.used[-1] == "rotated-3" and api.previous_until is not None
    assert "rotated-1" not in api.used and "rotated-2" not in api.used
    assert api.not_on_disk == []


def test_a_failed_write_keeps_the_old_token_and_the_next_heartbeat_retries(
    state: Path, fake_engine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = RotatingApi(state, left_s=5 * DAY)
    loop = _loop(api, state, fake_engine)

    def disk_full(*args: Any, **kwargs: Any) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(heartbeat_module, "save_config", disk_full)
    loop.heartbeat_once()
    assert _rotations(api) == 1 and loop.config.agent_token == AGENT_TOKEN
    assert json.loads((state / "agent.json").read_text())["agent_token"] == AGENT_TOKEN
    loop.heartbeat_once()  # never sent the token it could not store
    assert api.used[-1] == AGENT_TOKEN
    monkeypatch.setattr(heartbeat_module, "save_config", save_config)
    loop.heartbeat_once()
    assert load_config(state).agent_token == loop.config.agent_token == api.current
    loop.heartbeat_once()
    assert api.used[-1] == api.current and api.not_on_disk == []


def test_an_expired_token_is_fatal_and_says_to_re_enrol(state: Path, fake_engine: Path) -> None:
    api = RotatingApi(state, left_s=-1)
    loop = _loop(api, state, fake_engine)
    with pytest.raises(FatalAgentError, match="enroll --replace") as exc:
        loop.startup()
    assert "token_expired" in str(exc.value)
    assert _rotations(api) == 0


def test_the_running_agent_rotates_between_heartbeats_while_it_long_polls(
    state: Path, fake_engine: Path
) -> None:
    """Threads included: the heartbeat thread rotates while the worker long-polls; every client
    moves to the new token, nothing is refused (the server's overlap covers a poll in flight)."""
    api = RotatingApi(state, left_s=20 * DAY, overlap_s=600)
    loop = _loop(api, state, fake_engine)
    loop.settings.lease_wait_s = 0.05
    code: list[int] = []
    t = threading.Thread(target=lambda: code.append(loop.run()))
    t.start()
    try:
        deadline = time.monotonic() + 10
        while len(api.calls_to(r"POST /api/v1/agents/.*/lease")) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _rotations(api) == 0
        api.expiry[AGENT_TOKEN] = datetime.now(UTC) + timedelta(days=1)  # time passes
        while api.used.count("rotated-1") < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        loop.request_drain("test")
        t.join(10)
    assert code == [0] and loop.fatal is None
    assert _rotations(api) == 1 and load_config(state).agent_token == "rotated-1"
    leases = [tok for path, tok in api.requests if path.endswith("/lease")]
    beats = [tok for path, tok in api.requests if path.endswith("/heartbeat")]
    assert leases[-1] == beats[-1] == "rotated-1" and AGENT_TOKEN in leases
    assert api.not_on_disk == []
