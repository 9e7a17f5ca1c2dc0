"""The agent against the real server app in-process (real PostgreSQL and Redis from the shared
test fixtures): enrol through the CLI, lease a dispatched run, run it with the real engine and
see the server mark it succeeded. httpx.MockTransport bridges the agent's client to the app's
TestClient, so the agent code under test is exactly what talks HTTP in production."""

from __future__ import annotations

import functools
import os
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from iowatt_agent import cli, enrol
from iowatt_agent.client import ApiClient
from iowatt_agent.credentials import load_config
from iowatt_agent.loop import AgentLoop, LoopSettings
from typer.testing import CliRunner

from tests.agent.fakes import allow_targets

REAL_ENGINE = Path(__file__).resolve().parents[2] / "agent" / "engine" / "build" / "iowatt-engine"


def bridge(client: Any) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        r = client.request(
            request.method,
            request.url.path,
            params=request.url.params,
            content=request.content,
            headers={k: v for k, v in request.headers.items() if k.lower() != "host"},
        )
        return httpx.Response(r.status_code, content=r.content, headers=r.headers)

    return httpx.MockTransport(handler)


@pytest.fixture
def server(client: Any, session: Any, monkeypatch: pytest.MonkeyPatch):
    from tests.factories import create_user

    user = create_user(session)
    r = client.post(
        "/api/v1/agents/enrollment-tokens",
        json={"team_id": str(user.team.id), "max_uses": 10},  # single-use by default (issue 9)
        headers=user.headers,
    )
    assert r.status_code == 201, r.text
    transport = bridge(client)
    monkeypatch.setattr(
        enrol, "ApiClient", functools.partial(ApiClient, transport=transport, sleep=lambda s: None)
    )
    return {"client": client, "user": user, "enrollment_token": r.json()["token"], "transport": transport}


def enroll(state: Path, token: str, *extra: str):
    # a loopback URL (plain http:// elsewhere needs --insecure-http); the token via stdin, never argv
    return CliRunner().invoke(
        cli.app,
        ["enroll", "--server", "http://127.0.0.1", "--token-file", "-", "--state-dir", str(state), *extra],
        input=token + "\n",
    )


def test_enroll_messages_from_the_real_server(server, tmp_path):
    state = tmp_path / "state"
    ok = enroll(state, server["enrollment_token"], "--name", "lab-1")
    assert ok.exit_code == 0, ok.output
    taken = enroll(tmp_path / "other", server["enrollment_token"], "--name", "lab-1")
    assert taken.exit_code == 3 and "--replace" in taken.output
    bad = enroll(tmp_path / "bad", "iwe_wrong", "--name", "lab-2")
    assert bad.exit_code == 3 and "rejected the enrollment token (401)" in bad.output
    again = enroll(state, server["enrollment_token"], "--name", "lab-1", "--replace")
    assert again.exit_code == 0, again.output


@pytest.mark.skipif(
    not os.access(REAL_ENGINE, os.X_OK), reason=f"the real engine is not built yet ({REAL_ENGINE})"
)
def test_a_dispatched_run_succeeds_through_the_real_agent(server, session, tmp_path):
    from backend.run import service as run_service

    state = tmp_path / "state"
    assert enroll(state, server["enrollment_token"], "--name", "lab-1").exit_code == 0
    config = load_config(state)
    loop = AgentLoop(
        config,
        state_dir=state,
        engine=REAL_ENGINE,
        client_factory=lambda: ApiClient(
            "http://testserver", config.agent_token, transport=server["transport"]
        ),
        settings=LoopSettings(lease_wait_s=0, progress_interval_s=0.2),
    )
    target = tmp_path / "target"
    target.mkdir()
    allow_targets(state, target)  # `iowatt-agent targets add DIR` (ADR 0009)
    loop.startup()  # heartbeat + inventory with the host policy: the agent is online
    workload = {
        "jobs": [
            {
                "name": "rr",
                "rw": "randread",
                "bs_bytes": 4096,
                "size_bytes": 4 << 20,
                "runtime_s": 1,
                "time_based": True,
            }
        ]
    }
    client, headers = server["client"], server["user"].headers
    r = client.post(
        "/api/v1/runs",
        json={"agent_id": str(config.agent_id), "target_path": str(target), "workload": workload},
        headers=headers,
    )
    assert r.status_code == 201, r.text
    run_id = uuid.UUID(r.json()["id"])
    assert run_service.dispatch(session, run_id=run_id) == config.agent_id
    session.flush()
    lease = loop.lease_once()
    assert lease is not None and lease.run_id == run_id
    assert loop.execute(lease) == "result"
    run = client.get(f"/api/v1/runs/{run_id}", headers=headers).json()
    assert run["status"] == "succeeded", run
    assert run["jobs"][0]["read"]["total_ios"] > 0
    assert loop.spool.pending() == [] and loop.spool.rejected() == []
    assert list(target.iterdir()) == []


@pytest.mark.skipif(
    not os.access(REAL_ENGINE, os.X_OK), reason=f"the real engine is not built yet ({REAL_ENGINE})"
)
def test_file_workloads_run_through_the_real_server_and_agent(server, session, tmp_path):
    """Issue 14: a PostMark and a vdbench workload queued on the real server (its lease's
    engine_job, its facts and pre-check) run by the real agent (its own --parse-only, the run
    directory) with the real engine; the results carry their postmark / fileset objects."""
    from sqlalchemy import select

    from backend.models.result import RunResult
    from backend.run import service as run_service

    state = tmp_path / "state"
    assert enroll(state, server["enrollment_token"], "--name", "lab-files").exit_code == 0
    config = load_config(state)
    loop = AgentLoop(
        config,
        state_dir=state,
        engine=REAL_ENGINE,
        client_factory=lambda: ApiClient(
            "http://testserver", config.agent_token, transport=server["transport"]
        ),
        settings=LoopSettings(lease_wait_s=0, progress_interval_s=0.2, idle_s=0),
    )
    target = tmp_path / "target"
    target.mkdir()
    (target / "theirs.txt").write_text("kept\n")
    allow_targets(state, target)
    loop.startup()
    client, headers = server["client"], server["user"].headers
    parameters = (
        "fsd=fsd1,anchor=/etc,depth=1,width=2,files=3,size=64k\n"
        "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k,fileio=random,fileselect=random,threads=2\n"
        "rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=2,interval=1\n"
    )
    workloads = {
        "postmark": {
            "kind": "postmark",
            "postmark": {"number": 100, "transactions": 300, "subdirectories": 2},
        },
        "fileset": {"kind": "vdbench", "vdbench": {"parameters": parameters, "scale": 1}},
    }
    for key, workload in workloads.items():
        r = client.post(
            "/api/v1/runs",
            json={"agent_id": str(config.agent_id), "target_path": str(target), "workload": workload},
            headers=headers,
        )
        assert r.status_code == 201, r.text
        run_id = uuid.UUID(r.json()["id"])
        assert run_service.dispatch(session, run_id=run_id) == config.agent_id
        session.flush()
        lease = loop.lease_once()
        assert lease is not None and lease.run_id == run_id
        assert lease.engine_job["mode"] == workload["kind"]
        assert loop.execute(lease) == "result"
        run = client.get(f"/api/v1/runs/{run_id}", headers=headers).json()
        assert run["status"] == "succeeded", run
        stored = session.scalars(select(RunResult).where(RunResult.run_id == run_id)).one()
        assert key in stored.engine_result, key
    assert loop.spool.pending() == [] and loop.spool.rejected() == []
    assert [p.name for p in target.iterdir()] == ["theirs.txt"]
    assert list((state / "jobs").iterdir()) == []
