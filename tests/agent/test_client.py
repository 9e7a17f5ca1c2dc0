from __future__ import annotations

import functools
import os
import stat
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from iowatt_agent import cli, enrol
from iowatt_agent.client import (
    ApiClient,
    Conflict,
    PermanentError,
    ServerUnreachable,
    TransientError,
    Unauthorized,
    parse_retry_after,
)
from iowatt_agent.credentials import load_config
from iowatt_agent.schemas import HeartbeatRequest
from typer.testing import CliRunner

from tests.agent.fakes import ENROLL_TOKEN, FakeApi, Reply, error

runner = CliRunner()


def enroll_cli(api: FakeApi, monkeypatch, tmp_path, *args: str, token: str = ENROLL_TOKEN):
    """Enrol against the fake API at a loopback URL, the token in the environment (never argv)."""
    monkeypatch.setattr(
        enrol, "ApiClient", functools.partial(ApiClient, transport=api.transport(), sleep=lambda s: None)
    )
    monkeypatch.setenv("IOWATT_ENROLL_TOKEN", token)
    return runner.invoke(
        cli.app,
        [
            "enroll",
            "--server",
            "http://127.0.0.1:8000/api/v1/",
            "--state-dir",
            str(tmp_path / "state"),
            *args,
        ],
    )


def test_enroll_stores_credentials_private(api, monkeypatch, tmp_path):
    result = enroll_cli(api, monkeypatch, tmp_path, "--name", "box1")
    assert result.exit_code == 0, result.output
    path = tmp_path / "state" / "agent.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    config = load_config(tmp_path / "state")
    assert config.agent_id == api.agent_id and config.agent_token == "agent-token-123"
    assert config.server_url == "http://127.0.0.1:8000"
    body = api.calls_to("POST /api/v1/agents/enroll")[0][2]
    assert body["name"] == "box1" and body["replace"] is False and body["inventory"]["hostname"]


def test_enroll_bad_token_message(api, monkeypatch, tmp_path):
    result = enroll_cli(api, monkeypatch, tmp_path, "--name", "box1", token="wrong")
    assert result.exit_code == 3
    assert "rejected the enrollment token (401)" in result.output
    assert not (tmp_path / "state" / "agent.json").exists()
    assert len(api.calls) == 1  # 401 is permanent: no retry


def test_enroll_name_taken_suggests_replace(api, monkeypatch, tmp_path):
    result = enroll_cli(api, monkeypatch, tmp_path, "--name", "taken")
    assert result.exit_code == 3
    assert "already enrolled" in result.output and "--replace" in result.output
    result = enroll_cli(api, monkeypatch, tmp_path, "--name", "taken", "--replace")
    assert result.exit_code == 0, result.output
    assert api.calls_to("POST /api/v1/agents/enroll")[-1][2]["replace"] is True


def test_enroll_rejects_bad_url(api, monkeypatch, tmp_path):
    monkeypatch.setattr(enrol, "ApiClient", functools.partial(ApiClient, transport=api.transport()))
    result = runner.invoke(
        cli.app,
        ["enroll", "--server", "server:8000", "--state-dir", str(tmp_path)],
        env={"IOWATT_ENROLL_TOKEN": "x"},
    )
    assert result.exit_code == 2 and "http://" in result.output


def hb(client: ApiClient, api: FakeApi):
    return client.heartbeat(
        api.agent_id, HeartbeatRequest(state="idle", current_run_id=None, agent_version="t"), attempts=6
    )


def test_5xx_burst_then_success_backs_off_exponentially(api, make_client, sleeps):
    api.script["POST /api/v1/agents/.*/heartbeat"] = [
        error(500, "boom", "x"),
        error(502, "bad", "x"),
        error(504, "gw", "x"),
    ]
    answer = hb(make_client(rng=lambda: 1.0), api)
    assert answer.heartbeat_interval_s == 0.2
    assert len(api.calls) == 4
    assert sleeps == [0.5, 1.0, 2.0]  # base 0.5 s doubling; rng=1 -> the jitter's top


