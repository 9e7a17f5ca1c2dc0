"""A group member lays out its files and takes its idle baseline before it reports ready (ADR 0038,
issue 27): the real engine lays a read job's file out (`create_only`), and at the member's `ready`
the file is there, whole; the run at the instant reads it and the agent removes it after. A file
swapped in between the layout and the start is refused: the engine never starts on it. The server
is the fake one (its barrier answers at once); the engine is the real one (1 MiB jobs, milliseconds)."""

import json
import os
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent import layout
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.policy import save_policy
from iowatt_policy import Policy, Target

from tests.agent.fakes import FakeApi, Reply

ENGINE = Path(__file__).resolve().parents[2] / "agent" / "engine" / "build" / "iowatt-engine"
MiB = 1 << 20

pytestmark = pytest.mark.skipif(not os.access(ENGINE, os.X_OK), reason=f"{ENGINE} is not built (make engine)")


def _loop(api: FakeApi, agent_config: Any, make_client: Any, tmp_path: Path, target: Path) -> AgentLoop:
    target.mkdir()
    save_policy(tmp_path / "state", Policy(targets=(Target.directory(str(target)),)))
    return AgentLoop(
        agent_config,
        state_dir=tmp_path / "state",
        engine=ENGINE,
        client_factory=make_client,
        settings=LoopSettings(progress_interval_s=0.1, kill_grace_s=0.3),
        send_inventory=False,
    )


def _group_lease(api: FakeApi, target: Path, rw: str = "randread") -> dict[str, Any]:
    job = {"global": {"rw": rw, "bs": "4k", "size": "1m", "ioengine": "psync"}, "jobs": [{"name": "a"}]}
    group = {"group_id": str(uuid.uuid4()), "members": 2, "start_tolerance_ns": 5_000_000}
    return api.add_lease(job, str(target), group=group, idle_s=0)


def _barrier(api: FakeApi, run_id: str, at_ready: Any) -> None:
    """The server's barrier: `at_ready()` when the member reports ready, then the instant."""

    def ready() -> Reply:
        at_ready()
        start_at = datetime.now(UTC) + timedelta(milliseconds=20)
        return Reply(
            200,
            {"start_at": start_at.isoformat(), "stop": None, "server_time": datetime.now(UTC).isoformat()},
        )

    api.script[f"POST /api/v1/runs/{run_id}/ready"] = [ready]
    api.script[f"POST /api/v1/runs/{run_id}/started"] = [
        lambda: Reply(200, {"start_skew_ns": 0, "missed_start": False})
    ]


def test_the_file_is_laid_out_before_ready_and_read_at_the_instant(api, agent_config, make_client, tmp_path):
    target = tmp_path / "target"
    loop = _loop(api, agent_config, make_client, tmp_path, target)
    lease = _group_lease(api, target)
    data = target / f"iowatt-{lease['run_id']}.dat"
    seen: dict[str, Any] = {}

    def at_ready() -> None:
        st = os.lstat(data)
        seen["size"], seen["blocks"] = st.st_size, st.st_blocks * 512
        seen["progress_before_ready"] = len(api.progress)

    _barrier(api, lease["run_id"], at_ready)
    assert loop.execute(loop.lease_once()) == "result"
    # laid out whole before the member said it was ready (a read job's file is written)
    assert seen["size"] == MiB and seen["blocks"] >= MiB
    [stored] = api.results.values()
    job = stored["engine_result"]["jobs"][0]
    assert job["read"]["io_bytes"] == MiB and job["write"]["io_bytes"] == 0
    # the measured run found the file in place: the layout's writes are not in its figures
    assert stored["engine_result"]["iowatt"]["target"]["created"] is False
    assert list(target.iterdir()) == [] and list((tmp_path / "state" / "jobs").iterdir()) == []


def test_a_file_swapped_in_after_the_layout_is_never_run(api, agent_config, make_client, tmp_path):
    target = tmp_path / "target"
    outside = tmp_path / "precious.bin"
    outside.write_bytes(b"keep me" * 1000)
    loop = _loop(api, agent_config, make_client, tmp_path, target)
    lease = _group_lease(api, target, rw="randwrite")
    data = target / f"iowatt-{lease['run_id']}.dat"

    def swap() -> None:  # someone who can write the target directory links another file in
        data.unlink()
        os.link(outside, data)

    _barrier(api, lease["run_id"], swap)
    assert loop.execute(loop.lease_once()) == "failure"
    [failure] = api.failures.values()
    assert "was replaced before the start" in failure["reason"], failure
    assert outside.read_bytes() == b"keep me" * 1000 and api.results == {}


