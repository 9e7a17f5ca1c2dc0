"""The New run form in Chromium at 1440×900 with a real agent and engine (issue 12 "Forms"): each
server error at its own job's field in plain words, runs queued from the multi-job builder and from
a preset shortened ×0.1 (flagged on the run page), clone and re-run, a run on two targets at once
(a stale policy's third target refused on its own row); and the README's screenshots
from the same stack's real runs (tests/browser/new_run.mjs)."""

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from backend.workload.builtin import BUILTINS
from tests.browser.test_browser import _needs, _node, _shot, _shots_wanted
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-c")]

MiB = 1024 * 1024


def _compared() -> dict[str, Any] | None:
    """The two compared runs' workload: the `quick` preset when screenshots are drawn (the README's
    pictures), else its three jobs at 1 s on 8 MiB files (the pages need their results and series,
    not the preset's length)."""
    if _shots_wanted():
        return None
    spec = BUILTINS["quick"][1]
    # paced (rate_iops 100): the runs' seconds and points; unpaced, the three direct jobs cost the
    # engine 0.9 CPU-s on tmpfs and 0.4 on the disk, paced 0.1
    jobs = [
        j.model_copy(update={"runtime_s": 1.0, "size_bytes": 8 * MiB, "rate_iops": 100}) for j in spec.jobs
    ]
    return spec.model_copy(update={"jobs": jobs}).model_dump(mode="json")


def test_new_run_form_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    form = tempfile.mkdtemp(prefix="iowatt-new-run-", dir="/var/tmp")
    disk = tempfile.mkdtemp(prefix="iowatt-new-run-disk-", dir="/var/tmp")
    ram = tempfile.mkdtemp(prefix="iowatt-new-run-ram-", dir="/dev/shm")
    try:
        for d in (form, disk, ram):
            live.allow(d)
        work = _compared()
        ids = [live.queue(disk, work, "the machine's disk"), live.queue(ram, work, "RAM (/dev/shm)")]
        for rid in ids:
            assert live.wait(rid)["status"] == "succeeded"
        report = _node(
            "tests/browser/new_run.mjs",
            live,
            tmp_path,
            IOWATT_NR_TARGET=form,
            IOWATT_NR_TARGET2=ram,
            IOWATT_NR_COMPARE=",".join(ids),
        )
        assert "each server error at its own job's field" in report and "flags it" in report
        assert "the host's 422 on its own row, then one run on two" in report
        shots = ("N-new-run-errors", "N-new-run-builder", "N-run-shortened", "N-new-run-clone")
        for shot in (*shots, "N-new-run-targets-422", "N-run-two-targets"):
            _shot(report, tmp_path, shot)
    finally:
        for d in (form, disk, ram):
            shutil.rmtree(d, ignore_errors=True)
