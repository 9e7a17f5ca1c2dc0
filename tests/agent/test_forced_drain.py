"""A forced drain (a second SIGTERM) is never lost, whenever it comes: also in the moment just
after a lease is taken, before the engine or the idle baseline started (issue 10)."""

from __future__ import annotations

import time

import pytest
from iowatt_agent.loop import AgentLoop, LoopSettings

from tests.agent.fakes import allow_targets, fake_lease_job
from tests.agent.meters import instruments as inst


@pytest.fixture(autouse=True)
def _fake_directives(monkeypatch):
    monkeypatch.setenv("IOWATT_FAKE_ENGINE", "{}")


def make_loop(api, agent_config, make_client, fake_engine, tmp_path, **settings) -> AgentLoop:
    allow_targets(tmp_path / "state", tmp_path)
    return AgentLoop(
        agent_config,
        state_dir=tmp_path / "state",
        engine=fake_engine,
        client_factory=make_client,
        settings=LoopSettings(progress_interval_s=0.1, kill_grace_s=0.3, **settings),
        send_inventory=False,
    )


def sigterm_twice_when_started(loop: AgentLoop) -> None:
    """Both SIGTERMs arrive while the run is being started: after the lease was taken, before
    the engine (or the idle baseline) runs."""
    start = loop.client.start

    def start_then_signals(run_id, lease_id):  # type: ignore[no-untyped-def]
        answer = start(run_id, lease_id)
        loop.request_drain("SIGTERM")
        loop.request_drain("SIGTERM")
        return answer

    loop.client.start = start_then_signals  # type: ignore[method-assign]


@pytest.mark.parametrize("with_meter", [False, True], ids=["no-meter", "meter"])
def test_a_forced_drain_just_after_the_lease_stops_the_run_at_once(
    api, agent_config, make_client, fake_engine, tmp_path, with_meter
):
    settings: dict[str, object] = {}
    if with_meter:
        prog = inst.write_program(tmp_path / "meter", "print(80.0)\n")
        settings = {"meter": f"command:{prog}", "idle_s": 60.0}
    lease = api.add_lease(fake_lease_job(fake_duration_s=60), str(tmp_path))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path, **settings)
    sigterm_twice_when_started(loop)
    t0 = time.monotonic()
    assert loop.execute(loop.lease_once()) == "failure"
    assert time.monotonic() - t0 < 10  # not the 60 s idle baseline, not the 60 s engine run
    assert api.started == [lease["run_id"]]
    [failure] = api.failures.values()
    assert failure["run_id"] == lease["run_id"] and failure["cancelled"] is False
    assert "stopped" in failure["reason"]
    assert api.results == {}
