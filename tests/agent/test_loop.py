from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import httpx
import pytest
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.policy import save_policy
from iowatt_agent.spool import Delivery
from iowatt_policy import Policy, Target

from tests.agent.fakes import FakeApi, Reply, error
from tests.waiting import wait_until


@pytest.fixture(autouse=True)
def _fake_directives(monkeypatch):
    monkeypatch.setenv("IOWATT_FAKE_ENGINE", "{}")  # engine_job() sets it; restored after each test


def allow(state_dir: Path, *targets: Target) -> None:
    save_policy(state_dir, Policy(targets=targets))


def make_loop(
    api: FakeApi, agent_config, make_client, fake_engine: Path, tmp_path: Path, **settings
) -> AgentLoop:
    settings.setdefault("progress_interval_s", 0.1)
    settings.setdefault("kill_grace_s", 0.3)
    (tmp_path / "target").mkdir(exist_ok=True)
    allow(tmp_path / "state", Target.directory(str(tmp_path)), Target.directory(str(tmp_path / "target")))
    return AgentLoop(
        agent_config,
        state_dir=tmp_path / "state",
        engine=fake_engine,
        client_factory=make_client,
        settings=LoopSettings(**settings),
        send_inventory=False,
    )


def engine_job(**options) -> dict:
    """A lease's job; fake_* directives go to the fake engine through its environment (a lease
    carrying them would be refused by the host policy: option.not_allowed)."""
    fake = {k: v for k, v in options.items() if k.startswith("fake_")}
    if fake:
        os.environ["IOWATT_FAKE_ENGINE"] = json.dumps(fake)
    rest = {k: v for k, v in options.items() if not k.startswith("fake_")}
    return {
        "global": {"rw": "randread", "size": "1m", **rest},
        "jobs": [{"name": "a", "bs": "4k", "stonewall": 1}],
    }


def test_execute_success_reports_result_and_cleans_directory_target(
    api, agent_config, make_client, fake_engine, tmp_path
):
    target = tmp_path / "target"
    target.mkdir()
    record = tmp_path / "rec.json"
    lease = api.add_lease(engine_job(fake_duration_s=0.5, fake_record=str(record)), str(target))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    got = loop.lease_once()
    assert loop.execute(got) == "result"
    assert api.started == [lease["run_id"]]
    [stored] = api.results.values()
    assert stored["lease_id"] == lease["lease_id"] and stored["engine_exit_code"] == 0
    assert stored["engine_result"]["jobs"][0]["jobname"] == "a"
    assert stored["started_at"] <= stored["finished_at"]
    # progress went to the server with the lease id
    assert api.progress and all(p["lease_id"] == lease["lease_id"] for p in api.progress)
    # the engine wrote <dir>/iowatt-<run_id>.dat, and the agent removed it
    rec = json.loads(record.read_text())
    assert rec["job"]["global"]["filename"] == str(target / f"iowatt-{lease['run_id']}.dat")
    assert list(target.iterdir()) == []
    assert (
        loop.spool.pending() == [] and not (tmp_path / "state" / "jobs" / f"{lease['run_id']}.json").exists()
    )


def test_execute_cancel_reports_cancelled_failure(api, agent_config, make_client, fake_engine, tmp_path):
    lease = api.add_lease(engine_job(fake_mode="hang"), str(tmp_path))
    api.cancel_runs.add(lease["run_id"])
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    t0 = time.monotonic()
    assert loop.execute(loop.lease_once()) == "failure"
    assert time.monotonic() - t0 < 5
    [failure] = api.failures.values()
    assert failure["cancelled"] is True and failure["run_id"] == lease["run_id"]
    assert failure["reason"] == "cancelled by the server"
    assert api.results == {}


def test_execute_engine_failure_reports_exit_code_and_stderr(
    api, agent_config, make_client, fake_engine, tmp_path
):
    api.add_lease(engine_job(fake_mode="usage"), str(tmp_path))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "failure"
    [failure] = api.failures.values()
    assert failure["exit_code"] == 2 and failure["cancelled"] is False
    assert "--bs: invalid value" in failure["reason"] and "--bs" in failure["stderr_tail"]


def test_execute_timeout_from_lease(api, agent_config, make_client, fake_engine, tmp_path):
    api.add_lease(engine_job(fake_mode="hang"), str(tmp_path), timeout_s=0.5)
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "failure"
    [failure] = api.failures.values()
    assert "timeout" in failure["reason"] and failure["cancelled"] is False


