"""Runs with a meter through the agent loop: idle_before → load → idle_after, the power object in
the result upload (contract §4), keep-alive progress during idle phases, and meters that fail
without failing the run. Uses the agent's fake API and fake engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.schemas import PowerUpload

from tests.agent.fakes import allow_targets, fake_lease_job, set_meters
from tests.agent.meters import instruments as inst
from tests.waiting import wait_until


@pytest.fixture(autouse=True)
def _fake_directives(monkeypatch):
    monkeypatch.setenv("IOWATT_FAKE_ENGINE", "{}")


def make_loop(api, agent_config, make_client, fake_engine: Path, tmp_path: Path, **settings) -> AgentLoop:
    settings.setdefault("progress_interval_s", 0.1)
    settings.setdefault("kill_grace_s", 0.3)
    allow_targets(tmp_path / "state", tmp_path)
    return AgentLoop(
        agent_config,
        state_dir=tmp_path / "state",
        engine=fake_engine,
        client_factory=make_client,
        settings=LoopSettings(**settings),
        send_inventory=False,
    )


job = fake_lease_job


def watts_program(tmp_path: Path, watts: float = 80.0) -> Path:
    return inst.write_program(tmp_path / "meter", f"print({watts})\n")


def test_run_with_a_meter_uploads_three_phases_and_samples(
    api, agent_config, make_client, fake_engine, tmp_path
):
    prog = watts_program(tmp_path)
    api.add_lease(job(fake_duration_s=0.4), str(tmp_path))
    loop = make_loop(
        api, agent_config, make_client, fake_engine, tmp_path, meter=f"command:{prog}", idle_s=0.4
    )
    assert loop.execute(loop.lease_once()) == "result"
    [stored] = api.results.values()
    power = stored["power"]
    PowerUpload.model_validate(power)  # the wire shape of contract §4
    assert power["status"] == "ok" and power["reason"] is None
    assert power["meter"]["driver"] == "command" and power["meter"]["tier"] == "inband"
    assert power["t0_utc"].endswith("Z")
    phases = power["phases"]
    assert [p["name"] for p in phases] == ["idle_before", "load", "idle_after"]
    for before, after in zip(phases, phases[1:], strict=False):
        assert before["end_ns"] <= after["start_ns"]
    assert phases[0]["end_ns"] - phases[0]["start_ns"] >= 400_000_000
    samples = power["samples"]
    # at least one reading per phase (checked below): how many more depends on the machine's load
    assert len(samples["t_ns"]) == len(samples["value"]) >= 3 and set(samples["value"]) == {80.0}
    assert samples["t_ns"] == sorted(samples["t_ns"])
    # every phase has readings in it
    for p in phases:
        assert any(p["start_ns"] <= t <= p["end_ns"] for t in samples["t_ns"]), p["name"]
    # idle phases kept the lease alive with their own progress reports
    names = [p["job_name"] for p in api.progress]
    assert "idle_before" in names and "idle_after" in names
    last_idle_after = len(names) - 1 - names[::-1].index("idle_after")
    assert names.index("idle_before") < names.index("a") < last_idle_after


def test_unreachable_meter_still_runs_the_benchmark(api, agent_config, make_client, fake_engine, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    record = tmp_path / "rec.json"
    api.add_lease(job(fake_duration_s=0.2, fake_record=str(record)), str(tmp_path))
    loop = make_loop(
        api, agent_config, make_client, fake_engine, tmp_path, meter=f"ptdaemon://127.0.0.1:{port}", idle_s=30
    )
    assert loop.execute(loop.lease_once()) == "result"
    assert record.exists()  # the engine ran
    [stored] = api.results.values()
    power = stored["power"]
    assert power["status"] == "no_meter_data"
    assert f"cannot connect to 127.0.0.1:{port}" in power["reason"]
    assert power["samples"] == {"t_ns": [], "value": []}
    assert [p["name"] for p in power["phases"]] == ["load"]  # no 30 s idle waits for an absent meter
    assert power["meter"]["tier"] == "lab"


def test_lease_meter_by_name_and_idle_override_the_default(
    api, agent_config, make_client, fake_engine, tmp_path
):
    prog = watts_program(tmp_path, 12.0)
    lease = api.add_lease(job(fake_duration_s=0.2), str(tmp_path))
    lease["meter"], lease["idle_s"] = "lab", 0.2
    set_meters(tmp_path / "state", {"lab": f"command:{prog}", "wall": "command:/bin/false"}, default="wall")
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "result"
    [stored] = api.results.values()
    assert set(stored["power"]["samples"]["value"]) == {12.0}
    assert stored["power"]["meter"]["name"] == "lab"
    assert stored["power"]["meter"]["spec"] == f"command:{prog}"
    idle = stored["power"]["phases"][0]
    assert idle["name"] == "idle_before" and 0.2e9 <= idle["end_ns"] - idle["start_ns"] < 1e9


def test_a_lease_without_meter_uses_the_host_default_with_its_idle(
    api, agent_config, make_client, fake_engine, tmp_path
):
    prog = watts_program(tmp_path, 7.0)
    api.add_lease(job(fake_duration_s=0.2), str(tmp_path))  # meter absent = null = the default
    set_meters(tmp_path / "state", {"wall": f"command:{prog}"}, default="wall", idle_s=0.3)
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "result"
    [stored] = api.results.values()
    assert stored["power"]["meter"]["name"] == "wall" and set(stored["power"]["samples"]["value"]) == {7.0}
    idle = stored["power"]["phases"][0]
    assert 0.3e9 <= idle["end_ns"] - idle["start_ns"] < 1.5e9


def test_lease_with_an_empty_meter_turns_it_off(api, agent_config, make_client, fake_engine, tmp_path):
    lease = api.add_lease(job(fake_duration_s=0.2), str(tmp_path))
    lease["meter"] = ""
    loop = make_loop(
        api, agent_config, make_client, fake_engine, tmp_path, meter="command:/bin/false", idle_s=5
    )
    assert loop.execute(loop.lease_once()) == "result"
    [stored] = api.results.values()
    assert "power" not in stored  # left out on the wire, so older servers accept the result


def test_cancel_during_idle_before_never_starts_the_engine(
    api, agent_config, make_client, fake_engine, tmp_path
):
    prog = watts_program(tmp_path)
    record = tmp_path / "rec.json"
    lease = api.add_lease(job(fake_record=str(record)), str(tmp_path))
    api.cancel_runs.add(lease["run_id"])
    loop = make_loop(
        api, agent_config, make_client, fake_engine, tmp_path, meter=f"command:{prog}", idle_s=30
    )
    assert loop.execute(loop.lease_once()) == "failure"
    [failure] = api.failures.values()
    assert failure["cancelled"] is True and failure["reason"] == "cancelled by the server"
    assert not record.exists() and api.results == {}
    assert api.progress[0]["job_name"] == "idle_before"


def test_meter_settings_come_from_the_state_dir(tmp_path):
    from iowatt_agent import cli
    from typer.testing import CliRunner

    runner = CliRunner()
    state = tmp_path / "state"
    result = runner.invoke(
        cli.app,
        ["meters", "set", "wall", "shelly://plug?password=x", "--idle", "12", "--state-dir", str(state)],
    )
    assert result.exit_code == 0, result.output
    assert json.loads((state / "meters.json").read_text()) == {
        "meters": {"wall": {"spec": "shelly://plug?password=x", "idle_s": 12.0}},
        "default": "wall",  # the first meter is the default
    }
    assert (state / "meters.json").stat().st_mode & 0o777 == 0o600
    # the old one-argument form names the meter "default"
    old = runner.invoke(cli.app, ["meters", "set", "rapl", "--state-dir", str(state)])
    assert old.exit_code == 2 and "NAME SPEC" in old.stderr
    old = runner.invoke(
        cli.app, ["meters", "set", "ipmi://bmc?user=a&password=y", "--default", "--state-dir", str(state)]
    )
    assert old.exit_code == 0, old.output
    shown = runner.invoke(cli.app, ["meters", "show", "--state-dir", str(state)])
    assert "shelly://plug?password=***" in shown.stdout and "password=x" not in shown.stdout
    assert "password=y" not in shown.stdout
    doc = json.loads(runner.invoke(cli.app, ["meters", "show", "--json", "--state-dir", str(state)]).stdout)
    assert doc["default"] == "default"
    assert {m["name"]: (m["driver"], m["tier"], m["idle_s"]) for m in doc["meters"]} == {
        "default": ("ipmi", "bmc", 30.0),
        "wall": ("shelly", "plug", 12.0),
    }
    bad = runner.invoke(cli.app, ["meters", "set", "w", "wattsup:/dev/ttyUSB0", "--state-dir", str(state)])
    assert bad.exit_code == 2 and "supported schemes" in bad.stderr
    bad = runner.invoke(cli.app, ["meters", "set", "a:b", "rapl:", "--state-dir", str(state)])
    assert bad.exit_code == 2 and "meter name" in bad.stderr
    assert (
        runner.invoke(cli.app, ["meters", "unset", "--state-dir", str(state)]).exit_code == 0
    )  # the default
    doc = json.loads((state / "meters.json").read_text())
    assert list(doc["meters"]) == ["wall"] and doc["default"] is None


def test_the_old_meter_json_becomes_the_default_meter(tmp_path):
    from iowatt_agent.config import ensure_state_dir, write_private_file
    from iowatt_agent.policy import load_meters

    state = ensure_state_dir(tmp_path / "state")
    # what `enroll --meter` wrote before meters.json: read once, then migrated
    write_private_file(state / "meter.json", json.dumps({"spec": "rapl", "idle_s": 10}).encode())
    meters = load_meters(state)
    assert meters.default == "default" and meters.meters["default"].spec == "rapl"
    assert meters.meters["default"].idle_s == 10.0
    assert not (state / "meter.json").exists()
    assert json.loads((state / "meters.json").read_text())["default"] == "default"


def test_forced_drain_ends_idle_before_and_reports_a_failure(
    api, agent_config, make_client, fake_engine, tmp_path
):
    import threading
    import time

    prog = watts_program(tmp_path)
    record = tmp_path / "rec.json"
    api.add_lease(job(fake_record=str(record)), str(tmp_path))
    loop = make_loop(
        api, agent_config, make_client, fake_engine, tmp_path, meter=f"command:{prog}", idle_s=60
    )
    lease = loop.lease_once()
    outcome: list[str] = []
    worker = threading.Thread(target=lambda: outcome.append(loop.execute(lease)))
    t0 = time.monotonic()
    worker.start()
    wait_until(lambda: api.started)  # the run has begun (its idle phase, 60 s)
    loop.request_drain("SIGTERM")  # first signal: the run may finish ...
    time.sleep(0.2)  # the behaviour under test: after one signal it goes on
    assert worker.is_alive()
    loop.request_drain("SIGTERM")  # ... the second one stops it now, idle phase included
    worker.join(10)
    assert outcome == ["failure"] and time.monotonic() - t0 < 5
    [failure] = api.failures.values()
    assert failure["cancelled"] is False and "before the benchmark started" in failure["reason"]
    assert not record.exists()


def test_enroll_with_a_meter_stores_it_and_run_refuses_a_bad_spec(api, monkeypatch, tmp_path):
    import functools

    from iowatt_agent import cli, enrol
    from iowatt_agent.client import ApiClient
    from typer.testing import CliRunner

    from tests.agent.fakes import ENROLL_TOKEN

    runner = CliRunner()
    state = tmp_path / "state"
    monkeypatch.setattr(
        enrol, "ApiClient", functools.partial(ApiClient, transport=api.transport(), sleep=lambda s: None)
    )
    monkeypatch.setenv("IOWATT_ENROLL_TOKEN", ENROLL_TOKEN)  # never on the command line
    args = ["enroll", "--server", "http://127.0.0.1:8000", "--state-dir", str(state)]
    bad = runner.invoke(cli.app, [*args, "--meter", "wattsup:/dev/ttyUSB0"])
    assert bad.exit_code == 2 and "supported schemes" in bad.stderr and api.calls == []  # checked first
    result = runner.invoke(cli.app, [*args, "--name", "box2", "--meter", "rapl", "--idle", "10"])
    assert result.exit_code == 0, result.output
    # stored like `meters set`: meters.json (0600), the host's default meter; no old meter.json
    assert json.loads((state / "meters.json").read_text()) == {
        "meters": {"default": {"spec": "rapl", "idle_s": 10.0}},
        "default": "default",
    }
    assert (state / "meters.json").stat().st_mode & 0o777 == 0o600
    assert not (state / "meter.json").exists()
    assert "rapl" in result.output and "meters.json" in result.output
    run = runner.invoke(
        cli.app, ["run", "--state-dir", str(state), "--meter", "nope:x", "--engine", "/bin/true"]
    )
    assert run.exit_code == 2 and "unknown meter scheme 'nope'" in run.stderr


def test_a_lease_naming_a_spec_or_an_unknown_meter_is_refused_before_anything_runs(
    api, agent_config, make_client, fake_engine, tmp_path
):
    ran = tmp_path / "meter-ran"
    prog = inst.write_program(tmp_path / "evil", f"open({str(ran)!r}, 'w').write('x'); print(1)\n")
    record = tmp_path / "rec.json"
    set_meters(tmp_path / "state", {"wall": "command:/bin/false"}, default="wall")
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    first = api.add_lease(job(fake_record=str(record)), str(tmp_path), meter=f"command:{prog}")
    second = api.add_lease(job(fake_record=str(record)), str(tmp_path), meter="modbus")
    assert loop.execute(loop.lease_once()) == "failure"
    assert loop.execute(loop.lease_once()) == "failure"
    by_run = {f["run_id"]: f["reason"] for f in api.failures.values()}
    assert by_run[first["run_id"]].startswith("host policy refused this run [meter.spec_from_server]: ")
    assert str(prog) not in by_run[first["run_id"]]  # a spec is never echoed back
    assert by_run[second["run_id"]].startswith("host policy refused this run [meter.unknown]: ")
    assert "(on the host: iowatt-agent meters set modbus SPEC)" in by_run[second["run_id"]]
    assert not ran.exists() and not record.exists() and api.started == [] and api.results == {}


def test_an_invalid_power_object_never_costs_the_result(
    api, agent_config, make_client, fake_engine, tmp_path
):
    from datetime import UTC, datetime

    from iowatt_agent.runner import EngineOutcome

    api.add_lease(job(), str(tmp_path))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    lease = loop.lease_once()
    now = datetime.now(UTC)
    outcome = EngineOutcome(0, None, {"jobs": []}, "{}", "", [], now, now)
    loop.report_result(lease, outcome, {"meter": {}, "status": "maybe"})
    [stored] = api.results.values()
    assert stored["engine_result"] == {"jobs": []} and "power" not in stored
