"""`iowatt-agent run` as a real process against a real (stdlib) HTTP server: SIGTERM drains."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from iowatt_agent.credentials import AgentConfig, save_config

from tests.agent.fakes import AGENT_TOKEN, FakeApi, allow_targets


@pytest.fixture
def served(api: FakeApi):
    server, url = api.serve()
    yield url
    server.shutdown()


def start_agent(
    api: FakeApi, url: str, fake_engine: Path, tmp_path: Path, *args: str, fake: dict | None = None
) -> subprocess.Popen[str]:
    state = tmp_path / "state"
    targets = [tmp_path] + ([tmp_path / "t"] if (tmp_path / "t").is_dir() else [])
    allow_targets(state, *targets)
    save_config(
        state,
        AgentConfig(
            server_url=url, agent_id=api.agent_id, agent_token=AGENT_TOKEN, name="t", heartbeat_interval_s=0.5
        ),
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "IOWATT_FAKE_ENGINE": json.dumps(fake or {})}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "iowatt_agent",
            "run",
            "--state-dir",
            str(state),
            "--engine",
            str(fake_engine),
            "--lease-wait",
            "1",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


JOB = {"global": {"size": "1m"}, "jobs": [{"name": "a"}]}


def wait_for(cond, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def test_sigterm_lets_the_current_run_finish_then_exits_0(api, served, fake_engine, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    lease = api.add_lease(JOB, str(target))
    agent = start_agent(api, served, fake_engine, tmp_path, fake={"fake_duration_s": 2.0})
    try:
        wait_for(lambda: api.started)
        wait_for(lambda: api.progress)  # engine mid-run
        agent.send_signal(signal.SIGTERM)
        out, _ = agent.communicate(timeout=30)
    finally:
        agent.kill()
    assert agent.returncode == 0, out
    [stored] = api.results.values()
    assert stored["lease_id"] == lease["lease_id"]
    assert api.failures == {}
    assert "drain.requested reason=SIGTERM" in out and "agent.stopped" in out
    assert any(h["state"] == "draining" for h in api.heartbeats)
    assert list(target.iterdir()) == []  # the data file is gone
    leases_after_drain = len(api.calls_to(r"POST /api/v1/agents/.*/lease"))
    assert leases_after_drain == 1


def test_drain_deadline_kills_engine_and_reports_failure(api, served, fake_engine, tmp_path):
    api.add_lease(JOB, str(tmp_path))
    agent = start_agent(
        api, served, fake_engine, tmp_path, "--drain-timeout", "0.5", fake={"fake_duration_s": 120}
    )
    try:
        wait_for(lambda: api.progress)
        agent.send_signal(signal.SIGTERM)
        out, _ = agent.communicate(timeout=30)
    finally:
        agent.kill()
    assert agent.returncode == 0, out
    [failure] = api.failures.values()
    assert "drain" in failure["reason"] and failure["cancelled"] is False
    assert api.results == {}


def test_sigterm_while_idle_exits_promptly(api, served, fake_engine, tmp_path):
    api.lease_wait_s = 0.5
    agent = start_agent(api, served, fake_engine, tmp_path)
    try:
        wait_for(lambda: api.calls_to(r"POST /api/v1/agents/.*/lease"))
        t0 = time.monotonic()
        agent.send_signal(signal.SIGTERM)
        out, _ = agent.communicate(timeout=15)
    finally:
        agent.kill()
    assert agent.returncode == 0, out
    assert time.monotonic() - t0 < 5


def test_run_without_enrolment_is_a_clear_error(tmp_path, fake_engine):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iowatt_agent",
            "run",
            "--state-dir",
            str(tmp_path),
            "--engine",
            str(fake_engine),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "not enrolled" in proc.stderr and "iowatt-agent enroll" in proc.stderr


def test_second_sigterm_stops_the_run_at_once(api, served, fake_engine, tmp_path):
    api.add_lease(JOB, str(tmp_path))
    # drain timeout: the default 600 s
    agent = start_agent(api, served, fake_engine, tmp_path, fake={"fake_duration_s": 120})
    try:
        wait_for(lambda: api.progress)
        agent.send_signal(signal.SIGTERM)
        time.sleep(0.5)  # the behaviour under test: half a second after one SIGTERM it still runs
        assert agent.poll() is None  # still draining, waiting for the run
        t0 = time.monotonic()
        agent.send_signal(signal.SIGTERM)
        out, _ = agent.communicate(timeout=20)
    finally:
        agent.kill()
    assert agent.returncode == 0, out
    assert time.monotonic() - t0 < 10
    [failure] = api.failures.values()
    assert "while draining" in failure["reason"]


def test_json_logs_are_one_object_per_line(api, served, fake_engine, tmp_path):
    api.lease_wait_s = 0.2
    agent = start_agent(api, served, fake_engine, tmp_path, "--log-format", "json")
    try:
        wait_for(lambda: api.calls_to(r"POST /api/v1/agents/.*/lease"))
        agent.send_signal(signal.SIGTERM)
        out, _ = agent.communicate(timeout=15)
    finally:
        agent.kill()
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert lines and all({"ts", "level", "logger", "message"} <= set(doc) for doc in lines)
    assert any(doc["message"].startswith("agent.started") for doc in lines)