def test_lease_lost_on_start_does_not_run(api, agent_config, make_client, fake_engine, tmp_path):
    record = tmp_path / "rec.json"
    lease = api.add_lease(engine_job(fake_record=str(record)), str(tmp_path))
    api.script[f"POST /api/v1/runs/{lease['run_id']}/start"] = [error(409, "lease_lost", "expired")]
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "not_started"
    assert not record.exists() and api.results == {} and api.failures == {}


def test_bad_target_is_reported_as_failure(api, agent_config, make_client, fake_engine, tmp_path):
    api.add_lease(engine_job(), str(tmp_path / "missing" / "dir" / "f"))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "failure"
    [failure] = api.failures.values()
    assert failure["reason"].startswith("host policy refused this run [target.not_allowed]: ")
    assert api.started == []


def test_result_spooled_when_server_down_and_delivered_later(
    api, agent_config, make_client, fake_engine, tmp_path
):
    lease = api.add_lease(engine_job(fake_duration_s=0.2), str(tmp_path))
    api.script[f"PUT /api/v1/runs/{lease['run_id']}/result"] = [httpx.ConnectError("down")] * 3
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "result"
    assert api.results == {}
    [entry] = loop.spool.pending()
    assert entry.run_id.hex == lease["run_id"].replace("-", "")
    assert loop.spool.flush(loop.spool_client)[Delivery.DELIVERED] == 1
    assert len(api.results) == 1 and loop.spool.pending() == []


def test_heartbeat_reports_state_and_adopts_interval(api, agent_config, make_client, fake_engine, tmp_path):
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    loop.heartbeat_once()
    boot, sent_at = api.heartbeats[-1]["boot_id"], api.heartbeats[-1]["sent_at"]
    assert api.heartbeats[-1] == {
        "state": "idle",
        "current_run_id": None,
        "current_lease_id": None,
        "boot_id": boot,
        "agent_version": "0.1.0",
        "sent_at": sent_at,  # the clock exchange's t0 (clock.py)
    }
    assert loop.heartbeat_interval_s == 0.2
    loop.request_drain("test")
    loop.heartbeat_once()
    assert api.heartbeats[-1]["state"] == "draining" and api.heartbeats[-1]["boot_id"] == boot
    # a restarted agent (a new loop) is another process to the server
    make_loop(api, agent_config, make_client, fake_engine, tmp_path).heartbeat_once()
    assert api.heartbeats[-1]["boot_id"] not in (boot, None)


def test_the_lease_wait_is_the_servers_once_named(api, agent_config, make_client, fake_engine, tmp_path):
    """Compatibility both ways (ADR 0053): against an older server (no `poll_wait_s` in its lease
    answers) the agent keeps asking for 25 s; a newer server's named wait is the next poll's (its
    request timeout follows), held within 1-300 s; `--lease-wait` given wins over the server's."""
    lease = r"POST /api/v1/agents/[^/]+/lease"
    api.script[lease] = [
        Reply(200, {"lease": None}),  # an older server
        Reply(200, {"lease": None, "poll_wait_s": 80}),
        Reply(200, {"lease": None, "poll_wait_s": 1e9}),  # a hostile or broken one
        Reply(200, {"lease": None}),
    ]
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    for _ in range(4):
        assert loop.lease_once() is None
    waits = [(q["wait_s"], t) for q, t in api.lease_requests]
    assert waits == [("25", 40.0), ("25", 40.0), ("80", 95.0), ("300", 315.0)]
    given = make_loop(api, agent_config, make_client, fake_engine, tmp_path, lease_wait_s=5)
    api.script[lease] = [Reply(200, {"lease": None, "poll_wait_s": 80})] * 2
    api.lease_requests.clear()
    assert given.lease_once() is None and given.lease_once() is None
    assert [q["wait_s"] for q, _ in api.lease_requests] == ["5", "5"]


def test_run_drains_after_current_run_and_exits_0(api, agent_config, make_client, fake_engine, tmp_path):
    """Threads included: lease, start, drain mid-run, run finishes, result reported, exit 0."""
    lease = api.add_lease(engine_job(fake_duration_s=1.0), str(tmp_path))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path, lease_wait_s=1)
    code: list[int] = []
    t = threading.Thread(target=lambda: code.append(loop.run()))
    t.start()
    deadline = time.monotonic() + 10
    while not api.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert api.started
    loop.request_drain("SIGTERM")
    t.join(15)
    assert code == [0]
    assert len(api.results) == 1
    assert len(api.calls_to(r"POST /api/v1/agents/.*/lease")) == 1  # stopped leasing
    # heartbeats mid-run (busy, then draining) say which lease this process holds; the last, none
    holding = [h for h in api.heartbeats if h["current_lease_id"] == lease["lease_id"]]
    assert holding and {h["state"] for h in holding} <= {"busy", "draining"}, api.heartbeats
    assert api.heartbeats[-1]["current_lease_id"] is None
    assert len({h["boot_id"] for h in api.heartbeats}) == 1  # one process, one boot id
    # its lease polls carry the same boot id: the server spares the runs this process started
    polls = api.calls_to(r"POST /api/v1/agents/.*/lease")
    assert [p[2] for p in polls] == [{"boot_id": api.heartbeats[0]["boot_id"]}], polls


