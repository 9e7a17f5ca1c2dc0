"""Deletion and comments in Chromium on the real platform (issue 13, V4): a comment's XSS attempt
shows as text, a run deleted from its page is gone from the runs list, the team's delete dialog
offers the export and wants the exact name. Screenshots V4-*.png go to IOWATT_V4_SHOTS when set."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]


def test_delete_a_run_from_its_page(live: Stack, tmp_path: Path) -> None:
    _needs()
    disk = tempfile.mkdtemp(prefix="iowatt-delete-", dir="/var/tmp")
    try:
        job = {
            "name": "rand4k",
            "rw": "randread",
            "bs_bytes": 4096,
            "size_bytes": 16 * 1024 * 1024,
            "runtime_s": 1,
            "time_based": True,
            "direct": False,
            # paced: the page deletes a run, whatever its speed (unpaced, the engine spent
            # 0.2-0.5 CPU-s on each run's second of page-cache reads, paced 0.08)
            "rate_iops": 2000,
        }
        gone, keep = (live.queue(disk, workload={"jobs": [job]}, name=f"delete me {k}") for k in (1, 2))
        for rid in (gone, keep):
            assert live.wait(rid)["status"] == "succeeded"
        # an environment with notes that a run names: its deletion is a 409 saying so, then forced
        with live.api() as api:
            team_id = api.get("/auth/me").json()["teams"][0]["id"]
            env_name = f"lab {Path(disk).name[-6:]}"
            env = api.post(
                "/environments",
                json={"team_id": team_id, "name": env_name, "kind": "san", "notes": "rack 4, row B"},
            ).json()
            body = {
                "agent_id": live.agent_id,
                "target_path": disk,
                "workload": {"jobs": [job]},
                "environment_id": env["id"],
                "name": "in the lab",
            }
            r = api.post("/runs", json=body)
            assert r.status_code == 201, r.text
        assert live.wait(r.json()["id"])["status"] == "succeeded"
        report = _node(
            "tests/browser/deletion.mjs",
            live,
            tmp_path,
            IOWATT_DELETE_RUN=gone,
            IOWATT_KEEP_RUN=keep,
            IOWATT_ENV_NAME=env_name,
            IOWATT_OTHER_RUN=r.json()["id"],
        )
        assert "the deleted run is listed" not in report
        with live.api() as api:
            assert api.get(f"/runs/{gone}").status_code == 404
            assert api.get(f"/runs/{keep}").status_code == 200
            events = api.get(
                f"/teams/{api.get('/auth/me').json()['teams'][0]['id']}/audit",
                params={"action": "run.deleted"},
            ).json()["items"]
            assert [e["target_id"] for e in events] == [gone]
            assert env["id"] not in api.get("/environments").text
            assert api.get(f"/runs/{r.json()['id']}").json()["environment_id"] is None
        shots = os.environ.get("IOWATT_V4_SHOTS")
        for name in (
            "V4-run-comments",
            "V4-run-delete-dialog",
            "V4-runs-after-delete",
            "V4-team-delete-dialog",
            "V4-environment-in-use",
            "V4-devices",
            "V4-compare-comments",
            # issue 27 part 3: topology form, the run's recorded environment, compare by a field
            "E-environment-topology",
            "E-environment-form-390",
            "E-run-environment-1440",
            "E-run-environment-390",
            "E-compare-env-1440",
            "E-compare-env-390",
        ):
            png = tmp_path / f"{name}.png"
            _shot(report, tmp_path, name)
            if shots:
                shutil.copy(png, Path(shots) / png.name)
    finally:
        shutil.rmtree(disk, ignore_errors=True)