def test_layout_job_keeps_the_run_and_adds_create_only() -> None:
    job = {
        "global": {"rw": "read", "filename": "/t/iowatt-1.dat", "create_new": "1", "unlink": "1"},
        "jobs": [{"name": "a", "startdelay": "5"}, {"name": "b", "unlink": "1"}],
    }
    lay = layout.layout_job(job)
    assert lay["global"] == {
        "rw": "read",
        "filename": "/t/iowatt-1.dat",
        "create_new": "1",
        **layout.LAYOUT_OPTIONS,
    }
    assert lay["jobs"] == [{"name": "a", **layout.LAYOUT_OPTIONS}, {"name": "b", **layout.LAYOUT_OPTIONS}]
    main = layout.main_job(job)
    assert "create_new" not in main["global"] and main["global"]["unlink"] == "1"
    assert main["jobs"] == job["jobs"] and json.dumps(job)  # the lease's job itself is unchanged
    assert job["global"]["create_new"] == "1"


def test_a_multi_target_run_lays_every_target_out_before_the_engines_start(
    api, agent_config, make_client, tmp_path
):
    """The targets of one host started together (multi.EngineGroup) lay out first too: each
    target's measured run finds its file in place, and both are removed after."""
    target = tmp_path / "target"
    loop = _loop(api, agent_config, make_client, tmp_path, target)
    second = tmp_path / "second"
    second.mkdir()
    save_policy(
        tmp_path / "state",
        Policy(targets=(Target.directory(str(target)), Target.directory(str(second)))),
    )
    job = {"global": {"rw": "read", "bs": "4k", "size": "1m", "ioengine": "psync"}, "jobs": [{"name": "a"}]}
    api.add_lease(job, str(target), targets=[str(target), str(second)], idle_s=0)
    assert loop.execute(loop.lease_once()) == "result"
    [stored] = api.results.values()
    docs = [t["engine_result"] for t in stored["targets"]]
    assert [d["iowatt"]["target"]["created"] for d in docs] == [False, False]
    assert all(d["jobs"][0]["read"]["io_bytes"] == MiB for d in docs)
    assert list(target.iterdir()) == [] and list(second.iterdir()) == []


def test_the_idle_baseline_is_taken_after_the_layout_and_before_ready(
    api, agent_config, make_client, tmp_path
):
    """With a meter: the idle baseline's ticks come after the layout (the file is there) and before
    the member's `ready` (ADR 0038: lay out, take the idle baseline, then report ready)."""
    from tests.agent.fakes import set_meters

    target = tmp_path / "target"
    loop = _loop(api, agent_config, make_client, tmp_path, target)
    disks = sorted(d for d in os.listdir("/sys/block") if not d.startswith(("loop", "zram", "ram")))
    set_meters(tmp_path / "state", {"est": f"estimate:5,9.5?device={(disks or ['sda'])[0]}"})
    lease = _group_lease(api, target)
    lease["meter"], lease["idle_s"] = "est", 0.3
    data = target / f"iowatt-{lease['run_id']}.dat"
    idle_ticks: list[bool] = []  # the data file is there at each idle_before tick
    at_ready: list[int] = []

    def watch(method: str, path: str, body: Any) -> None:
        if path.endswith("/progress") and body.get("job_name") == "idle_before":
            idle_ticks.append(data.exists())

    api.on_request = watch
    _barrier(api, lease["run_id"], lambda: at_ready.append(len(idle_ticks)))
    assert loop.execute(loop.lease_once()) == "result"
    assert idle_ticks and all(idle_ticks), idle_ticks
    assert at_ready == [len(idle_ticks)]  # no idle_before tick after ready
    [stored] = api.results.values()
    phases = [p["name"] for p in stored["power"]["phases"]]
    assert phases[:2] == ["idle_before", "load"], phases
