"""The file presets through the whole platform (issue 14): queued by name with a run's scale, leased by
the real worker to the real agent, run by the real engine in a tmpfs directory, and read back."""

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]


def _queue_preset(live: Stack, target: str, preset: str, scale: float) -> str:
    live.allow(target)
    with live.api() as api:
        wl = next(w for w in api.get("/workloads").json()["items"] if w["name"] == preset)
        body: dict[str, Any] = {
            "agent_id": live.agent_id,
            "target_path": target,
            "workload_id": wl["id"],
            "scale": scale,
            "idle_s": 0,
        }
        r = api.post("/runs", json=body)
        assert r.status_code == 201, r.text
        return str(r.json()["id"])


def test_postmark_and_vdbench_presets_run_end_to_end(live: Stack) -> None:
    target = tempfile.mkdtemp(prefix="iowatt-e2e-files-", dir="/dev/shm")
    try:
        pm_id = _queue_preset(live, target, "postmark-low", 0.002)  # 20 files, 100 transactions
        vdb_id = _queue_preset(live, target, "vdbench-small", 0.01)  # scale 0.00001: 64 files for 1 s
        pm, vdb = live.wait(pm_id, timeout_s=300), live.wait(vdb_id, timeout_s=300)
        assert pm["status"] == "succeeded", pm["error"]
        assert vdb["status"] == "succeeded", vdb["error"]
        assert (pm["workload"]["postmark"]["number"], pm["workload"]["scaled_by"]) == (20, 0.002)
        assert pm["workload"]["facts"]["files"] == 20
        assert vdb["workload"]["vdbench"]["scale"] == pytest.approx(1e-5)
        with live.api() as api:
            doc = api.get(f"/runs/{pm_id}/result").json()["engine_result"]
            assert doc["postmark"]["files_created"] >= 20 and doc["postmark"]["transactions"] == 100
            assert doc["postmark"]["files_deleted"] == doc["postmark"]["files_created"]
            doc = api.get(f"/runs/{vdb_id}/result").json()["engine_result"]
            assert doc["fileset"]["scale"] == pytest.approx(1e-5)
            assert doc["fileset"]["fsd"][0]["total_files"] == vdb["workload"]["facts"]["files"]
        assert list(Path(target).iterdir()) == []  # the engine and the agent removed what they made
    finally:
        shutil.rmtree(target, ignore_errors=True)