def test_revoked_token_is_fatal(api, agent_config, make_client, fake_engine, tmp_path):
    loop = make_loop(api, agent_config, lambda: make_client(token="revoked"), fake_engine, tmp_path)
    assert loop.run() == 3


REAL_ENGINE = Path(__file__).resolve().parents[2] / "agent" / "engine" / "build" / "iowatt-engine"


@pytest.mark.skipif(
    not os.access(REAL_ENGINE, os.X_OK),
    reason=f"the real engine is not built yet ({REAL_ENGINE}); run `make -C agent/engine`",
)
def test_execute_with_the_real_engine(api, agent_config, make_client, tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    job = {
        "global": {"rw": "randread", "bs": "4k", "size": "8m"},  # the agent adds its target
        "jobs": [{"name": "rr", "runtime": "2", "time_based": 1, "stonewall": 1}],
    }
    lease = api.add_lease(job, str(target))
    loop = make_loop(api, agent_config, make_client, REAL_ENGINE, tmp_path)
    assert loop.execute(loop.lease_once()) == "result", api.failures
    [stored] = api.results.values()
    [rr] = stored["engine_result"]["jobs"]
    assert rr["jobname"] == "rr" and rr["read"]["total_ios"] > 0
    assert rr["read"]["io_bytes"] == rr["read"]["total_ios"] * 4096
    assert api.progress and api.progress[0]["job_name"] == "rr" and api.progress[0]["read_iops"] > 0
    assert all(p["lease_id"] == lease["lease_id"] for p in api.progress)
    assert list(target.iterdir()) == []


def test_work_loop_honours_retry_after_on_lease(api, agent_config, make_client, fake_engine, tmp_path):
    waits: list[float] = []
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)

    class RecordingEvent(threading.Event):
        def wait(self, timeout=None):  # type: ignore[override]
            if timeout is not None:
                waits.append(timeout)
                if len(waits) >= 2:
                    self.set()  # stop the loop after two back-offs
            return super().wait(0)

    loop.draining = RecordingEvent()
    api.script["POST /api/v1/agents/.*/lease"] = [
        error(429, "rate_limited", "slow down", {"Retry-After": "9"}),
        error(500, "boom", "x"),
    ]
    loop._work_loop()
    assert waits[0] == 9.0
    assert 1.0 <= waits[1] <= 2.0  # then plain backoff: second failure, 2 s with jitter 0.5-1


def test_a_lease_poll_backing_off_from_an_unreachable_server_polls_again_once_a_heartbeat_gets_through(
    api, agent_config, make_client, fake_engine, tmp_path
):
    """A network outage grows the lease loop's backoff (up to a minute); the heartbeat that gets
    through once the network is back ends it, as it ends the spool's: a run queued for the host
    meanwhile is taken at once. A server that answered with an error keeps the backoff
    (test_work_loop_honours_retry_after_on_lease), and a drain ends the wait too."""
    loop = make_loop(
        api, agent_config, make_client, fake_engine, tmp_path, error_backoff_base_s=60, error_backoff_max_s=60
    )
    refused = httpx.ConnectError("refused")
    api.script["POST /api/v1/agents/.*/lease"] = [refused, refused]  # one attempt a poll
    worker = threading.Thread(target=loop._work_loop)
    worker.start()
    try:
        polls = lambda: len(api.calls_to(r"POST /api/v1/agents/.*/lease"))  # noqa: E731
        wait_until(lambda: polls() == 1, timeout=10, message="the first poll")
        time.sleep(0.3)  # the behaviour under test: the backoff (30-60 s) holds the next poll
        assert polls() == 1
        loop.heartbeat_once()  # the network is back: a heartbeat gets through
        wait_until(lambda: polls() == 2, timeout=10, message="a poll right after the heartbeat")
        time.sleep(0.3)  # unreachable again: a new backoff, which a drain ends
        assert polls() == 2
        t0 = time.monotonic()
        loop.request_drain("test")
        worker.join(10)
        assert not worker.is_alive() and time.monotonic() - t0 < 5
    finally:
        loop.request_drain("test")
        worker.join(10)


