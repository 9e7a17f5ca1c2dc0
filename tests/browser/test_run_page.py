"""The run page in Chromium at 1440x900 with real runs on the real platform (issue 12): summary
and system with validity flags, latency percentiles, one-click engine JSON, clone and re-run,
live progress with phases, ETA and a per-second chart, comparison by target, logout revokes."""

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-d")]


def _job(name: str, runtime_s: int, rw: str = "randread") -> dict[str, object]:
    return {
        "name": name,
        "rw": rw,
        "bs_bytes": 4096,
        "size_bytes": 16 * 1024 * 1024,
        "runtime_s": runtime_s,
        "time_based": True,
        "direct": True,
    }


def test_run_page_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    # three directories of one disk: a comparison by device sees one column, by target three
    dirs = [tempfile.mkdtemp(prefix=f"iowatt-run-page-{k}-", dir="/var/tmp") for k in "abc"]
    try:
        short = {"jobs": [_job("rand4k", 2)]}
        ids = [live.queue(d, workload=short, name=f"run page: {Path(d).name}") for d in dirs]
        ids.append(live.queue(dirs[0], workload=short, name="run page: repeat"))
        for rid in ids:
            assert live.wait(rid)["status"] == "succeeded"
        # the live run: a 2 s idle baseline, then one 15 s job
        with live.api() as api:
            body = {
                "agent_id": live.agent_id,
                "target_path": dirs[1],
                "workload": {"jobs": [_job("long-randread", 20)]},
                "name": "run page: live",
                "idle_s": 3,
            }
            r = api.post("/runs", json=body)
            assert r.status_code == 201, r.text
            live_id = r.json()["id"]
        report = _node(
            "tests/browser/run_page.mjs",
            live,
            tmp_path,
            IOWATT_RUN_ID=ids[0],
            IOWATT_LIVE_RUN_ID=live_id,
            IOWATT_RUN_IDS=",".join(ids),
        )
        assert "log out revokes the session token" in report
        assert live.wait(live_id)["status"] == "succeeded"
        for shot in ("M-run-live", "M-run-page", "M-compare-by-target", "M-runs"):
            _shot(report, tmp_path, shot)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
