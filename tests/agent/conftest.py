from __future__ import annotations

import logging
from pathlib import Path

import pytest
from iowatt_agent.client import ApiClient, RetryPolicy
from iowatt_agent.credentials import AgentConfig

from tests.agent.fakes import AGENT_TOKEN, FakeApi, write_fake_engine


@pytest.fixture
def api() -> FakeApi:
    return FakeApi()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_client(api: FakeApi, sleeps: list[float]):
    def factory(token: str | None = AGENT_TOKEN, **kwargs) -> ApiClient:
        kwargs.setdefault("retry", RetryPolicy(max_attempts=6, base_s=0.5, max_s=30.0))
        return ApiClient(
            "http://server.test", token, transport=api.transport(), sleep=sleeps.append, **kwargs
        )

    return factory


@pytest.fixture
def fake_engine(tmp_path: Path) -> Path:
    return write_fake_engine(tmp_path)


@pytest.fixture
def agent_config(api: FakeApi) -> AgentConfig:
    return AgentConfig(
        server_url="http://server.test",
        agent_id=api.agent_id,
        agent_token=AGENT_TOKEN,
        name="t",
        heartbeat_interval_s=0.2,
    )


@pytest.fixture
def agent_log(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> pytest.LogCaptureFixture:
    """caplog that sees the agent's log lines also after a `run` command in an earlier test set
    up its own handler (setup_logging stops propagation to the root logger)."""
    logger = logging.getLogger("iowatt_agent")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "propagate", True)
    caplog.set_level(logging.INFO, logger="iowatt_agent")
    return caplog
