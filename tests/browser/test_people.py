"""People and teams in Chromium (issue 13, V7) on the real platform, two browser contexts: the
admin invites a viewer from the team page, the viewer opens the link in another context, joins and
sees the team's runs but no "New run"; the admin revokes a second invitation and its link shows a
page saying so (never the login page); the audit log lists it; a scoped API token is shown once,
reads, cannot write, and is revoked. Screenshots V7-*.png go to IOWATT_PEOPLE_SHOTS (default:
tmp_path)."""

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]


def test_people_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    disk = tempfile.mkdtemp(prefix="iowatt-people-", dir="/var/tmp")
    try:
        workload = {
            "jobs": [
                {
                    "name": "rand4k",
                    "rw": "randread",
                    "bs_bytes": 4096,
                    "size_bytes": 8 * 1024 * 1024,
                    "runtime_s": 1,
                    "time_based": True,
                    "direct": False,
                    "rate_iops": 2000,  # paced: the team's run is seen, not timed (as test_deletion_browser)
                }
            ]
        }
        rid = live.queue(disk, workload=workload, name="people: the team's run")
        assert live.wait(rid)["status"] == "succeeded"
        shots = Path(os.environ.get("IOWATT_PEOPLE_SHOTS", str(tmp_path)))
        shots.mkdir(parents=True, exist_ok=True)
        # a fresh address per run: the stack is shared by the session's browser tests
        viewer = f"viewer-{uuid.uuid4().hex[:8]}@example.test"
        report = _node(
            "tests/browser/people.mjs",
            live,
            tmp_path,
            IOWATT_PEOPLE_VIEWER=viewer,
            IOWATT_PEOPLE_SHOTS=str(shots),
        )
        assert "the viewer has no New run" in report
        assert "its link says it was revoked" in report
        for name in (
            "V7-team",
            "V7-team-invitations",
            "V7-invite",
            "V7-invite-revoked",
            "V7-tokens",
            "V7-team-audit",
        ):
            _shot(report, shots, name)
        # the server agrees with what the UI showed: the viewer is a viewer of the team
        with live.api() as api:
            team = api.get("/auth/me").json()["teams"][0]
            members = api.get(f"/teams/{team['id']}/members").json()
        roles = {m["email"]: m["role"] for m in members}
        assert roles[viewer] == "viewer"
    finally:
        shutil.rmtree(disk, ignore_errors=True)
