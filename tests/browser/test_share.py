"""Share links in Chromium (issue 13, V2) on the real platform: a member shares a comparison, a
browser context without login opens it and reaches nothing else of the team (every link walked,
every request recorded), the preview is a 1200x630 PNG, and after revoke the page says it is gone;
once the sharer leaves the team, their links are gone too and the admin's list says "creator left";
a comparison filtered by environment (RAID level) keeps its filter on the link.
Screenshots of the shared page with 2 and 8 runs go to IOWATT_SHARE_SHOTS (default: tmp_path)."""

import os
import shutil
import tempfile
from pathlib import Path

import httpx
import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-c")]

PASSWORD = "share links are frozen"


def _job() -> dict[str, object]:
    """One second of random reads through the page cache, paced (the figures are not what a share
    link is about: unpaced, the engine kept a core busy for the second, eight runs)."""
    return {
        "name": "rand4k",
        "rw": "randread",
        "bs_bytes": 4096,
        "size_bytes": 16 * 1024 * 1024,
        "runtime_s": 1,
        "time_based": True,
        "direct": False,
        "rate_iops": 2000,
    }


def _queue(live: Stack, target: str, workload: dict[str, object], name: str, environment_id: str) -> str:
    """live.queue with the run's environment (its snapshot is what the environment filter reads)."""
    live.allow(target)
    with live.api() as api:
        body = {
            "agent_id": live.agent_id,
            "target_path": target,
            "name": name,
            "idle_s": 0,
            "workload": workload,
            "environment_id": environment_id,
        }
        r = api.post("/runs", json=body)
        assert r.status_code == 201, r.text
        return str(r.json()["id"])


def test_share_link_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    dirs = [
        tempfile.mkdtemp(prefix="iowatt-share-disk-", dir="/var/tmp"),
        tempfile.mkdtemp(prefix="iowatt-share-ram-", dir="/dev/shm"),
        tempfile.mkdtemp(prefix="iowatt-share-disk2-", dir="/var/tmp"),
        tempfile.mkdtemp(prefix="iowatt-share-ram2-", dir="/dev/shm"),
    ]
    try:
        workload = {"jobs": [_job()]}
        with live.api() as api:
            team_id = api.get("/auth/me").json()["teams"][0]["id"]
            # the disk directories in a RAID 10 environment, tmpfs in a local one: the link filtered
            # by RAID level keeps the four disk runs
            envs = {
                kind: api.post("/environments", json={"team_id": team_id, "name": f"share {kind}", **body})
                .raise_for_status()
                .json()["id"]
                for kind, body in (
                    ("das", {"kind": "das", "topology": {"raid": {"level": "raid10", "member_count": 4}}}),
                    ("local", {"kind": "local"}),
                )
            }
        ids = [
            _queue(
                live,
                d,
                workload,
                f"share: {Path(d).name[7:-9]} #{k}",
                envs["das" if "disk" in d else "local"],
            )
            for k in (1, 2)
            for d in dirs
        ]
        for rid in ids:
            assert live.wait(rid)["status"] == "succeeded"
        # a member of the stack's team, invited by its admin (the share is a member's act)
        with live.api() as api:
            team = api.get("/auth/me").json()["teams"][0]
            inv = api.post(
                f"/teams/{team['id']}/invitations", json={"email": "sharer@example.test", "role": "member"}
            )
            assert inv.status_code == 201, inv.text
            token = inv.json()["url"].rsplit("/", 1)[1]
            accepted = httpx.post(  # no bearer token: a new account
                f"{live.url}/api/v1/invitations/{token}/accept",
                json={"display_name": "Sam Sharer", "password": PASSWORD},
                timeout=30,
            )
            assert accepted.status_code in (200, 201), accepted.text
        shots = Path(os.environ.get("IOWATT_SHARE_SHOTS", str(tmp_path)))
        shots.mkdir(parents=True, exist_ok=True)
        report = _node(
            "tests/browser/share.mjs",
            live,
            tmp_path,
            IOWATT_EMAIL="sharer@example.test",
            IOWATT_PASSWORD=PASSWORD,
            IOWATT_SHARE_RUNS=",".join(ids[:2]),
            IOWATT_SHARE_RUNS_8=",".join(ids),
            IOWATT_SHARE_TEAM=team["name"],
            IOWATT_SHARE_SHOTS=str(shots),
        )
        assert "every request the shared page made is the link's API or a static asset" in report
        assert "the revoked link's page says the link is gone" in report
        assert "a comparison filtered by environment keeps its filter on the link" in report
        assert "the runs list filters by the recorded environment's fields" in report
        recorded = (tmp_path / "share-requests.txt").read_text().split()
        assert recorded and all("/api/v1/" not in u or "/api/v1/shared/" in u for u in recorded)
        for name in ("V2-shared-2-runs", "V2-shared-8-runs", "V2-shared-revoked"):
            _shot(report, shots, name)
        # issue 22: the sharer makes one more link, then leaves the team; the admin sees "creator
        # left" and the link is gone
        login = httpx.post(
            f"{live.url}/api/v1/auth/login", json={"email": "sharer@example.test", "password": PASSWORD}
        )
        assert login.status_code == 200, login.text
        sharer = login.json()
        made = httpx.post(
            f"{live.url}/api/v1/share-links",
            json={"kind": "run", "target": ids[0], "title": "made before leaving"},
            headers={"Authorization": f"Bearer {sharer['access_token']}"},
        )
        assert made.status_code == 201, made.text
        with live.api() as api:
            gone = api.delete(f"/teams/{team['id']}/members/{sharer['user']['id']}")
            assert gone.status_code == 204, gone.text
        report = _node(
            "tests/browser/share_creator_left.mjs",
            live,
            tmp_path,
            IOWATT_SHARE_LEFT_TOKEN=made.json()["url"].rsplit("/s/", 1)[1],
            IOWATT_SHARE_SHOTS=str(shots),
        )
        _shot(report, shots, "S5-shares-creator-left")
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
