"""The runs list in Chromium at 1440x900 (issue 13, V3) with 2 and then 40 runs uploaded from CI
(POST /api/v1/results, a real fio document): server-side filters synced to the URL, paging totals,
the empty state, tag chips and tag editing on the run page."""

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]

FIO = json.loads((Path(__file__).parents[1] / "backend" / "data" / "upload-fio-randread.json").read_text())
# the newest run's name goes on: the list shows two lines of it, the whole on hover
LONG_NAME = (
    ": procurement candidate Samsung PM9A3 3.84 TB in RAID10 over four bays, ext4 noatime, kernel 6.1, "
    "firmware GDC7302Q, second pass after the controller swap"
)
DEVICES = [("Samsung SSD 990 PRO 2TB", "ssd"), ("WDC WD40EFRX 4TB", "hdd"), ("Intel Optane P5800X", "ssd")]


def _upload(live: Stack, team_id: str, k: int) -> str:
    model, media = DEVICES[k % 3]
    body: dict[str, Any] = {
        "team_id": team_id,
        "upload_id": f"browser-{k}-{uuid.uuid4().hex[:6]}",
        "host": f"ci-runner-{k % 2 + 1}",
        "device": {"model": model, "serial": f"SN{k % 3:04d}", "media": media},
        "name": f"nightly randread #{k + 1}" + (LONG_NAME if k == 39 else ""),
        "engine_result": FIO,
        "started_at": f"2026-11-{1 + k % 20:02d}T10:00:00Z",
        "finished_at": f"2026-11-{1 + k % 20:02d}T10:00:02Z",
        "tags": ["nightly", media] + (["fw 2.1"] if k % 4 == 0 else []),
    }
    with live.api() as api:
        r = api.post("/results", json=body)
        assert r.status_code == 201, r.text
        return str(r.json()["run_id"])


def test_runs_list_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    with live.api() as api:
        team_id = api.get("/auth/me").json()["teams"][0]["id"]
        base = api.get("/runs", params={"limit": 1}).json()["total"]  # other browser tests' runs
    for k in range(2):
        _upload(live, team_id, k)
    # one browser: two runs, then (while the script waits) 38 more
    report = _node(
        "tests/browser/runs_list.mjs",
        live,
        tmp_path,
        pauses={"forty": lambda: [_upload(live, team_id, k) for k in range(2, 40)]},
        IOWATT_RUNS_PHASE="two,forty",
        IOWATT_RUNS_BASE=str(base),
    )
    assert "a member edits a run's tags on its page" in report
    for shot in ("V3-runs-2", "V3-runs-empty", "V3-runs-40", "V3-runs-filtered", "V3-run-tags"):
        _shot(report, tmp_path, shot)