def test_jitter_keeps_delay_within_half_and_full(api, make_client, sleeps):
    api.script["POST /api/v1/agents/.*/heartbeat"] = [error(500, "boom", "x")] * 3
    hb(make_client(rng=lambda: 0.0), api)
    assert sleeps == [0.25, 0.5, 1.0]


def test_429_retry_after_is_honoured(api, make_client, sleeps):
    api.script["POST /api/v1/agents/.*/heartbeat"] = [
        error(429, "rate_limited", "slow down", {"Retry-After": "7"}),
        error(503, "unavailable", "maintenance", {"Retry-After": "3"}),
    ]
    hb(make_client(), api)
    assert sleeps == [7.0, 3.0]


def test_retry_after_http_date():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after(format_datetime(now + timedelta(seconds=42), usegmt=True), now) == 42.0
    assert parse_retry_after("garbage") is None
    assert parse_retry_after("100000") == 300.0  # capped


def test_retries_give_up_after_max_attempts(api, make_client, sleeps):
    api.script["POST /api/v1/agents/.*/heartbeat"] = [error(500, "boom", "server exploded")] * 10
    with pytest.raises(TransientError) as info:
        hb(make_client(), api)
    assert info.value.status_code == 500 and "server exploded" in str(info.value)
    assert len(api.calls) == 6 and len(sleeps) == 5


def test_connection_errors_are_retried(api, make_client, sleeps):
    api.script["POST /api/v1/agents/.*/heartbeat"] = [
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
    ]
    hb(make_client(), api)
    assert len(sleeps) == 2


def test_server_down_raises_typed_error(api, make_client):
    api.script["POST /api/v1/agents/.*/heartbeat"] = [httpx.ConnectError("refused")] * 10
    with pytest.raises(ServerUnreachable, match="server unreachable: refused"):
        hb(make_client(), api)


@pytest.mark.parametrize(
    ("status", "exc"), [(400, PermanentError), (401, Unauthorized), (409, Conflict), (422, PermanentError)]
)
def test_other_4xx_are_permanent(api, make_client, sleeps, status, exc):
    api.script["POST /api/v1/agents/.*/heartbeat"] = [error(status, "nope", "no")]
    with pytest.raises(exc) as info:
        hb(make_client(), api)
    assert info.value.code == "nope" and info.value.status_code == status
    assert sleeps == [] and len(api.calls) == 1


def test_malformed_answer_is_a_protocol_error(api, make_client):
    api.script["POST /api/v1/agents/.*/heartbeat"] = [Reply(200, {"unexpected": True})]
    with pytest.raises(PermanentError, match="unexpected answer"):
        hb(make_client(), api)


def test_lease_none_and_lease(api, make_client, tmp_path):
    client = make_client()
    assert client.lease(api.agent_id, 1) is None
    lease = api.add_lease({"global": {}, "jobs": [{"name": "a", "rw": "read"}]}, str(tmp_path))
    got = client.lease(api.agent_id, 1)
    assert got is not None and str(got.run_id) == lease["run_id"]
    assert got.engine_job == {"global": {}, "jobs": [{"name": "a", "rw": "read"}]}
    assert api.calls_to(r"POST /api/v1/agents/.*/lease")
    # a file workload's job and a hostile server's extra keys come through whole, for the policy
    pm = {"mode": "postmark", "commands": "run\n", "directory": "/etc"}
    api.add_lease(pm, str(tmp_path))
    got = client.lease(api.agent_id, 1)
    assert got is not None and got.engine_job == pm


def test_enroll_server_unreachable_exits_1(api, monkeypatch, tmp_path):
    api.script["POST /api/v1/agents/enroll"] = [httpx.ConnectError("connection refused")] * 10
    result = enroll_cli(api, monkeypatch, tmp_path, "--name", "box1")
    assert result.exit_code == 1
    assert "cannot reach the server at http://127.0.0.1:8000" in result.output
    assert len(api.calls) == 4  # retried with backoff before giving up


def test_enroll_rejects_an_invalid_name_locally(api, monkeypatch, tmp_path):
    result = enroll_cli(api, monkeypatch, tmp_path, "--name", "bad name!")
    assert result.exit_code == 2 and "not valid" in result.output and api.calls == []


def test_version():
    result = runner.invoke(cli.app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == "iowatt-agent 0.1.0"
