"""multi.EngineGroup: a multi-target run's engines, one per target, run together (the fake
engine: no I/O). Every target's document kept apart; one that fails stops the others and the run
fails naming it; progress goes out once, with every target's rates, and moves to the next target
when the first ends; the lease's targets checked before anything runs."""

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from iowatt_agent.multi import EngineGroup, target_leases
from iowatt_agent.plan import Refused
from iowatt_agent.runner import EngineProcess, EngineProgress
from iowatt_agent.schemas import Lease
from iowatt_policy import MAX_TARGETS


def _group(engine: Path, tmp_path: Path, *modes: tuple[str, float]) -> EngineGroup:
    procs = [
        EngineProcess(
            engine,
            {
                "global": {"filename": str(tmp_path / f"t{i}.bin"), "fake_mode": mode, "fake_duration_s": s},
                "jobs": [{"name": "j1", "rw": "randread", "bs": "4k"}],
            },
            job_file=tmp_path / f"job-{i}.json",
            timeout_s=30,
            progress_interval_s=0.1,
        )
        for i, (mode, s) in enumerate(modes)
    ]
    return EngineGroup(
        procs, [f"/t{i}" for i in range(len(procs))], [tmp_path / f"t{i}.bin" for i in range(len(procs))]
    )


def test_every_targets_document_is_kept_and_progress_goes_out_once(fake_engine: Path, tmp_path: Path) -> None:
    # long enough to overlap, and for the second to run alone after, on a loaded machine too
    group = _group(fake_engine, tmp_path, ("ok", 1.5), ("ok", 2.5))
    sent: list[EngineProgress] = []
    group.forward_progress(lambda p: sent.append(p) or False)
    outcome = group.run()
    assert outcome.ok and outcome.target_results is not None and len(outcome.target_results) == 2
    assert all(doc["jobs"][0]["read"]["total_ios"] == 250 for doc in outcome.target_results)
    assert sent, "progress reported"
    # while both ran, one report carried both targets' rates (the fake engine reports ~1,000 IOPS each)
    assert max(p.read_iops for p in sent) > 1500
    # the second target, running alone at the end, still kept the reports (and the lease) going
    assert sent[-1].read_iops < 1500
    assert not (tmp_path / "t1.bin").exists() and not (tmp_path / "job-1.json").exists()


def test_a_failing_target_stops_the_others_and_is_named(fake_engine: Path, tmp_path: Path) -> None:
    group = _group(fake_engine, tmp_path, ("ok", 20.0), ("fail", 0.2))
    outcome = group.run()
    assert not outcome.ok and outcome.target_results is None
    assert outcome.error is not None and outcome.error.startswith("target 1 (/t1): ")


def _lease(targets: list[str] | None, target_path: str = "/a") -> Lease:
    return Lease(
        run_id=uuid.uuid4(),
        lease_id=uuid.uuid4(),
        lease_expires_at=datetime.now(UTC),
        target_path=target_path,
        targets=targets,
        engine_job={"global": {}, "jobs": [{"name": "j"}]},
        timeout_s=60,
    )


def test_a_lease_s_targets_are_checked_before_anything_runs() -> None:
    leases = target_leases(_lease(["/a", "/b"]))
    assert [(one.target_path, one.targets) for one in leases] == [("/a", None), ("/b", None)]
    for bad in (["/a", "/a"], ["/b", "/a"], [f"/t{i}" for i in range(MAX_TARGETS + 1)]):
        with pytest.raises(Refused):
            target_leases(_lease(bad, target_path=bad[0] if bad[0] != "/b" else "/a"))
