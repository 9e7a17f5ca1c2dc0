"""Issue 14 through the whole platform: the file presets queued by name on the real API, dispatched by
the real Celery worker, run by the real agent and engine, then compared and laid out as the seeds'
tables (queued -> run -> compared)."""

import os
from collections.abc import Callable
from typing import Any

import pytest

from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]


def _preset(live: Stack, name: str) -> str:
    with live.api() as api:
        items = api.get("/workloads", params={"limit": 500}).json()["items"]
    return str(next(w["id"] for w in items if w["name"] == name))


def _queue(live: Stack, target: str, preset: str, scale: float) -> str:
    live.allow(target)
    with live.api() as api:
        r = api.post(
            "/runs",
            json={
                "agent_id": live.agent_id,
                "target_path": target,
                "workload_id": _preset(live, preset),
                "scale": scale,
                "name": f"e2e {preset}",
                # no idle baseline: not a test about energy (docs/testing.md)
                "idle_s": 0,
            },
        )
        assert r.status_code == 201, r.text
        return str(r.json()["id"])


def _metric(compare: dict[str, Any], job: str, kind: str) -> dict[str, Any]:
    rows = {j["name"]: j for j in compare["jobs"]}
    assert job in rows, sorted(rows)
    return next(m for m in rows[job]["metrics"] if m["kind"] == kind)


def test_postmark_presets_are_queued_run_compared_and_tabled(
    live: Stack, var_tmp: Callable[[str], str]
) -> None:
    target = var_tmp("iowatt-e2e-pm-")
    # postmark-low (seed 000 Table 1: 10,000 files, 50,000 transactions of 327 KB files) at 1/200:
    # 50 files and 250 transactions, a few MB
    run_ids = [_queue(live, target, "postmark-low", 0.005) for _ in range(2)]
    runs = [live.wait(r, timeout_s=240) for r in run_ids]
    for run in runs:
        assert run["status"] == "succeeded", run["error"]
        fw = run["file_workload"]
        assert fw is not None and fw["mode"] == "postmark"
        assert run["workload"]["scaled_by"] == pytest.approx(0.005)
    with live.api() as api:
        result = api.get(f"/runs/{run_ids[0]}/result").json()["engine_result"]
        pm = result["postmark"]
        # every transaction accounted for: created = initial + created by transactions, all deleted at the end
        assert pm["transactions"] == 250
        assert pm["files_created"] == pm["files_deleted"]
        assert pm["files_created"] >= 50
        # the same seed and parameters: the two runs did exactly the same operations
        other = api.get(f"/runs/{run_ids[1]}/result").json()["engine_result"]["postmark"]
        for key in ("files_created", "files_read", "files_appended", "files_deleted"):
            assert pm[key] == other[key], key

        compare = api.get("/compare", params={"runs": ",".join(run_ids)}).json()
        assert compare["comparability"]["verdict"] == "comparable", compare["comparability"]
        elapsed = _metric(compare, "all operations", "time")
        assert all(v is not None and v > 0 for v in elapsed["values"]), elapsed
        assert elapsed["changes"][0] is None  # the baseline column
        assert elapsed["changes"][1] is not None and elapsed["changes"][1]["phrase"]

        view = api.get("/views/table", params={"view": "postmark-levels", "runs": ",".join(run_ids)})
        assert view.status_code == 200, view.text
        table = view.json()
        assert table["view"]["name"] == "postmark-levels"
        units = {c["unit"] for row in table["rows"] for c in row["cells"] if c["value"] is not None}
        assert "ns" in units and "op/s" in units, units
    # the agent removed its run directory: the target is as found
    assert os.listdir(target) == []


def test_a_vdbench_preset_is_queued_run_and_tabled(live: Stack, var_tmp: Callable[[str], str]) -> None:
    target = var_tmp("iowatt-e2e-vd-")
    # 3 % of the preset's scale: its 64 threads for 1.1 s instead of 36 s (59 CPU-s on two cores,
    # the suite's largest single program), as tests/agent/test_bench_file_presets.py runs it
    run_id = _queue(live, target, "vdbench-small", 0.03)
    run = live.wait(run_id, timeout_s=300)
    assert run["status"] == "succeeded", run["error"]
    with live.api() as api:
        fs = api.get(f"/runs/{run_id}/result").json()["engine_result"]["fileset"]
        ops = fs["total"]["ops"]
        assert ops["read"]["ops"] > 0 and ops["write"]["ops"] > 0  # seed 001's small set: rdpct=90
        assert fs["cleanup"]["files_removed"] == fs["files_created"]
        series = api.get(f"/runs/{run_id}/series").json()
        assert series["file_intervals"], "the run page's per-interval series"
        flags = {
            f["flag"]
            for f in api.get("/compare", params={"runs": run_id, "force": "true"}).json()["validity"][run_id]
        }
        # a file set of a few MB always fits in this machine's RAM
        assert "cache_resident" in flags, flags
        view = api.get("/views/table", params={"view": "vdbench-filesets", "runs": run_id})
        assert view.status_code == 200, view.text
    assert os.listdir(target) == []
