"""fio job files in Chromium at 1440×900 (issue 24, ADR 0029): New run with a pasted and an
uploaded job file, the engine's jobs and refusals shown as typed, a real run queued from it on the
stack's agent, and the job file shown verbatim on the run page and on a saved workload's page
(tests/browser/job_files.mjs)."""

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-c")]

SAVED = "; saved\n[global]\nrw=read\nbs=8k\n\n[seq]\nsize=1m\n"


def test_job_files_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    target = tempfile.mkdtemp(prefix="iowatt-jobfiles-", dir="/dev/shm")
    upload = tmp_path / "uploaded.fio"
    upload.write_text("[uploaded]\nrw=read\nsize=1m\n")
    try:
        live.allow(target)
        with live.api() as api:
            team_id = api.get("/auth/me").json()["teams"][0]["id"]
            r = api.post(
                "/workloads",
                json={
                    "team_id": team_id,
                    "name": f"jobfile {Path(target).name}",
                    "spec": {"kind": "jobfile", "jobfile": {"text": SAVED}},
                },
            )
            assert r.status_code == 201, r.text
            assert r.json()["spec"]["jobfile"]["text"] == SAVED
            workload = r.json()["id"]
        report = _node(
            "tests/browser/job_files.mjs",
            live,
            tmp_path,
            IOWATT_JF_TARGET=target,
            IOWATT_JF_WORKLOAD=workload,
            IOWATT_JF_UPLOAD=str(upload),
        )
        assert "job-files: 6 passed, 0 failed" in report, report
        for shot in ("J-new-run-jobfile", "J-new-run-refused", "J-run-jobfile", "J-workload-jobfile"):
            _shot(report, tmp_path, shot)
        with live.api() as api:
            runs = api.get("/runs", params={"limit": 5}).json()["items"]
        mine = [r for r in runs if r["target_path"] == target]
        assert mine and mine[0]["workload"]["kind"] == "jobfile"
        assert mine[0]["workload"]["jobfile"]["text"].startswith("; two groups, as fio's examples")
    finally:
        shutil.rmtree(target, ignore_errors=True)
