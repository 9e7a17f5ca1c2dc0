"""A run with a meter through the real agent against the real server app (PostgreSQL, Redis):
the `power` object the agent uploads is what the server's schema accepts and stores."""

from __future__ import annotations

import os
import uuid

import pytest
from iowatt_agent.client import ApiClient
from iowatt_agent.credentials import load_config
from iowatt_agent.loop import AgentLoop, LoopSettings

from tests.agent.fakes import allow_targets, set_meters
from tests.agent.meters import instruments as inst
from tests.agent.test_real_server import REAL_ENGINE, enroll, server  # noqa: F401 - `server` is a fixture

server_power = pytest.importorskip("backend.power.schemas", reason="the server has no power schemas yet")


@pytest.mark.skipif(
    not os.access(REAL_ENGINE, os.X_OK), reason=f"the real engine is not built ({REAL_ENGINE})"
)
def test_a_metered_run_is_stored_by_the_real_server(server, session, tmp_path):  # noqa: F811
    from backend.run import service as run_service
    from backend.run.schemas import ResultUpload as ServerResultUpload

    if "power" not in ServerResultUpload.model_fields:
        pytest.skip("the server's result upload has no `power` yet")
    state = tmp_path / "state"
    assert enroll(state, server["enrollment_token"], "--name", "lab-metered").exit_code == 0
    config = load_config(state)
    meter = inst.write_program(tmp_path / "meter", "print(87.5)\n")
    loop = AgentLoop(
        config,
        state_dir=state,
        engine=REAL_ENGINE,
        client_factory=lambda: ApiClient(
            "http://testserver", config.agent_token, transport=server["transport"]
        ),
        settings=LoopSettings(lease_wait_s=0, progress_interval_s=0.2, idle_s=0.5),
    )
    target = tmp_path / "target"
    target.mkdir()
    allow_targets(state, target)
    set_meters(state, {"wall": "command:/bin/false", "lab": f"command:{meter}"}, default="wall")
    loop.startup()  # reports the targets and the meters by name
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
        json={
            "agent_id": str(config.agent_id),
            "target_path": str(target),
            "workload": workload,
            "meter": "lab",
        },
        headers=headers,
    )
    assert r.status_code == 201, r.text
    run_id = uuid.UUID(r.json()["id"])
    assert run_service.dispatch(session, run_id=run_id) == config.agent_id
    session.flush()
    lease = loop.lease_once()
    assert lease is not None
    assert loop.execute(lease) == "result"
    assert loop.spool.pending() == [] and loop.spool.rejected() == []  # accepted, not 422
    run = client.get(f"/api/v1/runs/{run_id}", headers=headers).json()
    assert run["status"] == "succeeded", run
    assert str(meter) not in client.get(f"/api/v1/runs/{run_id}", headers=headers).text  # never a spec
    # a spec in place of a name is refused by the server too (the agent would refuse it anyway)
    r = client.post(
        "/api/v1/runs",
        json={
            "agent_id": str(config.agent_id),
            "target_path": str(target),
            "workload": workload,
            "meter": f"command:{meter}",
        },
        headers=headers,
    )
    assert r.status_code == 422 and "meter" in r.text
