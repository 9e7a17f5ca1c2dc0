"""A full spool disk never costs a finished benchmark (issue 11, scenario 9): the result is
uploaded directly; if that fails too the run is failed on the server at once with the real
reason; no temp file is left. The spool lives on a real, full tmpfs mounted for the test."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.spool import Delivery

from tests.agent.fakes import FakeApi, allow_targets, error, fake_lease_job


@pytest.fixture(autouse=True)
def _fake_directives(monkeypatch):
    monkeypatch.setenv("IOWATT_FAKE_ENGINE", "{}")


@pytest.fixture
def full_spool(tmp_path: Path) -> Iterator[Path]:
    """<state>/spool on a 64 KiB tmpfs filled to ENOSPC (rejected/ made before it filled up)."""
    spool = tmp_path / "state" / "spool"
    spool.mkdir(parents=True, mode=0o700)
    if os.geteuid() != 0:
        pytest.skip("a full spool needs root to mount a small tmpfs (not root here)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(spool)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs on the spool: {mounted.stderr.strip()}")
    try:
        (spool / "rejected").mkdir(mode=0o700)
        with open(spool / "filler", "wb", buffering=0) as f, contextlib.suppress(OSError):  # noqa: PTH123
            while True:
                f.write(b"\0" * 4096)
        with pytest.raises(OSError) as full:  # really full: a spool entry cannot be written
            (spool / "probe").write_bytes(b"x" * 4096)
        assert full.value.errno == errno.ENOSPC
        (spool / "probe").unlink()
        yield spool
    finally:
        subprocess.run(["umount", "-l", str(spool)], check=False)


def make_loop(api: FakeApi, agent_config, make_client, fake_engine: Path, tmp_path: Path) -> AgentLoop:
    allow_targets(tmp_path / "state", tmp_path / "target")
    return AgentLoop(
        agent_config,
        state_dir=tmp_path / "state",
        engine=fake_engine,
        client_factory=make_client,
        settings=LoopSettings(progress_interval_s=0.1, kill_grace_s=0.3),
        send_inventory=False,
    )


def leftovers(spool: Path) -> list[str]:
    return sorted(p.name for p in spool.iterdir() if p.name not in ("filler", "rejected"))


def test_a_full_spool_uploads_the_result_directly(
    api, agent_config, make_client, fake_engine, tmp_path, full_spool, agent_log
):
    (tmp_path / "target").mkdir()
    lease = api.add_lease(fake_lease_job(fake_duration_s=0.2), str(tmp_path / "target"))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "result"
    [stored] = api.results.values()
    assert api.results_by_run == {lease["run_id"]: stored["upload_id"]}
    assert stored["engine_result"]["jobs"][0]["jobname"] == "a"
    assert api.failures == {}
    assert leftovers(full_spool) == [] and loop.spool.pending() == []  # no temp file, nothing spooled
    assert "spool.write_failed" in agent_log.text and "No space left on device" in agent_log.text


def test_a_full_spool_and_a_failing_upload_fail_the_run_at_once_with_the_reason(
    api, agent_config, make_client, fake_engine, tmp_path, full_spool
):
    (tmp_path / "target").mkdir()
    lease = api.add_lease(fake_lease_job(fake_duration_s=0.2), str(tmp_path / "target"))
    api.script["PUT /api/v1/runs/.*/result"] = [error(503, "unavailable", "down for a moment")] * 3
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    got = loop.lease_once()
    assert got is not None
    plan_outcome = loop.execute(got)
    assert plan_outcome == "result"  # the engine succeeded; its result could not be kept
    assert api.results == {}
    assert len(api.calls_to("PUT /api/v1/runs/.*/result")) == 3  # the direct upload was tried
    [failure] = api.failures.values()
    assert failure["run_id"] == lease["run_id"] and failure["lease_id"] == lease["lease_id"]
    assert "spool write failed" in failure["reason"] and "No space left on device" in failure["reason"]
    assert "503" in failure["reason"] or "down for a moment" in failure["reason"]
    assert leftovers(full_spool) == [] and loop.spool.pending() == []


def test_a_full_spool_still_reports_a_failed_run(
    api, agent_config, make_client, fake_engine, tmp_path, full_spool
):
    (tmp_path / "target").mkdir()
    lease = api.add_lease(fake_lease_job(fake_mode="fail"), str(tmp_path / "target"))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    assert loop.execute(loop.lease_once()) == "failure"
    [failure] = api.failures.values()
    assert failure["run_id"] == lease["run_id"] and failure["exit_code"] == 1
    assert leftovers(full_spool) == []


def test_the_reporter_answers_retry_when_nothing_could_be_delivered(
    api, agent_config, make_client, fake_engine, tmp_path, full_spool
):
    """Server down too: nothing more can be done here; the lease expiry fails the run later."""
    (tmp_path / "target").mkdir()
    api.add_lease(fake_lease_job(fake_duration_s=0.1), str(tmp_path / "target"))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    lease = loop.lease_once()
    assert lease is not None
    api.script["PUT /api/v1/runs/.*/result"] = [error(503, "unavailable", "down")] * 3
    api.script["POST /api/v1/runs/.*/failure"] = [error(503, "unavailable", "down")] * 3
    outcomes: list[Delivery] = []
    original = loop.reporter.result

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        outcomes.append(original(*args, **kwargs))
        return outcomes[-1]

    loop.reporter.result = spy  # type: ignore[method-assign]
    assert loop.execute(lease) == "result"
    assert outcomes == [Delivery.RETRY] and api.results == {} and api.failures == {}
    assert len(api.calls_to("POST /api/v1/runs/.*/failure")) == 3
    assert leftovers(full_spool) == []


def test_a_run_the_agent_cannot_start_is_failed_at_once_with_the_reason(
    api, agent_config, make_client, fake_engine, tmp_path
):
    """Any error of the agent's own during a run (here: its job file cannot be written) fails the
    run on the server now, not when the lease expires minutes later."""
    (tmp_path / "target").mkdir()
    lease = api.add_lease(fake_lease_job(fake_duration_s=0.1), str(tmp_path / "target"))
    loop = make_loop(api, agent_config, make_client, fake_engine, tmp_path)
    (tmp_path / "state" / "jobs").write_text("not a directory")

    def drain_after_the_failure(method: str, path: str, body: object) -> None:
        if path.endswith("/failure"):
            loop.draining.set()

    api.on_request = drain_after_the_failure
    loop._work_loop()
    [failure] = api.failures.values()
    assert failure["run_id"] == lease["run_id"]
    assert failure["reason"].startswith("the agent failed while running it: ")
    assert "state/jobs" in failure["reason"]  # the real error, naming what failed
