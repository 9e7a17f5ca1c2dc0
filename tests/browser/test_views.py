"""Named views in Chromium at 1440×900 (issue 12): the CrystalDiskMark grid from a real run, the
seed tables side by side with their Ratio, the charts of the sweeps. The runs are real: the
presets' own jobs, shortened (0.1 s per pass, 4 MiB files), run by the stack's agent and engine."""

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from backend.workload.builtin import BUILTINS
from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-c")]

MiB = 1024 * 1024


def _short(preset: str) -> dict[str, Any]:
    spec = BUILTINS[preset][1]
    jobs = []
    for j in spec.jobs:
        upd: dict[str, Any] = {"size_bytes": max(4 * MiB, 2 * (j.bs_bytes or 0))}
        if j.time_based:
            # 0.1 s a pass: what the views check is each job's figures, never how long it ran
            # (at 0.2 s its 15 real runs cost ~5 CPU-s and ~30 s of wall more: docs/testing.md § Session 21)
            upd["runtime_s"] = 0.1
        if j.io_size_bytes is not None:
            upd["io_size_bytes"] = 4 * MiB
        jobs.append(j.model_copy(update=upd))
    return spec.model_copy(update={"jobs": jobs}).model_dump(mode="json")


def _run(live: Stack, target: str, preset: str, name: str) -> str:
    with live.api() as api:
        r = api.post(
            "/runs",
            json={
                "agent_id": live.agent_id,
                "target_path": target,
                "workload": _short(preset),
                "name": name,
                "idle_s": 0,
            },
        )
        assert r.status_code == 201, r.text
        return str(r.json()["id"])


def test_named_views_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    a = tempfile.mkdtemp(prefix="iowatt-views-a-", dir="/var/tmp")
    b = tempfile.mkdtemp(prefix="iowatt-views-b-", dir="/var/tmp")
    mem = tempfile.mkdtemp(prefix="iowatt-views-mem-", dir="/dev/shm")  # tmpfs: seed 004's memory
    try:
        for d in (a, b, mem):
            live.allow(d)
        plan = {
            "cdm": [(a, "crystaldiskmark")],
            "legacy": [(a, "crystaldiskmark-legacy"), (b, "crystaldiskmark-legacy")],
            "threads": [(a, "threads-latency"), (b, "threads-latency")],
            "kh": [(a, "kernel-help")],
            # eight devices side by side (many columns): alternating targets, so names repeat too;
            # the last is memory through the page cache (the buffered variant), labelled so
            "dfm": [(a if i % 2 == 0 else b, "seq-rand-table") for i in range(7)]
            + [(mem, "seq-rand-table-buffered")],
            "sweep": [(a, "diskspd-bs-sweep")],
        }
        ids = {k: [_run(live, t, p, f"views: {p} {Path(t).name}") for t, p in v] for k, v in plan.items()}
        for rid in [r for v in ids.values() for r in v]:
            assert live.wait(rid, timeout_s=300)["status"] == "succeeded"
        with live.api() as api:
            t = api.get("/views/table", params={"view": "crystaldiskmark", "runs": ids["cdm"][0]}).json()
            views = len(api.get("/views").json()["views"])  # the server's catalogue decides the count
        keys = [c["key"] for c in t["columns"]]
        first = dict(zip(keys, [c["value"] for c in t["rows"][0]["cells"]], strict=True))
        report = _node(
            "tests/browser/views.mjs",
            live,
            tmp_path,
            IOWATT_VIEW_RUNS=";".join(f"{k}={','.join(v)}" for k, v in ids.items()),
            # B/s on the wire, MB/s (10^6 B/s) on the page, as CrystalDiskMark prints
            IOWATT_VIEW_FIRST_READ=str(round(first["read_best_mbps"] / 1e6, 2)),
            IOWATT_VIEW_COUNT=str(views),
        )
        assert "crystaldiskmark grid" in report
        timing = [line for line in report.splitlines() if line.startswith("timing kernel-help run page")]
        assert timing, report
        print(timing[0])  # measured, not asserted: docs/benchmarks.md
        for shot in (
            "views-cdm-1",
            "views-cdm-table",
            "views-threads",
            "views-kernel-help",
            "views-dfm-8",
            "views-run-kernel-help",
            "views-run-cdm",
        ):
            _shot(report, tmp_path, shot)
    finally:
        for d in (a, b, mem):
            shutil.rmtree(d, ignore_errors=True)