def test_inventory_is_resent_when_the_policy_or_meters_change(
    api, agent_config, make_client, fake_engine, tmp_path
):
    from tests.agent.fakes import set_meters

    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path, lease_wait_s=0.2)
    loop.send_inventory = True
    code: list[int] = []
    t = threading.Thread(target=lambda: code.append(loop.run()))
    t.start()
    try:
        deadline = time.monotonic() + 10
        while not api.inventories and time.monotonic() < deadline:
            time.sleep(0.02)
        [first] = api.inventories
        assert {x["path"] for x in first["policy"]["targets"]} == {str(tmp_path), str(tmp_path / "target")}
        polls = len(api.calls_to(r"POST /api/v1/agents/.*/lease"))  # a few empty long-polls more:
        wait_until(lambda: len(api.calls_to(r"POST /api/v1/agents/.*/lease")) >= polls + 3)
        assert len(api.inventories) == 1  # nothing changed, nothing re-sent
        set_meters(tmp_path / "state", {"wall": "shelly://plug?password=s3cret"}, default="wall", idle_s=7)
        while len(api.inventories) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        second = api.inventories[-1]["policy"]
        # the meter's own idle baseline is reported (the New-run page's estimate counts it)
        assert second["meters"] == [{"name": "wall", "driver": "shelly", "tier": "plug", "idle_s": 7.0}]
        assert second["default_meter"] == "wall" and "s3cret" not in json.dumps(api.inventories)
        allow(tmp_path / "state", Target.directory(str(tmp_path)))
        while len(api.inventories) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [x["path"] for x in api.inventories[-1]["policy"]["targets"]] == [str(tmp_path)]
    finally:
        loop.request_drain("test")
        t.join(10)
    assert code == [0]


def test_an_unreadable_policy_refuses_the_lease(api, agent_config, make_client, fake_engine, tmp_path):
    api.add_lease(engine_job(), str(tmp_path))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    (tmp_path / "state" / "policy.json").chmod(0o666)
    assert loop.execute(loop.lease_once()) == "failure"
    [failure] = api.failures.values()
    assert failure["reason"].startswith("host policy refused this run [target.not_allowed]: the host policy")
    assert "group- or world-writable" in failure["reason"] and api.started == []


def test_the_hard_timeout_never_exceeds_the_hosts_runtime_limit(
    api, agent_config, make_client, fake_engine, tmp_path
):
    from tests.agent.fakes import allow_targets

    api.add_lease(engine_job(), str(tmp_path), timeout_s=10_000)
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    allow_targets(tmp_path / "state", tmp_path, limits={"max_runtime_s": 60})
    plan = loop.plan(loop.lease_once())
    assert plan.timeout_s == 60 * 1.5 + 300
    assert plan.job["global"]["beneath"] == str(tmp_path) and plan.meter is None


def test_a_policy_change_reaches_the_server_between_heartbeats_while_a_long_poll_waits(
    api, agent_config, make_client, fake_engine, tmp_path
):
    """The worker thread may sit in a 25 s long-poll: the heartbeat thread's policy watch sends
    the new inventory within seconds (the server refuses runs on targets it has not seen)."""
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    loop.send_inventory = True
    loop.heartbeat_interval_s = 3600.0  # no heartbeat during the test: only the policy watch acts
    t = threading.Thread(target=loop._heartbeat_loop, daemon=True)
    t.start()
    try:
        time.sleep(0.1)  # the behaviour under test: a watch running with nothing changed sends nothing
        assert api.inventories == []  # nothing changed yet
        (tmp_path / "new").mkdir()
        allow(tmp_path / "state", Target.directory(str(tmp_path)), Target.directory(str(tmp_path / "new")))
        deadline = time.monotonic() + 10
        while not api.inventories and time.monotonic() < deadline:
            time.sleep(0.05)
        [sent] = api.inventories
        assert str(tmp_path / "new") in {x["path"] for x in sent["policy"]["targets"]}
    finally:
        loop.stopping.set()
        t.join(5)
    assert not t.is_alive()


def test_the_reported_meters_carry_the_idle_baseline_a_run_with_them_takes(tmp_path):
    """issue 25: each meter's idle is its own setting, else the agent's (`run --idle`), as
    plan_lease picks it; the server's New-run estimate counts it."""
    from iowatt_agent.policy import MeterEntry, Meters, report

    meters = Meters({"wall": MeterEntry("shelly://plug", 7.0), "bmc": MeterEntry("ipmi://bmc")}, "wall")
    got = {m.name: m.idle_s for m in report(Policy(), meters, idle_s=45.0).meters}
    assert got == {"wall": 7.0, "bmc": 45.0}
    assert {m.name: m.idle_s for m in report(Policy(), meters).meters} == {"wall": 7.0, "bmc": 30.0}
