"""At start the agent removes what a dead agent process left behind (issue 11, scenario 1): the
job files of its runs and their data files in the host's directory targets, and temp files of
interrupted writes; nothing else on the host, and it says what it removed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from iowatt_agent.leftovers import remove_leftovers
from iowatt_agent.loop import AgentLoop, LoopSettings

from tests.agent.fakes import allow_targets


def job_file(state: Path, run_id: uuid.UUID, filename: Path) -> Path:
    jobs = state / "jobs"
    jobs.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = jobs / f"{run_id}.json"
    path.write_text(json.dumps({"global": {"filename": str(filename)}, "jobs": [{"name": "a"}]}))
    return path


def test_a_dead_runs_job_and_data_file_go_and_nothing_else(tmp_path, agent_log):
    state, target, outside = tmp_path / "state", tmp_path / "target", tmp_path / "outside"
    for d in (target, outside):
        d.mkdir()
    allow_targets(state, target)
    dead = uuid.uuid4()
    data = target / f"iowatt-{dead}.dat"
    data.write_bytes(b"\0" * (1 << 20))
    dead_job = job_file(state, dead, data)
    # a data file not named by any job file (another agent's running run, say): kept
    other = target / f"iowatt-{uuid.uuid4()}.dat"
    other.write_bytes(b"x")
    mine = target / "keep.dat"  # the host's own file in the target directory: kept
    mine.write_bytes(b"x")
    # a job file naming a file outside every directory target: its job file goes, the file stays
    stray = uuid.uuid4()
    outside_file = outside / f"iowatt-{stray}.dat"
    outside_file.write_bytes(b"x")
    stray_job = job_file(state, stray, outside_file)
    # a job file naming a file that is not a run's data file (a file or device target): kept
    fixed = uuid.uuid4()
    fixed_job = job_file(state, fixed, mine)
    # a symlink swapped in for a data file: the link goes, never what it points at
    linked = uuid.uuid4()
    victim = outside / "victim"
    victim.write_bytes(b"x")
    (target / f"iowatt-{linked}.dat").symlink_to(victim)
    linked_job = job_file(state, linked, target / f"iowatt-{linked}.dat")
    # an interrupted atomic write in the spool; a pending spool entry stays
    spool = state / "spool"
    spool.mkdir(mode=0o700)
    tmp = spool / ".20260101T000000Z-result-x.json.tmp-4242"
    tmp.write_text("{")
    pending = spool / "20260101T000000Z-result-x.json"
    pending.write_text("{}")

    removed = remove_leftovers(state)

    assert set(removed) == {
        data,
        dead_job,
        stray_job,
        fixed_job,
        target / f"iowatt-{linked}.dat",
        linked_job,
        tmp,
    }
    assert not data.exists() and not dead_job.exists() and not tmp.exists()
    assert other.exists() and mine.exists() and outside_file.exists() and victim.exists()
    assert pending.exists() and (state / "policy.json").exists()
    assert list((state / "jobs").iterdir()) == []
    for path in removed:
        assert f"leftovers.removed path={path}" in agent_log.text


def test_a_dead_multi_file_runs_directory_goes_with_its_files_links_not_followed(tmp_path, agent_log):
    """A job file whose jobs make files of their own runs in <target>/iowatt-<run_id> (its job
    file's `directory`): after a crash that directory goes with everything in it; a link inside is
    removed as a link; a directory of another name, or one outside the targets, stays."""
    state, target, outside = tmp_path / "state", tmp_path / "target", tmp_path / "outside"
    for d in (target, outside):
        d.mkdir()
    allow_targets(state, target)
    dead = uuid.uuid4()
    run_dir = target / f"iowatt-{dead}"
    run_dir.mkdir()
    (run_dir / "w.0.0").write_bytes(b"\0" * 4096)
    victim = outside / "victim"
    victim.write_bytes(b"x")
    (run_dir / "w.0.1").symlink_to(victim)
    jobs = state / "jobs"
    jobs.mkdir(parents=True, exist_ok=True, mode=0o700)
    dead_job = jobs / f"{dead}.json"
    dead_job.write_text(json.dumps({"global": {"directory": str(run_dir)}, "jobs": [{"name": "w"}]}))
    other = uuid.uuid4()  # a job file whose directory is not its run's: kept
    kept = target / "mine"
    kept.mkdir()
    (jobs / f"{other}.json").write_text(
        json.dumps({"global": {"directory": str(kept)}, "jobs": [{"name": "w"}]})
    )

    removed = remove_leftovers(state)

    assert run_dir in removed and dead_job in removed
    assert not run_dir.exists() and victim.exists() and kept.is_dir()


def test_an_unreadable_policy_keeps_the_data_file_and_its_job_file(tmp_path):
    state, target = tmp_path / "state", tmp_path / "target"
    target.mkdir()
    allow_targets(state, target)
    (state / "policy.json").chmod(0o666)  # group/world-writable: refused
    run_id = uuid.uuid4()
    data = target / f"iowatt-{run_id}.dat"
    data.write_bytes(b"x")
    job = job_file(state, run_id, data)
    assert remove_leftovers(state) == []
    assert data.exists() and job.exists()  # removed at a later start, once the policy reads


def test_the_agent_removes_leftovers_when_it_starts(api, agent_config, make_client, fake_engine, tmp_path):
    state, target = tmp_path / "state", tmp_path / "target"
    target.mkdir()
    allow_targets(state, target)
    run_id = uuid.uuid4()
    data = target / f"iowatt-{run_id}.dat"
    data.write_bytes(b"\0" * (8 << 20))
    job = job_file(state, run_id, data)
    loop = AgentLoop(
        agent_config,
        state_dir=state,
        engine=fake_engine,
        client_factory=make_client,
        settings=LoopSettings(lease_wait_s=1),
        send_inventory=False,
    )
    codes: list[int] = []
    runner = threading.Thread(target=lambda: codes.append(loop.run()), daemon=True)
    runner.start()
    deadline = time.monotonic() + 10
    while not api.heartbeats and time.monotonic() < deadline:
        time.sleep(0.02)
    assert api.heartbeats, "the agent did not start"
    assert not data.exists() and not job.exists()  # gone before the first heartbeat
    loop.request_drain("test")
    runner.join(15)
    assert codes == [0]


def test_an_engine_the_dead_agent_left_running_is_killed_and_nothing_else(tmp_path, agent_log):
    state, target = tmp_path / "state", tmp_path / "target"
    target.mkdir()
    allow_targets(state, target)
    run_id = uuid.uuid4()
    job = job_file(state, run_id, target / f"iowatt-{run_id}.dat")
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    # as the agent starts its engine: its own session, `--progress=jsonl ... JOB_FILE`
    engine = subprocess.Popen([*sleep, "--progress=jsonl", str(job)], start_new_session=True)
    # the same command line, not leading its own group: not an engine the agent started
    decoy = subprocess.Popen([*sleep, "--progress=jsonl", str(job)])
    # a group leader naming the job file without the engine's options (`less JOB_FILE`, say)
    reader = subprocess.Popen([*sleep, str(job)], start_new_session=True)
    try:
        wait_until_running = time.monotonic() + 10
        while time.monotonic() < wait_until_running:
            cmdlines = [Path(f"/proc/{p.pid}/cmdline").read_bytes() for p in (engine, decoy, reader)]
            if all(str(job).encode() in c for c in cmdlines):
                break
            time.sleep(0.02)
        remove_leftovers(state)
        assert engine.wait(10) == -signal.SIGKILL
        assert decoy.poll() is None and reader.poll() is None
        assert f"leftovers.engine_killed pid={engine.pid}" in agent_log.text
        assert not job.exists()
    finally:
        for p in (engine, decoy, reader):
            p.kill()
            p.wait()
