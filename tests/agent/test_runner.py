from __future__ import annotations

import json
import os
import time
from pathlib import Path

from iowatt_agent.engine import locate_engine
from iowatt_agent.policy import engine_job_for
from iowatt_agent.runner import EngineProcess, EngineProgress, cleanup_target, parse_progress_line
from iowatt_policy import ReportedPolicy, Target, check_run


def job(tmp_path: Path, **global_opts) -> dict:
    return {
        "global": {"filename": str(tmp_path / "data.bin"), **global_opts},
        "jobs": [{"name": "j1", "rw": "randread", "bs": "4k"}],
    }


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purpose
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_parse_progress_line():
    line = json.dumps(
        {
            "event": "progress",
            "job": "a",
            "job_index": 1,
            "elapsed_ns": 5,
            "planned_ns": None,
            "percent": 150,
            "read_iops": 2.5,
            "read_bw_bytes": 10,
            "write_iops": 0,
            "write_bw_bytes": 0,
        }
    )
    p = parse_progress_line(line)
    assert p == EngineProgress(1, "a", 100.0, 5, None, 2.5, 10, 0.0, 0)
    assert isinstance(p.read_bw_bytes, int)
    frac = parse_progress_line(json.dumps({"event": "progress", "read_bw_bytes": 10.6, "write_iops": -1}))
    assert frac is not None and frac.read_bw_bytes == 11 and frac.write_iops == 0.0
    assert parse_progress_line("iowatt-engine: hello") is None
    assert parse_progress_line('{"event": "other"}') is None
    assert parse_progress_line("{broken") is None


def test_success_parses_result_and_forwards_progress_throttled(fake_engine, tmp_path):
    seen: list[tuple[float, EngineProgress]] = []
    record = tmp_path / "record.json"
    proc = EngineProcess(
        fake_engine,
        job(tmp_path, fake_duration_s=1.2, fake_record=str(record)),
        job_file=tmp_path / "job.json",
        timeout_s=30,
        on_progress=lambda p: seen.append((time.monotonic(), p)),
        progress_interval_s=0.3,
    )
    outcome = proc.run()
    assert outcome.ok, outcome.error
    assert outcome.result["jobs"][0]["read"]["iops"] == 1000.0
    assert outcome.messages == ["iowatt-engine: laying out file"]
    # ~20 progress lines were printed, forwarding is throttled to one per interval
    assert 2 <= len(seen) <= 5
    gaps = [b[0] - a[0] for a, b in zip(seen, seen[1:], strict=False)]
    assert all(g >= 0.25 for g in gaps)
    assert seen[-1][1].read_iops > seen[0][1].read_iops  # the latest line each time
    rec = json.loads(record.read_text())
    assert rec["argv"][1:3] == ["--output-format=json", "--progress=jsonl"]
    assert rec["pgid"] == rec["pid"] == rec["sid"]  # own session and process group
    assert rec["pgid"] != os.getpgrp()


def test_usage_error_exit_2_keeps_message(fake_engine, tmp_path):
    outcome = EngineProcess(fake_engine, job(tmp_path, fake_mode="usage"), job_file=tmp_path / "j.json").run()
    assert outcome.exit_code == 2 and not outcome.ok
    assert "--bs: invalid value" in outcome.error
    assert "--bs: invalid value" in outcome.stderr_tail


def test_invalid_json_is_a_failure(fake_engine, tmp_path):
    outcome = EngineProcess(
        fake_engine, job(tmp_path, fake_mode="garbage", fake_duration_s=0.1), job_file=tmp_path / "j.json"
    ).run()
    assert outcome.exit_code == 0 and not outcome.ok
    assert "invalid JSON" in outcome.error


def test_timeout_kills_the_whole_process_group(fake_engine, tmp_path):
    pidfile = tmp_path / "pids"
    proc = EngineProcess(
        fake_engine,
        job(tmp_path, fake_mode="child", fake_pidfile=str(pidfile)),
        job_file=tmp_path / "j.json",
        timeout_s=1.0,
        kill_grace_s=0.3,
    )
    t0 = time.monotonic()
    outcome = proc.run()
    elapsed = time.monotonic() - t0
    engine_pid, child_pid = map(int, pidfile.read_text().split())
    assert outcome.timed_out and not outcome.ok
    assert "timeout" in outcome.error
    assert outcome.term_signal == 9 and outcome.exit_code is None  # ignored SIGTERM, got SIGKILL
    assert elapsed < 5
    deadline = time.monotonic() + 3
    while alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(engine_pid)
    assert not alive(child_pid), "the engine's child survived the group kill"


