"""The wire protocol stays compatible one version either way (docs/adr/0036-agent-bundles.md §
Protocol): the real agent (CLI enrolment, AgentLoop, the engine) against the real server app
in-process, each side made to speak the previous, current or next version by its override
(IOWATT_AGENT_WIRE_PROTOCOL for the agent, backend.agent.protocol.PROTOCOL for the server).
Protocol 1 is the releases before the header: no header, no engine facts in the inventory."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent import protocol as agent_protocol
from iowatt_agent.client import ApiClient
from iowatt_agent.credentials import load_config
from iowatt_agent.loop import AgentLoop, FatalAgentError, LoopSettings

from backend.agent import protocol as server_protocol
from tests.agent.fakes import allow_targets
from tests.agent.test_real_server import REAL_ENGINE, enroll, server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(not os.access(REAL_ENGINE, os.X_OK), reason=f"no engine at {REAL_ENGINE}")
CURRENT = server_protocol.PROTOCOL
JOB = {"name": "wire", "rw": "randread", "bs_bytes": 4096, "size_bytes": 1 << 20}


def _loop(bridged: dict[str, Any], state: Path) -> AgentLoop:
    config = load_config(state)
    return AgentLoop(
        config,
        state_dir=state,
        engine=REAL_ENGINE,
        client_factory=lambda: ApiClient(
            "http://testserver", config.agent_token, transport=bridged["transport"]
        ),
        settings=LoopSettings(lease_wait_s=0, progress_interval_s=0.2, idle_s=0),
    )


@pytest.mark.parametrize(
    ("agent_speaks", "server_speaks"),
    [
        (CURRENT - 1, CURRENT),  # the previous release's agent, this server
        (CURRENT, CURRENT),
        (CURRENT + 1, CURRENT),  # the next agent, this server
        (CURRENT, CURRENT - 1),  # this agent, the previous server
        (CURRENT, CURRENT + 1),  # this agent, the next server
    ],
)
def test_one_version_apart_either_way_an_agent_enrols_leases_and_reports(
    server: dict[str, Any],  # noqa: F811
    session: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent_speaks: int,
    server_speaks: int,
) -> None:
    from backend.run import service as run_service

    monkeypatch.setenv(agent_protocol.OVERRIDE_ENV, str(agent_speaks))
    monkeypatch.setattr(server_protocol, "PROTOCOL", server_speaks)
    state = tmp_path / "state"
    enrolled = enroll(state, server["enrollment_token"], "--name", f"wire-{agent_speaks}-{server_speaks}")
    assert enrolled.exit_code == 0, enrolled.output
    loop = _loop(server, state)
    target = tmp_path / "target"
    target.mkdir()
    allow_targets(state, target)
    loop.startup()  # heartbeat and inventory
    client, headers = server["client"], server["user"].headers
    r = client.post(
        "/api/v1/runs",
        json={"agent_id": str(loop.config.agent_id), "target_path": str(target), "workload": {"jobs": [JOB]}},
        headers=headers,
    )
    assert r.status_code == 201, r.text
    run_id = uuid.UUID(r.json()["id"])
    assert run_service.dispatch(session, run_id=run_id) == loop.config.agent_id
    session.flush()
    lease = loop.lease_once()
    assert lease is not None and lease.run_id == run_id
    assert loop.execute(lease) == "result"
    run = client.get(f"/api/v1/runs/{run_id}", headers=headers).json()
    assert run["status"] == "succeeded", run
    assert run["jobs"][0]["read"]["io_bytes"] == 1 << 20
    # what the server shows of the agent: the protocol-2 facts only from an agent that sends them
    agent = client.get(f"/api/v1/agents/{loop.config.agent_id}", headers=headers).json()
    caps = agent["inventory"]["capabilities"]
    assert agent["agent_version"]
    if agent_speaks >= 2:
        assert caps["protocol"] == agent_speaks
        assert caps["engine_version"] and caps["engine_features"] == ["io_uring", "libaio"]
    else:
        assert caps["protocol"] is None and caps["engine_features"] is None


def test_two_versions_apart_the_server_refuses_and_says_how_to_upgrade(
    server: dict[str, Any],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(agent_protocol.OVERRIDE_ENV, str(CURRENT + 2))
    refused = enroll(tmp_path / "new", server["enrollment_token"], "--name", "wire-far")
    assert refused.exit_code != 0
    assert "agent_protocol_unsupported" in refused.output and "install line" in refused.output
    # an agent enrolled at this version, then made to speak two versions back: refused at start
    monkeypatch.setenv(agent_protocol.OVERRIDE_ENV, str(CURRENT))
    state = tmp_path / "state"
    assert enroll(state, server["enrollment_token"], "--name", "wire-old").exit_code == 0
    monkeypatch.setattr(server_protocol, "PROTOCOL", CURRENT + 2)
    with pytest.raises(FatalAgentError, match="does not speak this agent's protocol"):
        _loop(server, state).startup()
    # what the server answers on the wire: its version, and 403 for an unreadable header too
    client = server["client"]
    config = load_config(state)
    for said in ("x", "-1", str(CURRENT + 4), "٣".encode()):
        r = client.post(
            f"/api/v1/agents/{config.agent_id}/heartbeat",
            json={"state": "idle"},
            headers={"Authorization": f"Bearer {config.agent_token}", server_protocol.AGENT_HEADER: said},
        )
        assert r.status_code == 403 and r.json()["error"] == "agent_protocol_unsupported", (said, r.text)
        assert r.headers[server_protocol.SERVER_HEADER] == str(CURRENT + 2)


def test_the_inventory_command_shows_the_engine_facts_the_agent_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`iowatt-agent inventory --json` prints what `run` sends: protocol 2's engine facts from the
    engine the agent finds (IOWATT_ENGINE), none of them when speaking protocol 1."""
    import json

    from iowatt_agent import cli
    from typer.testing import CliRunner

    monkeypatch.setenv("IOWATT_ENGINE", str(REAL_ENGINE))
    monkeypatch.delenv(agent_protocol.OVERRIDE_ENV, raising=False)
    shown = CliRunner().invoke(cli.app, ["inventory", "--json", "--state-dir", str(tmp_path / "none")])
    assert shown.exit_code == 0, shown.output
    caps = json.loads(shown.stdout)["capabilities"]
    assert caps["protocol"] == CURRENT and caps["engine_features"] == ["io_uring", "libaio"]
    assert caps["engine_version"] and caps["engine_version"][0].isdigit()
    monkeypatch.setenv(agent_protocol.OVERRIDE_ENV, "1")
    shown = CliRunner().invoke(cli.app, ["inventory", "--json", "--state-dir", str(tmp_path / "none")])
    assert not {"protocol", "engine_version", "engine_features"} & set(
        json.loads(shown.stdout)["capabilities"]
    )
