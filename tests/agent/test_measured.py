"""The one measured-run sequence (`measured.run_measured`) that `bench` and a lease share:
idle_before → load → [data file removed] → idle_after, with the fake engine and a real
command meter."""

from __future__ import annotations

import json
import threading

import pytest
from iowatt_agent.measured import run_measured
from iowatt_agent.power import PowerSession
from iowatt_agent.runner import EngineProcess

from tests.agent.meters import instruments as inst


@pytest.fixture
def make_proc(fake_engine, tmp_path, monkeypatch):
    def make(**fake: object) -> EngineProcess:
        monkeypatch.setenv("IOWATT_FAKE_ENGINE", json.dumps(fake))
        job = {"global": {"size": "1m", "filename": str(tmp_path / "data.dat")}, "jobs": [{"name": "a"}]}
        return EngineProcess(fake_engine, job, job_file=tmp_path / "job.json", progress_interval_s=0.1)

    return make


def meter_session(tmp_path, idle_s: float) -> PowerSession:
    prog = inst.write_program(tmp_path / "meter", "print(50.0)\n")
    return PowerSession(f"command:{prog}", idle_s=idle_s)


def test_three_phases_and_the_data_file_is_gone_before_idle_after(make_proc, tmp_path):
    data_file = tmp_path / "data.dat"
    data_file.write_bytes(b"x")
    seen_in_idle_after: list[bool] = []

    def on_idle(phase: str, _elapsed: float, _planned: float) -> None:
        if phase == "idle_after":
            seen_in_idle_after.append(data_file.exists())

    measured = run_measured(
        make_proc(fake_duration_s=0.2),
        meter_session(tmp_path, idle_s=0.3),
        stop=threading.Event(),
        data_file=data_file,
        on_idle=on_idle,
        tick_s=0.05,
    )
    assert measured.outcome is not None and measured.outcome.ok
    assert measured.power is not None and measured.power["status"] == "ok"
    assert [p["name"] for p in measured.power["phases"]] == ["idle_before", "load", "idle_after"]
    assert seen_in_idle_after and not any(seen_in_idle_after)
    assert not data_file.exists() and not (tmp_path / "job.json").exists()


def test_a_stop_set_before_the_engine_keeps_it_from_starting(make_proc, tmp_path):
    record = tmp_path / "rec.json"
    stop = threading.Event()
    stop.set()
    for session in (None, meter_session(tmp_path, idle_s=30)):
        proc = make_proc(fake_record=str(record), fake_duration_s=30)
        measured = run_measured(proc, session, stop=stop, data_file=None)
        assert measured.outcome is None
        assert not proc.started.is_set() and not record.exists()
        if session is not None:
            assert measured.power is not None
            [idle_before] = measured.power["phases"]  # cut short at once, not 30 s
            assert idle_before["name"] == "idle_before"
            assert idle_before["end_ns"] - idle_before["start_ns"] < 1_000_000_000


def test_a_failed_engine_skips_idle_after_and_still_stops_the_meter(make_proc, tmp_path):
    measured = run_measured(
        make_proc(fake_mode="usage"),
        meter_session(tmp_path, idle_s=0.2),
        stop=threading.Event(),
        data_file=None,
    )
    assert measured.outcome is not None and not measured.outcome.ok
    assert measured.power is not None
    assert [p["name"] for p in measured.power["phases"]] == ["idle_before", "load"]