def test_cancel_requested_by_progress_answer(fake_engine, tmp_path):
    calls = []

    def on_progress(p):
        calls.append(p)
        return len(calls) >= 2  # the server says cancel on the second report

    proc = EngineProcess(
        fake_engine,
        job(tmp_path, fake_mode="hang"),
        job_file=tmp_path / "j.json",
        timeout_s=30,
        on_progress=on_progress,
        progress_interval_s=0.2,
        kill_grace_s=0.2,
    )
    outcome = proc.run()
    assert outcome.cancelled and not outcome.ok and not outcome.timed_out
    assert outcome.error == "cancelled by the server"
    assert len(calls) == 2


def test_progress_callback_errors_do_not_stop_the_run(fake_engine, tmp_path):
    def broken(_p):
        raise RuntimeError("server unreachable")

    outcome = EngineProcess(
        fake_engine,
        job(tmp_path, fake_duration_s=0.6),
        job_file=tmp_path / "j.json",
        on_progress=broken,
        progress_interval_s=0.1,
    ).run()
    assert outcome.ok


def test_missing_engine_binary(tmp_path):
    outcome = EngineProcess(tmp_path / "nope", job(tmp_path), job_file=tmp_path / "j.json").run()
    assert not outcome.ok and "cannot start" in outcome.error


def test_cleanup_target_removes_only_the_data_file_or_a_link_in_its_place(tmp_path):
    data = tmp_path / "iowatt-RUN.dat"
    data.write_bytes(b"x")
    cleanup_target(data)
    assert not data.exists()
    cleanup_target(data)  # already gone: fine
    cleanup_target(None)
    canary = tmp_path / "canary"
    canary.write_text("keep")
    data.symlink_to(canary)  # swapped in: the link goes, never what it points at
    cleanup_target(data)
    assert not data.is_symlink() and canary.read_text() == "keep"
    (tmp_path / "dir.dat").mkdir()
    cleanup_target(tmp_path / "dir.dat")
    assert (tmp_path / "dir.dat").is_dir()


def test_keepalive_reports_while_the_engine_is_silent(fake_engine, tmp_path):
    seen: list[EngineProgress] = []
    outcome = EngineProcess(
        fake_engine,
        job(tmp_path, fake_mode="silent", fake_duration_s=1.0),
        job_file=tmp_path / "j.json",
        on_progress=seen.append,
        progress_interval_s=0.1,
        keepalive_s=0.3,
    ).run()
    assert outcome.ok
    assert len(seen) >= 2
    assert all(p.read_iops == 0 and p.percent == 0 for p in seen)
    assert seen[-1].elapsed_ns > seen[0].elapsed_ns > 0


def test_no_keepalive_means_no_report_without_progress(fake_engine, tmp_path):
    seen: list[EngineProgress] = []
    outcome = EngineProcess(
        fake_engine,
        job(tmp_path, fake_mode="silent", fake_duration_s=0.6),
        job_file=tmp_path / "j.json",
        on_progress=seen.append,
        progress_interval_s=0.1,
    ).run()
    assert outcome.ok and seen == []


# A lease's job as the server renders it (backend/workload/schemas.py JobSpec.engine_options) with
# every engine option the platform supports set (spec version 2; issue 12).
EVERY_OPTION_JOB = {
    "name": "mixed",
    "rw": "randrw",
    "bs": "4096",
    "size": str(1 << 20),
    "offset": "0",
    "numjobs": "1",
    "iodepth": "2",
    "ioengine": "psync",
    "direct": "0",
    "stonewall": "1",
    "rwmixread": "70",
    "runtime": "300ms",
    "time_based": "1",
    "bssplit": "4k/70:8k/30",
    "rate_iops": "2000",
    "random_distribution": "zipf:1.2",
    "fsync": "8",
    "sync": "dsync",
    "randseed": "42",
    "loops": "2",
    "invalidate": "1",
    "fadvise_hint": "1",
}


def test_every_engine_option_of_a_lease_passes_policy_and_reaches_the_engine(tmp_path):
    engine = locate_engine()
    lease_job = {"global": {}, "jobs": [dict(EVERY_OPTION_JOB)]}
    policy = ReportedPolicy(targets=(Target(path=str(tmp_path), kind="directory", writable=True),))
    violations = check_run(
        policy, target_path=str(tmp_path), engine_job=lease_job, meter=None, destructive=False
    )
    assert violations == []
    target = policy.targets[0]
    job_file, data_file = engine_job_for(
        lease_job, target=target, resolved=str(tmp_path), run_key="r1", destructive=False
    )
    assert job_file["jobs"] == [EVERY_OPTION_JOB]  # passed on as the server wrote them
    proc = EngineProcess(engine, job_file, job_file=tmp_path / "job.json", timeout_s=60)
    outcome = proc.run()
    cleanup_target(data_file)
    assert outcome.ok, outcome.stderr_tail
    echoed = outcome.result["jobs"][0]["iowatt"]["options"]
    assert (echoed["randseed"], echoed["loops"], echoed["rate_iops"], echoed["fsync"]) == (42, 2, 2000, 8)
    assert echoed["random_distribution"] == "zipf" and echoed["rwmixread"] == 70
