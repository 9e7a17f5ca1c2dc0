"""`iowatt-agent bench --preset NAME` for the presets that are fio job files (issue 29: `writeback`,
`qos-*`): the preset's text runs as `bench FILE.fio` runs a file, with the page cache record in the
document; the job file runs as written (an engine option or --scale exits 2)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent import cli, presets
from iowatt_agent.bench import preset_kind
from typer.testing import CliRunner

from tests.agent.test_file_workloads import REAL_ENGINE

runner = CliRunner()
pytestmark = pytest.mark.skipif(
    not os.access(REAL_ENGINE, os.X_OK), reason=f"the real engine is not built ({REAL_ENGINE})"
)
SMALL = "[global]\nioengine=psync\nstonewall\n\n[w]\nrw=write\nbs=64k\nsize=1m\ndirect=0\nend_fsync=1\n"


def test_the_shipped_job_file_presets_are_job_files() -> None:
    for name in ("writeback", "qos-randread-4k", "qos-randrw-70-30"):
        assert preset_kind(name) == "jobfile", name
        assert "[global]" in presets.get(name)["engine_job"]["text"]


def test_a_job_file_preset_runs_with_its_page_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    shipped = presets.load()
    small: dict[str, Any] = {
        "description": "a small job file",
        "passes": 1,
        "discard_passes": 0,
        "engine_job": {"mode": "jobfile", "text": SMALL},
    }
    monkeypatch.setattr(presets, "load", lambda: {**shipped, "jf-test": small})
    args = ["bench", "--engine", str(REAL_ENGINE), "--target", str(tmp_path), "--preset"]
    r = runner.invoke(cli.app, [*args, "jf-test", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [j["jobname"] for j in doc["jobs"]] == ["w"]
    assert (
        doc["page_cache"]["samples"]["t_ns"] and doc["page_cache"]["settings"]["dirty_ratio_pct"] is not None
    )
    assert list(tmp_path.iterdir()) == []  # the data file went with the run
    r = runner.invoke(cli.app, [*args, "writeback", "--size=1m"])
    assert r.exit_code == 2 and "runs as written" in r.output
