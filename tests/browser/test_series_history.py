"""A series' history page in Chromium at 1440×900 with 10 and 1,000 points. A real run on the
shared stack joins its series through the worker (the result stored, `series.track_run` queued
after commit); the two series drawn are written straight into the stack's database
(series_seed.py: noise, a drop, runs left out, a kernel change, a change found), then
tests/browser/series.mjs checks the chart, its marks and a point's links and times the page."""

import re
import shutil
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from tests.browser.series_seed import seed_series
from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]

SMALL = {
    "jobs": [
        {
            "name": "r",
            "rw": "randread",
            "bs_bytes": 4096,
            "size_bytes": 1 << 20,
            "runtime_s": 1,
            "direct": False,
        }
    ]
}


def test_series_history_with_10_and_1000_points_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    target = tempfile.mkdtemp(prefix="iowatt-series-", dir="/dev/shm")
    try:
        rid = live.queue(target, workload=SMALL, name="series: a real run")
        assert live.wait(rid)["status"] == "succeeded"
        with live.api() as api:
            deadline = time.monotonic() + 30
            while not (found := api.get("/series", params={"run_id": rid}).json())["total"]:
                assert time.monotonic() < deadline, "the run joined no series (series.track_run)"
                time.sleep(0.5)
            run = api.get(f"/runs/{rid}").json()
            verdict = api.get(f"/series/{found['items'][0]['id']}/verdict", params={"run": rid}).json()
            assert verdict["status"] in ("excluded", "insufficient_history"), verdict  # a 1 s run: short
        db = live.commands["api"][1]["IOWATT_DATABASE_URL"].replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(db, autocommit=True) as conn:
            ids = {
                n: seed_series(
                    conn,
                    team_id=run["team_id"],
                    agent_id=run["agent_id"],
                    device_id=run["device_id"],
                    n=n,
                    name=f"series: {n} synthetic runs",
                )
                for n in (10, 1000)
            }
        report = _node(
            "tests/browser/series.mjs",
            live,
            tmp_path,
            IOWATT_SERIES_SETS=";".join(f"{n}:{sid}" for n, sid in ids.items()),
        )
        assert set(re.findall(r"timing (\d+) runs: \d+ ms", report)) == {"10", "1000"}, report
        print(report)
        for n in ids:
            _shot(report, tmp_path, f"series-{n}")
    finally:
        shutil.rmtree(target, ignore_errors=True)
